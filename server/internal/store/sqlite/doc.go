// Package sqlite opens Workbench's embedded store: a SQLite database file
// through the pure-Go modernc.org/sqlite driver, in WAL mode, migrated to the
// latest schema when opened.
//
// Writes go through a pool of one connection whose transactions begin
// IMMEDIATE, so writers queue instead of failing with SQLITE_BUSY; reads use a
// separate read-only pool that WAL lets run beside the writer. Another process
// writing the same file (the CLI while the server runs) waits up to the busy
// timeout.
package sqlite
