package atlassianjiratest

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/toolcall"
)

// refusingResolver answers every lookup with a private address, which the
// egress layer refuses before dialing, and records the names looked up. No
// lookup reaches real DNS and no connection is attempted.
type refusingResolver struct {
	mu    sync.Mutex
	names []string
}

func (r *refusingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, host)
	return []netip.Addr{netip.MustParseAddr("10.0.0.7")}, nil
}

func (r *refusingResolver) lookedUp() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.names)
}

// TestPlugin_TargetsTheConnectionSite runs the plugin without a base URL
// override: each user's calls must go to https://<their site>.atlassian.net,
// which the manifest's {site}.atlassian.net host admits for that user only.
func TestPlugin_TargetsTheConnectionSite(t *testing.T) {
	ctx := context.Background()
	res := &refusingResolver{}
	creds := credential.NewMemory()
	creds.Set("ada", "atlassian-jira", connection("acme", email, apiToken))
	creds.Set("bob", "atlassian-jira", connection("globex-eu", "bob@example.com", "other-token"))
	creds.Set("mallory", "atlassian-jira", connection("evil.example.com/x", "m@example.com", "t"))
	p := plugintest.Load(t, jiraWasm(t), plugintest.HostConfig{
		CacheDir:    cacheDir,
		Credentials: creds,
		Egress:      egress.Options{Resolver: res},
	})
	call := func(user string) *failure.Error {
		t.Helper()
		out, err := p.Call(ctx, toolcall.Call{Tool: "atlassian_jira_get_myself", UserID: user, Input: []byte(`{}`)})
		var te *failure.Error
		if !errors.As(err, &te) {
			t.Fatalf("call as %s = %s, %v; want a tool error (nothing may be reachable)", user, out, err)
		}
		return te
	}
	tests := []struct {
		user, wantHost string
	}{
		{"ada", "acme.atlassian.net"},
		{"bob", "globex-eu.atlassian.net"},
	}
	for _, tt := range tests {
		before := len(res.lookedUp())
		te := call(tt.user)
		if te.Code != "EGRESS_DENIED" || !strings.Contains(te.Message, tt.wantHost+" resolves to") {
			t.Errorf("%s: error = %s: %s; want EGRESS_DENIED naming %s", tt.user, te.Code, te.Message, tt.wantHost)
		}
		if got := res.lookedUp()[before:]; !slices.Equal(got, []string{tt.wantHost}) {
			t.Errorf("%s: looked up %v, want [%s]", tt.user, got, tt.wantHost)
		}
	}
	// A stored site that is not one DNS label never becomes a request.
	before := len(res.lookedUp())
	if te := call("mallory"); te.Code != "NOT_CONNECTED" || !strings.Contains(te.Message, "not a Jira Cloud site name") {
		t.Errorf("mallory: error = %s: %s", te.Code, te.Message)
	}
	if got := res.lookedUp()[before:]; len(got) != 0 {
		t.Errorf("mallory: looked up %v", got)
	}
	if st := p.Stats(); st.EgressDenied != 2 {
		t.Errorf("egress denied %d times, want 2", st.EgressDenied)
	}
}
