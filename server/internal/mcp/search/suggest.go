package search

import (
	"slices"
	"strings"
)

// MaxSuggestions caps Closest.
const MaxSuggestions = 5

// Closest returns up to n slugs that look like name, best first: slugs that
// share more words with it (a shared integration name counts half), then
// slugs fewer edits away, then slug order. A slug qualifies when it shares a
// word other than its integration's name or is within a third of the name's
// length in edits. n is capped at MaxSuggestions.
func (ix *Index) Closest(name string, n int) []string {
	n = min(n, MaxSuggestions)
	name = strings.ToLower(strings.TrimSpace(name))
	if n <= 0 || name == "" || len(name) > MaxQueryBytes {
		return nil
	}
	words := queryTokens(name)
	type candidate struct {
		slug    string
		overlap int
		dist    int
	}
	var found []candidate
	budget := max(2, len(name)/3)
	for _, d := range ix.docs {
		own := tokens(d.Integration)
		shared, sharedOwn := 0, 0
		for _, t := range tokens(d.Slug) {
			switch {
			case !slices.Contains(words, t):
			case slices.Contains(own, t):
				sharedOwn++
			default:
				shared++
			}
		}
		dist := editDistance(name, d.Slug, len(name)+len(d.Slug))
		if shared == 0 && dist > budget {
			continue
		}
		found = append(found, candidate{d.Slug, 2*shared + sharedOwn, dist})
	}
	slices.SortFunc(found, func(a, b candidate) int {
		if a.overlap != b.overlap {
			return b.overlap - a.overlap
		}
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.slug, b.slug)
	})
	var out []string
	for _, c := range found[:min(n, len(found))] {
		out = append(out, c.slug)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, or limit when
// it is at least limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}
