package main

import "strings"

// The types below are the plugin's outputs: trimmed views of GitHub's
// payloads. Where GitHub's shape is convenient they decode straight from it;
// the gh* types decode shapes that are flattened on the way out.

// ghAccount is the account object GitHub nests in repositories, issues and
// pull requests.
type ghAccount struct {
	Login string `json:"login"`
}

// ghLabel is a label object.
type ghLabel struct {
	Name string `json:"name"`
}

// logins flattens accounts to their logins.
func logins(accounts []ghAccount) []string {
	out := make([]string, 0, len(accounts))
	for _, a := range accounts {
		out = append(out, a.Login)
	}
	return out
}

// User is the authenticated user.
type User struct {
	Login       string `json:"login"`
	ID          int64  `json:"id"`
	Name        string `json:"name,omitempty"`
	Email       string `json:"email,omitempty"`
	Company     string `json:"company,omitempty"`
	Bio         string `json:"bio,omitempty"`
	Type        string `json:"type"`
	HTMLURL     string `json:"html_url"`
	PublicRepos int    `json:"public_repos"`
	Followers   int    `json:"followers"`
	CreatedAt   string `json:"created_at"`
}

// ghRepo decodes a repository.
type ghRepo struct {
	ID              int64     `json:"id"`
	Name            string    `json:"name"`
	FullName        string    `json:"full_name"`
	Owner           ghAccount `json:"owner"`
	Private         bool      `json:"private"`
	Visibility      string    `json:"visibility"`
	Description     string    `json:"description"`
	HTMLURL         string    `json:"html_url"`
	DefaultBranch   string    `json:"default_branch"`
	Fork            bool      `json:"fork"`
	Archived        bool      `json:"archived"`
	Language        string    `json:"language"`
	Topics          []string  `json:"topics"`
	StargazersCount int       `json:"stargazers_count"`
	ForksCount      int       `json:"forks_count"`
	OpenIssuesCount int       `json:"open_issues_count"`
	PushedAt        string    `json:"pushed_at"`
	UpdatedAt       string    `json:"updated_at"`
}

// Repo is a repository.
type Repo struct {
	FullName        string   `json:"full_name" jsonschema:"owner/name"`
	ID              int64    `json:"id"`
	Name            string   `json:"name"`
	Owner           string   `json:"owner"`
	Private         bool     `json:"private"`
	Visibility      string   `json:"visibility,omitempty"`
	Description     string   `json:"description,omitempty"`
	HTMLURL         string   `json:"html_url"`
	DefaultBranch   string   `json:"default_branch"`
	Fork            bool     `json:"fork"`
	Archived        bool     `json:"archived"`
	Language        string   `json:"language,omitempty"`
	Topics          []string `json:"topics,omitempty"`
	Stars           int      `json:"stars"`
	Forks           int      `json:"forks"`
	OpenIssuesCount int      `json:"open_issues_count" jsonschema:"open issues and pull requests"`
	PushedAt        string   `json:"pushed_at,omitempty"`
	UpdatedAt       string   `json:"updated_at,omitempty"`
}

func (r ghRepo) out() Repo {
	return Repo{
		FullName: r.FullName, ID: r.ID, Name: r.Name, Owner: r.Owner.Login, Private: r.Private,
		Visibility: r.Visibility, Description: r.Description, HTMLURL: r.HTMLURL,
		DefaultBranch: r.DefaultBranch, Fork: r.Fork, Archived: r.Archived, Language: r.Language,
		Topics: r.Topics, Stars: r.StargazersCount, Forks: r.ForksCount,
		OpenIssuesCount: r.OpenIssuesCount, PushedAt: r.PushedAt, UpdatedAt: r.UpdatedAt,
	}
}

func reposOut(in []ghRepo) []Repo {
	out := make([]Repo, 0, len(in))
	for _, r := range in {
		out = append(out, r.out())
	}
	return out
}

// ghIssue decodes an issue. GitHub's issue endpoints also return pull
// requests; those carry a pull_request object.
type ghIssue struct {
	Number        int         `json:"number"`
	Title         string      `json:"title"`
	State         string      `json:"state"`
	StateReason   string      `json:"state_reason"`
	Body          string      `json:"body"`
	User          ghAccount   `json:"user"`
	Labels        []ghLabel   `json:"labels"`
	Assignees     []ghAccount `json:"assignees"`
	Comments      int         `json:"comments"`
	Locked        bool        `json:"locked"`
	PullRequest   *struct{}   `json:"pull_request"`
	HTMLURL       string      `json:"html_url"`
	RepositoryURL string      `json:"repository_url"`
	CreatedAt     string      `json:"created_at"`
	UpdatedAt     string      `json:"updated_at"`
	ClosedAt      string      `json:"closed_at"`
}

// Issue is an issue, or a pull request seen through the issues API.
type Issue struct {
	Number        int      `json:"number"`
	Title         string   `json:"title"`
	State         string   `json:"state" jsonschema:"open or closed"`
	StateReason   string   `json:"state_reason,omitempty"`
	IsPullRequest bool     `json:"is_pull_request" jsonschema:"true when this item is a pull request (GitHub lists pull requests among issues)"`
	Repository    string   `json:"repository,omitempty" jsonschema:"owner/name of the repository (search results)"`
	Body          string   `json:"body,omitempty"`
	User          string   `json:"user" jsonschema:"login of the author"`
	Labels        []string `json:"labels"`
	Assignees     []string `json:"assignees"`
	Comments      int      `json:"comments"`
	Locked        bool     `json:"locked"`
	HTMLURL       string   `json:"html_url"`
	CreatedAt     string   `json:"created_at"`
	UpdatedAt     string   `json:"updated_at"`
	ClosedAt      string   `json:"closed_at,omitempty"`
}

func (i ghIssue) out() Issue {
	labels := make([]string, 0, len(i.Labels))
	for _, l := range i.Labels {
		labels = append(labels, l.Name)
	}
	return Issue{
		Number: i.Number, Title: i.Title, State: i.State, StateReason: i.StateReason,
		IsPullRequest: i.PullRequest != nil, Repository: repoFromURL(i.RepositoryURL), Body: i.Body,
		User: i.User.Login, Labels: labels, Assignees: logins(i.Assignees), Comments: i.Comments,
		Locked: i.Locked, HTMLURL: i.HTMLURL, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt, ClosedAt: i.ClosedAt,
	}
}

// issuesOut converts a list of issues, leaving out bodies to keep lists
// small (github_get_issue returns one with its body).
func issuesOut(in []ghIssue) []Issue {
	out := make([]Issue, 0, len(in))
	for _, i := range in {
		o := i.out()
		o.Body = ""
		out = append(out, o)
	}
	return out
}

// repoFromURL returns owner/name from an API repository URL such as
// https://api.github.com/repos/octo/hello, or "".
func repoFromURL(u string) string {
	_, rest, ok := strings.Cut(u, "/repos/")
	if !ok {
		return ""
	}
	return rest
}

// ghComment decodes an issue comment.
type ghComment struct {
	ID        int64     `json:"id"`
	User      ghAccount `json:"user"`
	Body      string    `json:"body"`
	HTMLURL   string    `json:"html_url"`
	CreatedAt string    `json:"created_at"`
	UpdatedAt string    `json:"updated_at"`
}

// Comment is an issue or pull request comment.
type Comment struct {
	ID        int64  `json:"id"`
	User      string `json:"user"`
	Body      string `json:"body"`
	HTMLURL   string `json:"html_url"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func (c ghComment) out() Comment {
	return Comment{ID: c.ID, User: c.User.Login, Body: c.Body, HTMLURL: c.HTMLURL, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// ghBranch decodes the head or base of a pull request.
type ghBranch struct {
	Label string  `json:"label"`
	Ref   string  `json:"ref"`
	SHA   string  `json:"sha"`
	Repo  *ghRepo `json:"repo"`
}

// Branch is the head or base of a pull request.
type Branch struct {
	Ref        string `json:"ref"`
	SHA        string `json:"sha"`
	Label      string `json:"label,omitempty" jsonschema:"owner:ref"`
	Repository string `json:"repository,omitempty" jsonschema:"owner/name; empty when the fork was deleted"`
}

func (b ghBranch) out() Branch {
	out := Branch{Ref: b.Ref, SHA: b.SHA, Label: b.Label}
	if b.Repo != nil {
		out.Repository = b.Repo.FullName
	}
	return out
}

// ghPull decodes a pull request.
type ghPull struct {
	Number         int         `json:"number"`
	Title          string      `json:"title"`
	State          string      `json:"state"`
	Body           string      `json:"body"`
	User           ghAccount   `json:"user"`
	Draft          bool        `json:"draft"`
	Merged         bool        `json:"merged"`
	Mergeable      *bool       `json:"mergeable"`
	MergeableState string      `json:"mergeable_state"`
	Head           ghBranch    `json:"head"`
	Base           ghBranch    `json:"base"`
	Labels         []ghLabel   `json:"labels"`
	Assignees      []ghAccount `json:"assignees"`
	Commits        int         `json:"commits"`
	Additions      int         `json:"additions"`
	Deletions      int         `json:"deletions"`
	ChangedFiles   int         `json:"changed_files"`
	HTMLURL        string      `json:"html_url"`
	CreatedAt      string      `json:"created_at"`
	UpdatedAt      string      `json:"updated_at"`
	ClosedAt       string      `json:"closed_at"`
	MergedAt       string      `json:"merged_at"`
}

// Pull is a pull request. Merge state and change counts are only known for
// a single pull request (github_get_pull), not in lists.
type Pull struct {
	Number         int      `json:"number"`
	Title          string   `json:"title"`
	State          string   `json:"state" jsonschema:"open or closed"`
	Body           string   `json:"body,omitempty"`
	User           string   `json:"user" jsonschema:"login of the author"`
	Draft          bool     `json:"draft"`
	Merged         bool     `json:"merged"`
	Mergeable      *bool    `json:"mergeable,omitempty" jsonschema:"whether GitHub can merge it; absent while GitHub is still computing it"`
	MergeableState string   `json:"mergeable_state,omitempty"`
	Head           Branch   `json:"head"`
	Base           Branch   `json:"base"`
	Labels         []string `json:"labels"`
	Assignees      []string `json:"assignees"`
	Commits        int      `json:"commits,omitempty"`
	Additions      int      `json:"additions,omitempty"`
	Deletions      int      `json:"deletions,omitempty"`
	ChangedFiles   int      `json:"changed_files,omitempty"`
	HTMLURL        string   `json:"html_url"`
	CreatedAt      string   `json:"created_at"`
	UpdatedAt      string   `json:"updated_at"`
	ClosedAt       string   `json:"closed_at,omitempty"`
	MergedAt       string   `json:"merged_at,omitempty"`
}

func (p ghPull) out() Pull {
	labels := make([]string, 0, len(p.Labels))
	for _, l := range p.Labels {
		labels = append(labels, l.Name)
	}
	return Pull{
		Number: p.Number, Title: p.Title, State: p.State, Body: p.Body, User: p.User.Login,
		Draft: p.Draft, Merged: p.Merged || p.MergedAt != "", Mergeable: p.Mergeable, MergeableState: p.MergeableState,
		Head: p.Head.out(), Base: p.Base.out(), Labels: labels, Assignees: logins(p.Assignees),
		Commits: p.Commits, Additions: p.Additions, Deletions: p.Deletions, ChangedFiles: p.ChangedFiles,
		HTMLURL: p.HTMLURL, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt, ClosedAt: p.ClosedAt, MergedAt: p.MergedAt,
	}
}
