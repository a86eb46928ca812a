// The compact shapes the tools return: the fields of Slack's objects an
// agent needs, without the rest of Slack's (large) payloads.

import { JSONValue, Schema } from "@workbench/pdk-assemblyscript";

function copyAll(dst: JSONValue, src: JSONValue, keys: Array<string>): void {
  for (let i = 0; i < keys.length; i++) dst.copyFrom(src, keys[i]);
}

const CHANNEL_KEYS = [
  "id",
  "name",
  "is_channel",
  "is_group",
  "is_im",
  "is_mpim",
  "is_private",
  "is_archived",
  "is_general",
  "is_member",
  "num_members",
  "created",
  "creator",
  "user",
];

/** channel is a conversation with its topic and purpose flattened to text. */
export function channel(c: JSONValue): JSONValue {
  const out = JSONValue.object();
  copyAll(out, c, CHANNEL_KEYS);
  const topic = c.get("topic");
  if (topic != null && topic.isObject) out.setString("topic", topic.getString("value"));
  const purpose = c.get("purpose");
  if (purpose != null && purpose.isObject) out.setString("purpose", purpose.getString("value"));
  return out;
}

const MESSAGE_KEYS = [
  "ts",
  "type",
  "subtype",
  "user",
  "bot_id",
  "username",
  "text",
  "thread_ts",
  "parent_user_id",
  "reply_count",
  "reply_users_count",
  "latest_reply",
  "edited",
];

/** message is a message with its reactions and files summarised. */
export function message(m: JSONValue): JSONValue {
  const out = JSONValue.object();
  copyAll(out, m, MESSAGE_KEYS);
  const reactions = m.get("reactions");
  if (reactions != null && reactions.isArray) {
    const list = JSONValue.array();
    for (let i = 0; i < reactions.length; i++) {
      const r = reactions.at(i)!;
      list.push(JSONValue.object().copyFrom(r, "name").copyFrom(r, "count").copyFrom(r, "users"));
    }
    out.set("reactions", list);
  }
  const files = m.get("files");
  if (files != null && files.isArray) {
    const list = JSONValue.array();
    for (let i = 0; i < files.length; i++) {
      const f = files.at(i)!;
      list.push(JSONValue.object().copyFrom(f, "id").copyFrom(f, "name").copyFrom(f, "title").copyFrom(f, "permalink"));
    }
    out.set("files", list);
  }
  return out;
}

/** messages maps message() over an array (null gives an empty array). */
export function messages(list: JSONValue | null): JSONValue {
  const out = JSONValue.array();
  if (list == null || !list.isArray) return out;
  for (let i = 0; i < list.length; i++) out.push(message(list.at(i)!));
  return out;
}

const USER_KEYS = ["id", "team_id", "name", "real_name", "deleted", "is_bot", "is_admin", "is_owner", "tz"];

/** user is a member with the useful profile fields lifted up. */
export function user(u: JSONValue): JSONValue {
  const out = JSONValue.object();
  copyAll(out, u, USER_KEYS);
  const p = u.get("profile");
  if (p != null && p.isObject) {
    out.copyFrom(p, "display_name").copyFrom(p, "title").copyFrom(p, "email");
    if (!out.has("real_name")) out.copyFrom(p, "real_name");
  }
  return out;
}

// Output schemas, so agents know what comes back.

export function channelSchema(): Schema {
  return Schema.openObject()
    .prop("id", Schema.string().describe("Conversation ID, such as C0123456789"))
    .prop("name", Schema.string())
    .prop("is_private", Schema.boolean())
    .prop("is_archived", Schema.boolean())
    .prop("is_member", Schema.boolean())
    .prop("num_members", Schema.integer())
    .prop("topic", Schema.string())
    .prop("purpose", Schema.string());
}

export function messageSchema(): Schema {
  return Schema.openObject()
    .prop("ts", Schema.string().describe("Message timestamp: its ID within the conversation"))
    .prop("user", Schema.string())
    .prop("text", Schema.string())
    .prop("thread_ts", Schema.string())
    .prop("reply_count", Schema.integer())
    .prop("reactions", Schema.array(Schema.openObject()));
}

export function userSchema(): Schema {
  return Schema.openObject()
    .prop("id", Schema.string().describe("User ID, such as U0123456789"))
    .prop("name", Schema.string())
    .prop("real_name", Schema.string())
    .prop("display_name", Schema.string())
    .prop("is_bot", Schema.boolean())
    .prop("deleted", Schema.boolean());
}
