package newrelictest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/toolcall"
)

// refusingResolver refuses every lookup and remembers the names asked, so a
// test can prove where a plugin tried to go without any traffic leaving the
// machine.
type refusingResolver struct {
	mu    sync.Mutex
	hosts []string
}

func (r *refusingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts = append(r.hosts, host)
	return nil, &net.DNSError{Err: "lookups are refused in tests", Name: host, IsNotFound: true}
}

func (r *refusingResolver) asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.hosts)
}

// conformanceFixture loads conf-c.wasm with an upstream on loopback as its
// base URL.
type conformanceFixture struct {
	plugin   *runtime.Plugin
	upstream *httptest.Server
	logs     *plugintest.Logs
	resolver *refusingResolver

	mu      sync.Mutex
	methods []string
}

func newConformanceFixture(t testing.TB) *conformanceFixture {
	t.Helper()
	f := &conformanceFixture{logs: &plugintest.Logs{}, resolver: &refusingResolver{}}
	f.upstream = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.methods = append(f.methods, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		switch r.URL.Path {
		case "/hello":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "hello \"world\"\n\u00e9")
		case "/binary":
			_, _ = w.Write([]byte{'a', 0xff, 'b', 0x00})
		default:
			http.Error(w, "no such page", http.StatusNotFound)
		}
	}))
	t.Cleanup(f.upstream.Close)
	f.plugin = loadPlugin(t, buildConformance(t), hostOptions{
		settings: runtime.MapSettings{"conf-c": {"base_url": f.upstream.URL}},
		resolver: f.resolver,
		logs:     f.logs,
	})
	return f
}

func TestConformance_Manifest(t *testing.T) {
	f := newConformanceFixture(t)
	m := f.plugin.Manifest()
	if m.Name != "conf-c" || m.Auth.Mode != "none" || m.ABI != 1 {
		t.Errorf("manifest = %+v", m)
	}
	var slugs []string
	for _, tool := range m.Tools {
		slugs = append(slugs, tool.Slug)
	}
	want := []string{"conf_c_echo", "conf_c_fail", "conf_c_config", "conf_c_http", "conf_c_log", "conf_c_progress"}
	if !slices.Equal(slugs, want) {
		t.Errorf("tools = %v, want %v", slugs, want)
	}
}

func TestConformance_Echo(t *testing.T) {
	f := newConformanceFixture(t)
	tests := []struct {
		name, input, want string
	}{
		{"object", `{"a":1,"b":[true,null,"x\u00e9\ud83d\ude00"],"c":{"d":-1.5e3,"e":""}}`, `{"a":1,"b":[true,null,"xé😀"],"c":{"d":-1500,"e":""}}`},
		{"empty input", ``, `{}`},
		{"escapes", `{"s":"tab\there \"quoted\" \\ \u0001 \u2028"}`, `{"s":"tab\there \"quoted\" \\ \u0001 \u2028"}`},
		{"big integer keeps its digits", `{"n":12345678901234567890}`, `{"n":12345678901234567890}`},
		{"64 bytes", `{"payload":"0123456789012345678901234567890123456789012345"}`, `{"payload":"0123456789012345678901234567890123456789012345"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := plugintest.Call(f.plugin, userID, "conf_c_echo", tt.input, nil)
			if err != nil {
				t.Fatal(err)
			}
			if canonical(t, string(out)) != canonical(t, tt.want) {
				t.Errorf("echo(%s) = %s, want %s", tt.input, out, tt.want)
			}
			if tt.name == "big integer keeps its digits" && string(out) != tt.want {
				t.Errorf("echo(%s) = %s: number text changed", tt.input, out)
			}
		})
	}
}

func TestConformance_InputErrors(t *testing.T) {
	f := newConformanceFixture(t)
	tests := []struct {
		tool, input, wantMessage string
	}{
		{"conf_c_echo", `[1,2]`, "input must be an object, not array"},
		{"conf_c_echo", `"text"`, "input must be an object, not string"},
		{"conf_c_config", `{}`, "key: is required"},
		{"conf_c_config", `{"key":5}`, "key: must be a string, not number"},
		{"conf_c_http", `{"url":null}`, "url: must be a string, not null"},
	}
	for _, tt := range tests {
		out, err := plugintest.Call(f.plugin, userID, tt.tool, tt.input, nil)
		te := plugintest.AsToolError(t, out, err)
		if te.Code != "INVALID_ARGUMENTS" || te.Message != tt.wantMessage {
			t.Errorf("%s(%s) = %s %q, want INVALID_ARGUMENTS %q", tt.tool, tt.input, te.Code, te.Message, tt.wantMessage)
		}
	}
}

func TestConformance_Fail(t *testing.T) {
	f := newConformanceFixture(t)
	out, err := plugintest.Call(f.plugin, userID, "conf_c_fail", `{}`, nil)
	te := plugintest.AsToolError(t, out, err)
	if te.Code != "NOT_FOUND" || te.Message != "nothing here" || canonical(t, string(te.Details)) != `{"id":7}` {
		t.Errorf("fail = %+v (details %s)", te, te.Details)
	}
}

func TestConformance_Config(t *testing.T) {
	f := newConformanceFixture(t)
	tests := []struct {
		key, want string
	}{
		{"base_url", `{"value":"` + f.upstream.URL + `"}`},
		{"nope", `{"value":null}`},
		{"", `{"value":null}`},
	}
	for _, tt := range tests {
		out, err := plugintest.Call(f.plugin, userID, "conf_c_config", `{"key":"`+tt.key+`"}`, nil)
		if err != nil {
			t.Fatal(err)
		}
		if canonical(t, string(out)) != canonical(t, tt.want) {
			t.Errorf("config(%q) = %s, want %s", tt.key, out, tt.want)
		}
	}
}

func TestConformance_HTTP(t *testing.T) {
	f := newConformanceFixture(t)
	tests := []struct {
		path string
		want map[string]any
	}{
		{"/hello", map[string]any{"status": 200.0, "body": "hello \"world\"\n\u00e9"}},
		{"/missing", map[string]any{"status": 404.0, "body": "no such page\n"}},
		{"/binary", map[string]any{"status": 200.0, "body": "a\ufffdb\u0000"}},
	}
	for _, tt := range tests {
		out, err := plugintest.Call(f.plugin, userID, "conf_c_http", `{"url":"`+f.upstream.URL+tt.path+`"}`, nil)
		if err != nil {
			t.Fatalf("http %s: %v", tt.path, err)
		}
		if got := decode(t, out); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("http %s = %v, want %v", tt.path, got, tt.want)
		}
	}
	f.mu.Lock()
	methods := slices.Clone(f.methods)
	f.mu.Unlock()
	if !slices.Equal(methods, []string{"GET /hello", "GET /missing", "GET /binary"}) {
		t.Errorf("upstream saw %v", methods)
	}
}

func TestConformance_HTTPHostErrors(t *testing.T) {
	f := newConformanceFixture(t)
	tests := []struct {
		url, wantCode string
	}{
		{"https://example.com/", "EGRESS_DENIED"},
		{"ftp://example.com/", "INVALID_REQUEST"},
		{"not a url", "INVALID_REQUEST"},
	}
	for _, tt := range tests {
		out, err := plugintest.Call(f.plugin, userID, "conf_c_http", `{"url":"`+tt.url+`"}`, nil)
		te := plugintest.AsToolError(t, out, err)
		if string(te.Code) != tt.wantCode || te.Message == "" {
			t.Errorf("http %s = %s %q, want code %s", tt.url, te.Code, te.Message, tt.wantCode)
		}
	}
	if asked := f.resolver.asked(); len(asked) != 0 {
		t.Errorf("denied requests still resolved %v", asked)
	}
}

func TestConformance_Log(t *testing.T) {
	f := newConformanceFixture(t)
	out, err := plugintest.Call(f.plugin, userID, "conf_c_log", `{}`, nil)
	if err != nil || string(out) != `{}` {
		t.Fatalf("log = %s, %v", out, err)
	}
	if got := f.logs.Messages(slog.LevelInfo); !slices.Contains(got, "hello from c") {
		t.Errorf("info records = %q, want one %q", got, "hello from c")
	}
}

func TestConformance_Progress(t *testing.T) {
	f := newConformanceFixture(t)
	var got []toolcall.Progress
	out, err := plugintest.Call(f.plugin, userID, "conf_c_progress", `{}`, func(p toolcall.Progress) { got = append(got, p) })
	if err != nil || string(out) != `{}` {
		t.Fatalf("progress = %s, %v", out, err)
	}
	want := []toolcall.Progress{{Done: 1, Total: 2, Message: "half"}, {Done: 2, Total: 2, Message: "done"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("progress reports = %+v, want %+v", got, want)
	}
}

// TestConformance_InstanceReuse runs many calls on one warm instance: the
// per-call arena must give memory back, so the instance does not grow.
func TestConformance_InstanceReuse(t *testing.T) {
	f := newConformanceFixture(t)
	input := `{"blob":""}`
	bigInput := `{"blob":"` + strings.Repeat("x", 100<<10) + `"}`
	for i := 0; i < 3; i++ {
		if _, err := plugintest.Call(f.plugin, userID, "conf_c_echo", bigInput, nil); err != nil {
			t.Fatal(err)
		}
	}
	pages := f.plugin.Stats().MemoryPages
	for i := 0; i < 20; i++ {
		in := input
		if i%2 == 0 {
			in = bigInput
		}
		if _, err := plugintest.Call(f.plugin, userID, "conf_c_echo", in, nil); err != nil {
			t.Fatal(err)
		}
	}
	if after := f.plugin.Stats().MemoryPages; after != pages {
		t.Errorf("memory grew from %d to %d pages over 20 calls", pages, after)
	}
}
