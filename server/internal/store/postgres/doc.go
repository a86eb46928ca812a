// Package postgres opens Workbench's shared store: a PostgreSQL database
// through a pgx connection pool, migrated to the latest schema when opened.
// Several replicas may share one database; migrations take an advisory lock.
package postgres
