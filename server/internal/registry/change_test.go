package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/toolcall"
)

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// callPlugin calls an echo tool of p and returns the error.
func callPlugin(p *runtime.Plugin, slug string) error {
	_, err := p.Call(context.Background(), toolcall.Call{Tool: slug, UserID: "u", Input: []byte(`{}`)})
	return err
}

// loadedRegistry returns a registry with a native "notes" and the plugins
// of sources swapped in.
func loadedRegistry(t *testing.T, host *runtime.Host, sources ...Source) *Registry {
	t.Helper()
	reg := newRegistry(t, Native(nativeManifest(t, "notes", "notes_echo"), &nativeEcho{}))
	s, err := reg.Load(context.Background(), host, sources)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Swap(s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	return reg
}

func TestRegistry_Install(t *testing.T) {
	dir := t.TempDir()
	host := newTestHost(t)
	base := echoPlugin(t, dir, "base.wasm", "base", "base_echo", "base_x_list")
	tests := []struct {
		name        string
		wasm        []byte
		want        string // the name Install is told to expect
		wantErr     error
		wantParts   []string
		wantVersion string // of the integration serving afterwards
		wantOld     bool
	}{
		{name: "new integration", wasm: readFile(t, echoPlugin(t, dir, "extra.wasm", "extra", "extra_echo"))},
		{name: "new version", wasm: readFile(t, versionedPlugin(t, dir, "base2.wasm", "base", "2.0.0", "base_echo", "base_more")),
			wantVersion: "2.0.0", wantOld: true},
		{name: "slug collision", wasm: readFile(t, echoPlugin(t, dir, "thief.wasm", "base-x", "base_x_a", "base_x_list")),
			wantErr: ErrSlugCollision, wantParts: []string{`"base_x_list"`, "base-x", "integration base", base}},
		{name: "native name", wasm: readFile(t, echoPlugin(t, dir, "notes.wasm", "notes", "notes_other")),
			wantErr: ErrDuplicateName, wantParts: []string{`"notes"`, "native"}},
		{name: "wrong name", wasm: readFile(t, echoPlugin(t, dir, "other.wasm", "other", "other_echo")), want: "base",
			wantErr: ErrWrongName, wantParts: []string{`"other"`, `"base"`}},
		{name: "not wasm", wasm: []byte("#!/bin/sh\necho hi\n"), wantParts: []string{"compile"}},
		{name: "too large", wasm: make([]byte, MaxPluginBytes+1), wantErr: ErrTooLarge, wantParts: []string{fmt.Sprint(MaxPluginBytes)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := loadedRegistry(t, host, Source{Path: base, Builtin: true})
			before := reg.Current()
			oldBase, _ := before.Integration("base")
			ch, err := reg.Install(context.Background(), host, Source{Path: "upload.wasm", Uploaded: true}, tt.wasm, tt.want)
			if tt.wantErr != nil || tt.wantParts != nil {
				if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				for _, part := range tt.wantParts {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("error %q does not mention %q", err, part)
					}
				}
				if reg.Current() != before {
					t.Error("a refused install swapped the snapshot")
				}
				if err := callEcho(reg.Current(), "base_echo"); err != nil {
					t.Errorf("the serving plugin after a refused install: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (ch.Old != nil) != tt.wantOld || (tt.wantOld && ch.Old != oldBase) {
				t.Errorf("Change.Old = %+v, want the old base: %v", ch.Old, tt.wantOld)
			}
			if !ch.New.Uploaded || ch.New.Size != len(tt.wasm) || len(ch.New.SHA256) != 64 || ch.New.LoadedAt.IsZero() {
				t.Errorf("Change.New metadata = %+v", ch.New)
			}
			in, ok := reg.Current().Integration(ch.New.Name)
			if !ok || in != ch.New {
				t.Fatalf("installed integration not current: %+v", in)
			}
			if tt.wantVersion != "" && in.Manifest().Version != tt.wantVersion {
				t.Errorf("version = %s, want %s", in.Manifest().Version, tt.wantVersion)
			}
			for _, tool := range in.Manifest().Tools {
				if err := callEcho(reg.Current(), tool.Slug); err != nil {
					t.Errorf("call %s: %v", tool.Slug, err)
				}
			}
			// The replaced plugin closed (no lease held it); the others stayed open.
			if tt.wantOld && !isClosed(callPlugin(oldBase.Plugin, "base_echo")) {
				t.Error("the replaced plugin is still open")
			}
			if !tt.wantOld && callPlugin(oldBase.Plugin, "base_echo") != nil {
				t.Error("a plugin carried over into the new snapshot was closed")
			}
		})
	}
}

func TestRegistry_Reload(t *testing.T) {
	dir := t.TempDir()
	host := newTestHost(t)
	path := echoPlugin(t, dir, "rl.wasm", "rl", "rl_echo")
	reg := loadedRegistry(t, host, Source{Path: path})
	write := func(src string) {
		t.Helper()
		if err := os.WriteFile(path, readFile(t, src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		file        string // copied over the plugin's file first; "" leaves it
		reload      string
		wantErr     error
		wantVersion string
		wantFailed  bool // the failure is listed afterwards
	}{
		{name: "same file", reload: "rl", wantVersion: "1.0.0"},
		{name: "new version", file: versionedPlugin(t, dir, "rl2.wasm", "rl", "2.0.0", "rl_echo"), reload: "rl", wantVersion: "2.0.0"},
		{name: "broken file keeps the old version", file: garbage, reload: "rl", wantVersion: "2.0.0", wantFailed: true},
		{name: "file of another integration", file: echoPlugin(t, dir, "zz.wasm", "zz", "zz_echo"), reload: "rl",
			wantErr: ErrWrongName, wantVersion: "2.0.0", wantFailed: true},
		{name: "fixed file clears the failure", file: versionedPlugin(t, dir, "rl3.wasm", "rl", "3.0.0", "rl_echo"), reload: "rl", wantVersion: "3.0.0"},
		{name: "unknown", reload: "nope", wantErr: ErrUnknown, wantVersion: "3.0.0"},
		{name: "native", reload: "notes", wantErr: ErrNative, wantVersion: "3.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.file != "" {
				write(tt.file)
			}
			_, err := reg.Reload(context.Background(), host, tt.reload)
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && tt.wantFailed == (err == nil) {
				t.Fatalf("err = %v, want failure %v", err, tt.wantFailed)
			}
			in, ok := reg.Current().Integration("rl")
			if !ok || in.Manifest().Version != tt.wantVersion {
				t.Fatalf("serving %+v, want version %s", in, tt.wantVersion)
			}
			if err := callEcho(reg.Current(), "rl_echo"); err != nil {
				t.Errorf("call after reload: %v", err)
			}
			failed := reg.Current().Failed()
			if tt.wantFailed != (len(failed) == 1) || len(failed) > 1 {
				t.Fatalf("failed = %+v, want listed: %v", failed, tt.wantFailed)
			}
			if tt.wantFailed && (failed[0].Name != "rl" || failed[0].Path != path || failed[0].At.IsZero()) {
				t.Errorf("failure = %+v", failed[0])
			}
		})
	}
}

func TestRegistry_Remove(t *testing.T) {
	dir := t.TempDir()
	host := newTestHost(t)
	reg := loadedRegistry(t, host, Source{Path: echoPlugin(t, dir, "a.wasm", "ra", "ra_echo")}, Source{Path: echoPlugin(t, dir, "b.wasm", "rb", "rb_echo")})
	ra, _ := reg.Current().Integration("ra")
	rb, _ := reg.Current().Integration("rb")
	leased, release := reg.Acquire()

	tests := []struct {
		name    string
		remove  string
		wantErr error
	}{
		{"plugin", "ra", nil},
		{"again", "ra", ErrUnknown},
		{"native", "notes", ErrNative},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := reg.Remove(tt.remove)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && (ch.Old != ra || ch.New != nil) {
				t.Errorf("change = %+v", ch)
			}
		})
	}
	if _, ok := reg.Current().Tool("ra_echo"); ok {
		t.Error("ra_echo still listed after Remove")
	}
	// The lease taken before keeps the removed plugin open until released.
	if err := callEcho(leased, "ra_echo"); err != nil {
		t.Errorf("leased call to the removed plugin: %v", err)
	}
	release()
	if !isClosed(callPlugin(ra.Plugin, "ra_echo")) {
		t.Error("the removed plugin is open after its last lease")
	}
	if err := callPlugin(rb.Plugin, "rb_echo"); err != nil {
		t.Errorf("the other plugin after its first snapshot retired: %v", err)
	}
}

// TestRegistry_ReloadHammer calls a plugin without pause while it is
// reloaded, replaced by uploads and a neighbour comes and goes: not one call
// may fail, every replaced plugin ends up closed, and the plugin that was
// never touched stays open through every snapshot that retires.
func TestRegistry_ReloadHammer(t *testing.T) {
	const (
		readers = 6
		changes = 24
	)
	dir := t.TempDir()
	host := newTestHost(t)
	path := echoPlugin(t, dir, "hr.wasm", "hr", "hr_echo")
	v2Path := versionedPlugin(t, dir, "hr2.wasm", "hr", "2.0.0", "hr_echo")
	v2 := readFile(t, v2Path)
	neighbour := readFile(t, echoPlugin(t, dir, "nb.wasm", "nb", "nb_echo"))
	reg := loadedRegistry(t, host, Source{Path: path}, Source{Path: echoPlugin(t, dir, "st.wasm", "st", "st_echo")})
	steady, _ := reg.Current().Integration("st")

	stop := make(chan struct{})
	var calls, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				s, release := reg.Acquire()
				for _, slug := range []string{"hr_echo", "st_echo"} {
					if err := callEcho(s, slug); err != nil {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, err)
					}
					calls.Add(1)
				}
				release()
			}
		})
	}
	var replaced []*Integration
	ctx := context.Background()
	for i := range changes {
		var ch Change
		var err error
		switch i % 4 {
		case 0:
			ch, err = reg.Reload(ctx, host, "hr")
		case 1:
			ch, err = reg.Install(ctx, host, Source{Path: v2Path, Uploaded: true}, v2, "hr")
		case 2:
			_, err = reg.Install(ctx, host, Source{Path: "nb", Uploaded: true}, neighbour, "")
		case 3:
			_, err = reg.Remove("nb")
		}
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
		if ch.Old != nil {
			replaced = append(replaced, ch.Old)
		}
	}
	close(stop)
	wg.Wait()
	if n := failed.Load(); n != 0 {
		t.Fatalf("%d of %d calls failed during reloads; first: %v", n, calls.Load(), firstErr.Load())
	}
	if calls.Load() < readers {
		t.Fatalf("only %d calls ran", calls.Load())
	}
	for i, in := range replaced {
		if !isClosed(callPlugin(in.Plugin, "hr_echo")) {
			t.Errorf("replaced plugin %d is still open", i)
		}
	}
	if err := callPlugin(steady.Plugin, "st_echo"); err != nil {
		t.Errorf("the untouched plugin after %d swaps: %v", changes, err)
	}
	if err := callEcho(reg.Current(), "hr_echo"); err != nil {
		t.Errorf("current hr: %v", err)
	}
}
