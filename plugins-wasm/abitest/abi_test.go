package abitest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/toolcall"
)

// callTimeout bounds one tool call.
const callTimeout = 20 * time.Second

// cacheDir is the compilation cache the hosts of the test binary share.
var cacheDir string

func TestMain(m *testing.M) {
	var err error
	if cacheDir, err = os.MkdirTemp("", "abitest-cache-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(cacheDir)
	os.Exit(code)
}

// logRecords keeps the level and message of every record logged through
// the host's logger.
type logRecords struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r)
	return nil
}

func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// take returns the messages logged at level, oldest first, and forgets
// every record.
func (l *logRecords) take(level slog.Level) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.records {
		if r.Level == level {
			out = append(out, r.Message)
		}
	}
	l.records = nil
	return out
}

// fixture is the four conformance plugins loaded into one host whose
// egress client may reach loopback, and into a second host that refuses
// private addresses as production does.
type fixture struct {
	upstream *httptest.Server
	logs     *logRecords
	plugins  map[string]*runtime.Plugin // by language, AllowPrivate host
	strict   map[string]*runtime.Plugin // by language, production egress rules

	mu       sync.Mutex
	requests []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	wasm := buildAll(t)
	f := &fixture{logs: &logRecords{}}
	f.upstream = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		switch r.URL.Path {
		case "/hello":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "hello \"world\"\n\u00e9t\u00e9 \U0001F600")
		case "/binary":
			_, _ = w.Write([]byte{'a', 0xff, 'b', 0x00})
		default:
			http.Error(w, "no such page", http.StatusNotFound)
		}
	}))
	t.Cleanup(f.upstream.Close)
	settings, strict := runtime.MapSettings{}, runtime.MapSettings{}
	for _, l := range languages {
		// region is configured but declared by no conformance plugin.
		settings[l.integration()] = map[string]string{"base_url": f.upstream.URL, "region": "eu"}
		// Under production rules an operator's base URL is exempt from
		// the private-address rule for its integration, so the strict host
		// has none: the upstream is just some private address to it.
		strict[l.integration()] = map[string]string{"region": "eu"}
	}
	f.plugins = loadAll(t, wasm, newHost(t, egress.Options{AllowPrivate: true}, settings, slog.New(f.logs)))
	f.strict = loadAll(t, wasm, newHost(t, egress.Options{}, strict, slog.New(slog.NewTextHandler(io.Discard, nil))))
	return f
}

func newHost(t *testing.T, opts egress.Options, settings runtime.MapSettings, logger *slog.Logger) *runtime.Host {
	t.Helper()
	client := egress.NewClient(opts)
	t.Cleanup(client.Close)
	host, err := runtime.NewHost(context.Background(), runtime.Config{
		CacheDir:    cacheDir,
		Credentials: credential.NewMemory(),
		Egress:      client,
		Settings:    settings,
		Logger:      logger,
	})
	if err != nil {
		t.Fatalf("new host: %v", err)
	}
	t.Cleanup(func() { host.Close(context.Background()) })
	return host
}

func loadAll(t *testing.T, wasm map[string][]byte, host *runtime.Host) map[string]*runtime.Plugin {
	t.Helper()
	out := map[string]*runtime.Plugin{}
	for _, l := range languages {
		p, err := host.Load(context.Background(), wasm[l.name])
		if err != nil {
			t.Fatalf("load %s: %v", l.integration(), err)
		}
		out[l.name] = p
	}
	return out
}

// takeRequests returns the requests the upstream received and forgets them.
func (f *fixture) takeRequests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.requests
	f.requests = nil
	return r
}

// anonymize replaces the language's name, as a whole word, by <lang>.
func (l language) anonymize(s string) string {
	return regexp.MustCompile(`\b`+regexp.QuoteMeta(l.name)+`\b`).ReplaceAllLiteralString(s, "<lang>")
}

// outcome is a call's result normalized for comparison across languages:
// JSON decoded into Go values, and the language's name in messages replaced
// by <lang>.
type outcome struct {
	Output  any
	Code    string
	Message string
	Details any
}

// call runs tool short of language l on p with input and normalizes the
// outcome. A failure other than a *failure.Error fails the test.
func call(t *testing.T, p *runtime.Plugin, l language, short, input string, progress func(toolcall.Progress)) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	raw, err := p.Call(ctx, toolcall.Call{Tool: l.tool(short), UserID: "u1", Input: []byte(input), Progress: progress})
	if err != nil {
		var te *failure.Error
		if !errors.As(err, &te) {
			t.Fatalf("%s(%s): %v, want a result or a *failure.Error", l.tool(short), input, err)
		}
		o := outcome{Code: string(te.Code), Message: l.anonymize(te.Message)}
		if len(te.Details) > 0 {
			o.Details = decode(t, te.Details)
		}
		return o
	}
	return outcome{Output: decode(t, raw)}
}

// decode decodes JSON text, failing the test on invalid JSON.
func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %q: %v", b, err)
	}
	return v
}

// mustDecode decodes JSON text written in a test table.
func mustDecode(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic("bad JSON in a test table: " + s)
	}
	return v
}

// ok is the outcome of a call that returned the JSON text out.
func ok(out string) outcome { return outcome{Output: mustDecode(out)} }

// failed is the outcome of a call that failed with code and message.
func failed(code, message, details string) outcome {
	o := outcome{Code: code, Message: message}
	if details != "" {
		o.Details = mustDecode(details)
	}
	return o
}

// TestConformance_SameOutcome runs each case against every language and
// wants the same normalized outcome from all four.
func TestConformance_SameOutcome(t *testing.T) {
	f := newFixture(t)
	base := f.upstream.URL
	tests := []struct {
		name, tool, input string
		want              outcome
		requests          []string // what the upstream must have received per call
	}{
		{
			name: "echo nested unicode and escapes", tool: "echo",
			input: `{"a":1,"b":[true,null,"x\u00e9\ud83d\ude00"],"c":{"d":-1.5e3,"e":"","f":{"g":[[],{}]}},` +
				`"s":"tab\there \"quoted\" \\ \/ \u0001 \u2028 </script>","\u00fcml":"\u65e5\u672c"}`,
			want: ok(`{"a":1,"b":[true,null,"xé😀"],"c":{"d":-1500,"e":"","f":{"g":[[],{}]}},` +
				`"s":"tab\there \"quoted\" \\ / \u0001 \u2028 </script>","üml":"日本"}`),
		},
		{name: "echo empty input", tool: "echo", input: ``, want: ok(`{}`)},
		{name: "echo empty object", tool: "echo", input: ` {} `, want: ok(`{}`)},
		{name: "fail", tool: "fail", input: `{}`, want: failed("NOT_FOUND", "nothing here", `{"id":7}`)},
		{name: "config base_url", tool: "config", input: `{"key":"base_url"}`, want: ok(`{"value":"` + base + `"}`)},
		{name: "config undeclared setting", tool: "config", input: `{"key":"region"}`, want: ok(`{"value":null}`)},
		{name: "config missing key", tool: "config", input: `{"key":"no_such_setting"}`, want: ok(`{"value":null}`)},
		{name: "config empty key", tool: "config", input: `{"key":""}`, want: ok(`{"value":null}`)},
		{
			name: "http text", tool: "http", input: `{"url":"` + base + `/hello"}`,
			want:     ok(`{"status":200,"body":"hello \"world\"\n\u00e9t\u00e9 \ud83d\ude00"}`),
			requests: []string{"GET /hello"},
		},
		{
			name: "http 404 is a result", tool: "http", input: `{"url":"` + base + `/missing"}`,
			want:     ok(`{"status":404,"body":"no such page\n"}`),
			requests: []string{"GET /missing"},
		},
		{
			name: "http invalid UTF-8 body", tool: "http", input: `{"url":"` + base + `/binary"}`,
			want:     ok(`{"status":200,"body":"a\ufffdb\u0000"}`),
			requests: []string{"GET /binary"},
		},
		{name: "log", tool: "log", input: `{}`, want: ok(`{}`)},
		{name: "progress", tool: "progress", input: `{}`, want: ok(`{}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, l := range languages {
				got := call(t, f.plugins[l.name], l, tt.tool, tt.input, nil)
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: %s(%s) = %+v, want %+v", l.name, l.tool(tt.tool), tt.input, got, tt.want)
				}
				if reqs := f.takeRequests(); !slices.Equal(reqs, tt.requests) {
					t.Errorf("%s: upstream received %v, want %v", l.name, reqs, tt.requests)
				}
			}
		})
	}
}

// TestConformance_HostErrors checks that an http_request failure reaches
// the agent as the tool's error with the host's code in every language,
// and that nothing was sent.
func TestConformance_HostErrors(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name, url, wantCode string
		strict              bool // call through the host that refuses private addresses
	}{
		{"private address refused", f.upstream.URL + "/hello", "EGRESS_DENIED", true},
		{"private literal refused", "http://10.0.0.1/", "EGRESS_DENIED", true},
		{"unsupported scheme", "ftp://127.0.0.1/", "INVALID_REQUEST", false},
		{"not a URL", "not a url", "INVALID_REQUEST", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var first outcome
			for i, l := range languages {
				p := f.plugins[l.name]
				if tt.strict {
					p = f.strict[l.name]
				}
				got := call(t, p, l, "http", `{"url":"`+tt.url+`"}`, nil)
				if got.Code != tt.wantCode || got.Message == "" || got.Output != nil {
					t.Errorf("%s: http %s = %+v, want code %s with a message", l.name, tt.url, got, tt.wantCode)
				}
				if i == 0 {
					first = got
				} else if !reflect.DeepEqual(got, first) {
					t.Errorf("%s: http %s = %+v, but %s gave %+v", l.name, tt.url, got, languages[0].name, first)
				}
			}
			if reqs := f.takeRequests(); len(reqs) != 0 {
				t.Errorf("refused requests reached the upstream: %v", reqs)
			}
		})
	}
}

// TestConformance_Log checks that every language's log line reaches the
// host's logger at info level with the same text.
func TestConformance_Log(t *testing.T) {
	f := newFixture(t)
	f.logs.take(slog.LevelInfo) // drop what loading logged
	for _, l := range languages {
		if got := call(t, f.plugins[l.name], l, "log", `{}`, nil); !reflect.DeepEqual(got, ok(`{}`)) {
			t.Errorf("%s: log = %+v, want {}", l.name, got)
		}
		msgs := f.logs.take(slog.LevelInfo)
		for i := range msgs {
			msgs[i] = l.anonymize(msgs[i])
		}
		if want := []string{"hello from <lang>"}; !slices.Equal(msgs, want) {
			t.Errorf("%s: info records = %q, want %q", l.name, msgs, want)
		}
	}
}

// TestConformance_Progress checks that every language reports the same
// progress through toolcall.Call.Progress.
func TestConformance_Progress(t *testing.T) {
	f := newFixture(t)
	want := []toolcall.Progress{{Done: 1, Total: 2, Message: "half"}, {Done: 2, Total: 2, Message: "done"}}
	for _, l := range languages {
		var mu sync.Mutex
		var got []toolcall.Progress
		out := call(t, f.plugins[l.name], l, "progress", `{}`, func(p toolcall.Progress) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, p)
		})
		if !reflect.DeepEqual(out, ok(`{}`)) {
			t.Errorf("%s: progress = %+v, want {}", l.name, out)
		}
		mu.Lock()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: progress reports = %+v, want %+v", l.name, got, want)
		}
		mu.Unlock()
	}
}

// TestConformance_InvalidInput checks that input a tool cannot take is
// INVALID_ARGUMENTS in every language. Input that is not JSON is refused
// by the host before any plugin runs, so its message is the same
// everywhere; the kits word their own refusals differently (and C gives no
// details), so each language's message is asserted as that kit words it.
func TestConformance_InvalidInput(t *testing.T) {
	f := newFixture(t)
	const inv = "INVALID_ARGUMENTS"
	fieldKey := `{"field":"key"}`
	tests := []struct {
		name, tool, input string
		want              map[string]outcome // by language
	}{
		{
			name: "array instead of object", tool: "echo", input: `[1,2]`,
			want: map[string]outcome{
				"go":             failed(inv, "the input must be a JSON object, not an array", ""),
				"c":              failed(inv, "input must be an object, not array", ""),
				"rust":           failed(inv, "the input must be an object, not an array", ""),
				"assemblyscript": failed(inv, "the input must be an object, not an array", ""),
			},
		},
		{
			name: "string instead of object", tool: "echo", input: `"text"`,
			want: map[string]outcome{
				"go":             failed(inv, "the input must be a JSON object, not a string", ""),
				"c":              failed(inv, "input must be an object, not string", ""),
				"rust":           failed(inv, "the input must be an object, not a string", ""),
				"assemblyscript": failed(inv, "the input must be an object, not a string", ""),
			},
		},
		{
			name: "missing required field", tool: "config", input: `{}`,
			want: map[string]outcome{
				"go":             failed(inv, `missing required field "key"`, fieldKey),
				"c":              failed(inv, "key: is required", ""),
				"rust":           failed(inv, `missing required field "key"`, fieldKey),
				"assemblyscript": failed(inv, `field "key": is required`, fieldKey),
			},
		},
		{
			name: "field of the wrong type", tool: "config", input: `{"key":5}`,
			want: map[string]outcome{
				"go":             failed(inv, `field "key": expected string, got integer`, fieldKey),
				"c":              failed(inv, "key: must be a string, not number", ""),
				"rust":           failed(inv, `field "key": expected string, got integer`, fieldKey),
				"assemblyscript": failed(inv, `field "key": must be a string, not a number`, fieldKey),
			},
		},
		{
			name: "not JSON", tool: "echo", input: `{"a":`,
			want: map[string]outcome{
				"go":             failed(inv, "input is not valid JSON", ""),
				"c":              failed(inv, "input is not valid JSON", ""),
				"rust":           failed(inv, "input is not valid JSON", ""),
				"assemblyscript": failed(inv, "input is not valid JSON", ""),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, l := range languages {
				want, listed := tt.want[l.name]
				if !listed {
					t.Fatalf("no outcome listed for %s", l.name)
				}
				if got := call(t, f.plugins[l.name], l, tt.tool, tt.input, nil); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %s(%s) = %+v, want %+v", l.name, l.tool(tt.tool), tt.input, got, want)
				}
			}
			if reqs := f.takeRequests(); len(reqs) != 0 {
				t.Errorf("refused input reached the upstream: %v", reqs)
			}
		})
	}
}

// TestConformance_Manifest checks that the four plugins declare the same
// tools, in the same order, under their own prefix.
func TestConformance_Manifest(t *testing.T) {
	f := newFixture(t)
	for _, l := range languages {
		m := f.plugins[l.name].Manifest()
		var slugs []string
		for _, tool := range m.Tools {
			slugs = append(slugs, tool.Slug)
		}
		var want []string
		for _, short := range []string{"echo", "fail", "config", "http", "log", "progress"} {
			want = append(want, l.tool(short))
		}
		if m.Name != l.integration() || m.Auth.Mode != "none" || m.ABI != 1 || !slices.Equal(slugs, want) {
			t.Errorf("%s: manifest %s auth %s abi %d tools %v, want %s none 1 %v", l.name, m.Name, m.Auth.Mode, m.ABI, slugs, l.integration(), want)
		}
	}
}

// TestConformance_EchoNumberText checks what echo does to the text of
// numbers a float64 cannot hold. The C, Rust and AssemblyScript kits hand
// the input's JSON back as written; the Go kit decodes an open object into
// map[string]any, so the value comes back as the nearest float64 (and the
// keys sorted). Both are the same JSON value to a float64 reader, which is
// what TestConformance_SameOutcome compares.
func TestConformance_EchoNumberText(t *testing.T) {
	f := newFixture(t)
	const input = `{"n":12345678901234567890,"a":1.50}`
	want := map[string]string{
		"go":             `{"a":1.5,"n":12345678901234567000}`,
		"c":              `{"n":12345678901234567890,"a":1.50}`,
		"rust":           `{"n":12345678901234567890,"a":1.50}`,
		"assemblyscript": `{"n":12345678901234567890,"a":1.50}`,
	}
	for _, l := range languages {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		out, err := f.plugins[l.name].Call(ctx, toolcall.Call{Tool: l.tool("echo"), UserID: "u1", Input: []byte(input)})
		cancel()
		if err != nil {
			t.Fatalf("%s: echo(%s): %v", l.name, input, err)
		}
		if string(out) != want[l.name] {
			t.Errorf("%s: echo(%s) = %s, want %s", l.name, input, out, want[l.name])
		}
	}
}
