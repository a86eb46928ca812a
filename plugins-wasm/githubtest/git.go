package githubtest

import (
	"cmp"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Commit seeds a commit on a branch.
type Commit struct {
	Branch  string            // the default branch when empty; created from the default branch when missing
	Message string            // "Update files" when empty
	Author  string            // login; the authenticated user when empty
	Files   map[string]string // path → new content
	Remove  []string          // paths to delete
}

// commitRecord is one commit with a snapshot of every file it holds.
type commitRecord struct {
	sha     string
	message string
	author  string
	date    time.Time
	parents []string
	files   map[string]string // the whole tree: path → content
	changes []fileChange
}

// fileChange is one file a commit changed.
type fileChange struct {
	path, status string // added, modified or removed
	old, new     string
}

// gitBlobSHA is the SHA-1 git gives a file's content.
func gitBlobSHA(content string) string {
	h := sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(content), content)))
	return hex.EncodeToString(h[:])
}

// commit records a commit on top of parents (the first one supplies the
// tree) and returns it. It does not move any branch.
func (f *Fake) commit(r *repoRecord, parents []string, message, author string, set map[string]string, remove []string) *commitRecord {
	files := map[string]string{}
	if len(parents) > 0 {
		files = maps.Clone(r.commits[parents[0]].files)
	}
	var changes []fileChange
	for _, p := range slices.Sorted(maps.Keys(set)) {
		old, had := files[p]
		switch {
		case !had:
			changes = append(changes, fileChange{path: p, status: "added", new: set[p]})
		case old != set[p]:
			changes = append(changes, fileChange{path: p, status: "modified", old: old, new: set[p]})
		}
		files[p] = set[p]
	}
	for _, p := range remove {
		if old, had := files[p]; had {
			changes = append(changes, fileChange{path: p, status: "removed", old: old})
			delete(files, p)
		}
	}
	if author == "" {
		author = f.login
	}
	c := &commitRecord{sha: sha(f.id()), message: message, author: author, date: f.now(),
		parents: slices.Clone(parents), files: files, changes: changes}
	r.commits[c.sha] = c
	return c
}

// AddCommit adds a commit on top of a branch, moves the branch to it and
// returns its SHA.
func (f *Fake) AddCommit(owner, repo string, c Commit) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(owner, repo)
	branch := c.Branch
	if branch == "" {
		branch = r.DefaultBranch
	}
	f.ensureBranch(r, branch)
	if c.Message == "" {
		c.Message = "Update files"
	}
	rec := f.commit(r, []string{r.branchSHA[branch]}, c.Message, c.Author, c.Files, c.Remove)
	r.branchSHA[branch] = rec.sha
	r.updated = rec.date
	return rec.sha
}

// ensureBranch creates a branch at the default branch's head when it is
// missing.
func (f *Fake) ensureBranch(r *repoRecord, branch string) {
	if _, ok := r.branchSHA[branch]; ok {
		return
	}
	r.branchSHA[branch] = f.commit(r, []string{r.branchSHA[r.DefaultBranch]}, "Start "+branch, "", nil, nil).sha
	if branch != r.DefaultBranch {
		r.Branches = append(r.Branches, branch)
	}
}

// resolveRef finds the commit a branch, tag, full SHA or unique SHA prefix
// (at least 7 characters) names; "" is the default branch.
func (r *repoRecord) resolveRef(ref string) *commitRecord {
	if ref == "" {
		ref = r.DefaultBranch
	}
	if s, ok := r.branchSHA[ref]; ok {
		return r.commits[s]
	}
	for _, rel := range r.releases {
		if rel.Tag == ref {
			return r.commits[rel.sha]
		}
	}
	if c := r.commits[strings.ToLower(ref)]; c != nil {
		return c
	}
	if len(ref) < 7 {
		return nil
	}
	var found *commitRecord
	for s, c := range r.commits {
		if strings.HasPrefix(s, strings.ToLower(ref)) {
			if found != nil {
				return nil
			}
			found = c
		}
	}
	return found
}

// history returns the commits reachable from head, newest first.
func (r *repoRecord) history(head *commitRecord) []*commitRecord {
	seen := map[string]bool{}
	var out []*commitRecord
	queue := []*commitRecord{head}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if seen[c.sha] {
			continue
		}
		seen[c.sha] = true
		out = append(out, c)
		for _, p := range c.parents {
			queue = append(queue, r.commits[p])
		}
	}
	slices.SortStableFunc(out, func(a, b *commitRecord) int { return b.date.Compare(a.date) })
	return out
}

// touches reports whether a commit changed path or anything under it.
func (c *commitRecord) touches(path string) bool {
	path = strings.Trim(path, "/")
	for _, ch := range c.changes {
		if ch.path == path || strings.HasPrefix(ch.path, path+"/") {
			return true
		}
	}
	return false
}

// patch renders a change as a unified diff hunk, the way GitHub's files
// array carries it.
func (ch fileChange) patch() (patch string, additions, deletions int) {
	lines := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	}
	oldLines, newLines := lines(ch.old), lines(ch.new)
	var b strings.Builder
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@", min(1, len(oldLines)), len(oldLines), min(1, len(newLines)), len(newLines))
	for _, l := range oldLines {
		b.WriteString("\n-" + l)
	}
	for _, l := range newLines {
		b.WriteString("\n+" + l)
	}
	return b.String(), len(newLines), len(oldLines)
}

func (f *Fake) commitJSON(r *repoRecord, c *commitRecord, full bool) map[string]any {
	name := r.Owner + "/" + r.Name
	person := map[string]any{"name": c.author, "email": c.author + "@users.noreply.github.com", "date": timestamp(c.date)}
	parents := []map[string]any{}
	for _, p := range c.parents {
		parents = append(parents, map[string]any{"sha": p, "url": f.URL + "/repos/" + name + "/commits/" + p,
			"html_url": "https://github.com/" + name + "/commit/" + p})
	}
	out := map[string]any{
		"sha": c.sha, "node_id": "C_" + c.sha[:10],
		"url":      f.URL + "/repos/" + name + "/commits/" + c.sha,
		"html_url": "https://github.com/" + name + "/commit/" + c.sha,
		"commit": map[string]any{"author": person, "committer": person, "message": c.message, "comment_count": 0,
			"tree": map[string]any{"sha": gitBlobSHA("tree " + c.sha), "url": f.URL + "/repos/" + name + "/git/trees/" + c.sha}},
		"author": f.accountJSON(c.author), "committer": f.accountJSON(c.author), "parents": parents,
	}
	if full {
		files := []map[string]any{}
		adds, dels := 0, 0
		for _, ch := range c.changes {
			patch, a, d := ch.patch()
			adds, dels = adds+a, dels+d
			blob := ch.new
			if ch.status == "removed" {
				blob = ch.old
			}
			files = append(files, map[string]any{"sha": gitBlobSHA(blob), "filename": ch.path, "status": ch.status,
				"additions": a, "deletions": d, "changes": a + d, "patch": patch,
				"blob_url": "https://github.com/" + name + "/blob/" + c.sha + "/" + ch.path})
		}
		out["stats"] = map[string]any{"additions": adds, "deletions": dels, "total": adds + dels}
		out["files"] = files
	}
	return out
}

// The handlers below serve branches, commits and contents.

func (f *Fake) branchJSON(r *repoRecord, name string, full bool) map[string]any {
	c := r.commits[r.branchSHA[name]]
	protected := slices.Contains(r.Protected, name)
	out := map[string]any{"name": name, "protected": protected}
	if !full {
		out["commit"] = map[string]any{"sha": c.sha, "url": f.URL + "/repos/" + r.Owner + "/" + r.Name + "/commits/" + c.sha}
		return out
	}
	out["commit"] = f.commitJSON(r, c, false)
	out["_links"] = map[string]any{"self": f.URL + "/repos/" + r.Owner + "/" + r.Name + "/branches/" + name,
		"html": "https://github.com/" + r.Owner + "/" + r.Name + "/tree/" + name}
	out["protection"] = map[string]any{"enabled": protected, "required_status_checks": map[string]any{
		"enforcement_level": "off", "contexts": []string{}, "checks": []string{}}}
	out["protection_url"] = f.URL + "/repos/" + r.Owner + "/" + r.Name + "/branches/" + name + "/protection"
	return out
}

func (f *Fake) listBranches(x *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	protected, e := x.enumParam("Branch", "protected", "", "true", "false")
	if e != nil {
		return 0, nil, e
	}
	var names []string
	for _, name := range slices.Sorted(maps.Keys(r.branchSHA)) {
		if protected == "" || (protected == "true") == slices.Contains(r.Protected, name) {
			names = append(names, name)
		}
	}
	out := []map[string]any{}
	for _, name := range paginate(x, f.URL, names) {
		out = append(out, f.branchJSON(r, name, false))
	}
	return http.StatusOK, out, nil
}

// getBranch serves /repos/{owner}/{repo}/branches/{branch}; a branch name
// may hold slashes, sent plain or escaped.
func (f *Fake) getBranch(_ *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	name := strings.Join(parts[4:], "/")
	if _, ok := r.branchSHA[name]; !ok {
		return 0, nil, errorf(http.StatusNotFound, "Branch not found")
	}
	return http.StatusOK, f.branchJSON(r, name, true), nil
}

// timeParam reads an ISO 8601 query parameter; GitHub answers 422 for one
// it cannot read.
func (x *exchange) timeParam(resource, name string) (time.Time, *apiError) {
	s := x.r.URL.Query().Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		e := fieldError(resource, name, "invalid")
		e["value"] = s
		return time.Time{}, validationFailed(e)
	}
	return t, nil
}

// listCommits serves GET /repos/{owner}/{repo}/commits with the sha, path,
// author, since and until filters, newest first.
func (f *Fake) listCommits(x *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	q := x.r.URL.Query()
	head := r.resolveRef(q.Get("sha"))
	if head == nil {
		return 0, nil, errorf(http.StatusNotFound, "No commit found for SHA: %s", q.Get("sha"))
	}
	since, e := x.timeParam("Commit", "since")
	if e != nil {
		return 0, nil, e
	}
	until, e := x.timeParam("Commit", "until")
	if e != nil {
		return 0, nil, e
	}
	var commits []*commitRecord
	for _, c := range r.history(head) {
		author := q.Get("author")
		if (q.Get("path") != "" && !c.touches(q.Get("path"))) ||
			(author != "" && !strings.EqualFold(author, c.author) && !strings.EqualFold(author, c.author+"@users.noreply.github.com")) ||
			(!since.IsZero() && c.date.Before(since)) || (!until.IsZero() && c.date.After(until)) {
			continue
		}
		commits = append(commits, c)
	}
	out := []map[string]any{}
	for _, c := range paginate(x, f.URL, commits) {
		out = append(out, f.commitJSON(r, c, false))
	}
	return http.StatusOK, out, nil
}

// getCommit serves /repos/{owner}/{repo}/commits/{ref}; GitHub answers 422
// for a ref that names no commit.
func (f *Fake) getCommit(_ *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	ref := strings.Join(parts[4:], "/")
	c := r.resolveRef(ref)
	if c == nil {
		return 0, nil, errorf(http.StatusUnprocessableEntity, "No commit found for SHA: %s", ref)
	}
	return http.StatusOK, f.commitJSON(r, c, true), nil
}

// maxContentsFile is the largest file the contents API returns inline.
const maxContentsFile = 1 << 20

// getContents serves /repos/{owner}/{repo}/contents/{path}?ref=: a file
// object with base64 content, or an array for a directory.
func (f *Fake) getContents(x *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	ref := x.r.URL.Query().Get("ref")
	c := r.resolveRef(ref)
	if c == nil {
		return 0, nil, errorf(http.StatusNotFound, "No commit found for the ref %s", ref)
	}
	name := r.Owner + "/" + r.Name
	refName := cmp.Or(ref, r.DefaultBranch)
	path := strings.Join(parts[4:], "/")
	entry := func(p, typ string, size int, blob string) map[string]any {
		out := map[string]any{"type": typ, "name": p[strings.LastIndex(p, "/")+1:], "path": p, "sha": blob, "size": size,
			"url":          f.URL + "/repos/" + name + "/contents/" + p + "?ref=" + refName,
			"html_url":     "https://github.com/" + name + "/" + map[string]string{"file": "blob", "dir": "tree"}[typ] + "/" + refName + "/" + p,
			"download_url": nil}
		if typ == "file" {
			out["download_url"] = "https://raw.githubusercontent.com/" + name + "/" + refName + "/" + p
		}
		return out
	}
	if content, ok := c.files[path]; ok {
		out := entry(path, "file", len(content), gitBlobSHA(content))
		out["encoding"], out["content"] = "none", ""
		if len(content) <= maxContentsFile {
			enc := base64.StdEncoding.EncodeToString([]byte(content))
			var b strings.Builder
			for len(enc) > 60 {
				b.WriteString(enc[:60] + "\n")
				enc = enc[60:]
			}
			b.WriteString(enc + "\n")
			out["encoding"], out["content"] = "base64", b.String()
		}
		return http.StatusOK, out, nil
	}
	prefix := path + "/"
	if path == "" {
		prefix = ""
	}
	seen := map[string]bool{}
	var entries []map[string]any
	for _, p := range slices.Sorted(maps.Keys(c.files)) {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		if dir, _, nested := strings.Cut(rest, "/"); nested {
			if !seen[dir] {
				seen[dir] = true
				entries = append(entries, entry(prefix+dir, "dir", 0, gitBlobSHA("tree "+prefix+dir)))
			}
			continue
		}
		entries = append(entries, entry(p, "file", len(c.files[p]), gitBlobSHA(c.files[p])))
	}
	if entries == nil {
		return 0, nil, notFound()
	}
	return http.StatusOK, entries, nil
}
