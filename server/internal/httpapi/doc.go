// Package httpapi holds the server's Fiber routes and the one place where an
// error becomes an HTTP response. It depends on the services behind the
// routes only through the small interfaces in Deps, never on their packages.
package httpapi
