// asbad declares a tool whose slug lacks the plugin's prefix: its manifest
// export must fail with INVALID_MANIFEST, so the host refuses to load it.

import { Input, JSONValue, Plugin, Result, Schema, ok, register, tool } from "../../assembly/index";

export { wb_alloc, manifest } from "../../assembly/index";

function noop(_input: Input): Result {
  return ok(JSONValue.object());
}

const good = tool("asbad_noop", "Does nothing.", Schema.object(), noop).readOnly();
const misnamed = tool("other_noop", "Does nothing under the wrong prefix.", Schema.object(), noop);

register(new Plugin("asbad", "0.0.1", "A plugin with a broken declaration."), [good, misnamed]);

export function asbad_noop(ptr: usize, len: usize): u32 {
  return good.run(ptr, len);
}
export function other_noop(ptr: usize, len: usize): u32 {
  return misnamed.run(ptr, len);
}
