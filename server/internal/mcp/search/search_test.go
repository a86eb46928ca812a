package search

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

var testDocs = []Doc{
	{"github_list_issues", "github", "List issues", "Lists issues of a repository, newest first."},
	{"github_get_issue", "github", "Get an issue", "Returns one issue by number."},
	{"github_create_issue", "github", "Create an issue", "Opens a new issue in a repository."},
	{"github_list_pulls", "github", "List pull requests", "Lists pull requests of a repository."},
	{"github_get_repo", "github", "Get a repository", "Returns one repository by owner and name."},
	{"jira_search", "jira", "Search issues", "Runs a JQL query and returns matching issues."},
	{"jira_get_issue", "jira", "Get an issue", "Returns one Jira issue by key."},
	{"slack_post_message", "slack", "Post a message", "Posts a message to a channel; mentions an issue link when given one."},
}

func slugs(docs []Doc) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.Slug)
	}
	return out
}

func TestIndex_Search(t *testing.T) {
	ix := NewIndex(testDocs)
	tests := []struct {
		name  string
		query Query
		want  []string
		total int
	}{
		{"exact slug first", Query{Text: "github_get_issue"}, []string{
			"github_get_issue", "github_create_issue", "github_list_issues", "jira_get_issue", "github_get_repo",
			"jira_search", "github_list_pulls", "slack_post_message"}, 8},
		{"name tokens outrank descriptions", Query{Text: "issue"}, []string{
			"github_create_issue", "github_get_issue", "github_list_issues", "jira_get_issue", "jira_search",
			"slack_post_message"}, 6},
		{"more matching words rank higher", Query{Text: "get issue"}, []string{
			"github_get_issue", "jira_get_issue", "github_create_issue", "github_list_issues", "jira_search",
			"github_get_repo", "slack_post_message"}, 7},
		{"plural folds", Query{Text: "Pull Requests"}, []string{"github_list_pulls"}, 1},
		{"prefix matches", Query{Text: "repo"}, []string{
			"github_get_repo", "github_create_issue", "github_list_issues", "github_list_pulls"}, 4},
		{"integration filter", Query{Text: "issue", Integration: "jira"}, []string{"jira_get_issue", "jira_search"}, 2},
		{"empty query lists all in slug order", Query{Integration: "github"}, []string{
			"github_create_issue", "github_get_issue", "github_get_repo", "github_list_issues", "github_list_pulls"}, 5},
		{"stop words only still search", Query{Text: "the"}, nil, 0},
		{"stop words are ignored", Query{Text: "post a message to"}, []string{"slack_post_message"}, 1},
		{"no match", Query{Text: "kubernetes"}, nil, 0},
		{"limit", Query{Text: "issue", Limit: 2}, []string{"github_create_issue", "github_get_issue"}, 6},
		{"unknown integration", Query{Text: "issue", Integration: "nope"}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := ix.Search(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if got := slugs(page.Docs); !slices.Equal(got, tt.want) {
				t.Errorf("Search(%+v) = %v\nwant %v", tt.query, got, tt.want)
			}
			if page.Total != tt.total {
				t.Errorf("Total = %d, want %d", page.Total, tt.total)
			}
		})
	}
}

func TestIndex_SearchPages(t *testing.T) {
	ix := NewIndex(testDocs)
	all, err := ix.Search(Query{Text: "issue", Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var paged []string
	q := Query{Text: "issue", Limit: 4}
	for i := 0; ; i++ {
		page, err := ix.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, slugs(page.Docs)...)
		if page.NextCursor == "" {
			break
		}
		if i > 3 {
			t.Fatal("pagination does not end")
		}
		q.Cursor = page.NextCursor
	}
	if want := slugs(all.Docs); !slices.Equal(paged, want) {
		t.Errorf("pages joined = %v, want %v", paged, want)
	}

	first, _ := ix.Search(Query{Text: "issue", Limit: 2})
	tests := []struct {
		name  string
		query Query
	}{
		{"garbage", Query{Text: "issue", Cursor: "%%%"}},
		{"other query", Query{Text: "repo", Cursor: first.NextCursor}},
		{"other integration", Query{Text: "issue", Integration: "jira", Cursor: first.NextCursor}},
		{"forged offset", Query{Text: "issue", Cursor: encodeCursor(-1, queryFingerprint("issue", ""))}},
		{"too long", Query{Text: "issue", Cursor: string(make([]byte, 200))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ix.Search(tt.query); !errors.Is(err, ErrBadCursor) {
				t.Errorf("err = %v, want ErrBadCursor", err)
			}
		})
	}
	// A cursor past the end is a valid, empty page.
	page, err := ix.Search(Query{Text: "issue", Cursor: encodeCursor(100, queryFingerprint("issue", ""))})
	if err != nil || len(page.Docs) != 0 || page.NextCursor != "" {
		t.Errorf("past the end: %+v, %v", page, err)
	}
}

func TestIndex_SearchConcurrent(t *testing.T) {
	ix := NewIndex(testDocs)
	want, _ := ix.Search(Query{Text: "get issue"})
	done := make(chan error)
	for range 8 {
		go func() {
			for range 200 {
				page, err := ix.Search(Query{Text: "get issue"})
				if err == nil && !slices.Equal(slugs(page.Docs), slugs(want.Docs)) {
					err = fmt.Errorf("got %v", slugs(page.Docs))
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func TestIndex_Closest(t *testing.T) {
	ix := NewIndex(testDocs)
	tests := []struct {
		name string
		in   string
		n    int
		want []string
	}{
		{"typo", "github_get_isue", 3, []string{"github_get_issue", "github_get_repo", "jira_get_issue"}},
		{"shared words", "jira_issue_get", 2, []string{"jira_get_issue", "github_get_issue"}},
		{"missing prefix", "post_message", 3, []string{"slack_post_message"}},
		{"nothing close", "zzzzzzzzzzzzzzzz", 3, nil},
		{"empty", "", 3, nil},
		{"capped", "issue", 100, []string{"jira_get_issue", "github_get_issue", "github_list_issues", "github_create_issue"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ix.Closest(tt.in, tt.n); !slices.Equal(got, tt.want) {
				t.Errorf("Closest(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b  string
		limit int
		want  int
	}{
		{"kitten", "sitting", 10, 3},
		{"", "abc", 10, 3},
		{"same", "same", 10, 0},
		{"abcdef", "uvwxyz", 3, 3},
		{"a", "abcdefgh", 3, 3},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b, tt.limit); got != tt.want {
			t.Errorf("editDistance(%q, %q, %d) = %d, want %d", tt.a, tt.b, tt.limit, got, tt.want)
		}
	}
}

func TestIndex_ClosestCapped(t *testing.T) {
	var docs []Doc
	for i := range 12 {
		docs = append(docs, Doc{Slug: fmt.Sprintf("svc_get_item%02d", i), Integration: "svc"})
	}
	got := NewIndex(docs).Closest("get", 100)
	if want := []string{"svc_get_item00", "svc_get_item01", "svc_get_item02", "svc_get_item03", "svc_get_item04"}; !slices.Equal(got, want) {
		t.Errorf("Closest = %v, want the first %d in slug order", got, MaxSuggestions)
	}
}
