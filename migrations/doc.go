// Package migrations holds the database schema as embedded SQL migrations, one
// set per dialect (sqlite/ and postgres/), and applies them with goose.
//
// The two sets describe the same tables; they differ only where the dialects
// do (time and blob types). The package knows nothing about the store's Go
// types and never opens a database itself.
package migrations
