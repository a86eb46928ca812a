package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// TestBrowser_chromium: the browser integration is in the one catalog; an
// agent opens a local page and reads it through execute_tools, the
// profile lives under DATA_DIR/browser/<user>, and a navigation to the
// server's own loopback address without EGRESS_ALLOW_PRIVATE is refused.
func TestBrowser_chromium(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<title>hello</title><p>from the test</p>")
	}))
	defer site.Close()
	tests := []struct {
		name         string
		allowPrivate bool
		wantCode     string
	}{
		{"private allowed", true, ""},
		{"private refused", false, "EGRESS_DENIED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dataDir := t.TempDir()
			w := startWorkbench(t, Config{DataDir: dataDir, EgressAllowPrivate: tt.allowPrivate, BrowserAllowNoSandbox: true})
			agent := newJotsAgent(t, w, "alice@example.com")
			res, failure := agent.exec("browser_navigate", map[string]any{"url": site.URL})
			if tt.wantCode != "" {
				if failure == nil || failure["code"] != tt.wantCode {
					t.Fatalf("navigate = %v, %v; want %s", res, failure, tt.wantCode)
				}
				return
			}
			if failure != nil || res["title"] != "hello" {
				t.Fatalf("navigate = %v, %v", res, failure)
			}
			if text := agent.must("browser_get_text", map[string]any{})["text"]; text != "from the test" {
				t.Fatalf("get_text = %q", text)
			}
			entries, err := os.ReadDir(filepath.Join(dataDir, "browser"))
			if err != nil || len(entries) != 1 {
				t.Fatalf("DATA_DIR/browser holds %v (%v), want one profile", entries, err)
			}
		})
	}
}
