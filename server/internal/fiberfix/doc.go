// Package fiberfix holds the workarounds Workbench needs to serve on Fiber.
// Fiber is a stated requirement of the product; it runs on fasthttp, which
// differs from net/http in three ways that matter here, and this package is
// the one place that makes up for them:
//
//   - fasthttp never cancels a request's context when the client
//     disconnects. RequestContext gives a Fiber handler a context that ends
//     with cause ErrPeerGone once the client has closed or reset its
//     connection, so a tool call, a proxied download or a store query stops
//     with its client. A watcher polls the socket with a non-blocking
//     MSG_PEEK every DefaultInterval: an orderly close (EOF) or an error such
//     as a reset ends the context; pending bytes (a pipelined request, the
//     rest of an upload) or "would block" mean the peer is still there.
//     Peeking never consumes data, so fasthttp reads the connection
//     unchanged. Connections without a socket (net.Pipe) and platforms
//     without MSG_PEEK are not watched.
//   - fasthttp's net/http adaptor hands the handler a context that is
//     recycled with the fasthttp request and never ends on a disconnect.
//     Bridge serves a net/http handler (the MCP endpoint) with a fresh
//     context per request, watched the same way. Its responses stream (SSE)
//     because fasthttp is at least v1.66.
//   - The server reads request bodies as streams (fiber.Config's
//     StreamRequestBody) so the proxy and jot uploads never hold a body
//     whole; with it on, fasthttp no longer enforces the body limit.
//     BoundBodies enforces it again on every route whose handler does not
//     read the stream itself.
//
// The package knows no Workbench route or service: callers pass the routes
// and limits in.
package fiberfix
