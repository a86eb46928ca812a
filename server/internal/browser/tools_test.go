package browser

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/toolcall"
)

// call runs a tool for user in the shared manager and decodes its result.
func call(t *testing.T, user, tool string, input any) (map[string]any, error) {
	t.Helper()
	requireChromium(t)
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	out, err := shared.Call(testContext(t), toolcall.Call{Tool: tool, UserID: user, Input: in})
	if err != nil {
		return nil, err
	}
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%s returned %s: %v", tool, out, err)
	}
	return res, nil
}

// must is call for a call that must succeed.
func must(t *testing.T, user, tool string, input any) map[string]any {
	t.Helper()
	res, err := call(t, user, tool, input)
	if err != nil {
		t.Fatalf("%s(%v): %v", tool, input, err)
	}
	return res
}

// inTab evaluates an expression that may return a promise in user's tab.
func inTab(t *testing.T, user, expr string) string {
	t.Helper()
	sess, release, err := shared.Acquire(testContext(t), user)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(sess.tab, testTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// TestManager_Call_egress: no URL, redirect, subresource, fetch, WebSocket
// or rebound name takes the browser to a refused address; the victim is
// never reached.
func TestManager_Call_egress(t *testing.T) {
	hits.Store(0)
	victimAddr := strings.TrimPrefix(victimURL, "http://")
	redirect := handle(t, http.RedirectHandler(victimURL+"/redirected", http.StatusFound))
	// Connection: close makes the proxy dial (and resolve) again for the
	// page's next request.
	rebound := strings.Replace(handle(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Connection", "close")
		fmt.Fprint(w, "<title>rebound</title>")
	})), "127.0.0.1", rebindHost, 1)
	tests := []struct {
		name string
		url  string
		code failure.Code
		want []string
	}{
		{"victim", victimURL + "/", failure.EgressDenied, []string{victimAddr, "loopback"}},
		{"redirect", redirect, failure.EgressDenied, []string{victimAddr, "loopback"}},
		{"localhost name", "http://localhost:" + strings.Split(victimAddr, ":")[1] + "/", failure.EgressDenied, []string{"localhost", "loopback"}},
		{"metadata", "http://169.254.169.254/latest/meta-data/", failure.EgressDenied, []string{"169.254.169.254"}},
		{"ipv4-mapped", "http://[::ffff:127.0.0.2]:" + strings.Split(victimAddr, ":")[1] + "/", failure.EgressDenied, []string{"127.0.0.2"}},
		{"file", "file:///etc/passwd", failure.EgressDenied, []string{"http and https", "file:"}},
		{"chrome", "chrome://version", failure.EgressDenied, []string{"chrome:"}},
		{"javascript", "javascript:alert(1)", failure.EgressDenied, []string{"javascript:"}},
		{"user info", "http://user:pw@" + pagesHost + "/", failure.InvalidArguments, []string{"user name"}},
		{"no host", "http:///x", failure.InvalidArguments, []string{"no host"}},
		{"too long", "http://a.test/" + strings.Repeat("a", maxURLBytes), failure.InvalidArguments, []string{"8192"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call(t, "egress", ToolNavigate, map[string]any{"url": tt.url})
			wantCode(t, err, tt.code, tt.want...)
		})
	}
	t.Run("subresources", func(t *testing.T) {
		url := page(t, fmt.Sprintf(`<title>hostile</title><img src="%[1]s/img"><script src="%[1]s/script.js"></script>
<script>const x = new XMLHttpRequest(); try { x.open("GET", "%[1]s/xhr", false); x.send() } catch (e) {}</script>`, victimURL))
		res := must(t, "egress", ToolNavigate, map[string]any{"url": url})
		if res["title"] != "hostile" || res["status"] != float64(200) {
			t.Fatalf("navigate = %v, want the hostile page with status 200", res)
		}
		refused := fmt.Sprint(res["refused"])
		if !strings.Contains(refused, victimAddr) {
			t.Fatalf("refused = %s, want the victim %s named", refused, victimAddr)
		}
		for _, probe := range []struct{ name, expr string }{
			{"fetch", `fetch("` + victimURL + `/fetch").then(() => "reached", () => "blocked")`},
			{"websocket", `new Promise(r => { const w = new WebSocket("` + strings.Replace(victimURL, "http", "ws", 1) + `/ws"); w.onopen = () => r("reached"); w.onerror = () => r("blocked") })`},
		} {
			if got := inTab(t, "egress", probe.expr); got != "blocked" {
				t.Errorf("%s: %s", probe.name, got)
			}
		}
	})
	t.Run("rebinding", func(t *testing.T) {
		res := must(t, "egress", ToolNavigate, map[string]any{"url": rebound})
		if res["title"] != "rebound" {
			t.Fatalf("navigate = %v", res)
		}
		got := inTab(t, "egress", `fetch("/p/secret", {cache: "no-store"}).then(r => r.text(), () => "blocked")`)
		if got != "blocked" {
			t.Fatalf("a fetch after the name rebound got %q, want it blocked", got)
		}
	})
	if n := hits.Load(); n != 0 {
		t.Fatalf("the victim got %d requests", n)
	}
}

// TestManager_Call_isolation: one user's cookies, storage and profile are
// invisible to another user of the same site.
func TestManager_Call_isolation(t *testing.T) {
	set := page(t, `<script>document.cookie = "js=alice; max-age=3600; path=/"; localStorage.setItem("who", "alice")</script><p>set</p>`)
	setHeader := handle(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "server", Value: "alice", MaxAge: 3600, Path: "/", HttpOnly: true})
		fmt.Fprint(w, "<p>set</p>")
	}))
	echo := handle(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<p id=cookie>cookie:%s</p>", r.Header.Get("Cookie"))
	}))
	must(t, "alice", ToolNavigate, map[string]any{"url": set})
	must(t, "alice", ToolNavigate, map[string]any{"url": setHeader})
	tests := []struct {
		user, want, storage string
	}{
		{"alice", "cookie:js=alice; server=alice", "alice"},
		{"bob", "cookie:", ""},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			must(t, tt.user, ToolNavigate, map[string]any{"url": echo})
			if got := must(t, tt.user, ToolGetText, map[string]any{"selector": "#cookie"})["text"]; got != tt.want {
				t.Errorf("the site saw %q, want %q", got, tt.want)
			}
			if got := inTab(t, tt.user, `localStorage.getItem("who") ?? ""`); got != tt.storage {
				t.Errorf("localStorage who = %q, want %q", got, tt.storage)
			}
			info, err := os.Stat(filepath.Join(shared.dir, tt.user))
			if err != nil || info.Mode().Perm() != 0o700 {
				t.Errorf("profile %s: %v, %v; want a 0700 directory", tt.user, info, err)
			}
		})
	}
}

// TestManager_Call_tools drives every tool on a local page and checks each
// tool's specific errors.
func TestManager_Call_tools(t *testing.T) {
	form := page(t, `<title>form</title>
<form onsubmit="event.preventDefault(); document.getElementById('out').textContent = 'sent:' + this.q.value"><input id=q name=q></form>
<button id=b onclick="document.getElementById('out').textContent = 'clicked'">go</button><p id=out>idle</p>
<button id=later onclick="setTimeout(() => { const p = document.createElement('p'); p.id = 'late'; p.textContent = 'arrived'; document.body.append(p) }, 50)">later</button>
<a href="/one">One</a> <a href="https://example.com/two">Two</a><div id=hidden style="display:none">x</div>`)
	long := page(t, "<p>"+strings.Repeat("é", maxTextBytes)+"</p>")
	must(t, "tools", ToolNavigate, map[string]any{"url": form})

	text := must(t, "tools", ToolGetText, map[string]any{})
	if !strings.Contains(text["text"].(string), "idle") || text["truncated"] != false || text["title"] != "form" {
		t.Errorf("get_text = %v", text)
	}
	if links := fmt.Sprint(text["links"]); !strings.Contains(links, pages.URL+"/one") || !strings.Contains(links, "https://example.com/two") {
		t.Errorf("links = %s", links)
	}
	must(t, "tools", ToolClick, map[string]any{"selector": "#b"})
	if got := must(t, "tools", ToolGetText, map[string]any{"selector": "#out"})["text"]; got != "clicked" {
		t.Errorf("after click, #out = %q", got)
	}
	must(t, "tools", ToolClick, map[string]any{"selector": "#later"})
	must(t, "tools", ToolWaitFor, map[string]any{"selector": "#late", "timeout_seconds": 20})
	must(t, "tools", ToolWaitFor, map[string]any{"text": "arrived"})
	shot := must(t, "tools", ToolScreenshot, map[string]any{"selector": "#b"})
	blocks, _ := shot["$content"].([]any)
	if len(blocks) != 1 {
		t.Fatalf("screenshot = %v", shot)
	}
	block := blocks[0].(map[string]any)
	png, err := base64.StdEncoding.DecodeString(fmt.Sprint(block["data"]))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || block["mimeType"] != "image/png" || block["type"] != "image" {
		t.Errorf("screenshot is not a PNG image block: %v %v", block["mimeType"], err)
	}
	must(t, "tools", ToolScreenshot, map[string]any{"full_page": true})
	must(t, "tools", ToolType, map[string]any{"selector": "#q", "text": "café <b>", "submit": true})
	if got := must(t, "tools", ToolGetText, map[string]any{"selector": "#out"})["text"]; got != "sent:café <b>" {
		t.Errorf("after type with submit, #out = %q", got)
	}

	evals := []struct{ expr, want string }{
		{"1 + 1", "2"},
		{"document.title", `"form"`},
		{"Promise.resolve({a: [1, 'é']})", `{"a":[1,"é"]}`},
		{"undefined", "null"},
		{"() => 1", "null"},
		{"1 // a trailing comment", "1"},
	}
	for _, tt := range evals {
		res := must(t, "tools", ToolEvaluate, map[string]any{"expression": tt.expr})
		if got, _ := json.Marshal(res["value"]); string(got) != tt.want {
			t.Errorf("evaluate %s = %s, want %s", tt.expr, got, tt.want)
		}
	}

	errs := []struct {
		name  string
		tool  string
		input any
		code  failure.Code
		want  []string
	}{
		{"click missing", ToolClick, map[string]any{"selector": "#nope"}, failure.SelectorNotFound, []string{"#nope", pages.URL}},
		{"type missing", ToolType, map[string]any{"selector": "#nope", "text": "x"}, failure.SelectorNotFound, []string{"#nope"}},
		{"text missing", ToolGetText, map[string]any{"selector": "#nope"}, failure.SelectorNotFound, []string{"#nope"}},
		{"shot missing", ToolScreenshot, map[string]any{"selector": "#nope"}, failure.SelectorNotFound, []string{"#nope"}},
		{"invalid css", ToolClick, map[string]any{"selector": "a[["}, failure.InvalidArguments, []string{"a[[", "not valid CSS"}},
		{"invalid css text", ToolGetText, map[string]any{"selector": "<script>"}, failure.InvalidArguments, []string{"not valid CSS"}},
		{"hostile selector", ToolGetText, map[string]any{"selector": `"); throw 1; ("`}, failure.InvalidArguments, []string{"not valid CSS"}},
		{"long selector", ToolClick, map[string]any{"selector": strings.Repeat("a", maxSelectorBytes+1)}, failure.InvalidArguments, []string{"1024"}},
		{"long text", ToolType, map[string]any{"selector": "#q", "text": strings.Repeat("a", maxTypeBytes+1)}, failure.InvalidArguments, []string{"16384"}},
		{"no selector", ToolClick, map[string]any{}, failure.InvalidArguments, []string{"selector is required"}},
		{"unknown field", ToolNavigate, map[string]any{"url": form, "x": 1}, failure.InvalidArguments, []string{"x"}},
		{"both shots", ToolScreenshot, map[string]any{"selector": "#b", "full_page": true}, failure.InvalidArguments, []string{"not both"}},
		{"wait never", ToolWaitFor, map[string]any{"selector": "#never", "timeout_seconds": 1}, failure.Timeout, []string{"#never", "1s", pages.URL}},
		{"wait text never", ToolWaitFor, map[string]any{"text": "never there", "timeout_seconds": 1}, failure.Timeout, []string{"never there"}},
		{"wait both", ToolWaitFor, map[string]any{"selector": "#q", "text": "x"}, failure.InvalidArguments, []string{"exactly one"}},
		{"wait neither", ToolWaitFor, map[string]any{}, failure.InvalidArguments, []string{"exactly one"}},
		{"wait too long", ToolWaitFor, map[string]any{"selector": "#q", "timeout_seconds": 3600}, failure.InvalidArguments, []string{"from 1 to 25"}},
		{"wait invalid css", ToolWaitFor, map[string]any{"selector": "a[["}, failure.InvalidArguments, []string{"not valid CSS"}},
		{"eval too large", ToolEvaluate, map[string]any{"expression": `"x".repeat(100000)`}, failure.OutputTooLarge, []string{"65536"}},
		{"eval throws", ToolEvaluate, map[string]any{"expression": `(() => { throw new Error("boom") })()`}, failure.ToolError, []string{"boom"}},
		{"eval rejects", ToolEvaluate, map[string]any{"expression": `Promise.reject(new Error("nope"))`}, failure.ToolError, []string{"nope"}},
		{"eval circular", ToolEvaluate, map[string]any{"expression": `(() => { const o = {}; o.o = o; return o })()`}, failure.ToolError, []string{"cannot be encoded"}},
		{"eval syntax", ToolEvaluate, map[string]any{"expression": `let x = 1`}, failure.ToolError, []string{"threw"}},
		{"eval empty", ToolEvaluate, map[string]any{"expression": " "}, failure.InvalidArguments, []string{"required"}},
		{"eval long", ToolEvaluate, map[string]any{"expression": strings.Repeat("1", maxExpressionBytes+1)}, failure.InvalidArguments, []string{"65536"}},
		{"unknown tool", "browser_fly", map[string]any{}, failure.UnknownTool, []string{"browser_fly"}},
		{"tls to http", ToolNavigate, map[string]any{"url": strings.Replace(form, "http:", "https:", 1)}, failure.NavigationFailed, []string{"net::ERR_"}},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call(t, "tools", tt.tool, tt.input)
			wantCode(t, err, tt.code, tt.want...)
		})
	}

	t.Run("deadline", func(t *testing.T) {
		// A hidden element never becomes clickable; the call's deadline
		// ends the wait.
		must(t, "tools", ToolNavigate, map[string]any{"url": form})
		ctx, cancel := context.WithTimeout(testContext(t), 2*time.Second)
		defer cancel()
		_, err := shared.Call(ctx, toolcall.Call{Tool: ToolClick, UserID: "tools", Input: []byte(`{"selector":"#hidden"}`)})
		wantCode(t, err, failure.Timeout, "browser_click")
	})
	t.Run("hostile title and links", func(t *testing.T) {
		huge := page(t, "<title>"+strings.Repeat("t", 100_000)+"</title><a href='/"+strings.Repeat("h", 100_000)+"'>x</a>"+
			strings.Repeat("<a href=/l>l</a>", maxLinks+50))
		nav := must(t, "tools", ToolNavigate, map[string]any{"url": huge})
		res := must(t, "tools", ToolGetText, map[string]any{})
		links := res["links"].([]any)
		if len(nav["title"].(string)) != maxTitleBytes || len(res["title"].(string)) != maxTitleBytes || len(links) != maxLinks ||
			len(links[0].(map[string]any)["href"].(string)) != maxURLBytes {
			t.Errorf("titles %d and %d bytes, %d links, first href %d bytes; want %d, %d, %d", len(nav["title"].(string)), len(res["title"].(string)),
				len(links), len(links[0].(map[string]any)["href"].(string)), maxTitleBytes, maxLinks, maxURLBytes)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		must(t, "tools", ToolNavigate, map[string]any{"url": long})
		res := must(t, "tools", ToolGetText, map[string]any{})
		got := res["text"].(string)
		if res["truncated"] != true || len(got) > maxTextBytes || !strings.HasPrefix(got, "éé") || strings.ContainsRune(got, '\uFFFD') {
			t.Errorf("truncated = %v, %d bytes, want at most %d bytes of whole runes", res["truncated"], len(got), maxTextBytes)
		}
	})
}

// TestManager_Call_tabs opens, switches, lists and closes tabs, a tab a
// page opened included, and checks the tabs' errors.
func TestManager_Call_tabs(t *testing.T) {
	second := page(t, `<title>second</title><p id=p>in the second tab</p>`)
	popup := page(t, `<title>popup</title><p id=p>in the popup</p>`)
	first := page(t, fmt.Sprintf(`<title>first</title><p id=p>in the first tab</p><a id=pop href="%s" target=_blank>pop</a>`, popup))
	must(t, "tabs", ToolNavigate, map[string]any{"url": first})
	list := func() []map[string]any {
		t.Helper()
		var out []map[string]any
		for _, tab := range must(t, "tabs", ToolTabs, map[string]any{"action": "list"})["tabs"].([]any) {
			out = append(out, tab.(map[string]any))
		}
		return out
	}
	idOf := func(title string) string {
		t.Helper()
		for _, tab := range list() {
			if tab["title"] == title {
				return tab["id"].(string)
			}
		}
		t.Fatalf("no tab titled %q in %v", title, list())
		return ""
	}
	readP := func() string {
		t.Helper()
		return must(t, "tabs", ToolGetText, map[string]any{"selector": "#p"})["text"].(string)
	}
	firstID := idOf("first")

	opened := must(t, "tabs", ToolTabs, map[string]any{"action": "open", "url": second})
	if page, _ := opened["page"].(map[string]any); page["title"] != "second" || len(opened["tabs"].([]any)) != 2 {
		t.Fatalf("open = %v", opened)
	}
	if got := readP(); got != "in the second tab" {
		t.Fatalf("after open, the current tab reads %q", got)
	}
	must(t, "tabs", ToolTabs, map[string]any{"action": "switch", "tab_id": firstID})
	if got := readP(); got != "in the first tab" {
		t.Fatalf("after switch, the current tab reads %q", got)
	}
	// openPopup clicks the first tab's target=_blank link and switches to
	// the tab it opens.
	openPopup := func() string {
		t.Helper()
		must(t, "tabs", ToolClick, map[string]any{"selector": "#pop"})
		for try := 0; ; try++ { // the popup's tab appears once the click's navigation starts
			if try == 100 {
				t.Fatalf("the link's popup never appeared among %v", list())
			}
			for _, tab := range list() {
				if tab["id"] != firstID && strings.Contains(fmt.Sprint(tab["url"]), popup) {
					must(t, "tabs", ToolTabs, map[string]any{"action": "switch", "tab_id": tab["id"]})
					return tab["id"].(string)
				}
			}
		}
	}
	popupID := openPopup()
	must(t, "tabs", ToolWaitFor, map[string]any{"selector": "#p"})
	if got := readP(); got != "in the popup" {
		t.Fatalf("after switching to the popup, the current tab reads %q", got)
	}
	closed := must(t, "tabs", ToolTabs, map[string]any{"action": "close", "tab_id": popupID})
	if n := len(closed["tabs"].([]any)); n != 2 {
		t.Fatalf("after close, %d tabs: %v", n, closed)
	}
	if got := readP(); got != "in the first tab" {
		t.Fatalf("after closing the current tab, the current tab reads %q", got)
	}

	// A tab whose page closes itself stops being current.
	openPopup()
	must(t, "tabs", ToolEvaluate, map[string]any{"expression": "window.close()"})
	for try := 0; len(list()) != 2; try++ {
		if try == 100 {
			t.Fatalf("the tab never closed: %v", list())
		}
	}
	if got := readP(); got != "in the first tab" {
		t.Fatalf("after the current tab closed itself, the current tab reads %q", got)
	}

	errs := []struct {
		name  string
		input map[string]any
		code  failure.Code
		want  []string
	}{
		{"close first", map[string]any{"action": "close", "tab_id": firstID}, failure.InvalidArguments, []string{"first tab"}},
		{"close unknown", map[string]any{"action": "close", "tab_id": "nope"}, failure.NotFound, []string{"nope"}},
		{"switch unknown", map[string]any{"action": "switch", "tab_id": "nope"}, failure.NotFound, []string{"nope"}},
		{"switch no id", map[string]any{"action": "switch"}, failure.InvalidArguments, []string{"tab_id"}},
		{"open file", map[string]any{"action": "open", "url": "file:///etc/passwd"}, failure.EgressDenied, []string{"file:"}},
		{"list with url", map[string]any{"action": "list", "url": second}, failure.InvalidArguments, []string{"only with action open"}},
		{"bad action", map[string]any{"action": "fly"}, failure.InvalidArguments, []string{"fly"}},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call(t, "tabs", ToolTabs, tt.input)
			wantCode(t, err, tt.code, tt.want...)
		})
	}
	t.Run("limit", func(t *testing.T) {
		for n := len(list()); n < maxTabs; n++ {
			must(t, "tabs", ToolTabs, map[string]any{"action": "open"})
		}
		_, err := call(t, "tabs", ToolTabs, map[string]any{"action": "open"})
		wantCode(t, err, failure.LimitExceeded, "10")
	})
}
