package githubtest

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Review seeds or reads back a pull request review.
type Review struct {
	ID    int64  // set by the fake
	User  string // the authenticated user when empty
	State string // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED or PENDING
	Body  string
}

type reviewRecord struct {
	Review
	commitID  string
	submitted time.Time
}

// AddReview adds a submitted review to a pull request and returns its id.
func (f *Fake) AddReview(owner, repo string, number int, rv Review) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(owner, repo)
	it := r.items[number]
	if it == nil || it.pull == nil {
		panic(fmt.Sprintf("githubtest: %s/%s has no pull request %d", owner, repo, number))
	}
	return f.addReview(r, it, rv, it.pull.headSHA).ID
}

func (f *Fake) addReview(r *repoRecord, it *itemRecord, rv Review, commitID string) *reviewRecord {
	if rv.User == "" {
		rv.User = f.login
	}
	rv.ID = f.id()
	rec := &reviewRecord{Review: rv, commitID: commitID}
	if rv.State != "PENDING" {
		rec.submitted = f.now()
	}
	r.reviews[it.number] = append(r.reviews[it.number], rec)
	return rec
}

// Reviews reads back the reviews of a pull request, oldest first.
func (f *Fake) Reviews(owner, repo string, number int) []Review {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.repos[repoKey(owner, repo)]
	if r == nil {
		return nil
	}
	var out []Review
	for _, rv := range r.reviews[number] {
		out = append(out, rv.Review)
	}
	return out
}

func (f *Fake) reviewJSON(r *repoRecord, number int, rv *reviewRecord) map[string]any {
	name := r.Owner + "/" + r.Name
	return map[string]any{
		"id": rv.ID, "node_id": fmt.Sprintf("PRR_%d", rv.ID), "user": f.accountJSON(rv.User),
		"body": rv.Body, "state": rv.State, "commit_id": rv.commitID, "author_association": "COLLABORATOR",
		"html_url":         fmt.Sprintf("https://github.com/%s/pull/%d#pullrequestreview-%d", name, number, rv.ID),
		"pull_request_url": fmt.Sprintf("%s/repos/%s/pulls/%d", f.URL, name, number),
		"submitted_at":     timestamp(rv.submitted),
	}
}

func (f *Fake) listReviews(x *exchange, parts []string) (int, any, *apiError) {
	r, it, e := f.item(parts, true)
	if e != nil {
		return 0, nil, e
	}
	out := []map[string]any{}
	for _, rv := range paginate(x, f.URL, r.reviews[it.number]) {
		out = append(out, f.reviewJSON(r, it.number, rv))
	}
	return http.StatusOK, out, nil
}

// reviewStates maps a review event to the state it leaves.
var reviewStates = map[string]string{"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED", "": "PENDING"}

// createReview serves POST /repos/{owner}/{repo}/pulls/{n}/reviews with
// GitHub's checks: a known event, a body for REQUEST_CHANGES and COMMENT,
// no approving or requesting changes on one's own pull request, and a
// commit_id that exists.
func (f *Fake) createReview(x *exchange, parts []string) (int, any, *apiError) {
	r, it, e := f.item(parts, true)
	if e != nil {
		return 0, nil, e
	}
	if e := writable(r); e != nil {
		return 0, nil, e
	}
	var in struct {
		CommitID string           `json:"commit_id"`
		Body     string           `json:"body"`
		Event    string           `json:"event"`
		Comments []map[string]any `json:"comments"`
	}
	if e := x.decodeBody(&in); e != nil {
		return 0, nil, e
	}
	state, ok := reviewStates[in.Event]
	if !ok {
		return 0, nil, stringErrors("Unprocessable Entity",
			fmt.Sprintf("Variable $event of type PullRequestReviewEvent was provided invalid value %q", in.Event))
	}
	if (in.Event == "REQUEST_CHANGES" || in.Event == "COMMENT") && strings.TrimSpace(in.Body) == "" {
		return 0, nil, stringErrors("Unprocessable Entity", "Review Body is required when using the "+in.Event+" event")
	}
	if strings.EqualFold(it.user, f.login) {
		switch in.Event {
		case "APPROVE":
			return 0, nil, stringErrors("Unprocessable Entity", "Can not approve your own pull request")
		case "REQUEST_CHANGES":
			return 0, nil, stringErrors("Unprocessable Entity", "Can not request changes on your own pull request")
		}
	}
	commitID := it.pull.headSHA
	if in.CommitID != "" {
		if r.commits[in.CommitID] == nil {
			return 0, nil, stringErrors("Unprocessable Entity", "No commit found for SHA: "+in.CommitID)
		}
		commitID = in.CommitID
	}
	rv := f.addReview(r, it, Review{State: state, Body: in.Body}, commitID)
	return http.StatusOK, f.reviewJSON(r, it.number, rv), nil
}
