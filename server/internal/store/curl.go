package store

// CurlStore holds curl-session tokens and the proxy's audit log.
type CurlStore interface {
}
