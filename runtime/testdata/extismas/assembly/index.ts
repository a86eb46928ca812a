// The extismas test plugin: the Workbench manifest, an echo tool and a tool
// that fails with a structured error, written with the Extism AssemblyScript
// PDK (@extism/as-pdk).
import { Host, Memory } from "@extism/as-pdk";
import { error_set } from "@extism/as-pdk/lib/env";

const manifestJSON = `{
  "abi": 1,
  "name": "extismas",
  "version": "0.1.0",
  "description": "Echo and failure tools written with the Extism AssemblyScript PDK.",
  "auth": {"mode": "none"},
  "tools": [
    {"slug": "extismas_echo", "description": "Returns its input.", "inputSchema": {"type": "object"}, "export": "echo"},
    {"slug": "extismas_fail", "description": "Always fails with NOT_FOUND.", "inputSchema": {"type": "object"}, "export": "fail"}
  ]
}`;

// quietAbort replaces AssemblyScript's default abort, which would import
// env.abort: an aborting plugin traps with unreachable instead.
function quietAbort(
  message: string | null,
  fileName: string | null,
  lineNumber: u32,
  columnNumber: u32,
): void {
  unreachable();
}

export function manifest(): i32 {
  Host.outputString(manifestJSON);
  return 0;
}

export function echo(): i32 {
  Host.output(Host.input());
  return 0;
}

export function fail(): i32 {
  // Version 1.0.0 of the PDK has no error helper: set it through the raw import.
  const err = Memory.allocateString(`{"code":"NOT_FOUND","message":"nothing here"}`);
  error_set(err.offset);
  return 1;
}
