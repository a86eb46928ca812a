// Package fiberbridge serves a net/http handler from Fiber so that the
// handler's request context ends when the client goes away.
//
// Fiber runs on fasthttp, whose request context never ends on a client
// disconnect, and whose net/http adaptor hands the handler a context that is
// recycled with the fasthttp request. The bridge instead gives the handler a
// fresh context derived from a base context (the server's lifetime) that
// connwatch cancels when the peer closes or resets the connection, and that
// ends when the handler returns. Responses stream (SSE) because fasthttp is
// at least v1.66.
package fiberbridge
