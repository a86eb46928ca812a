// Emoji reactions: reactions.add and reactions.remove (form bodies).

import { Form, Input, JSONValue, Result, Schema, ok, tool } from "@workbench/pdk-assemblyscript";
import { postForm } from "./client";
import { channelArg, tsArg } from "./args";

/** emojiName strips the colons agents often copy along (":thumbsup:"). */
export function emojiName(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) == 0x3a) start++;
  while (end > start && s.charCodeAt(end - 1) == 0x3a) end--;
  return s.substring(start, end);
}

function react(method: string, input: Input): Result {
  const name = emojiName(input.str("name"));
  const f = new Form().add("channel", input.str("channel")).add("timestamp", input.str("ts")).add("name", name);
  const r = postForm(method, f);
  if (r.failed) return r.error!;
  return ok(JSONValue.object().setString("channel", input.str("channel")).setString("ts", input.str("ts")).setString("name", name));
}

function addReaction(input: Input): Result {
  return react("reactions.add", input);
}

function removeReaction(input: Input): Result {
  return react("reactions.remove", input);
}

const reactionInput = (): Schema =>
  Schema.object()
    .prop("channel", channelArg(), true)
    .prop("ts", tsArg("The message"), true)
    .prop("name", Schema.string().minLength(1).describe('Emoji name such as "thumbsup" (colons are stripped)'), true);

const reactionOutput = (): Schema =>
  Schema.openObject().prop("channel", Schema.string()).prop("ts", Schema.string()).prop("name", Schema.string());

export const addReactionTool = tool("slack_add_reaction", "Adds an emoji reaction to a message (reactions.add).", reactionInput(), addReaction)
  .titled("Add a reaction")
  .openWorld()
  .output(reactionOutput());

export const removeReactionTool = tool(
  "slack_remove_reaction",
  "Removes the token's emoji reaction from a message (reactions.remove).",
  reactionInput(),
  removeReaction,
)
  .titled("Remove a reaction")
  .openWorld()
  .output(reactionOutput());
