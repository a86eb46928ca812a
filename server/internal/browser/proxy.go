package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"time"

	"github.com/workbench-dev/workbench/runtime/egress"
)

// Dialer opens the browser's connections under the egress address rule;
// *egress.Client implements it. A refusal is an error matching
// egress.ErrDenied.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// maxRefusals bounds the refusals a proxy remembers.
const maxRefusals = 32

// proxyHeaderTimeout bounds how long the browser may take to send a request
// head to its proxy.
const proxyHeaderTimeout = 10 * time.Second

// egressProxy is one session's forward proxy: Chromium sends every request
// to it (--proxy-server), plain http as absolute-form requests and
// everything else (https, wss) as CONNECT tunnels, and every upstream
// connection is dialed through the Dialer. It remembers the latest refusals
// so a tool can say what was refused.
type egressProxy struct {
	ln      net.Listener
	srv     *http.Server
	dialer  Dialer
	forward *httputil.ReverseProxy
	tr      *http.Transport

	mu       sync.Mutex
	refusals []refusal             // the latest maxRefusals, oldest first
	seq      uint64                // refusals ever recorded
	tunnels  map[net.Conn]struct{} // open CONNECT tunnels' connections; nil once closed
}

// refusal is one refused connection: its sequence number and why.
type refusal struct {
	seq    uint64
	reason string
}

// startProxy listens on a loopback port and serves until close.
func startProxy(d Dialer) (*egressProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("browser egress proxy: %w", err)
	}
	p := &egressProxy{ln: ln, dialer: d, tunnels: make(map[net.Conn]struct{})}
	p.tr = &http.Transport{
		Proxy:                  nil,
		DialContext:            p.dial,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        30 * time.Second,
		ResponseHeaderTimeout:  60 * time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
	p.forward = &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.Out.URL = r.In.URL; r.Out.Host = r.In.Host },
		Transport: p.tr,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			if errors.Is(err, egress.ErrDenied) {
				abort(w) // the browser reports a network error, not a page
				return
			}
			http.Error(w, "Workbench could not reach the site", http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: proxyHeaderTimeout, MaxHeaderBytes: 1 << 20}
	go func() { _ = p.srv.Serve(ln) }() // ends when close closes the listener
	return p, nil
}

// addr is the proxy's host:port.
func (p *egressProxy) addr() string { return p.ln.Addr().String() }

// close stops the proxy and every tunnel and request through it.
func (p *egressProxy) close() error {
	err := p.srv.Close()
	p.tr.CloseIdleConnections()
	p.mu.Lock()
	for c := range p.tunnels {
		_ = c.Close()
	}
	p.tunnels = nil
	p.mu.Unlock()
	return err
}

// ServeHTTP tunnels CONNECT requests and forwards absolute-form http
// requests; anything else is refused.
func (p *egressProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.tunnel(w, r)
	case r.URL.IsAbs() && r.URL.Scheme == "http":
		p.forward.ServeHTTP(w, r)
	default:
		http.Error(w, "Workbench's browser proxy forwards http and CONNECT only", http.StatusBadRequest)
	}
}

// tunnel dials r.Host under the egress rule and splices the two connections.
func (p *egressProxy) tunnel(w http.ResponseWriter, r *http.Request) {
	up, err := p.dial(r.Context(), "tcp", r.Host)
	if err != nil {
		http.Error(w, "Workbench refused or could not reach "+r.Host, http.StatusForbidden)
		return
	}
	rc := http.NewResponseController(w)
	down, buf, err := rc.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		_ = up.Close()
		_ = down.Close()
		return
	}
	if !p.track(up, down) {
		return
	}
	defer p.untrack(up, down)
	done := make(chan struct{}, 2)
	pipe := func(dst net.Conn, src io.Reader) {
		_, _ = io.Copy(dst, src)
		_ = up.Close()
		_ = down.Close()
		done <- struct{}{}
	}
	go pipe(up, buf) // buf holds bytes the browser sent after the CONNECT head
	go pipe(down, up)
	<-done
	<-done
}

// track records a tunnel's connections so close ends them; it closes them
// and returns false when the proxy is already closed.
func (p *egressProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tunnels == nil {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

// untrack forgets a finished tunnel's connections.
func (p *egressProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.tunnels, c)
	}
}

// dial dials through the Dialer and records a refusal.
func (p *egressProxy) dial(ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := p.dialer.DialContext(ctx, network, address)
	if errors.Is(err, egress.ErrDenied) {
		p.mu.Lock()
		p.seq++
		p.refusals = append(p.refusals, refusal{seq: p.seq, reason: fmt.Sprintf("%s: %v", address, err)})
		if len(p.refusals) > maxRefusals {
			p.refusals = p.refusals[len(p.refusals)-maxRefusals:]
		}
		p.mu.Unlock()
	}
	return conn, err
}

// mark returns the sequence number refusalsSince counts from.
func (p *egressProxy) mark() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seq
}

// refusalsSince returns the reasons of the refusals recorded after mark
// (at most maxRefusals, oldest first).
func (p *egressProxy) refusalsSince(mark uint64) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, r := range p.refusals {
		if r.seq > mark {
			out = append(out, r.reason)
		}
	}
	return out
}

// abort closes the client connection without a response.
func abort(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "refused", http.StatusForbidden)
		return
	}
	_ = conn.Close()
}
