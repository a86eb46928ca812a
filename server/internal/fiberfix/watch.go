package fiberfix

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"
)

// DefaultInterval is how often a watch polls its connection when given no
// interval.
const DefaultInterval = 100 * time.Millisecond

// ErrPeerGone is the cause of a context ended because the client closed or
// reset its connection.
var ErrPeerGone = errors.New("client closed the connection")

// watchConn returns a context derived from parent that ends with cause
// ErrPeerGone once the peer of conn has closed or reset it, and a stop
// function that ends the watch and the context. Callers must call stop when
// the request is done; a second call is harmless. interval <= 0 means
// DefaultInterval.
func watchConn(parent context.Context, conn net.Conn, interval time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	raw := rawConn(conn)
	if raw == nil {
		return ctx, func() { cancel(context.Canceled) }
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if gone(raw) {
					cancel(ErrPeerGone)
					return
				}
			}
		}
	}()
	return ctx, func() {
		cancel(context.Canceled)
		<-done
	}
}

// rawConn returns the socket under conn, unwrapping TLS, or nil.
func rawConn(conn net.Conn) syscall.RawConn {
	for {
		switch c := conn.(type) {
		case syscall.Conn:
			raw, err := c.SyscallConn()
			if err != nil {
				return nil
			}
			return raw
		case interface{ NetConn() net.Conn }:
			conn = c.NetConn()
		default:
			return nil
		}
	}
}

// gone reports whether the peer has closed or reset the socket. A socket
// that can no longer be used (closed locally) counts as gone.
func gone(raw syscall.RawConn) bool {
	closed := false
	if err := raw.Control(func(fd uintptr) { closed = peerClosed(fd) }); err != nil {
		return true
	}
	return closed
}
