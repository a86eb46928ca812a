package fiberfix

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// pair returns both ends of a loopback TCP connection.
func pair(t *testing.T) (server, client *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { s.Close(); c.Close() })
	return s.(*net.TCPConn), c.(*net.TCPConn)
}

const interval = 10 * time.Millisecond

func TestWatchConn(t *testing.T) {
	tests := []struct {
		name     string
		peer     func(t *testing.T, client *net.TCPConn)
		wantGone bool
	}{
		{"peer stays", func(*testing.T, *net.TCPConn) {}, false},
		{"peer sends more data", func(t *testing.T, c *net.TCPConn) {
			if _, err := c.Write([]byte("GET / HTTP/1.1\r\n")); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"peer closes", func(_ *testing.T, c *net.TCPConn) { c.Close() }, true},
		{"peer resets", func(_ *testing.T, c *net.TCPConn) { c.SetLinger(0); c.Close() }, true},
		{"peer closes after pipelining", func(t *testing.T, c *net.TCPConn) {
			// Unread data stays in front of the FIN: the peer is gone, but a
			// peek sees bytes first. The server reading them is the HTTP
			// server's business; the watch reports gone only once nothing
			// but the EOF is left, so here it must not fire.
			if _, err := c.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			c.Close()
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server, client := pair(t)
			ctx, stop := watchConn(context.Background(), server, interval)
			defer stop()
			tt.peer(t, client)
			select {
			case <-ctx.Done():
				if !tt.wantGone {
					t.Fatalf("context ended: %v", context.Cause(ctx))
				}
				if cause := context.Cause(ctx); !errors.Is(cause, ErrPeerGone) {
					t.Errorf("cause = %v, want ErrPeerGone", cause)
				}
			case <-time.After(20 * interval):
				if tt.wantGone {
					t.Fatal("context still live after the peer went away")
				}
			}
			// Peeking consumed nothing.
			if tt.name == "peer sends more data" {
				server.SetReadDeadline(time.Now().Add(time.Second))
				buf := make([]byte, 64)
				n, err := server.Read(buf)
				if err != nil || string(buf[:n]) != "GET / HTTP/1.1\r\n" {
					t.Errorf("read after watching = %q, %v", buf[:n], err)
				}
			}
		})
	}
}

func TestWatchConn_Stop(t *testing.T) {
	server, _ := pair(t)
	ctx, stop := watchConn(context.Background(), server, interval)
	stop()
	select {
	case <-ctx.Done():
	default:
		t.Fatal("stop did not end the context")
	}
	if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) {
		t.Errorf("cause after stop = %v, want context.Canceled", cause)
	}
	stop() // a second stop is harmless
}

func TestWatchConn_ParentEnds(t *testing.T) {
	server, _ := pair(t)
	parent, cancel := context.WithCancel(context.Background())
	ctx, stop := watchConn(parent, server, interval)
	defer stop()
	cancel()
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
		t.Fatal("context outlived its parent")
	}
}

func TestWatchConn_Unwatchable(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	ctx, stop := watchConn(context.Background(), a, interval)
	b.Close()
	select {
	case <-ctx.Done():
		t.Fatal("a pipe cannot be watched; the context must stay live until stop")
	case <-time.After(5 * interval):
	}
	stop()
	if ctx.Err() == nil {
		t.Error("stop did not end the context")
	}
}

func TestWatchConn_LocallyClosed(t *testing.T) {
	server, _ := pair(t)
	ctx, stop := watchConn(context.Background(), server, interval)
	defer stop()
	server.Close()
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
		t.Fatal("a closed socket still counts as live")
	}
}

// TestWatchConn_Hammer starts and stops watches on one live connection from
// several goroutines while their checks run, under -race: every context
// ends by its stop, never as if the peer had gone.
func TestWatchConn_Hammer(t *testing.T) {
	server, _ := pair(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				ctx, stop := watchConn(context.Background(), server, time.Millisecond)
				time.Sleep(time.Duration((g+i)%3) * time.Millisecond)
				stop()
				if cause := context.Cause(ctx); cause != context.Canceled {
					t.Errorf("cause = %v, want context.Canceled", cause)
					return
				}
			}
		})
	}
	wg.Wait()
}
