package newrelictest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// post sends a raw request to the fake and returns status and body.
func post(t *testing.T, f *Fake, contentType, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.URL+"/graphql", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("API-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func gql(query string, vars map[string]any) string {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(map[string]any{"query": query, "variables": vars})
	return b.String()
}

func TestFake_RefusesWhatNerdGraphRefuses(t *testing.T) {
	f := NewFake(t, apiKey)
	f.AddAccount(&Account{ID: 1, Name: "A"})
	tests := []struct {
		name        string
		contentType string
		key         string
		body        string
		wantStatus  int
		wantInBody  string
	}{
		{"no key", "application/json", "", gql("{ actor { user { name } } }", nil), 401, `"error_code":"BAD_API_KEY"`},
		{"wrong key", "application/json", "NRAK-OTHER", gql("{ actor { user { name } } }", nil), 401, "Unauthorized"},
		{"form body", "application/x-www-form-urlencoded", apiKey, gql("{ actor { user { name } } }", nil), 415, "Content-Type must be application/json"},
		{"not json", "application/json", apiKey, `{"query":`, 400, "Could not parse the request body"},
		{"syntax", "application/json", apiKey, gql("{ actor { user { name } }", nil), 200, `Syntax Error: Unexpected <EOF>.`},
		{"unknown field", "application/json", apiKey, gql("{ actor { user { nickname } } }", nil), 200, `Cannot query field \"nickname\" on type \"User\".`},
		{"unknown argument", "application/json", apiKey, gql("{ actor { account(accountId: 1) { name } } }", nil), 200, `Unknown argument \"accountId\" on field \"account\" of type \"Actor\".`},
		{"missing argument", "application/json", apiKey, gql("{ actor { account { name } } }", nil), 200, `argument \"id\" of type \"Int!\" is required`},
		{"leaf without selection", "application/json", apiKey, gql("{ actor { user } }", nil), 200, `must have a selection of subfields`},
		{"undeclared variable", "application/json", apiKey, gql("query { actor { account(id: $id) { name } } }", map[string]any{"id": 1}), 200, `Variable \"$id\" is not defined.`},
		{"unused variable", "application/json", apiKey, gql("query($id: Int!, $x: String) { actor { account(id: $id) { name } } }", map[string]any{"id": 1}), 200, `Variable \"$x\" is never used.`},
		{"variable type", "application/json", apiKey, gql("query($id: String!) { actor { account(id: $id) { name } } }", map[string]any{"id": "1"}), 200, `of type \"String!\" used in position expecting type \"Int!\"`},
		{"variable value", "application/json", apiKey, gql("query($id: Int!) { actor { account(id: $id) { name } } }", map[string]any{"id": "one"}), 200, `Int cannot represent non-integer`},
		{"missing variable", "application/json", apiKey, gql("query($id: Int!) { actor { account(id: $id) { name } } }", nil), 200, `of required type \"Int!\" was not provided`},
		{"enum value", "application/json", apiKey, gql("query($f: AiIssuesFilterIssues) { actor { account(id: 1) { aiIssues { issues(filter: $f) { nextCursor } } } } }", map[string]any{"f": map[string]any{"states": []any{"OPEN"}}}), 200, `does not exist in \"AiIssuesIssueState\" enum`},
		{"input field", "application/json", apiKey, gql("query($b: EntitySearchQueryBuilder) { actor { entitySearch(queryBuilder: $b) { count } } }", map[string]any{"b": map[string]any{"kind": "DASHBOARD"}}), 200, `Field \"kind\" is not defined`},
		{"fragment on wrong type", "application/json", apiKey, gql("{ actor { user { ... on DashboardEntityOutline { guid } } } }", nil), 200, `can never be of type`},
		{"deep nesting", "application/json", apiKey, gql(strings.Repeat("{ actor ", 50)+strings.Repeat("}", 50), nil), 200, "nested too deeply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, f, tt.contentType, tt.key, tt.body)
			if status != tt.wantStatus || !strings.Contains(body, tt.wantInBody) {
				t.Errorf("status %d body %s\nwant %d with %s", status, body, tt.wantStatus, tt.wantInBody)
			}
			if status == 200 && strings.Contains(body, `"data"`) {
				t.Errorf("a refused document still got data: %s", body)
			}
		})
	}
}

func TestFake_AnswersWithSelectedFieldsOnly(t *testing.T) {
	f := NewFake(t, apiKey)
	f.AddAccount(&Account{ID: 1, Name: "A"})
	status, body := post(t, f, "application/json", apiKey,
		gql(`query Q($id: Int!) { actor { me: user { email } account(id: $id) { name } nope: account(id: 2) { id } } }`, map[string]any{"id": 1}))
	want := `{"data":{"actor":{"me":{"email":"ada@example.com"},"account":{"name":"A"},"nope":null}},"errors":[{"message":"Access denied: account 2 is not accessible with this API key","locations":[{"line":1,"column":75}],"path":["actor","nope"],"extensions":{"errorClass":"FORBIDDEN"}}]}`
	if status != 200 || strings.TrimSpace(body) != want {
		t.Errorf("status %d body\n%s\nwant\n%s", status, body, want)
	}
}
