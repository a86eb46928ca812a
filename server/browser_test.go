package server

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserTimeout bounds the whole browser session.
const browserTimeout = 60 * time.Second

// chromium starts a headless Chromium with a throwaway profile that can
// resolve no host name: it reaches 127.0.0.1 and nothing else.
func chromium(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium not found: run `make test` (tools/test-deps.sh installs Debian's chromium)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(path),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
	)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	return tab
}

// TestPortal_chromium signs in with a real Chromium, connects an API-key
// integration through its form (with one failed attempt first) and sees it
// connected; the plugin then calls upstream with the key.
func TestPortal_chromium(t *testing.T) {
	plugins := filepath.Join(t.TempDir(), "plugins")
	buildAuthPlugins(t, plugins)
	api := whoamiAPI(t)
	t.Setenv("KEYED_BASE_URL", api.URL)
	w := startWorkbench(t, Config{DataDir: t.TempDir(), PluginsDir: plugins, EgressAllowPrivate: true})
	alice := w.addUser(t, "alice@example.com")
	tab := chromium(t)
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, steps...); err != nil {
			t.Fatalf("%s: %v\nserver log:\n%s", what, err, w.logs)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(tab, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluating %s: %v", expr, err)
		}
		return v
	}
	text := func(id chromedp.ID) string {
		t.Helper()
		v, err := chromedp.Run(tab, chromedp.Text(id))
		if err != nil {
			t.Fatalf("text of %s: %v", id, err)
		}
		return strings.TrimSpace(v)
	}
	check := func(what, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %q, want %q", what, got, want)
		}
	}

	do("open the portal", chromedp.Navigate(w.base+"/"), chromedp.WaitVisible(chromedp.ID("email")))
	check("focus on the sign-in page", eval(`document.activeElement.id`), "email")
	// The stylesheet loads under the page's Content-Security-Policy.
	check("page background", eval(`getComputedStyle(document.body).backgroundColor`), "rgb(246, 247, 249)")
	do("sign in",
		chromedp.SendKeys(chromedp.ID("email"), "alice@example.com"),
		chromedp.SendKeys(chromedp.ID("password"), testPassword),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.ID("connect-keyed")))
	check("status before", text("status-keyed"), "Not connected")
	do("start connecting", chromedp.Click(chromedp.ID("connect-keyed")), chromedp.WaitVisible(chromedp.ID("field-site")))
	// Submit without the key (the browser's own check removed): the server
	// says what is missing and the browser focuses the field at fault.
	do("submit without the key",
		chromedp.SendKeys(chromedp.ID("field-site"), "acme"),
		chromedp.RemoveAttribute(chromedp.ID("field-api_key"), "required"),
		chromedp.Click(chromedp.ID("submit-connect")),
		chromedp.WaitVisible(chromedp.ID("error-api_key")))
	check("field error", text("error-api_key"), "API key is required")
	check("focus after the error", eval(`document.activeElement.id`), "field-api_key")
	check("site kept", eval(`document.getElementById("field-site").value`), "acme")
	do("submit with the key",
		chromedp.SendKeys(chromedp.ID("field-api_key"), "k-browser"),
		chromedp.Click(chromedp.ID("submit-connect")),
		chromedp.WaitVisible(chromedp.ID("result")))
	check("result", text("result"), "You are connected to Keyed service.")
	do("back to the integrations", chromedp.Navigate(w.base+"/integrations"), chromedp.WaitVisible(chromedp.ID("status-keyed")))
	check("status after", text("status-keyed"), "Connected")
	seen, err := w.callTool(t, alice.ID, "keyed", "keyed_whoami")
	if err != nil || seen["apiKey"] != "k-browser" {
		t.Fatalf("plugin call after connecting in the browser: %v, %v", seen, err)
	}
}
