package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/servertest"
)

// withCustomSection appends a custom section of n bytes to a module,
// making it larger without changing what it does.
func withCustomSection(wasm []byte, n int) []byte {
	name := "padding"
	payload := append([]byte{byte(len(name))}, name...)
	payload = append(payload, make([]byte, n)...)
	out := append(slices.Clone(wasm), 0) // section id 0: custom
	out = binary.AppendUvarint(out, uint64(len(payload)))
	return append(out, payload...)
}

// adminRequest sends a request to the admin API with token and returns
// the status and body.
func adminRequest(t *testing.T, base, method, path, token string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// TestServer_Modules drives the module API of a running server: only admins
// get in, an upload larger than the default body limit loads, and a
// direct-surface MCP session hears of every change.
func TestServer_Modules(t *testing.T) {
	w := startWorkbench(t, Config{DataDir: t.TempDir(), ToolSurface: SurfaceDirect})
	adminToken := strings.TrimSpace(lastNoticeLine(w.notices.String()))
	ctx := context.Background()
	_, userToken, err := accounts.AddUser(ctx, w.srv.store, nil, accounts.NewUser{Email: "user@example.com", TokenName: "t"})
	if err != nil {
		t.Fatal(err)
	}

	changed := make(chan struct{}, 16)
	client := sdk.NewClient(&sdk.Implementation{Name: "modules-e2e", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: w.base + "/mcp",
		HTTPClient: &http.Client{Transport: jotsBearer{userToken}, Timeout: 30 * time.Second}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	hasTool := func(slug string) bool {
		t.Helper()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(res.Tools, func(tool *sdk.Tool) bool { return tool.Name == slug })
	}
	waitChanged := func() {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatal("no notifications/tools/list_changed")
		}
	}

	big := withCustomSection(servertest.EchoModule(t, "big", "1.0.0", "big_echo"), 5<<20) // over Fiber's 4 MiB body limit
	tests := []struct {
		name       string
		method     string
		path       string
		token      string
		body       []byte
		wantStatus int
		wantBody   string
		wantTool   bool // big_echo listed afterwards
	}{
		{"a user may not list", "GET", "/api/admin/modules", userToken, nil, 403, `"FORBIDDEN"`, false},
		// (A small body: the server refuses before reading, and may reset a big one.)
		{"a user may not upload", "POST", "/api/admin/modules", userToken, servertest.EchoModule(t, "big", "1.0.0", "big_echo"), 403, `"FORBIDDEN"`, false},
		{"no token", "GET", "/api/admin/modules", "", nil, 401, `"UNAUTHENTICATED"`, false},
		{"upload over the body limit", "POST", "/api/admin/modules", adminToken, big, 200, `"version":"1.0.0"`, true},
		{"listed", "GET", "/api/admin/modules", adminToken, nil, 200, `"name":"big"`, true},
		{"inspected", "GET", "/api/admin/modules/big", adminToken, nil, 200, `"source":"upload"`, true},
		{"unloaded", "POST", "/api/admin/modules/big/unload", adminToken, nil, 200, `"replaced":{"name":"big"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := adminRequest(t, w.base, tt.method, tt.path, tt.token, tt.body)
			if status != tt.wantStatus || !strings.Contains(string(body), tt.wantBody) {
				t.Fatalf("%d %.300s, want %d with %s", status, body, tt.wantStatus, tt.wantBody)
			}
			if tt.method == "POST" && status == 200 {
				waitChanged()
			}
			if got := hasTool("big_echo"); got != tt.wantTool {
				t.Errorf("big_echo listed = %v, want %v", got, tt.wantTool)
			}
		})
	}
	// /metrics (open: no METRICS_TOKEN) counts the admin routes by pattern.
	status, metrics := adminRequest(t, w.base, "GET", "/metrics", "", nil)
	if want := `workbench_http_requests_total{method="POST",route="/api/admin/modules/:name/unload",status="2xx"} 1`; status != 200 || !strings.Contains(string(metrics), want) {
		t.Errorf("/metrics: %d, lacks %s:\n%s", status, want, metrics)
	}
	var list struct {
		Modules []json.RawMessage `json:"modules"`
	}
	if _, body := adminRequest(t, w.base, "GET", "/api/admin/modules", adminToken, nil); json.Unmarshal(body, &list) != nil || len(list.Modules) != 0 {
		t.Errorf("modules after the unload: %s", body)
	}
}

// lastNoticeLine is the last line of the first-start notices: the admin's token.
func lastNoticeLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
