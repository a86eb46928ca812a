package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/migrations"
	"github.com/workbench-dev/workbench/server/servertest"
)

// backends are the stores the store commands run against: SQLite in a fresh
// DATA_DIR, and a fresh Postgres database.
var backends = []struct {
	name string
	env  func(t *testing.T) map[string]string
}{
	{"sqlite", func(t *testing.T) map[string]string {
		return map[string]string{"DATA_DIR": filepath.Join(t.TempDir(), "data")}
	}},
	{"postgres", func(t *testing.T) map[string]string {
		return map[string]string{"DATA_DIR": filepath.Join(t.TempDir(), "data"), "DATABASE_URL": servertest.PostgresURL(t)}
	}},
}

// lastLine returns the last line of a command's output.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndex(s, "\n")+1:]
}

var (
	apiToken  = regexp.MustCompile(`^wb_[A-Za-z0-9_-]{43}$`)
	tokenID   = regexp.MustCompile(`created token (tok_[a-z2-7]+) `)
	loginLink = regexp.MustCompile(`^https://wb\.example\.com/login/once/wbl_[A-Za-z0-9_-]{43}$`)
)

func TestStoreCommands(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			env := b.env(t)
			env["SERVER_PUBLIC_URL"] = "https://wb.example.com"
			version, err := migrations.Latest(migrations.SQLite)
			if err != nil {
				t.Fatal(err)
			}
			steps := []struct {
				name       string
				args       []string
				wantCode   int
				wantStdout string // substring
				wantLast   *regexp.Regexp
				wantStderr string
			}{
				{"migrate", []string{"migrate"}, 0, fmt.Sprintf("schema version %d (", version), nil, ""},
				{"migrate again", []string{"migrate"}, 0, fmt.Sprintf("schema version %d (", version), nil, ""},
				{"add admin", []string{"user", "add", "--email", "alice@example.com", "--admin"}, 0, "created admin alice@example.com (usr_", apiToken, ""},
				{"add user", []string{"user", "add", "--email", "bob@example.com"}, 0, "created user bob@example.com", apiToken, ""},
				{"duplicate email", []string{"user", "add", "--email", "ALICE@example.com"}, 1, "", nil, "already exists"},
				{"bad email", []string{"user", "add", "--email", "not an email"}, 1, "", nil, "invalid argument"},
				{"token for alice", []string{"token", "create", "--email", "alice@example.com", "--name", "ci"}, 0, `("ci") for alice@example.com`, apiToken, ""},
				{"token for nobody", []string{"token", "create", "--email", "carol@example.com"}, 1, "", nil, `no such user with email "carol@example.com"`},
				{"login link", []string{"user", "login-link", "--email", "bob@example.com"}, 0, "one-time sign-in link for bob@example.com", loginLink, ""},
				{"revoke unknown token", []string{"token", "revoke", "--email", "alice@example.com", "tok_nope"}, 1, "", nil, `no such token: alice@example.com has no token "tok_nope"`},
				{"audit, nothing proxied", []string{"audit", "proxy"}, 0, "ID  TIME  USER  INTEGRATION  METHOD  PATH", nil, ""},
				{"audit of nobody", []string{"audit", "proxy", "--email", "carol@example.com"}, 1, "", nil, `no such user with email "carol@example.com"`},
				{"audit limit", []string{"audit", "proxy", "--limit", "5000"}, 2, "", nil, "--limit from 1 to 1000"},
			}
			var ciToken string
			for _, s := range steps {
				code, stdout, stderr := runCLI(t, env, s.args...)
				if code != s.wantCode || !strings.Contains(stdout, s.wantStdout) || !strings.Contains(stderr, s.wantStderr) {
					t.Fatalf("%s: exit %d, stdout %q, stderr %q; want exit %d, %q, %q", s.name, code, stdout, stderr, s.wantCode, s.wantStdout, s.wantStderr)
				}
				if s.wantLast != nil && !s.wantLast.MatchString(lastLine(stdout)) {
					t.Fatalf("%s: last line %q does not match %s", s.name, lastLine(stdout), s.wantLast)
				}
				if m := tokenID.FindStringSubmatch(stdout); m != nil {
					ciToken = m[1]
				}
			}
			// Bob cannot revoke Alice's token; Alice can, twice.
			if code, _, stderr := runCLI(t, env, "token", "revoke", "--email", "bob@example.com", ciToken); code != 1 || !strings.Contains(stderr, "no such token") {
				t.Fatalf("bob revoking alice's token: exit %d, %s", code, stderr)
			}
			for range 2 {
				if code, stdout, stderr := runCLI(t, env, "token", "revoke", "--email", "alice@example.com", ciToken); code != 0 || stdout != "revoked token "+ciToken+" of alice@example.com\n" {
					t.Fatalf("revoke: exit %d, %q, %q", code, stdout, stderr)
				}
			}
		})
	}
}

func TestKeysRotateCommand(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	env := map[string]string{"DATA_DIR": dataDir}
	code, _, stderr := runCLI(t, env, "keys", "rotate")
	if code != 1 || !strings.Contains(stderr, "no generated key in DATA_DIR") {
		t.Fatalf("rotate before any key: exit %d, %s", code, stderr)
	}
	// serve would generate the key on its first start; so does this.
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, "encryption.key"), []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, env, "keys", "rotate")
	if code != 0 || !strings.Contains(stdout, "generated a new key") || !strings.Contains(stdout, "re-sealed 0 connection(s) under key") {
		t.Fatalf("rotate: exit %d, %q, %q", code, stdout, stderr)
	}
	key, _ := os.ReadFile(filepath.Join(dataDir, "encryption.key"))
	old, _ := os.ReadFile(filepath.Join(dataDir, "encryption.old-keys"))
	if strings.TrimSpace(string(key)) == strings.Repeat("ab", 32) || strings.TrimSpace(string(old)) != strings.Repeat("ab", 32) {
		t.Fatalf("after rotation: key %q, old keys %q", key, old)
	}
	// With ENCRYPTION_KEY the operator rotates; the command only re-seals.
	env["ENCRYPTION_KEY"] = strings.Repeat("cd", 32)
	env["ENCRYPTION_KEYS_OLD"] = strings.Repeat("ab", 32)
	code, stdout, _ = runCLI(t, env, "keys", "rotate")
	if code != 0 || strings.Contains(stdout, "generated") || !strings.Contains(stdout, "re-sealed 0 connection(s)") {
		t.Fatalf("rotate with ENCRYPTION_KEY: exit %d, %q", code, stdout)
	}
}

// lockedBuffer is an output sink safe for a command running in a goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serveOnce runs `workbench serve` in-process until it answers /healthz,
// then stops it and returns what it printed on stdout.
func serveOnce(t *testing.T, env map[string]string, whileUp func(base string)) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, &stdout, &stderr) }()
	base := "http://" + env["LISTEN_ADDR"]
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case code := <-done:
			cancel()
			t.Fatalf("serve exited with %d before answering:\n%s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not answer within 30s:\n%s", stderr.String())
		}
	}
	whileUp(base)
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited with %d:\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30s")
	}
	return stdout.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

var firstStartLink = regexp.MustCompile(`(?m)^  (http://127\.0\.0\.1:\d+/login/once/wbl_[A-Za-z0-9_-]{43})$`)

// TestServe_firstStart runs serve twice on each store: the first start
// creates the admin and prints its sign-in link and token, the second
// prints nothing new, and the link printed by the first still signs in.
func TestServe_firstStart(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			env := b.env(t)
			env["LISTEN_ADDR"] = freeAddr(t)
			env["BUILTIN_PLUGINS_DIR"] = t.TempDir()
			first := serveOnce(t, env, func(string) {})
			m := firstStartLink.FindStringSubmatch(first)
			if m == nil || !apiToken.MatchString(strings.TrimSpace(lastLine(first))) || !strings.Contains(first, "admin@workbench.local") {
				t.Fatalf("first start printed %q; want the admin's sign-in link and API token", first)
			}
			if _, err := os.Stat(filepath.Join(env["DATA_DIR"], "encryption.key")); err != nil {
				t.Fatalf("no generated key: %v", err)
			}
			second := serveOnce(t, env, func(base string) {
				jar, _ := cookiejar.New(nil)
				client := &http.Client{Jar: jar, Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
				resp, err := client.Get(m[1])
				if err != nil {
					t.Fatal(err)
				}
				page, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
				if csrf == nil {
					t.Fatalf("sign-in page without a form:\n%s", page)
				}
				resp, err = client.PostForm(m[1], url.Values{"csrf": {string(csrf[1])}})
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/account?notice=signed-in-once" {
					t.Fatalf("using the first-start link after a restart: %d %s", resp.StatusCode, resp.Header.Get("Location"))
				}
			})
			if second != "" {
				t.Fatalf("second start printed %q, want nothing", second)
			}
		})
	}
}
