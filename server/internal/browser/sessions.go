package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/egress"
)

// Defaults of Options.
const (
	DefaultTTL          = 300 * time.Second
	DefaultMaxSessions  = 8
	DefaultSpawnTimeout = 30 * time.Second
	// closeTimeout bounds a graceful browser close before the process is
	// killed.
	closeTimeout = 10 * time.Second
	// maxSweepInterval bounds how long an expired session outlives its TTL.
	maxSweepInterval = 15 * time.Second
)

// Options configures a Manager. Every zero value has a documented default.
type Options struct {
	// Dir holds one profile directory per user (DATA_DIR/browser); it is
	// required.
	Dir string
	// ExecPath is the Chromium binary; "" means the first of chromium,
	// chromium-browser and google-chrome found on PATH.
	ExecPath string
	// TTL is how long a session may stay idle before its browser is killed
	// (BROWSER_SESSION_TTL_SECONDS); 0 means DefaultTTL.
	TTL time.Duration
	// MaxSessions caps the browsers alive at once, across users
	// (BROWSER_MAX_SESSIONS); 0 means DefaultMaxSessions.
	MaxSessions int
	// SpawnTimeout bounds starting one browser; 0 means DefaultSpawnTimeout.
	SpawnTimeout time.Duration
	// Egress dials every connection a browser makes; nil means
	// egress.NewClient with the production address rule.
	Egress Dialer
	// NoSandbox runs Chromium without its own sandbox, which it needs when
	// the server runs as root (BROWSER_ALLOW_NO_SANDBOX=1).
	NoSandbox bool
	// Logger receives spawn and teardown records; nil discards them.
	Logger *slog.Logger
}

// Manager owns every user's browser session. It is safe for concurrent use.
// Spawning and tearing down a browser happen outside its lock, so neither
// delays another user's call.
type Manager struct {
	dir       string
	execPath  string
	ttl       time.Duration
	max       int
	spawnWait time.Duration
	egress    Dialer
	noSandbox bool
	logger    *slog.Logger
	// launch starts one browser; tests replace it.
	launch func(user, profile string) (*Session, error)
	// now is the clock of the idle sweep; tests replace it.
	now func() time.Time

	base context.Context // parent of every browser; canceled by Close
	stop context.CancelFunc
	work sync.WaitGroup // spawns and teardowns in flight

	mu       sync.Mutex
	slots    map[string]*slot         // by user: spawning or alive
	leaving  map[string]chan struct{} // by user: closed when the torn-down browser has exited
	live     int                      // browsers spawning, alive or exiting; at most max
	shutdown bool
}

// slot is one user's session while it spawns and lives.
type slot struct {
	ready     chan struct{} // closed when the spawn ended; sess or err is set
	sess      *Session
	err       error
	users     int // calls holding the session
	idleSince time.Time
}

// NewManager returns a Manager configured by o. It starts no browser.
func NewManager(o Options) (*Manager, error) {
	if o.Dir == "" {
		return nil, errors.New("browser: Options.Dir is required")
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("browser: profiles directory: %w", err)
	}
	m := &Manager{
		dir: o.Dir, execPath: o.ExecPath, ttl: o.TTL, max: o.MaxSessions, spawnWait: o.SpawnTimeout,
		egress: o.Egress, noSandbox: o.NoSandbox, logger: o.Logger, now: time.Now,
		slots: make(map[string]*slot), leaving: make(map[string]chan struct{}),
	}
	if m.ttl <= 0 {
		m.ttl = DefaultTTL
	}
	if m.max <= 0 {
		m.max = DefaultMaxSessions
	}
	if m.spawnWait <= 0 {
		m.spawnWait = DefaultSpawnTimeout
	}
	if m.egress == nil {
		m.egress = egress.NewClient(egress.Options{})
	}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	m.base, m.stop = context.WithCancel(context.Background())
	m.launch = m.startChromium
	return m, nil
}

// Acquire returns user's session, spawning its browser when it has none,
// and a release func the caller must call once when done. It waits for a
// spawn in flight for the same user (or for the user's previous browser to
// exit) until ctx ends. Past the cap it fails with BROWSER_CAPACITY at once.
func (m *Manager) Acquire(ctx context.Context, user string) (*Session, func(), error) {
	if err := checkUser(user); err != nil {
		return nil, nil, err
	}
	for {
		m.mu.Lock()
		if m.shutdown {
			m.mu.Unlock()
			return nil, nil, failure.Errorf(failure.Unavailable, "browser sessions are shutting down")
		}
		if gone := m.leaving[user]; gone != nil && m.slots[user] == nil {
			m.mu.Unlock()
			if err := waitFor(ctx, gone, "your previous browser to exit"); err != nil {
				return nil, nil, err
			}
			continue
		}
		s := m.slots[user]
		if s == nil {
			if m.live >= m.max {
				m.mu.Unlock()
				return nil, nil, failure.Errorf(failure.BrowserCapacity,
					"all %d browser sessions (BROWSER_MAX_SESSIONS) are in use by other users; try again after one has been idle for %s (BROWSER_SESSION_TTL_SECONDS)",
					m.max, m.ttl)
			}
			s = &slot{ready: make(chan struct{})}
			m.slots[user] = s
			m.live++
			m.work.Add(1)
			go m.spawn(user, s)
		}
		s.users++
		m.mu.Unlock()
		if err := waitFor(ctx, s.ready, "your browser to start"); err != nil {
			m.release(s)
			return nil, nil, err
		}
		if s.err != nil {
			return nil, nil, s.err
		}
		var once sync.Once
		return s.sess, func() { once.Do(func() { m.release(s) }) }, nil
	}
}

// spawn starts user's browser into s outside the lock; a failed spawn
// frees the slot, and a browser that started after Close is closed.
func (m *Manager) spawn(user string, s *slot) {
	defer m.work.Done()
	sess, err := m.launch(user, filepath.Join(m.dir, user))
	var late *Session
	m.mu.Lock()
	if err == nil && m.shutdown {
		late, err = sess, errors.New("browser sessions are shutting down")
	}
	if err != nil {
		m.logger.Warn("browser did not start", "user", user, "err", err)
		s.err = failure.Errorf(failure.Unavailable, "your browser did not start: %v", err)
		delete(m.slots, user)
		m.live--
	} else {
		m.logger.Info("browser started", "user", user)
		s.sess = sess
		s.idleSince = m.now()
	}
	close(s.ready)
	m.mu.Unlock()
	if late != nil {
		_ = late.close()
	}
}

// release ends one call's hold on s.
func (m *Manager) release(s *slot) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.users--
	if s.users == 0 {
		s.idleSince = m.now()
	}
}

// Run sweeps idle sessions until ctx ends.
func (m *Manager) Run(ctx context.Context) error {
	tick := time.NewTicker(min(max(m.ttl/4, time.Second), maxSweepInterval))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			m.sweep()
		}
	}
}

// sweep tears down every session idle for at least the TTL; the teardowns
// run outside the lock.
func (m *Manager) sweep() {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for user, s := range m.slots {
		if s.sess == nil || s.users > 0 || now.Sub(s.idleSince) < m.ttl {
			continue
		}
		delete(m.slots, user)
		gone := make(chan struct{})
		m.leaving[user] = gone
		m.work.Add(1)
		go func() {
			defer m.work.Done()
			if err := m.teardown(user, s.sess, gone, false); err != nil {
				m.logger.Warn("idle browser close", "user", user, "err", err)
			}
		}()
	}
}

// teardown closes sess (when not nil), deletes the profile when wipe is
// set, then frees the place under the cap and the profile.
func (m *Manager) teardown(user string, sess *Session, gone chan struct{}, wipe bool) error {
	var err error
	if sess != nil {
		err = sess.close()
		m.logger.Info("browser closed", "user", user, "err", err)
	}
	if wipe {
		err = errors.Join(err, os.RemoveAll(filepath.Join(m.dir, user)))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.leaving, user)
	if sess != nil {
		m.live--
	}
	close(gone)
	return err
}

// Reset kills user's browser and deletes its profile (cookies, storage,
// logins); the next call starts afresh. It fails with BROWSER_SESSION_BUSY
// while the user's browser is starting or a call holds it, and waits
// (until ctx ends) for a browser that is already exiting.
func (m *Manager) Reset(ctx context.Context, user string) error {
	if err := checkUser(user); err != nil {
		return err
	}
	for {
		m.mu.Lock()
		if m.shutdown {
			m.mu.Unlock()
			return failure.Errorf(failure.Unavailable, "browser sessions are shutting down")
		}
		s, gone := m.slots[user], m.leaving[user]
		switch {
		case s == nil && gone != nil:
			m.mu.Unlock()
			if err := waitFor(ctx, gone, "your previous browser to exit"); err != nil {
				return err
			}
			continue
		case s != nil && s.sess == nil:
			m.mu.Unlock()
			return failure.Errorf(failure.BrowserSessionBusy, "your browser is starting; reset it once the call that started it is done")
		case s != nil && s.users > 0:
			m.mu.Unlock()
			return failure.Errorf(failure.BrowserSessionBusy, "a call is using your browser (%d at once); reset it when they are done", s.users)
		}
		var sess *Session
		if s != nil {
			sess = s.sess
			delete(m.slots, user)
		}
		gone = make(chan struct{})
		m.leaving[user] = gone // Acquire waits until the profile is gone
		m.work.Add(1)
		m.mu.Unlock()
		defer m.work.Done()
		if err := m.teardown(user, sess, gone, true); err != nil {
			return failure.Errorf(failure.Unavailable, "resetting your browser: %v", err)
		}
		return nil
	}
}

// alive returns how many browsers are spawning, alive or exiting.
func (m *Manager) alive() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live
}

// Close kills every browser (profiles are kept) and waits for spawns and
// teardowns in flight. Acquire fails afterwards.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.shutdown {
		m.mu.Unlock()
		return nil
	}
	m.shutdown = true
	var sessions []*Session
	for user, s := range m.slots {
		if s.sess != nil {
			sessions = append(sessions, s.sess)
			delete(m.slots, user)
		}
	}
	m.mu.Unlock()
	errs := make([]error, len(sessions))
	var closing sync.WaitGroup
	for i, sess := range sessions {
		closing.Add(1)
		go func() {
			defer closing.Done()
			errs[i] = sess.close()
		}()
	}
	closing.Wait()
	m.stop() // ends spawns in flight
	m.work.Wait()
	return errors.Join(errs...)
}

// waitFor waits until ch is closed or ctx ends; what names the wait in the
// error.
func waitFor(ctx context.Context, ch <-chan struct{}, what string) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ended(ctx, "waiting for "+what)
	}
}

// ended is the error of a call whose ctx ended while doing what.
func ended(ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return failure.Errorf(failure.Timeout, "the call's deadline passed while %s", what)
	}
	return failure.Errorf(failure.Canceled, "the call was canceled while %s", what)
}

// maxUserLen bounds a user ID, which names a profile directory.
const maxUserLen = 128

// checkUser accepts the user IDs the store issues: 1 to 128 ASCII letters,
// digits, '_' and '-', so a user ID is always one safe path element.
func checkUser(user string) error {
	if user == "" || len(user) > maxUserLen {
		return failure.Errorf(failure.InvalidArguments, "a browser session needs a user ID of 1 to %d characters", maxUserLen)
	}
	for _, r := range user {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '_' && r != '-' {
			return failure.Errorf(failure.InvalidArguments, "user ID %q has a character other than letters, digits, '_' and '-'", user)
		}
	}
	return nil
}

// Session is one user's browser: its tabs and its egress proxy. Tool calls
// take it one at a time (lock); only the holder reads or changes the tabs.
type Session struct {
	first context.Context // the first tab, whose lifetime is the browser's
	tab   context.Context // the current tab; actions run on contexts derived from it
	tabs  map[target.ID]tabRef
	proxy *egressProxy
	turn  chan struct{} // holds one token: the right to drive the browser
	end   func() error
}

// tabRef is one attached tab: its chromedp context and what detaches it
// (nil for the first tab, which the browser ends with).
type tabRef struct {
	ctx    context.Context
	detach context.CancelFunc
}

// lock waits for the right to drive the browser until ctx ends; unlock
// gives it back.
func (s *Session) lock(ctx context.Context) error {
	select {
	case <-s.turn:
		return nil
	case <-ctx.Done():
		return ended(ctx, "waiting for your other browser call to finish")
	}
}

func (s *Session) unlock() { s.turn <- struct{}{} }

// close ends the browser gracefully (so the profile is flushed), kills it
// after closeTimeout, and stops the proxy.
func (s *Session) close() error { return s.end() }

// findChromium returns path or the first Chromium on PATH.
func findChromium(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium, chromium-browser or google-chrome on PATH")
}

// startChromium starts a headless Chromium for user with its profile in
// profile, reaching the network only through a new egress proxy.
func (m *Manager) startChromium(user, profile string) (*Session, error) {
	path, err := findChromium(m.execPath)
	if err != nil {
		return nil, err
	}
	if !m.noSandbox && os.Geteuid() == 0 {
		return nil, errors.New("Chromium's sandbox does not run as root: run Workbench as an unprivileged user, or set BROWSER_ALLOW_NO_SANDBOX=1 to run browsers without it")
	}
	if err := os.MkdirAll(profile, 0o700); err != nil {
		return nil, fmt.Errorf("profile directory: %w", err)
	}
	proxy, err := startProxy(m.egress)
	if err != nil {
		return nil, err
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(m.base, chromiumFlags(path, profile, proxy.addr(), m.noSandbox, m.spawnWait)...)
	// A browser that is not ready within spawnWait is killed.
	deadline := time.AfterFunc(m.spawnWait, cancelAlloc)
	logf := func(format string, args ...any) {
		m.logger.Warn("chromedp: "+fmt.Sprintf(format, args...), "user", user)
	}
	tab, cancelTab := chromedp.NewContext(alloc, chromedp.WithErrorf(logf), chromedp.WithBrowserOption(chromedp.WithBrowserErrorf(logf)))
	end := func() error {
		closed := make(chan error, 1)
		go func() { closed <- chromedp.Cancel(tab) }()
		var err error
		select {
		case err = <-closed:
		case <-time.After(closeTimeout):
			err = fmt.Errorf("the browser did not close within %s; killed", closeTimeout)
		}
		cancelTab()
		cancelAlloc()
		return errors.Join(err, proxy.close())
	}
	// The first Run starts the browser and attaches the tab with tab itself
	// as their lifetime, never a call's context.
	err = chromedp.Do(tab)
	if err == nil {
		_, err = chromedp.CallBrowser(tab, cdpbrowser.SetDownloadBehavior,
			cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorDeny})
	}
	if !deadline.Stop() {
		err = fmt.Errorf("not ready within %s", m.spawnWait)
	}
	if err != nil {
		_ = end()
		return nil, fmt.Errorf("starting %s for %s: %w", path, user, err)
	}
	id := chromedp.FromContext(tab).Target.TargetID
	s := &Session{first: tab, tab: tab, tabs: map[target.ID]tabRef{id: {ctx: tab}}, proxy: proxy, turn: make(chan struct{}, 1), end: end}
	s.unlock()
	return s, nil
}

// chromiumFlags are the command line of one session's browser: headless,
// its own profile, every request through the egress proxy (loopback
// included), QUIC and non-proxied WebRTC UDP off, and none of Chromium's
// own background traffic.
func chromiumFlags(path, profile, proxyAddr string, noSandbox bool, spawnWait time.Duration) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.WSURLReadTimeout(spawnWait),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("proxy-server", "http://"+proxyAddr),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"), // loopback goes through the proxy too
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,CertificateTransparencyComponentUpdater"),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("password-store", "basic"),
	}
	if noSandbox {
		opts = append(opts, chromedp.NoSandbox)
	}
	return opts
}

// attach makes tab id the current tab, attaching it first when the session
// has not (a tab a page opened); an empty id opens a new tab. The attach
// ends with ctx if it is not done by then.
func (s *Session) attach(ctx context.Context, id target.ID) error {
	if ref, ok := s.tabs[id]; ok {
		s.tab = ref.ctx
		return nil
	}
	var opts []chromedp.ContextOption
	if id != "" {
		opts = append(opts, chromedp.WithTargetID(id))
	}
	tctx, detach := chromedp.NewContext(s.first, opts...)
	stop := context.AfterFunc(ctx, detach)
	// The first Run attaches the tab with tctx as its lifetime.
	err := chromedp.Do(tctx)
	if !stop() || err != nil {
		detach()
		if err == nil {
			err = ctx.Err()
		}
		return err
	}
	s.tabs[chromedp.FromContext(tctx).Target.TargetID] = tabRef{ctx: tctx, detach: detach}
	s.tab = tctx
	return nil
}

// current returns the current tab's context; when a page closed the
// current tab itself, it forgets that tab and the first tab is current again.
func (s *Session) current() context.Context {
	if s.tab == s.first {
		return s.tab
	}
	detached, err := chromedp.Detached(s.tab)
	if err == nil {
		select {
		case <-detached:
		default:
			return s.tab
		}
	}
	for id, ref := range s.tabs {
		if ref.ctx == s.tab {
			ref.detach()
			delete(s.tabs, id)
		}
	}
	s.tab = s.first
	return s.tab
}
