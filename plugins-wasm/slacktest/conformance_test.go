package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/toolcall"
)

// conformanceEntry is the AssemblyScript kit's conformance plugin.
const conformanceEntry = "conformance/assembly/index.ts"

// confFixture is the conformance plugin loaded with a local upstream as
// its base URL.
type confFixture struct {
	plugin   *runtime.Plugin
	upstream *httptest.Server
	logs     *plugintest.Logs
}

func newConfFixture(t testing.TB) *confFixture {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hello":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprint(w, "hello, \u00e9t\u00e9 \U0001F600")
		default:
			http.Error(w, "no such page", http.StatusNotFound)
		}
	}))
	t.Cleanup(up.Close)
	u, _ := url.Parse(up.URL)
	f := &confFixture{upstream: up, logs: &plugintest.Logs{}}
	f.plugin = plugintest.Load(t, buildAS(t, conformanceEntry), plugintest.HostConfig{
		CacheDir: cacheDir,
		Egress:   loopbackEgress(t, newLoopbackResolver(), u.Port()),
		Settings: runtime.MapSettings{"conf-assemblyscript": {"base_url": up.URL}},
		Logger:   slog.New(f.logs),
	})
	return f
}

func (f *confFixture) call(tool, input string, progress func(toolcall.Progress)) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return f.plugin.Call(ctx, toolcall.Call{Tool: "conf_assemblyscript_" + tool, UserID: "u1", Input: []byte(input), Progress: progress})
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

func TestConformance_Manifest(t *testing.T) {
	m := newConfFixture(t).plugin.Manifest()
	var slugs []string
	for _, tool := range m.Tools {
		slugs = append(slugs, tool.Slug)
		if !tool.Annotations.ReadOnly || tool.Annotations.Destructive {
			t.Errorf("%s annotations = %+v, want read-only", tool.Slug, tool.Annotations)
		}
	}
	want := []string{"echo", "fail", "config", "http", "log", "progress"}
	for i := range want {
		want[i] = "conf_assemblyscript_" + want[i]
	}
	if m.Name != "conf-assemblyscript" || m.Auth.Mode != "none" || !reflect.DeepEqual(slugs, want) {
		t.Errorf("manifest %s auth %s tools %v, want conf-assemblyscript, none, %v", m.Name, m.Auth.Mode, slugs, want)
	}
}

func TestConformance_Echo(t *testing.T) {
	f := newConfFixture(t)
	tests := []struct {
		name, input, want string
	}{
		{"64 bytes", string(payload64), string(payload64)},
		{"empty input", "", "{}"},
		{"unicode and escapes", `{"s":"\u00e9\ud83d\ude00\n\"q\"","n":[1.50,-0,1e3],"o":{}}`, `{"s":"\u00e9\ud83d\ude00\n\"q\"","n":[1.50,-0,1e3],"o":{}}`},
		{"whitespace kept", "{ \"a\" : [ 1 , 2 ] }", "{ \"a\" : [ 1 , 2 ] }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := f.call("echo", tt.input, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, out, []byte(tt.want)) {
				t.Errorf("echo(%s) = %s, want %s", tt.input, out, tt.want)
			}
		})
	}
	t.Run("not an object", func(t *testing.T) {
		_, err := f.call("echo", `[1,2]`, nil)
		var te *failure.Error
		if !errors.As(err, &te) || te.Code != "INVALID_ARGUMENTS" || !strings.Contains(te.Message, "must be an object, not an array") {
			t.Errorf("echo([1,2]) error = %v, want INVALID_ARGUMENTS about the type", err)
		}
	})
}

func TestConformance_Fail(t *testing.T) {
	_, err := newConfFixture(t).call("fail", "{}", nil)
	var te *failure.Error
	if !errors.As(err, &te) {
		t.Fatalf("fail() = %v, want a tool error", err)
	}
	if te.Code != "NOT_FOUND" || te.Message != "nothing here" || !jsonEqual(t, te.Details, []byte(`{"id":7}`)) {
		t.Errorf("fail() = %s %q %s", te.Code, te.Message, te.Details)
	}
}

func TestConformance_Config(t *testing.T) {
	f := newConfFixture(t)
	tests := []struct {
		input, want string
	}{
		{`{"key":"base_url"}`, fmt.Sprintf(`{"value":%q}`, f.upstream.URL)},
		{`{"key":"no_such_setting"}`, `{"value":null}`},
	}
	for _, tt := range tests {
		out, err := f.call("config", tt.input, nil)
		if err != nil {
			t.Fatalf("config(%s): %v", tt.input, err)
		}
		if !jsonEqual(t, out, []byte(tt.want)) {
			t.Errorf("config(%s) = %s, want %s", tt.input, out, tt.want)
		}
	}
	_, err := f.call("config", `{"key":7}`, nil)
	var te *failure.Error
	if !errors.As(err, &te) || te.Code != "INVALID_ARGUMENTS" || !jsonEqual(t, te.Details, []byte(`{"field":"key"}`)) {
		t.Errorf("config({key:7}) error = %v, want INVALID_ARGUMENTS naming key", err)
	}
}

func TestConformance_HTTP(t *testing.T) {
	f := newConfFixture(t)
	tests := []struct {
		name, url, want, wantCode string
	}{
		{"ok", f.upstream.URL + "/hello", `{"status":200,"body":"hello, \u00e9t\u00e9 \U0001F600"}`, ""},
		{"upstream 404 is a response", f.upstream.URL + "/missing", `{"status":404,"body":"no such page\n"}`, ""},
		{"host not allowed", "https://example.com/", "", "EGRESS_DENIED"},
		{"loopback on another port", "http://127.0.0.1:1/", "", "EGRESS_DENIED"},
		{"not a URL", "::nope", "", "INVALID_REQUEST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := json.Marshal(map[string]string{"url": tt.url})
			out, err := f.call("http", string(in), nil)
			if tt.wantCode != "" {
				var te *failure.Error
				if !errors.As(err, &te) || string(te.Code) != tt.wantCode {
					t.Errorf("http(%s) = %s, %v; want %s", tt.url, out, err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(tt.want, `\U0001F600`, "\U0001F600")
			if !jsonEqual(t, out, []byte(want)) {
				t.Errorf("http(%s) = %s, want %s", tt.url, out, want)
			}
		})
	}
}

func TestConformance_Log(t *testing.T) {
	f := newConfFixture(t)
	out, err := f.call("log", "{}", nil)
	if err != nil || string(out) != "{}" {
		t.Fatalf("log() = %s, %v", out, err)
	}
	if got := f.logs.Messages(slog.LevelInfo); !slices.Contains(got, "hello from assemblyscript") {
		t.Errorf("info logs = %q, want hello from assemblyscript", got)
	}
}

func TestConformance_Progress(t *testing.T) {
	var got []toolcall.Progress
	out, err := newConfFixture(t).call("progress", "{}", func(p toolcall.Progress) { got = append(got, p) })
	if err != nil || string(out) != "{}" {
		t.Fatalf("progress() = %s, %v", out, err)
	}
	want := []toolcall.Progress{{Done: 1, Total: 2, Message: "half"}, {Done: 2, Total: 2, Message: "done"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("progress reports = %+v, want %+v", got, want)
	}
}

// TestConformance_MemoryStaysFlat checks that the kit frees each call's
// garbage: once warm, a thousand more calls on one instance must not grow
// its memory.
func TestConformance_MemoryStaysFlat(t *testing.T) {
	f := newConfFixture(t)
	big := `{"items":[` + strings.Repeat(`{"name":"x\u00e9","n":12345},`, 300) + `{}]}`
	echo := func(n int) {
		for i := 0; i < n; i++ {
			if _, err := f.call("echo", big, nil); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
	}
	echo(100)
	before := f.plugin.Stats().MemoryPages
	echo(1000)
	after := f.plugin.Stats().MemoryPages
	t.Logf("memory: %d pages after 100 calls, %d after 1100", before, after)
	if after > before {
		t.Errorf("memory grew from %d to %d pages over 1000 warm calls", before, after)
	}
	if after > 64 {
		t.Errorf("a warm instance holds %d pages (%d KiB) for 9 KiB inputs", after, after*64)
	}
}
