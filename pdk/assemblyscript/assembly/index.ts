// Workbench plugin development kit for AssemblyScript: the guest side of
// the plugin ABI in docs/abi.md. A plugin's entry file re-exports the ABI
// exports and declares one export per tool:
//
//   export { wb_alloc, manifest } from "@workbench/pdk-assemblyscript";
//   const echo = tool("demo_echo", "Echoes.", Schema.openObject(), echoHandler).readOnly();
//   register(new Plugin("demo", "0.1.0", "A demo."), [echo]);
//   export function demo_echo(ptr: usize, len: usize): u32 { return echo.run(ptr, len); }
//
// Build with asc and the kit's asconfig.json (minimal runtime, abort routed
// to wbAbort); see README.md.

export { ByteBuffer, MAX_BUFFER_BYTES, decodeUTF8 } from "./bytes";
export {
  JSONValue,
  JSONWriter,
  Kind,
  ParseResult,
  DEFAULT_MAX_DEPTH,
  parseJSON,
  parseBytes,
  parseString,
  quoteJSON,
  formatNumber,
} from "./json";
export { Schema, Violation, validate, kindName } from "./schema";
export { Code, ToolError, Result, ok, okJSON, okRaw, fail, failWith, notFound, invalidArguments, upstreamError, validCode } from "./result";
export { LogLevel, log, logDebug, logInfo, logWarn, logError, progress, configGet, utf8Of } from "./host";
export { Headers, Request, Response, HTTPResult, send, Form, withQuery, escapeComponent, encodeComponent } from "./http";
export { base64Encode, base64Decode } from "./base64";
export {
  ABI_VERSION,
  MAX_INPUT_BYTES,
  OAuth2,
  APIKeyField,
  APIKeyPlacement,
  Auth,
  Setting,
  Limits,
  Plugin,
  Handler,
  Input,
  Tool,
  tool,
  register,
  baseURL,
  manifest,
  manifestResult,
  wb_alloc,
  wbAbort,
} from "./plugin";
