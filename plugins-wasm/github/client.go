package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	pdk "github.com/workbench-dev/workbench/pdk/go"
)

// version is the plugin's version, also sent in the User-Agent.
const version = "0.1.0"

// api sends every request with the headers GitHub documents for REST API
// version 2022-11-28. It never sets Authorization: the host does.
var api = &pdk.HTTPClient{
	Header: pdk.Header{
		"Accept":               {"application/vnd.github+json"},
		"X-GitHub-Api-Version": {"2022-11-28"},
		"User-Agent":           {"workbench-github-plugin/" + version},
	},
	Timeout: 20 * time.Second,
}

// Paging selects one page of a list. It is embedded in the input of every
// list tool.
type Paging struct {
	PerPage int `json:"per_page,omitempty" jsonschema:"results per page, 1 to 100" minimum:"1" maximum:"100" default:"30"`
	Page    int `json:"page,omitempty" jsonschema:"page number, starting at 1" minimum:"1" default:"1"`
}

// set adds page and per_page to q.
func (p Paging) set(q url.Values) {
	q.Set("per_page", strconv.Itoa(p.PerPage))
	q.Set("page", strconv.Itoa(p.Page))
}

// RepoRef names one repository. It is embedded in the input of every
// repository tool.
type RepoRef struct {
	Owner string `json:"owner" jsonschema:"account or organization that owns the repository, e.g. octocat"`
	Repo  string `json:"repo" jsonschema:"repository name without the owner, e.g. hello-world"`
}

var (
	// ownerPattern is GitHub's rule for account and organization names:
	// letters, digits and hyphens, not starting with a hyphen, at most 39.
	ownerPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}$`)
	// repoPattern is GitHub's rule for repository names: letters, digits,
	// '.', '-' and '_', at most 100.
	repoPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// path validates the reference and returns /repos/{owner}/{repo} followed
// by the escaped segments in rest.
func (r RepoRef) path(rest ...string) (string, error) {
	if !ownerPattern.MatchString(r.Owner) {
		return "", pdk.InvalidArguments("owner %q is not a GitHub account name: use 1 to 39 letters, digits or hyphens, not starting with a hyphen", r.Owner).
			WithDetails(map[string]string{"field": "owner"})
	}
	if !repoPattern.MatchString(r.Repo) || r.Repo == "." || r.Repo == ".." {
		return "", pdk.InvalidArguments("repo %q is not a GitHub repository name: use 1 to 100 letters, digits, '.', '-' or '_'", r.Repo).
			WithDetails(map[string]string{"field": "repo"})
	}
	segments := append([]string{"repos", r.Owner, r.Repo}, rest...)
	for i, s := range segments {
		segments[i] = url.PathEscape(s)
	}
	return "/" + strings.Join(segments, "/"), nil
}

// send performs one GitHub API request: path is relative to the base URL,
// body (if not nil) is sent as JSON, and a 2xx JSON answer is decoded into
// out (if not nil). Non-2xx answers become tool errors (see apiError).
func send(method, path string, query url.Values, body, out any) (*pdk.Response, error) {
	u := pdk.BaseURL() + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	resp, err := api.SendJSON(method, u, body)
	if err != nil {
		return nil, err
	}
	if !resp.OK() {
		return nil, apiError(method, path, resp)
	}
	if out != nil {
		if err := resp.DecodeJSON(out); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// githubError is GitHub's documented error body.
type githubError struct {
	Message          string             `json:"message"`
	DocumentationURL string             `json:"documentation_url"`
	Errors           []githubFieldError `json:"errors"`
}

// githubFieldError is one entry of a 422 response's errors array.
type githubFieldError struct {
	Resource string `json:"resource,omitempty"`
	Field    string `json:"field,omitempty"`
	Code     string `json:"code,omitempty"`
	Message  string `json:"message,omitempty"`
}

// UnmarshalJSON reads an entry of the errors array. GitHub sends objects
// for field errors and plain strings for some others (a review on one's own
// pull request, for one); a string becomes the message.
func (e *githubFieldError) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		*e = githubFieldError{}
		return json.Unmarshal(b, &e.Message)
	}
	type plain githubFieldError
	return json.Unmarshal(b, (*plain)(e))
}

// describe renders a field error as "field: code" or its custom message.
func (e githubFieldError) describe() string {
	switch {
	case e.Message != "" && e.Field != "":
		return e.Field + ": " + e.Message
	case e.Message != "":
		return e.Message
	case e.Field != "":
		return e.Field + ": " + e.Code
	}
	return e.Code
}

// errorDetails is what a mapped error carries in details.
type errorDetails struct {
	Status           int                `json:"status"`
	DocumentationURL string             `json:"documentation_url,omitempty"`
	Errors           []githubFieldError `json:"errors,omitempty"`
	RateLimitReset   string             `json:"rate_limit_reset,omitempty"`
	RetryAfter       int                `json:"retry_after_seconds,omitempty"`
}

// apiError maps a non-2xx GitHub response to a tool error code, following
// GitHub's documented statuses.
func apiError(method, path string, resp *pdk.Response) *pdk.Error {
	var body githubError
	if err := json.Unmarshal(resp.Body, &body); err != nil || body.Message == "" {
		body.Message = strings.TrimSpace(string(resp.Body[:min(len(resp.Body), 200)]))
		if body.Message == "" {
			body.Message = fmt.Sprintf("HTTP status %d", resp.Status)
		}
	}
	details := errorDetails{Status: resp.Status, DocumentationURL: body.DocumentationURL, Errors: body.Errors}
	where := fmt.Sprintf("GitHub %s %s", method, path)
	var e *pdk.Error
	switch s := resp.Status; {
	case s == 401:
		e = pdk.Unauthorized("%s: %s: the GitHub connection is no longer valid; reconnect GitHub", where, body.Message)
	case s == 429 || (s == 403 && (resp.Header.Get("X-RateLimit-Remaining") == "0" || resp.Header.Get("Retry-After") != "")):
		e = pdk.RateLimited("%s: %s", where, body.Message)
		if reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			details.RateLimitReset = time.Unix(reset, 0).UTC().Format(time.RFC3339)
			e.Message += "; the limit resets at " + details.RateLimitReset
		}
		if after, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			details.RetryAfter = after
			e.Message += fmt.Sprintf("; retry after %d seconds", after)
		}
	case s == 403:
		e = pdk.Forbidden("%s: %s", where, body.Message)
	case s == 404 || s == 410:
		e = pdk.NotFound("%s: %s: it does not exist or the connected account cannot see it", where, body.Message)
	case s == 405 || s == 409:
		e = pdk.Conflict("%s: %s", where, body.Message)
	case s == 422:
		parts := make([]string, 0, len(body.Errors))
		for _, fe := range body.Errors {
			parts = append(parts, fe.describe())
		}
		e = pdk.Errorf(pdk.CodeValidationFailed, "%s: %s", where, body.Message)
		if len(parts) > 0 {
			e.Message += ": " + strings.Join(parts, "; ")
		}
	case s == 400:
		e = pdk.InvalidArguments("%s: %s", where, body.Message)
	default:
		e = pdk.UpstreamError("%s: status %d: %s", where, s, body.Message)
	}
	return e.WithDetails(details)
}

// nextPage returns the page number of the Link header's rel="next" URL, or 0
// when there is no next page.
func nextPage(h pdk.Header) int {
	for _, value := range h.Values("Link") {
		for _, link := range parseLinks(value) {
			if !link.rels["next"] {
				continue
			}
			u, err := url.Parse(link.url)
			if err != nil {
				return 0
			}
			n, err := strconv.Atoi(u.Query().Get("page"))
			if err != nil || n < 1 {
				return 0
			}
			return n
		}
	}
	return 0
}

// link is one entry of a Link header (RFC 8288).
type link struct {
	url  string
	rels map[string]bool
}

// parseLinks splits `<url>; rel="next", <url>; rel="last"` into links.
// Entries it cannot read are skipped.
func parseLinks(header string) []link {
	var links []link
	for rest := header; ; {
		start := strings.IndexByte(rest, '<')
		if start < 0 {
			return links
		}
		end := strings.IndexByte(rest[start:], '>')
		if end < 0 {
			return links
		}
		l := link{url: rest[start+1 : start+end], rels: map[string]bool{}}
		rest = rest[start+end+1:]
		params := rest
		if next := strings.IndexByte(rest, '<'); next >= 0 {
			params = rest[:next]
		}
		for _, p := range strings.Split(params, ";") {
			key, value, ok := strings.Cut(strings.TrimSpace(strings.TrimRight(strings.TrimSpace(p), ",")), "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(key), "rel") {
				continue
			}
			for _, rel := range strings.Fields(strings.Trim(strings.TrimSpace(value), `"`)) {
				l.rels[strings.ToLower(rel)] = true
			}
		}
		links = append(links, l)
	}
}
