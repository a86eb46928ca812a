package main

import (
	"encoding/base64"
	"net/url"
	"strings"
	"unicode/utf8"

	pdk "github.com/workbench-dev/workbench/pdk/go"
)

// ListBranchesInput is the input of github_list_branches.
type ListBranchesInput struct {
	RepoRef
	Protected *bool `json:"protected,omitempty" jsonschema:"true for only protected branches, false for only unprotected ones; leave out for all"`
	Paging
}

// BranchSummary is a branch in a list.
type BranchSummary struct {
	Name      string `json:"name"`
	SHA       string `json:"sha" jsonschema:"the commit the branch points at"`
	Protected bool   `json:"protected"`
}

// BranchList is one page of branches.
type BranchList struct {
	Branches []BranchSummary `json:"branches"`
	NextPage int             `json:"next_page" jsonschema:"page to ask for next; 0 when this is the last page"`
}

// ghBranchSummary decodes an entry of GET /repos/{owner}/{repo}/branches.
type ghBranchSummary struct {
	Name   string `json:"name"`
	Commit struct {
		SHA string `json:"sha"`
	} `json:"commit"`
	Protected bool `json:"protected"`
}

var listBranches = pdk.Tool("github_list_branches",
	"Lists a repository's branches with the commit each points at, one page at a time.",
	func(_ pdk.Context, in ListBranchesInput) (BranchList, error) {
		path, err := in.path("branches")
		if err != nil {
			return BranchList{}, err
		}
		q := url.Values{}
		if in.Protected != nil {
			q.Set("protected", boolString(*in.Protected))
		}
		in.Paging.set(q)
		var branches []ghBranchSummary
		resp, err := send("GET", path, q, nil, &branches)
		if err != nil {
			return BranchList{}, err
		}
		out := BranchList{Branches: make([]BranchSummary, 0, len(branches)), NextPage: nextPage(resp.Header)}
		for _, b := range branches {
			out.Branches = append(out.Branches, BranchSummary{Name: b.Name, SHA: b.Commit.SHA, Protected: b.Protected})
		}
		return out, nil
	}, readOptions("List branches")...)

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// GetBranchInput is the input of github_get_branch.
type GetBranchInput struct {
	RepoRef
	Branch string `json:"branch" jsonschema:"the branch name, e.g. main or feature/login"`
}

// BranchDetail is one branch with its head commit.
type BranchDetail struct {
	Name      string `json:"name"`
	Protected bool   `json:"protected"`
	Commit    Commit `json:"commit" jsonschema:"the branch's head commit"`
}

var getBranch = pdk.Tool("github_get_branch",
	"Returns one branch with its head commit and whether it is protected.",
	func(_ pdk.Context, in GetBranchInput) (BranchDetail, error) {
		if strings.TrimSpace(in.Branch) == "" {
			return BranchDetail{}, pdk.InvalidArguments("branch must not be empty").WithDetails(map[string]string{"field": "branch"})
		}
		path, err := in.path("branches", in.Branch)
		if err != nil {
			return BranchDetail{}, err
		}
		var b struct {
			Name      string   `json:"name"`
			Protected bool     `json:"protected"`
			Commit    ghCommit `json:"commit"`
		}
		if _, err := send("GET", path, nil, nil, &b); err != nil {
			return BranchDetail{}, err
		}
		return BranchDetail{Name: b.Name, Protected: b.Protected, Commit: b.Commit.out()}, nil
	}, readOptions("Get a branch")...)

// ghCommit decodes a commit object of the commits API.
type ghCommit struct {
	SHA    string `json:"sha"`
	Commit struct {
		Message   string         `json:"message"`
		Author    ghCommitPerson `json:"author"`
		Committer ghCommitPerson `json:"committer"`
	} `json:"commit"`
	Author  *ghAccount `json:"author"`
	HTMLURL string     `json:"html_url"`
	Parents []struct {
		SHA string `json:"sha"`
	} `json:"parents"`
	Stats *struct {
		Additions int `json:"additions"`
		Deletions int `json:"deletions"`
		Total     int `json:"total"`
	} `json:"stats"`
	Files []CommitFile `json:"files"`
}

// ghCommitPerson is the git author or committer of a commit.
type ghCommitPerson struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Date  string `json:"date"`
}

// CommitFile is one file a commit changed.
type CommitFile struct {
	Filename  string `json:"filename"`
	Status    string `json:"status" jsonschema:"added, removed, modified, renamed, copied, changed or unchanged"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	Changes   int    `json:"changes"`
	Patch     string `json:"patch,omitempty" jsonschema:"unified diff of the file; absent for binary or very large files"`
}

// Commit is a commit. Stats and files are only known for a single commit
// (github_get_commit), not in lists.
type Commit struct {
	SHA         string       `json:"sha"`
	Message     string       `json:"message"`
	AuthorName  string       `json:"author_name"`
	AuthorEmail string       `json:"author_email,omitempty"`
	AuthorLogin string       `json:"author_login,omitempty" jsonschema:"GitHub login of the author; empty when the email matches no account"`
	AuthoredAt  string       `json:"authored_at"`
	CommittedAt string       `json:"committed_at"`
	Parents     []string     `json:"parents" jsonschema:"SHAs of the parent commits"`
	HTMLURL     string       `json:"html_url"`
	Additions   int          `json:"additions,omitempty"`
	Deletions   int          `json:"deletions,omitempty"`
	Files       []CommitFile `json:"files,omitempty"`
}

func (c ghCommit) out() Commit {
	out := Commit{SHA: c.SHA, Message: c.Commit.Message, AuthorName: c.Commit.Author.Name, AuthorEmail: c.Commit.Author.Email,
		AuthoredAt: c.Commit.Author.Date, CommittedAt: c.Commit.Committer.Date, Parents: make([]string, 0, len(c.Parents)),
		HTMLURL: c.HTMLURL, Files: c.Files}
	if c.Author != nil {
		out.AuthorLogin = c.Author.Login
	}
	for _, p := range c.Parents {
		out.Parents = append(out.Parents, p.SHA)
	}
	if c.Stats != nil {
		out.Additions, out.Deletions = c.Stats.Additions, c.Stats.Deletions
	}
	return out
}

// ListCommitsInput is the input of github_list_commits.
type ListCommitsInput struct {
	RepoRef
	SHA    string `json:"sha,omitempty" jsonschema:"branch name or commit SHA to start from; the default branch when left out"`
	Path   string `json:"path,omitempty" jsonschema:"only commits that touch this file or directory"`
	Author string `json:"author,omitempty" jsonschema:"only commits by this GitHub login or email address"`
	Since  string `json:"since,omitempty" jsonschema:"only commits at or after this time, ISO 8601 (2024-01-31T00:00:00Z)"`
	Until  string `json:"until,omitempty" jsonschema:"only commits before this time, ISO 8601"`
	Paging
}

// CommitList is one page of commits, newest first.
type CommitList struct {
	Commits  []Commit `json:"commits"`
	NextPage int      `json:"next_page" jsonschema:"page to ask for next; 0 when this is the last page"`
}

var listCommits = pdk.Tool("github_list_commits",
	"Lists commits reachable from a branch or commit, newest first, one page at a time; can narrow to a path, an author or a time range.",
	func(_ pdk.Context, in ListCommitsInput) (CommitList, error) {
		path, err := in.path("commits")
		if err != nil {
			return CommitList{}, err
		}
		q := url.Values{}
		for key, v := range map[string]string{"sha": in.SHA, "path": in.Path, "author": in.Author, "since": in.Since, "until": in.Until} {
			if v != "" {
				q.Set(key, v)
			}
		}
		in.Paging.set(q)
		var commits []ghCommit
		resp, err := send("GET", path, q, nil, &commits)
		if err != nil {
			return CommitList{}, err
		}
		out := CommitList{Commits: make([]Commit, 0, len(commits)), NextPage: nextPage(resp.Header)}
		for _, c := range commits {
			out.Commits = append(out.Commits, c.out())
		}
		return out, nil
	}, readOptions("List commits")...)

// GetCommitInput is the input of github_get_commit.
type GetCommitInput struct {
	RepoRef
	Ref string `json:"ref" jsonschema:"commit SHA, branch name or tag name"`
}

var getCommit = pdk.Tool("github_get_commit",
	"Returns one commit with its message, parents, change counts and the files it changed (with patches).",
	func(_ pdk.Context, in GetCommitInput) (Commit, error) {
		if strings.TrimSpace(in.Ref) == "" {
			return Commit{}, pdk.InvalidArguments("ref must not be empty").WithDetails(map[string]string{"field": "ref"})
		}
		path, err := in.path("commits", in.Ref)
		if err != nil {
			return Commit{}, err
		}
		var c ghCommit
		if _, err := send("GET", path, nil, nil, &c); err != nil {
			return Commit{}, err
		}
		return c.out(), nil
	}, readOptions("Get a commit")...)

// maxContentBytes caps the decoded file text github_get_contents returns.
const maxContentBytes = 256 << 10

// GetContentsInput is the input of github_get_contents.
type GetContentsInput struct {
	RepoRef
	Path string `json:"path,omitempty" jsonschema:"file or directory path in the repository, e.g. src/main.go; empty for the root directory"`
	Ref  string `json:"ref,omitempty" jsonschema:"branch, tag or commit SHA; the default branch when left out"`
}

// ContentEntry is one entry of a directory listing.
type ContentEntry struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Type string `json:"type" jsonschema:"file, dir, symlink or submodule"`
	Size int64  `json:"size"`
	SHA  string `json:"sha"`
}

// Contents is a file with its text, or a directory with its entries.
type Contents struct {
	Type      string         `json:"type" jsonschema:"file, dir, symlink or submodule"`
	Path      string         `json:"path"`
	SHA       string         `json:"sha,omitempty"`
	Size      int64          `json:"size,omitempty" jsonschema:"file size in bytes"`
	Content   string         `json:"content,omitempty" jsonschema:"the file's text, decoded; cut at 256 KiB"`
	Truncated bool           `json:"truncated,omitempty" jsonschema:"true when content was cut or the file is too large for GitHub to return"`
	Binary    bool           `json:"binary,omitempty" jsonschema:"true when the file is not UTF-8 text; content is then left out"`
	Target    string         `json:"target,omitempty" jsonschema:"where a symlink points"`
	HTMLURL   string         `json:"html_url,omitempty"`
	Entries   []ContentEntry `json:"entries,omitempty" jsonschema:"a directory's entries"`
}

// ghContent decodes a file, symlink or submodule of the contents API, or
// an entry of a directory listing.
type ghContent struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Path     string `json:"path"`
	SHA      string `json:"sha"`
	Size     int64  `json:"size"`
	Encoding string `json:"encoding"`
	Content  string `json:"content"`
	Target   string `json:"target"`
	HTMLURL  string `json:"html_url"`
}

var getContents = pdk.Tool("github_get_contents",
	"Returns a file's text (decoded, cut at 256 KiB) or a directory's entries, at a branch, tag or commit.",
	func(_ pdk.Context, in GetContentsInput) (Contents, error) {
		segments := []string{"contents"}
		if p := strings.Trim(in.Path, "/"); p != "" {
			for _, s := range strings.Split(p, "/") {
				if s == "" || s == "." || s == ".." {
					return Contents{}, pdk.InvalidArguments("path %q has an empty, '.' or '..' segment", in.Path).
						WithDetails(map[string]string{"field": "path"})
				}
				segments = append(segments, s)
			}
		}
		path, err := in.path(segments...)
		if err != nil {
			return Contents{}, err
		}
		q := url.Values{}
		if in.Ref != "" {
			q.Set("ref", in.Ref)
		}
		resp, err := send("GET", path, q, nil, nil)
		if err != nil {
			return Contents{}, err
		}
		if body := strings.TrimSpace(string(resp.Body)); strings.HasPrefix(body, "[") {
			var entries []ghContent
			if err := resp.DecodeJSON(&entries); err != nil {
				return Contents{}, err
			}
			out := Contents{Type: "dir", Path: strings.Trim(in.Path, "/"), Entries: make([]ContentEntry, 0, len(entries))}
			for _, e := range entries {
				out.Entries = append(out.Entries, ContentEntry{Name: e.Name, Path: e.Path, Type: e.Type, Size: e.Size, SHA: e.SHA})
			}
			return out, nil
		}
		var c ghContent
		if err := resp.DecodeJSON(&c); err != nil {
			return Contents{}, err
		}
		return c.out()
	}, readOptions("Get file or directory contents")...)

// out decodes a file's base64 content, capping the text.
func (c ghContent) out() (Contents, error) {
	out := Contents{Type: c.Type, Path: c.Path, SHA: c.SHA, Size: c.Size, Target: c.Target, HTMLURL: c.HTMLURL}
	if c.Type != "file" {
		return out, nil
	}
	if c.Encoding != "base64" {
		// GitHub sends encoding "none" and no content for files over 1 MB.
		out.Truncated = c.Size > 0
		return out, nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, c.Content))
	if err != nil {
		return Contents{}, pdk.UpstreamError("GitHub sent file content that is not base64: %v", err)
	}
	if len(raw) > maxContentBytes {
		raw, out.Truncated = raw[:maxContentBytes], true
		for len(raw) > 0 && !utf8.Valid(raw) && len(raw) > maxContentBytes-utf8.UTFMax {
			raw = raw[:len(raw)-1]
		}
	}
	if !utf8.Valid(raw) {
		out.Binary = true
		return out, nil
	}
	out.Content = string(raw)
	return out, nil
}
