package browser

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/workbench-dev/workbench/runtime/egress"
)

// The tools' tests share one Manager, so one test binary starts one browser
// per test user: web pages on 127.0.0.1:<port> that the browsers may reach
// (pages.URL, or by name at pagesHost), a victim on 127.0.0.2:<same port>
// that they may not (hits counts every request it gets), and rebindHost,
// a name that resolves to the pages' address once and to the victim's after.
var (
	shared     *Manager
	pages      *httptest.Server
	mux        = http.NewServeMux()
	victim     *httptest.Server
	victimURL  string
	hits       atomic.Int64
	pagesHost  = "pages.test"
	rebindHost = "rebind.test"
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "browser-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	pages = httptest.NewServer(mux)
	defer pages.Close()
	pagesAddr := netip.MustParseAddrPort(pages.Listener.Addr().String())
	victimAddr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), pagesAddr.Port())
	ln, err := net.Listen("tcp", victimAddr.String())
	if err != nil {
		fmt.Fprintln(os.Stderr, "victim:", err)
		return 1
	}
	victim = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "secret")
	})}}
	victim.Start()
	defer victim.Close()
	victimURL = victim.URL
	shared, err = NewManager(Options{Dir: dir, NoSandbox: true, Egress: egress.NewClient(egress.Options{
		AllowAddrs: []netip.AddrPort{pagesAddr},
		Resolver:   &rebinder{pages: pagesAddr.Addr(), victim: victimAddr.Addr()},
	})})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer shared.Close()
	return m.Run()
}

// rebinder resolves pagesHost to the pages' address, rebindHost to the
// pages' address the first time and to the victim's after, and every other
// name as the system does.
type rebinder struct {
	pages, victim netip.Addr
	mu            sync.Mutex
	rebound       bool
}

func (r *rebinder) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	switch host {
	case pagesHost:
		return []netip.Addr{r.pages}, nil
	case rebindHost:
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.rebound {
			return []netip.Addr{r.victim}, nil
		}
		r.rebound = true
		return []netip.Addr{r.pages}, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, network, host)
}

// page serves body as HTML at a path of its own and returns its URL.
func page(t *testing.T, body string) string {
	t.Helper()
	return handle(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
}

var pageSeq atomic.Int64

// handle serves h at a path of its own on the pages server and returns its
// URL.
func handle(t *testing.T, h http.Handler) string {
	t.Helper()
	path := fmt.Sprintf("/p/%d", pageSeq.Add(1))
	mux.Handle(path, h)
	return pages.URL + path
}
