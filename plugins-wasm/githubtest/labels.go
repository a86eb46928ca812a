package githubtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Label seeds a repository label.
type Label struct {
	Name        string
	Color       string // "ededed" when empty
	Description string
	Default     bool
}

type labelRecord struct {
	Label
	id int64
}

// AddLabel defines a label in a repository.
func (f *Fake) AddLabel(owner, repo string, l Label) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.defineLabel(f.mustRepo(owner, repo), l)
}

func (f *Fake) defineLabel(r *repoRecord, l Label) *labelRecord {
	if l.Color == "" {
		l.Color = "ededed"
	}
	rec := &labelRecord{Label: l, id: f.id()}
	r.labels = append(r.labels, rec)
	return rec
}

// label finds a label by name, ignoring case as GitHub does.
func (r *repoRecord) label(name string) *labelRecord {
	for _, l := range r.labels {
		if strings.EqualFold(l.Name, name) {
			return l
		}
	}
	return nil
}

func (f *Fake) labelJSON(r *repoRecord, l *labelRecord) map[string]any {
	return map[string]any{
		"id": l.id, "node_id": fmt.Sprintf("LA_%d", l.id),
		"url":  f.URL + "/repos/" + r.Owner + "/" + r.Name + "/labels/" + l.Name,
		"name": l.Name, "color": l.Color, "default": l.Default, "description": nullable(l.Description),
	}
}

func (f *Fake) listLabels(x *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	out := []map[string]any{}
	for _, l := range paginate(x, f.URL, r.labels) {
		out = append(out, f.labelJSON(r, l))
	}
	return http.StatusOK, out, nil
}

// addIssueLabels serves POST /repos/{owner}/{repo}/issues/{n}/labels. The
// body is {"labels":[...]} or, as GitHub also accepts, a bare array. Labels
// the repository lacks are created, as GitHub does.
func (f *Fake) addIssueLabels(x *exchange, parts []string) (int, any, *apiError) {
	r, it, e := f.item(parts, false)
	if e != nil {
		return 0, nil, e
	}
	if e := writable(r); e != nil {
		return 0, nil, e
	}
	var names []string
	if strings.HasPrefix(strings.TrimSpace(string(x.body)), "[") {
		if e := x.decodeBody(&names); e != nil {
			return 0, nil, e
		}
	} else {
		var in struct {
			Labels *[]string `json:"labels"`
		}
		if e := x.decodeBody(&in); e != nil {
			return 0, nil, e
		}
		if in.Labels == nil {
			return 0, nil, validationFailed(fieldError("Label", "labels", "missing_field"))
		}
		names = *in.Labels
	}
	for _, n := range names {
		if strings.TrimSpace(n) == "" {
			return 0, nil, validationFailed(fieldError("Label", "name", "missing_field"))
		}
	}
	for _, n := range names {
		l := r.label(n)
		if l == nil {
			l = f.defineLabel(r, Label{Name: n})
		}
		if !slices.ContainsFunc(it.labels, func(have string) bool { return strings.EqualFold(have, l.Name) }) {
			it.labels = append(it.labels, l.Name)
		}
	}
	it.updated = f.now()
	out := []map[string]any{}
	for _, n := range it.labels {
		l := r.label(n)
		if l == nil {
			l = f.defineLabel(r, Label{Name: n})
		}
		out = append(out, f.labelJSON(r, l))
	}
	return http.StatusOK, out, nil
}

// stringErrors is GitHub's 422 whose errors array holds plain strings, as
// the pull request review endpoints send it.
func stringErrors(message string, errs ...string) *apiError {
	return &apiError{status: http.StatusUnprocessableEntity, body: map[string]any{
		"message": message, "errors": errs, "documentation_url": docsURL,
	}}
}
