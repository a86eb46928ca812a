// Package backend picks the store implementation from the server's
// configuration: Postgres when DATABASE_URL is a postgres:// or postgresql://
// URL, otherwise SQLite in DATA_DIR/workbench.db.
package backend
