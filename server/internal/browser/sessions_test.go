package browser

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/workbench-dev/workbench/failure"
)

// drive runs actions on sess's tab, bounded by testTimeout.
func drive(t *testing.T, sess *Session, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(sess.tab, testTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// eval evaluates a string expression on sess's tab.
func eval(t *testing.T, sess *Session, expr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(sess.tab, testTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// fakeLaunch makes m start fake sessions: a launch for a user in block
// sends the user on spawning (when not nil) and waits until the user's
// channel is closed, and every session's close waits for closing. It
// returns a func that reports how many sessions were closed.
func fakeLaunch(m *Manager, block map[string]chan struct{}, spawning chan<- string, closing chan struct{}) func() int {
	var mu sync.Mutex
	closed := 0
	m.launch = func(user, _ string) (*Session, error) {
		if ch := block[user]; ch != nil {
			spawning <- user
			<-ch
		}
		s := &Session{turn: make(chan struct{}, 1), end: func() error {
			<-closing
			mu.Lock()
			defer mu.Unlock()
			closed++
			return nil
		}}
		s.unlock()
		return s, nil
	}
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return closed
	}
}

// acquireAsync acquires and releases user's session in the background and
// sends Acquire's error.
func acquireAsync(ctx context.Context, m *Manager, user string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, release, err := m.Acquire(ctx, user)
		if err == nil {
			release()
		}
		done <- err
	}()
	return done
}

func TestManager_Acquire_badUser(t *testing.T) {
	m, err := NewManager(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	fakeLaunch(m, nil, nil, nil)
	tests := []struct{ name, user string }{
		{"empty", ""},
		{"parent", ".."},
		{"path", "a/b"},
		{"backslash", `a\b`},
		{"dot", "u.1"},
		{"nul", "u\x00"},
		{"long", string(make([]byte, maxUserLen+1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := m.Acquire(context.Background(), tt.user)
			wantCode(t, err, failure.InvalidArguments, "user ID")
			if m.alive() != 0 {
				t.Fatalf("alive() = %d after a refused user", m.alive())
			}
		})
	}
}

// TestManager_Acquire_neverBlocksOthers: one user's spawn in flight and
// another's teardown in flight delay no other user's Acquire.
func TestManager_Acquire_neverBlocksOthers(t *testing.T) {
	m, err := NewManager(Options{Dir: t.TempDir(), TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	bobSpawn, closing := make(chan struct{}), make(chan struct{})
	spawning := make(chan string, 1)
	closed := fakeLaunch(m, map[string]chan struct{}{"bob": bobSpawn}, spawning, closing)
	ctx := testContext(t)
	clock := time.Now()
	m.now = func() time.Time { return clock }

	for _, u := range []string{"alice", "carol"} {
		_, release, err := m.Acquire(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	bobDone := acquireAsync(ctx, m, "bob")
	<-spawning
	// Bob's spawn is blocked; alice's warm session answers anyway.
	if _, release, err := m.Acquire(ctx, "alice"); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
	// Carol goes idle and her teardown blocks in close; the sweep returns
	// and alice is still served.
	_, holdAlice, err := m.Acquire(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(2 * time.Minute)
	m.sweep()
	if _, release, err := m.Acquire(ctx, "alice"); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
	if got := m.alive(); got != 3 {
		t.Fatalf("alive() = %d with alice alive, bob spawning and carol exiting; want 3", got)
	}
	// Carol comes back while her old browser exits: she waits for it (her
	// profile is still in use) until her call's deadline.
	short, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err = m.Acquire(short, "carol")
	wantCode(t, err, failure.Canceled, "previous browser to exit")

	close(bobSpawn)
	if err := <-bobDone; err != nil {
		t.Fatalf("bob: %v", err)
	}
	close(closing)
	holdAlice()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if got := closed(); got != 3 {
		t.Fatalf("%d sessions closed, want 3 (carol by the sweep, alice and bob by Close)", got)
	}
	_, _, err = m.Acquire(ctx, "alice")
	wantCode(t, err, failure.Unavailable, "shutting down")
}

// TestManager_Acquire_capacity: concurrent users past BROWSER_MAX_SESSIONS
// get BROWSER_CAPACITY, and the cap counts real browsers.
func TestManager_Acquire_capacity(t *testing.T) {
	m := newTestManager(t, Options{MaxSessions: 2})
	ctx := testContext(t)
	const users = 5
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ok       int
		refusals []error
	)
	for i := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, release, err := m.Acquire(ctx, fmt.Sprintf("user%d", i))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				refusals = append(refusals, err)
				return
			}
			ok++
			t.Cleanup(release)
		}()
	}
	wg.Wait()
	if ok != 2 || len(refusals) != users-2 {
		t.Fatalf("%d sessions and %d refusals, want 2 and %d: %v", ok, len(refusals), users-2, refusals)
	}
	for _, err := range refusals {
		wantCode(t, err, failure.BrowserCapacity, "all 2 browser sessions", "BROWSER_MAX_SESSIONS")
	}
	if got := m.alive(); got != 2 {
		t.Fatalf("alive() = %d, want 2", got)
	}
}

// TestManager_sweep_keepsProfile: an idle session's browser is killed and
// the next Acquire starts a new one on the same profile, where a cookie set
// before is still there.
func TestManager_sweep_keepsProfile(t *testing.T) {
	page := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/set" {
			http.SetCookie(w, &http.Cookie{Name: "kept", Value: "yes", MaxAge: 3600, Path: "/"})
		}
		fmt.Fprint(w, "<p>hello</p>")
	}))
	m := newTestManager(t, Options{TTL: time.Minute, Egress: dialer(page)})
	clock := time.Now()
	m.now = func() time.Time { return clock }
	ctx := testContext(t)

	first, release, err := m.Acquire(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	drive(t, first, chromedp.Navigate(page.URL+"/set"))
	release()

	clock = clock.Add(59 * time.Second)
	m.sweep()
	if again, release, err := m.Acquire(ctx, "alice"); err != nil || again != first {
		t.Fatalf("Acquire before the TTL = %p, %v; want the same session %p", again, err, first)
	} else {
		release()
	}

	clock = clock.Add(time.Minute)
	m.sweep()
	<-first.tab.Done() // the browser is gone
	second, release, err := m.Acquire(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatal("Acquire after the TTL returned the killed session")
	}
	drive(t, second, chromedp.Navigate(page.URL+"/read"))
	if got := eval(t, second, "document.cookie"); got != "kept=yes" {
		t.Fatalf("cookie after respawn = %q, want kept=yes", got)
	}
	if got := m.alive(); got != 1 {
		t.Fatalf("alive() = %d, want 1", got)
	}

	// A reset is what loses the profile.
	release()
	if err := m.Reset(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	<-second.tab.Done()
	third, release, err := m.Acquire(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	drive(t, third, chromedp.Navigate(page.URL+"/read"))
	if got := eval(t, third, "document.cookie"); got != "" {
		t.Fatalf("cookie after a reset = %q, want none", got)
	}
}

// TestManager_Acquire_sandboxAsRoot: as root, a browser starts without its
// sandbox only when the operator allowed it.
func TestManager_Acquire_sandboxAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the refusal applies only there")
	}
	m, err := NewManager(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, _, err = m.Acquire(testContext(t), "alice")
	wantCode(t, err, failure.Unavailable, "BROWSER_ALLOW_NO_SANDBOX")
	if m.alive() != 0 {
		t.Fatalf("alive() = %d after a refused spawn", m.alive())
	}
}

// TestManager_Acquire_brokenChromium: a browser that exits or never gets
// ready within the spawn timeout is UNAVAILABLE, and its slot under the
// cap is free again.
func TestManager_Acquire_brokenChromium(t *testing.T) {
	tests := []struct{ name, script, want string }{
		{"exits", "exit 3", "did not start"},
		{"hangs", "exec sleep 600", "did not start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exe := filepath.Join(t.TempDir(), "chromium")
			if err := os.WriteFile(exe, []byte("#!/bin/sh\n"+tt.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			m, err := NewManager(Options{Dir: t.TempDir(), ExecPath: exe, NoSandbox: true, MaxSessions: 1, SpawnTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for range 2 { // the second proves the slot was freed
				_, _, err = m.Acquire(testContext(t), "alice")
				wantCode(t, err, failure.Unavailable, tt.want)
			}
			if m.alive() != 0 {
				t.Fatalf("alive() = %d after failed spawns", m.alive())
			}
		})
	}
}
