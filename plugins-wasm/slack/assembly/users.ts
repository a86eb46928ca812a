// People: users.list, users.info and auth.test.

import { Form, Input, JSONValue, JSONWriter, Result, Schema, ok, okJSON, progress, tool } from "@workbench/pdk-assemblyscript";
import { get, nextCursor } from "./client";
import { user, userSchema } from "./shapes";
import { cursorArg, limitArg, maxPagesArg } from "./args";

function listUsers(input: Input): Result {
  const maxPages = <i32>input.int("max_pages");
  let cursor = input.str("cursor");
  const out = new JSONWriter(4096);
  out.beginObject().key("members").beginArray();
  for (let page = 1; page <= maxPages; page++) {
    const q = new Form().add("limit", input.int("limit").toString()).addIf("cursor", cursor);
    const r = get("users.list", q);
    if (r.failed) return r.error!;
    const list = r.data.get("members");
    if (list != null) {
      for (let i = 0; i < list.length; i++) {
        const u = list.at(i)!;
        if (!input.bool("include_deleted") && u.getBool("deleted")) continue;
        out.value(user(u));
      }
    }
    const next = nextCursor(r.data);
    const last = next.length == 0 || next == cursor || page == maxPages;
    // The host drops reports closer than 50 ms apart unless done == total,
    // so the last page is always reported as complete.
    if (maxPages > 1) progress(page, last ? page : maxPages, "read page " + page.toString());
    if (next.length == 0 || next == cursor) {
      cursor = "";
      break;
    }
    cursor = next;
  }
  out.endArray().stringField("next_cursor", cursor).endObject();
  return okJSON(out);
}

export const listUsersTool = tool(
  "slack_list_users",
  "Lists the workspace's members (users.list), paging with next_cursor. Deactivated members are left out unless include_deleted.",
  Schema.object()
    .prop("limit", limitArg(1000, 200))
    .prop("cursor", cursorArg())
    .prop("max_pages", maxPagesArg())
    .prop("include_deleted", Schema.boolean().defaultBool(false).describe("Include deactivated members")),
  listUsers,
)
  .titled("List users")
  .readOnly()
  .openWorld()
  .output(Schema.openObject().prop("members", Schema.array(userSchema())).prop("next_cursor", Schema.string()));

function getUser(input: Input): Result {
  const r = get("users.info", new Form().add("user", input.str("user")));
  if (r.failed) return r.error!;
  const u = r.data.get("user");
  return ok(JSONValue.object().set("user", u == null ? JSONValue.object() : user(u)));
}

export const getUserTool = tool(
  "slack_get_user",
  "Returns one member's profile: names, title, time zone, and email when the token has users:read.email (users.info).",
  Schema.object().prop("user", Schema.string().minLength(1).describe("User ID, such as U0123456789"), true),
  getUser,
)
  .titled("Get a user")
  .readOnly()
  .openWorld()
  .output(Schema.openObject().prop("user", userSchema()));

function authTest(_input: Input): Result {
  const r = get("auth.test", new Form());
  if (r.failed) return r.error!;
  const out = JSONValue.object();
  const keys = ["url", "team", "user", "team_id", "user_id", "bot_id", "enterprise_id"];
  for (let i = 0; i < keys.length; i++) out.copyFrom(r.data, keys[i]);
  return ok(out);
}

export const authTestTool = tool(
  "slack_auth_test",
  "Tells who the connection acts as: workspace, user and bot IDs (auth.test).",
  Schema.object(),
  authTest,
)
  .titled("Who am I")
  .readOnly()
  .openWorld()
  .output(Schema.openObject().prop("team_id", Schema.string()).prop("user_id", Schema.string()).prop("url", Schema.string()));
