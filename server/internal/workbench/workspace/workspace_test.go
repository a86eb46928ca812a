package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/workbench/workspace"
)

const user = "usr_alice"

func openSet(t *testing.T, limits workspace.Limits) (*workspace.Set, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := workspace.Open(dir, limits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// use runs fn in user's plan, creating it.
func use(t *testing.T, s *workspace.Set, plan string, fn func(w *workspace.Workspace) error) error {
	t.Helper()
	return s.Use(context.Background(), user, plan, true, func(_ context.Context, w *workspace.Workspace) error { return fn(w) })
}

func wantCode(t *testing.T, err error, code failure.Code, mention string) {
	t.Helper()
	var fe *failure.Error
	if !errors.As(err, &fe) || fe.Code != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
	if !strings.Contains(fe.Message, mention) {
		t.Errorf("message %q does not mention %q", fe.Message, mention)
	}
}

func TestPath(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"", ".", true},
		{".", ".", true},
		{"a.txt", "a.txt", true},
		{"a/b/../c", "a/c", true},
		{"./a", "a", true},
		{"/etc/passwd", "", false},
		{"..", "", false},
		{"../x", "", false},
		{"a/../../x", "", false},
		{"a\x00b", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := workspace.Path(tt.in)
			if !tt.ok {
				wantCode(t, err, failure.PathNotAllowed, "")
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Path(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestWorkspace_symlinkEscape creates links to / and above the workspace
// inside it, then reads, writes, lists and opens through them.
func TestWorkspace_symlinkEscape(t *testing.T) {
	s, dir := openSet(t, workspace.Limits{})
	if err := use(t, s, "p", func(w *workspace.Workspace) error { return w.WriteFile("in.txt", []byte("inside")) }); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, user, "p")
	for name, target := range map[string]string{"root": "/", "up": "../..", "upfile": "../../../etc/passwd", "in": "in.txt"} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		op   func(w *workspace.Workspace) error
	}{
		{"read through link to /", func(w *workspace.Workspace) error { _, _, err := w.ReadAt("root/etc/passwd", 0, 10); return err }},
		{"read relative link up", func(w *workspace.Workspace) error { _, _, err := w.ReadAt("upfile", 0, 10); return err }},
		{"write through link to /", func(w *workspace.Workspace) error { return w.WriteFile("root/tmp/escaped", []byte("x")) }},
		{"write through relative link", func(w *workspace.Workspace) error { return w.WriteFile("up/escaped", []byte("x")) }},
		{"list through link to /", func(w *workspace.Workspace) error { _, err := w.ReadDir("root"); return err }},
		{"stat through link", func(w *workspace.Workspace) error { _, err := w.Stat("root/etc"); return err }},
		{"open for write through link", func(w *workspace.Workspace) error {
			_, err := w.OpenFile("root/tmp/escaped", os.O_WRONLY|os.O_CREATE, 0o600)
			return err
		}},
		{"delete through link", func(w *workspace.Workspace) error { return w.Remove("root/tmp") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := use(t, s, "p", tt.op)
			wantCode(t, err, failure.PathNotAllowed, "outside the workspace")
		})
	}
	if _, err := os.Stat("/tmp/escaped"); err == nil {
		t.Error("/tmp/escaped was written")
	}
	// A link inside the workspace works, and deleting a link keeps its target.
	err := use(t, s, "p", func(w *workspace.Workspace) error {
		data, _, err := w.ReadAt("in", 0, 100)
		if err != nil || string(data) != "inside" {
			t.Errorf("ReadAt(in) = %q, %v", data, err)
		}
		return w.Remove("root")
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Errorf("removing the link removed its target: %v", err)
	}
}

func TestWorkspace_quotas(t *testing.T) {
	s, _ := openSet(t, workspace.Limits{MaxBytes: 10, MaxFiles: 3, MaxPlans: 2})
	tests := []struct {
		name    string
		op      func(w *workspace.Workspace) error
		mention string // "" means success
	}{
		{"within bytes", func(w *workspace.Workspace) error { return w.WriteFile("a", []byte("12345678")) }, ""},
		{"over bytes", func(w *workspace.Workspace) error { return w.WriteFile("b", []byte("123")) }, "WORKBENCH_MAX_BYTES"},
		{"replace within bytes", func(w *workspace.Workspace) error { return w.WriteFile("a", []byte("1234567890")) }, ""},
		{"shrink", func(w *workspace.Workspace) error { return w.WriteFile("a", []byte("1")) }, ""},
		{"nested file counts its directory", func(w *workspace.Workspace) error { return w.WriteFile("d/b", []byte("1")) }, ""},
		{"over files", func(w *workspace.Workspace) error { return w.WriteFile("c", nil) }, "WORKBENCH_MAX_FILES"},
		{"shell write over bytes", func(w *workspace.Workspace) error {
			f, err := w.OpenFile("a", os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Write([]byte("123456789"))
			return err
		}, "WORKBENCH_MAX_BYTES"},
		{"shell create over files", func(w *workspace.Workspace) error {
			_, err := w.OpenFile("new", os.O_WRONLY|os.O_CREATE, 0o600)
			return err
		}, "WORKBENCH_MAX_FILES"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := use(t, s, "p", tt.op)
			if tt.mention == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, failure.LimitExceeded, tt.mention)
		})
	}
	if err := use(t, s, "second", func(*workspace.Workspace) error { return nil }); err != nil {
		t.Fatal(err)
	}
	err := use(t, s, "third", func(*workspace.Workspace) error { return nil })
	wantCode(t, err, failure.LimitExceeded, "WORKBENCH_MAX_PLANS")
}

func TestSet_Use(t *testing.T) {
	s, _ := openSet(t, workspace.Limits{})
	tests := []struct {
		name, user, plan string
		create           bool
		code             failure.Code
	}{
		{"bad plan", user, "Bad", true, failure.InvalidArguments},
		{"plan with slash", user, "a/b", true, failure.InvalidArguments},
		{"plan dot-dot", user, "..", true, failure.InvalidArguments},
		{"long plan", user, strings.Repeat("a", 64), true, failure.InvalidArguments},
		{"bad user", "../usr_bob", "p", true, failure.InvalidArguments},
		{"missing without create", user, "never", false, failure.NotFound},
		{"created", user, "made", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Use(context.Background(), tt.user, tt.plan, tt.create, func(context.Context, *workspace.Workspace) error { return nil })
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, tt.code, "")
		})
	}
	// Another user's plan of the same name is another workspace.
	if err := use(t, s, "shared", func(w *workspace.Workspace) error { return w.WriteFile("secret", []byte("alice")) }); err != nil {
		t.Fatal(err)
	}
	err := s.Use(context.Background(), "usr_bob", "shared", true, func(_ context.Context, w *workspace.Workspace) error {
		_, _, err := w.ReadAt("secret", 0, 10)
		return err
	})
	wantCode(t, err, failure.NotFound, "secret")
}

func TestSet_Release(t *testing.T) {
	s, dir := openSet(t, workspace.Limits{})
	if err := s.Release(user, "never"); err != nil {
		t.Errorf("releasing a plan that never existed: %v", err)
	}
	if err := use(t, s, "p", func(w *workspace.Workspace) error { return w.WriteFile("a/b", []byte("x")) }); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := s.Release(user, "p"); err != nil {
			t.Fatalf("release %d: %v", i+1, err)
		}
		if _, err := os.Stat(filepath.Join(dir, user, "p")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("after release %d the workspace is still there: %v", i+1, err)
		}
	}
}

// TestSet_Release_whileInUse releases a plan while an operation runs in it:
// the operation's context is canceled and the release waits for it.
func TestSet_Release_whileInUse(t *testing.T) {
	s, dir := openSet(t, workspace.Limits{})
	started, ended := make(chan struct{}), make(chan struct{})
	result := make(chan error, 1)
	go func() {
		result <- s.Use(context.Background(), user, "busy", true, func(ctx context.Context, w *workspace.Workspace) error {
			close(started)
			<-ctx.Done()
			_ = w.WriteFile("late", []byte("x")) // lands before the removal, which takes it
			close(ended)
			return ctx.Err()
		})
	}()
	<-started
	if err := s.Release(user, "busy"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	default:
		t.Fatal("Release returned before the operation in the workspace ended")
	}
	if err := <-result; !errors.Is(err, context.Canceled) {
		t.Errorf("the operation ended with %v, want its context canceled", err)
	}
	if _, err := os.Stat(filepath.Join(dir, user, "busy")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the released workspace is still there: %v", err)
	}
}

func TestSet_Sweep(t *testing.T) {
	s, dir := openSet(t, workspace.Limits{Idle: time.Hour})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.SetNow(func() time.Time { return t0 })
	for _, plan := range []string{"old", "fresh"} {
		if err := use(t, s, plan, func(w *workspace.Workspace) error { return w.WriteFile("f", nil) }); err != nil {
			t.Fatal(err)
		}
	}
	s.SetNow(func() time.Time { return t0.Add(50 * time.Minute) })
	if err := use(t, s, "fresh", func(*workspace.Workspace) error { return nil }); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		at   time.Duration
		want int
		left []string
	}{
		{59 * time.Minute, 0, []string{"fresh", "old"}},
		{61 * time.Minute, 1, []string{"fresh"}},
		{111 * time.Minute, 1, nil},
	}
	for _, tt := range tests {
		n, err := s.Sweep(t0.Add(tt.at))
		if err != nil || n != tt.want {
			t.Errorf("Sweep(+%v) = %d, %v; want %d", tt.at, n, err, tt.want)
		}
		entries, _ := os.ReadDir(filepath.Join(dir, user))
		var left []string
		for _, e := range entries {
			left = append(left, e.Name())
		}
		if strings.Join(left, ",") != strings.Join(tt.left, ",") {
			t.Errorf("after Sweep(+%v) plans %v, want %v", tt.at, left, tt.left)
		}
	}
}
