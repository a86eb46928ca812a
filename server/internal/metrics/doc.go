// Package metrics serves /metrics in the Prometheus text format: the
// runtime's per-plugin and per-tool counters, read from the catalog at each
// scrape, and the HTTP server's requests by route pattern, method and status
// class. Every label set is bounded by what the operator loads and the
// routes the server has: no user IDs, no URLs, no plugin-chosen strings
// beyond the runtime's capped error codes.
package metrics
