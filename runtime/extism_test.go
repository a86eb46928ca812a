package runtime

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/credential"
)

// loadExtismEcho builds testdata/extismecho (an Extism Go PDK plugin) and
// loads it into a host with the given config.
func loadExtismEcho(t *testing.T, cfg Config) *Plugin {
	t.Helper()
	p, err := newTestHost(t, cfg).Load(context.Background(), goPlugin(t, filepath.Join("testdata", "extismecho")))
	if err != nil {
		t.Fatalf("load extismecho: %v", err)
	}
	return p
}

func TestHost_Load_extism(t *testing.T) {
	p := loadExtismEcho(t, Config{})
	m := p.Manifest()
	if m.Name != "extismecho" || p.ABI() != "extism" {
		t.Fatalf("name = %q, ABI = %q", m.Name, p.ABI())
	}
	// Its tools list like a native plugin's: manifest, limits and stats.
	var slugs []string
	for _, tool := range m.Tools {
		slugs = append(slugs, tool.Slug)
		if _, ok := p.ToolLimits(tool.Slug); !ok {
			t.Errorf("ToolLimits(%s) missing", tool.Slug)
		}
		if _, ok := p.Stats().Tools[tool.Slug]; !ok {
			t.Errorf("Stats().Tools[%s] missing", tool.Slug)
		}
	}
	if want := []string{"extismecho_echo", "extismecho_fail", "extismecho_http", "extismecho_native_http"}; !slices.Equal(slugs, want) {
		t.Fatalf("tools = %v, want %v", slugs, want)
	}
}

func TestPlugin_Call_extism(t *testing.T) {
	p := loadExtismEcho(t, Config{})
	tests := []struct {
		tool, user, input string
		want              string
		code              failure.Code
	}{
		{"extismecho_echo", "alice", `{"hello":"world"}`, `{"hello":"world"}`, ""},
		{"extismecho_echo", "bob", `[1,2,3]`, `[1,2,3]`, ""},
		{"extismecho_fail", "alice", `{}`, "", "NOT_FOUND"},
		{"extismecho_nope", "alice", `{}`, "", failure.UnknownTool},
		// The http tool is called without a connection: the host's error
		// object reaches the plugin, which passes it on.
		{"extismecho_http", "alice", `{"url":"https://api.example.com/"}`, "", failure.NotConnected},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.user, func(t *testing.T) {
			if tt.code == "" {
				if got := callOK(t, p, tt.tool, tt.user, tt.input); got != tt.want {
					t.Fatalf("%s = %s, want %s", tt.tool, got, tt.want)
				}
				return
			}
			if te := callErr(t, p, tt.tool, tt.user, tt.input); te.Code != tt.code {
				t.Fatalf("%s: code %s (%s), want %s", tt.tool, te.Code, te.Message, tt.code)
			}
		})
	}
	// Instances are pooled per user like a native plugin's.
	if s := p.Stats(); s.InstancesIdle != 2 || s.InstancesBusy != 0 || s.Calls != uint64(len(tests)) {
		t.Fatalf("stats = %+v; want 2 idle instances (alice, bob) and %d calls", s, len(tests))
	}
}

func TestPlugin_Call_extismHTTPInjectsCredential(t *testing.T) {
	api := newUpstream(t, func(w http.ResponseWriter, r *http.Request) bool {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1024))
		if r.Method != http.MethodPost || string(body) != "ping" || strings.Join(r.Header.Values("X-Api-Key"), ",") != "real-key" {
			http.Error(w, "bad request: "+r.Method+" "+string(body)+" "+strings.Join(r.Header.Values("X-Api-Key"), ","), http.StatusTeapot)
			return true
		}
		io.WriteString(w, "pong")
		return true
	})
	creds := credential.NewMemory()
	creds.Set("alice", "extismecho", &credential.Credential{Fields: map[string]string{"api_key": "real-key"}})
	base := "http://api.example.com:" + api.port()
	cfg := egressConfig(creds, MapSettings{"extismecho": {"base_url": base}}, fakeResolver{"api.example.com": "127.0.0.1"}, api)
	p := loadExtismEcho(t, cfg)

	in, _ := json.Marshal(map[string]string{"url": base + "/v1/ping"})
	out := callOK(t, p, "extismecho_http", "alice", string(in))
	var got struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != http.StatusOK || got.Body != "pong" {
		t.Fatalf("http tool = %s; want the upstream to see POST ping with the stored key, not the forged one", out)
	}
	// Egress policy applies: a host outside the manifest is refused before dialing.
	hits := api.hits.Load()
	in, _ = json.Marshal(map[string]string{"url": "http://other.example.com:" + api.port() + "/"})
	if te := callErr(t, p, "extismecho_http", "alice", string(in)); te.Code != "EGRESS_DENIED" || api.hits.Load() != hits {
		t.Fatalf("other host: %+v, upstream hits %d -> %d", te, hits, api.hits.Load())
	}
	// Extism's own http_request bypasses the address rules, so it may reach
	// nothing, not even a declared host.
	in, _ = json.Marshal(map[string]string{"url": base + "/v1/ping"})
	if te := callErr(t, p, "extismecho_native_http", "alice", string(in)); !strings.Contains(te.Message, "not allowed") || api.hits.Load() != hits {
		t.Fatalf("Extism's own http_request: %+v, upstream hits %d -> %d", te, hits, api.hits.Load())
	}
}

// asPlugin compiles testdata/extismas (an Extism AssemblyScript PDK plugin)
// with the asc that tools/test-deps.sh installed next to it.
func asPlugin(t *testing.T) []byte {
	t.Helper()
	dir := filepath.Join("testdata", "extismas")
	asc := filepath.Join("node_modules", ".bin", "asc")
	if _, err := os.Stat(filepath.Join(dir, asc)); err != nil {
		t.Fatalf("AssemblyScript compiler missing in %s (run make test, which installs it): %v", dir, err)
	}
	out := filepath.Join(t.TempDir(), "plugin.wasm")
	cmd := exec.Command(asc, filepath.Join("assembly", "index.ts"), "--config", "asconfig.json", "--outFile", out)
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", dir, err, msg)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

func TestPlugin_Call_extismAssemblyScript(t *testing.T) {
	p, err := newTestHost(t, Config{}).Load(context.Background(), asPlugin(t))
	if err != nil {
		t.Fatalf("load extismas: %v", err)
	}
	m := p.Manifest()
	var slugs []string
	for _, tool := range m.Tools {
		slugs = append(slugs, tool.Slug)
	}
	if want := []string{"extismas_echo", "extismas_fail"}; m.Name != "extismas" || !slices.Equal(slugs, want) {
		t.Fatalf("manifest %q with tools %v, want extismas with %v", m.Name, slugs, want)
	}
	tests := []struct {
		name, tool, input string
		want, message     string
		code              failure.Code
	}{
		{name: "echo", tool: "extismas_echo", input: `{"hello":"world"}`, want: `{"hello":"world"}`},
		// Longer than eight bytes and not a multiple of eight: the PDK copies
		// input in 8-byte words and then byte by byte.
		{name: "echo unaligned", tool: "extismas_echo", input: `{"list":[1,2,3],"text":"über"}`, want: `{"list":[1,2,3],"text":"über"}`},
		{name: "fail", tool: "extismas_fail", input: `{}`, code: "NOT_FOUND", message: "nothing here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.code == "" {
				if got := callOK(t, p, tt.tool, "alice", tt.input); got != tt.want {
					t.Fatalf("%s = %s, want %s", tt.tool, got, tt.want)
				}
				return
			}
			if te := callErr(t, p, tt.tool, "alice", tt.input); te.Code != tt.code || te.Message != tt.message {
				t.Fatalf("%s: %s (%s), want %s (%s)", tt.tool, te.Code, te.Message, tt.code, tt.message)
			}
		})
	}
}
