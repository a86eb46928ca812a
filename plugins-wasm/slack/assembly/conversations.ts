// Conversations: conversations.list, conversations.history,
// conversations.replies and conversations.info.

import { Form, Input, JSONValue, JSONWriter, Result, Schema, ok, okJSON, tool, progress } from "@workbench/pdk-assemblyscript";
import { get, nextCursor } from "./client";
import { channel, channelSchema, messageSchema, messages } from "./shapes";
import { channelArg, cursorArg, limitArg, maxPagesArg, tsArg } from "./args";

const CONVERSATION_TYPES = ["public_channel", "private_channel", "mpim", "im"];

function listConversations(input: Input): Result {
  const types = input.strings("types");
  const maxPages = <i32>input.int("max_pages");
  let cursor = input.str("cursor");
  const out = new JSONWriter(4096);
  out.beginObject().key("channels").beginArray();
  for (let page = 1; page <= maxPages; page++) {
    const q = new Form()
      .add("types", types.length > 0 ? types.join(",") : "public_channel")
      .add("exclude_archived", input.bool("exclude_archived") ? "true" : "false")
      .add("limit", input.int("limit").toString())
      .addIf("cursor", cursor);
    const r = get("conversations.list", q);
    if (r.failed) return r.error!;
    const list = r.data.get("channels");
    if (list != null) {
      for (let i = 0; i < list.length; i++) out.value(channel(list.at(i)!));
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
  out.endArray();
  out.stringField("next_cursor", cursor);
  out.endObject();
  return okJSON(out);
}

export const listConversationsTool = tool(
  "slack_list_conversations",
  "Lists conversations the token can see (conversations.list): public and private channels, group DMs and DMs. " +
    "Pages through results with next_cursor; max_pages follows it within one call.",
  Schema.object()
    .prop(
      "types",
      Schema.array(Schema.string().enumOf(CONVERSATION_TYPES))
        .minItems(1)
        .describe("Conversation types to list; default public_channel"),
    )
    .prop("exclude_archived", Schema.boolean().defaultBool(false).describe("Leave archived channels out"))
    .prop("limit", limitArg(1000, 100))
    .prop("cursor", cursorArg())
    .prop("max_pages", maxPagesArg()),
  listConversations,
)
  .titled("List conversations")
  .readOnly()
  .openWorld()
  .output(
    Schema.openObject()
      .prop("channels", Schema.array(channelSchema()))
      .prop("next_cursor", Schema.string().describe("Empty on the last page")),
  );

/** messagePage writes {messages, has_more, next_cursor} from a history-like answer. */
function messagePage(data: JSONValue): Result {
  return ok(
    JSONValue.object()
      .set("messages", messages(data.get("messages")))
      .setBool("has_more", data.getBool("has_more"))
      .setString("next_cursor", nextCursor(data)),
  );
}

function history(input: Input): Result {
  const q = new Form()
    .add("channel", input.str("channel"))
    .add("limit", input.int("limit").toString())
    .addIf("cursor", input.str("cursor"))
    .addIf("oldest", input.str("oldest"))
    .addIf("latest", input.str("latest"));
  if (input.has("inclusive")) q.add("inclusive", input.bool("inclusive") ? "true" : "false");
  const r = get("conversations.history", q);
  if (r.failed) return r.error!;
  return messagePage(r.data);
}

const pageOutput = (): Schema =>
  Schema.openObject()
    .prop("messages", Schema.array(messageSchema()))
    .prop("has_more", Schema.boolean())
    .prop("next_cursor", Schema.string());

export const historyTool = tool(
  "slack_get_conversation_history",
  "Reads a conversation's messages, newest first (conversations.history). Use oldest/latest to bound the time range " +
    "and next_cursor to page.",
  Schema.object()
    .prop("channel", channelArg(), true)
    .prop("limit", limitArg(999, 100))
    .prop("cursor", cursorArg())
    .prop("oldest", tsArg("Only messages after this time"))
    .prop("latest", tsArg("Only messages before this time"))
    .prop("inclusive", Schema.boolean().describe("Include messages at exactly oldest or latest")),
  history,
)
  .titled("Get conversation history")
  .readOnly()
  .openWorld()
  .output(pageOutput());

function replies(input: Input): Result {
  const q = new Form()
    .add("channel", input.str("channel"))
    .add("ts", input.str("ts"))
    .add("limit", input.int("limit").toString())
    .addIf("cursor", input.str("cursor"));
  const r = get("conversations.replies", q);
  if (r.failed) return r.error!;
  return messagePage(r.data);
}

export const repliesTool = tool(
  "slack_get_thread_replies",
  "Reads a thread: the parent message and its replies, oldest first (conversations.replies).",
  Schema.object()
    .prop("channel", channelArg(), true)
    .prop("ts", tsArg("Timestamp of the thread's parent message"), true)
    .prop("limit", limitArg(1000, 100))
    .prop("cursor", cursorArg()),
  replies,
)
  .titled("Get thread replies")
  .readOnly()
  .openWorld()
  .output(pageOutput());

function info(input: Input): Result {
  const q = new Form().add("channel", input.str("channel")).add("include_num_members", input.bool("include_num_members") ? "true" : "false");
  const r = get("conversations.info", q);
  if (r.failed) return r.error!;
  const c = r.data.get("channel");
  return ok(JSONValue.object().set("channel", c == null ? JSONValue.object() : channel(c)));
}

export const infoTool = tool(
  "slack_get_conversation_info",
  "Returns one conversation's details: name, privacy, archive state, topic, purpose (conversations.info).",
  Schema.object()
    .prop("channel", channelArg(), true)
    .prop("include_num_members", Schema.boolean().defaultBool(true).describe("Include the member count")),
  info,
)
  .titled("Get conversation info")
  .readOnly()
  .openWorld()
  .output(Schema.openObject().prop("channel", channelSchema()));
