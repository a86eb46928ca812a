package modules

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/httpapi"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/server/servertest"
	"github.com/workbench-dev/workbench/toolcall"
)

// counter is a Refresher that counts refreshes.
type counter struct{ n atomic.Int32 }

func (c *counter) Refresh() { c.n.Add(1) }

// callers knows the API tokens "root" (an admin) and "alice" (a user).
type callers struct{}

func (callers) Bearer(_ context.Context, token string) (httpapi.Caller, error) {
	switch token {
	case "root":
		return httpapi.Caller{UserID: "usr_root", Email: "root@example.com", Admin: true}, nil
	case "alice":
		return httpapi.Caller{UserID: "usr_alice", Email: "alice@example.com"}, nil
	}
	return httpapi.Caller{}, failure.ErrUnauthenticated
}

func (callers) Session(context.Context, string) (httpapi.Caller, string, error) {
	return httpapi.Caller{}, "", failure.ErrUnauthenticated
}

func (callers) SessionCookie() string { return "wb_session" }

// nativeNotes is a native integration that answers nothing.
type nativeNotes struct{}

func (nativeNotes) Call(context.Context, toolcall.Call) (json.RawMessage, error) { return nil, nil }

// fixture is a service over a real registry and runtime host, with the
// plugin "alpha" loaded from dir/alpha.wasm, a broken file beside it, and
// the native integration "notes".
type fixture struct {
	svc       *Service
	reg       *registry.Registry
	app       *fiber.App
	refreshed *counter
	loading   atomic.Bool
	dir       string
	alphaPath string
}

const testUploadLimit = 64 << 10

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	host, err := runtime.NewHost(ctx, runtime.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close(ctx) })
	m, err := manifest.Parse([]byte(`{"abi":1,"name":"notes","version":"1.0.0","description":"Notes.","auth":{"mode":"none"},` +
		`"tools":[{"slug":"notes_add","description":"Adds a note.","inputSchema":{"type":"object"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(nil, registry.Native(m, nativeNotes{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	f := &fixture{reg: reg, refreshed: &counter{}, dir: t.TempDir()}
	f.alphaPath = f.write(t, "alpha.wasm", servertest.EchoModule(t, "alpha", "1.0.0", "alpha_echo", "alpha_other_list"))
	broken := f.write(t, "broken.wasm", []byte("\x00asm\x01\x00\x00\x00 and then nonsense"))
	snap, err := reg.Load(ctx, host, []registry.Source{{Path: f.alphaPath}, {Path: broken}})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Swap(snap); err != nil {
		t.Fatal(err)
	}
	f.svc, err = New(Options{Catalog: reg, Host: host, Refresher: f.refreshed, Loading: f.loading.Load,
		UploadDir: filepath.Join(f.dir, "uploads"), MaxUploadBytes: testUploadLimit})
	if err != nil {
		t.Fatal(err)
	}
	f.app = fiber.New(fiber.Config{ErrorHandler: httpapi.ErrorHandler(nil)})
	api := httpapi.Register(f.app, httpapi.Deps{Callers: callers{}})
	f.svc.Mount(api.Admin)
	return f
}

func (f *fixture) write(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(f.dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// call runs a tool of the current snapshot as user u1.
func (f *fixture) call(t *testing.T, slug, input string) error {
	t.Helper()
	snap, release := f.reg.Acquire()
	defer release()
	tool, ok := snap.Tool(slug)
	if !ok {
		t.Fatalf("no tool %s", slug)
	}
	_, err := tool.Integration.Caller.Call(context.Background(), toolcall.Call{Tool: slug, UserID: "u1", Input: []byte(input)})
	return err
}

// do sends a request as token and decodes the JSON answer into out (when
// not nil); it returns the status and the error body's code and message.
func (f *fixture) do(t *testing.T, method, path, token string, body []byte, out any) (int, failure.Code, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/wasm")
	resp, err := f.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Code    failure.Code `json:"code"`
				Message string       `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatalf("%s %s: %d with body %s", method, path, resp.StatusCode, raw)
		}
		return resp.StatusCode, e.Error.Code, e.Error.Message
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return resp.StatusCode, "", ""
}

func TestService_List(t *testing.T) {
	f := newFixture(t)
	for _, input := range []string{`{}`, `{"a":1}`, `{"fail":true}`} {
		_ = f.call(t, "alpha_echo", input)
	}
	var l List
	if status, code, msg := f.do(t, "GET", "/api/admin/modules", "root", nil, &l); status != 200 {
		t.Fatalf("list: %d %s %s", status, code, msg)
	}
	if len(l.Modules) != 1 || !slices.Equal(l.Natives, []string{"notes"}) || len(l.Broken) != 1 {
		t.Fatalf("list = %+v", l)
	}
	m := l.Modules[0]
	sum := sha256.Sum256(must(os.ReadFile(f.alphaPath)))
	checks := []struct {
		what string
		ok   bool
	}{
		{"name and version", m.Name == "alpha" && m.Version == "1.0.0" && m.Tools == 2},
		{"origin", m.Source == SourcePlugins && m.Path == f.alphaPath && m.ABI == runtime.ImportModule && !m.LoadedAt.IsZero()},
		{"bytes", m.SHA256 == hex.EncodeToString(sum[:]) && m.Size == len(must(os.ReadFile(f.alphaPath)))},
		{"calls", m.Calls == 3 && m.Errors == 1 && m.ErrorsByCode["FLAKY"] == 1},
		{"latency", m.Latency.P50 > 0 && m.Latency.P50 <= m.Latency.P95 && m.Latency.P95 <= m.Latency.P99},
		{"instances", m.Instances.Idle == 1 && m.Instances.Busy == 0 && m.Instances.Users == 1},
		{"memory", m.Instances.MemoryPages >= 2 && m.Instances.MaxPages == m.Instances.MemoryPages && m.Instances.MemoryBytes == m.Instances.MemoryPages*65536},
		{"broken", strings.HasSuffix(l.Broken[0].Path, "broken.wasm") && l.Broken[0].Error != "" && !l.Broken[0].At.IsZero()},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: %+v", c.what, m)
		}
	}
	if status, code, _ := f.do(t, "GET", "/api/admin/modules", "alice", nil, nil); status != 403 || code != failure.Forbidden {
		t.Errorf("a user's list: %d %s, want 403 FORBIDDEN", status, code)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestService_Inspect(t *testing.T) {
	f := newFixture(t)
	_ = f.call(t, "alpha_other_list", `{"fail":true}`)
	_ = f.call(t, "alpha_echo", `{}`)

	var d Detail
	if status, code, msg := f.do(t, "GET", "/api/admin/modules/alpha", "root", nil, &d); status != 200 {
		t.Fatalf("inspect: %d %s %s", status, code, msg)
	}
	var imports, exports []string
	for _, fn := range d.Imports {
		imports = append(imports, fn.Module+"."+fn.Name)
	}
	for _, fn := range d.Exports {
		exports = append(exports, fn.Name)
	}
	switch {
	case !slices.Equal(imports, []string{"workbench_v1.output_set"}):
		t.Errorf("imports = %v", imports)
	case !slices.Contains(exports, "alpha_echo") || !slices.Contains(exports, "manifest"):
		t.Errorf("exports = %v", exports)
	case d.Manifest.Name != "alpha" || d.Limits.Timeout != runtime.DefaultLimits.Timeout:
		t.Errorf("manifest %+v, limits %+v", d.Manifest, d.Limits)
	case len(d.ToolCounters) != 2 || d.ToolCounters[0].Slug != "alpha_echo" || d.ToolCounters[0].Calls != 1 || d.ToolCounters[1].ErrorsByCode["FLAKY"] != 1:
		t.Errorf("tool counters = %+v", d.ToolCounters)
	case len(d.RecentErrors) != 1 || d.RecentErrors[0].Tool != "alpha_other_list" || d.RecentErrors[0].Code != "FLAKY":
		t.Errorf("recent errors = %+v", d.RecentErrors)
	}

	// Once the file changes, the bytes that were loaded cannot be read
	// again; the rest of the module still shows.
	f.write(t, "alpha.wasm", servertest.EchoModule(t, "alpha", "9.0.0", "alpha_echo"))
	f2 := &Service{opts: f.svc.opts, described: map[string]description{}} // without the cached description
	d2, err := f2.Inspect(context.Background(), "alpha")
	if err != nil || d2.DescribeError == "" || d2.Imports != nil || d2.Version != "1.0.0" {
		t.Errorf("after the file changed: err %v, describeError %q, imports %v, version %s", err, d2.DescribeError, d2.Imports, d2.Version)
	}

	tests := []struct {
		path       string
		wantStatus int
		wantCode   failure.Code
	}{
		{"/api/admin/modules/nope", 404, failure.NotFound},
		{"/api/admin/modules/notes", 409, failure.NativeModule},
	}
	for _, tt := range tests {
		if status, code, msg := f.do(t, "GET", tt.path, "root", nil, nil); status != tt.wantStatus || code != tt.wantCode {
			t.Errorf("GET %s: %d %s %q, want %d %s", tt.path, status, code, msg, tt.wantStatus, tt.wantCode)
		}
	}
}

// TestService_Changes runs loads, reloads and unloads in order, each
// checked by status, code, message and the catalog afterwards.
func TestService_Changes(t *testing.T) {
	f := newFixture(t)
	alphaV2 := servertest.EchoModule(t, "alpha", "2.0.0", "alpha_echo", "alpha_other_list", "alpha_new")
	alphaV3 := servertest.EchoModule(t, "alpha", "3.0.0", "alpha_echo")
	beta := servertest.EchoModule(t, "beta", "1.0.0", "beta_echo")
	thief := servertest.EchoModule(t, "alpha-other", "1.0.0", "alpha_other_x", "alpha_other_list")
	notes := servertest.EchoModule(t, "notes", "1.0.0", "notes_echo")
	uploaded := func(b []byte) string {
		sum := sha256.Sum256(b)
		return filepath.Join(f.dir, "uploads", hex.EncodeToString(sum[:])+".wasm")
	}
	type want struct {
		status    int
		code      failure.Code
		msgParts  []string
		version   string // of alpha afterwards; "" means not loaded
		replaced  string // Outcome.Replaced.Version
		refreshes int32  // total so far
	}
	tests := []struct {
		name        string
		method      string
		path        string
		token       string
		body        []byte
		loading     bool
		want        want
		wantFiles   []string // uploaded files present afterwards
		wantNoFiles []string
	}{
		{"a user", "POST", "/api/admin/modules/alpha/reload", "alice", nil, false,
			want{status: 403, code: failure.Forbidden, version: "1.0.0"}, nil, nil},
		{"not wasm", "POST", "/api/admin/modules", "root", []byte("#!/bin/sh\nrm -rf /\n"), false,
			want{status: 422, code: failure.InvalidModule, msgParts: []string{"not a WebAssembly module"}, version: "1.0.0"}, nil, nil},
		{"too large", "POST", "/api/admin/modules", "root", append([]byte("\x00asm"), make([]byte, testUploadLimit)...), false,
			want{status: 413, code: failure.TooLarge, msgParts: []string{fmt.Sprint(testUploadLimit)}, version: "1.0.0"}, nil, nil},
		{"does not compile", "POST", "/api/admin/modules", "root", []byte("\x00asm\x01\x00\x00\x00\xff\xff"), false,
			want{status: 422, code: failure.InvalidModule, msgParts: []string{"compile"}, version: "1.0.0"}, nil, nil},
		{"slug collision", "POST", "/api/admin/modules", "root", thief, false,
			want{status: 409, code: failure.Collision, msgParts: []string{`"alpha_other_list"`, "alpha-other", "integration alpha", "alpha.wasm"}, version: "1.0.0"},
			nil, []string{uploaded(thief)}},
		{"a native's name", "POST", "/api/admin/modules", "root", notes, false,
			want{status: 409, code: failure.Collision, msgParts: []string{`"notes"`, "native"}, version: "1.0.0"}, nil, nil},
		{"while loading", "POST", "/api/admin/modules", "root", beta, true,
			want{status: 503, code: failure.Unavailable, msgParts: []string{"/readyz"}, version: "1.0.0"}, nil, nil},
		{"a new module", "POST", "/api/admin/modules", "root", beta, false,
			want{status: 200, version: "1.0.0", refreshes: 1}, []string{uploaded(beta)}, nil},
		{"a new version", "POST", "/api/admin/modules", "root", alphaV2, false,
			want{status: 200, version: "2.0.0", replaced: "1.0.0", refreshes: 2}, []string{uploaded(alphaV2)}, nil},
		{"reload an upload", "POST", "/api/admin/modules/alpha/reload", "root", nil, false,
			want{status: 200, version: "2.0.0", replaced: "2.0.0", refreshes: 3}, []string{uploaded(alphaV2)}, nil},
		{"replace an upload", "POST", "/api/admin/modules", "root", alphaV3, false,
			want{status: 200, version: "3.0.0", replaced: "2.0.0", refreshes: 4}, []string{uploaded(alphaV3)}, []string{uploaded(alphaV2)}},
		{"reload unknown", "POST", "/api/admin/modules/nope/reload", "root", nil, false,
			want{status: 404, code: failure.NotFound, msgParts: []string{`"nope"`}, version: "3.0.0", refreshes: 4}, nil, nil},
		{"reload a native", "POST", "/api/admin/modules/notes/reload", "root", nil, false,
			want{status: 409, code: failure.NativeModule, version: "3.0.0", refreshes: 4}, nil, nil},
		{"unload a native", "POST", "/api/admin/modules/notes/unload", "root", nil, false,
			want{status: 409, code: failure.NativeModule, version: "3.0.0", refreshes: 4}, nil, nil},
		{"unload", "POST", "/api/admin/modules/alpha/unload", "root", nil, false,
			want{status: 200, replaced: "3.0.0", refreshes: 5}, nil, []string{uploaded(alphaV3)}},
		{"unload again", "POST", "/api/admin/modules/alpha/unload", "root", nil, false,
			want{status: 404, code: failure.NotFound, refreshes: 5}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.loading.Store(tt.loading)
			var out Outcome
			status, code, msg := f.do(t, tt.method, tt.path, tt.token, tt.body, &out)
			if status != tt.want.status || code != tt.want.code {
				t.Fatalf("%d %s %q, want %d %s", status, code, msg, tt.want.status, tt.want.code)
			}
			for _, part := range tt.want.msgParts {
				if !strings.Contains(msg, part) {
					t.Errorf("message %q does not mention %q", msg, part)
				}
			}
			if tt.want.replaced != "" && (out.Replaced == nil || out.Replaced.Version != tt.want.replaced) {
				t.Errorf("replaced = %+v, want version %s", out.Replaced, tt.want.replaced)
			}
			in, ok := f.reg.Current().Integration("alpha")
			if got := map[bool]string{true: "", false: ""}[ok]; ok {
				got = in.Manifest().Version
				if got != tt.want.version {
					t.Errorf("alpha serves %s, want %s", got, tt.want.version)
				}
				if err := f.call(t, "alpha_echo", `{}`); err != nil {
					t.Errorf("alpha_echo: %v", err)
				}
			} else if tt.want.version != "" {
				t.Errorf("alpha is not loaded, want %s", tt.want.version)
			}
			if n := f.refreshed.n.Load(); n != tt.want.refreshes {
				t.Errorf("%d refreshes, want %d", n, tt.want.refreshes)
			}
			for _, p := range tt.wantFiles {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("uploaded file: %v", err)
				}
			}
			for _, p := range tt.wantNoFiles {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s is still kept: %v", p, err)
				}
			}
		})
	}
}

func TestService_begin(t *testing.T) {
	f := newFixture(t)
	f.svc.changing.Lock()
	status, code, msg := f.do(t, "POST", "/api/admin/modules/alpha/unload", "root", nil, nil)
	f.svc.changing.Unlock()
	if status != 409 || code != failure.ChangeInProgress || !strings.Contains(msg, "retry") {
		t.Fatalf("a change during another: %d %s %q, want 409 %s", status, code, msg, failure.ChangeInProgress)
	}
	if _, ok := f.reg.Current().Integration("alpha"); !ok {
		t.Fatal("the refused unload removed alpha")
	}
}
