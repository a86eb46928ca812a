package githubtest

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The endpoint handlers run with f.mu held. parts is the split path.

func (f *Fake) getUser(*exchange, []string) (int, any, *apiError) {
	publicRepos := 0
	for _, r := range f.repos {
		if r.Owner == f.login && !r.Private {
			publicRepos++
		}
	}
	u := f.accountJSON(f.login)
	u["id"] = f.userID
	u["name"], u["company"], u["blog"], u["location"] = "The Octocat", "@github", "https://github.blog", "San Francisco"
	u["email"], u["bio"], u["twitter_username"] = nil, nil, nil
	u["public_repos"], u["followers"], u["following"] = publicRepos, 20, 0
	u["created_at"] = "2011-01-25T18:44:36Z"
	return http.StatusOK, u, nil
}

// repo resolves /repos/{owner}/{repo}/...; GitHub answers 404 for a missing
// repository and for one the user cannot see.
func (f *Fake) repo(parts []string) (*repoRecord, *apiError) {
	r := f.repos[repoKey(parts[1], parts[2])]
	if r == nil {
		return nil, notFound()
	}
	return r, nil
}

// item resolves /repos/{owner}/{repo}/{issues|pulls}/{number}.
func (f *Fake) item(parts []string, wantPull bool) (*repoRecord, *itemRecord, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return nil, nil, e
	}
	n, _ := strconv.Atoi(parts[4]) // route matched it as a positive number
	it := r.items[n]
	if it == nil || (wantPull && it.pull == nil) {
		return nil, nil, notFound()
	}
	return r, it, nil
}

// writable refuses changes to archived repositories as GitHub does.
func writable(r *repoRecord) *apiError {
	if r.Archived {
		return errorf(http.StatusForbidden, "Repository was archived so is read-only.")
	}
	return nil
}

func (f *Fake) getRepo(_ *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	return http.StatusOK, f.repoJSON(r), nil
}

func (f *Fake) listUserRepos(x *exchange, _ []string) (int, any, *apiError) {
	typ, e := x.enumParam("Repository", "type", "all", "all", "owner", "public", "private", "member")
	if e != nil {
		return 0, nil, e
	}
	sort, e := x.enumParam("Repository", "sort", "full_name", "created", "updated", "pushed", "full_name")
	if e != nil {
		return 0, nil, e
	}
	defDir := "desc"
	if sort == "full_name" {
		defDir = "asc"
	}
	dir, e := x.enumParam("Repository", "direction", defDir, "asc", "desc")
	if e != nil {
		return 0, nil, e
	}
	var repos []*repoRecord
	for _, r := range f.repos {
		owned := r.Owner == f.login
		if (typ == "owner" && !owned) || (typ == "member" && owned) ||
			(typ == "public" && r.Private) || (typ == "private" && !r.Private) {
			continue
		}
		repos = append(repos, r)
	}
	slices.SortFunc(repos, func(a, b *repoRecord) int {
		var c int
		switch sort {
		case "full_name":
			c = strings.Compare(strings.ToLower(a.Owner+"/"+a.Name), strings.ToLower(b.Owner+"/"+b.Name))
		case "created":
			c = a.created.Compare(b.created)
		default:
			c = a.updated.Compare(b.updated)
		}
		return ordered(c, dir)
	})
	out := []map[string]any{}
	for _, r := range paginate(x, f.URL, repos) {
		out = append(out, f.repoJSON(r))
	}
	return http.StatusOK, out, nil
}

// ordered applies a sort direction to a comparison.
func ordered(c int, dir string) int {
	if dir == "desc" {
		return -c
	}
	return c
}

func (f *Fake) listIssues(x *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	state, e := x.enumParam("Issue", "state", "open", "open", "closed", "all")
	if e != nil {
		return 0, nil, e
	}
	sort, e := x.enumParam("Issue", "sort", "created", "created", "updated", "comments")
	if e != nil {
		return 0, nil, e
	}
	dir, e := x.enumParam("Issue", "direction", "desc", "asc", "desc")
	if e != nil {
		return 0, nil, e
	}
	q := x.r.URL.Query()
	var since time.Time
	if s := q.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return 0, nil, validationFailed(map[string]any{"resource": "Issue", "field": "since", "code": "invalid", "value": s})
		}
		since = t
	}
	var labels []string
	if l := q.Get("labels"); l != "" {
		labels = strings.Split(l, ",")
	}
	var items []*itemRecord
	for _, it := range r.items {
		switch {
		case state != "all" && it.state != state,
			!containsAll(it.labels, labels),
			!matchesAssignee(it.assignees, q.Get("assignee")),
			q.Get("creator") != "" && !strings.EqualFold(q.Get("creator"), it.user),
			it.updated.Before(since):
			continue
		}
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b *itemRecord) int {
		var c int
		switch sort {
		case "created":
			c = cmp.Compare(a.number, b.number)
		case "updated":
			c = a.updated.Compare(b.updated)
		case "comments":
			c = cmp.Compare(len(r.comments[a.number]), len(r.comments[b.number]))
		}
		return ordered(cmp.Or(c, cmp.Compare(a.number, b.number)), dir)
	})
	out := []map[string]any{}
	for _, it := range paginate(x, f.URL, items) {
		out = append(out, f.issueJSON(r, it))
	}
	return http.StatusOK, out, nil
}

// containsAll reports whether have includes every label of want (GitHub
// compares label names case-insensitively).
func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, strings.TrimSpace(w)) }) {
			return false
		}
	}
	return true
}

// matchesAssignee implements the assignee filter: "" any, "none" no
// assignee, "*" some assignee, otherwise that login.
func matchesAssignee(assignees []string, filter string) bool {
	switch filter {
	case "":
		return true
	case "none":
		return len(assignees) == 0
	case "*":
		return len(assignees) > 0
	}
	return slices.ContainsFunc(assignees, func(a string) bool { return strings.EqualFold(a, filter) })
}

func (f *Fake) getIssue(_ *exchange, parts []string) (int, any, *apiError) {
	r, it, e := f.item(parts, false)
	if e != nil {
		return 0, nil, e
	}
	return http.StatusOK, f.issueJSON(r, it), nil
}

// assignable reports whether login can be assigned in r: the fake's
// collaborators are the authenticated user and the repository owner.
func (f *Fake) assignable(r *repoRecord, logins []string) *apiError {
	for _, l := range logins {
		if !strings.EqualFold(l, f.login) && !strings.EqualFold(l, r.Owner) {
			return validationFailed(map[string]any{"resource": "Issue", "field": "assignees", "code": "invalid", "value": l})
		}
	}
	return nil
}

func (f *Fake) createIssue(x *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	if e := writable(r); e != nil {
		return 0, nil, e
	}
	var in struct {
		Title     *string  `json:"title"`
		Body      string   `json:"body"`
		Labels    []string `json:"labels"`
		Assignees []string `json:"assignees"`
	}
	if e := x.decodeBody(&in); e != nil {
		return 0, nil, e
	}
	if in.Title == nil || *in.Title == "" {
		return 0, nil, validationFailed(fieldError("Issue", "title", "missing_field"))
	}
	if e := f.assignable(r, in.Assignees); e != nil {
		return 0, nil, e
	}
	it := f.addItem(r, Issue{Title: *in.Title, Body: in.Body, Labels: in.Labels, Assignees: in.Assignees}, nil)
	x.header.Set("Location", f.URL+"/repos/"+r.Owner+"/"+r.Name+"/issues/"+strconv.Itoa(it.number))
	return http.StatusCreated, f.issueJSON(r, it), nil
}

func (f *Fake) updateIssue(x *exchange, parts []string) (int, any, *apiError) {
	r, it, e := f.item(parts, false)
	if e != nil {
		return 0, nil, e
	}
	if e := writable(r); e != nil {
		return 0, nil, e
	}
	var in struct {
		Title       *string   `json:"title"`
		Body        *string   `json:"body"`
		State       *string   `json:"state"`
		StateReason *string   `json:"state_reason"`
		Labels      *[]string `json:"labels"`
		Assignees   *[]string `json:"assignees"`
	}
	if e := x.decodeBody(&in); e != nil {
		return 0, nil, e
	}
	if in.State != nil && *in.State != "open" && *in.State != "closed" {
		return 0, nil, validationFailed(map[string]any{"resource": "Issue", "field": "state", "code": "invalid", "value": *in.State})
	}
	if in.StateReason != nil && !slices.Contains([]string{"completed", "not_planned", "reopened"}, *in.StateReason) {
		return 0, nil, validationFailed(map[string]any{"resource": "Issue", "field": "state_reason", "code": "invalid", "value": *in.StateReason})
	}
	if in.Title != nil && *in.Title == "" {
		return 0, nil, validationFailed(fieldError("Issue", "title", "missing_field"))
	}
	if in.Assignees != nil {
		if e := f.assignable(r, *in.Assignees); e != nil {
			return 0, nil, e
		}
	}
	now := f.now()
	if in.Title != nil {
		it.title = *in.Title
	}
	if in.Body != nil {
		it.body = *in.Body
	}
	if in.State != nil && *in.State != it.state {
		it.state = *in.State
		it.closed = time.Time{}
		it.stateReason = ""
		switch {
		case it.state == "closed":
			it.closed, it.stateReason = now, "completed"
		case it.state == "open":
			it.stateReason = "reopened"
		}
	}
	if in.StateReason != nil {
		it.stateReason = *in.StateReason
	}
	if in.Labels != nil {
		it.labels = slices.Clone(*in.Labels)
	}
	if in.Assignees != nil {
		it.assignees = slices.Clone(*in.Assignees)
	}
	it.updated = now
	return http.StatusOK, f.issueJSON(r, it), nil
}

func (f *Fake) listComments(x *exchange, parts []string) (int, any, *apiError) {
	r, it, e := f.item(parts, false)
	if e != nil {
		return 0, nil, e
	}
	var since time.Time
	if s := x.r.URL.Query().Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return 0, nil, validationFailed(map[string]any{"resource": "IssueComment", "field": "since", "code": "invalid", "value": s})
		}
		since = t
	}
	var comments []*commentRecord
	for _, c := range r.comments[it.number] {
		if !c.updated.Before(since) {
			comments = append(comments, c)
		}
	}
	out := []map[string]any{}
	for _, c := range paginate(x, f.URL, comments) {
		out = append(out, f.commentJSON(r, it.number, c))
	}
	return http.StatusOK, out, nil
}

func (f *Fake) createComment(x *exchange, parts []string) (int, any, *apiError) {
	r, it, e := f.item(parts, false)
	if e != nil {
		return 0, nil, e
	}
	if e := writable(r); e != nil {
		return 0, nil, e
	}
	var in struct {
		Body *string `json:"body"`
	}
	if e := x.decodeBody(&in); e != nil {
		return 0, nil, e
	}
	if in.Body == nil || *in.Body == "" {
		return 0, nil, validationFailed(fieldError("IssueComment", "body", "missing_field"))
	}
	c := f.addComment(r, it.number, Comment{Body: *in.Body})
	return http.StatusCreated, f.commentJSON(r, it.number, c), nil
}

func (f *Fake) listPulls(x *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	state, e := x.enumParam("PullRequest", "state", "open", "open", "closed", "all")
	if e != nil {
		return 0, nil, e
	}
	sort, e := x.enumParam("PullRequest", "sort", "created", "created", "updated", "popularity", "long-running")
	if e != nil {
		return 0, nil, e
	}
	dir, e := x.enumParam("PullRequest", "direction", "desc", "asc", "desc")
	if e != nil {
		return 0, nil, e
	}
	q := x.r.URL.Query()
	var items []*itemRecord
	for _, it := range r.items {
		if it.pull == nil || (state != "all" && it.state != state) {
			continue
		}
		if h := q.Get("head"); h != "" && !strings.EqualFold(h, r.Owner+":"+it.pull.head) {
			continue
		}
		if b := q.Get("base"); b != "" && b != it.pull.base {
			continue
		}
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b *itemRecord) int {
		c := cmp.Compare(a.number, b.number)
		if sort == "updated" {
			c = cmp.Or(a.updated.Compare(b.updated), c)
		}
		return ordered(c, dir)
	})
	out := []map[string]any{}
	for _, it := range paginate(x, f.URL, items) {
		out = append(out, f.pullJSON(r, it, false))
	}
	return http.StatusOK, out, nil
}

func (f *Fake) getPull(_ *exchange, parts []string) (int, any, *apiError) {
	r, it, e := f.item(parts, true)
	if e != nil {
		return 0, nil, e
	}
	return http.StatusOK, f.pullJSON(r, it, true), nil
}

func (f *Fake) createPull(x *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	if e := writable(r); e != nil {
		return 0, nil, e
	}
	var in struct {
		Title               string `json:"title"`
		Head                string `json:"head"`
		Base                string `json:"base"`
		Body                string `json:"body"`
		Draft               bool   `json:"draft"`
		MaintainerCanModify *bool  `json:"maintainer_can_modify"`
	}
	if e := x.decodeBody(&in); e != nil {
		return 0, nil, e
	}
	var missing []map[string]any
	for field, v := range map[string]string{"title": in.Title, "head": in.Head, "base": in.Base} {
		if v == "" {
			missing = append(missing, fieldError("PullRequest", field, "missing_field"))
		}
	}
	if len(missing) > 0 {
		slices.SortFunc(missing, func(a, b map[string]any) int { return strings.Compare(a["field"].(string), b["field"].(string)) })
		return 0, nil, validationFailed(missing...)
	}
	head := in.Head
	if owner, branch, ok := strings.Cut(head, ":"); ok {
		if !strings.EqualFold(owner, r.Owner) {
			return 0, nil, validationFailed(fieldError("PullRequest", "head", "invalid"))
		}
		head = branch
	}
	if _, ok := r.branchSHA[head]; !ok {
		return 0, nil, validationFailed(fieldError("PullRequest", "head", "invalid"))
	}
	if _, ok := r.branchSHA[in.Base]; !ok {
		return 0, nil, validationFailed(fieldError("PullRequest", "base", "invalid"))
	}
	if head == in.Base {
		return 0, nil, validationFailed(map[string]any{"resource": "PullRequest", "code": "custom",
			"message": "No commits between " + in.Base + " and " + head})
	}
	for _, it := range r.items {
		if it.pull != nil && it.state == "open" && it.pull.head == head && it.pull.base == in.Base {
			return 0, nil, validationFailed(map[string]any{"resource": "PullRequest", "code": "custom",
				"message": "A pull request already exists for " + r.Owner + ":" + head + "."})
		}
	}
	pr := &pullRecord{head: head, base: in.Base, headSHA: r.branchSHA[head], baseSHA: r.branchSHA[in.Base],
		draft: in.Draft, maintainerCanModify: in.MaintainerCanModify == nil || *in.MaintainerCanModify}
	it := f.addItem(r, Issue{Title: in.Title, Body: in.Body}, pr)
	x.header.Set("Location", f.URL+"/repos/"+r.Owner+"/"+r.Name+"/pulls/"+strconv.Itoa(it.number))
	return http.StatusCreated, f.pullJSON(r, it, true), nil
}

func (f *Fake) mergePull(x *exchange, parts []string) (int, any, *apiError) {
	r, it, e := f.item(parts, true)
	if e != nil {
		return 0, nil, e
	}
	if e := writable(r); e != nil {
		return 0, nil, e
	}
	var in struct {
		CommitTitle   string `json:"commit_title"`
		CommitMessage string `json:"commit_message"`
		SHA           string `json:"sha"`
		MergeMethod   string `json:"merge_method"`
	}
	if len(x.body) > 0 {
		if e := x.decodeBody(&in); e != nil {
			return 0, nil, e
		}
	}
	if in.MergeMethod != "" && !slices.Contains([]string{"merge", "squash", "rebase"}, in.MergeMethod) {
		return 0, nil, validationFailed(map[string]any{"resource": "PullRequest", "field": "merge_method", "code": "invalid", "value": in.MergeMethod})
	}
	if it.pull.merged || it.state != "open" || it.pull.unmergeable || it.pull.draft {
		return 0, nil, errorf(http.StatusMethodNotAllowed, "Pull Request is not mergeable")
	}
	if in.SHA != "" && in.SHA != it.pull.headSHA {
		return 0, nil, errorf(http.StatusConflict, "Head branch was modified. Review and try the merge again.")
	}
	merge := f.commit(r, []string{r.branchSHA[it.pull.base], it.pull.headSHA}, "Merge pull request #"+strconv.Itoa(it.number), "", nil, nil)
	maps.Copy(merge.files, r.commits[it.pull.headSHA].files) // a simplification: the head's files win
	now, mergeSHA := merge.date, merge.sha
	it.pull.merged, it.pull.mergedAt = true, now
	it.state, it.closed, it.updated = "closed", now, now
	r.branchSHA[it.pull.base] = mergeSHA
	return http.StatusOK, map[string]any{"sha": mergeSHA, "merged": true, "message": "Pull Request successfully merged"}, nil
}

// searchTerms splits a search query into qualifiers (key:value) and words.
func searchTerms(q string) (qualifiers map[string][]string, words []string) {
	qualifiers = map[string][]string{}
	for _, term := range strings.Fields(q) {
		if k, v, ok := strings.Cut(term, ":"); ok && k != "" && v != "" {
			qualifiers[strings.ToLower(k)] = append(qualifiers[strings.ToLower(k)], v)
			continue
		}
		words = append(words, strings.ToLower(term))
	}
	return qualifiers, words
}

// searchQuery reads q; GitHub answers 422 when it is missing.
func (x *exchange) searchQuery() (map[string][]string, []string, *apiError) {
	q := x.r.URL.Query().Get("q")
	if strings.TrimSpace(q) == "" {
		return nil, nil, validationFailed(fieldError("Search", "q", "missing"))
	}
	qualifiers, words := searchTerms(q)
	return qualifiers, words, nil
}

func containsWords(text string, words []string) bool {
	text = strings.ToLower(text)
	for _, w := range words {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

func (f *Fake) searchIssues(x *exchange, _ []string) (int, any, *apiError) {
	qual, words, e := x.searchQuery()
	if e != nil {
		return 0, nil, e
	}
	sort, e := x.enumParam("Search", "sort", "", "comments", "reactions", "reactions-+1", "reactions--1",
		"reactions-smile", "reactions-thinking_face", "reactions-heart", "reactions-tada", "interactions", "created", "updated")
	if e != nil {
		return 0, nil, e
	}
	order, e := x.enumParam("Search", "order", "desc", "asc", "desc")
	if e != nil {
		return 0, nil, e
	}
	type hit struct {
		r  *repoRecord
		it *itemRecord
	}
	var hits []hit
	for _, r := range f.repos {
		if names := qual["repo"]; len(names) > 0 && !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, r.Owner+"/"+r.Name) }) {
			continue
		}
		for _, it := range r.items {
			if matchesIssueQualifiers(it, qual) && containsWords(it.title+" "+it.body, words) {
				hits = append(hits, hit{r, it})
			}
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		c := cmp.Compare(a.it.id, b.it.id)
		switch sort {
		case "comments":
			c = cmp.Or(cmp.Compare(len(a.r.comments[a.it.number]), len(b.r.comments[b.it.number])), c)
		case "updated":
			c = cmp.Or(a.it.updated.Compare(b.it.updated), c)
		}
		return ordered(c, order)
	})
	items := []map[string]any{}
	for _, h := range paginate(x, f.URL, hits) {
		o := f.issueJSON(h.r, h.it)
		o["score"] = 1.0
		items = append(items, o)
	}
	return http.StatusOK, map[string]any{"total_count": len(hits), "incomplete_results": false, "items": items}, nil
}

// matchesIssueQualifiers applies the is:, type:, state:, label:, author:
// and assignee: qualifiers.
func matchesIssueQualifiers(it *itemRecord, qual map[string][]string) bool {
	for _, v := range append(slices.Clone(qual["is"]), qual["type"]...) {
		switch strings.ToLower(v) {
		case "issue":
			if it.pull != nil {
				return false
			}
		case "pr", "pull-request":
			if it.pull == nil {
				return false
			}
		case "open", "closed":
			if it.state != strings.ToLower(v) {
				return false
			}
		case "merged":
			if it.pull == nil || !it.pull.merged {
				return false
			}
		}
	}
	for _, v := range qual["state"] {
		if it.state != strings.ToLower(v) {
			return false
		}
	}
	if !containsAll(it.labels, qual["label"]) {
		return false
	}
	for _, v := range qual["author"] {
		if !strings.EqualFold(v, it.user) {
			return false
		}
	}
	for _, v := range qual["assignee"] {
		if !matchesAssignee(it.assignees, v) {
			return false
		}
	}
	return true
}

func (f *Fake) searchRepos(x *exchange, _ []string) (int, any, *apiError) {
	qual, words, e := x.searchQuery()
	if e != nil {
		return 0, nil, e
	}
	sort, e := x.enumParam("Search", "sort", "", "stars", "forks", "help-wanted-issues", "updated")
	if e != nil {
		return 0, nil, e
	}
	order, e := x.enumParam("Search", "order", "desc", "asc", "desc")
	if e != nil {
		return 0, nil, e
	}
	var hits []*repoRecord
	for _, r := range f.repos {
		if matchesRepoQualifiers(r, qual) && containsWords(r.Name+" "+r.Description+" "+strings.Join(r.Topics, " "), words) {
			hits = append(hits, r)
		}
	}
	slices.SortFunc(hits, func(a, b *repoRecord) int {
		c := cmp.Compare(a.id, b.id)
		switch sort {
		case "stars":
			c = cmp.Or(cmp.Compare(a.Stars, b.Stars), c)
		case "forks":
			c = cmp.Or(cmp.Compare(a.Forks, b.Forks), c)
		case "updated":
			c = cmp.Or(a.updated.Compare(b.updated), c)
		}
		return ordered(c, order)
	})
	items := []map[string]any{}
	for _, r := range paginate(x, f.URL, hits) {
		o := f.repoJSON(r)
		o["score"] = 1.0
		items = append(items, o)
	}
	return http.StatusOK, map[string]any{"total_count": len(hits), "incomplete_results": false, "items": items}, nil
}

// matchesRepoQualifiers applies the user:, org:, language:, topic: and
// is: qualifiers.
func matchesRepoQualifiers(r *repoRecord, qual map[string][]string) bool {
	for _, v := range append(slices.Clone(qual["user"]), qual["org"]...) {
		if !strings.EqualFold(v, r.Owner) {
			return false
		}
	}
	for _, v := range qual["language"] {
		if !strings.EqualFold(v, r.Language) {
			return false
		}
	}
	for _, v := range qual["topic"] {
		if !slices.Contains(r.Topics, strings.ToLower(v)) {
			return false
		}
	}
	for _, v := range qual["is"] {
		if (v == "public" && r.Private) || (v == "private" && !r.Private) {
			return false
		}
	}
	return true
}
