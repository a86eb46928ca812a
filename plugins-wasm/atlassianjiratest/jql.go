package atlassianjiratest

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The fake understands a useful part of JQL: clauses on project, key,
// status, statusCategory, assignee, reporter, labels, issuetype (type),
// priority, summary and text, with the operators =, !=, ~, !~, in, not in,
// is and is not, the values EMPTY (NULL) and currentUser(), combined with
// AND, OR, NOT and parentheses, then ORDER BY key, created, updated,
// priority or summary. Anything else is Jira's 400 "Error in the JQL
// Query".

// jqlQuery is a parsed query.
type jqlQuery struct {
	where *jqlNode // nil when the query has no restriction
	order []jqlOrder
}

type jqlOrder struct {
	field string
	desc  bool
}

// jqlNode is a boolean expression: an operator over children, or a clause.
type jqlNode struct {
	op       string // "and", "or", "not", or "" for a clause
	children []*jqlNode
	field    string
	cmp      string // "=", "!=", "~", "!~", "in", "not in", "is", "is not"
	values   []string
}

type jqlToken struct {
	text   string
	quoted bool
}

func jqlErrorf(format string, args ...any) error {
	return fmt.Errorf("Error in the JQL Query: "+format, args...)
}

func tokenizeJQL(s string) ([]jqlToken, error) {
	var out []jqlToken
	rs := []rune(s)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '"' || r == '\'':
			j := i + 1
			var b strings.Builder
			for ; j < len(rs) && rs[j] != r; j++ {
				if rs[j] == '\\' && j+1 < len(rs) {
					j++
				}
				b.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, jqlErrorf("The quoted string starting at character %d is not terminated.", i)
			}
			out = append(out, jqlToken{text: b.String(), quoted: true})
			i = j + 1
		case r == '(' || r == ')' || r == ',' || r == '=' || r == '~':
			out = append(out, jqlToken{text: string(r)})
			i++
		case r == '!' && i+1 < len(rs) && (rs[i+1] == '=' || rs[i+1] == '~'):
			out = append(out, jqlToken{text: string(rs[i : i+2])})
			i += 2
		default:
			j := i
			for j < len(rs) && !unicode.IsSpace(rs[j]) && !strings.ContainsRune(`()=,~!"'`, rs[j]) {
				j++
			}
			if j == i {
				return nil, jqlErrorf("The character '%c' at position %d is not expected.", r, i)
			}
			out = append(out, jqlToken{text: string(rs[i:j])})
			i = j
		}
	}
	return out, nil
}

type jqlParser struct {
	toks []jqlToken
	pos  int
}

func (p *jqlParser) peekWord(words ...string) bool {
	if p.pos >= len(p.toks) || p.toks[p.pos].quoted {
		return false
	}
	for k, w := range words {
		if p.pos+k >= len(p.toks) || !strings.EqualFold(p.toks[p.pos+k].text, w) {
			return false
		}
	}
	return true
}

func (p *jqlParser) next() (jqlToken, bool) {
	if p.pos >= len(p.toks) {
		return jqlToken{}, false
	}
	t := p.toks[p.pos]
	p.pos++
	return t, true
}

func parseJQL(s string) (*jqlQuery, error) {
	toks, err := tokenizeJQL(s)
	if err != nil {
		return nil, err
	}
	p := &jqlParser{toks: toks}
	q := &jqlQuery{}
	if !p.peekWord("order", "by") && len(toks) > 0 {
		if q.where, err = p.or(0); err != nil {
			return nil, err
		}
	}
	if p.peekWord("order", "by") {
		p.pos += 2
		for {
			t, ok := p.next()
			if !ok {
				return nil, jqlErrorf("Expecting a field name after 'order by'.")
			}
			field := strings.ToLower(t.text)
			if !slices.Contains([]string{"key", "created", "updated", "priority", "summary"}, field) {
				return nil, jqlErrorf("Field '%s' does not exist or you do not have permission to view it.", t.text)
			}
			o := jqlOrder{field: field}
			if p.peekWord("desc") {
				o.desc = true
				p.pos++
			} else if p.peekWord("asc") {
				p.pos++
			}
			q.order = append(q.order, o)
			if p.pos < len(p.toks) && p.toks[p.pos].text == "," {
				p.pos++
				continue
			}
			break
		}
	}
	if p.pos < len(p.toks) {
		return nil, jqlErrorf("Expecting either 'OR' or 'AND' but got '%s'.", p.toks[p.pos].text)
	}
	return q, nil
}

const maxJQLDepth = 32

func (p *jqlParser) or(depth int) (*jqlNode, error) {
	left, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for p.peekWord("or") {
		p.pos++
		right, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		left = &jqlNode{op: "or", children: []*jqlNode{left, right}}
	}
	return left, nil
}

func (p *jqlParser) and(depth int) (*jqlNode, error) {
	left, err := p.factor(depth)
	if err != nil {
		return nil, err
	}
	for p.peekWord("and") {
		p.pos++
		right, err := p.factor(depth)
		if err != nil {
			return nil, err
		}
		left = &jqlNode{op: "and", children: []*jqlNode{left, right}}
	}
	return left, nil
}

func (p *jqlParser) factor(depth int) (*jqlNode, error) {
	if depth > maxJQLDepth {
		return nil, jqlErrorf("The query is nested too deeply.")
	}
	if p.peekWord("not") {
		p.pos++
		inner, err := p.factor(depth + 1)
		if err != nil {
			return nil, err
		}
		return &jqlNode{op: "not", children: []*jqlNode{inner}}, nil
	}
	if p.pos < len(p.toks) && p.toks[p.pos].text == "(" && !p.toks[p.pos].quoted {
		p.pos++
		inner, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if t, ok := p.next(); !ok || t.text != ")" {
			return nil, jqlErrorf("Expecting ')' before the end of the query.")
		}
		return inner, nil
	}
	return p.clause()
}

var jqlFields = map[string]string{
	"project": "project", "key": "key", "issuekey": "key", "status": "status", "statuscategory": "statuscategory",
	"assignee": "assignee", "reporter": "reporter", "labels": "labels", "issuetype": "issuetype", "type": "issuetype",
	"priority": "priority", "summary": "summary", "text": "text",
}

func (p *jqlParser) clause() (*jqlNode, error) {
	t, ok := p.next()
	if !ok {
		return nil, jqlErrorf("Expecting a field name at the end of the query.")
	}
	field, known := jqlFields[strings.ToLower(t.text)]
	if !known {
		return nil, jqlErrorf("Field '%s' does not exist or you do not have permission to view it.", t.text)
	}
	n := &jqlNode{field: field}
	switch {
	case p.peekWord("not", "in"):
		n.cmp, p.pos = "not in", p.pos+2
	case p.peekWord("in"):
		n.cmp, p.pos = "in", p.pos+1
	case p.peekWord("is", "not"):
		n.cmp, p.pos = "is not", p.pos+2
	case p.peekWord("is"):
		n.cmp, p.pos = "is", p.pos+1
	default:
		op, ok := p.next()
		if !ok || op.quoted || !slices.Contains([]string{"=", "!=", "~", "!~"}, op.text) {
			return nil, jqlErrorf("Expecting an operator after the field '%s'.", t.text)
		}
		n.cmp = op.text
	}
	if (n.cmp == "~" || n.cmp == "!~") != (field == "summary" || field == "text") {
		return nil, jqlErrorf("The operator '%s' is not supported by the '%s' field.", n.cmp, t.text)
	}
	if n.cmp == "in" || n.cmp == "not in" {
		if open, ok := p.next(); !ok || open.text != "(" {
			return nil, jqlErrorf("Expecting '(' after '%s'.", n.cmp)
		}
		for {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.values = append(n.values, v)
			sep, ok := p.next()
			if !ok {
				return nil, jqlErrorf("Expecting ')' before the end of the query.")
			}
			if sep.text == ")" {
				break
			}
			if sep.text != "," {
				return nil, jqlErrorf("Expecting ',' or ')' but got '%s'.", sep.text)
			}
		}
		return n, nil
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if (n.cmp == "is" || n.cmp == "is not") && v != "\x00empty" {
		return nil, jqlErrorf("The operator '%s' can only be used with EMPTY or NULL.", n.cmp)
	}
	n.values = []string{v}
	return n, nil
}

// value reads one operand. EMPTY and NULL become "\x00empty" and
// currentUser() "\x00me", so they cannot collide with quoted text.
func (p *jqlParser) value() (string, error) {
	t, ok := p.next()
	if !ok {
		return "", jqlErrorf("Expecting a value at the end of the query.")
	}
	if t.quoted {
		return t.text, nil
	}
	switch strings.ToLower(t.text) {
	case "empty", "null":
		return "\x00empty", nil
	case "currentuser":
		if a, ok := p.next(); !ok || a.text != "(" {
			return "", jqlErrorf("Expecting '(' after currentUser.")
		}
		if b, ok := p.next(); !ok || b.text != ")" {
			return "", jqlErrorf("Expecting ')' after currentUser(.")
		}
		return "\x00me", nil
	case "(", ")", ",", "=", "!=", "~", "!~":
		return "", jqlErrorf("Expecting a value but got '%s'.", t.text)
	}
	return t.text, nil
}

// matches evaluates the expression on one issue.
func (f *Fake) matches(n *jqlNode, is *issueRecord) bool {
	switch n.op {
	case "and":
		return f.matches(n.children[0], is) && f.matches(n.children[1], is)
	case "or":
		return f.matches(n.children[0], is) || f.matches(n.children[1], is)
	case "not":
		return !f.matches(n.children[0], is)
	}
	var have []string // the issue's values of the field
	switch n.field {
	case "project":
		have = []string{is.project.Key, is.project.id, is.project.Name}
	case "key":
		have = []string{is.key, strconv.Itoa(is.id)}
	case "status":
		have = []string{is.status}
	case "statuscategory":
		have = []string{statuses[is.status].categoryName, statuses[is.status].category}
	case "assignee":
		have = userValues(f, is.assignee)
	case "reporter":
		have = userValues(f, is.reporter)
	case "labels":
		have = is.labels
	case "issuetype":
		have = []string{is.typ.name}
	case "priority":
		have = []string{is.priority}
	case "summary", "text":
		text := is.summary
		if n.field == "text" {
			text += " " + adfText(is.description)
			for _, c := range is.comments {
				text += " " + adfText(c.body)
			}
		}
		found := strings.Contains(strings.ToLower(text), strings.ToLower(strings.Trim(n.values[0], "*")))
		return found == (n.cmp == "~")
	}
	empty := len(have) == 0
	switch n.cmp {
	case "is":
		return empty
	case "is not":
		return !empty
	}
	hit := false
	for _, v := range n.values {
		for _, h := range have {
			if v == "\x00me" && h == f.me || strings.EqualFold(v, h) {
				hit = true
			}
		}
		if v == "\x00empty" && empty {
			hit = true
		}
	}
	if n.cmp == "!=" || n.cmp == "not in" {
		return !hit
	}
	return hit
}

// userValues are the values a user field matches: account id, display
// name and email; none when unassigned.
func userValues(f *Fake, accountID string) []string {
	u := f.user(accountID)
	if u == nil {
		return nil
	}
	return []string{u.AccountID, u.DisplayName, u.Email}
}

// search returns the issues matching q in its order (by id by default).
func (f *Fake) search(q *jqlQuery) []*issueRecord {
	var out []*issueRecord
	for _, is := range f.issues {
		if q.where == nil || f.matches(q.where, is) {
			out = append(out, is)
		}
	}
	slices.SortStableFunc(out, func(a, b *issueRecord) int {
		for _, o := range q.order {
			var c int
			switch o.field {
			case "key":
				c = cmp.Or(cmp.Compare(a.project.Key, b.project.Key), cmp.Compare(keyNumber(a.key), keyNumber(b.key)))
			case "created":
				c = a.created.Compare(b.created)
			case "updated":
				c = a.updated.Compare(b.updated)
			case "priority":
				c = cmp.Compare(slices.Index(priorities, a.priority), slices.Index(priorities, b.priority))
			case "summary":
				c = cmp.Compare(a.summary, b.summary)
			}
			if o.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(a.id, b.id)
	})
	return out
}

func keyNumber(key string) int {
	_, num, _ := strings.Cut(key, "-")
	n, _ := strconv.Atoi(num)
	return n
}
