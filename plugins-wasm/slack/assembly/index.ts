// The Slack integration: conversations, messages, reactions, users, file
// uploads and search over the Slack Web API, built with the Workbench
// AssemblyScript kit. This entry file declares the plugin and exports one
// function per tool.

import { Auth, OAuth2, Plugin, register } from "@workbench/pdk-assemblyscript";
import { historyTool, infoTool, listConversationsTool, repliesTool } from "./conversations";
import { deleteMessageTool, permalinkTool, postMessageTool, updateMessageTool } from "./chat";
import { addReactionTool, removeReactionTool } from "./reactions";
import { authTestTool, getUserTool, listUsersTool } from "./users";
import { uploadFileTool } from "./files";
import { searchMessagesTool } from "./search";

export { wb_alloc, manifest } from "@workbench/pdk-assemblyscript";

const plugin = new Plugin(
  "slack",
  "0.1.0",
  "Read and write Slack: conversations and threads, messages, reactions, members, file uploads and message search.",
);
plugin.title = "Slack";
plugin.categories = ["communication"];
plugin.baseUrl = "https://slack.com/api";
plugin.hosts = ["slack.com", "files.slack.com"];
plugin.proxyBaseUrl = "https://slack.com/api";
// Listings that follow several cursors parse megabytes of JSON in one call,
// and the minimal runtime frees only between calls.
plugin.limits.memoryPages = 1024;
plugin.auth = Auth.oauth2(
  new OAuth2("https://slack.com/oauth/v2/authorize", "https://slack.com/api/oauth.v2.access", [
    "channels:read",
    "groups:read",
    "im:read",
    "mpim:read",
    "channels:history",
    "groups:history",
    "im:history",
    "mpim:history",
    "chat:write",
    "reactions:write",
    "users:read",
    "files:write",
    "search:read",
  ]),
);

register(plugin, [
  listConversationsTool,
  historyTool,
  repliesTool,
  infoTool,
  postMessageTool,
  updateMessageTool,
  deleteMessageTool,
  permalinkTool,
  addReactionTool,
  removeReactionTool,
  listUsersTool,
  getUserTool,
  authTestTool,
  uploadFileTool,
  searchMessagesTool,
]);

export function slack_list_conversations(ptr: usize, len: usize): u32 {
  return listConversationsTool.run(ptr, len);
}
export function slack_get_conversation_history(ptr: usize, len: usize): u32 {
  return historyTool.run(ptr, len);
}
export function slack_get_thread_replies(ptr: usize, len: usize): u32 {
  return repliesTool.run(ptr, len);
}
export function slack_get_conversation_info(ptr: usize, len: usize): u32 {
  return infoTool.run(ptr, len);
}
export function slack_post_message(ptr: usize, len: usize): u32 {
  return postMessageTool.run(ptr, len);
}
export function slack_update_message(ptr: usize, len: usize): u32 {
  return updateMessageTool.run(ptr, len);
}
export function slack_delete_message(ptr: usize, len: usize): u32 {
  return deleteMessageTool.run(ptr, len);
}
export function slack_get_permalink(ptr: usize, len: usize): u32 {
  return permalinkTool.run(ptr, len);
}
export function slack_add_reaction(ptr: usize, len: usize): u32 {
  return addReactionTool.run(ptr, len);
}
export function slack_remove_reaction(ptr: usize, len: usize): u32 {
  return removeReactionTool.run(ptr, len);
}
export function slack_list_users(ptr: usize, len: usize): u32 {
  return listUsersTool.run(ptr, len);
}
export function slack_get_user(ptr: usize, len: usize): u32 {
  return getUserTool.run(ptr, len);
}
export function slack_auth_test(ptr: usize, len: usize): u32 {
  return authTestTool.run(ptr, len);
}
export function slack_upload_file(ptr: usize, len: usize): u32 {
  return uploadFileTool.run(ptr, len);
}
export function slack_search_messages(ptr: usize, len: usize): u32 {
  return searchMessagesTool.run(ptr, len);
}
