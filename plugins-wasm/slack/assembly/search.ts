// Search: search.messages. Slack serves search only to user tokens
// (scope search:read); a bot token gets not_allowed_token_type.

import { Form, Input, JSONValue, Result, Schema, ok, tool } from "@workbench/pdk-assemblyscript";
import { get } from "./client";

function searchMessages(input: Input): Result {
  const q = new Form()
    .add("query", input.str("query"))
    .add("count", input.int("count").toString())
    .add("page", input.int("page").toString())
    .add("sort", input.str("sort"))
    .add("sort_dir", input.str("sort_dir"));
  const r = get("search.messages", q);
  if (r.failed) return r.error!;
  const out = JSONValue.object();
  const found = r.data.get("messages");
  const matches = JSONValue.array();
  if (found != null) {
    const list = found.get("matches");
    if (list != null) {
      for (let i = 0; i < list.length; i++) {
        const m = list.at(i)!;
        const item = JSONValue.object().copyFrom(m, "ts").copyFrom(m, "text").copyFrom(m, "user").copyFrom(m, "username").copyFrom(m, "permalink");
        const c = m.get("channel");
        if (c != null && c.isObject) item.set("channel", JSONValue.object().copyFrom(c, "id").copyFrom(c, "name"));
        matches.push(item);
      }
    }
    out.setInteger("total", found.getInteger("total"));
    const paging = found.get("paging");
    if (paging != null) {
      out.setInteger("page", paging.getInteger("page")).setInteger("pages", paging.getInteger("pages"));
    }
  }
  out.set("matches", matches);
  return ok(out);
}

export const searchMessagesTool = tool(
  "slack_search_messages",
  "Searches messages with Slack's search syntax, such as 'deploy in:#ops from:@ana after:2024-01-01' (search.messages). " +
    "Needs a user token with search:read; pages are numbered.",
  Schema.object()
    .prop("query", Schema.string().minLength(1).describe("Search query"), true)
    .prop("count", Schema.integer().min(1).max(100).defaultInteger(20).describe("Matches per page"))
    .prop("page", Schema.integer().min(1).max(100).defaultInteger(1).describe("Page number"))
    .prop("sort", Schema.string().enumOf(["score", "timestamp"]).defaultString("score"))
    .prop("sort_dir", Schema.string().enumOf(["asc", "desc"]).defaultString("desc")),
  searchMessages,
)
  .titled("Search messages")
  .readOnly()
  .openWorld()
  .output(
    Schema.openObject()
      .prop("total", Schema.integer())
      .prop("page", Schema.integer())
      .prop("pages", Schema.integer())
      .prop("matches", Schema.array(Schema.openObject())),
  );
