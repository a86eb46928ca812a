package metatools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/mcp/mcptest"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/toolcall"
)

var bob = metatools.Principal{UserID: "u-bob", TenantID: "t1", Email: "bob@example.com"}

// fakeApps gives each user fixed custom apps; an app answers every call
// with who called which tool, or with its error.
type fakeApps struct {
	mu    sync.Mutex
	users map[string][]*registry.Integration
	err   error
}

func (a *fakeApps) Integrations(_ context.Context, userID string) ([]*registry.Integration, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.users[userID], a.err
}

// appCaller answers like a custom app: its listed tools echo the caller,
// anything else is APP_TOOL_GONE, and fail, when set, answers everything.
type appCaller struct {
	owner  string
	listed map[string]bool
	fail   *failure.Error
}

func (c appCaller) Call(_ context.Context, call toolcall.Call) (json.RawMessage, error) {
	if c.fail != nil {
		return nil, c.fail
	}
	if !c.listed[call.Tool] {
		return nil, failure.Errorf(failure.AppToolGone, "no tool %s", call.Tool)
	}
	return json.Marshal(map[string]any{"tool": call.Tool, "user": call.UserID, "owner": c.owner, "input": json.RawMessage(call.Input)})
}

// app is a custom app integration named name with the given tool slugs.
func app(name string, fail *failure.Error, slugs ...string) *registry.Integration {
	var tools []manifest.Tool
	listed := map[string]bool{}
	for _, s := range slugs {
		tools = append(tools, mcptest.Tool(s, "", "An app tool that sums numbers.", `{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`))
		listed[s] = true
	}
	in := registry.Native(appManifest(name, tools...), appCaller{listed: listed, fail: fail})
	in.Builtin, in.Custom = false, true
	if fail != nil {
		in.Problem = fail.Error()
	}
	return in
}

// appManifest is a custom app's manifest as package customapps builds it:
// not validated as a plugin's (remote tool names may hold '-').
func appManifest(name string, tools ...manifest.Tool) *manifest.Manifest {
	return &manifest.Manifest{Name: name, Version: "0.0.0", Description: "Custom app " + name, Auth: manifest.Auth{Mode: manifest.ModeNone}, Tools: tools}
}

func TestTools_CustomApps(t *testing.T) {
	apps := &fakeApps{users: map[string][]*registry.Integration{
		alice.UserID: {
			app("everything", nil, "everything__add", "everything__get-sum"),
			app("down", failure.Errorf(failure.UpstreamUnreachable, "app down: the app cannot be reached")),
			app("github", nil, "github__clash"), // an integration took its name: left out
		},
	}}
	f := newFixture(t, metatools.Options{Apps: apps})

	t.Run("list_integrations shows the caller's apps only", func(t *testing.T) {
		for _, tt := range []struct {
			p          metatools.Principal
			wantCustom []string
		}{
			{alice, []string{"down", "everything"}},
			{bob, nil},
		} {
			var out metatools.IntegrationsOutput
			f.invoke(t, tt.p, metatools.ListIntegrations, `{}`, &out)
			var custom []string
			for _, in := range out.Integrations {
				if in.Custom {
					custom = append(custom, in.Name)
				}
				if wantErr := in.Name == "down"; wantErr != strings.Contains(in.Error, "UPSTREAM_UNREACHABLE") {
					t.Fatalf("%s shows error %q", in.Name, in.Error)
				}
				if in.Name == "github" && in.Custom {
					t.Fatal("the app named github replaced the integration")
				}
			}
			if len(custom) != len(tt.wantCustom) || (len(custom) > 0 && (custom[0] != tt.wantCustom[0] || custom[1] != tt.wantCustom[1])) {
				t.Fatalf("%s sees custom %v, want %v", tt.p.UserID, custom, tt.wantCustom)
			}
		}
	})

	t.Run("search_tools and get_tool_schema", func(t *testing.T) {
		var out metatools.SearchOutput
		f.invoke(t, alice, metatools.SearchTools, `{"query":"sums numbers"}`, &out)
		if len(out.Hits) == 0 || out.Hits[0].Integration != "everything" {
			t.Fatalf("alice's search = %+v, want her app's tools first", out.Hits)
		}
		f.invoke(t, bob, metatools.SearchTools, `{"query":"sums numbers"}`, &out)
		for _, h := range out.Hits {
			if h.Integration == "everything" {
				t.Fatalf("bob finds alice's app tool %s", h.Slug)
			}
		}
		var s metatools.ToolSchema
		f.invoke(t, alice, metatools.GetToolSchema, `{"tool":"everything__get-sum"}`, &s)
		if s.Integration != "everything" || !s.Connected || len(s.InputSchema) == 0 {
			t.Fatalf("schema = %+v", s)
		}
		if e := f.failed(t, bob, metatools.GetToolSchema, `{"tool":"everything__get-sum"}`); e.Code != failure.UnknownTool {
			t.Fatalf("bob's get_tool_schema = %+v, want UNKNOWN_TOOL", e)
		}
	})

	t.Run("execute_tools", func(t *testing.T) {
		tests := []struct {
			name       string
			p          metatools.Principal
			tool, args string
			wantOK     bool
			wantCode   failure.Code
			wantReason failure.Code
		}{
			{"alice calls her app", alice, "everything__add", `{"a":"not a number"}`, true, "", ""}, // the app validates
			{"a tool with a dash", alice, "everything__get-sum", `{"a":1}`, true, "", ""},
			{"bob cannot call it", bob, "everything__add", `{"a":1}`, false, failure.UnknownTool, ""},
			{"a tool the app lost", alice, "everything__gone", `{}`, false, failure.ToolError, failure.AppToolGone},
			{"an unreachable app", alice, "down__anything", `{}`, false, failure.ToolError, failure.UpstreamUnreachable},
			{"no app of that name", alice, "nope__add", `{}`, false, failure.UnknownTool, ""},
			{"shared tools still work", alice, "echo_ping", `{"x":1}`, true, "", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var out metatools.ExecuteOutput
				f.invoke(t, tt.p, metatools.ExecuteTools, `{"executions":[{"tool":"`+tt.tool+`","arguments":`+tt.args+`}]}`, &out)
				r := out.Results[0]
				if r.OK != tt.wantOK {
					t.Fatalf("result = %+v, want ok %v", r, tt.wantOK)
				}
				if !tt.wantOK && (r.Error.Code != tt.wantCode || r.Error.Reason != tt.wantReason) {
					t.Fatalf("error = %+v, want %s/%s", r.Error, tt.wantCode, tt.wantReason)
				}
				if tt.wantOK && tt.p.UserID == alice.UserID && tt.tool != "echo_ping" {
					var got struct{ Tool, User string }
					if err := json.Unmarshal(r.Result, &got); err != nil || got.Tool != tt.tool || got.User != alice.UserID {
						t.Fatalf("result %s, want %s called for alice", r.Result, tt.tool)
					}
				}
			})
		}
	})

	t.Run("failing to read apps shows the shared catalog", func(t *testing.T) {
		apps.mu.Lock()
		apps.err = errors.New("database down")
		saved := apps.users
		apps.users = nil
		apps.mu.Unlock()
		defer func() {
			apps.mu.Lock()
			apps.err, apps.users = nil, saved
			apps.mu.Unlock()
		}()
		var out metatools.IntegrationsOutput
		f.invoke(t, alice, metatools.ListIntegrations, `{}`, &out)
		if len(out.Integrations) != 3 {
			t.Fatalf("integrations = %+v, want the 3 shared ones", out.Integrations)
		}
	})
}

// TestTools_CustomAppsHammer runs many users' calls at once under -race:
// each sees only their own app.
func TestTools_CustomAppsHammer(t *testing.T) {
	apps := &fakeApps{users: map[string][]*registry.Integration{}}
	users := []metatools.Principal{alice, bob, {UserID: "u-carol"}, {UserID: "u-dave"}}
	for _, u := range users {
		in := registry.Native(appManifest("mine", mcptest.Tool("mine__who", "", "Who owns me.", "")),
			appCaller{owner: u.UserID, listed: map[string]bool{"mine__who": true}})
		in.Custom = true
		apps.users[u.UserID] = []*registry.Integration{in}
	}
	f := newFixture(t, metatools.Options{Apps: apps})
	var wg sync.WaitGroup
	for i := range 64 {
		p := users[i%len(users)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := f.tools.Invoke(context.Background(), p, metatools.ExecuteTools, json.RawMessage(`{"executions":[{"tool":"mine__who","arguments":{}}]}`), metatools.Peer{})
			if err != nil {
				t.Error(err)
				return
			}
			var out metatools.ExecuteOutput
			if err := json.Unmarshal(r.JSON, &out); err != nil || !out.Results[0].OK {
				t.Errorf("%s: %s", p.UserID, r.JSON)
				return
			}
			var got struct{ User, Owner string }
			if err := json.Unmarshal(out.Results[0].Result, &got); err != nil || got.User != p.UserID || got.Owner != p.UserID {
				t.Errorf("%s's call ran as %q on the app of %q", p.UserID, got.User, got.Owner)
			}
		}()
	}
	wg.Wait()
}
