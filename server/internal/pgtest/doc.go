// Package pgtest gives tests a real PostgreSQL: one throwaway cluster per test
// binary, started on first use on a free 127.0.0.1 port with its socket in a
// temporary directory, and a fresh database for each caller of URL.
//
// A test package that uses it calls Main from TestMain, which stops the
// cluster and removes its files when the tests end. As root the cluster runs
// as the postgres OS user, since PostgreSQL refuses to run as root. Missing
// server binaries fail the test (make test installs them); they never skip it.
package pgtest
