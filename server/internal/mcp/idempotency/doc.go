// Package idempotency remembers the outcome of execute_tools executions that
// carried an idempotency key, so that a retry with the same key and the same
// request gets the stored outcome instead of running the tool again.
//
// Store is the contract; Memory is a bounded in-process implementation (keys
// and bytes per user, bytes overall, age) that a database-backed store can
// replace so that replays work across replicas. No store makes room by
// dropping a live record: past a budget it refuses (ErrCapacity). The package compares nothing itself: callers hash the
// request and decide what a mismatch means.
package idempotency
