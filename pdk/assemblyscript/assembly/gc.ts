// When to collect garbage between calls.
//
// The kit builds with the minimal runtime: nothing is collected during a
// call, and the collection at the end of a call is a full mark and sweep of
// everything reachable from globals (the manifest's tools and schemas
// included). Doing that after every call would cost more than the call
// itself, so the kit collects when the heap has grown since the last
// collection, or when the bytes that crossed the ABI (input, output, import
// results) since then, plus CALL_OVERHEAD_BYTES per call for what every call
// allocates whatever its size, pass COLLECT_EVERY_IO_BYTES. Allocation
// follows that sum closely, so the heap stays at a few times one busy
// call's garbage and a collection is shared by dozens of small calls.

import { Runtime } from "~lib/shared/runtime";

/** COLLECT_EVERY_IO_BYTES is how much ABI traffic may pass between two collections. */
export const COLLECT_EVERY_IO_BYTES: i64 = 64 << 10;

/** CALL_OVERHEAD_BYTES is what a small call allocates besides its data. */
export const CALL_OVERHEAD_BYTES: i64 = 2 << 10;

let ioBytes: i64 = 0;
let pagesAtCollect: i32 = 0;

/** noteIO records n bytes that crossed the ABI (and were allocated for). */
export function noteIO(n: i64): void {
  ioBytes += n;
}

/**
 * collectIfDue runs the collector when it is due. Call it only at the end
 * of an export, when the stack holds nothing that must survive: the
 * minimal runtime does not scan the stack.
 */
export function collectIfDue(): void {
  if (ASC_RUNTIME != Runtime.Minimal) return; // the incremental runtime collects by itself
  ioBytes += CALL_OVERHEAD_BYTES;
  const pages = <i32>memory.size();
  if (pages <= pagesAtCollect && ioBytes < COLLECT_EVERY_IO_BYTES) return;
  __collect();
  ioBytes = 0;
  pagesAtCollect = <i32>memory.size();
}
