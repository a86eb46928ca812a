package githubtest

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Repo seeds a repository.
type Repo struct {
	Owner, Name   string
	Private       bool
	Archived      bool
	Description   string
	Language      string
	Topics        []string
	Stars, Forks  int
	DefaultBranch string   // "main" when empty
	Branches      []string // besides the default branch
	Protected     []string // names of protected branches
}

// Issue seeds or reads back an issue.
type Issue struct {
	Number      int // set by the fake
	Title, Body string
	State       string // "open" when empty
	StateReason string
	User        string // the authenticated user when empty
	Labels      []string
	Assignees   []string
	Locked      bool
}

// Pull seeds or reads back a pull request.
type Pull struct {
	Number      int // set by the fake
	Title, Body string
	User        string // the authenticated user when empty
	Head, Base  string // branch names in the same repository; Base defaults to the default branch
	State       string // "open" when empty
	Draft       bool
	Merged      bool
	// Unmergeable makes GitHub's mergeable false (a conflict).
	Unmergeable bool
	Labels      []string
	HeadSHA     string // set by the fake
}

// Comment seeds or reads back an issue comment.
type Comment struct {
	ID   int64 // set by the fake
	User string
	Body string
}

type repoRecord struct {
	Repo
	id               int64
	created, updated time.Time
	branchSHA        map[string]string
	items            map[int]*itemRecord // issues and pull requests share numbers
	nextNumber       int
	comments         map[int][]*commentRecord
	commits          map[string]*commitRecord // by SHA
	labels           []*labelRecord
	reviews          map[int][]*reviewRecord // by pull request number
	releases         []*releaseRecord
	workflows        []*workflowRecord
	runs             []*runRecord
}

type itemRecord struct {
	id                       int64
	number                   int
	title, body              string
	state, stateReason, user string
	labels, assignees        []string
	locked                   bool
	created, updated, closed time.Time
	pull                     *pullRecord
}

type pullRecord struct {
	head, base          string
	headSHA, baseSHA    string
	draft, merged       bool
	unmergeable         bool
	mergedAt            time.Time
	maintainerCanModify bool
}

type commentRecord struct {
	id               int64
	user, body       string
	created, updated time.Time
}

// sha returns a deterministic 40-hex-digit object name for n; distinct n
// differ in their first digits too, so short SHAs resolve.
func sha(n int64) string { return gitBlobSHA(fmt.Sprintf("object %d", n)) }

func repoKey(owner, name string) string { return strings.ToLower(owner + "/" + name) }

// AddRepo adds a repository the authenticated user can see.
func (f *Fake) AddRepo(r Repo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.DefaultBranch == "" {
		r.DefaultBranch = "main"
	}
	now := f.now()
	rec := &repoRecord{Repo: r, id: f.id(), created: now, updated: now,
		branchSHA: map[string]string{}, items: map[int]*itemRecord{}, nextNumber: 1, comments: map[int][]*commentRecord{},
		commits: map[string]*commitRecord{}, reviews: map[int][]*reviewRecord{}}
	rec.Branches = nil
	rec.branchSHA[r.DefaultBranch] = f.commit(rec, nil, "Initial commit", r.Owner,
		map[string]string{"README.md": "# " + r.Name + "\n"}, nil).sha
	for _, b := range r.Branches {
		f.ensureBranch(rec, b)
	}
	f.repos[repoKey(r.Owner, r.Name)] = rec
}

// mustRepo returns a seeded repository or panics: seeding a missing
// repository is a mistake in the test itself.
func (f *Fake) mustRepo(owner, name string) *repoRecord {
	r := f.repos[repoKey(owner, name)]
	if r == nil {
		panic(fmt.Sprintf("githubtest: repository %s/%s was not added", owner, name))
	}
	return r
}

// AddIssue adds an issue and returns its number.
func (f *Fake) AddIssue(owner, repo string, i Issue) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addItem(f.mustRepo(owner, repo), i, nil).number
}

func (f *Fake) addItem(r *repoRecord, i Issue, pull *pullRecord) *itemRecord {
	now := f.now()
	it := &itemRecord{id: f.id(), number: r.nextNumber, title: i.Title, body: i.Body, state: i.State,
		stateReason: i.StateReason, user: i.User, labels: slices.Clone(i.Labels), assignees: slices.Clone(i.Assignees),
		locked: i.Locked, created: now, updated: now, pull: pull}
	if it.state == "" {
		it.state = "open"
	}
	if it.user == "" {
		it.user = f.login
	}
	if it.state == "closed" {
		it.closed = now
	}
	r.nextNumber++
	r.items[it.number] = it
	r.updated = now
	return it
}

// AddPull adds a pull request and returns its number. Its head branch is
// created when missing.
func (f *Fake) AddPull(owner, repo string, p Pull) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(owner, repo)
	if p.Base == "" {
		p.Base = r.DefaultBranch
	}
	f.ensureBranch(r, p.Head)
	pr := &pullRecord{head: p.Head, base: p.Base, headSHA: r.branchSHA[p.Head], baseSHA: r.branchSHA[p.Base],
		draft: p.Draft, merged: p.Merged, unmergeable: p.Unmergeable}
	it := f.addItem(r, Issue{Title: p.Title, Body: p.Body, State: p.State, User: p.User, Labels: p.Labels}, pr)
	if p.Merged {
		it.state, it.closed, pr.mergedAt = "closed", it.created, it.created
	}
	return it.number
}

// AddComment adds a comment to an issue or pull request and returns its id.
func (f *Fake) AddComment(owner, repo string, number int, c Comment) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(owner, repo)
	if r.items[number] == nil {
		panic(fmt.Sprintf("githubtest: %s/%s has no issue %d", owner, repo, number))
	}
	return f.addComment(r, number, c).id
}

func (f *Fake) addComment(r *repoRecord, number int, c Comment) *commentRecord {
	now := f.now()
	if c.User == "" {
		c.User = f.login
	}
	rec := &commentRecord{id: f.id(), user: c.User, body: c.Body, created: now, updated: now}
	r.comments[number] = append(r.comments[number], rec)
	r.items[number].updated = now
	return rec
}

// Issue reads back an issue (or the issue side of a pull request).
func (f *Fake) Issue(owner, repo string, number int) (Issue, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.repos[repoKey(owner, repo)]
	if r == nil || r.items[number] == nil {
		return Issue{}, false
	}
	it := r.items[number]
	return Issue{Number: it.number, Title: it.title, Body: it.body, State: it.state, StateReason: it.stateReason,
		User: it.user, Labels: slices.Clone(it.labels), Assignees: slices.Clone(it.assignees), Locked: it.locked}, true
}

// Pull reads back a pull request.
func (f *Fake) Pull(owner, repo string, number int) (Pull, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.repos[repoKey(owner, repo)]
	if r == nil || r.items[number] == nil || r.items[number].pull == nil {
		return Pull{}, false
	}
	it := r.items[number]
	return Pull{Number: it.number, Title: it.title, Body: it.body, User: it.user, Head: it.pull.head,
		Base: it.pull.base, State: it.state, Draft: it.pull.draft, Merged: it.pull.merged,
		Unmergeable: it.pull.unmergeable, Labels: slices.Clone(it.labels), HeadSHA: it.pull.headSHA}, true
}

// Comments reads back the comments of an issue or pull request.
func (f *Fake) Comments(owner, repo string, number int) []Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.repos[repoKey(owner, repo)]
	if r == nil {
		return nil
	}
	var out []Comment
	for _, c := range r.comments[number] {
		out = append(out, Comment{ID: c.id, User: c.user, Body: c.body})
	}
	return out
}

// JSON renderings, in the shapes GitHub documents (trimmed to the fields a
// client plausibly reads).

func timestamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func (f *Fake) accountJSON(login string) map[string]any {
	typ := "User"
	if login != f.login && strings.Contains(login, "org") {
		typ = "Organization"
	}
	return map[string]any{
		"login": login, "id": len(login)*7919 + 1, "node_id": "U_" + login, "type": typ, "site_admin": false,
		"url": f.URL + "/users/" + login, "html_url": "https://github.com/" + login,
		"avatar_url": "https://avatars.githubusercontent.com/u/1?v=4",
	}
}

func (f *Fake) repoJSON(r *repoRecord) map[string]any {
	full := r.Owner + "/" + r.Name
	visibility := "public"
	if r.Private {
		visibility = "private"
	}
	openIssues := 0
	for _, it := range r.items {
		if it.state == "open" {
			openIssues++
		}
	}
	return map[string]any{
		"id": r.id, "node_id": fmt.Sprintf("R_%d", r.id), "name": r.Name, "full_name": full,
		"private": r.Private, "owner": f.accountJSON(r.Owner), "html_url": "https://github.com/" + full,
		"description": nullable(r.Description), "fork": false, "url": f.URL + "/repos/" + full,
		"created_at": timestamp(r.created), "updated_at": timestamp(r.updated), "pushed_at": timestamp(r.updated),
		"homepage": nil, "size": 108, "stargazers_count": r.Stars, "watchers_count": r.Stars,
		"language": nullable(r.Language), "has_issues": true, "forks_count": r.Forks, "archived": r.Archived,
		"disabled": false, "open_issues_count": openIssues, "topics": nonNil(r.Topics), "visibility": visibility,
		"forks": r.Forks, "open_issues": openIssues, "watchers": r.Stars, "default_branch": r.DefaultBranch,
		"permissions": map[string]bool{"admin": r.Owner == f.login, "push": true, "pull": true},
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (f *Fake) labelsJSON(names []string) []map[string]any {
	out := make([]map[string]any, 0, len(names))
	for _, n := range names {
		out = append(out, map[string]any{"id": len(n)*131 + 7, "name": n, "color": "d73a4a", "default": false, "description": nil})
	}
	return out
}

func (f *Fake) accountsJSON(logins []string) []map[string]any {
	out := make([]map[string]any, 0, len(logins))
	for _, l := range logins {
		out = append(out, f.accountJSON(l))
	}
	return out
}

func (f *Fake) issueJSON(r *repoRecord, it *itemRecord) map[string]any {
	full := r.Owner + "/" + r.Name
	kind := "issues"
	if it.pull != nil {
		kind = "pull"
	}
	var assignee any
	if len(it.assignees) > 0 {
		assignee = f.accountJSON(it.assignees[0])
	}
	out := map[string]any{
		"id": it.id, "node_id": fmt.Sprintf("I_%d", it.id), "number": it.number,
		"url":            fmt.Sprintf("%s/repos/%s/issues/%d", f.URL, full, it.number),
		"repository_url": f.URL + "/repos/" + full,
		"html_url":       fmt.Sprintf("https://github.com/%s/%s/%d", full, kind, it.number),
		"state":          it.state, "state_reason": nullable(it.stateReason), "title": it.title, "body": nullable(it.body),
		"user": f.accountJSON(it.user), "labels": f.labelsJSON(it.labels), "assignee": assignee,
		"assignees": f.accountsJSON(it.assignees), "locked": it.locked, "comments": len(r.comments[it.number]),
		"created_at": timestamp(it.created), "updated_at": timestamp(it.updated), "closed_at": timestamp(it.closed),
		"author_association": "OWNER",
	}
	if it.pull != nil {
		out["pull_request"] = map[string]any{
			"url":       fmt.Sprintf("%s/repos/%s/pulls/%d", f.URL, full, it.number),
			"html_url":  fmt.Sprintf("https://github.com/%s/pull/%d", full, it.number),
			"merged_at": timestamp(it.pull.mergedAt),
		}
	}
	return out
}

// pullJSON renders a pull request; full adds what GitHub only returns for a
// single pull request (merge state and change counts).
func (f *Fake) pullJSON(r *repoRecord, it *itemRecord, full bool) map[string]any {
	name := r.Owner + "/" + r.Name
	branch := func(ref, sha string) map[string]any {
		return map[string]any{"label": r.Owner + ":" + ref, "ref": ref, "sha": sha,
			"user": f.accountJSON(r.Owner), "repo": f.repoJSON(r)}
	}
	out := map[string]any{
		"id": it.id, "node_id": fmt.Sprintf("PR_%d", it.id), "number": it.number,
		"url":      fmt.Sprintf("%s/repos/%s/pulls/%d", f.URL, name, it.number),
		"html_url": fmt.Sprintf("https://github.com/%s/pull/%d", name, it.number),
		"state":    it.state, "locked": it.locked, "title": it.title, "body": nullable(it.body),
		"user": f.accountJSON(it.user), "labels": f.labelsJSON(it.labels), "assignees": f.accountsJSON(it.assignees),
		"draft": it.pull.draft, "head": branch(it.pull.head, it.pull.headSHA), "base": branch(it.pull.base, it.pull.baseSHA),
		"created_at": timestamp(it.created), "updated_at": timestamp(it.updated), "closed_at": timestamp(it.closed),
		"merged_at": timestamp(it.pull.mergedAt), "author_association": "OWNER",
	}
	if full {
		var mergeable any = !it.pull.unmergeable
		state := "clean"
		switch {
		case it.pull.merged:
			mergeable, state = nil, "unknown"
		case it.pull.unmergeable:
			state = "dirty"
		}
		out["merged"] = it.pull.merged
		out["mergeable"] = mergeable
		out["mergeable_state"] = state
		out["maintainer_can_modify"] = it.pull.maintainerCanModify
		out["comments"] = len(r.comments[it.number])
		out["commits"], out["additions"], out["deletions"], out["changed_files"] = 3, 42, 7, 2
	}
	return out
}

func (f *Fake) commentJSON(r *repoRecord, number int, c *commentRecord) map[string]any {
	name := r.Owner + "/" + r.Name
	return map[string]any{
		"id": c.id, "node_id": fmt.Sprintf("IC_%d", c.id),
		"url":       fmt.Sprintf("%s/repos/%s/issues/comments/%d", f.URL, name, c.id),
		"html_url":  fmt.Sprintf("https://github.com/%s/issues/%d#issuecomment-%d", name, number, c.id),
		"issue_url": fmt.Sprintf("%s/repos/%s/issues/%d", f.URL, name, number),
		"body":      c.body, "user": f.accountJSON(c.user),
		"created_at": timestamp(c.created), "updated_at": timestamp(c.updated), "author_association": "OWNER",
	}
}
