package registry

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/toolcall"
)

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	builtin := filepath.Join(root, "builtin")
	operator := filepath.Join(root, "operator")
	for _, f := range []string{
		"builtin/zeta/zeta.wasm",
		"builtin/alpha/alpha.wasm",
		"builtin/alpha/README.md",
		"builtin/top.wasm", // not in a plugin folder: ignored
		"operator/b.wasm",
		"operator/a.wasm",
		"operator/nested/c.wasm", // operator plugins are not searched recursively
	} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(operator, "dir.wasm"), 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name       string
		builtin    string
		operator   string
		want       []Source
		wantNotDir bool
	}{
		{"both", builtin, operator, []Source{
			{Path: filepath.Join(builtin, "alpha", "alpha.wasm"), Builtin: true},
			{Path: filepath.Join(builtin, "zeta", "zeta.wasm"), Builtin: true},
			{Path: filepath.Join(operator, "a.wasm"), Builtin: false},
			{Path: filepath.Join(operator, "b.wasm"), Builtin: false},
		}, false},
		{"builtin only", builtin, "", []Source{
			{Path: filepath.Join(builtin, "alpha", "alpha.wasm"), Builtin: true},
			{Path: filepath.Join(builtin, "zeta", "zeta.wasm"), Builtin: true},
		}, false},
		{"none", "", "", nil, false},
		{"missing operator dir", builtin, filepath.Join(root, "nope"), nil, true},
		{"file as dir", filepath.Join(operator, "a.wasm"), "", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Discover(tt.builtin, tt.operator)
			if tt.wantNotDir {
				if !errors.Is(err, ErrNotDir) {
					t.Fatalf("err = %v, want ErrNotDir", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Discover = %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestLoad_Snapshot(t *testing.T) {
	dir := t.TempDir()
	host := newTestHost(t)
	s := mustLoad(t, host,
		Source{Path: echoPlugin(t, dir, "zebra/zebra.wasm", "zebra", "zebra_stripe", "zebra_graze"), Builtin: true},
		Source{Path: echoPlugin(t, dir, "alpha.wasm", "alpha", "alpha_echo")},
	)
	defer s.Close()

	var names []string
	for _, in := range s.Integrations() {
		names = append(names, in.Name)
	}
	if want := []string{"alpha", "zebra"}; !slices.Equal(names, want) {
		t.Errorf("Integrations = %v, want %v", names, want)
	}
	var slugs []string
	for _, tool := range s.Tools() {
		slugs = append(slugs, tool.Spec.Slug)
	}
	if want := []string{"alpha_echo", "zebra_graze", "zebra_stripe"}; !slices.Equal(slugs, want) {
		t.Errorf("Tools = %v, want %v", slugs, want)
	}

	zebra, ok := s.Integration("zebra")
	if !ok || !zebra.Builtin || !strings.HasSuffix(zebra.Path, "zebra.wasm") || zebra.Manifest().Name != "zebra" {
		t.Errorf("Integration(zebra) = %+v, %v", zebra, ok)
	}
	if _, ok := s.Integration("nope"); ok {
		t.Error("Integration(nope) found")
	}
	tool, ok := s.Tool("zebra_graze")
	if !ok || tool.Integration != zebra || tool.Spec.Slug != "zebra_graze" {
		t.Fatalf("Tool(zebra_graze) = %+v, %v", tool, ok)
	}
	if _, ok := s.Tool("zebra_fly"); ok {
		t.Error("Tool(zebra_fly) found")
	}
	out, err := tool.Integration.Plugin.Call(context.Background(), toolcall.Call{Tool: "zebra_graze", UserID: "u1", Input: []byte(`{"grass":1}`)})
	if err != nil || string(out) != `{"grass":1}` {
		t.Errorf("Call = %s, %v; want the input echoed", out, err)
	}
	if len(s.Failed()) != 0 {
		t.Errorf("Failed = %v, want none", s.Failed())
	}
}

func TestLoad_Collision(t *testing.T) {
	dir := t.TempDir()
	first := echoPlugin(t, dir, "builtin/ab/ab.wasm", "ab", "ab_cd_list", "ab_view")
	// ab-cd's slug prefix is ab_cd_, so ab_cd_list is valid for it too.
	slugClash := echoPlugin(t, dir, "operator/abcd.wasm", "ab-cd", "ab_cd_get", "ab_cd_list")
	nameClash := echoPlugin(t, dir, "operator/ab-again.wasm", "ab", "ab_other")
	fine := echoPlugin(t, dir, "operator/fine.wasm", "fine", "fine_echo")
	host := newTestHost(t)

	tests := []struct {
		name      string
		sources   []Source
		wantNames []string
		wantErr   error
		failPath  string
		failName  string
		wantParts []string
	}{
		{
			name:      "slug",
			sources:   []Source{{Path: first, Builtin: true}, {Path: slugClash, Builtin: false}, {Path: fine, Builtin: false}},
			wantNames: []string{"ab", "fine"},
			wantErr:   ErrSlugCollision, failPath: slugClash, failName: "ab-cd",
			wantParts: []string{`"ab_cd_list"`, "ab-cd", "integration ab", first},
		},
		{
			name:      "slug, other order",
			sources:   []Source{{Path: slugClash, Builtin: true}, {Path: first, Builtin: false}},
			wantNames: []string{"ab-cd"},
			wantErr:   ErrSlugCollision, failPath: first, failName: "ab",
			wantParts: []string{`"ab_cd_list"`, "integration ab ", "ab-cd", slugClash},
		},
		{
			name:      "name",
			sources:   []Source{{Path: first, Builtin: true}, {Path: nameClash, Builtin: false}},
			wantNames: []string{"ab"},
			wantErr:   ErrDuplicateName, failPath: nameClash, failName: "ab",
			wantParts: []string{`"ab"`, first},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Loading runs in parallel; the outcome must not depend on timing.
			for range 3 {
				s := mustLoad(t, host, tt.sources...)
				var names []string
				for _, in := range s.Integrations() {
					names = append(names, in.Name)
				}
				if !slices.Equal(names, tt.wantNames) {
					t.Errorf("Integrations = %v, want %v", names, tt.wantNames)
				}
				failed := s.Failed()
				if len(failed) != 1 {
					t.Fatalf("Failed = %v, want one failure", failed)
				}
				f := failed[0]
				if f.Path != tt.failPath || f.Name != tt.failName || !errors.Is(f.Err, tt.wantErr) {
					t.Errorf("failure = %+v, want path %s name %s err %v", f, tt.failPath, tt.failName, tt.wantErr)
				}
				for _, part := range tt.wantParts {
					if !strings.Contains(f.Err.Error(), part) {
						t.Errorf("error %q does not mention %q", f.Err, part)
					}
				}
				// The winner keeps every one of its tools, the loser none.
				for _, tool := range s.Tools() {
					if tool.Integration.Name == tt.failName && tool.Integration.Path == tt.failPath {
						t.Errorf("tool %s of the failed plugin is listed", tool.Spec.Slug)
					}
				}
				s.Close()
			}
		})
	}
}

func TestLoad_BrokenPlugins(t *testing.T) {
	dir := t.TempDir()
	good := echoPlugin(t, dir, "good.wasm", "good", "good_echo")
	noManifest := watFixture(t, "no_manifest", dir, "no_manifest.wasm")
	garbage := filepath.Join(dir, "garbage.wasm")
	if err := os.WriteFile(garbage, []byte("this is not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.wasm")

	s := mustLoad(t, newTestHost(t),
		Source{Path: garbage, Builtin: true}, Source{Path: good, Builtin: false}, Source{Path: noManifest, Builtin: false}, Source{Path: missing, Builtin: false})
	defer s.Close()

	if _, ok := s.Tool("good_echo"); !ok {
		t.Error("the good plugin did not load next to broken ones")
	}
	failed := s.Failed()
	wantPaths := []string{garbage, noManifest, missing}
	wantReasons := []string{"compile", `"manifest"`, "no such file"}
	if len(failed) != len(wantPaths) {
		t.Fatalf("Failed = %v, want %d failures", failed, len(wantPaths))
	}
	for i, f := range failed {
		if f.Path != wantPaths[i] || f.Err == nil || !strings.Contains(f.Err.Error(), wantReasons[i]) {
			t.Errorf("failure %d = {%s %v}, want path %s and a reason mentioning %s", i, f.Path, f.Err, wantPaths[i], wantReasons[i])
		}
	}
	if !failed[0].Builtin || failed[1].Builtin {
		t.Errorf("Builtin flags = %v, %v; want true, false", failed[0].Builtin, failed[1].Builtin)
	}
}

// gateLoader wraps a loader and holds every Load until `want` of them run at
// once, recording the most that ever ran together.
type gateLoader struct {
	Loader
	want    int32
	running atomic.Int32
	most    atomic.Int32
	full    chan struct{}
	once    sync.Once
}

func (g *gateLoader) Load(ctx context.Context, wasm []byte) (*runtime.Plugin, error) {
	n := g.running.Add(1)
	defer g.running.Add(-1)
	for {
		m := g.most.Load()
		if n <= m || g.most.CompareAndSwap(m, n) {
			break
		}
	}
	if n >= g.want {
		g.once.Do(func() { close(g.full) })
	}
	select {
	case <-g.full:
	case <-time.After(10 * time.Second):
		return nil, errors.New("gate: loads never ran in parallel")
	}
	return g.Loader.Load(ctx, wasm)
}

func TestLoad_Parallel(t *testing.T) {
	const procs = 3
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(procs))

	dir := t.TempDir()
	var sources []Source
	for _, name := range []string{"pa", "pb", "pc", "pd", "pe", "pf", "pg", "ph"} {
		sources = append(sources, Source{Path: echoPlugin(t, dir, name+".wasm", name, name+"_echo")})
	}
	gate := &gateLoader{Loader: newTestHost(t), want: procs, full: make(chan struct{})}
	s := mustLoad(t, gate, sources...)
	defer s.Close()

	if got := gate.most.Load(); got != procs {
		t.Errorf("at most %d loads ran together, want exactly GOMAXPROCS = %d", got, procs)
	}
	if len(s.Failed()) != 0 || len(s.Integrations()) != len(sources) {
		t.Errorf("loaded %d, failed %v; want all %d", len(s.Integrations()), s.Failed(), len(sources))
	}
}

func TestLoad_Canceled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newRegistry(t).Load(ctx, newTestHost(t), []Source{{Path: echoPlugin(t, dir, "c.wasm", "cc", "cc_echo")}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func callEcho(s *Snapshot, slug string) error {
	tool, ok := s.Tool(slug)
	if !ok {
		return errors.New("no tool " + slug)
	}
	out, err := tool.Integration.Plugin.Call(context.Background(), toolcall.Call{Tool: slug, UserID: "u", Input: []byte(`{"n":1}`)})
	if err != nil {
		return err
	}
	if string(out) != `{"n":1}` {
		return errors.New("echo returned " + string(out))
	}
	return nil
}

func isClosed(err error) bool {
	var te *failure.Error
	return errors.As(err, &te) && te.Code == failure.PluginClosed
}

func TestRegistry_Swap(t *testing.T) {
	dir := t.TempDir()
	path := echoPlugin(t, dir, "sw.wasm", "sw", "sw_echo")
	host := newTestHost(t)
	reg := newRegistry(t)

	if n := len(reg.Current().Integrations()); n != 0 {
		t.Fatalf("new registry has %d integrations", n)
	}
	first := mustLoad(t, host, Source{Path: path})
	if err := reg.Swap(first); err != nil {
		t.Fatal(err)
	}
	if err := reg.Swap(first); !errors.Is(err, ErrClaimed) {
		t.Errorf("second Swap of the same snapshot: err = %v, want ErrClaimed", err)
	}

	// A lease keeps the old snapshot's plugins open across a swap.
	leased, release := reg.Acquire()
	if leased != first {
		t.Fatal("Acquire did not return the current snapshot")
	}
	second := mustLoad(t, host, Source{Path: path})
	if err := reg.Swap(second); err != nil {
		t.Fatal(err)
	}
	if reg.Current() != second {
		t.Fatal("Current is not the swapped-in snapshot")
	}
	if err := callEcho(leased, "sw_echo"); err != nil {
		t.Fatalf("call on the leased old snapshot: %v", err)
	}
	release()
	release() // idempotent
	if err := callEcho(first, "sw_echo"); !isClosed(err) {
		t.Errorf("old plugin after the last release: err = %v, want %s", err, failure.PluginClosed)
	}

	// Without a lease, the old plugins close at once; the new ones stay open.
	third := mustLoad(t, host, Source{Path: path})
	if err := reg.Swap(third); err != nil {
		t.Fatal(err)
	}
	if err := callEcho(second, "sw_echo"); !isClosed(err) {
		t.Errorf("unleased old plugin after swap: err = %v, want %s", err, failure.PluginClosed)
	}
	if err := callEcho(reg.Current(), "sw_echo"); err != nil {
		t.Errorf("current plugin: %v", err)
	}

	// Close retires the current snapshot too.
	reg.Close()
	if err := callEcho(third, "sw_echo"); !isClosed(err) {
		t.Errorf("plugin after registry Close: err = %v, want %s", err, failure.PluginClosed)
	}
	if n := len(reg.Current().Tools()); n != 0 {
		t.Errorf("closed registry lists %d tools", n)
	}
}

func TestSnapshot_Close(t *testing.T) {
	dir := t.TempDir()
	s := mustLoad(t, newTestHost(t), Source{Path: echoPlugin(t, dir, "dc.wasm", "dc", "dc_echo")})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := callEcho(s, "dc_echo"); !isClosed(err) {
		t.Errorf("plugin of a closed snapshot: err = %v, want %s", err, failure.PluginClosed)
	}
	if err := s.Close(); !errors.Is(err, ErrClaimed) {
		t.Errorf("second Close: err = %v, want ErrClaimed", err)
	}
	if err := newRegistry(t).Swap(s); !errors.Is(err, ErrClaimed) {
		t.Errorf("Swap of a closed snapshot: err = %v, want ErrClaimed", err)
	}
}

// TestRegistry_SwapHammer runs readers that call tools through leases while
// a writer keeps swapping snapshots: no call may ever hit a closed plugin,
// and every retired snapshot's plugins end up closed.
func TestRegistry_SwapHammer(t *testing.T) {
	const (
		readers = 8
		swaps   = 20
	)
	dir := t.TempDir()
	path := echoPlugin(t, dir, "hm.wasm", "hm", "hm_echo")
	host := newTestHost(t)
	snapshots := make([]*Snapshot, swaps+1)
	for i := range snapshots {
		snapshots[i] = mustLoad(t, host, Source{Path: path})
	}
	reg := newRegistry(t)
	if err := reg.Swap(snapshots[0]); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	errs := make(chan error, readers)
	var calls atomic.Int64
	var wg sync.WaitGroup
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				s, release := reg.Acquire()
				err := callEcho(s, "hm_echo")
				release()
				if err != nil {
					errs <- err
					return
				}
				calls.Add(1)
			}
		}()
	}
	for _, s := range snapshots[1:] {
		time.Sleep(2 * time.Millisecond)
		if err := reg.Swap(s); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("reader: %v", err)
		}
	}
	if calls.Load() < readers {
		t.Errorf("only %d calls ran", calls.Load())
	}
	for i, s := range snapshots[:swaps] {
		if err := callEcho(s, "hm_echo"); !isClosed(err) {
			t.Errorf("retired snapshot %d: err = %v, want %s", i, err, failure.PluginClosed)
		}
	}
	if err := callEcho(reg.Current(), "hm_echo"); err != nil {
		t.Errorf("current snapshot: %v", err)
	}
	reg.Close()
}

// nativeEcho is a native integration's caller that echoes its input.
type nativeEcho struct{ calls atomic.Int32 }

func (n *nativeEcho) Call(_ context.Context, c toolcall.Call) (json.RawMessage, error) {
	n.calls.Add(1)
	return json.RawMessage(c.Input), nil
}

func nativeManifest(t testing.TB, name string, slugs ...string) *manifest.Manifest {
	t.Helper()
	m, err := manifest.Parse(echoManifest(name, slugs...))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRegistry_Natives: native integrations are in every snapshot, from the
// first one on; a plugin cannot take a native's name or slugs; retiring a
// snapshot closes its plugins and leaves the natives callable.
func TestRegistry_Natives(t *testing.T) {
	caller := &nativeEcho{}
	reg := newRegistry(t, Native(nativeManifest(t, "notes", "notes_echo"), caller))
	first := reg.Current()
	if in, ok := first.Integration("notes"); !ok || !in.Builtin || in.Plugin != nil || in.Path != "" {
		t.Fatalf("first snapshot: notes = %+v, %v", in, ok)
	}
	dir := t.TempDir()
	s, err := reg.Load(context.Background(), newTestHost(t), []Source{
		{Path: echoPlugin(t, dir, "notes.wasm", "notes", "notes_other")},
		{Path: echoPlugin(t, dir, "ok.wasm", "ok", "ok_echo")},
	})
	if err != nil {
		t.Fatal(err)
	}
	failed := s.Failed()
	if len(failed) != 1 || !errors.Is(failed[0].Err, ErrDuplicateName) || !strings.Contains(failed[0].Err.Error(), "native") {
		t.Fatalf("failed = %+v, want the name clash with the native", failed)
	}
	if err := reg.Swap(s); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range reg.Current().Integrations() {
		names = append(names, in.Name)
	}
	if !slices.Equal(names, []string{"notes", "ok"}) {
		t.Fatalf("integrations = %v", names)
	}
	tool, ok := reg.Current().Tool("notes_echo")
	if !ok || tool.Integration.Caller != caller {
		t.Fatalf("notes_echo = %+v, %v", tool, ok)
	}
	reg.Close()
	if _, ok := reg.Current().Integration("ok"); ok {
		t.Fatal("plugin still listed after Close")
	}
	out, err := reg.Current().Integrations()[0].Caller.Call(context.Background(), toolcall.Call{Tool: "notes_echo", Input: []byte(`{"a":1}`)})
	if err != nil || string(out) != `{"a":1}` || caller.calls.Load() != 1 {
		t.Fatalf("native after Close: %s, %v", out, err)
	}
	if _, err := New(nil, Native(nativeManifest(t, "ab", "ab_x"), caller), Native(nativeManifest(t, "ab", "ab_y"), caller)); !errors.Is(err, ErrDuplicateName) {
		t.Fatalf("clashing natives: %v", err)
	}
}

func TestSnapshot_With(t *testing.T) {
	caller := &nativeEcho{}
	reg := newRegistry(t, Native(nativeManifest(t, "notes", "notes_echo"), caller))
	base := reg.Current()
	app := Native(nativeManifest(t, "mine", "mine__echo"), caller)
	app.Custom = true
	tests := []struct {
		name    string
		extra   []*Integration
		want    []string // integration names of the view
		wantErr error
	}{
		{"nothing extra", nil, []string{"notes"}, nil},
		{"an app", []*Integration{app}, []string{"mine", "notes"}, nil},
		{"an app named like an integration", []*Integration{Native(nativeManifest(t, "notes", "notes__x"), caller)}, nil, ErrDuplicateName},
		{"an app tool slug of an integration", []*Integration{Native(&manifest.Manifest{Name: "other", Tools: []manifest.Tool{{Slug: "notes_echo"}}}, caller)}, nil, ErrSlugCollision},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := base.With(tt.extra...)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("With err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			var names []string
			for _, in := range v.Integrations() {
				names = append(names, in.Name)
			}
			if !slices.Equal(names, tt.want) {
				t.Fatalf("integrations = %v, want %v", names, tt.want)
			}
			if _, ok := v.Tool("notes_echo"); !ok {
				t.Fatal("the view lost the shared tool")
			}
			if err := v.Close(); !errors.Is(err, ErrClaimed) {
				t.Fatalf("Close of a view = %v, want ErrClaimed", err)
			}
		})
	}
	if _, ok := base.Integration("mine"); ok {
		t.Fatal("With changed the shared snapshot")
	}
	// Closing views never closed the shared snapshot's integrations.
	if _, ok := reg.Current().Tool("notes_echo"); !ok {
		t.Fatal("shared tool gone")
	}
}
