package browser

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/egress"
)

// testTimeout bounds one browser action in the tests; a hung browser fails
// the test instead of hanging it.
const testTimeout = time.Minute

// requireChromium fails the test when no Chromium is installed.
func requireChromium(t *testing.T) {
	t.Helper()
	if _, err := findChromium(""); err != nil {
		t.Fatalf("%v: run `make test` (tools/test-deps.sh installs Debian's chromium)", err)
	}
}

// site is a local web server the tests' browsers may reach; every other
// loopback address stays refused by the egress rule.
type site struct {
	*httptest.Server
	addr netip.AddrPort
}

// newSite serves h on 127.0.0.1.
func newSite(t *testing.T, h http.Handler) *site {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ap, err := netip.ParseAddrPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return &site{Server: srv, addr: ap}
}

// dialer allows exactly the sites' addresses under the production rule.
func dialer(sites ...*site) *egress.Client {
	var allow []netip.AddrPort
	for _, s := range sites {
		allow = append(allow, s.addr)
	}
	return egress.NewClient(egress.Options{AllowAddrs: allow})
}

// newTestManager returns a Manager with real Chromium, profiles in a
// temporary directory, closed when the test ends.
func newTestManager(t *testing.T, o Options) *Manager {
	t.Helper()
	requireChromium(t)
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	o.NoSandbox = true // the tests run as root in containers
	m, err := NewManager(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

// wantCode fails unless err is a *failure.Error with code want whose
// message holds every fragment.
func wantCode(t *testing.T, err error, want failure.Code, fragments ...string) {
	t.Helper()
	var fe *failure.Error
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v (%T), want a *failure.Error %s", err, err, want)
	}
	if fe.Code != want {
		t.Fatalf("code = %s (%s), want %s", fe.Code, fe.Message, want)
	}
	for _, f := range fragments {
		if !strings.Contains(fe.Message, f) {
			t.Errorf("message %q does not mention %q", fe.Message, f)
		}
	}
}

// testContext is a context bounded by testTimeout.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}
