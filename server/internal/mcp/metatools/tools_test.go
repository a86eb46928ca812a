package metatools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/mcp/argcheck"
	"github.com/workbench-dev/workbench/server/internal/mcp/idempotency"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
)

func TestDefinitions(t *testing.T) {
	defs := metatools.Definitions()
	var names, account []string
	for _, d := range defs {
		names = append(names, d.Name)
		if d.Account {
			account = append(account, d.Name)
		}
		if len(d.Description) < 40 || d.Title == "" {
			t.Errorf("%s: description %q / title %q too thin for an agent", d.Name, d.Description, d.Title)
		}
		for kind, s := range map[string]json.RawMessage{"input": d.InputSchema, "output": d.OutputSchema} {
			var obj struct{ Type string }
			if err := json.Unmarshal(s, &obj); err != nil || obj.Type != "object" {
				t.Errorf("%s: %s schema is not an object schema: %v", d.Name, kind, err)
			}
			if _, err := argcheck.Compile(s); err != nil {
				t.Errorf("%s: %s schema: %v", d.Name, kind, err)
			}
		}
		if d.ReadOnly && d.Destructive {
			t.Errorf("%s is both read-only and destructive", d.Name)
		}
	}
	want := []string{"search_tools", "get_tool_schema", "execute_tools", "whoami", "list_integrations", "connect", "wait_for_connection", "get_auth_url", "curl_session"}
	if !slices.Equal(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
	if want := []string{"whoami", "list_integrations", "connect", "wait_for_connection"}; !slices.Equal(account, want) {
		t.Errorf("account tools = %v, want %v", account, want)
	}
	alias, _ := metatools.DefinitionOf(metatools.GetAuthURL)
	conn, _ := metatools.DefinitionOf(metatools.Connect)
	if !strings.HasPrefix(alias.Description, "Deprecated: use connect") || !reflect.DeepEqual(alias.InputSchema, conn.InputSchema) {
		t.Errorf("get_auth_url must say it is a deprecated alias of connect and share its input: %q", alias.Description)
	}
	if _, ok := metatools.DefinitionOf("execute_tool"); ok {
		t.Error("there must be no singular execute_tool")
	}
}

func TestTools_InvokeInvalidArguments(t *testing.T) {
	f := newFixture(t, metatools.Options{})
	tests := []struct {
		tool, args string
		want       []argcheck.Problem
	}{
		{"search_tools", `{"query":1,"limit":0,"extra":true}`, []argcheck.Problem{
			{Path: "$.extra", Message: "is not a known property (known: cursor, integration, limit, query)"},
			{Path: "$.limit", Message: "must be at least 1, got 0"},
			{Path: "$.query", Message: "must be string, got integer"},
		}},
		{"get_tool_schema", `{}`, []argcheck.Problem{{Path: "$.tool", Message: "is required"}}},
		{"execute_tools", `{"executions":[]}`, []argcheck.Problem{{Path: "$.executions", Message: "must have at least 1 items, got 0"}}},
		{"execute_tools", `{"executions":[{"arguments":[]}]}`, []argcheck.Problem{
			{Path: "$.executions[0].tool", Message: "is required"},
			{Path: "$.executions[0].arguments", Message: "must be object, got array"},
		}},
		{"whoami", `{"x":1}`, []argcheck.Problem{{Path: "$.x", Message: "is not a known property"}}},
		{"connect", `{"integration":""}`, []argcheck.Problem{{Path: "$.integration", Message: "must be at least 1 characters long, got 0"}}},
		{"wait_for_connection", `{"connectionId":"c","timeoutSeconds":301}`, []argcheck.Problem{{Path: "$.timeoutSeconds", Message: "must be at most 300, got 301"}}},
		{"curl_session", `{"integrations":[]}`, []argcheck.Problem{{Path: "$.integrations", Message: "must have at least 1 items, got 0"}}},
		{"list_integrations", `[1]`, []argcheck.Problem{{Path: "$", Message: "arguments must be a JSON object, got array"}}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			e := f.failed(t, alice, tt.tool, tt.args)
			if e.Code != failure.InvalidArguments {
				t.Errorf("code = %s", e.Code)
			}
			if !reflect.DeepEqual(e.Problems, tt.want) {
				t.Errorf("problems = %+v\nwant %+v", e.Problems, tt.want)
			}
		})
	}
	if _, err := f.tools.Invoke(context.Background(), alice, "execute_tool", nil, metatools.Peer{}); err == nil {
		t.Error("an unknown meta-tool must be a Go error")
	}
}

func TestTools_Search(t *testing.T) {
	f := newFixture(t, metatools.Options{})
	type hit struct {
		Slug      string
		Connected bool
	}
	tests := []struct {
		name  string
		user  metatools.Principal
		args  string
		want  []hit
		total int
	}{
		{"exact slug first", alice, `{"query":"github_get_repo","limit":2}`, []hit{{"github_get_repo", true}, {"github_list_pulls", true}}, 13},
		{"keywords", alice, `{"query":"pull requests"}`, []hit{{"github_list_pulls", true}}, 1},
		{"connected is per user", metatools.Principal{UserID: "bob"}, `{"query":"pull requests"}`, []hit{{"github_list_pulls", false}}, 1},
		{"auth none is always connected", metatools.Principal{UserID: "bob"}, `{"query":"ping"}`, []hit{{"echo_ping", true}}, 1},
		{"integration filter", alice, `{"query":"search","integration":"jira"}`, []hit{{"jira_search", false}}, 1},
		{"empty query lists all", alice, `{"integration":"echo"}`, []hit{{"echo_ping", true}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out metatools.SearchOutput
			r := f.invoke(t, tt.user, "search_tools", tt.args, &out)
			if r.IsError || !r.Structured {
				t.Fatalf("result %s isError %v", r.JSON, r.IsError)
			}
			var got []hit
			for _, h := range out.Hits {
				got = append(got, hit{h.Slug, h.Connected})
			}
			if !slices.Equal(got, tt.want) || out.Total != tt.total {
				t.Errorf("hits = %v (total %d), want %v (total %d)", got, out.Total, tt.want, tt.total)
			}
		})
	}

	var first metatools.SearchOutput
	f.invoke(t, alice, "search_tools", `{"query":"github","limit":5}`, &first)
	if first.NextCursor == "" || len(first.Hits) != 5 {
		t.Fatalf("first page = %+v", first)
	}
	if first.Hits[0].Description != "Returns one repository by owner and name." && first.Hits[0].Slug == "github_get_repo" {
		t.Errorf("description is not one line: %q", first.Hits[0].Description)
	}
	var second metatools.SearchOutput
	f.invoke(t, alice, "search_tools", fmt.Sprintf(`{"query":"github","limit":5,"cursor":%q}`, first.NextCursor), &second)
	if len(second.Hits) != 5 || second.Hits[0].Slug == first.Hits[0].Slug {
		t.Errorf("second page = %+v", second)
	}

	e := f.failed(t, alice, "search_tools", fmt.Sprintf(`{"query":"other","cursor":%q}`, first.NextCursor))
	if e.Code != failure.InvalidArguments || len(e.Problems) != 1 || e.Problems[0].Path != "$.cursor" {
		t.Errorf("reused cursor: %+v", e)
	}
	e = f.failed(t, alice, "search_tools", `{"query":"x","integration":"githb"}`)
	if e.Code != failure.UnknownIntegration || !slices.Equal(e.Suggestions, []string{"github"}) {
		t.Errorf("unknown integration: %+v", e)
	}
}

func TestTools_GetToolSchema(t *testing.T) {
	f := newFixture(t, metatools.Options{})
	var s metatools.ToolSchema
	r := f.invoke(t, alice, "get_tool_schema", `{"tool":"github_get_repo"}`, &s)
	if r.IsError || !r.Structured {
		t.Fatalf("result %s", r.JSON)
	}
	if s.Slug != "github_get_repo" || s.Integration != "github" || s.Title != "Get a repository" || !s.Connected || s.Fix != "" ||
		string(s.InputSchema) != repoSchema || !strings.Contains(s.Description, "Second line.") {
		t.Errorf("schema = %+v", s)
	}
	f.invoke(t, metatools.Principal{UserID: "bob"}, "get_tool_schema", `{"tool":"jira_search"}`, &s)
	if s.Connected || s.Fix != "connect('jira')" {
		t.Errorf("not connected: connected %v fix %q", s.Connected, s.Fix)
	}
	e := f.failed(t, alice, "get_tool_schema", `{"tool":"github_get_rep"}`)
	if e.Code != failure.UnknownTool || len(e.Suggestions) == 0 || e.Suggestions[0] != "github_get_repo" {
		t.Errorf("unknown tool: %+v", e)
	}
}

func TestTools_Execute(t *testing.T) {
	f := newFixture(t, metatools.Options{})
	tests := []struct {
		name        string
		execution   string
		wantOK      bool
		wantResult  string
		wantCode    string
		wantReason  string
		wantFix     string
		wantProblem []argcheck.Problem
		wantSuggest string
	}{
		{name: "ok", execution: `{"tool":"github_get_repo","arguments":{"owner":"octo","repo":"hello"}}`, wantOK: true,
			wantResult: `{"full_name":"octo/hello","user":"u-alice"}`},
		{name: "auth none needs no connection", execution: `{"tool":"echo_ping","arguments":{"b":1,"a":2}}`, wantOK: true, wantResult: `{"a":2,"b":1}`},
		{name: "not connected", execution: `{"tool":"jira_search","arguments":{}}`, wantCode: "NOT_CONNECTED", wantFix: "connect('jira')"},
		{name: "runtime not connected", execution: `{"tool":"github_no_token"}`, wantCode: "NOT_CONNECTED", wantFix: "connect('github')"},
		{name: "invalid arguments", execution: `{"tool":"github_get_repo","arguments":{"owner":"","per_page":500,"x":1}}`, wantCode: "INVALID_ARGUMENTS",
			wantProblem: []argcheck.Problem{
				{Path: "$.repo", Message: "is required"},
				{Path: "$.owner", Message: "must be at least 1 characters long, got 0"},
				{Path: "$.per_page", Message: "must be at most 100, got 500"},
				{Path: "$.x", Message: "is not a known property (known: owner, per_page, repo)"},
			}},
		{name: "plugin invalid arguments", execution: `{"tool":"github_bad_args"}`, wantCode: "INVALID_ARGUMENTS"},
		{name: "unknown tool", execution: `{"tool":"github_get_repos"}`, wantCode: "UNKNOWN_TOOL", wantSuggest: "github_get_repo"},
		{name: "runtime unknown tool", execution: `{"tool":"github_vanished"}`, wantCode: "UNKNOWN_TOOL"},
		{name: "timeout", execution: `{"tool":"github_deadline"}`, wantCode: "TIMEOUT"},
		{name: "upstream timeout", execution: `{"tool":"github_upstream"}`, wantCode: "TIMEOUT", wantReason: "UPSTREAM_TIMEOUT"},
		{name: "plugin error", execution: `{"tool":"github_missing"}`, wantCode: "TOOL_ERROR", wantReason: "NOT_FOUND"},
		{name: "trap", execution: `{"tool":"github_trap"}`, wantCode: "TOOL_ERROR", wantReason: "TRAP"},
		{name: "egress denied", execution: `{"tool":"github_egress"}`, wantCode: "EGRESS_DENIED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out metatools.ExecuteOutput
			r := f.invoke(t, alice, "execute_tools", `{"executions":[`+tt.execution+`]}`, &out)
			if !r.Structured || r.IsError == tt.wantOK {
				t.Errorf("structured %v isError %v, want structured and isError %v", r.Structured, r.IsError, !tt.wantOK)
			}
			if len(out.Results) != 1 {
				t.Fatalf("results = %+v", out.Results)
			}
			got := out.Results[0]
			if got.OK != tt.wantOK || got.Index != 0 {
				t.Fatalf("result = %+v, want ok %v", got, tt.wantOK)
			}
			if tt.wantOK {
				if string(got.Result) != tt.wantResult || got.Error != nil || out.Succeeded != 1 {
					t.Errorf("result = %s, want %s", got.Result, tt.wantResult)
				}
				return
			}
			e := got.Error
			if e == nil || string(e.Code) != tt.wantCode || string(e.Reason) != tt.wantReason || e.Fix != tt.wantFix || e.Message == "" {
				t.Errorf("error = %+v, want code %s reason %q fix %q", e, tt.wantCode, tt.wantReason, tt.wantFix)
			}
			if tt.wantProblem != nil && !reflect.DeepEqual(e.Problems, tt.wantProblem) {
				t.Errorf("problems = %+v\nwant %+v", e.Problems, tt.wantProblem)
			}
			if tt.wantSuggest != "" && (len(e.Suggestions) == 0 || e.Suggestions[0] != tt.wantSuggest) {
				t.Errorf("suggestions = %v, want %s first", e.Suggestions, tt.wantSuggest)
			}
			if out.Failed != 1 {
				t.Errorf("failed = %d", out.Failed)
			}
		})
	}
	if n := f.source.Leases(); n != 0 {
		t.Errorf("%d catalog leases still held", n)
	}
}

func TestTools_ExecuteMixed(t *testing.T) {
	f := newFixture(t, metatools.Options{})
	var out metatools.ExecuteOutput
	r := f.invoke(t, alice, "execute_tools", `{"executions":[
		{"tool":"github_slow"},
		{"tool":"nope_tool"},
		{"tool":"echo_ping","arguments":{"n":3}},
		{"tool":"github_missing"},
		{"tool":"github_slow"}
	]}`, &out)
	if r.IsError {
		t.Error("a call where some executions succeeded must not be an error")
	}
	var got []string
	for i, res := range out.Results {
		if res.Index != i {
			t.Errorf("result %d has index %d", i, res.Index)
		}
		s := res.Tool + ":ok"
		if !res.OK {
			s = res.Tool + ":" + string(res.Error.Code)
		}
		got = append(got, s)
	}
	want := []string{"github_slow:ok", "nope_tool:UNKNOWN_TOOL", "echo_ping:ok", "github_missing:TOOL_ERROR", "github_slow:ok"}
	if !slices.Equal(got, want) || out.Succeeded != 3 || out.Failed != 2 {
		t.Errorf("results = %v (%d ok, %d failed), want %v", got, out.Succeeded, out.Failed, want)
	}

	var all metatools.ExecuteOutput
	r = f.invoke(t, alice, "execute_tools", `{"executions":[{"tool":"github_missing"},{"tool":"jira_search"}]}`, &all)
	if !r.IsError || !r.Structured || all.Failed != 2 {
		t.Errorf("all failed: isError %v structured %v %+v", r.IsError, r.Structured, all)
	}
}

func TestTools_ExecuteConcurrency(t *testing.T) {
	tests := []struct {
		concurrency int
		executions  int
	}{
		{1, 4},
		{3, 10},
		{16, 8},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.concurrency), func(t *testing.T) {
			f := newFixture(t, metatools.Options{Concurrency: tt.concurrency})
			items := strings.TrimSuffix(strings.Repeat(`{"tool":"github_slow"},`, tt.executions), ",")
			start := time.Now()
			var out metatools.ExecuteOutput
			f.invoke(t, alice, "execute_tools", `{"executions":[`+items+`]}`, &out)
			elapsed := time.Since(start)
			if out.Succeeded != tt.executions {
				t.Fatalf("results = %+v", out)
			}
			want := int32(min(tt.concurrency, tt.executions))
			if most := f.most.Load(); most != want {
				t.Errorf("at most %d ran at once, want exactly %d", most, want)
			}
			// 30 ms each, in ceil(executions/concurrency) waves.
			waves := (tt.executions + tt.concurrency - 1) / tt.concurrency
			if floor := time.Duration(waves) * 30 * time.Millisecond; elapsed < floor {
				t.Errorf("took %v, less than %d waves of 30ms", elapsed, waves)
			}
		})
	}
}

func TestTools_ExecuteIdempotency(t *testing.T) {
	f := newFixture(t, metatools.Options{})
	call := func(p metatools.Principal, items string) metatools.ExecuteOutput {
		t.Helper()
		var out metatools.ExecuteOutput
		f.invoke(t, p, "execute_tools", `{"executions":[`+items+`]}`, &out)
		return out
	}
	first := call(alice, `{"tool":"github_create_issue","arguments":{"title":"a","n":1},"idempotencyKey":"k1"}`)
	// The same request with its keys in another order is the same request.
	replay := call(alice, `{"tool":"github_create_issue","arguments":{"n":1,"title":"a"},"idempotencyKey":"k1"}`)
	if !first.Results[0].OK || first.Results[0].Replayed || !replay.Results[0].OK || !replay.Results[0].Replayed ||
		string(replay.Results[0].Result) != `{"number":42}` {
		t.Fatalf("first %+v replay %+v", first.Results[0], replay.Results[0])
	}
	if n := f.github.Calls("github_create_issue"); n != 1 {
		t.Errorf("tool ran %d times, want once", n)
	}
	conflict := call(alice, `{"tool":"github_create_issue","arguments":{"title":"b"},"idempotencyKey":"k1"}`)
	if e := conflict.Results[0].Error; e == nil || e.Code != failure.IdempotencyConflict {
		t.Errorf("conflict = %+v", conflict.Results[0])
	}
	// Keys belong to a user.
	f.conns.SetConnected("carol", "github", true)
	other := call(metatools.Principal{UserID: "carol"}, `{"tool":"github_create_issue","arguments":{"title":"b"},"idempotencyKey":"k1"}`)
	if !other.Results[0].OK || other.Results[0].Replayed {
		t.Errorf("another user's key replayed: %+v", other.Results[0])
	}
	// A tool error is an outcome too and replays.
	call(alice, `{"tool":"github_missing","idempotencyKey":"k2"}`)
	again := call(alice, `{"tool":"github_missing","idempotencyKey":"k2"}`)
	if e := again.Results[0].Error; !again.Results[0].Replayed || e == nil || e.Reason != "NOT_FOUND" {
		t.Errorf("replayed failure = %+v", again.Results[0])
	}
	if n := f.github.Calls("github_missing"); n != 1 {
		t.Errorf("failing tool ran %d times, want once", n)
	}
	// A check that failed before running is not stored: after connecting,
	// the same key runs the tool.
	dave := metatools.Principal{UserID: "dave"}
	if e := call(dave, `{"tool":"github_create_issue","idempotencyKey":"k3"}`).Results[0].Error; e == nil || e.Code != "NOT_CONNECTED" {
		t.Fatalf("dave not connected: %+v", e)
	}
	f.conns.SetConnected("dave", "github", true)
	if r := call(dave, `{"tool":"github_create_issue","idempotencyKey":"k3"}`).Results[0]; !r.OK || r.Replayed {
		t.Errorf("after connecting: %+v", r)
	}
	// Duplicates in one call run once; the other replays.
	before := f.github.Calls("github_create_issue")
	dup := call(alice, `{"tool":"github_create_issue","idempotencyKey":"k4"},{"tool":"github_create_issue","idempotencyKey":"k4"}`)
	if after := f.github.Calls("github_create_issue"); after != before+1 {
		t.Errorf("duplicate keys in one call ran %d times", after-before)
	}
	if dup.Results[0].Replayed == dup.Results[1].Replayed || !dup.Results[0].OK || !dup.Results[1].OK {
		t.Errorf("duplicates = %+v", dup.Results)
	}
}

func TestTools_ExecuteProgress(t *testing.T) {
	f := newFixture(t, metatools.Options{Concurrency: 1})
	type report struct {
		progress, total float64
		message         string
	}
	var mu sync.Mutex
	var reports []report
	args := `{"executions":[{"tool":"github_progress"},{"tool":"echo_ping"},{"tool":"nope_tool"}]}`
	r, err := f.tools.Invoke(context.Background(), alice, "execute_tools", json.RawMessage(args), metatools.Peer{Progress: func(p, total float64, msg string) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, report{p, total, msg})
	}})
	if err != nil || r.IsError {
		t.Fatalf("Invoke = %s, %v", r.JSON, err)
	}
	if len(reports) < 4 {
		t.Fatalf("reports = %+v, want the plugin's and one per execution", reports)
	}
	for i, rep := range reports {
		if rep.total != 3 {
			t.Errorf("report %d total = %v, want 3", i, rep.total)
		}
		if i > 0 && rep.progress <= reports[i-1].progress {
			t.Errorf("progress did not increase: %+v", reports)
		}
	}
	if last := reports[len(reports)-1]; last.progress != 3 || !strings.HasPrefix(last.message, "3 of 3 done") {
		t.Errorf("last report = %+v", last)
	}
	var plugin int
	for _, rep := range reports {
		if rep.message == "step" {
			plugin++
		}
	}
	if plugin != 3 {
		t.Errorf("%d plugin reports passed, want 3 (the regression is dropped): %+v", plugin, reports)
	}
}

func TestTools_Call(t *testing.T) {
	f := newFixture(t, metatools.Options{})
	var got []float64
	out, e := f.tools.Call(context.Background(), alice, "github_progress", nil, metatools.Peer{Progress: func(p, _ float64, _ string) { got = append(got, p) }})
	if e != nil || string(out) != `{"done":true}` {
		t.Fatalf("Call = %s, %v", out, e)
	}
	if !slices.Equal(got, []float64{1, 2, 3}) {
		t.Errorf("progress = %v, want increasing 1, 2, 3", got)
	}
	if _, e := f.tools.Call(context.Background(), alice, "jira_search", nil, metatools.Peer{}); e == nil || e.Code != "NOT_CONNECTED" {
		t.Errorf("Call not connected = %+v", e)
	}
	if n := f.source.Leases(); n != 0 {
		t.Errorf("%d leases held", n)
	}
}

func TestTools_ExecuteCanceled(t *testing.T) {
	f := newFixture(t, metatools.Options{Concurrency: 1})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(10 * time.Millisecond)
		cancel()
	}()
	r, err := f.tools.Invoke(ctx, alice, "execute_tools", json.RawMessage(`{"executions":[{"tool":"github_slow"},{"tool":"github_slow"}]}`), metatools.Peer{})
	if err != nil {
		t.Fatal(err)
	}
	var out metatools.ExecuteOutput
	if err := json.Unmarshal(r.JSON, &out); err != nil {
		t.Fatal(err)
	}
	for _, res := range out.Results {
		if res.OK || res.Error.Reason != "CANCELED" {
			t.Errorf("result after cancel = %+v", res)
		}
	}
}

func TestTools_WhoamiAndIntegrations(t *testing.T) {
	f := newFixture(t, metatools.Options{})
	var who metatools.Principal
	f.invoke(t, alice, "whoami", `{}`, &who)
	if !reflect.DeepEqual(who, alice) {
		t.Errorf("whoami = %+v", who)
	}
	var list metatools.IntegrationsOutput
	f.invoke(t, alice, "list_integrations", ``, &list)
	want := []metatools.IntegrationInfo{
		{Name: "echo", Title: "echo (test)", Description: "Test integration echo.", Version: "1.0.0", AuthMode: "none", ToolCount: 1, Connected: true},
		{Name: "github", Title: "github (test)", Description: "Test integration github.", Version: "1.0.0", AuthMode: "oauth2", ToolCount: 13,
			Logo: "https://github.githubassets.com/favicon.svg", Categories: []string{"developer-tools"}, Connected: true, Curl: true},
		{Name: "jira", Title: "jira (test)", Description: "Test integration jira.", Version: "1.0.0", AuthMode: "apikey", ToolCount: 1},
	}
	if !reflect.DeepEqual(list.Integrations, want) {
		t.Errorf("list_integrations =\n%+v\nwant\n%+v", list.Integrations, want)
	}
	info, err := f.tools.Integration(context.Background(), alice, "github")
	if err != nil || !reflect.DeepEqual(*info, want[1]) {
		t.Errorf("Integration = %+v, %v", info, err)
	}
	// A failing connection service makes integrations look disconnected.
	f.conns.FailWith(errors.New("store down"))
	f.invoke(t, alice, "list_integrations", `{}`, &list)
	if list.Integrations[1].Connected || !list.Integrations[0].Connected {
		t.Errorf("with the service down: %+v", list.Integrations)
	}
}

func TestTools_Connect(t *testing.T) {
	bob := metatools.Principal{UserID: "bob"}
	for _, tool := range []string{"connect", "get_auth_url"} {
		t.Run(tool, func(t *testing.T) {
			f := newFixture(t, metatools.Options{})
			tests := []struct {
				name       string
				user       metatools.Principal
				args       string
				wantStatus string
				wantCode   string
			}{
				{"auth none", bob, `{"integration":"echo"}`, "CONNECTED", ""},
				{"already connected", alice, `{"integration":"github"}`, "CONNECTED", ""},
				{"starts a connection", bob, `{"integration":"github"}`, "PENDING", ""},
				{"reconnect", alice, `{"integration":"github","reconnect":true}`, "PENDING", ""},
				{"unknown", bob, `{"integration":"gitlab"}`, "", "UNKNOWN_INTEGRATION"},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					if tt.wantCode != "" {
						if e := f.failed(t, tt.user, tool, tt.args); string(e.Code) != tt.wantCode {
							t.Errorf("error = %+v", e)
						}
						return
					}
					var out metatools.ConnectOutput
					f.invoke(t, tt.user, tool, tt.args, &out)
					if out.Status != tt.wantStatus || out.Message == "" {
						t.Errorf("output = %+v, want status %s", out, tt.wantStatus)
					}
					if tt.wantStatus == "PENDING" && (out.URL != "https://wb.test/connect/"+out.ConnectionID || !strings.Contains(out.Message, out.ConnectionID)) {
						t.Errorf("pending connection = %+v", out)
					}
				})
			}
		})
	}
	f := newFixture(t, metatools.Options{})
	f.conns.FailWith(errors.New("database is down"))
	if e := f.failed(t, bob, "connect", `{"integration":"github"}`); e.Code != "TOOL_ERROR" || strings.Contains(e.Message, "database") {
		t.Errorf("service failure = %+v; must not leak the internal error", e)
	}
	// An integration the operator has not configured (no OAuth client) is
	// NOT_CONFIGURED with the service's words, never UNKNOWN_INTEGRATION.
	f.conns.FailWith(fmt.Errorf("%w: github has no OAuth client on this server; the operator sets GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET", failure.ErrNotConfigured))
	e := f.failed(t, bob, "connect", `{"integration":"github","reconnect":true}`)
	if e.Code != "NOT_CONFIGURED" || !strings.Contains(e.Message, "GITHUB_CLIENT_ID") || len(e.Suggestions) != 0 || e.Integration != "github" {
		t.Errorf("not configured = %+v", e)
	}
}

func TestTools_WaitForConnection(t *testing.T) {
	f := newFixture(t, metatools.Options{})
	bob := metatools.Principal{UserID: "bob"}
	start := func() string {
		var out metatools.ConnectOutput
		f.invoke(t, bob, "connect", `{"integration":"github","reconnect":true}`, &out)
		return out.ConnectionID
	}
	id := start()
	go func() {
		time.Sleep(20 * time.Millisecond)
		f.conns.Complete(id)
	}()
	var out metatools.WaitOutput
	f.invoke(t, bob, "wait_for_connection", fmt.Sprintf(`{"connectionId":%q,"timeoutSeconds":5}`, id), &out)
	if out.Status != "CONNECTED" || out.ConnectionID != id {
		t.Errorf("wait = %+v", out)
	}
	// Now bob's github tools run.
	var exec metatools.ExecuteOutput
	f.invoke(t, bob, "execute_tools", `{"executions":[{"tool":"github_list_pulls"}]}`, &exec)
	if !exec.Results[0].OK {
		t.Errorf("after connecting: %+v", exec.Results[0])
	}

	pending := start()
	begin := time.Now()
	f.invoke(t, bob, "wait_for_connection", fmt.Sprintf(`{"connectionId":%q,"timeoutSeconds":1}`, pending), &out)
	if out.Status != "PENDING" || time.Since(begin) < time.Second {
		t.Errorf("timed-out wait = %+v after %v", out, time.Since(begin))
	}
	f.conns.Expire(pending, "the user did not finish within 10 minutes")
	f.invoke(t, bob, "wait_for_connection", fmt.Sprintf(`{"connectionId":%q}`, pending), &out)
	if out.Status != "EXPIRED" || out.Reason == "" || !strings.Contains(out.Message, "connect again") {
		t.Errorf("expired = %+v", out)
	}
	if e := f.failed(t, alice, "wait_for_connection", fmt.Sprintf(`{"connectionId":%q}`, pending)); e.Code != "UNKNOWN_CONNECTION" {
		t.Errorf("another user's connection: %+v", e)
	}
}

func TestTools_WithoutServices(t *testing.T) {
	f := newFixture(t, metatools.Options{})
	tools, err := metatools.New(metatools.Options{Catalog: f.source})
	if err != nil {
		t.Fatal(err)
	}
	bare := &fixture{tools: tools, source: f.source}
	tests := []struct {
		tool, args, wantCode string
	}{
		{"connect", `{"integration":"github"}`, "UNAVAILABLE"},
		{"wait_for_connection", `{"connectionId":"c1"}`, "UNAVAILABLE"},
		{"curl_session", `{"integrations":["github"]}`, "UNAVAILABLE"},
	}
	for _, tt := range tests {
		if e := bare.failed(t, alice, tt.tool, tt.args); string(e.Code) != tt.wantCode || !strings.Contains(e.Message, "not available on this server yet") {
			t.Errorf("%s = %+v", tt.tool, e)
		}
	}
	var exec metatools.ExecuteOutput
	bare.invoke(t, alice, "execute_tools", `{"executions":[{"tool":"github_list_pulls"},{"tool":"echo_ping"}]}`, &exec)
	if exec.Results[0].OK || exec.Results[0].Error.Code != "NOT_CONNECTED" || !exec.Results[1].OK {
		t.Errorf("without connections only auth none runs: %+v", exec.Results)
	}
	if _, err := metatools.New(metatools.Options{}); err == nil {
		t.Error("New without a catalog must fail")
	}
}

func TestTools_CurlSession(t *testing.T) {
	f := newFixture(t, metatools.Options{})
	tests := []struct {
		name     string
		user     metatools.Principal
		args     string
		wantCode string
	}{
		{"unknown integration", alice, `{"integrations":["github","gitlab"]}`, "UNKNOWN_INTEGRATION"},
		{"no proxy", alice, `{"integrations":["echo"]}`, "NO_PROXY"},
		{"not connected", metatools.Principal{UserID: "bob"}, `{"integrations":["github"]}`, "NOT_CONNECTED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if e := f.failed(t, tt.user, "curl_session", tt.args); string(e.Code) != tt.wantCode {
				t.Errorf("error = %+v, want %s", e, tt.wantCode)
			}
		})
	}
	if n := len(f.curl.Mints()); n != 0 {
		t.Fatalf("%d sessions minted by failed calls", n)
	}
	var out metatools.CurlOutput
	r := f.invoke(t, alice, "curl_session", `{"integrations":["github"]}`, &out)
	if r.IsError || out.Token != "cs_u-alice" || out.Endpoints["github"] != "https://wb.test/c/github/" ||
		!strings.Contains(out.Usage, "https://wb.test/c/github/") || out.ExpiresAt.IsZero() {
		t.Errorf("curl_session = %s", r.JSON)
	}
}

// TestTools_CurlSession_allOrNothing checks that one refused call names
// every offending integration with its own reason, and mints nothing.
func TestTools_CurlSession_allOrNothing(t *testing.T) {
	f := newFixture(t, metatools.Options{})
	bob := metatools.Principal{UserID: "bob"}
	tests := []struct {
		name     string
		args     string
		wantCode string
		refused  map[string]string // integration -> code
	}{
		{"three reasons", `{"integrations":["github","gitlab","echo"]}`, "UNKNOWN_INTEGRATION",
			map[string]string{"github": "NOT_CONNECTED", "gitlab": "UNKNOWN_INTEGRATION", "echo": "NO_PROXY"}},
		{"no proxy and not connected", `{"integrations":["echo","github"]}`, "NO_PROXY",
			map[string]string{"github": "NOT_CONNECTED", "echo": "NO_PROXY"}},
		{"one not connected", `{"integrations":["github"]}`, "NOT_CONNECTED", map[string]string{"github": "NOT_CONNECTED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := f.failed(t, bob, "curl_session", tt.args)
			if string(e.Code) != tt.wantCode || len(e.Problems) != len(tt.refused) {
				t.Fatalf("error = %+v, want %s with %d problems", e, tt.wantCode, len(tt.refused))
			}
			var details struct {
				Refused []struct{ Integration, Code, Reason string }
			}
			if err := json.Unmarshal(e.Details, &details); err != nil || len(details.Refused) != len(tt.refused) {
				t.Fatalf("details = %s, %v", e.Details, err)
			}
			for _, r := range details.Refused {
				if tt.refused[r.Integration] != r.Code || r.Reason == "" {
					t.Errorf("refused %+v, want code %q", r, tt.refused[r.Integration])
				}
				if !strings.Contains(e.Message, r.Integration+" ("+r.Code) {
					t.Errorf("message %q does not name %s with %s", e.Message, r.Integration, r.Code)
				}
			}
			if _, ok := tt.refused["github"]; ok && !strings.Contains(e.Fix, "connect('github')") {
				t.Errorf("fix = %q, want connect('github')", e.Fix)
			}
		})
	}
	if n := len(f.curl.Mints()); n != 0 {
		t.Fatalf("%d sessions minted by refused calls", n)
	}
	def, _ := metatools.DefinitionOf("curl_session")
	for _, want := range []string{"explicit approval", "destructive", "intend"} {
		if !strings.Contains(def.Description, want) {
			t.Errorf("curl_session description lacks %q", want)
		}
	}
}

// TestTools_OutputsMatchSchemas checks every successful output against the
// meta-tool's declared output schema, as MCP clients do.
func TestTools_OutputsMatchSchemas(t *testing.T) {
	f := newFixture(t, metatools.Options{})
	calls := []struct{ tool, args string }{
		{"search_tools", `{"query":"github","limit":3}`},
		{"get_tool_schema", `{"tool":"github_get_repo"}`},
		{"execute_tools", `{"executions":[{"tool":"github_get_repo","arguments":{"owner":"o","repo":"r"}},{"tool":"github_get_repo","arguments":{}},{"tool":"nope"}]}`},
		{"whoami", `{}`},
		{"list_integrations", `{}`},
		{"connect", `{"integration":"github","reconnect":true}`},
		{"get_auth_url", `{"integration":"echo"}`},
		{"wait_for_connection", `{"connectionId":"conn_1","timeoutSeconds":1}`},
		{"curl_session", `{"integrations":["github"]}`},
	}
	for _, c := range calls {
		t.Run(c.tool, func(t *testing.T) {
			r := f.invoke(t, alice, c.tool, c.args, nil)
			if !r.Structured {
				t.Fatalf("not structured: %s", r.JSON)
			}
			def, _ := metatools.DefinitionOf(c.tool)
			s, err := argcheck.Compile(def.OutputSchema)
			if err != nil {
				t.Fatal(err)
			}
			if problems := s.Check(r.JSON); problems != nil {
				t.Errorf("output %s fails its schema: %+v", r.JSON, problems)
			}
		})
	}
}

// TestTools_ExecuteIdempotencyCapacity reproduces the review's attack: one
// user's keyed executions used to evict another user's record, so the
// victim's retry ran its side effect again. Now the attacker is refused past
// their budget without running, and the victim's retry replays.
func TestTools_ExecuteIdempotencyCapacity(t *testing.T) {
	f := newFixture(t, metatools.Options{Idempotency: idempotency.NewMemory(idempotency.MemoryOptions{MaxKeysPerUser: 3})})
	f.conns.SetConnected("mallory", "github", true)
	call := func(p metatools.Principal, key string) metatools.ExecutionResult {
		t.Helper()
		var out metatools.ExecuteOutput
		f.invoke(t, p, "execute_tools", `{"executions":[{"tool":"github_create_issue","idempotencyKey":"`+key+`"}]}`, &out)
		return out.Results[0]
	}
	if r := call(alice, "victim"); !r.OK {
		t.Fatalf("alice = %+v", r)
	}
	mallory := metatools.Principal{UserID: "mallory"}
	var refused int
	for i := range 10 {
		r := call(mallory, fmt.Sprintf("m%d", i))
		if r.Error != nil && r.Error.Code == failure.IdempotencyCapacity {
			refused++
			if !strings.Contains(r.Error.Message, "3 live idempotency keys") {
				t.Errorf("refusal does not name the bound: %q", r.Error.Message)
			}
		}
	}
	if refused != 7 {
		t.Errorf("%d of mallory's 10 keyed executions refused, want 7 past the budget of 3", refused)
	}
	if n := f.github.Calls("github_create_issue"); n != 4 {
		t.Errorf("tool ran %d times, want 4 (alice once, mallory three times)", n)
	}
	if r := call(alice, "victim"); !r.OK || !r.Replayed {
		t.Errorf("alice's retry = %+v, want a replay", r)
	}
	if n := f.github.Calls("github_create_issue"); n != 4 {
		t.Errorf("alice's retry ran the tool again (%d calls)", n)
	}
	// An execution without a key is not limited by the key budget.
	var out metatools.ExecuteOutput
	f.invoke(t, mallory, "execute_tools", `{"executions":[{"tool":"github_create_issue"}]}`, &out)
	if !out.Results[0].OK {
		t.Errorf("unkeyed execution = %+v", out.Results[0])
	}
}

// TestTools_ExecuteIdempotencyOmitted: an outcome over the byte budget is
// not replayed, but the key stays spent, so a retry never runs twice.
func TestTools_ExecuteIdempotencyOmitted(t *testing.T) {
	f := newFixture(t, metatools.Options{Idempotency: idempotency.NewMemory(idempotency.MemoryOptions{MaxBytesPerUser: 10})})
	for i := range 2 {
		var out metatools.ExecuteOutput
		f.invoke(t, alice, "execute_tools", `{"executions":[{"tool":"github_create_issue","idempotencyKey":"k"}]}`, &out)
		r := out.Results[0]
		if i == 1 && (r.Error == nil || r.Error.Code != failure.IdempotencyCapacity || !strings.Contains(r.Error.Message, "will not run again")) {
			t.Errorf("retry = %+v, want IDEMPOTENCY_CAPACITY", r)
		}
	}
	if n := f.github.Calls("github_create_issue"); n != 1 {
		t.Errorf("tool ran %d times, want once", n)
	}
}
