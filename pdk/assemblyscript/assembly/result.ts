// Tool results and structured tool errors (docs/abi.md section 3).

import { JSONValue, JSONWriter } from "./json";
import { ByteBuffer } from "./bytes";

/** Error codes a plugin commonly returns; any upper-snake-case word is allowed. */
export namespace Code {
  export const TOOL_ERROR = "TOOL_ERROR";
  export const INVALID_ARGUMENTS = "INVALID_ARGUMENTS";
  export const NOT_FOUND = "NOT_FOUND";
  export const UNAUTHORIZED = "UNAUTHORIZED";
  export const FORBIDDEN = "FORBIDDEN";
  export const CONFLICT = "CONFLICT";
  export const VALIDATION_FAILED = "VALIDATION_FAILED";
  export const RATE_LIMITED = "RATE_LIMITED";
  export const UPSTREAM_ERROR = "UPSTREAM_ERROR";
  export const INVALID_MANIFEST = "INVALID_MANIFEST";
}

/**
 * ToolError is a structured error: what a tool reports with status 1, and
 * what the host's imports report to the plugin (EGRESS_DENIED, ...).
 */
export class ToolError {
  constructor(
    public code: string,
    public message: string,
    public details: JSONValue | null = null,
  ) {}

  /** withDetails sets details and returns this. */
  withDetails(details: JSONValue): ToolError {
    this.details = details;
    return this;
  }

  /** write appends the error object; a code that is not upper snake case becomes TOOL_ERROR. */
  write(w: JSONWriter): void {
    w.beginObject();
    w.stringField("code", validCode(this.code) ? this.code : Code.TOOL_ERROR);
    w.stringField("message", this.message.length > 0 ? this.message : "tool failed with " + this.code);
    if (this.details != null) w.field("details", this.details);
    w.endObject();
  }

  /** fromJSON reads {"code","message","details"}; null when it is not such an object. */
  static fromJSON(v: JSONValue | null): ToolError | null {
    if (v == null || !v.isObject) return null;
    const code = v.getString("code");
    if (code.length == 0) return null;
    return new ToolError(code, v.getString("message"), v.get("details"));
  }
}

/** validCode reports whether code is an upper-snake-case word. */
export function validCode(code: string): bool {
  if (code.length == 0) return false;
  const c0 = code.charCodeAt(0);
  if (c0 < 0x41 || c0 > 0x5a) return false;
  for (let i = 1; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (!((c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c == 0x5f)) return false;
  }
  return true;
}

/**
 * Result is what a tool handler returns: output JSON with status 0, or a
 * ToolError with status 1. Build one with ok, okJSON, okRaw or fail.
 */
export class Result {
  status: u32 = 0;
  /** output holds the bytes handed to output_set. */
  output: ByteBuffer;
  error: ToolError | null = null;

  constructor(status: u32, output: ByteBuffer) {
    this.status = status;
    this.output = output;
  }

  get isError(): bool {
    return this.status != 0;
  }
}

/** ok returns a success carrying v. */
export function ok(v: JSONValue): Result {
  const w = new JSONWriter();
  v.write(w);
  return okJSON(w);
}

/** okJSON returns a success carrying what w wrote; an overflowing writer is an error. */
export function okJSON(w: JSONWriter): Result {
  if (w.overflowed) return failWith(new ToolError(Code.TOOL_ERROR, "the result is larger than the output buffer cap"));
  return new Result(0, w.buf);
}

/** okRaw returns a success carrying JSON text the caller already has (unchecked). */
export function okRaw(json: Uint8Array): Result {
  const b = new ByteBuffer(json.length);
  b.bytes(json);
  return new Result(0, b);
}

/** failWith returns an error result for e. */
export function failWith(e: ToolError): Result {
  const w = new JSONWriter(128);
  e.write(w);
  const r = new Result(1, w.buf);
  r.error = e;
  return r;
}

/** fail returns an error result with code, message and optional details. */
export function fail(code: string, message: string, details: JSONValue | null = null): Result {
  return failWith(new ToolError(code, message, details));
}

export function notFound(message: string, details: JSONValue | null = null): Result {
  return fail(Code.NOT_FOUND, message, details);
}

export function invalidArguments(message: string, details: JSONValue | null = null): Result {
  return fail(Code.INVALID_ARGUMENTS, message, details);
}

export function upstreamError(message: string, details: JSONValue | null = null): Result {
  return fail(Code.UPSTREAM_ERROR, message, details);
}
