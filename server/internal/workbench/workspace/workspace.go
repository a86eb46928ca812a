// Package workspace owns the exec workbench's workspaces: one directory per
// user and plan under one root, quotas on bytes, entries and plans, idle
// release, and idempotent release. Every host-side file access goes
// through an os.Root opened on the workspace, never through joined path
// strings, so '..', absolute paths and symlinks that lead outside fail in
// the kernel-checked resolution of os.Root. It runs no commands: the shell
// layer opens files through Workspace.OpenFile.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/workbench-dev/workbench/failure"
)

// Defaults of Limits.
const (
	DefaultMaxBytes = 512 << 20
	DefaultMaxFiles = 10000
	DefaultMaxPlans = 20
	DefaultIdle     = 24 * time.Hour
)

// Limits bound the workspaces. Zero fields mean the defaults.
type Limits struct {
	// MaxBytes caps the bytes of regular files in one workspace
	// (WORKBENCH_MAX_BYTES).
	MaxBytes int64
	// MaxFiles caps the entries (files, directories, links) of one
	// workspace (WORKBENCH_MAX_FILES).
	MaxFiles int
	// MaxPlans caps the workspaces of one user (WORKBENCH_MAX_PLANS).
	MaxPlans int
	// Idle is how long a workspace lives unused (WORKBENCH_IDLE_SECONDS).
	Idle time.Duration
}

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	if l.MaxBytes == 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxFiles == 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxPlans == 0 {
		l.MaxPlans = DefaultMaxPlans
	}
	if l.Idle == 0 {
		l.Idle = DefaultIdle
	}
	return l
}

// DefaultPlan is the plan of a call that names none.
const DefaultPlan = "default"

var (
	planPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	userPattern = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)
)

// Set is every workspace under one root directory, laid out
// <root>/<user>/<plan>. It is safe for concurrent use; the operations on
// one workspace run one at a time.
type Set struct {
	root   *os.Root
	limits Limits
	now    func() time.Time

	mu     sync.Mutex
	spaces map[string]*Workspace // open workspaces by user/plan
}

// Open opens (creating it 0700) the root directory dir.
func Open(dir string, limits Limits) (*Set, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("workbench root: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("workbench root: %w", err)
	}
	return &Set{root: root, limits: limits.WithDefaults(), now: time.Now, spaces: map[string]*Workspace{}}, nil
}

// Limits returns the limits in force.
func (s *Set) Limits() Limits { return s.limits }

// checkNames validates a user ID and a plan name.
func checkNames(user, plan string) error {
	if !userPattern.MatchString(user) {
		return failure.Errorf(failure.InvalidArguments, "the call's user ID is not usable as a workspace owner")
	}
	if !planPattern.MatchString(plan) {
		return failure.Errorf(failure.InvalidArguments, "plan %q: a plan is 1 to 63 characters of a-z, 0-9 and '-', starting with a letter or digit", plan)
	}
	return nil
}

// Use runs fn on the workspace of user and plan, after the operations on
// it before. A missing workspace is created when create is set (within
// WORKBENCH_MAX_PLANS), and is NOT_FOUND otherwise. ctx passed to fn is
// canceled if the workspace is released meanwhile.
func (s *Set) Use(ctx context.Context, user, plan string, create bool, fn func(ctx context.Context, w *Workspace) error) error {
	if err := checkNames(user, plan); err != nil {
		return err
	}
	w, err := s.acquire(user, plan, create)
	if err != nil {
		return err
	}
	defer s.unuse(w)
	w.mu.Lock()
	defer w.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w.setCancel(cancel)
	defer w.setCancel(nil)
	if w.released.Load() {
		return failure.Errorf(failure.NotFound, "plan %q was released", plan)
	}
	return fn(ctx, w)
}

// acquire returns the open workspace of user and plan, opening or
// creating it, and counts one more user of it.
func (s *Set) acquire(user, plan string, create bool) (*Workspace, error) {
	key := user + "/" + plan
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.spaces[key]; ok {
		w.users++
		return w, nil
	}
	if _, err := s.root.Lstat(key); errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, failure.Errorf(failure.NotFound, "plan %q does not exist; write a file or run a command to create it", plan)
		}
		if err := s.checkPlans(user); err != nil {
			return nil, err
		}
		if err := s.root.MkdirAll(key, 0o700); err != nil {
			return nil, fmt.Errorf("creating workspace: %w", err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	root, err := s.root.OpenRoot(key)
	if err != nil {
		return nil, fmt.Errorf("opening workspace: %w", err)
	}
	w := &Workspace{set: s, key: key, plan: plan, root: root, users: 1}
	if err := w.Measure(); err != nil {
		root.Close()
		return nil, err
	}
	s.spaces[key] = w
	return w, nil
}

// checkPlans refuses a new plan for a user at WORKBENCH_MAX_PLANS.
func (s *Set) checkPlans(user string) error {
	plans, err := fs.ReadDir(s.root.FS(), user)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing plans: %w", err)
	}
	if len(plans) >= s.limits.MaxPlans {
		return failure.Errorf(failure.LimitExceeded, "you have %d plans, the limit (WORKBENCH_MAX_PLANS); release one with workbench_release", len(plans))
	}
	return nil
}

// unuse records the end of one use of w: its time of last use, and closes
// it when nobody uses it.
func (s *Set) unuse(w *Workspace) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.users--
	if w.released.Load() {
		return
	}
	now := s.now()
	_ = s.root.Chtimes(w.key, now, now) // the idle clock; a failure only delays release
	if w.users == 0 {
		w.root.Close()
		delete(s.spaces, w.key)
	}
}

// Release deletes the workspace of user and plan, canceling an operation
// running in it and waiting for it to end. Releasing a workspace that does
// not exist succeeds.
func (s *Set) Release(user, plan string) error {
	if err := checkNames(user, plan); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.releaseLocked(user + "/" + plan)
}

func (s *Set) releaseLocked(key string) error {
	if w, ok := s.spaces[key]; ok {
		w.released.Store(true)
		w.cancelMu.Lock()
		if w.cancel != nil {
			w.cancel()
		}
		w.cancelMu.Unlock()
		w.mu.Lock() // the operation in flight ends on its canceled context
		w.root.Close()
		w.mu.Unlock()
		delete(s.spaces, key)
	}
	if err := s.root.RemoveAll(key); err != nil {
		return fmt.Errorf("releasing workspace: %w", err)
	}
	return nil
}

// Sweep releases every workspace unused for longer than the idle limit
// at now, and returns how many it released.
func (s *Set) Sweep(now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	users, err := fs.ReadDir(s.root.FS(), ".")
	if err != nil {
		return 0, fmt.Errorf("sweeping workspaces: %w", err)
	}
	released := 0
	var errs []error
	for _, u := range users {
		plans, err := fs.ReadDir(s.root.FS(), u.Name())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range plans {
			key := u.Name() + "/" + p.Name()
			info, err := p.Info()
			if err != nil || s.spaces[key] != nil || now.Sub(info.ModTime()) <= s.limits.Idle {
				continue
			}
			if err := s.releaseLocked(key); err != nil {
				errs = append(errs, err)
				continue
			}
			released++
		}
	}
	return released, errors.Join(errs...)
}

// sweepEvery is how often Run sweeps: a quarter of the idle limit, at
// most every minute.
func (s *Set) sweepEvery() time.Duration {
	return min(s.limits.Idle/4, time.Minute)
}

// Run sweeps idle workspaces until ctx ends.
func (s *Set) Run(ctx context.Context) {
	t := time.NewTicker(s.sweepEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			_, _ = s.Sweep(now) // a failed sweep is retried at the next tick
		}
	}
}

// Close closes the root; workspaces in use keep their own roots until
// their operation ends.
func (s *Set) Close() error { return s.root.Close() }

// Workspace is one open workspace. Its methods are called inside Set.Use,
// one operation at a time.
type Workspace struct {
	set  *Set
	key  string
	plan string
	root *os.Root

	users    int // under set.mu
	released atomic.Bool
	// Held by the operation in flight.
	mu sync.Mutex
	// Under cancelMu: cancels the operation in flight.
	cancelMu sync.Mutex
	cancel   context.CancelFunc
	// Under countMu: the commands of a pipeline write concurrently.
	countMu sync.Mutex
	bytes   int64 // regular file bytes, measured then charged
	files   int   // entries, measured then charged
	refused error // the last charge refused, until TakeRefusal
}

func (w *Workspace) setCancel(cancel context.CancelFunc) {
	w.cancelMu.Lock()
	w.cancel = cancel
	w.cancelMu.Unlock()
}

// Plan returns the workspace's plan name.
func (w *Workspace) Plan() string { return w.plan }

// Usage returns the bytes and entries counted in the workspace.
func (w *Workspace) Usage() (bytes int64, files int) {
	w.countMu.Lock()
	defer w.countMu.Unlock()
	return w.bytes, w.files
}

// Measure counts the workspace's bytes and entries afresh.
func (w *Workspace) Measure() error {
	var bytes int64
	files := 0
	err := fs.WalkDir(w.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		files++
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			bytes += info.Size()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("measuring workspace: %w", err)
	}
	w.countMu.Lock()
	w.bytes, w.files = bytes, files
	w.countMu.Unlock()
	return nil
}

// Path checks a workspace path written by the agent and returns it
// cleaned: relative, without '..', "." for the workspace itself.
func Path(p string) (string, error) {
	if p == "" || p == "." || p == "./" {
		return ".", nil
	}
	if strings.ContainsRune(p, 0) || !filepath.IsLocal(p) {
		return "", failure.Errorf(failure.PathNotAllowed, "path %q: paths are relative to the workspace and may not contain '..'", p)
	}
	return filepath.Clean(p), nil
}

// pathError turns an os.Root error into a coded one.
func pathError(p string, err error) error {
	switch {
	case err == nil:
		return nil
	case escapes(err):
		return &failure.Error{Code: failure.PathNotAllowed, Message: fmt.Sprintf("path %q leads outside the workspace (through a symlink or '..')", p), Cause: err}
	case errors.Is(err, fs.ErrNotExist):
		return &failure.Error{Code: failure.NotFound, Message: fmt.Sprintf("path %q does not exist", p), Cause: err}
	}
	var fe *failure.Error
	if errors.As(err, &fe) {
		return fe
	}
	return fmt.Errorf("path %q: %w", p, err)
}

// escapes reports whether err is os.Root's refusal of a path that
// escapes the root (its sentinel is unexported; a test pins the text).
func escapes(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// charge counts bytes and entries more against the quotas, or refuses
// both, naming the limit, if either would go over.
func (w *Workspace) charge(bytes int64, files int) error {
	w.countMu.Lock()
	defer w.countMu.Unlock()
	lim := w.set.limits
	switch {
	case w.files+files > lim.MaxFiles:
		w.refused = failure.Errorf(failure.LimitExceeded, "the workspace would hold %d entries, over the limit of %d (WORKBENCH_MAX_FILES)", w.files+files, lim.MaxFiles)
	case w.bytes+bytes > lim.MaxBytes:
		w.refused = failure.Errorf(failure.LimitExceeded, "the workspace would hold %d bytes, over the limit of %d (WORKBENCH_MAX_BYTES)", w.bytes+bytes, lim.MaxBytes)
	default:
		w.bytes += bytes
		w.files += files
		return nil
	}
	return w.refused
}

// TakeRefusal returns the last quota refusal since the previous call, and
// forgets it: the shell reports it even when a command ignored its write
// error.
func (w *Workspace) TakeRefusal() error {
	w.countMu.Lock()
	defer w.countMu.Unlock()
	err := w.refused
	w.refused = nil
	return err
}

// missingDirs counts the directories MkdirAll would create for dir.
func (w *Workspace) missingDirs(dir string) int {
	n := 0
	for ; dir != "." && dir != "/"; dir = filepath.Dir(dir) {
		if _, err := w.root.Lstat(dir); err == nil {
			break
		}
		n++
	}
	return n
}

// WriteFile creates or replaces the file at p with data, creating its
// parent directories, within the quotas.
func (w *Workspace) WriteFile(p string, data []byte) error {
	clean, err := Path(p)
	if err != nil {
		return err
	}
	if clean == "." {
		return failure.Errorf(failure.PathNotAllowed, "path %q names the workspace itself, not a file", p)
	}
	var old int64
	newFiles := 0
	if info, err := w.root.Stat(clean); err == nil {
		if info.IsDir() {
			return failure.Errorf(failure.InvalidArguments, "path %q is a directory", p)
		}
		old = info.Size()
	} else if errors.Is(err, fs.ErrNotExist) {
		newFiles = 1 + w.missingDirs(filepath.Dir(clean))
	} else {
		return pathError(p, err)
	}
	if err := w.charge(int64(len(data))-old, newFiles); err != nil {
		return err
	}
	if dir := filepath.Dir(clean); dir != "." {
		if err := w.root.MkdirAll(dir, 0o700); err != nil {
			return w.remeasure(pathError(p, err))
		}
	}
	return w.remeasure(pathError(p, w.root.WriteFile(clean, data, 0o600)))
}

// remeasure counts the workspace afresh after a failed change, and
// returns err.
func (w *Workspace) remeasure(err error) error {
	if err != nil {
		_ = w.Measure() // the counts stay charged if the walk fails: safe side
	}
	return err
}

// Stat returns the information of the file at p, following links inside
// the workspace.
func (w *Workspace) Stat(p string) (fs.FileInfo, error) {
	clean, err := Path(p)
	if err != nil {
		return nil, err
	}
	info, err := w.root.Stat(clean)
	return info, pathError(p, err)
}

// ReadAt reads up to limit bytes of the file at p from offset, and
// returns them with the file's size.
func (w *Workspace) ReadAt(p string, offset, limit int64) (data []byte, size int64, err error) {
	clean, err := Path(p)
	if err != nil {
		return nil, 0, err
	}
	f, err := w.root.Open(clean)
	if err != nil {
		return nil, 0, pathError(p, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, pathError(p, err)
	}
	if !info.Mode().IsRegular() {
		return nil, 0, failure.Errorf(failure.InvalidArguments, "path %q is not a regular file", p)
	}
	if offset >= info.Size() {
		return nil, info.Size(), nil
	}
	data = make([]byte, min(limit, info.Size()-offset))
	n, err := f.ReadAt(data, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, pathError(p, err)
	}
	return data[:n], info.Size(), nil
}

// Lstat is Stat without following a final link.
func (w *Workspace) Lstat(p string) (fs.FileInfo, error) {
	clean, err := Path(p)
	if err != nil {
		return nil, err
	}
	info, err := w.root.Lstat(clean)
	return info, pathError(p, err)
}

// ReadDir returns the entries of the directory at p, sorted by name.
func (w *Workspace) ReadDir(p string) ([]fs.DirEntry, error) {
	clean, err := Path(p)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(w.root.FS(), clean)
	if err != nil {
		// fs.ReadDir of os.Root's FS reports escapes like any open.
		return nil, pathError(p, err)
	}
	return entries, nil
}

// Remove deletes the file or directory tree at p; a link is removed, not
// followed.
func (w *Workspace) Remove(p string) error {
	clean, err := Path(p)
	if err != nil {
		return err
	}
	if clean == "." {
		return failure.Errorf(failure.PathNotAllowed, "path %q names the workspace itself; use workbench_release", p)
	}
	if _, err := w.root.Lstat(clean); err != nil {
		return pathError(p, err)
	}
	if err := w.root.RemoveAll(clean); err != nil {
		return w.remeasure(pathError(p, err))
	}
	return w.Measure()
}

// OpenFile opens the file at p for the shell layer. A file opened for
// writing is charged for every byte written, and a file it creates for
// one entry, until the next Measure settles the counts.
func (w *Workspace) OpenFile(p string, flag int, perm fs.FileMode) (io.ReadWriteCloser, error) {
	clean, err := Path(p)
	if err != nil {
		return nil, err
	}
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		f, err := w.root.OpenFile(clean, flag, 0)
		return f, pathError(p, err)
	}
	if flag&os.O_CREATE != 0 {
		if _, err := w.root.Lstat(clean); errors.Is(err, fs.ErrNotExist) {
			if err := w.charge(0, 1); err != nil {
				return nil, err
			}
		}
	}
	f, err := w.root.OpenFile(clean, flag, perm&0o700)
	if err != nil {
		return nil, w.remeasure(pathError(p, err))
	}
	return &chargedFile{f: f, w: w}, nil
}

// chargedFile charges each write to the workspace's byte quota. It holds
// the file rather than embedding it, so WriteString and ReadFrom cannot
// bypass Write.
type chargedFile struct {
	f *os.File
	w *Workspace
}

func (c *chargedFile) Read(b []byte) (int, error) { return c.f.Read(b) }

func (c *chargedFile) Write(b []byte) (int, error) {
	if err := c.w.charge(int64(len(b)), 0); err != nil {
		return 0, err
	}
	return c.f.Write(b)
}

func (c *chargedFile) Close() error { return c.f.Close() }
