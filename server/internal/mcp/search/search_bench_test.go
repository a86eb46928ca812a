package search

import (
	"fmt"
	"testing"
)

// syntheticDocs builds n tools over 50 integrations with varied words.
func syntheticDocs(n int) []Doc {
	verbs := []string{"list", "get", "create", "update", "delete", "search", "archive", "sync"}
	nouns := []string{"issue", "repo", "user", "message", "channel", "ticket", "invoice", "order", "file", "event", "alert", "deploy"}
	docs := make([]Doc, n)
	for i := range docs {
		integ := fmt.Sprintf("svc%02d", i%50)
		v, o := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		docs[i] = Doc{
			Slug:        fmt.Sprintf("%s_%s_%s_%d", integ, v, o, i),
			Integration: integ,
			Title:       fmt.Sprintf("%s %s", v, o),
			Description: fmt.Sprintf("Does %s on one %s of the %s service, variant %d, with paging and filters.", v, o, integ, i),
		}
	}
	return docs
}

// BenchmarkIndex_Search measures search_tools ranking over 10,000 tools:
// a two-word query that matches a tenth of the catalog by name and much of
// it by description, and a single common word that matches everything.
func BenchmarkIndex_Search(b *testing.B) {
	ix := NewIndex(syntheticDocs(10000))
	for _, q := range []Query{
		{Text: "create invoice"},
		{Text: "service"},
		{Text: "svc07_get_issue_8"},
	} {
		b.Run(q.Text, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ix.Search(q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
