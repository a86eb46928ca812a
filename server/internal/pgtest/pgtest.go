package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Deadlines for the cluster's lifecycle.
const (
	initTimeout  = 2 * time.Minute
	readyTimeout = time.Minute
	stopTimeout  = 15 * time.Second
	queryTimeout = 30 * time.Second
)

// maxLogTail caps how much of the server log an error quotes.
const maxLogTail = 4 << 10

var (
	inMain   atomic.Bool
	once     sync.Once
	running  *cluster
	startErr error

	adminMu sync.Mutex // CREATE DATABASE copies template1: one at a time
	dbSeq   atomic.Int64
)

// Main runs the package's tests and then stops the cluster, if one was
// started, and removes its files. Call it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main without the exit, for a TestMain with more to clean up: it
// runs the tests, stops the cluster and returns the exit code.
func Run(m *testing.M) int {
	inMain.Store(true)
	code := m.Run()
	if running != nil {
		if err := running.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// URL returns the URL of a new, empty database on the test cluster, starting
// the cluster on first use. The database is dropped when t ends.
func URL(t testing.TB) string {
	t.Helper()
	if !inMain.Load() {
		t.Fatal("pgtest: call pgtest.Main(m) (or Run) from TestMain so the cluster is stopped after the tests")
	}
	once.Do(func() { running, startErr = start() })
	if startErr != nil {
		t.Fatal(startErr)
	}
	name := fmt.Sprintf("test_%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := running.admin("CREATE DATABASE " + name); err != nil {
		t.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := running.admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: dropping database %s: %v", name, err)
		}
	})
	return running.url(name)
}

// cluster is a running throwaway PostgreSQL server.
type cluster struct {
	dir    string // temporary root: data/, the socket, the log
	port   int
	cmd    *exec.Cmd
	exited chan struct{} // closed when the server process ends
	log    *os.File
}

func (c *cluster) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// admin runs one statement as the superuser on the maintenance database.
func (c *cluster) admin(sql string) error {
	adminMu.Lock()
	defer adminMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	conn, err := pgconn.Connect(ctx, c.url("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql).ReadAll()
	return err
}

// findBinaries returns the directory holding initdb and postgres.
func findBinaries() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	// Prefer the newest major version.
	sort.Slice(matches, func(i, j int) bool { return majorOf(matches[i]) > majorOf(matches[j]) })
	for _, m := range matches {
		dir := filepath.Dir(m)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	return "", errors.New("pgtest: PostgreSQL server binaries (initdb, postgres) not found on PATH or in /usr/lib/postgresql/*/bin: run make test (it installs postgresql)")
}

func majorOf(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// start creates and starts a cluster.
func start() (*cluster, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "workbench-pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	cred, err := runAs(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), initTimeout)
	defer cancel()
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %v\n%s", err, tail(out))
	}
	var lastErr error
	for range 3 { // a free port can be taken between probing and binding
		c, err := launch(bin, dir, cred)
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

// runAs returns the credential the server runs under: the postgres user when
// running as root (dir is handed to it), otherwise nil (the current user).
func runAs(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs the postgres OS user (installed with postgresql): %v; run make test", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgtest: postgres user has a non-numeric uid or gid")
	}
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// launch starts the server on a free port and waits until it accepts
// connections.
func launch(bin, dir string, cred *syscall.Credential) (*cluster, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"),
		"-D", filepath.Join(dir, "data"),
		"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", dir,
		"-F", // no fsync: the cluster is thrown away
		"-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The server gets SIGQUIT (immediate shutdown) if the test binary dies
	// without reaching Main's cleanup.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	c := &cluster{dir: dir, port: port, cmd: cmd, exited: make(chan struct{}), log: logFile}
	go func() { _ = cmd.Wait(); close(c.exited) }()

	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgconn.Connect(ctx, c.url("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return c, nil
		}
		select {
		case <-c.exited:
			logFile.Close()
			out, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("pgtest: postgres exited during startup:\n%s", tail(out))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = c.stop()
			return nil, fmt.Errorf("pgtest: postgres did not accept connections within %v: %v", readyTimeout, err)
		}
	}
}

// stop shuts the server down (fast shutdown, then kill) and removes its
// files.
func (c *cluster) stop() error {
	var errs []error
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
	case <-time.After(stopTimeout):
		_ = c.cmd.Process.Kill()
		<-c.exited
		errs = append(errs, fmt.Errorf("postgres did not stop within %v and was killed", stopTimeout))
	}
	c.log.Close()
	if err := os.RemoveAll(c.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the end of a log for an error message.
func tail(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > maxLogTail {
		b = b[len(b)-maxLogTail:]
	}
	return strings.TrimSpace(string(b))
}
