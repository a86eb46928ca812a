// Package sqlstore implements store.Store over database/sql once, for both
// databases: the sqlite and postgres packages open their database, apply the
// migrations and hand sqlstore a Dialect that says how placeholders, times and
// constraint errors differ.
//
// Queries are written with '?' placeholders and pass every time as a
// parameter from the store's clock, never the database's, so both dialects
// behave the same and tests can move time.
package sqlstore
