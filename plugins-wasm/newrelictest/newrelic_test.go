package newrelictest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/credential"
)

const accountID = 1234567

// nrFixture is the built New Relic plugin pointed at a fresh fake.
type nrFixture struct {
	fake   *Fake
	plugin *runtime.Plugin
	// guids of the seeded entities
	checkout, billing, dashboard string
}

func newNRFixture(t testing.TB) *nrFixture {
	t.Helper()
	f := &nrFixture{fake: NewFake(t, apiKey)}
	creds := credential.NewMemory()
	creds.Set(userID, "newrelic", &credential.Credential{Fields: map[string]string{"api_key": apiKey}})
	creds.Set("intruder", "newrelic", &credential.Credential{Fields: map[string]string{"api_key": "NRAK-WRONG"}})
	f.plugin = loadPlugin(t, readNewRelicWasm(t), hostOptions{
		settings: runtime.MapSettings{"newrelic": {"base_url": f.fake.URL}},
		creds:    creds,
	})
	now := f.fake.Now()
	f.fake.AddAccount(&Account{
		ID: accountID, Name: "Production",
		Issues: []Issue{
			{ID: "iss-1", Priority: "CRITICAL", State: "ACTIVATED", Title: []string{"High error rate"}, Sources: []string{"newrelic"}, EntityNames: []string{"checkout"}, CreatedAt: now - 3000, ActivatedAt: now - 2900, TotalIncidents: 2},
			{ID: "iss-2", Priority: "HIGH", State: "CLOSED", Title: []string{"Slow responses"}, Sources: []string{"newrelic"}, CreatedAt: now - 2000, ClosedAt: now - 1000, TotalIncidents: 1},
			{ID: "iss-3", Priority: "CRITICAL", State: "ACTIVATED", Title: []string{"Host down"}, Sources: []string{"newrelic"}, CreatedAt: now - 1000, TotalIncidents: 1},
		},
		Incidents: []Incident{
			{ID: "inc-1", Title: "Error rate > 5%", Priority: "CRITICAL", State: "CREATED", Description: []string{"policy / condition"}, EntityName: "checkout", CreatedAt: now - 500},
		},
		Deployments: []map[string]any{
			{"timestamp": now - 20*86400_000, "appName": "checkout", "version": "0.9.0"},
			{"timestamp": now - 3*86400_000, "appName": "checkout", "version": "1.0.0"},
			{"timestamp": now - 2*86400_000, "appName": "O'Brien's \\ app", "version": "2.0.0"},
			{"timestamp": now - 86400_000, "appName": "checkout", "version": "1.1.0"},
		},
	})
	f.fake.AddAccount(&Account{ID: 42, Name: "Staging"})
	f.checkout = f.fake.AddEntity(&Entity{Name: "checkout", EntityType: "APM_APPLICATION_ENTITY", Domain: "APM", Type: "APPLICATION", AccountID: accountID, Reporting: true, AlertSeverity: "CRITICAL", Tags: map[string][]string{"env": {"prod"}, "team": {"payments"}}})
	f.billing = f.fake.AddEntity(&Entity{Name: "billing-checkout-worker", EntityType: "APM_APPLICATION_ENTITY", Domain: "APM", Type: "APPLICATION", AccountID: accountID, Reporting: true, AlertSeverity: "NOT_ALERTING"})
	f.fake.AddEntity(&Entity{Name: "checkout-web", EntityType: "BROWSER_APPLICATION_ENTITY", Domain: "BROWSER", Type: "APPLICATION", AccountID: accountID})
	f.fake.AddEntity(&Entity{Name: "checkout-replica", EntityType: "APM_APPLICATION_ENTITY", Domain: "APM", Type: "APPLICATION", AccountID: accountID})
	f.dashboard = f.fake.AddEntity(&Entity{Name: "Checkout overview", EntityType: "DASHBOARD_ENTITY", Domain: "VIZ", Type: "DASHBOARD", AccountID: accountID, Dashboard: &Dashboard{CreatedAt: "2024-01-01T00:00:00Z", UpdatedAt: "2024-02-01T00:00:00Z", OwnerEmail: "ada@example.com", OwnerID: 1001}})
	f.fake.AddEntity(&Entity{Name: "Billing", EntityType: "DASHBOARD_ENTITY", Domain: "VIZ", Type: "DASHBOARD", AccountID: accountID, Dashboard: &Dashboard{OwnerEmail: "bob@example.com"}})
	return f
}

// call runs a tool as userID and decodes its output into out.
func (f *nrFixture) call(t *testing.T, tool, input string, out any) {
	t.Helper()
	plugintest.CallInto(t, f.plugin, userID, tool, input, out)
}

// fail runs a tool that must fail and returns its error.
func (f *nrFixture) fail(t *testing.T, tool, input string) *failure.Error {
	t.Helper()
	return plugintest.ToolError(t, f.plugin, userID, tool, input)
}

// onlyRequest returns the one request the fake saw since it was cleared,
// after checking what every NerdGraph request must carry.
func (f *nrFixture) onlyRequest(t *testing.T) Request {
	t.Helper()
	reqs := f.fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("fake saw %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/graphql" {
		t.Errorf("request %s %s, want POST /graphql", r.Method, r.Path)
	}
	if got := r.Header.Values("Api-Key"); !slices.Equal(got, []string{apiKey}) {
		t.Errorf("API-Key = %q, want exactly the injected key", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	if got := r.Header.Get("User-Agent"); !strings.HasPrefix(got, "workbench-newrelic-plugin/") {
		t.Errorf("User-Agent = %q", got)
	}
	if r.Header.Get("Authorization") != "" {
		t.Errorf("an Authorization header was sent")
	}
	f.fake.ClearRequests()
	return r
}

func TestPlugin_Manifest(t *testing.T) {
	m := newNRFixture(t).plugin.Manifest()
	if m.Name != "newrelic" || m.BaseURL != "" || !slices.Equal(m.Hosts, []string{"api.newrelic.com", "api.eu.newrelic.com"}) {
		t.Errorf("manifest head = %+v", m)
	}
	k := m.Auth.APIKey
	if m.Auth.Mode != "apikey" || k == nil || len(k.Fields) != 1 || k.Fields[0].Name != "api_key" || !k.Fields[0].Secret ||
		!k.Fields[0].Required || k.Fields[0].Pattern != "^NRAK-[A-Za-z0-9]+$" {
		t.Fatalf("auth = %+v", m.Auth)
	}
	if p := k.Placement; p.In != "header" || p.Name != "API-Key" || p.Value != "{api_key}" {
		t.Errorf("placement = %+v", p)
	}
	if len(m.Settings) != 1 || m.Settings[0].Name != "region" || !slices.Equal(m.Settings[0].Enum, []string{"US", "EU"}) || m.Settings[0].Default != "US" {
		t.Errorf("settings = %+v", m.Settings)
	}
	want := map[string][2]bool{ // readOnly, destructive
		"newrelic_run_nrql": {true, false}, "newrelic_list_entities": {true, false}, "newrelic_get_entity": {true, false},
		"newrelic_list_issues": {true, false}, "newrelic_list_incidents": {true, false}, "newrelic_list_dashboards": {true, false},
		"newrelic_list_deployments": {true, false}, "newrelic_list_accounts": {true, false}, "newrelic_get_current_user": {true, false},
		"newrelic_record_deployment": {false, false}, "newrelic_delete_entity_tags": {false, true},
	}
	if len(m.Tools) != len(want) {
		t.Errorf("%d tools, want %d", len(m.Tools), len(want))
	}
	for _, tool := range m.Tools {
		w, ok := want[tool.Slug]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Slug)
			continue
		}
		if tool.Annotations.ReadOnly != w[0] || tool.Annotations.Destructive != w[1] || !tool.Annotations.OpenWorld {
			t.Errorf("%s annotations = %+v", tool.Slug, tool.Annotations)
		}
		if len(tool.OutputSchema) == 0 || tool.Title == "" {
			t.Errorf("%s lacks an output schema or title", tool.Slug)
		}
	}
}

func TestPlugin_RunNRQL(t *testing.T) {
	f := newNRFixture(t)
	query := "SELECT count(*) FROM Transaction SINCE 1 hour ago"
	f.fake.SetNRQLResult(accountID, query, []map[string]any{{"count": 1000}})
	var out struct {
		Results  []map[string]any
		Metadata struct {
			TimeWindow struct{ Begin, End int64 }
		}
	}
	f.call(t, "newrelic_run_nrql", `{"account_id":1234567,"query":"`+query+`","timeout_seconds":30}`, &out)
	if len(out.Results) != 1 || out.Results[0]["count"] != 1000.0 || out.Metadata.TimeWindow.End != f.fake.Now() {
		t.Errorf("run_nrql = %+v", out)
	}
	r := f.onlyRequest(t)
	wantVars := map[string]any{"accountId": float64(accountID), "query": query, "timeout": 30.0}
	if !reflect.DeepEqual(r.Variables, wantVars) {
		t.Errorf("variables = %v, want %v", r.Variables, wantVars)
	}
	if !contains(r.Query, "account(id: $accountId)", "nrql(query: $query, timeout: $timeout)", "results") {
		t.Errorf("query = %s", r.Query)
	}
}

func TestPlugin_RunNRQLErrors(t *testing.T) {
	f := newNRFixture(t)
	tests := []struct {
		name, input, code, message string
	}{
		{"syntax", `{"account_id":1234567,"query":"SELEKT 1"}`, "INVALID_ARGUMENTS", "NerdGraph: NRQL Syntax Error: Error at line 1 position 1, unexpected 'SELEKT'"},
		{"inaccessible account", `{"account_id":99,"query":"SELECT 1 FROM Transaction"}`, "FORBIDDEN", "NerdGraph: Access denied: account 99 is not accessible with this API key"},
		{"timeout over NerdGraph's limit", `{"account_id":1234567,"query":"SELECT 1 FROM Transaction","timeout_seconds":121}`, "INVALID_ARGUMENTS", "timeout_seconds: must be at most 120"},
		{"missing query", `{"account_id":1234567}`, "INVALID_ARGUMENTS", "query: is required"},
		{"account id as text", `{"account_id":"1234567","query":"SELECT 1"}`, "INVALID_ARGUMENTS", "account_id: must be an integer, not string"},
		{"unknown field", `{"account_id":1,"query":"SELECT 1","accountId":1}`, "INVALID_ARGUMENTS", "accountId: is not a known field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.fake.ClearRequests()
			te := f.fail(t, "newrelic_run_nrql", tt.input)
			if string(te.Code) != tt.code || te.Message != tt.message {
				t.Errorf("error = %s %q, want %s %q", te.Code, te.Message, tt.code, tt.message)
			}
			sent := len(f.fake.Requests()) > 0
			if wantSent := tt.code != "INVALID_ARGUMENTS" || tt.name == "syntax"; sent != wantSent {
				t.Errorf("request sent = %v, want %v", sent, wantSent)
			}
		})
	}
	// The details carry NerdGraph's errors.
	te := f.fail(t, "newrelic_run_nrql", `{"account_id":1234567,"query":"SELEKT 1"}`)
	var details struct {
		Errors []struct {
			Message, ErrorClass string
			Path                []string
		}
	}
	if err := json.Unmarshal(te.Details, &details); err != nil || len(details.Errors) != 1 ||
		details.Errors[0].ErrorClass != "INVALID_INPUT" || !slices.Equal(details.Errors[0].Path, []string{"actor", "account", "nrql"}) {
		t.Errorf("details = %s (%v)", te.Details, err)
	}
}

func TestPlugin_ListEntities(t *testing.T) {
	f := newNRFixture(t)
	type page struct {
		Count    int
		Entities []struct {
			GUID, Name, Domain string
			Tags               []struct {
				Key    string
				Values []string
			}
		}
		NextCursor *string `json:"next_cursor"`
	}
	var p1 page
	f.call(t, "newrelic_list_entities", `{"query":"domain = 'APM' AND name LIKE 'checkout'"}`, &p1)
	if p1.Count != 3 || len(p1.Entities) != 2 || p1.Entities[0].Name != "checkout" || p1.NextCursor == nil {
		t.Fatalf("page 1 = %+v", p1)
	}
	if tags := p1.Entities[0].Tags; len(tags) != 2 || tags[0].Key != "env" || tags[0].Values[0] != "prod" {
		t.Errorf("tags = %+v", tags)
	}
	r := f.onlyRequest(t)
	if r.Variables["query"] != "domain = 'APM' AND name LIKE 'checkout'" || r.Variables["cursor"] != nil {
		t.Errorf("variables = %v", r.Variables)
	}
	var p2 page
	f.call(t, "newrelic_list_entities", `{"query":"domain = 'APM' AND name LIKE 'checkout'","cursor":"`+*p1.NextCursor+`"}`, &p2)
	if len(p2.Entities) != 1 || p2.Entities[0].Name != "checkout-replica" || p2.NextCursor != nil {
		t.Errorf("page 2 = %+v", p2)
	}
	if r := f.onlyRequest(t); r.Variables["cursor"] != *p1.NextCursor {
		t.Errorf("cursor variable = %v", r.Variables["cursor"])
	}
	te := f.fail(t, "newrelic_list_entities", `{"query":"domain = 'APM' AND name LIKE 'checkout'","cursor":"bogus"}`)
	if te.Code != "INVALID_ARGUMENTS" || !strings.Contains(te.Message, "Invalid cursor") {
		t.Errorf("bad cursor = %+v", te)
	}
	te = f.fail(t, "newrelic_list_entities", `{"query":"name IS SOMETHING"}`)
	if te.Code != "INVALID_ARGUMENTS" || !strings.Contains(te.Message, "Invalid entity search query") {
		t.Errorf("bad query = %+v", te)
	}
}

func TestPlugin_GetEntity(t *testing.T) {
	f := newNRFixture(t)
	var e struct {
		GUID, Name, EntityType, Permalink, AlertSeverity string
		AccountID                                        int
		Reporting                                        bool
	}
	f.call(t, "newrelic_get_entity", `{"guid":"`+f.checkout+`"}`, &e)
	if e.GUID != f.checkout || e.Name != "checkout" || e.AccountID != accountID || !e.Reporting || e.AlertSeverity != "CRITICAL" ||
		!strings.HasSuffix(e.Permalink, f.checkout) {
		t.Errorf("entity = %+v", e)
	}
	if r := f.onlyRequest(t); r.Variables["guid"] != f.checkout || !strings.Contains(r.Query, "entity(guid: $guid)") {
		t.Errorf("request = %v %s", r.Variables, r.Query)
	}
	tests := []struct {
		guid, code string
		sent       bool
	}{
		{"MTIzNDU2N3xBUE18QVBQTElDQVRJT058OTk5", "NOT_FOUND", true},
		{"not a guid!", "INVALID_ARGUMENTS", false},
		{"%%%", "INVALID_ARGUMENTS", false},
		{"A", "INVALID_ARGUMENTS", true}, // NerdGraph itself refuses it
	}
	for _, tt := range tests {
		f.fake.ClearRequests()
		te := f.fail(t, "newrelic_get_entity", `{"guid":"`+tt.guid+`"}`)
		if string(te.Code) != tt.code || (len(f.fake.Requests()) > 0) != tt.sent {
			t.Errorf("get_entity(%s) = %+v, sent %v", tt.guid, te, len(f.fake.Requests()) > 0)
		}
	}
}

func TestPlugin_ListIssues(t *testing.T) {
	f := newNRFixture(t)
	type page struct {
		Issues []struct {
			IssueID, State string
			Title          []string
			TotalIncidents int
		}
		NextCursor *string `json:"next_cursor"`
	}
	var p page
	f.call(t, "newrelic_list_issues", `{"account_id":1234567,"states":["ACTIVATED"]}`, &p)
	if len(p.Issues) != 2 || p.Issues[0].IssueID != "iss-1" || p.Issues[1].IssueID != "iss-3" || p.NextCursor != nil ||
		p.Issues[0].Title[0] != "High error rate" || p.Issues[0].TotalIncidents != 2 {
		t.Errorf("activated issues = %+v", p)
	}
	r := f.onlyRequest(t)
	if !reflect.DeepEqual(r.Variables["filter"], map[string]any{"states": []any{"ACTIVATED"}}) || r.Variables["timeWindow"] != nil {
		t.Errorf("variables = %v", r.Variables)
	}
	// All states, two per page, within a time window.
	now := f.fake.Now()
	in := `{"account_id":1234567,"start_time_ms":` + itoa(now-5000) + `,"end_time_ms":` + itoa(now) + `}`
	var p1, p2 page
	f.call(t, "newrelic_list_issues", in, &p1)
	if len(p1.Issues) != 2 || p1.NextCursor == nil {
		t.Fatalf("page 1 = %+v", p1)
	}
	if r := f.onlyRequest(t); !reflect.DeepEqual(r.Variables["timeWindow"], map[string]any{"startTime": float64(now - 5000), "endTime": float64(now)}) || r.Variables["filter"] != nil {
		t.Errorf("variables = %v", r.Variables)
	}
	f.call(t, "newrelic_list_issues", strings.TrimSuffix(in, "}")+`,"cursor":"`+*p1.NextCursor+`"}`, &p2)
	if len(p2.Issues) != 1 || p2.Issues[0].IssueID != "iss-3" || p2.NextCursor != nil {
		t.Errorf("page 2 = %+v", p2)
	}
	f.fake.ClearRequests()
	for _, bad := range []string{
		`{"account_id":1234567,"start_time_ms":5}`,
		`{"account_id":1234567,"start_time_ms":5,"end_time_ms":5}`,
		`{"account_id":1234567,"states":["OPEN"]}`,
	} {
		if te := f.fail(t, "newrelic_list_issues", bad); te.Code != "INVALID_ARGUMENTS" {
			t.Errorf("list_issues(%s) = %+v", bad, te)
		}
	}
	if n := len(f.fake.Requests()); n != 0 {
		t.Errorf("invalid input sent %d requests", n)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestPlugin_ListIncidents(t *testing.T) {
	f := newNRFixture(t)
	var p struct {
		Incidents []struct {
			IncidentID, Title, State, EntityNames string
			Description                           []string
		}
		NextCursor *string `json:"next_cursor"`
	}
	f.call(t, "newrelic_list_incidents", `{"account_id":1234567}`, &p)
	if len(p.Incidents) != 1 || p.Incidents[0].IncidentID != "inc-1" || p.Incidents[0].Title != "Error rate > 5%" ||
		p.Incidents[0].EntityNames != "checkout" || p.NextCursor != nil {
		t.Errorf("incidents = %+v", p)
	}
	if r := f.onlyRequest(t); r.Variables["accountId"] != float64(accountID) || !strings.Contains(r.Query, "incidents(cursor: $cursor, timeWindow: $timeWindow)") {
		t.Errorf("request = %v %s", r.Variables, r.Query)
	}
	var empty struct{ Incidents []any }
	f.call(t, "newrelic_list_incidents", `{"account_id":42}`, &empty)
	if empty.Incidents == nil || len(empty.Incidents) != 0 {
		t.Errorf("staging incidents = %+v, want []", empty)
	}
}

func TestPlugin_ListDashboards(t *testing.T) {
	f := newNRFixture(t)
	var p struct {
		Count      int
		Dashboards []struct {
			GUID, Name, CreatedAt string
			Owner                 struct{ Email string }
		}
		NextCursor *string `json:"next_cursor"`
	}
	f.call(t, "newrelic_list_dashboards", `{"name":"checkout"}`, &p)
	if p.Count != 1 || len(p.Dashboards) != 1 || p.Dashboards[0].GUID != f.dashboard || p.Dashboards[0].Owner.Email != "ada@example.com" ||
		p.Dashboards[0].CreatedAt != "2024-01-01T00:00:00Z" || p.NextCursor != nil {
		t.Errorf("dashboards = %+v", p)
	}
	r := f.onlyRequest(t)
	if !reflect.DeepEqual(r.Variables["builder"], map[string]any{"type": "DASHBOARD", "name": "checkout"}) {
		t.Errorf("variables = %v", r.Variables)
	}
	f.call(t, "newrelic_list_dashboards", `{}`, &p)
	if p.Count != 2 || len(p.Dashboards) != 2 {
		t.Errorf("all dashboards = %+v", p)
	}
}

func TestPlugin_ListDeployments(t *testing.T) {
	f := newNRFixture(t)
	type out struct {
		Deployments []struct{ AppName, Version string }
		NRQL        string
	}
	tests := []struct {
		name, input, nrql string
		versions          []string
	}{
		{"default window", `{"account_id":1234567}`, "SELECT * FROM Deployment SINCE 7 days ago LIMIT 100", []string{"1.1.0", "2.0.0", "1.0.0"}},
		{"one app", `{"account_id":1234567,"app_name":"checkout","since_days":30,"limit":2}`,
			"SELECT * FROM Deployment WHERE appName = 'checkout' SINCE 30 days ago LIMIT 2", []string{"1.1.0", "1.0.0"}},
		{"quotes are escaped", `{"account_id":1234567,"app_name":"O'Brien's \\ app"}`,
			`SELECT * FROM Deployment WHERE appName = 'O\'Brien\'s \\ app' SINCE 7 days ago LIMIT 100`, []string{"2.0.0"}},
		{"entity", `{"account_id":1234567,"entity_guid":"` + "QUJD" + `"}`,
			"SELECT * FROM Deployment WHERE entity.guid = 'QUJD' SINCE 7 days ago LIMIT 100", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o out
			f.call(t, "newrelic_list_deployments", tt.input, &o)
			var versions []string
			for _, d := range o.Deployments {
				versions = append(versions, d.Version)
			}
			if o.NRQL != tt.nrql || !slices.Equal(versions, tt.versions) {
				t.Errorf("deployments = %+v, want nrql %q versions %v", o, tt.nrql, tt.versions)
			}
			if r := f.onlyRequest(t); r.Variables["query"] != tt.nrql {
				t.Errorf("query variable = %v", r.Variables["query"])
			}
		})
	}
	for _, bad := range []string{
		`{"account_id":1234567,"entity_guid":"x' OR 1=1"}`,
		`{"account_id":1234567,"app_name":"a\nb"}`,
		`{"account_id":1234567,"limit":1001}`,
	} {
		if te := f.fail(t, "newrelic_list_deployments", bad); te.Code != "INVALID_ARGUMENTS" {
			t.Errorf("list_deployments(%s) = %+v", bad, te)
		}
	}
	if n := len(f.fake.Requests()); n != 0 {
		t.Errorf("invalid input sent %d requests", n)
	}
}

func TestPlugin_ListAccounts(t *testing.T) {
	f := newNRFixture(t)
	var out struct {
		Accounts []struct {
			ID   int
			Name string
		}
	}
	f.call(t, "newrelic_list_accounts", `{}`, &out)
	if len(out.Accounts) != 2 || out.Accounts[0].ID != accountID || out.Accounts[1].Name != "Staging" {
		t.Errorf("accounts = %+v", out)
	}
	if r := f.onlyRequest(t); r.Variables != nil || !strings.Contains(r.Query, "accounts { id name }") {
		t.Errorf("request = %v %s", r.Variables, r.Query)
	}
}

func TestPlugin_GetCurrentUser(t *testing.T) {
	f := newNRFixture(t)
	var u struct {
		ID          int
		Name, Email string
	}
	f.call(t, "newrelic_get_current_user", `{}`, &u)
	if want := f.fake.User(); u.ID != want.ID || u.Name != want.Name || u.Email != want.Email {
		t.Errorf("user = %+v, want %+v", u, want)
	}
	f.onlyRequest(t)
}

func TestPlugin_RecordDeployment(t *testing.T) {
	f := newNRFixture(t)
	var d struct {
		DeploymentID, EntityGUID, Version, Changelog, User, DeploymentType string
		Timestamp                                                          int64
	}
	f.call(t, "newrelic_record_deployment", `{"entity_guid":"`+f.checkout+`","version":"1.2.0","changelog":"fix: \"quotes\"","user":"ci","deployment_type":"ROLLING"}`, &d)
	if d.DeploymentID == "" || d.EntityGUID != f.checkout || d.Version != "1.2.0" || d.Changelog != `fix: "quotes"` ||
		d.DeploymentType != "ROLLING" || d.Timestamp != f.fake.Now() {
		t.Errorf("deployment = %+v", d)
	}
	r := f.onlyRequest(t)
	wantVars := map[string]any{"deployment": map[string]any{"entityGuid": f.checkout, "version": "1.2.0", "changelog": `fix: "quotes"`,
		"user": "ci", "deploymentType": "ROLLING"}}
	if !reflect.DeepEqual(r.Variables, wantVars) || !strings.HasPrefix(r.Query, "mutation ") {
		t.Errorf("request = %v %s", r.Variables, r.Query)
	}
	if evs := f.fake.Deployments(accountID); len(evs) != 5 || evs[4]["version"] != "1.2.0" || evs[4]["entity.guid"] != f.checkout {
		t.Errorf("fake's Deployment events = %v", evs)
	}
	// The new deployment is what list_deployments sees next.
	var list struct{ Deployments []struct{ Version string } }
	f.call(t, "newrelic_list_deployments", `{"account_id":1234567,"app_name":"checkout","limit":1}`, &list)
	if len(list.Deployments) != 1 || list.Deployments[0].Version != "1.2.0" {
		t.Errorf("deployments after recording = %+v", list)
	}
	te := f.fail(t, "newrelic_record_deployment", `{"entity_guid":"MTIzfEFQTXxBUFBMSUNBVElPTnw5OTk","version":"1"}`)
	if te.Code != "NOT_FOUND" {
		t.Errorf("unknown entity = %+v", te)
	}
	te = f.fail(t, "newrelic_record_deployment", `{"entity_guid":"`+f.checkout+`","version":"1","deployment_type":"BIG_BANG"}`)
	if te.Code != "INVALID_ARGUMENTS" || !strings.Contains(te.Message, "deployment_type: must be one of") {
		t.Errorf("bad type = %+v", te)
	}
}

func TestPlugin_DeleteEntityTags(t *testing.T) {
	f := newNRFixture(t)
	var out struct {
		GUID    string
		Deleted []string
		Delayed bool
	}
	f.call(t, "newrelic_delete_entity_tags", `{"guid":"`+f.checkout+`","tag_keys":["team","nope"]}`, &out)
	if out.GUID != f.checkout || !slices.Equal(out.Deleted, []string{"team", "nope"}) || out.Delayed {
		t.Errorf("delete = %+v", out)
	}
	if e, _ := f.fake.Entity(f.checkout); len(e.Tags) != 1 || e.Tags["env"] == nil {
		t.Errorf("tags left = %v", e.Tags)
	}
	r := f.onlyRequest(t)
	if !reflect.DeepEqual(r.Variables, map[string]any{"guid": f.checkout, "tagKeys": []any{"team", "nope"}}) {
		t.Errorf("variables = %v", r.Variables)
	}
	te := f.fail(t, "newrelic_delete_entity_tags", `{"guid":"MTIzfEFQTXxBUFBMSUNBVElPTnw5OTk","tag_keys":["env"]}`)
	if te.Code != "NOT_FOUND" || !strings.Contains(te.Message, "was not found") || canonical(t, string(te.Details)) != `{"type":"NOT_FOUND"}` {
		t.Errorf("unknown entity = %+v %s", te, te.Details)
	}
	if te := f.fail(t, "newrelic_delete_entity_tags", `{"guid":"`+f.checkout+`","tag_keys":[]}`); te.Code != "INVALID_ARGUMENTS" {
		t.Errorf("no keys = %+v", te)
	}
}

// TestPlugin_UpstreamErrors maps NerdGraph's failure shapes to tool errors.
func TestPlugin_UpstreamErrors(t *testing.T) {
	f := newNRFixture(t)
	tests := []struct {
		name    string
		status  int
		header  http.Header
		body    string
		code    string
		message string
	}{
		{"unauthorized in a 200", 200, nil, `{"data":{"actor":{"user":null}},"errors":[{"message":"Unauthorized","path":["actor","user"]}]}`, "UNAUTHORIZED", "NerdGraph: Unauthorized"},
		{"bad api key code", 200, nil, `{"errors":[{"message":"Invalid credentials","extensions":{"error_code":"BAD_API_KEY"}}]}`, "UNAUTHORIZED", "NerdGraph: Invalid credentials"},
		{"forbidden", 403, nil, `{"errors":[{"message":"Forbidden"}]}`, "FORBIDDEN", "NerdGraph: Forbidden"},
		{"timeout class", 200, nil, `{"data":null,"errors":[{"message":"NRDB query timed out","extensions":{"errorClass":"TIMEOUT"}}]}`, "UPSTREAM_TIMEOUT", "NerdGraph: NRDB query timed out"},
		{"server error class", 200, nil, `{"errors":[{"message":"Internal error","extensions":{"errorClass":"SERVER_ERROR"}}]}`, "UPSTREAM_ERROR", "NerdGraph: Internal error"},
		{"rate limited", 429, http.Header{"Retry-After": {"30"}}, `Too Many Requests`, "RATE_LIMITED", "NerdGraph rate limit reached; retry after 30 seconds"},
		{"bad gateway", 502, nil, `<html>bad gateway</html>`, "UPSTREAM_ERROR", "NerdGraph returned HTTP status 502"},
		{"not json", 200, nil, `<html>`, "UPSTREAM_ERROR", "NerdGraph returned a body that is not JSON: unexpected character at offset 0"},
		{"no data", 200, nil, `{"data":null}`, "UPSTREAM_ERROR", "NerdGraph returned no data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.fake.FailNext(tt.status, tt.header, tt.body)
			te := f.fail(t, "newrelic_get_current_user", `{}`)
			if string(te.Code) != tt.code || te.Message != tt.message {
				t.Errorf("error = %s %q, want %s %q", te.Code, te.Message, tt.code, tt.message)
			}
		})
	}
	// A deprecation notice next to complete data is no failure.
	f.fake.FailNext(200, nil, `{"data":{"actor":{"user":{"id":1,"name":"A","email":"a@b"}}},"errors":[{"message":"This field is deprecated! Please use x"}]}`)
	var u struct{ Name string }
	f.call(t, "newrelic_get_current_user", `{}`, &u)
	if u.Name != "A" {
		t.Errorf("user with deprecation notice = %+v", u)
	}
}

func TestPlugin_WrongKey(t *testing.T) {
	f := newNRFixture(t)
	out, err := plugintest.Call(f.plugin, "intruder", "newrelic_list_accounts", `{}`, nil)
	te := plugintest.AsToolError(t, out, err)
	if te.Code != "UNAUTHORIZED" || te.Message != "NerdGraph: Unauthorized" {
		t.Errorf("wrong key = %+v", te)
	}
	out, err = plugintest.Call(f.plugin, "nobody", "newrelic_list_accounts", `{}`, nil)
	if te := plugintest.AsToolError(t, out, err); te.Code != "NOT_CONNECTED" {
		t.Errorf("no connection = %+v", te)
	}
}

// TestPlugin_Region checks which host each region setting reaches. The
// resolver refuses every lookup, so nothing leaves the machine; the names
// it was asked for show where the plugin went.
func TestPlugin_Region(t *testing.T) {
	tests := []struct {
		region   string
		wantHost string
		wantCode string
	}{
		{"", "api.newrelic.com", "UPSTREAM_UNREACHABLE"},
		{"US", "api.newrelic.com", "UPSTREAM_UNREACHABLE"},
		{"EU", "api.eu.newrelic.com", "UPSTREAM_UNREACHABLE"},
		{"eu", "api.eu.newrelic.com", "UPSTREAM_UNREACHABLE"},
		{"APAC", "", "TOOL_ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.region, func(t *testing.T) {
			creds := credential.NewMemory()
			creds.Set(userID, "newrelic", &credential.Credential{Fields: map[string]string{"api_key": apiKey}})
			settings := runtime.MapSettings{"newrelic": {}}
			if tt.region != "" {
				settings["newrelic"]["region"] = tt.region
			}
			resolver := &refusingResolver{}
			p := loadPlugin(t, readNewRelicWasm(t), hostOptions{settings: settings, creds: creds, resolver: resolver})
			out, err := plugintest.Call(p, userID, "newrelic_get_current_user", `{}`, nil)
			te := plugintest.AsToolError(t, out, err)
			if string(te.Code) != tt.wantCode {
				t.Errorf("error = %+v, want code %s", te, tt.wantCode)
			}
			var want []string
			if tt.wantHost != "" {
				want = []string{tt.wantHost}
			}
			if got := slices.Compact(resolver.asked()); !slices.Equal(got, want) {
				t.Errorf("resolved %v, want %v", got, want)
			}
		})
	}
}
