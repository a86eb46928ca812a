package server

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/server/internal/connect"
	"github.com/workbench-dev/workbench/server/internal/pgtest"
	"github.com/workbench-dev/workbench/server/internal/store"
)

var (
	noticeLink  = regexp.MustCompile(`(?m)^  (http://127\.0\.0\.1:\d+/login/once/wbl_[A-Za-z0-9_-]{43})$`)
	noticeToken = regexp.MustCompile(`(?m)^  (wb_[A-Za-z0-9_-]{43})$`)
	newToken    = regexp.MustCompile(`id="new-token" tabindex="0">(wb_[A-Za-z0-9_-]{43})<`)
)

// TestServer_restartKeepsState stops a server and starts another on the same
// store: the session, the API tokens, the connection and a pending
// connection all survive, and the first-start notice is not printed again.
func TestServer_restartKeepsState(t *testing.T) {
	plugins := filepath.Join(t.TempDir(), "plugins")
	buildAuthPlugins(t, plugins)
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			addr := freeAddr(t)
			api := whoamiAPI(t)
			fake := oauthSetup(t, "oauthy", "basic", "http://"+addr, api.URL)
			t.Setenv("KEYED_BASE_URL", api.URL)
			cfg := Config{ListenAddr: addr, DataDir: t.TempDir(), PluginsDir: plugins, EgressAllowPrivate: true}
			if backend == "postgres" {
				cfg.DatabaseURL = pgtest.URL(t)
			}
			ctx := context.Background()

			first := startWorkbench(t, cfg)
			notice := first.notices.String()
			link, adminToken := noticeLink.FindStringSubmatch(notice), noticeToken.FindStringSubmatch(notice)
			if link == nil || adminToken == nil || !strings.Contains(notice, "admin@workbench.local") {
				t.Fatalf("first start printed %q; want the admin's sign-in link and token", notice)
			}
			alice := first.addUser(t, "alice@example.com")
			b := newBrowserSignedIn(t, first, "alice@example.com")
			tok := formToken(t, b.get("/integrations"))
			form := b.post("/integrations/keyed/connect", url.Values{"csrf": {tok}})
			wantPage(t, "submit", b.post(form.location, url.Values{"csrf": {tok}, "f_site": {"acme"}, "f_api_key": {"k-123"}}), http.StatusSeeOther)
			created := b.post("/account/tokens", url.Values{"csrf": {tok}, "name": {"laptop"}})
			laptop := newToken.FindStringSubmatch(created.body)
			if laptop == nil {
				t.Fatalf("no token shown:\n%s", created.body)
			}
			pendingLink, pendingID, err := serviceOf[*connect.Service](t, first.srv).Connect(ctx, alice.ID, "oauthy")
			if err != nil {
				t.Fatal(err)
			}
			first.stop(t)

			second := startWorkbench(t, cfg)
			if n := second.notices.String(); n != "" {
				t.Fatalf("second start printed %q, want nothing", n)
			}
			wantPage(t, "session after restart", b.get("/account"), http.StatusOK, "alice@example.com", "laptop")
			for _, token := range []string{adminToken[1], laptop[1]} {
				if !second.authenticates(token) {
					t.Fatalf("token %s… does not authenticate after the restart", token[:8])
				}
			}
			wantPage(t, "integrations after restart", b.get("/integrations"), http.StatusOK, `id="status-keyed">Connected`)
			seen, err := second.callTool(t, alice.ID, "keyed", "keyed_whoami")
			if err != nil || seen["apiKey"] != "k-123" {
				t.Fatalf("keyed call after restart: %v, %v", seen, err)
			}
			if status, _, err := serviceOf[*connect.Service](t, second.srv).Wait(ctx, alice.ID, pendingID, 0); err != nil || status != store.PendingWaiting {
				t.Fatalf("pending connection after restart: %s, %v", status, err)
			}
			wantPage(t, "finishing the pending connection", connectViaBrowser(t, b, pendingLink, "alice@example.com"), http.StatusOK, "You are connected")
			if status, _, _ := serviceOf[*connect.Service](t, second.srv).Wait(ctx, alice.ID, pendingID, 0); status != store.PendingConnected {
				t.Fatalf("pending connection = %s", status)
			}
			if exchanges, _ := fake.Counts(); exchanges != 1 {
				t.Fatalf("%d code exchanges", exchanges)
			}
			// The first start's sign-in link still works, once.
			admin := newBrowser(t, second.base)
			once := admin.get(strings.TrimPrefix(link[1], "http://"+addr))
			wantPage(t, "admin link", admin.post(strings.TrimPrefix(link[1], "http://"+addr), url.Values{"csrf": {formToken(t, once)}}), http.StatusSeeOther)
			wantPage(t, "admin's account", admin.get("/account"), http.StatusOK, "admin@workbench.local", "(administrator)")
		})
	}
}
