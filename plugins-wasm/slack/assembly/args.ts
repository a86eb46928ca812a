// Input schemas shared by several tools.

import { Schema } from "@workbench/pdk-assemblyscript";

export function channelArg(): Schema {
  return Schema.string().minLength(1).describe("Conversation ID, such as C0123456789 (not the #name)");
}

export function tsArg(what: string): Schema {
  return Schema.string().minLength(1).describe(what + ', a Slack timestamp such as "1712345678.123456"');
}

export function cursorArg(): Schema {
  return Schema.string().describe("next_cursor from a previous call, to read the next page");
}

export function limitArg(max: i32, def: i32): Schema {
  return Schema.integer().min(1).max(<f64>max).defaultInteger(def).describe("Items per page");
}

export function maxPagesArg(): Schema {
  return Schema.integer()
    .min(1)
    .max(10)
    .defaultInteger(1)
    .describe("Follow next_cursor for up to this many pages in one call");
}
