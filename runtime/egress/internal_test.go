package egress

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/workbench-dev/workbench/failure"
)

// TestClient_refusal checks the Policy.Internal exemption address by
// address: an operator's internal service may be loopback, private, CGNAT
// or reserved, never link-local, metadata, multicast, broadcast or
// unspecified.
func TestClient_refusal(t *testing.T) {
	tests := []struct {
		addr     string
		internal string // "" means the exemption admits it; otherwise a substring of the refusal
	}{
		{"10.0.0.1", ""},
		{"172.16.5.4", ""},
		{"192.168.1.10", ""},
		{"127.0.0.1", ""},
		{"100.64.0.1", ""},
		{"198.18.0.1", ""},
		{"fd12:3456::1", ""},
		{"::ffff:10.0.0.1", ""},
		{"::ffff:0:a00:1", ""},
		{"64:ff9b::a00:1", ""},
		{"8.8.8.8", ""},

		{"169.254.169.254", "link-local address 169.254.169.254"},
		{"169.254.0.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fd00:ec2::254", "metadata address fd00:ec2::254"},
		{"100.100.100.200", "metadata"},
		{"192.0.0.192", "metadata"},
		{"168.63.129.16", "metadata"},
		{"::ffff:169.254.169.254", "link-local"},
		{"::ffff:0:a9fe:a9fe", "link-local"},
		{"64:ff9b::a9fe:a9fe", "link-local"},
		{"2002:a9fe:a9fe::", "link-local"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
	}
	c := NewClient(Options{})
	defer c.Close()
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			ap := netip.AddrPortFrom(netip.MustParseAddr(tt.addr), 443)
			got := c.refusal(ap, true)
			if tt.internal == "" && got != "" || tt.internal != "" && !strings.Contains(got, tt.internal) {
				t.Fatalf("refusal(%s, internal) = %q, want %q", tt.addr, got, tt.internal)
			}
			// Without the exemption the address rule applies in full.
			if _, reason := refusal(ap.Addr()); c.refusal(ap, false) != reason {
				t.Fatalf("refusal(%s) = %q, want the address rule's %q", tt.addr, c.refusal(ap, false), reason)
			}
		})
	}
}

// TestClient_Do_internal checks that a Policy.Internal destination (an
// operator's base URL on an internal address) is reached, and that the
// exemption reaches nothing else: not another host of the same policy on
// the same address, not the same host under a policy without it (even with
// a pooled connection waiting), not a redirect off it, and never a metadata
// address.
func TestClient_Do_internal(t *testing.T) {
	var (
		hits atomic.Int32
		away string
	)
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/away" {
			http.Redirect(w, r, away, http.StatusFound)
			return
		}
		io.WriteString(w, "internal")
	})
	away = srv.url("other.test") + "/"
	res := newFakeResolver(map[string]string{
		"ghe.test":   "127.0.0.1",
		"other.test": "127.0.0.1",
		"imds.test":  "169.254.169.254",
		"imds6.test": "fd00:ec2::254",
		"azure.test": "168.63.129.16",
	})
	ghe := srv.dest(t, "ghe.test")
	internal := Policy{Allow: []Destination{ghe, srv.dest(t, "other.test")}, Internal: []Destination{ghe}}
	tests := []struct {
		name   string
		policy Policy
		url    string
		want   string // "" means the request succeeds; otherwise a substring of the EGRESS_DENIED message
	}{
		{"internal destination", internal, srv.url("ghe.test") + "/api/v3", ""},
		{"same host without the exemption", Policy{Allow: []Destination{ghe}}, srv.url("ghe.test"), "ghe.test resolves to loopback address 127.0.0.1"},
		{"other host on the same address", internal, srv.url("other.test"), "other.test resolves to loopback"},
		{"redirect off the internal host", internal, srv.url("ghe.test") + "/away", "other.test resolves to loopback"},
		{"internal name to metadata", metadataPolicy(t, "imds.test"), "http://imds.test/latest/meta-data/", "imds.test resolves to link-local address 169.254.169.254"},
		{"internal name to IPv6 metadata", metadataPolicy(t, "imds6.test"), "http://imds6.test/latest/meta-data/", "metadata address fd00:ec2::254"},
		{"internal name to Azure WireServer", metadataPolicy(t, "azure.test"), "http://azure.test/machine", "metadata address 168.63.129.16"},
		{"internal metadata literal", metadataPolicy(t, "169.254.169.254"), "http://169.254.169.254/", "link-local"},
	}
	// One client for every row, so the rows after the first run with a
	// pooled connection to the internal host waiting.
	c, _, dials := newTestClient(t, Options{Resolver: res})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Do(context.Background(), tt.policy, Request{URL: tt.url}, testInjector{}, Limits{})
			if tt.want == "" {
				if err != nil || string(resp.Body) != "internal" {
					t.Fatalf("Do = %+v, %v; want the internal service's answer", resp, err)
				}
				return
			}
			e := wantCode(t, err, failure.EgressDenied)
			if !strings.Contains(e.Message, tt.want) {
				t.Fatalf("message %q, want it to contain %q", e.Message, tt.want)
			}
		})
	}
	if got := dials.attempts(); len(got) != 1 || got[0] != srv.addr.String() {
		t.Fatalf("dials = %v, want one connection to the internal service, reused by the redirecting row", got)
	}
	if n := hits.Load(); n != 2 {
		t.Fatalf("the server saw %d requests, want 2 (the internal destination and the redirect's first hop)", n)
	}
}

// metadataPolicy allows and exempts http://host.
func metadataPolicy(t *testing.T, host string) Policy {
	d := mustDest(t, "http://"+host)
	return Policy{Allow: []Destination{d}, Internal: []Destination{d}}
}

// TestClient_DialInternal checks that DialInternal reaches a loopback
// service that DialContext refuses (the rest of its rule is in
// TestClient_DialContext).
func TestClient_DialInternal(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {})
	c, _, _ := newTestClient(t, Options{})
	conn, err := c.DialInternal(context.Background(), "tcp", fmt.Sprintf("api.test:%d", srv.addr.Port()))
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	_, err = c.DialContext(context.Background(), "tcp", fmt.Sprintf("api.test:%d", srv.addr.Port()))
	wantCode(t, err, failure.EgressDenied)
}
