package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/plugins-wasm/githubtest"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/server/internal/fiberfix"
	"github.com/workbench-dev/workbench/server/internal/mcp"
	"github.com/workbench-dev/workbench/server/internal/mcp/mcptest"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
	"github.com/workbench-dev/workbench/server/internal/registry"
)

// Paths from this package to the repository's tools and plugins.
const (
	githubWasm     = "../../../plugins-wasm/github/github.wasm"
	conformanceDir = "../../../tools/conformance"
)

var (
	bob      = metatools.Principal{UserID: "u-bob", Email: "bob@example.com"}
	bobToken = "tok-bob"
	// wasmCache is wazero's compilation cache for these tests. It lives in
	// the user's cache directory so that github.wasm, which takes tens of
	// seconds to compile under -race, is compiled once per machine rather
	// than once per run; entries are keyed by module hash and wazero
	// version, so a stale entry is never used.
	wasmCache string
)

func TestMain(m *testing.M) {
	dir, err := os.UserCacheDir()
	if err == nil {
		dir = filepath.Join(dir, "workbench", "mcp-test-wasm")
		err = os.MkdirAll(dir, 0o700)
	}
	temporary := err != nil
	if temporary {
		if dir, err = os.MkdirTemp("", "mcp-wasm-cache-"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	wasmCache = dir
	code := m.Run()
	if temporary {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// stack is the real runtime, registry and endpoint (without the store):
// plugins load into a registry, tools run in wazero, credentials come from
// an in-memory source and egress may reach loopback fakes.
type stack struct {
	url   string
	host  *runtime.Host
	reg   *registry.Registry
	ep    *mcp.Endpoint
	conns *mcptest.Connections
}

func newStack(t *testing.T, creds credential.Source, settings runtime.MapSettings, surface mcp.Surface, sources ...registry.Source) *stack {
	t.Helper()
	ctx := context.Background()
	host, err := runtime.NewHost(ctx, runtime.Config{
		CacheDir:    wasmCache,
		Credentials: creds,
		Egress:      egress.NewClient(egress.Options{AllowPrivate: true}),
		Settings:    settings,
	})
	if err != nil {
		t.Fatal(err)
	}
	st := &stack{host: host, reg: newRegistry(t), conns: mcptest.NewConnections("https://wb.test", "github")}
	t.Cleanup(func() { host.Close(context.Background()) })
	st.swap(t, sources...)
	tokens := mcptest.NewTokens(failure.ErrUnauthenticated)
	tokens.Add(aliceToken, alice)
	tokens.Add(bobToken, bob)
	st.ep, err = mcp.New(mcp.Options{
		Catalog: st.reg, Authenticator: tokens, PublicURL: "http://127.0.0.1",
		Surface: surface, Connections: st.conns,
	})
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.All("/mcp", fiberfix.Bridge(context.Background(), st.ep, 0))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = st.ep.Close(ctx)
		_ = app.ShutdownWithTimeout(5 * time.Second)
		st.reg.Close()
	})
	st.url = "http://" + ln.Addr().String() + "/mcp"
	return st
}

// swap loads sources into a new snapshot and swaps it in, as the server
// does when plugins are loaded or unloaded.
func (st *stack) swap(t *testing.T, sources ...registry.Source) {
	t.Helper()
	snap, err := st.reg.Load(context.Background(), st.host, sources)
	if err != nil {
		t.Fatal(err)
	}
	if f := snap.Failed(); len(f) > 0 {
		t.Fatalf("plugins failed to load: %+v", f)
	}
	if err := st.reg.Swap(snap); err != nil {
		t.Fatal(err)
	}
	if st.ep != nil {
		st.ep.Refresh()
	}
}

// githubStack serves the real GitHub plugin against the fake GitHub; alice
// is connected, bob is not.
func githubStack(t *testing.T) *stack {
	t.Helper()
	if _, err := os.Stat(githubWasm); err != nil {
		t.Fatalf("%s is missing: run `make plugins` (make test builds it): %v", githubWasm, err)
	}
	fake := githubtest.NewFake(t, "gho_alice")
	fake.AddRepo(githubtest.Repo{Owner: "octocat", Name: "hello-world", Description: "My first repository", Language: "Go", Stars: 80})
	creds := credential.NewMemory()
	creds.Set(alice.UserID, "github", &credential.Credential{AccessToken: "gho_alice"})
	st := newStack(t, creds, runtime.MapSettings{"github": {"base_url": fake.URL}}, mcp.SurfaceMeta, registry.Source{Path: githubWasm, Builtin: true})
	st.conns.SetConnected(alice.UserID, "github", true)
	return st
}

func TestInterop_GoClient(t *testing.T) {
	st := githubStack(t)
	for _, era := range []string{legacyEra, newEra} {
		t.Run(era, func(t *testing.T) {
			cs := connect(t, st.url, aliceToken, era, nil)
			if got := toolNames(t, cs); !slices.Equal(got, metaNames) {
				t.Fatalf("tools/list = %v", got)
			}
			var found metatools.SearchOutput
			callJSON(t, cs, "search_tools", map[string]any{"query": "list pull requests"}, &found)
			if len(found.Hits) == 0 || found.Hits[0].Slug != "github_list_pulls" || !found.Hits[0].Connected {
				t.Errorf("search = %+v", found.Hits)
			}
			var schema metatools.ToolSchema
			callJSON(t, cs, "get_tool_schema", map[string]any{"tool": "github_get_repo"}, &schema)
			if schema.Integration != "github" || !schema.Annotations.ReadOnly || len(schema.OutputSchema) == 0 {
				t.Errorf("schema = %+v", schema)
			}
			var out metatools.ExecuteOutput
			callJSON(t, cs, "execute_tools", map[string]any{"executions": []any{
				map[string]any{"tool": "github_get_repo", "arguments": map[string]any{"owner": "octocat", "repo": "hello-world"}},
			}}, &out)
			var repo struct {
				FullName string `json:"full_name"`
				Stars    int    `json:"stargazers_count"`
			}
			if !out.Results[0].OK || json.Unmarshal(out.Results[0].Result, &repo) != nil || repo.FullName != "octocat/hello-world" {
				t.Errorf("github_get_repo = %+v", out.Results[0])
			}

			bobs := connect(t, st.url, bobToken, era, nil)
			callJSON(t, bobs, "execute_tools", map[string]any{"executions": []any{
				map[string]any{"tool": "github_get_repo", "arguments": map[string]any{"owner": "octocat", "repo": "hello-world"}},
			}}, &out)
			if e := out.Results[0].Error; e == nil || e.Code != "NOT_CONNECTED" || e.Fix != "connect('github')" {
				t.Errorf("bob = %+v", out.Results[0])
			}
		})
	}
}

// nodeBinary is Node 22, installed under tools/conformance by
// tools/test-deps.sh.
func nodeBinary(t *testing.T) string {
	t.Helper()
	node, err := filepath.Abs(filepath.Join(conformanceDir, "node_modules", ".bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(node); err != nil {
		t.Fatalf("Node 22 is not installed under tools/conformance: run `make test` or tools/test-deps.sh (%v)", err)
	}
	return node
}

// TestInterop_TypeScriptClient runs tools/conformance/interop.mjs: the
// TypeScript SDK's Client over StreamableHTTPClientTransport authenticates,
// lists the nine tools, searches, fetches a schema, executes a GitHub tool
// against the fake GitHub, and gets NOT_CONNECTED with the fix for a user
// without a connection.
func TestInterop_TypeScriptClient(t *testing.T) {
	node := nodeBinary(t)
	st := githubStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "interop.mjs")
	cmd.Dir = conformanceDir
	cmd.Env = append(os.Environ(), "MCP_URL="+st.url, "MCP_TOKEN="+aliceToken, "MCP_OTHER_TOKEN="+bobToken)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("interop.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var report struct {
		ProtocolVersion string   `json:"protocolVersion"`
		Tools           []string `json:"tools"`
		FirstHit        string   `json:"firstHit"`
		SchemaRequired  []string `json:"schemaRequired"`
		RepoFullName    string   `json:"repoFullName"`
		OtherError      struct {
			Code string `json:"code"`
			Fix  string `json:"fix"`
		} `json:"otherError"`
		Unauthorized int `json:"unauthorizedStatus"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("report %s: %v\nstderr: %s", stdout.String(), err, stderr.String())
	}
	if report.ProtocolVersion == "" || !slices.Equal(report.Tools, metaNames) || report.FirstHit != "github_list_pulls" ||
		!slices.Equal(report.SchemaRequired, []string{"owner", "repo"}) || report.RepoFullName != "octocat/hello-world" ||
		report.OtherError.Code != "NOT_CONNECTED" || report.OtherError.Fix != "connect('github')" || report.Unauthorized != 401 {
		t.Errorf("TypeScript client report = %+v", report)
	}
}

// inspectorDir holds @modelcontextprotocol/inspector-cli's command line
// entry point, index.js. The CLI must run from there: it probes for its own
// package.json relative to the working directory.
const inspectorDir = conformanceDir + "/node_modules/@modelcontextprotocol/inspector-cli/build"

// inspect runs the MCP Inspector's CLI mode against url with token as the
// bearer token and returns what it printed; a non-zero exit is an error
// carrying its stderr.
func inspect(t *testing.T, node, url, token string, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	argv := append([]string{"index.js", url, "--transport", "http", "--header", "Authorization: Bearer " + token}, args...)
	cmd := exec.CommandContext(ctx, node, argv...)
	cmd.Dir = inspectorDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%v: %s", err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// inspectTool calls one tool through the Inspector CLI and decodes the
// JSON text content of its result into out. A result with isError (an
// execute_tools call whose every execution failed) is decoded too: the
// caller checks the errors it carries.
func inspectTool(t *testing.T, node, url, token, tool string, out any, args ...string) {
	t.Helper()
	argv := []string{"--method", "tools/call", "--tool-name", tool}
	for _, a := range args {
		argv = append(argv, "--tool-arg", a)
	}
	raw, err := inspect(t, node, url, token, argv...)
	if err != nil {
		t.Fatalf("inspector tools/call %s: %v", tool, err)
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) == 0 || res.Content[0].Type != "text" {
		t.Fatalf("inspector tools/call %s printed %s (%v)", tool, raw, err)
	}
	if err := json.Unmarshal([]byte(res.Content[0].Text), out); err != nil {
		t.Fatalf("%s text content %q: %v", tool, res.Content[0].Text, err)
	}
}

// TestInterop_InspectorCLI drives the endpoint with the MCP Inspector's CLI
// (npm @modelcontextprotocol/inspector-cli, streamable HTTP with an
// Authorization header): a bad token is refused, a good one lists the nine
// tools, searches, fetches a schema and runs a GitHub tool against the fake
// GitHub; a user without a connection gets NOT_CONNECTED with the fix.
func TestInterop_InspectorCLI(t *testing.T) {
	node := nodeBinary(t)
	st := githubStack(t)

	if out, err := inspect(t, node, st.url, "not-a-token", "--method", "tools/list"); err == nil || !strings.Contains(err.Error(), "the bearer token is not valid") {
		t.Errorf("a bad token: err %v, printed %s; want the endpoint's 401", err, out)
	}

	raw, err := inspect(t, node, st.url, aliceToken, "--method", "tools/list")
	if err != nil {
		t.Fatalf("inspector tools/list: %v", err)
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatalf("tools/list printed %s: %v", raw, err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, metaNames) {
		t.Errorf("tools/list = %v", names)
	}

	var found metatools.SearchOutput
	inspectTool(t, node, st.url, aliceToken, "search_tools", &found, "query=list pull requests", "integration=github")
	if len(found.Hits) == 0 || found.Hits[0].Slug != "github_list_pulls" || !found.Hits[0].Connected {
		t.Errorf("search = %+v", found.Hits)
	}
	var schema metatools.ToolSchema
	inspectTool(t, node, st.url, aliceToken, "get_tool_schema", &schema, "tool=github_get_repo")
	if schema.Integration != "github" || !schema.Annotations.ReadOnly || len(schema.InputSchema) == 0 {
		t.Errorf("schema = %+v", schema)
	}
	executions := `executions=[{"tool":"github_get_repo","arguments":{"owner":"octocat","repo":"hello-world"}}]`
	var out metatools.ExecuteOutput
	inspectTool(t, node, st.url, aliceToken, "execute_tools", &out, executions)
	var repo struct {
		FullName string `json:"full_name"`
		Stars    int    `json:"stars"`
	}
	if len(out.Results) != 1 || !out.Results[0].OK || json.Unmarshal(out.Results[0].Result, &repo) != nil ||
		repo.FullName != "octocat/hello-world" || repo.Stars != 80 {
		t.Errorf("github_get_repo = %+v (%s)", out.Results, out.Results[0].Result)
	}

	inspectTool(t, node, st.url, bobToken, "execute_tools", &out, executions) // every execution failed: isError
	if e := out.Results[0].Error; e == nil || e.Code != "NOT_CONNECTED" || e.Fix != "connect('github')" {
		t.Errorf("bob = %+v", out.Results[0])
	}
}

// TestRegistry_DirectSurfaceSwap: with the real registry and wasm plugins,
// loading a plugin (a registry swap followed by Refresh) sends
// notifications/tools/list_changed to a direct-surface session, whose next
// tools/list and call see the new plugin; unloading takes its tools away.
func TestRegistry_DirectSurfaceSwap(t *testing.T) {
	dir := t.TempDir()
	alpha := registry.Source{Path: mcptest.FixturePlugin(t, dir, "alpha")}
	beta := registry.Source{Path: mcptest.FixturePlugin(t, dir, "beta")}
	st := newStack(t, credential.NewMemory(), nil, mcp.SurfaceDirect, alpha)
	for _, era := range []string{legacyEra, newEra} {
		t.Run(era, func(t *testing.T) {
			changed := make(chan struct{}, 8)
			cs := connect(t, st.url, aliceToken, era, &sdk.ClientOptions{
				ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
			})
			if names := toolNames(t, cs); slices.Contains(names, "beta_echo") || !slices.Contains(names, "alpha_echo") {
				t.Fatalf("before = %v", names)
			}
			st.swap(t, alpha, beta)
			waitChanged(t, changed)
			if names := toolNames(t, cs); !slices.Contains(names, "beta_echo") {
				t.Fatalf("after loading beta = %v", names)
			}
			res := callJSON(t, cs, "beta_echo", map[string]any{"message": "from beta"}, nil)
			if s, _ := json.Marshal(res.StructuredContent); res.IsError || string(s) != `{"message":"from beta"}` {
				t.Errorf("beta_echo = %+v", res)
			}
			st.swap(t, alpha)
			waitChanged(t, changed)
			if names := toolNames(t, cs); slices.Contains(names, "beta_echo") {
				t.Errorf("after unloading beta = %v", names)
			}
			if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "beta_echo", Arguments: map[string]any{"message": "x"}}); err == nil {
				t.Error("an unloaded tool must be unknown")
			}
		})
	}
}

func waitChanged(t *testing.T, changed <-chan struct{}) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
	// Drain the resources' and any debounced duplicates.
	for {
		select {
		case <-changed:
		case <-time.After(50 * time.Millisecond):
			return
		}
	}
}

func newRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}
