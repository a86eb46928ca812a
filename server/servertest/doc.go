// Package servertest gives tests outside the server package what they need
// to run Workbench for real: a throwaway PostgreSQL database (through the
// server's internal pgtest, which packages outside server/ cannot import).
//
// It is test support only; nothing in the server imports it.
package servertest
