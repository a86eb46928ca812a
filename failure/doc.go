// Package failure is Workbench's vocabulary of failure: the error codes an
// agent, a plugin or an API client sees (Code), the coded error that carries
// one (Error), and the domain sentinels every layer wraps and tests with
// errors.Is (ErrNotConnected, ErrUnknownIntegration, ...).
//
// Each code and each sentinel is declared here and nowhere else, so the
// runtime, the services and every response surface agree on what a failure
// is called. Surfaces turn sentinels into codes in one place each.
//
// The package is a leaf: it imports only the standard library, and anything
// in the module may import it, including runtime and its subpackages. It
// holds no behaviour beyond naming failures: no logging, no HTTP statuses,
// no response formats.
package failure
