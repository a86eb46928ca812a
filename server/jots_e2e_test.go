package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/jots/tarball/tarballtest"
)

// jotsBearer adds a bearer token to every request.
type jotsBearer struct{ token string }

func (b jotsBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// jotsAgent is an MCP client session of one user on a running server.
type jotsAgent struct {
	t  *testing.T
	cs *sdk.ClientSession
}

func newJotsAgent(t *testing.T, w *workbench, email string) *jotsAgent {
	t.Helper()
	ctx := context.Background()
	u := w.addUser(t, email)
	_, token, err := accounts.CreateToken(ctx, w.srv.store, u.ID, "agent")
	if err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "jots-e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: w.base + "/mcp",
		HTTPClient: &http.Client{Transport: jotsBearer{token}, Timeout: 30 * time.Second}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &jotsAgent{t: t, cs: cs}
}

// exec runs one tool through execute_tools and returns its result or its
// error object.
func (a *jotsAgent) exec(tool string, args map[string]any) (result, failure map[string]any) {
	a.t.Helper()
	res, err := a.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "execute_tools",
		Arguments: map[string]any{"executions": []any{map[string]any{"tool": tool, "arguments": args}}}})
	if err != nil {
		a.t.Fatalf("execute_tools %s: %v", tool, err)
	}
	text, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		a.t.Fatalf("execute_tools %s: content %T", tool, res.Content[0])
	}
	var out struct {
		Results []struct {
			OK     bool            `json:"ok"`
			Result json.RawMessage `json:"result"`
			Error  map[string]any  `json:"error"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(text.Text), &out); err != nil || len(out.Results) != 1 {
		a.t.Fatalf("execute_tools %s: %s (%v)", tool, text.Text, err)
	}
	r := out.Results[0]
	if !r.OK {
		return nil, r.Error
	}
	if err := json.Unmarshal(r.Result, &result); err != nil {
		a.t.Fatalf("%s result %s: %v", tool, r.Result, err)
	}
	return result, nil
}

func (a *jotsAgent) must(tool string, args map[string]any) map[string]any {
	a.t.Helper()
	res, failure := a.exec(tool, args)
	if failure != nil {
		a.t.Fatalf("%s(%v): %v", tool, args, failure)
	}
	return res
}

// jotFetch is one response from /j/.
type jotFetch struct {
	status int
	header http.Header
	body   string
}

func fetchJot(t *testing.T, method, target string, body io.Reader, headers ...string) jotFetch {
	t.Helper()
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	return jotFetch{status: resp.StatusCode, header: resp.Header, body: string(data)}
}

func tgz(t *testing.T, entries ...tarballtest.Entry) []byte {
	t.Helper()
	data, err := tarballtest.Build(entries...)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestServer_jots runs the jot lifecycle end to end through the real
// server and a real MCP client: deploy, upload, fetch, patch one data file,
// flip to password, list, delete; and hostile uploads through the server.
func TestServer_jots(t *testing.T) {
	w := startWorkbench(t, Config{DataDir: t.TempDir()})
	alice := newJotsAgent(t, w, "alice@example.com")
	bob := newJotsAgent(t, w, "bob@example.com")

	dep := alice.must("jots_deploy_jot", map[string]any{"name": "weekly", "access": "public"})
	if dep["url"] != w.base+"/j/weekly/" || !strings.HasPrefix(dep["uploadUrl"].(string), w.base+"/j/_upload/") {
		t.Fatalf("deploy = %v", dep)
	}
	if _, failure := bob.exec("jots_deploy_jot", map[string]any{"name": "weekly", "access": "public"}); failure == nil ||
		failure["reason"] != "NAME_TAKEN" || !strings.Contains(failure["message"].(string), "taken by another user") {
		t.Fatalf("bob deploying alice's name: %v", failure)
	}
	if _, failure := alice.exec("jots_deploy_jot", map[string]any{"name": "Weekly!", "access": "public"}); failure == nil || failure["code"] != "INVALID_ARGUMENTS" {
		t.Fatalf("bad name: %v", failure)
	}
	site := tgz(t, tarballtest.Entry{Name: "index.html", Body: `<!doctype html><script src="app.js"></script><h1>Weekly</h1>`},
		tarballtest.Entry{Name: "app.js", Body: `fetch("data.json")`}, tarballtest.Entry{Name: "data.json", Body: `{"week":1}`})

	// Hostile uploads through the server leave nothing published.
	bombReader, _ := tarballtest.Bomb(1<<30, true)
	hostile := []struct {
		name   string
		body   io.Reader
		status int
	}{
		{"traversal", bytes.NewReader(tgz(t, tarballtest.Entry{Name: "../../x", Body: "x"})), 400},
		{"1 GiB gzip bomb", bombReader, 413},
		{"truncated", bytes.NewReader(site[:len(site)-20]), 400},
	}
	for _, h := range hostile {
		r := fetchJot(t, http.MethodPut, dep["uploadUrl"].(string), h.body)
		if r.status != h.status || !strings.Contains(r.body, `"error"`) {
			t.Fatalf("%s upload: %d %s", h.name, r.status, r.body)
		}
	}
	if r := fetchJot(t, "GET", w.base+"/j/weekly/", nil); r.status != 404 {
		t.Fatalf("unpublished jot: %d %s", r.status, r.body)
	}
	r := fetchJot(t, http.MethodPut, dep["uploadUrl"].(string), bytes.NewReader(site))
	if r.status != 200 {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	page := fetchJot(t, "GET", w.base+"/j/weekly/", nil)
	if page.status != 200 || !strings.Contains(page.body, "<h1>Weekly</h1>") || page.header.Get("Content-Security-Policy") != "sandbox allow-scripts allow-forms allow-popups" ||
		page.header.Get("Content-Type") != "text/html; charset=utf-8" || page.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("page: %d %v %s", page.status, page.header, page.body)
	}
	if r := fetchJot(t, "GET", w.base+"/j/weekly/", nil, "If-None-Match", page.header.Get("ETag")); r.status != 304 {
		t.Fatalf("revalidation: %d", r.status)
	}

	upd := alice.must("jots_update_jot", map[string]any{"name": "weekly", "files": []any{map[string]any{"path": "data.json", "content": `{"week":2}`}}})
	if upd["version"] != float64(2) || upd["files"] != float64(3) {
		t.Fatalf("update = %v", upd)
	}
	if r := fetchJot(t, "GET", w.base+"/j/weekly/data.json", nil); r.body != `{"week":2}` || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("patched data: %q %q", r.body, r.header.Get("Content-Type"))
	}
	files := alice.must("jots_list_jot_files", map[string]any{"name": "weekly"})
	list := files["files"].([]any)
	if len(list) != 3 || list[1].(map[string]any)["path"] != "data.json" || list[1].(map[string]any)["sha256"] != sha256Hex(`{"week":2}`) {
		t.Fatalf("list_jot_files = %v", files)
	}

	alice.must("jots_update_jot", map[string]any{"name": "weekly", "access": "password", "password": "tuesday"})
	gate := fetchJot(t, "GET", w.base+"/j/weekly/data.json", nil)
	if gate.status != 401 || strings.Contains(gate.body, `"week"`) || !strings.Contains(gate.body, `name="password"`) {
		t.Fatalf("gate: %d %s", gate.status, gate.body)
	}
	unlock := fetchJot(t, "POST", w.base+"/j/weekly/data.json", strings.NewReader(url.Values{"password": {"tuesday"}}.Encode()),
		"Content-Type", "application/x-www-form-urlencoded")
	if unlock.status != 303 || unlock.header.Get("Set-Cookie") == "" {
		t.Fatalf("unlock: %d %v", unlock.status, unlock.header)
	}
	cookie := strings.SplitN(unlock.header.Get("Set-Cookie"), ";", 2)[0]
	if r := fetchJot(t, "GET", w.base+unlock.header.Get("Location"), nil); r.status != 200 || r.body != `{"week":2}` {
		t.Fatalf("unlocked: %d %s", r.status, r.body)
	}

	jots := alice.must("jots_list_jots", map[string]any{})["jots"].([]any)
	if len(jots) != 1 || jots[0].(map[string]any)["access"] != "password" || jots[0].(map[string]any)["url"] != w.base+"/j/weekly/" {
		t.Fatalf("list_jots = %v", jots)
	}
	if _, failure := bob.exec("jots_delete_jot", map[string]any{"name": "weekly"}); failure == nil || failure["reason"] != "NAME_TAKEN" {
		t.Fatalf("bob deleting: %v", failure)
	}
	alice.must("jots_delete_jot", map[string]any{"name": "weekly"})
	if r := fetchJot(t, "GET", w.base+"/j/weekly/data.json", nil, "Cookie", cookie); r.status != 404 ||
		r.header.Get("Content-Security-Policy") != "sandbox allow-scripts allow-forms allow-popups" {
		t.Fatalf("deleted: %d %v", r.status, r.header)
	}
	if jots := alice.must("jots_list_jots", map[string]any{})["jots"].([]any); len(jots) != 0 {
		t.Fatalf("list_jots after delete = %v", jots)
	}
}

// TestJots_chromium opens jots in a real Chromium: a public jot's script
// cannot read the server origin's cookies nor read /api or /mcp with
// credentials; the password gate works (its scripts load with the cookie);
// a CORS jot fetches its own JSON.
func TestJots_chromium(t *testing.T) {
	w := startWorkbench(t, Config{DataDir: t.TempDir()})
	agent := newJotsAgent(t, w, "alice@example.com")
	publish := func(name string, args map[string]any, entries ...tarballtest.Entry) {
		t.Helper()
		in := map[string]any{"name": name, "access": "public"}
		for k, v := range args {
			in[k] = v
		}
		dep := agent.must("jots_deploy_jot", in)
		if r := fetchJot(t, http.MethodPut, dep["uploadUrl"].(string), bytes.NewReader(tgz(t, entries...))); r.status != 200 {
			t.Fatalf("upload %s: %d %s", name, r.status, r.body)
		}
	}
	const probe = `const out = {origin: self.origin};
try { out.cookie = "read:" + document.cookie; } catch (e) { out.cookie = "threw:" + e.name; }
const attempt = (u, init) => fetch(u, Object.assign({credentials: "include"}, init)).then(r => "read:" + r.status, e => "blocked:" + e.name);
Promise.all([attempt("/api/whoami"), attempt("/mcp", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"})]).then(([api, mcp]) => {
  out.api = api; out.mcp = mcp;
  const p = document.createElement("p"); p.id = "done"; p.textContent = JSON.stringify(out); document.body.appendChild(p);
});`
	publish("probe", nil, tarballtest.Entry{Name: "index.html", Body: `<!doctype html><body><h1>probe</h1><script src="probe.js"></script></body>`},
		tarballtest.Entry{Name: "probe.js", Body: probe})
	publish("locked", map[string]any{"access": "password", "password": "open sesame"},
		tarballtest.Entry{Name: "index.html", Body: `<!doctype html><body><p id="status">html only</p><script src="js/run.js"></script></body>`},
		tarballtest.Entry{Name: "js/run.js", Body: `document.getElementById("status").textContent = "script ran"; document.getElementById("status").id = "ran";`})
	publish("charts", map[string]any{"cors": true},
		tarballtest.Entry{Name: "index.html", Body: `<!doctype html><body><script src="app.js"></script></body>`},
		tarballtest.Entry{Name: "app.js", Body: `fetch("data/series.json").then(r => r.json()).then(d => { const p = document.createElement("p"); p.id = "loaded"; p.textContent = d.series.join(","); document.body.appendChild(p); }, e => { const p = document.createElement("p"); p.id = "loaded"; p.textContent = "failed: " + e; document.body.appendChild(p); });`},
		tarballtest.Entry{Name: "data/series.json", Body: `{"series":[3,1,4,1,5]}`})

	tab := chromium(t)
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, steps...); err != nil {
			t.Fatalf("%s: %v\nserver log:\n%s", what, err, w.logs)
		}
	}
	text := func(id chromedp.ID) string {
		t.Helper()
		v, err := chromedp.Run(tab, chromedp.Text(id))
		if err != nil {
			t.Fatalf("text of %s: %v", id, err)
		}
		return strings.TrimSpace(v)
	}
	// A cookie on the server's own origin, readable by its scripts.
	do("set a cookie on the server origin", chromedp.Navigate(w.base+"/login"), chromedp.WaitVisible(chromedp.ID("email")))
	if v, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.cookie = "portal_visible=s3cret; path=/"; document.cookie`)); err != nil || !strings.Contains(v, "portal_visible=s3cret") {
		t.Fatalf("server-origin cookie: %q, %v", v, err)
	}

	do("open the public jot", chromedp.Navigate(w.base+"/j/probe/"), chromedp.WaitVisible(chromedp.ID("done")))
	var got map[string]string
	if err := json.Unmarshal([]byte(text("done")), &got); err != nil {
		t.Fatal(err)
	}
	if got["origin"] != "null" || got["cookie"] != "threw:SecurityError" || got["api"] != "blocked:TypeError" || got["mcp"] != "blocked:TypeError" {
		t.Fatalf("the jot's script got %v; want an opaque origin, no cookies and blocked /api and /mcp", got)
	}

	do("open the password jot", chromedp.Navigate(w.base+"/j/locked/"), chromedp.WaitVisible(chromedp.ID("jot-password")))
	do("wrong password", chromedp.SendKeys(chromedp.ID("jot-password"), "nope"), chromedp.Submit(chromedp.ID("jot-password")),
		chromedp.WaitVisible(chromedp.ID("jot-error")))
	if msg := text("jot-error"); msg != "Wrong password." {
		t.Fatalf("error after a wrong password: %q", msg)
	}
	do("right password", chromedp.SendKeys(chromedp.ID("jot-password"), "open sesame"), chromedp.Submit(chromedp.ID("jot-password")),
		chromedp.WaitVisible(chromedp.ID("ran")))
	if msg := text("ran"); msg != "script ran" {
		t.Fatalf("after unlocking: %q", msg)
	}
	do("reload the password jot", chromedp.Navigate(w.base+"/j/locked/"), chromedp.WaitVisible(chromedp.ID("ran")))

	do("open the CORS jot", chromedp.Navigate(w.base+"/j/charts/"), chromedp.WaitVisible(chromedp.ID("loaded")))
	if v := text("loaded"); v != "3,1,4,1,5" {
		t.Fatalf("the CORS jot read %q", v)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestServer_jotsLargeUpload publishes a site whose tarball is over Fiber's
// 4 MiB body limit but within the jot limits: the upload route streams.
func TestServer_jotsLargeUpload(t *testing.T) {
	w := startWorkbench(t, Config{DataDir: t.TempDir()})
	alice := newJotsAgent(t, w, "alice@example.com")
	dep := alice.must("jots_deploy_jot", map[string]any{"name": "big", "access": "public"})
	noise := make([]byte, 4<<20+512<<10) // incompressible: the tarball stays over 4 MiB
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	site := tgz(t, tarballtest.Entry{Name: "noise.bin", Body: string(noise)})
	if len(site) <= 4<<20 {
		t.Fatalf("the tarball is only %d bytes", len(site))
	}
	if r := fetchJot(t, http.MethodPut, dep["uploadUrl"].(string), bytes.NewReader(site)); r.status != 200 {
		t.Fatalf("upload of %d bytes: %d %s", len(site), r.status, r.body)
	}
	if r := fetchJot(t, "GET", w.base+"/j/big/noise.bin", nil); r.status != 200 || r.body != string(noise) {
		t.Fatalf("served %d bytes with status %d, want the %d uploaded", len(r.body), r.status, len(noise))
	}
}
