package jots_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/jots"
	"github.com/workbench-dev/workbench/server/internal/jots/tarball/tarballtest"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/sqlite"
	"github.com/workbench-dev/workbench/toolcall"
)

// cheapPasswords hashes with a real argon2id at a tiny cost: real
// verification, test speed.
var cheapPasswords = secrets.NewPasswords(secrets.PasswordOptions{Cost: secrets.PasswordCost{Time: 1, MemoryKiB: 64, Threads: 1}})

// fixture is a jots service over a SQLite store, served by Fiber on
// 127.0.0.1.
type fixture struct {
	t            *testing.T
	st           store.Store
	svc          *jots.Service
	base         string
	alice, bob   store.User
	uploadClient *http.Client
}

func openStore(t testing.TB, opts ...store.Option) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "wb.db"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// serve runs a service over st on a new loopback listener.
func serve(t testing.TB, st store.Store, change func(*jots.Options)) (*jots.Service, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	opts := jots.Options{Store: st, PublicURL: base, Recheck: -1, Passwords: cheapPasswords}
	if change != nil {
		change(&opts)
	}
	svc, err := jots.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	// Streamed bodies, as the server has them: uploads read the stream.
	app := fiber.New(fiber.Config{DisableStartupMessage: true, StreamRequestBody: true})
	svc.Mount(app)
	done := make(chan struct{})
	go func() { defer close(done); app.Listener(ln) }()
	t.Cleanup(func() {
		app.ShutdownWithTimeout(5 * time.Second)
		<-done
	})
	return svc, base
}

func newFixture(t *testing.T, change func(*jots.Options), opts ...store.Option) *fixture {
	t.Helper()
	st := openStore(t, opts...)
	svc, base := serve(t, st, change)
	f := &fixture{t: t, st: st, svc: svc, base: base, uploadClient: &http.Client{Timeout: 60 * time.Second}}
	var err error
	if f.alice, err = st.CreateUser(context.Background(), store.NewUser{Email: "alice@example.com"}); err != nil {
		t.Fatal(err)
	}
	if f.bob, err = st.CreateUser(context.Background(), store.NewUser{Email: "bob@example.com"}); err != nil {
		t.Fatal(err)
	}
	return f
}

// call runs a tool and decodes its result into a map.
func (f *fixture) call(user store.User, tool string, input any) (map[string]any, *failure.Error) {
	f.t.Helper()
	data, err := json.Marshal(input)
	if err != nil {
		f.t.Fatal(err)
	}
	out, err := f.svc.Call(context.Background(), toolcall.Call{Tool: tool, UserID: user.ID, Input: data})
	if err != nil {
		var te *failure.Error
		if !errors.As(err, &te) {
			f.t.Fatalf("%s returned %T %v, not a *failure.Error", tool, err, err)
		}
		return nil, te
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		f.t.Fatalf("%s: %s: %v", tool, out, err)
	}
	return m, nil
}

func (f *fixture) mustCall(user store.User, tool string, input any) map[string]any {
	f.t.Helper()
	m, te := f.call(user, tool, input)
	if te != nil {
		f.t.Fatalf("%s(%v): %v", tool, input, te)
	}
	return m
}

// deploy claims name for alice and returns the upload URL.
func (f *fixture) deploy(name string, args map[string]any) string {
	f.t.Helper()
	in := map[string]any{"name": name, "access": "public"}
	for k, v := range args {
		in[k] = v
	}
	return f.mustCall(f.alice, jots.ToolDeploy, in)["uploadUrl"].(string)
}

// put PUTs body to an upload URL and returns the status and JSON body.
func (f *fixture) put(url string, body io.Reader) (int, map[string]any) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, body)
	if err != nil {
		f.t.Fatal(err)
	}
	resp, err := f.uploadClient.Do(req)
	if err != nil {
		f.t.Fatalf("PUT %s: %v", url, err)
	}
	defer resp.Body.Close()
	var m map[string]any
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err := json.Unmarshal(data, &m); err != nil {
		f.t.Fatalf("PUT %s: %d %q is not JSON", url, resp.StatusCode, data)
	}
	return resp.StatusCode, m
}

func (f *fixture) build(entries ...tarballtest.Entry) []byte {
	f.t.Helper()
	data, err := tarballtest.Build(entries...)
	if err != nil {
		f.t.Fatal(err)
	}
	return data
}

// publish deploys name and uploads entries.
func (f *fixture) publish(name string, args map[string]any, entries ...tarballtest.Entry) {
	f.t.Helper()
	status, body := f.put(f.deploy(name, args), strings.NewReader(string(f.build(entries...))))
	if status != http.StatusOK {
		f.t.Fatalf("upload of %s: %d %v", name, status, body)
	}
}

// response is one fetched response.
type response struct {
	status int
	header http.Header
	body   string
}

// get fetches a path (no redirects followed) with optional headers.
func (f *fixture) get(method, path string, headers ...string) response {
	f.t.Helper()
	req, err := http.NewRequest(method, f.base+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		f.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(data)}
}

// wantSandbox fails unless r carries the sandbox headers.
func wantSandbox(t *testing.T, what string, r response) {
	t.Helper()
	if got := r.header.Get("Content-Security-Policy"); got != "sandbox allow-scripts allow-forms allow-popups" {
		t.Errorf("%s: Content-Security-Policy = %q", what, got)
	}
	if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options = %q", what, got)
	}
}

func storeNewUser(email string) store.NewUser { return store.NewUser{Email: email} }

type runtimeCall = toolcall.Call

func tarballBuild(name, body string) ([]byte, error) {
	return tarballtest.Build(tarballtest.Entry{Name: name, Body: body})
}
