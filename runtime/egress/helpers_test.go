package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/workbench-dev/workbench/failure"
)

// fakeResolver maps test names to addresses and counts lookups.
type fakeResolver struct {
	mu      sync.Mutex
	names   map[string][]netip.Addr
	lookups []string
}

func newFakeResolver(names map[string]string) *fakeResolver {
	r := &fakeResolver{names: map[string][]netip.Addr{}}
	for name, addrs := range names {
		for _, a := range strings.Split(addrs, ",") {
			r.names[name] = append(r.names[name], netip.MustParseAddr(a))
		}
	}
	return r
}

func (r *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups = append(r.lookups, host)
	if network != "ip" {
		return nil, fmt.Errorf("unexpected network %q", network)
	}
	addrs, ok := r.names[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

func (r *fakeResolver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lookups)
}

// dialLog records every connection attempt the client makes and refuses any
// address other than 127.0.0.1, so a broken address rule can never send test
// traffic off the machine.
type dialLog struct {
	t     *testing.T
	mu    sync.Mutex
	addrs []string
}

func (d *dialLog) dial(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, address)
	d.mu.Unlock()
	ap, err := netip.ParseAddrPort(address)
	if err != nil || ap.Addr() != netip.MustParseAddr("127.0.0.1") {
		d.t.Errorf("client tried to dial %s; tests only allow 127.0.0.1", address)
		return nil, errors.New("test dialer: refused non-loopback address")
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, address)
}

func (d *dialLog) attempts() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

// newTestClient returns a client whose resolver knows the test names and
// whose dials are recorded.
func newTestClient(t *testing.T, o Options) (*Client, *fakeResolver, *dialLog) {
	t.Helper()
	res, ok := o.Resolver.(*fakeResolver)
	if !ok {
		res = newFakeResolver(map[string]string{
			"api.test":      "127.0.0.1",
			"other.test":    "127.0.0.1",
			"internal.test": "10.0.0.1",
			"mapped.test":   "::ffff:10.0.0.1",
			"nat64.test":    "64:ff9b::a9fe:a9fe",
			"xlat.test":     "::ffff:0:7f00:1",
			"meta.test":     "169.254.169.254",
			"mixed.test":    "10.0.0.1,192.168.0.1",
		})
		o.Resolver = res
	}
	c := NewClient(o)
	log := &dialLog{t: t}
	c.dialAddr = log.dial
	t.Cleanup(c.Close)
	return c, res, log
}

// testServer is a loopback upstream with its address and a URL-form
// destination for a given name.
type testServer struct {
	*httptest.Server
	addr netip.AddrPort
}

func newTestServer(t *testing.T, h http.HandlerFunc) *testServer {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	return &testServer{Server: srv, addr: ap}
}

// url returns the server's URL under a test host name.
func (s *testServer) url(name string) string {
	return fmt.Sprintf("http://%s:%d", name, s.addr.Port())
}

func (s *testServer) dest(t *testing.T, name string) Destination {
	return mustDest(t, s.url(name))
}

func wantCode(t *testing.T, err error, code failure.Code) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *Error with code %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("code = %s (%s), want %s", e.Code, e.Message, code)
	}
	if (code == failure.EgressDenied) != errors.Is(err, ErrDenied) {
		t.Fatalf("errors.Is(err, ErrDenied) = %v for code %s", errors.Is(err, ErrDenied), code)
	}
	return e
}

// testInjector attaches a fixed set of credential parts: a bearer token, an
// API key header and a cookie.
type testInjector struct{}

const (
	realToken  = "real-SECRET-token"
	realAPIKey = "real-SECRET-apikey"
	realCookie = "real-SECRET-cookie"
)

func (testInjector) Strip(r *http.Request) {
	for _, h := range []string{"Authorization", "Proxy-Authorization", "Cookie", "X-Api-Key"} {
		r.Header.Del(h)
	}
}

func (i testInjector) Apply(r *http.Request) error {
	i.Strip(r)
	r.Header.Set("Authorization", "Bearer "+realToken)
	r.Header.Set("X-Api-Key", realAPIKey)
	r.AddCookie(&http.Cookie{Name: "sid", Value: realCookie})
	return nil
}

// failingInjector cannot attach its credential.
type failingInjector struct{ testInjector }

func (failingInjector) Apply(*http.Request) error {
	return errors.New("credential has no field \"api_key\"")
}
