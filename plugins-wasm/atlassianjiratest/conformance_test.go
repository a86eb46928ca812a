package atlassianjiratest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/toolcall"
)

// conformanceDir is the Rust PDK's conformance plugin; it is built by
// tools/build-plugins.sh (which needs Debian's rustc, installed by
// tools/test-deps.sh) the first time a test needs it.
const conformanceDir = "../../pdk/rust/conformance"

var (
	confOnce  sync.Once
	confBytes []byte
	confErr   error
)

func conformanceWasm(t testing.TB) []byte {
	t.Helper()
	confOnce.Do(func() {
		cmd := exec.Command("bash", "../../tools/build-plugins.sh", "pdk/rust/conformance")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			confErr = fmt.Errorf("building %s: %v\n%s(run make test-deps to install the Rust toolchain)", conformanceDir, err, out.String())
			return
		}
		confBytes, confErr = os.ReadFile(filepath.Join(conformanceDir, "conformance.wasm"))
	})
	if confErr != nil {
		t.Fatal(confErr)
	}
	return confBytes
}

// confFixture is the conformance plugin loaded with a local upstream as
// its base URL.
type confFixture struct {
	plugin   *runtime.Plugin
	logs     *plugintest.Logs
	upstream *httptest.Server
}

func newConfFixture(t testing.TB) *confFixture {
	t.Helper()
	c := &confFixture{logs: &plugintest.Logs{}}
	c.upstream = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/teapot":
			w.WriteHeader(http.StatusTeapot)
			_, _ = io.WriteString(w, "short and stout")
		case "/binary":
			_, _ = w.Write([]byte{'o', 'k', 0xff, '!'})
		default:
			_, _ = io.WriteString(w, "hello from upstream "+r.Method)
		}
	}))
	t.Cleanup(c.upstream.Close)
	c.plugin = plugintest.Load(t, conformanceWasm(t), plugintest.HostConfig{
		CacheDir: cacheDir,
		Egress:   egress.Options{AllowPrivate: true},
		Settings: runtime.MapSettings{"conf-rust": {"base_url": c.upstream.URL}},
		Logger:   slog.New(c.logs),
	})
	return c
}

func (c *confFixture) call(tool, input string, progress func(toolcall.Progress)) (json.RawMessage, error) {
	return plugintest.Call(c.plugin, userID, tool, input, progress)
}

func TestConformance_Manifest(t *testing.T) {
	m := newConfFixture(t).plugin.Manifest()
	var slugs []string
	for _, tool := range m.Tools {
		slugs = append(slugs, tool.Slug)
	}
	want := []string{"conf_rust_echo", "conf_rust_fail", "conf_rust_config", "conf_rust_http", "conf_rust_log", "conf_rust_progress"}
	if m.Name != "conf-rust" || m.Auth.Mode != "none" || !slices.Equal(slugs, want) {
		t.Errorf("manifest = %s %s %v", m.Name, m.Auth.Mode, slugs)
	}
}

func TestConformance_Results(t *testing.T) {
	c := newConfFixture(t)
	// The deepest nesting the parser accepts; it must fit the plugin's stack.
	deep := strings.Repeat(`{"a":`, 512) + "1" + strings.Repeat("}", 512)
	tests := []struct {
		name, tool, input, want string
	}{
		{"echo", "conf_rust_echo", `{"s":"é\u2028\"\\","n":[1,-2.5e3,12345678901234567890],"o":{"t":true,"f":false,"z":null}}`,
			`{"s":"é\u2028\"\\","n":[1,-2.5e3,12345678901234567890],"o":{"t":true,"f":false,"z":null}}`},
		{"echo of no input", "conf_rust_echo", ``, `{}`},
		{"echo of deep nesting", "conf_rust_echo", deep, deep},
		{"config base_url", "conf_rust_config", `{"key":"base_url"}`, `{"value":"` + c.upstream.URL + `"}`},
		{"config unset", "conf_rust_config", `{"key":"region"}`, `{"value":null}`},
		{"http", "conf_rust_http", `{"url":"` + c.upstream.URL + `/hello"}`, `{"status":200,"body":"hello from upstream GET"}`},
		{"http 4xx is a result", "conf_rust_http", `{"url":"` + c.upstream.URL + `/teapot"}`, `{"status":418,"body":"short and stout"}`},
		{"http body that is not UTF-8", "conf_rust_http", `{"url":"` + c.upstream.URL + `/binary"}`, "{\"status\":200,\"body\":\"ok\ufffd!\"}"},
		{"log", "conf_rust_log", `{}`, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := c.call(tt.tool, tt.input, nil)
			if err != nil {
				t.Fatalf("%s: %v", tt.tool, err)
			}
			if !bytes.Equal(compactJSON(t, out), compactJSON(t, []byte(tt.want))) {
				t.Errorf("%s = %s\nwant %s", tt.tool, out, tt.want)
			}
		})
	}
	if got := c.logs.Messages(slog.LevelInfo); !slices.Contains(got, "hello from rust") {
		t.Errorf("info logs = %q, want hello from rust", got)
	}
}

// compactJSON removes insignificant space but keeps numbers and escapes as
// written, so the comparison shows what the plugin serialized.
func compactJSON(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("not JSON: %s: %v", b, err)
	}
	return buf.Bytes()
}

func TestConformance_Errors(t *testing.T) {
	c := newConfFixture(t)
	tests := []struct {
		name, tool, input, code, message, details string
	}{
		{"fail", "conf_rust_fail", `{}`, "NOT_FOUND", "nothing here", `{"id":7}`},
		{"egress denied is passed on", "conf_rust_http", `{"url":"https://example.com/"}`, "EGRESS_DENIED", "https://example.com", ""},
		{"invalid request is passed on", "conf_rust_http", `{"url":"ftp://x"}`, "INVALID_REQUEST", "", ""},
		{"missing field", "conf_rust_config", `{}`, "INVALID_ARGUMENTS", `missing required field "key"`, `{"field":"key"}`},
		{"wrong type", "conf_rust_http", `{"url":5}`, "INVALID_ARGUMENTS", `field "url": expected string, got integer`, `{"field":"url"}`},
		{"echo of a non-object", "conf_rust_echo", `[1]`, "INVALID_ARGUMENTS", "the input must be an object, not an array", ""},
		{"nesting over the parser's limit", "conf_rust_echo", strings.Repeat("[", 600) + strings.Repeat("]", 600), "INVALID_ARGUMENTS", "nesting is deeper than the limit", ""},
		{"unknown tool", "conf_rust_nope", `{}`, "UNKNOWN_TOOL", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := c.call(tt.tool, tt.input, nil)
			var te *failure.Error
			if !errors.As(err, &te) {
				t.Fatalf("%s = %s, %v; want a tool error", tt.tool, out, err)
			}
			if string(te.Code) != tt.code || !strings.Contains(te.Message, tt.message) {
				t.Errorf("error = %s: %s, want %s containing %q", te.Code, te.Message, tt.code, tt.message)
			}
			if tt.details != "" && !bytes.Equal(compactJSON(t, te.Details), []byte(tt.details)) {
				t.Errorf("details = %s, want %s", te.Details, tt.details)
			}
		})
	}
	// None of these may have cost the plugin its instance: a trap would.
	if st := c.plugin.Stats(); st.ErrorsByCode["TRAP"] != 0 {
		t.Errorf("traps: %v", st.ErrorsByCode)
	}
}

func TestConformance_Progress(t *testing.T) {
	c := newConfFixture(t)
	var mu sync.Mutex
	var got []toolcall.Progress
	out, err := c.call("conf_rust_progress", `{}`, func(p toolcall.Progress) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
	})
	if err != nil || string(out) != `{}` {
		t.Fatalf("progress = %s, %v", out, err)
	}
	want := []toolcall.Progress{{Done: 1, Total: 2, Message: "half"}, {Done: 2, Total: 2, Message: "done"}}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("progress reports = %+v, want %+v", got, want)
	}
}

// TestConformance_Hammer runs concurrent calls as several users, under
// -race, to show instances and their input buffers are not shared.
func TestConformance_Hammer(t *testing.T) {
	c := newConfFixture(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				in := fmt.Sprintf(`{"g":%d,"i":%d,"pad":"%s"}`, g, i, strings.Repeat("x", i*37))
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				out, err := c.plugin.Call(ctx, toolcall.Call{Tool: "conf_rust_echo", UserID: fmt.Sprintf("user-%d", g%3), Input: []byte(in)})
				cancel()
				if err != nil || string(out) != in {
					errs <- fmt.Errorf("echo %s = %s, %v", in, out, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
