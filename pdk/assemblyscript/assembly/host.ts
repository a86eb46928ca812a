// The workbench_v1 host imports of docs/abi.md section 5 and thin wrappers
// that move strings and bytes across them.

import { ByteBuffer, decodeUTF8 } from "./bytes";
import { noteIO } from "./gc";

// @ts-ignore: decorator
@external("workbench_v1", "output_set")
declare function importOutputSet(ptr: usize, len: usize): void;

// @ts-ignore: decorator
@external("workbench_v1", "result_read")
declare function importResultRead(ptr: usize, len: usize): i32;

// @ts-ignore: decorator
@external("workbench_v1", "log")
declare function importLog(level: i32, ptr: usize, len: usize): void;

// @ts-ignore: decorator
@external("workbench_v1", "config_get")
declare function importConfigGet(ptr: usize, len: usize): i32;

// @ts-ignore: decorator
@external("workbench_v1", "progress")
declare function importProgress(done: f64, total: f64, ptr: usize, len: usize): void;

// @ts-ignore: decorator
@external("workbench_v1", "http_request")
declare function importHTTPRequest(reqPtr: usize, reqLen: usize, bodyPtr: usize, bodyLen: usize): i64;

/** Log levels of the log import. */
export enum LogLevel {
  Debug = 0,
  Info = 1,
  Warn = 2,
  Error = 3,
}

/** utf8Of encodes s as UTF-8 into a fresh buffer. */
export function utf8Of(s: string): ByteBuffer {
  const b = new ByteBuffer(s.length + 8);
  b.utf8(s);
  return b;
}

/** outputSet hands n bytes at ptr to the host as the call's output. */
export function outputSet(ptr: usize, n: i32): void {
  noteIO(n);
  importOutputSet(ptr, <usize>n);
}

/** log writes one log record at level. */
export function log(level: LogLevel, msg: string): void {
  const b = utf8Of(msg);
  importLog(<i32>level, b.dataStart, <usize>b.length);
}

export function logDebug(msg: string): void {
  log(LogLevel.Debug, msg);
}
export function logInfo(msg: string): void {
  log(LogLevel.Info, msg);
}
export function logWarn(msg: string): void {
  log(LogLevel.Warn, msg);
}
export function logError(msg: string): void {
  log(LogLevel.Error, msg);
}

/** progress reports done out of total (0 means unknown) with a message. */
export function progress(done: f64, total: f64, msg: string): void {
  const b = utf8Of(msg);
  importProgress(done, total, b.dataStart, <usize>b.length);
}

/**
 * readResult copies the pending result of n bytes into a new array; null
 * when the host has no pending result of that size.
 */
export function readResult(n: i32): Uint8Array | null {
  noteIO(n);
  const out = new Uint8Array(n);
  if (n == 0) return out;
  const got = importResultRead(out.dataStart, <usize>n);
  if (got != n) return null;
  return out;
}

/** configGet returns the setting key, or null when it has no value. */
export function configGet(key: string): string | null {
  const k = utf8Of(key);
  const n = importConfigGet(k.dataStart, <usize>k.length);
  if (n < 0) return null;
  const v = readResult(n);
  if (v == null) return null;
  return decodeUTF8(v.dataStart, v.length);
}

/**
 * RawHTTPResult is what http_request produced: a head and a body, or the
 * host's error JSON.
 */
export class RawHTTPResult {
  head: Uint8Array | null = null;
  body: Uint8Array | null = null;
  failure: Uint8Array | null = null;
}

/** httpRequest performs the http_request import with a request head and body. */
export function httpRequest(head: ByteBuffer, body: Uint8Array | null): RawHTTPResult {
  const res = new RawHTTPResult();
  const bodyPtr: usize = body == null ? 0 : body.dataStart;
  const bodyLen: usize = body == null ? 0 : <usize>body.length;
  const ret = importHTTPRequest(head.dataStart, <usize>head.length, bodyPtr, bodyLen);
  if (ret < 0) {
    const n = -ret;
    let errJSON: Uint8Array | null = null;
    if (n <= 0x7fffffff) errJSON = readResult(<i32>n);
    res.failure = errJSON != null ? errJSON : unreadable("could not read the host's error for http_request");
    return res;
  }
  const headLen = <u64>ret >>> 32;
  const bodyLenOut = <u64>ret & 0xffffffff;
  if (headLen + bodyLenOut > 0x7fffffff) {
    res.failure = unreadable("http_request returned an impossible response length");
    return res;
  }
  const all = readResult(<i32>(headLen + bodyLenOut));
  if (all == null) {
    res.failure = unreadable("could not read the host's response for http_request");
    return res;
  }
  res.head = all.subarray(0, <i32>headLen);
  res.body = all.subarray(<i32>headLen);
  return res;
}

function unreadable(msg: string): Uint8Array {
  const b = new ByteBuffer(64);
  b.ascii('{"code":"TOOL_ERROR","message":"');
  b.ascii(msg);
  b.ascii('"}');
  return b.toBytes();
}
