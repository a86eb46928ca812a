// Package connwatch cancels a context when the peer of a TCP connection goes
// away. fasthttp (and so Fiber) never cancels a request's context when its
// client disconnects; this package is the bridge that lets a running tool
// call stop with its client.
//
// A watcher polls the socket with a non-blocking MSG_PEEK: an orderly close
// (EOF) or an error such as a reset ends the context; pending bytes (a
// pipelined request) or "would block" mean the peer is still there. Peeking
// never consumes data, so the HTTP server reads the connection unchanged.
// Connections without a socket (net.Pipe) and platforms without MSG_PEEK are
// not watched.
package connwatch
