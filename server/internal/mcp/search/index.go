package search

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
)

// Limits of a query.
const (
	DefaultLimit   = 10
	MaxLimit       = 50
	MaxQueryTokens = 16
	MaxQueryBytes  = 512
)

// ErrBadCursor is returned for a cursor that this index did not issue for
// the same query.
var ErrBadCursor = errors.New("cursor is not valid for this query")

// Doc is one searchable tool.
type Doc struct {
	Slug        string
	Integration string
	Title       string
	Description string
}

// Query is one search.
type Query struct {
	// Text is matched against slugs, titles and descriptions; empty lists
	// every tool in slug order.
	Text string
	// Integration, when set, keeps only that integration's tools.
	Integration string
	// Limit is the page size: DefaultLimit when zero, at most MaxLimit.
	Limit int
	// Cursor continues a previous page of the same query.
	Cursor string
}

// Page is one page of results.
type Page struct {
	Docs       []Doc
	Total      int    // matches over all pages
	NextCursor string // "" on the last page
}

// Index is an immutable search index over tools. It is safe for concurrent use.
type Index struct {
	docs    []Doc // sorted by slug
	bySlug  map[string]int32
	name    postings
	desc    postings
	scratch sync.Pool // *scores
}

// postings is an inverted index from token to ascending doc ids, with the
// sorted vocabulary for prefix lookups.
type postings struct {
	ids   map[string][]int32
	vocab []string
}

func (p *postings) add(token string, id int32) {
	list := p.ids[token]
	if n := len(list); n > 0 && list[n-1] == id {
		return
	}
	p.ids[token] = append(list, id)
}

func (p *postings) seal() {
	p.vocab = make([]string, 0, len(p.ids))
	for t := range p.ids {
		p.vocab = append(p.vocab, t)
	}
	slices.Sort(p.vocab)
}

// prefixed calls fn for every token that starts with prefix but is not equal to it.
func (p *postings) prefixed(prefix string, fn func(ids []int32)) {
	i, _ := slices.BinarySearch(p.vocab, prefix)
	for ; i < len(p.vocab) && strings.HasPrefix(p.vocab[i], prefix); i++ {
		if p.vocab[i] != prefix {
			fn(p.ids[p.vocab[i]])
		}
	}
}

// NewIndex builds an index. Docs may come in any order; duplicate slugs keep
// the first.
func NewIndex(docs []Doc) *Index {
	sorted := slices.Clone(docs)
	slices.SortStableFunc(sorted, func(a, b Doc) int { return strings.Compare(a.Slug, b.Slug) })
	sorted = slices.CompactFunc(sorted, func(a, b Doc) bool { return a.Slug == b.Slug })
	ix := &Index{
		docs:   sorted,
		bySlug: make(map[string]int32, len(sorted)),
		name:   postings{ids: map[string][]int32{}},
		desc:   postings{ids: map[string][]int32{}},
	}
	for i, d := range sorted {
		id := int32(i)
		ix.bySlug[d.Slug] = id
		for _, t := range tokens(d.Slug + " " + d.Title) {
			ix.name.add(t, id)
		}
		for _, t := range tokens(d.Description) {
			ix.desc.add(t, id)
		}
	}
	ix.name.seal()
	ix.desc.seal()
	return ix
}

// Len returns the number of indexed tools.
func (ix *Index) Len() int { return len(ix.docs) }

// Scores: every query token adds tokenExact for a token it equals and
// tokenPrefix for one it only starts. The exact slug outranks everything,
// name matches outrank description matches.
const (
	tokenExact  = 2
	tokenPrefix = 1
	fieldSpan   = tokenExact*MaxQueryTokens + 1 // a field's score is below this
	exactSlug   = fieldSpan * fieldSpan
)

// scores is per-query scratch space, reused through a pool.
type scores struct {
	name, desc []uint8
	seen       []uint16 // query token that last scored a doc, plus one
	touched    []int32  // docs with a non-zero score, in credit order
	ordered    []int32  // reused buffer for hits in id order
}

// Search returns one page of ranked results.
func (ix *Index) Search(q Query) (Page, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	text := q.Text
	if len(text) > MaxQueryBytes {
		text = text[:MaxQueryBytes]
	}
	fingerprint := queryFingerprint(text, q.Integration)
	offset := 0
	if q.Cursor != "" {
		var err error
		if offset, err = decodeCursor(q.Cursor, fingerprint); err != nil {
			return Page{}, err
		}
	}
	ids, total := ix.rank(text, q.Integration, offset+limit)
	page := Page{Total: total}
	if offset < len(ids) {
		page.Docs = make([]Doc, 0, len(ids)-offset)
		for _, id := range ids[offset:] {
			page.Docs = append(page.Docs, ix.docs[id])
		}
	}
	if offset+limit < total {
		page.NextCursor = encodeCursor(offset+limit, fingerprint)
	}
	return page, nil
}

// rank returns the ids of the best `need` matches, best first, and the
// number of matches in all.
func (ix *Index) rank(text, integration string, need int) ([]int32, int) {
	keep := func(id int32) bool { return integration == "" || ix.docs[id].Integration == integration }
	query := queryTokens(text)
	if len(query) == 0 {
		var ids []int32
		total := 0
		for i := range ix.docs {
			if keep(int32(i)) {
				if total < need {
					ids = append(ids, int32(i))
				}
				total++
			}
		}
		return ids, total
	}
	sc := ix.acquire()
	defer ix.release(sc)
	for qi, qt := range query {
		ix.score(sc, &ix.name, sc.name, qt, uint16(2*qi+1))
		ix.score(sc, &ix.desc, sc.desc, qt, uint16(2*qi+2))
	}
	exact := int32(-1)
	if id, ok := ix.bySlug[strings.ToLower(strings.TrimSpace(text))]; ok {
		exact = id
		if sc.name[id] == 0 && sc.desc[id] == 0 {
			sc.touched = append(sc.touched, id)
		}
	}
	// Visit the hits in id (slug) order: sort them when few, scan every doc
	// when many.
	hits := sc.touched
	if len(hits) > len(ix.docs)/16 {
		hits = sc.ordered[:0]
		for i := range ix.docs {
			if sc.name[i] != 0 || sc.desc[i] != 0 || int32(i) == exact {
				hits = append(hits, int32(i))
			}
		}
		sc.ordered = hits
	} else {
		slices.Sort(hits)
	}
	key := func(id int32) int {
		k := int(sc.name[id])*fieldSpan + int(sc.desc[id])
		if id == exact {
			k += exactSlug
		}
		return k
	}
	// Count the hits per score, then find the lowest score the first
	// `need` hits reach and how many of that score they take.
	counts := map[int]int{}
	total := 0
	for _, id := range hits {
		if keep(id) {
			counts[key(id)]++
			total++
		}
	}
	keys := make([]int, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	slices.Reverse(keys)
	quota := map[int]int{}
	left := need
	for _, k := range keys {
		if left <= 0 {
			break
		}
		quota[k] = min(counts[k], left)
		left -= quota[k]
	}
	buckets := make(map[int][]int32, len(quota))
	for _, id := range hits {
		if !keep(id) {
			continue
		}
		k := key(id)
		if q, ok := quota[k]; ok && len(buckets[k]) < q {
			buckets[k] = append(buckets[k], id)
		}
	}
	out := make([]int32, 0, min(need, total))
	for _, k := range keys {
		out = append(out, buckets[k]...)
	}
	return out, total
}

// score adds the points of query token qt in one field. stamp identifies the
// (token, field) pair so that a doc scores at most once for it.
func (ix *Index) score(sc *scores, p *postings, field []uint8, qt string, stamp uint16) {
	credit := func(ids []int32, points uint8) {
		for _, id := range ids {
			if sc.seen[id] == stamp {
				continue
			}
			sc.seen[id] = stamp
			if sc.name[id] == 0 && sc.desc[id] == 0 {
				sc.touched = append(sc.touched, id)
			}
			field[id] += points
		}
	}
	credit(p.ids[qt], tokenExact)
	if len(qt) >= 2 {
		p.prefixed(qt, func(ids []int32) { credit(ids, tokenPrefix) })
	}
}

func (ix *Index) acquire() *scores {
	if sc, ok := ix.scratch.Get().(*scores); ok {
		return sc
	}
	n := len(ix.docs)
	return &scores{name: make([]uint8, n), desc: make([]uint8, n), seen: make([]uint16, n)}
}

// release zeroes what the query wrote (every credit touches its doc, so
// touched covers every non-zero entry) and returns the scratch to the pool.
func (ix *Index) release(sc *scores) {
	for _, id := range sc.touched {
		sc.name[id], sc.desc[id], sc.seen[id] = 0, 0, 0
	}
	sc.touched = sc.touched[:0]
	ix.scratch.Put(sc)
}

// stopWords are left out of queries unless nothing else remains.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "by": true, "for": true, "from": true, "in": true,
	"of": true, "on": true, "or": true, "the": true, "to": true, "with": true, "is": true,
}

// tokens splits text into lower-case alphanumeric words, folding a plural "s".
func tokens(text string) []string {
	fields := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r < 0x80
	})
	out := fields[:0]
	for _, f := range fields {
		out = append(out, fold(f))
	}
	return out
}

// fold drops a plural "s" so that "issue" and "issues" meet.
func fold(t string) string {
	if len(t) > 3 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") {
		return t[:len(t)-1]
	}
	return t
}

// queryTokens are the distinct tokens of a query without stop words (unless
// that leaves none), at most MaxQueryTokens.
func queryTokens(text string) []string {
	all := tokens(text)
	var kept []string
	for _, t := range all {
		if !stopWords[t] && !slices.Contains(kept, t) {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		for _, t := range all {
			if !slices.Contains(kept, t) {
				kept = append(kept, t)
			}
		}
	}
	if len(kept) > MaxQueryTokens {
		kept = kept[:MaxQueryTokens]
	}
	return kept
}

// maxOffset bounds the offset a cursor may carry.
const maxOffset = 1 << 20

// cursor is what an opaque cursor carries.
type cursor struct {
	Offset      int    `json:"o"`
	Fingerprint uint32 `json:"q"`
}

func queryFingerprint(text, integration string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(strings.Join(queryTokens(text), " ")))
	h.Write([]byte{0})
	h.Write([]byte(strings.ToLower(strings.TrimSpace(text))))
	h.Write([]byte{0})
	h.Write([]byte(integration))
	return h.Sum32()
}

func encodeCursor(offset int, fingerprint uint32) string {
	b, _ := json.Marshal(cursor{Offset: offset, Fingerprint: fingerprint})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, fingerprint uint32) (int, error) {
	if len(s) > 128 {
		return 0, ErrBadCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, ErrBadCursor
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.Offset <= 0 || c.Offset > maxOffset || c.Fingerprint != fingerprint {
		return 0, ErrBadCursor
	}
	return c.Offset, nil
}
