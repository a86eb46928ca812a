// Package storetest is the behaviour suite every store.Store implementation
// must pass. The sqlite and postgres packages run it from their tests against
// a real database: Run(t, Backend{...}).
//
// It checks what callers rely on: uniqueness rules, token lookup and revocation,
// sealed connection round trips, the pending connection lifecycle, that one
// user can never reach another user's rows, that everything survives a
// restart, and that concurrent writers neither fail nor race.
package storetest
