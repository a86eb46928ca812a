// asjson-probe exposes the kit's JSON reader and writer, base64 decoder and
// abort handler to the Go tests in plugins-wasm/slacktest, which compare
// them against encoding/json on fuzzed input. It is a test fixture, not a
// plugin to ship.

import { Input, JSONValue, Plugin, Result, Schema, base64Decode, ok, parseBytes, register, tool, invalidArguments } from "../../assembly/index";

export { wb_alloc, manifest } from "../../assembly/index";

function roundtrip(input: Input): Result {
  const bytes = base64Decode(input.str("b64"));
  if (bytes == null) return invalidArguments("b64 is not base64");
  const depth = <i32>input.int("max_depth", 128);
  // parseBytes decodes long strings lazily: the writer below exercises that path.
  const r = parseBytes(bytes, depth);
  const out = JSONValue.object().setBool("ok", r.ok);
  if (r.ok) {
    out.setString("json", r.value!.toString());
  } else {
    out.setString("error", r.error).setInteger("offset", r.offset);
  }
  return ok(out);
}

function abortTool(input: Input): Result {
  const list = new Array<i32>(1);
  const i = <i32>input.int("index");
  return ok(JSONValue.object().setInteger("value", list[i])); // out of range: aborts
}

const roundtripTool = tool(
  "asjson_probe_roundtrip",
  "Parses base64-encoded bytes as JSON and writes the value back.",
  Schema.object().prop("b64", Schema.string(), true).prop("max_depth", Schema.integer().min(1)),
  roundtrip,
).readOnly();

const abortT = tool("asjson_probe_abort", "Indexes an array of one item: any other index aborts.", Schema.object().prop("index", Schema.integer(), true), abortTool).readOnly();

register(new Plugin("asjson-probe", "0.0.1", "JSON probe for the AssemblyScript kit's tests."), [roundtripTool, abortT]);

export function asjson_probe_roundtrip(ptr: usize, len: usize): u32 {
  return roundtripTool.run(ptr, len);
}
export function asjson_probe_abort(ptr: usize, len: usize): u32 {
  return abortT.run(ptr, len);
}
