// Messages: chat.postMessage, chat.update, chat.delete (JSON bodies, as
// Slack documents for its write methods) and chat.getPermalink (a read).

import { Form, Input, JSONValue, Result, Schema, invalidArguments, ok, tool } from "@workbench/pdk-assemblyscript";
import { get, postJSON } from "./client";
import { message, messageSchema } from "./shapes";
import { channelArg, tsArg } from "./args";

function textOrBlocks(input: Input, body: JSONValue): Result | null {
  const text = input.str("text");
  const blocks = input.get("blocks");
  if (text.length == 0 && (blocks == null || blocks.length == 0)) {
    return invalidArguments('give "text" or "blocks" (or both: text is then the notification fallback)');
  }
  if (text.length > 0) body.setString("text", text);
  if (blocks != null) body.set("blocks", blocks);
  return null;
}

function postMessage(input: Input): Result {
  const body = JSONValue.object().setString("channel", input.str("channel"));
  const bad = textOrBlocks(input, body);
  if (bad != null) return bad;
  body.copyFrom(input.value, "thread_ts");
  body.copyFrom(input.value, "reply_broadcast");
  body.copyFrom(input.value, "unfurl_links");
  body.copyFrom(input.value, "unfurl_media");
  body.copyFrom(input.value, "mrkdwn");
  const r = postJSON("chat.postMessage", body);
  if (r.failed) return r.error!;
  const m = r.data.get("message");
  return ok(
    JSONValue.object()
      .setString("channel", r.data.getString("channel"))
      .setString("ts", r.data.getString("ts"))
      .set("message", m == null ? JSONValue.object() : message(m)),
  );
}

const blocksArg = (): Schema => Schema.array(Schema.openObject()).describe("Block Kit blocks");

export const postMessageTool = tool(
  "slack_post_message",
  "Posts a message to a conversation, or into a thread with thread_ts (chat.postMessage). Give text, blocks, or both.",
  Schema.object()
    .prop("channel", channelArg(), true)
    .prop("text", Schema.string().describe("Message text in Slack mrkdwn"))
    .prop("blocks", blocksArg())
    .prop("thread_ts", tsArg("Reply in the thread of this message"))
    .prop("reply_broadcast", Schema.boolean().describe("Also show a thread reply in the channel"))
    .prop("unfurl_links", Schema.boolean())
    .prop("unfurl_media", Schema.boolean())
    .prop("mrkdwn", Schema.boolean().describe("Set false to send text without formatting")),
  postMessage,
)
  .titled("Post a message")
  .openWorld()
  .output(Schema.openObject().prop("channel", Schema.string()).prop("ts", Schema.string()).prop("message", messageSchema()));

function updateMessage(input: Input): Result {
  const body = JSONValue.object().setString("channel", input.str("channel")).setString("ts", input.str("ts"));
  const bad = textOrBlocks(input, body);
  if (bad != null) return bad;
  const r = postJSON("chat.update", body);
  if (r.failed) return r.error!;
  return ok(
    JSONValue.object()
      .setString("channel", r.data.getString("channel"))
      .setString("ts", r.data.getString("ts"))
      .setString("text", r.data.getString("text")),
  );
}

export const updateMessageTool = tool(
  "slack_update_message",
  "Replaces the text or blocks of a message the token posted (chat.update).",
  Schema.object()
    .prop("channel", channelArg(), true)
    .prop("ts", tsArg("The message to edit"), true)
    .prop("text", Schema.string().describe("New text"))
    .prop("blocks", blocksArg()),
  updateMessage,
)
  .titled("Update a message")
  .idempotent()
  .openWorld()
  .output(Schema.openObject().prop("channel", Schema.string()).prop("ts", Schema.string()).prop("text", Schema.string()));

function deleteMessage(input: Input): Result {
  const body = JSONValue.object().setString("channel", input.str("channel")).setString("ts", input.str("ts"));
  const r = postJSON("chat.delete", body);
  if (r.failed) return r.error!;
  return ok(JSONValue.object().setString("channel", r.data.getString("channel")).setString("ts", r.data.getString("ts")));
}

export const deleteMessageTool = tool(
  "slack_delete_message",
  "Deletes a message (chat.delete). This cannot be undone.",
  Schema.object().prop("channel", channelArg(), true).prop("ts", tsArg("The message to delete"), true),
  deleteMessage,
)
  .titled("Delete a message")
  .destructive()
  .openWorld()
  .output(Schema.openObject().prop("channel", Schema.string()).prop("ts", Schema.string()));

function permalink(input: Input): Result {
  const q = new Form().add("channel", input.str("channel")).add("message_ts", input.str("ts"));
  const r = get("chat.getPermalink", q);
  if (r.failed) return r.error!;
  return ok(JSONValue.object().setString("channel", r.data.getString("channel")).setString("permalink", r.data.getString("permalink")));
}

export const permalinkTool = tool(
  "slack_get_permalink",
  "Returns a shareable link to a message (chat.getPermalink).",
  Schema.object().prop("channel", channelArg(), true).prop("ts", tsArg("The message"), true),
  permalink,
)
  .titled("Get a message link")
  .readOnly()
  .openWorld()
  .output(Schema.openObject().prop("channel", Schema.string()).prop("permalink", Schema.string().format("uri")));
