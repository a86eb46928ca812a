package slacktest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/toolcall"
)

// slackWasmPath is the built plugin under test.
const slackWasmPath = "../slack/slack.wasm"

const (
	token  = "xoxb-1111-2222-testtoken"
	userID = "u1"
)

// fixture is the built Slack plugin pointed at a fresh fake through the
// name slack.test, which only the test's resolver knows (as 127.0.0.1).
type fixture struct {
	fake     *Fake
	plugin   *runtime.Plugin
	resolver *loopbackResolver
	creds    *credential.Memory
}

func newFixture(t testing.TB, scopes ...string) *fixture {
	t.Helper()
	f := &fixture{
		fake:     NewFake(t, token, scopes...),
		resolver: newLoopbackResolver("slack.test", "files.slack.com"),
		creds:    credential.NewMemory(),
	}
	f.creds.Set(userID, "slack", &credential.Credential{AccessToken: token})
	f.plugin = plugintest.Load(t, plugintest.ReadWasm(t, slackWasmPath), plugintest.HostConfig{
		CacheDir:    cacheDir,
		Credentials: f.creds,
		Egress:      loopbackEgress(t, f.resolver, f.fake.Port()),
		Settings:    runtime.MapSettings{"slack": {"base_url": "http://slack.test:" + f.fake.Port() + "/api"}},
	})
	return f
}

func (f *fixture) callAs(user, tool, input string, progress func(toolcall.Progress)) (json.RawMessage, error) {
	return plugintest.Call(f.plugin, user, tool, input, progress)
}

// call runs a tool that must succeed and decodes its output.
func (f *fixture) call(t *testing.T, tool, input string) map[string]any {
	t.Helper()
	var out map[string]any
	plugintest.CallInto(t, f.plugin, userID, tool, input, &out)
	return out
}

// toolError runs a tool that must fail and returns its error.
func (f *fixture) toolError(t *testing.T, tool, input string) *failure.Error {
	t.Helper()
	return plugintest.ToolError(t, f.plugin, userID, tool, input)
}

// details decodes a tool error's details.
func details(t *testing.T, te *failure.Error) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(te.Details, &d); err != nil {
		t.Fatalf("details of %s: %s: %v", te.Code, te.Details, err)
	}
	return d
}

// apiRequests returns the Web API requests since the last clear, each
// checked for the injected bearer token and the plugin's User-Agent.
func (f *fixture) apiRequests(t *testing.T) []Request {
	t.Helper()
	reqs := f.fake.Requests()
	for _, r := range reqs {
		if got := r.Header.Values("Authorization"); !slices.Equal(got, []string{"Bearer " + token}) {
			t.Errorf("%s %s: Authorization = %q, want exactly the injected bot token", r.Method, r.Path, got)
		}
		if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "workbench-slack-plugin/") {
			t.Errorf("%s %s: User-Agent = %q", r.Method, r.Path, ua)
		}
	}
	return reqs
}

// only returns the only request the fake saw.
func (f *fixture) only(t *testing.T) Request {
	t.Helper()
	reqs := f.apiRequests(t)
	if len(reqs) != 1 {
		t.Fatalf("fake saw %d requests, want 1: %+v", len(reqs), reqs)
	}
	return reqs[0]
}

// assertRead checks a read method called as GET with exactly the query want.
func assertRead(t *testing.T, r Request, method string, want url.Values) {
	t.Helper()
	if r.Method != "GET" || r.Path != "/api/"+method || len(r.Body) != 0 {
		t.Errorf("request = %s %s with %d body bytes, want GET /api/%s without a body", r.Method, r.Path, len(r.Body), method)
	}
	if !reflect.DeepEqual(r.Query, want) {
		t.Errorf("%s query = %v, want %v", method, r.Query, want)
	}
}

// assertJSONPost checks a chat.* write: POST with a JSON body equal to want.
func assertJSONPost(t *testing.T, r Request, method, want string) {
	t.Helper()
	if r.Method != "POST" || r.Path != "/api/"+method {
		t.Errorf("request = %s %s, want POST /api/%s", r.Method, r.Path, method)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("%s Content-Type = %q", method, ct)
	}
	if !jsonEqual(t, r.Body, []byte(want)) {
		t.Errorf("%s body = %s, want %s", method, r.Body, want)
	}
}

// assertFormPost checks a form POST with exactly the fields want.
func assertFormPost(t *testing.T, r Request, method string, want url.Values) {
	t.Helper()
	if r.Method != "POST" || r.Path != "/api/"+method {
		t.Errorf("request = %s %s, want POST /api/%s", r.Method, r.Path, method)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		t.Errorf("%s Content-Type = %q", method, ct)
	}
	got, err := url.ParseQuery(string(r.Body))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%s form = %v (%v), want %v", method, got, err, want)
	}
}

func ids(t *testing.T, list any, key string) []string {
	t.Helper()
	items, ok := list.([]any)
	if !ok {
		t.Fatalf("%v is not a list", list)
	}
	var out []string
	for _, it := range items {
		out = append(out, it.(map[string]any)[key].(string))
	}
	return out
}

var allTools = []string{
	"slack_list_conversations", "slack_get_conversation_history", "slack_get_thread_replies", "slack_get_conversation_info",
	"slack_post_message", "slack_update_message", "slack_delete_message", "slack_get_permalink",
	"slack_add_reaction", "slack_remove_reaction", "slack_list_users", "slack_get_user", "slack_auth_test",
	"slack_upload_file", "slack_search_messages",
}

func TestPlugin_Manifest(t *testing.T) {
	m := newFixture(t).plugin.Manifest()
	if m.Name != "slack" || m.BaseURL != "https://slack.com/api" || m.Proxy == nil || m.Proxy.BaseURL != "https://slack.com/api" ||
		!slices.Equal(m.Hosts, []string{"slack.com", "files.slack.com"}) || m.Limits == nil || m.Limits.MemoryPages != 1024 {
		t.Errorf("manifest head = %+v", m)
	}
	o := m.Auth.OAuth2
	if m.Auth.Mode != "oauth2" || o == nil || o.AuthorizeURL != "https://slack.com/oauth/v2/authorize" ||
		o.TokenURL != "https://slack.com/api/oauth.v2.access" || o.TokenAuth != "post" {
		t.Fatalf("auth = %+v %+v", m.Auth, o)
	}
	for _, s := range []string{"channels:read", "channels:history", "chat:write", "reactions:write", "users:read", "files:write", "search:read"} {
		if !slices.Contains(o.Scopes, s) {
			t.Errorf("scopes %v lack %s", o.Scopes, s)
		}
	}
	var slugs []string
	for _, tool := range m.Tools {
		slugs = append(slugs, tool.Slug)
		var schema struct{ Type string }
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s inputSchema %s: %v", tool.Slug, tool.InputSchema, err)
		}
		if len(tool.OutputSchema) == 0 {
			t.Errorf("%s has no outputSchema", tool.Slug)
		}
	}
	if !slices.Equal(slugs, allTools) {
		t.Errorf("tools = %v\nwant %v", slugs, allTools)
	}
	annotations := map[string][2]bool{ // readOnly, destructive
		"slack_list_conversations": {true, false},
		"slack_search_messages":    {true, false},
		"slack_post_message":       {false, false},
		"slack_add_reaction":       {false, false},
		"slack_upload_file":        {false, false},
		"slack_delete_message":     {false, true},
	}
	for slug, want := range annotations {
		a := m.Tool(slug).Annotations
		if [2]bool{a.ReadOnly, a.Destructive} != want || !a.OpenWorld {
			t.Errorf("%s annotations = %+v, want readOnly/destructive %v and openWorld", slug, a, want)
		}
	}
}

func TestPlugin_ListConversations(t *testing.T) {
	f := newFixture(t)
	out := f.call(t, "slack_list_conversations", `{}`)
	if got := ids(t, out["channels"], "name"); !slices.Equal(got, []string{"general", "random", "old-project", "ops"}) {
		t.Errorf("channels = %v", got)
	}
	general := out["channels"].([]any)[0].(map[string]any)
	if general["id"] != "C0000000001" || general["topic"] != "Company-wide" || general["purpose"] != "Announcements" ||
		general["num_members"] != 4.0 || general["is_member"] != true {
		t.Errorf("general = %v", general)
	}
	if out["next_cursor"] != "" {
		t.Errorf("next_cursor = %v on the only page", out["next_cursor"])
	}
	assertRead(t, f.only(t), "conversations.list", url.Values{"types": {"public_channel"}, "exclude_archived": {"false"}, "limit": {"100"}})

	t.Run("types and exclude_archived", func(t *testing.T) {
		f.fake.ClearRequests()
		out := f.call(t, "slack_list_conversations", `{"types":["public_channel","private_channel"],"exclude_archived":true}`)
		if got := ids(t, out["channels"], "name"); !slices.Equal(got, []string{"general", "random", "leadership", "ops"}) {
			t.Errorf("channels = %v", got)
		}
		if q := f.only(t).Query; q.Get("types") != "public_channel,private_channel" || q.Get("exclude_archived") != "true" {
			t.Errorf("query = %v", q)
		}
	})

	t.Run("cursor pages", func(t *testing.T) {
		f.fake.ClearRequests()
		first := f.call(t, "slack_list_conversations", `{"limit":3}`)
		cursor, _ := first["next_cursor"].(string)
		if got := ids(t, first["channels"], "name"); !slices.Equal(got, []string{"general", "random", "old-project"}) || cursor == "" {
			t.Fatalf("first page = %v, cursor %q", got, cursor)
		}
		in, _ := json.Marshal(map[string]any{"limit": 3, "cursor": cursor})
		second := f.call(t, "slack_list_conversations", string(in))
		if got := ids(t, second["channels"], "name"); !slices.Equal(got, []string{"ops"}) || second["next_cursor"] != "" {
			t.Errorf("second page = %v, cursor %v", got, second["next_cursor"])
		}
		if q := f.apiRequests(t)[1].Query; q.Get("cursor") != cursor {
			t.Errorf("second request cursor = %q, want %q", q.Get("cursor"), cursor)
		}
	})

	t.Run("max_pages follows next_cursor", func(t *testing.T) {
		f.fake.ClearRequests()
		var reports []toolcall.Progress
		raw, err := f.callAs(userID, "slack_list_conversations", `{"limit":1,"max_pages":10,"types":["public_channel","private_channel","im"]}`,
			func(p toolcall.Progress) { reports = append(reports, p) })
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Channels   []map[string]any
			NextCursor string `json:"next_cursor"`
		}
		json.Unmarshal(raw, &out)
		if len(out.Channels) != 6 || out.NextCursor != "" {
			t.Errorf("got %d channels, cursor %q; want all 6 and no cursor", len(out.Channels), out.NextCursor)
		}
		reqs := f.apiRequests(t)
		if len(reqs) != 6 || reqs[0].Query.Has("cursor") || reqs[5].Query.Get("cursor") == "" {
			t.Errorf("%d requests (first cursor %q, last %q)", len(reqs), reqs[0].Query.Get("cursor"), reqs[len(reqs)-1].Query.Get("cursor"))
		}
		// The host keeps the first report and the final one (done == total).
		if n := len(reports); n < 2 || reports[0] != (toolcall.Progress{Done: 1, Total: 10, Message: "read page 1"}) ||
			reports[n-1] != (toolcall.Progress{Done: 6, Total: 6, Message: "read page 6"}) {
			t.Errorf("progress = %+v", reports)
		}
	})

	t.Run("max_pages stops at its count", func(t *testing.T) {
		out := f.call(t, "slack_list_conversations", `{"limit":1,"max_pages":2}`)
		if got := ids(t, out["channels"], "name"); !slices.Equal(got, []string{"general", "random"}) || out["next_cursor"] == "" {
			t.Errorf("channels = %v, next_cursor %v; want 2 and a cursor to go on", got, out["next_cursor"])
		}
	})

	t.Run("errors", func(t *testing.T) {
		tests := []struct {
			name, input, code, slackError string
		}{
			{"invalid cursor", `{"cursor":"bm90LWEtY3Vyc29y"}`, "INVALID_ARGUMENTS", "invalid_cursor"},
			{"limit out of range", `{"limit":0}`, "INVALID_ARGUMENTS", ""},
			{"unknown type", `{"types":["dm"]}`, "INVALID_ARGUMENTS", ""},
			{"unknown field", `{"channel_types":"im"}`, "INVALID_ARGUMENTS", ""},
		}
		for _, tt := range tests {
			f.fake.ClearRequests()
			te := f.toolError(t, "slack_list_conversations", tt.input)
			if string(te.Code) != tt.code {
				t.Errorf("%s: code %s (%s), want %s", tt.name, te.Code, te.Message, tt.code)
			}
			sent := len(f.fake.Requests())
			if tt.slackError == "" && sent != 0 {
				t.Errorf("%s: %d requests sent for input the plugin should refuse", tt.name, sent)
			}
			if tt.slackError != "" && details(t, te)["slack_error"] != tt.slackError {
				t.Errorf("%s: details %s", tt.name, te.Details)
			}
		}
	})
}

func TestPlugin_ListConversationsMissingScope(t *testing.T) {
	f := newFixture(t, "channels:read")
	te := f.toolError(t, "slack_list_conversations", `{"types":["private_channel"]}`)
	d := details(t, te)
	if te.Code != "FORBIDDEN" || d["needed"] != "groups:read" || d["provided"] != "channels:read" || d["slack_error"] != "missing_scope" ||
		!strings.Contains(te.Message, "groups:read") {
		t.Errorf("error = %s %q %v", te.Code, te.Message, d)
	}
}

func TestPlugin_History(t *testing.T) {
	f := newFixture(t)
	out := f.call(t, "slack_get_conversation_history", `{"channel":"C0000000001"}`)
	msgs := out["messages"].([]any)
	if got := ids(t, msgs, "text"); !slices.Equal(got, []string{"Build 77 passed", "Lunch at noon?", "Deploy 1.2 is out :tada:"}) {
		t.Fatalf("texts = %v", got)
	}
	parent := msgs[2].(map[string]any)
	reactions, _ := json.Marshal(parent["reactions"])
	if parent["reply_count"] != 2.0 || parent["user"] != "U0000000001" || string(reactions) != `[{"count":1,"name":"tada","users":["U0000000002"]}]` {
		t.Errorf("parent = %v", parent)
	}
	if msgs[0].(map[string]any)["bot_id"] != "B0000000001" || out["has_more"] != false || out["next_cursor"] != "" {
		t.Errorf("out = %v", out)
	}
	assertRead(t, f.only(t), "conversations.history", url.Values{"channel": {"C0000000001"}, "limit": {"100"}})

	t.Run("page and range", func(t *testing.T) {
		f.fake.ClearRequests()
		all := f.fake.Messages("C0000000001")
		in, _ := json.Marshal(map[string]any{"channel": "C0000000001", "limit": 1, "oldest": all[0].TS, "inclusive": true})
		out := f.call(t, "slack_get_conversation_history", string(in))
		if got := ids(t, out["messages"], "text"); !slices.Equal(got, []string{"Build 77 passed"}) || out["has_more"] != true || out["next_cursor"] == "" {
			t.Errorf("page = %v has_more %v cursor %v", got, out["has_more"], out["next_cursor"])
		}
		want := url.Values{"channel": {"C0000000001"}, "limit": {"1"}, "oldest": {all[0].TS}, "inclusive": {"true"}}
		assertRead(t, f.only(t), "conversations.history", want)
	})

	tests := []struct {
		name, input, code, slackError string
	}{
		{"unknown channel", `{"channel":"C9999999999"}`, "NOT_FOUND", "channel_not_found"},
		{"not a member", `{"channel":"C0000000005"}`, "UPSTREAM_ERROR", "not_in_channel"},
		{"bad oldest", `{"channel":"C0000000001","oldest":"yesterday"}`, "INVALID_ARGUMENTS", "invalid_ts_oldest"},
	}
	for _, tt := range tests {
		te := f.toolError(t, "slack_get_conversation_history", tt.input)
		if d := details(t, te); string(te.Code) != tt.code || d["slack_error"] != tt.slackError || d["method"] != "conversations.history" {
			t.Errorf("%s: %s %q %v", tt.name, te.Code, te.Message, d)
		}
	}
	f.fake.ClearRequests()
	if te := f.toolError(t, "slack_get_conversation_history", `{}`); te.Code != "INVALID_ARGUMENTS" || !strings.Contains(te.Message, `"channel"`) {
		t.Errorf("missing channel: %s %q", te.Code, te.Message)
	}
	if n := len(f.fake.Requests()); n != 0 {
		t.Errorf("%d requests for an input without channel", n)
	}
}

func TestPlugin_Replies(t *testing.T) {
	f := newFixture(t)
	parent := f.fake.Messages("C0000000001")[0]
	in, _ := json.Marshal(map[string]any{"channel": "C0000000001", "ts": parent.TS})
	out := f.call(t, "slack_get_thread_replies", string(in))
	if got := ids(t, out["messages"], "text"); !slices.Equal(got, []string{"Deploy 1.2 is out :tada:", "Nice, thanks!", "Release notes are in the wiki"}) {
		t.Errorf("thread = %v", got)
	}
	if reply := out["messages"].([]any)[1].(map[string]any); reply["thread_ts"] != parent.TS || reply["parent_user_id"] != "U0000000001" {
		t.Errorf("reply = %v", reply)
	}
	assertRead(t, f.only(t), "conversations.replies", url.Values{"channel": {"C0000000001"}, "ts": {parent.TS}, "limit": {"100"}})
	te := f.toolError(t, "slack_get_thread_replies", `{"channel":"C0000000001","ts":"1.000001"}`)
	if te.Code != "NOT_FOUND" || details(t, te)["slack_error"] != "thread_not_found" {
		t.Errorf("unknown thread: %s %s", te.Code, te.Details)
	}
}

func TestPlugin_Info(t *testing.T) {
	f := newFixture(t)
	out := f.call(t, "slack_get_conversation_info", `{"channel":"C0000000003"}`)
	c := out["channel"].(map[string]any)
	if c["name"] != "leadership" || c["is_private"] != true || c["num_members"] != 2.0 {
		t.Errorf("channel = %v", c)
	}
	assertRead(t, f.only(t), "conversations.info", url.Values{"channel": {"C0000000003"}, "include_num_members": {"true"}})
	if te := f.toolError(t, "slack_get_conversation_info", `{"channel":"Cnope"}`); te.Code != "NOT_FOUND" {
		t.Errorf("unknown channel: %s", te.Code)
	}
}

func TestPlugin_PostMessage(t *testing.T) {
	f := newFixture(t)
	out := f.call(t, "slack_post_message", `{"channel":"C0000000002","text":"Hello from *Workbench* \u2728"}`)
	msgs := f.fake.Messages("C0000000002")
	last := msgs[len(msgs)-1]
	if last.Text != "Hello from *Workbench* \u2728" || last.User != BotUserID || out["ts"] != last.TS || out["channel"] != "C0000000002" {
		t.Errorf("out = %v, stored %+v", out, last)
	}
	if m := out["message"].(map[string]any); m["text"] != last.Text || m["bot_id"] != "B0000000001" {
		t.Errorf("message = %v", m)
	}
	assertJSONPost(t, f.only(t), "chat.postMessage", `{"channel":"C0000000002","text":"Hello from *Workbench* \u2728"}`)

	t.Run("thread reply with blocks", func(t *testing.T) {
		f.fake.ClearRequests()
		in := `{"channel":"C0000000002","thread_ts":"` + last.TS + `","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"hi"}}],"reply_broadcast":true}`
		f.call(t, "slack_post_message", in)
		assertJSONPost(t, f.only(t), "chat.postMessage", `{"channel":"C0000000002","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"hi"}}],"thread_ts":"`+last.TS+`","reply_broadcast":true}`)
		msgs := f.fake.Messages("C0000000002")
		if reply := msgs[len(msgs)-1]; reply.ThreadTS != last.TS || len(reply.Blocks) != 1 {
			t.Errorf("reply = %+v", reply)
		}
	})

	tests := []struct {
		name, input, code, slackError string
	}{
		{"neither text nor blocks", `{"channel":"C0000000002"}`, "INVALID_ARGUMENTS", ""},
		{"archived channel", `{"channel":"C0000000004","text":"x"}`, "UPSTREAM_ERROR", "is_archived"},
		{"unknown channel", `{"channel":"C0000000404","text":"x"}`, "NOT_FOUND", "channel_not_found"},
		{"unknown thread", `{"channel":"C0000000002","text":"x","thread_ts":"1.5"}`, "NOT_FOUND", "thread_not_found"},
	}
	for _, tt := range tests {
		f.fake.ClearRequests()
		te := f.toolError(t, "slack_post_message", tt.input)
		if string(te.Code) != tt.code {
			t.Errorf("%s: %s %q, want %s", tt.name, te.Code, te.Message, tt.code)
		}
		if tt.slackError == "" && len(f.fake.Requests()) != 0 {
			t.Errorf("%s: the plugin sent a request", tt.name)
		}
		if tt.slackError != "" && details(t, te)["slack_error"] != tt.slackError {
			t.Errorf("%s: details %s", tt.name, te.Details)
		}
	}
}

func TestPlugin_PostMessageMissingScope(t *testing.T) {
	f := newFixture(t, "channels:read", "channels:history")
	te := f.toolError(t, "slack_post_message", `{"channel":"C0000000001","text":"x"}`)
	if d := details(t, te); te.Code != "FORBIDDEN" || d["needed"] != "chat:write" || !strings.Contains(te.Message, "chat:write") {
		t.Errorf("error = %s %q %v", te.Code, te.Message, d)
	}
}

func TestPlugin_UpdateAndDeleteMessage(t *testing.T) {
	f := newFixture(t)
	posted := f.call(t, "slack_post_message", `{"channel":"C0000000001","text":"draft"}`)
	ts := posted["ts"].(string)
	f.fake.ClearRequests()
	out := f.call(t, "slack_update_message", `{"channel":"C0000000001","ts":"`+ts+`","text":"final"}`)
	if out["text"] != "final" || out["ts"] != ts {
		t.Errorf("update = %v", out)
	}
	assertJSONPost(t, f.only(t), "chat.update", `{"channel":"C0000000001","ts":"`+ts+`","text":"final"}`)
	msgs := f.fake.Messages("C0000000001")
	if m := msgs[len(msgs)-1]; m.Text != "final" || !m.Edited {
		t.Errorf("stored = %+v", m)
	}

	someoneElses := f.fake.Messages("C0000000001")[0].TS
	tests := []struct {
		tool, input, code, slackError string
	}{
		{"slack_update_message", `{"channel":"C0000000001","ts":"` + someoneElses + `","text":"x"}`, "UPSTREAM_ERROR", "cant_update_message"},
		{"slack_update_message", `{"channel":"C0000000001","ts":"1.000001","text":"x"}`, "NOT_FOUND", "message_not_found"},
		{"slack_update_message", `{"channel":"C0000000001","ts":"` + ts + `"}`, "INVALID_ARGUMENTS", ""},
		{"slack_delete_message", `{"channel":"C0000000001","ts":"` + someoneElses + `"}`, "UPSTREAM_ERROR", "cant_delete_message"},
	}
	for _, tt := range tests {
		te := f.toolError(t, tt.tool, tt.input)
		if string(te.Code) != tt.code || (tt.slackError != "" && details(t, te)["slack_error"] != tt.slackError) {
			t.Errorf("%s(%s) = %s %s, want %s %s", tt.tool, tt.input, te.Code, te.Details, tt.code, tt.slackError)
		}
	}

	f.fake.ClearRequests()
	out = f.call(t, "slack_delete_message", `{"channel":"C0000000001","ts":"`+ts+`"}`)
	if out["ts"] != ts || out["channel"] != "C0000000001" {
		t.Errorf("delete = %v", out)
	}
	assertJSONPost(t, f.only(t), "chat.delete", `{"channel":"C0000000001","ts":"`+ts+`"}`)
	for _, m := range f.fake.Messages("C0000000001") {
		if m.TS == ts {
			t.Errorf("message %s still there after delete", ts)
		}
	}
	if te := f.toolError(t, "slack_delete_message", `{"channel":"C0000000001","ts":"`+ts+`"}`); te.Code != "NOT_FOUND" {
		t.Errorf("second delete: %s", te.Code)
	}
}

func TestPlugin_Permalink(t *testing.T) {
	f := newFixture(t)
	ts := f.fake.Messages("C0000000001")[0].TS
	out := f.call(t, "slack_get_permalink", `{"channel":"C0000000001","ts":"`+ts+`"}`)
	if out["permalink"] != "https://acme.slack.com/archives/C0000000001/p"+strings.ReplaceAll(ts, ".", "") {
		t.Errorf("permalink = %v", out)
	}
	assertRead(t, f.only(t), "chat.getPermalink", url.Values{"channel": {"C0000000001"}, "message_ts": {ts}})
	if te := f.toolError(t, "slack_get_permalink", `{"channel":"C0000000001","ts":"9.9"}`); te.Code != "NOT_FOUND" {
		t.Errorf("unknown message: %s", te.Code)
	}
}

func TestPlugin_Reactions(t *testing.T) {
	f := newFixture(t)
	ts := f.fake.Messages("C0000000001")[3].TS // "Lunch at noon?"
	out := f.call(t, "slack_add_reaction", `{"channel":"C0000000001","ts":"`+ts+`","name":":thumbsup:"}`)
	if out["name"] != "thumbsup" {
		t.Errorf("add = %v", out)
	}
	assertFormPost(t, f.only(t), "reactions.add", url.Values{"channel": {"C0000000001"}, "timestamp": {ts}, "name": {"thumbsup"}})
	if got := f.fake.Messages("C0000000001")[3].Reactions["thumbsup"]; !slices.Equal(got, []string{BotUserID}) {
		t.Errorf("reactions = %v", got)
	}
	in := `{"channel":"C0000000001","ts":"` + ts + `","name":"thumbsup"}`
	if te := f.toolError(t, "slack_add_reaction", in); te.Code != "UPSTREAM_ERROR" || details(t, te)["slack_error"] != "already_reacted" {
		t.Errorf("second add: %s %s", te.Code, te.Details)
	}
	f.fake.ClearRequests()
	f.call(t, "slack_remove_reaction", in)
	assertFormPost(t, f.only(t), "reactions.remove", url.Values{"channel": {"C0000000001"}, "timestamp": {ts}, "name": {"thumbsup"}})
	if got := f.fake.Messages("C0000000001")[3].Reactions; len(got) != 0 {
		t.Errorf("reactions after remove = %v", got)
	}
	tests := []struct {
		tool, input, code, slackError string
	}{
		{"slack_remove_reaction", in, "NOT_FOUND", "no_reaction"},
		{"slack_add_reaction", `{"channel":"C0000000001","ts":"` + ts + `","name":"two words"}`, "INVALID_ARGUMENTS", "invalid_name"},
		{"slack_add_reaction", `{"channel":"C0000000001","ts":"1.1","name":"x"}`, "NOT_FOUND", "message_not_found"},
	}
	for _, tt := range tests {
		te := f.toolError(t, tt.tool, tt.input)
		if string(te.Code) != tt.code || details(t, te)["slack_error"] != tt.slackError {
			t.Errorf("%s(%s) = %s %s, want %s %s", tt.tool, tt.input, te.Code, te.Details, tt.code, tt.slackError)
		}
	}
}

func TestPlugin_Users(t *testing.T) {
	f := newFixture(t)
	out := f.call(t, "slack_list_users", `{}`)
	if got := ids(t, out["members"], "id"); !slices.Equal(got, []string{"U0000000001", "U0000000002", BotUserID}) {
		t.Errorf("members = %v", got)
	}
	ana := out["members"].([]any)[0].(map[string]any)
	if ana["real_name"] != "Ana Lima" || ana["display_name"] != "ana" || ana["title"] != "Engineer" || ana["tz"] != "Europe/Lisbon" {
		t.Errorf("ana = %v", ana)
	}
	assertRead(t, f.only(t), "users.list", url.Values{"limit": {"200"}})

	f.fake.ClearRequests()
	out = f.call(t, "slack_list_users", `{"limit":3,"max_pages":5,"include_deleted":true}`)
	if got := ids(t, out["members"], "id"); len(got) != 4 || out["next_cursor"] != "" {
		t.Errorf("all members = %v, cursor %v", got, out["next_cursor"])
	}
	if reqs := f.apiRequests(t); len(reqs) != 2 || reqs[1].Query.Get("cursor") == "" {
		t.Errorf("requests = %+v", reqs)
	}

	f.fake.ClearRequests()
	out = f.call(t, "slack_get_user", `{"user":"U0000000002"}`)
	if u := out["user"].(map[string]any); u["name"] != "bo" || u["real_name"] != "Bo Chen" || u["is_bot"] != false {
		t.Errorf("user = %v", u)
	}
	assertRead(t, f.only(t), "users.info", url.Values{"user": {"U0000000002"}})
	if te := f.toolError(t, "slack_get_user", `{"user":"U404"}`); te.Code != "NOT_FOUND" || details(t, te)["slack_error"] != "user_not_found" {
		t.Errorf("unknown user: %s %s", te.Code, te.Details)
	}
}

func TestPlugin_AuthTest(t *testing.T) {
	f := newFixture(t)
	out := f.call(t, "slack_auth_test", `{}`)
	want := map[string]any{"url": "https://acme.slack.com/", "team": "Acme", "user": "workbench", "team_id": "T0000000001", "user_id": BotUserID, "bot_id": "B0000000001"}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("auth.test = %v, want %v", out, want)
	}
	assertRead(t, f.only(t), "auth.test", url.Values{})
}

func TestPlugin_Search(t *testing.T) {
	f := newFixture(t)
	out := f.call(t, "slack_search_messages", `{"query":"deploy"}`)
	if got := ids(t, out["matches"], "text"); !slices.Equal(got, []string{"Deploy 1.2 is out :tada:", "deploy friday? never"}) {
		t.Errorf("matches = %v", got)
	}
	first := out["matches"].([]any)[0].(map[string]any)
	if out["total"] != 2.0 || out["page"] != 1.0 || out["pages"] != 1.0 || first["username"] != "ana" ||
		!reflect.DeepEqual(first["channel"], map[string]any{"id": "C0000000001", "name": "general"}) {
		t.Errorf("out = %v", out)
	}
	assertRead(t, f.only(t), "search.messages", url.Values{"query": {"deploy"}, "count": {"20"}, "page": {"1"}, "sort": {"score"}, "sort_dir": {"desc"}})

	f.fake.ClearRequests()
	out = f.call(t, "slack_search_messages", `{"query":"deploy","count":1,"page":2,"sort":"timestamp","sort_dir":"asc"}`)
	if got := ids(t, out["matches"], "text"); !slices.Equal(got, []string{"deploy friday? never"}) || out["pages"] != 2.0 {
		t.Errorf("page 2 = %v (%v)", got, out)
	}
	f.fake.ClearRequests()
	query := `in:#ops "a b" & c=d+e/f?g%h ü😀`
	in, _ := json.Marshal(map[string]any{"query": query})
	f.call(t, "slack_search_messages", string(in))
	if got := f.only(t).Query.Get("query"); got != query {
		t.Errorf("query arrived as %q, want %q", got, query)
	}
	if te := f.toolError(t, "slack_search_messages", `{"query":"x","sort":"newest"}`); te.Code != "INVALID_ARGUMENTS" {
		t.Errorf("bad sort: %s", te.Code)
	}
}

func TestPlugin_SearchMissingScope(t *testing.T) {
	f := newFixture(t, "channels:read")
	if te := f.toolError(t, "slack_search_messages", `{"query":"x"}`); te.Code != "FORBIDDEN" || details(t, te)["needed"] != "search:read" {
		t.Errorf("error = %s %s", te.Code, te.Details)
	}
}

func TestPlugin_UploadFile(t *testing.T) {
	f := newFixture(t)
	var reports []toolcall.Progress
	raw, err := f.callAs(userID, "slack_upload_file",
		`{"filename":"notes.txt","content":"line one\nl\u00ednea dos\n","title":"Notes","channel_id":"C0000000002","initial_comment":"here you go"}`,
		func(p toolcall.Progress) { reports = append(reports, p) })
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Files []map[string]any
		Size  int
	}
	json.Unmarshal(raw, &out)
	content := "line one\nl\u00ednea dos\n"
	if len(out.Files) != 1 || out.Files[0]["title"] != "Notes" || out.Size != len(content) {
		t.Fatalf("out = %s", raw)
	}
	id := out.Files[0]["id"].(string)
	reqs := f.apiRequests(t)
	if len(reqs) != 3 {
		t.Fatalf("fake saw %d requests, want 3: %+v", len(reqs), reqs)
	}
	assertFormPost(t, reqs[0], "files.getUploadURLExternal", url.Values{"filename": {"notes.txt"}, "length": {strconv.Itoa(len(content))}})
	if reqs[1].Method != "POST" || reqs[1].Path != "/upload/v1/"+id || string(reqs[1].Body) != content ||
		reqs[1].Header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("upload request = %s %s %q %q", reqs[1].Method, reqs[1].Path, reqs[1].Header.Get("Content-Type"), reqs[1].Body)
	}
	assertFormPost(t, reqs[2], "files.completeUploadExternal", url.Values{
		"files": {`[{"id":"` + id + `","title":"Notes"}]`}, "channel_id": {"C0000000002"}, "initial_comment": {"here you go"},
	})
	got, title, completed, ok := f.fake.Upload(id)
	if !ok || string(got) != content || title != "Notes" || !completed {
		t.Errorf("upload %s = %q %q completed %v", id, got, title, completed)
	}
	msgs := f.fake.Messages("C0000000002")
	if m := msgs[len(msgs)-1]; m.Text != "here you go" || !slices.Equal(m.Files, []string{id}) {
		t.Errorf("share message = %+v", m)
	}
	if n := len(reports); n < 2 || reports[0].Done != 1 || reports[0].Total != 3 || reports[n-1] != (toolcall.Progress{Done: 3, Total: 3, Message: "completed"}) {
		t.Errorf("progress = %+v", reports)
	}

	t.Run("binary content", func(t *testing.T) {
		f.fake.ClearRequests()
		bin := []byte{0, 1, 2, 0xff, 0xfe, 'P', 'N', 'G'}
		out := f.call(t, "slack_upload_file", `{"filename":"x.bin","content_base64":"`+base64.StdEncoding.EncodeToString(bin)+`"}`)
		id := out["files"].([]any)[0].(map[string]any)["id"].(string)
		if got, title, completed, _ := f.fake.Upload(id); string(got) != string(bin) || title != "x.bin" || !completed {
			t.Errorf("upload = %v %q %v", got, title, completed)
		}
		if reqs := f.apiRequests(t); len(reqs) != 3 || reqs[2].Args["channel_id"] != nil {
			t.Errorf("requests = %+v", reqs)
		}
	})

	tests := []struct {
		name, input string
	}{
		{"no content", `{"filename":"a.txt"}`},
		{"both contents", `{"filename":"a.txt","content":"x","content_base64":"eA=="}`},
		{"bad base64", `{"filename":"a.txt","content_base64":"!!"}`},
		{"empty file", `{"filename":"a.txt","content":""}`},
	}
	for _, tt := range tests {
		f.fake.ClearRequests()
		if te := f.toolError(t, "slack_upload_file", tt.input); te.Code != "INVALID_ARGUMENTS" {
			t.Errorf("%s: %s %q", tt.name, te.Code, te.Message)
		}
		if n := len(f.fake.Requests()); n != 0 {
			t.Errorf("%s: %d requests sent", tt.name, n)
		}
	}
}

// TestPlugin_UploadURLHosts points the upload URL where real Slack does
// (files.slack.com, which the manifest allows) and somewhere it does not:
// the plugin must post the bytes to the URL Slack gave, and the host's
// egress rules decide. In this test files.slack.com resolves to 127.0.0.1
// on port 443, which the egress client refuses to dial, so nothing leaves
// the machine.
func TestPlugin_UploadURLHosts(t *testing.T) {
	tests := []struct {
		name, base string
		resolved   bool // whether the host got as far as resolving the name
	}{
		{"files.slack.com", "https://files.slack.com", true},
		{"host outside the manifest", "https://uploads.example.net", false},
		{"plain http to files.slack.com", "http://files.slack.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.fake.SetUploadBase(tt.base)
			te := f.toolError(t, "slack_upload_file", `{"filename":"a.txt","content":"abc","channel_id":"C0000000001"}`)
			if te.Code != "EGRESS_DENIED" {
				t.Errorf("code = %s %q, want EGRESS_DENIED", te.Code, te.Message)
			}
			host, _ := url.Parse(tt.base)
			if asked := slices.Contains(f.resolver.Asked(), host.Hostname()); asked != tt.resolved {
				t.Errorf("resolver asked for %v, want %s asked=%v", f.resolver.Asked(), host.Hostname(), tt.resolved)
			}
			reqs := f.apiRequests(t)
			if len(reqs) != 1 || reqs[0].Path != "/api/files.getUploadURLExternal" {
				t.Errorf("requests = %+v, want only files.getUploadURLExternal", reqs)
			}
		})
	}
}

func TestPlugin_ErrorMapping(t *testing.T) {
	t.Run("rate limited", func(t *testing.T) {
		f := newFixture(t)
		f.fake.RateLimit(1, 30)
		te := f.toolError(t, "slack_get_user", `{"user":"U0000000001"}`)
		d := details(t, te)
		if te.Code != "RATE_LIMITED" || d["retry_after"] != 30.0 || d["slack_error"] != "ratelimited" || !strings.Contains(te.Message, "30 s") {
			t.Errorf("error = %s %q %v", te.Code, te.Message, d)
		}
		if out := f.call(t, "slack_get_user", `{"user":"U0000000001"}`); out["user"] == nil {
			t.Errorf("after the limit: %v", out)
		}
	})
	t.Run("revoked token", func(t *testing.T) {
		f := newFixture(t)
		f.fake.Revoke()
		if te := f.toolError(t, "slack_auth_test", `{}`); te.Code != "UNAUTHORIZED" || details(t, te)["slack_error"] != "token_revoked" {
			t.Errorf("error = %s %s", te.Code, te.Details)
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		f := newFixture(t)
		f.creds.Set("u2", "slack", &credential.Credential{AccessToken: "xoxb-someone-else"})
		_, err := f.callAs("u2", "slack_auth_test", `{}`, nil)
		var te *failure.Error
		if !errors.As(err, &te) || te.Code != "UNAUTHORIZED" || !strings.Contains(te.Message, "invalid_auth") {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("not connected", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.callAs("stranger", "slack_auth_test", `{}`, nil)
		var te *failure.Error
		if !errors.As(err, &te) || te.Code != "NOT_CONNECTED" {
			t.Errorf("error = %v", err)
		}
		if n := len(f.fake.Requests()); n != 0 {
			t.Errorf("%d requests without a connection", n)
		}
	})
}

// TestPlugin_EveryToolCalled guards the rule that every tool has a test
// that calls it against the fake.
func TestPlugin_EveryToolCalled(t *testing.T) {
	f := newFixture(t)
	ts := f.fake.Messages("C0000000001")[4].TS    // the bot's own message: updated, then deleted
	lunch := f.fake.Messages("C0000000001")[3].TS // someone else's: linked and reacted to
	inputs := map[string]string{
		"slack_list_conversations":       `{}`,
		"slack_get_conversation_history": `{"channel":"C0000000001"}`,
		"slack_get_thread_replies":       `{"channel":"C0000000001","ts":"` + ts + `"}`,
		"slack_get_conversation_info":    `{"channel":"C0000000001"}`,
		"slack_post_message":             `{"channel":"C0000000001","text":"x"}`,
		"slack_update_message":           `{"channel":"C0000000001","ts":"` + ts + `","text":"y"}`,
		"slack_get_permalink":            `{"channel":"C0000000001","ts":"` + lunch + `"}`,
		"slack_add_reaction":             `{"channel":"C0000000001","ts":"` + lunch + `","name":"eyes"}`,
		"slack_remove_reaction":          `{"channel":"C0000000001","ts":"` + lunch + `","name":"eyes"}`,
		"slack_delete_message":           `{"channel":"C0000000001","ts":"` + ts + `"}`,
		"slack_list_users":               `{}`,
		"slack_get_user":                 `{"user":"U0000000001"}`,
		"slack_auth_test":                `{}`,
		"slack_upload_file":              `{"filename":"a.txt","content":"a"}`,
		"slack_search_messages":          `{"query":"lunch"}`,
	}
	for _, tool := range allTools {
		in, ok := inputs[tool]
		if !ok {
			t.Errorf("%s has no input here", tool)
			continue
		}
		f.call(t, tool, in)
	}
	f.apiRequests(t)
	if st := f.plugin.Stats(); st.Errors != 0 || st.HTTPRequests < uint64(len(allTools)) {
		t.Errorf("stats = %+v", st)
	}
}

// TestPlugin_LargeListings reads about 9 MB of channels in one call (four
// pages of up to 1000), which takes more memory than the host's default of
// 32 MiB: the plugin asks for more in its manifest.
func TestPlugin_LargeListings(t *testing.T) {
	f := newFixture(t)
	f.fake.AddChannels(3000, 3000)
	raw, err := f.callAs(userID, "slack_list_conversations", `{"limit":1000,"max_pages":10}`, nil)
	if err != nil {
		t.Fatalf("list 3006 channels: %v", err)
	}
	var out struct {
		Channels []map[string]any
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if n := len(out.Channels); n != 3004 || out.Channels[n-1]["name"] != "bulk-2999" || out.Channels[n-1]["properties"] != nil {
		t.Errorf("got %d channels, the last %v", n, out.Channels[n-1])
	}
	if n := len(f.fake.Requests()); n != 4 {
		t.Errorf("%d requests, want 4 pages", n)
	}
	t.Logf("instance memory after the call: %d pages", f.plugin.Stats().MemoryPages)
}
