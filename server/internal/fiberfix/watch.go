package fiberfix

import (
	"context"
	"errors"
	"net"
	"sync"
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
//
// The socket is checked from a timer, so a request that ends before the
// first check costs no goroutine.
func watchConn(parent context.Context, conn net.Conn, interval time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	raw := rawConn(conn)
	if raw == nil {
		return ctx, func() { cancel(context.Canceled) }
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	w := &connWatch{ctx: ctx, cancel: cancel, raw: raw, interval: interval}
	w.mu.Lock()
	w.timer = time.AfterFunc(interval, w.check)
	w.mu.Unlock()
	return ctx, w.stop
}

// connWatch checks one connection every interval until its context ends.
type connWatch struct {
	ctx      context.Context
	cancel   context.CancelCauseFunc
	raw      syscall.RawConn
	interval time.Duration

	mu    sync.Mutex // guards timer
	timer *time.Timer
}

// check ends the context if the peer is gone, and otherwise checks again
// after interval unless the context has ended meanwhile.
func (w *connWatch) check() {
	if gone(w.raw) {
		w.cancel(ErrPeerGone)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx.Err() == nil {
		w.timer.Reset(w.interval)
	}
}

// stop ends the context and the watch: a check already running sees the
// context ended and does not run again.
func (w *connWatch) stop() {
	w.cancel(context.Canceled)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer.Stop()
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
