// conf-assemblyscript is the ABI conformance plugin of the AssemblyScript
// kit: the same six tools in every language, so one test can check that
// each host import and error path behaves identically everywhere.

import {
  JSONValue,
  Plugin,
  Schema,
  Input,
  Result,
  ok,
  okRaw,
  fail,
  failWith,
  tool,
  register,
  configGet,
  logInfo,
  progress,
  send,
  Request,
  Code,
} from "../../assembly/index";

export { wb_alloc, manifest } from "../../assembly/index";

function echo(input: Input): Result {
  if (input.raw.length == 0) return ok(JSONValue.object());
  return okRaw(input.raw);
}

function failTool(_input: Input): Result {
  return fail(Code.NOT_FOUND, "nothing here", JSONValue.object().setInteger("id", 7));
}

function config(input: Input): Result {
  const v = configGet(input.str("key"));
  return ok(JSONValue.object().set("value", v == null ? JSONValue.null() : JSONValue.string(v)));
}

function httpTool(input: Input): Result {
  const r = send(Request.get(input.str("url")));
  if (r.error != null) return failWith(r.error!);
  const resp = r.response!;
  return ok(JSONValue.object().setInteger("status", resp.status).setString("body", resp.text()));
}

function logTool(_input: Input): Result {
  logInfo("hello from assemblyscript");
  return ok(JSONValue.object());
}

function progressTool(_input: Input): Result {
  progress(1, 2, "half");
  progress(2, 2, "done");
  return ok(JSONValue.object());
}

const empty = (): Schema => Schema.object();

const echoTool = tool("conf_assemblyscript_echo", "Returns its input object unchanged.", Schema.openObject(), echo).readOnly();
const failT = tool("conf_assemblyscript_fail", 'Always fails with NOT_FOUND "nothing here" and details {"id":7}.', empty(), failTool).readOnly();
const configT = tool(
  "conf_assemblyscript_config",
  "Returns the value of a setting through config_get, or null.",
  // A hand-written schema, to show (and test) Schema.raw beside the builder.
  Schema.raw(`{"type":"object","properties":{"key":{"type":"string","description":"Setting name"}},"required":["key"],"additionalProperties":false}`),
  config,
).readOnly();
const httpT = tool(
  "conf_assemblyscript_http",
  "GETs a URL and returns its status and body text; host errors are passed on.",
  Schema.object().prop("url", Schema.string().describe("Absolute URL"), true),
  httpTool,
)
  .readOnly()
  .openWorld();
const logT = tool("conf_assemblyscript_log", 'Logs "hello from assemblyscript" at info level.', empty(), logTool).readOnly();
const progressT = tool("conf_assemblyscript_progress", 'Reports progress 1/2 "half", then 2/2 "done".', empty(), progressTool).readOnly();

const plugin = new Plugin("conf-assemblyscript", "1.0.0", "ABI conformance plugin built with the AssemblyScript kit.");
register(plugin, [echoTool, failT, configT, httpT, logT, progressT]);

export function conf_assemblyscript_echo(ptr: usize, len: usize): u32 {
  return echoTool.run(ptr, len);
}
export function conf_assemblyscript_fail(ptr: usize, len: usize): u32 {
  return failT.run(ptr, len);
}
export function conf_assemblyscript_config(ptr: usize, len: usize): u32 {
  return configT.run(ptr, len);
}
export function conf_assemblyscript_http(ptr: usize, len: usize): u32 {
  return httpT.run(ptr, len);
}
export function conf_assemblyscript_log(ptr: usize, len: usize): u32 {
  return logT.run(ptr, len);
}
export function conf_assemblyscript_progress(ptr: usize, len: usize): u32 {
  return progressT.run(ptr, len);
}
