package main

import (
	"net/url"
	"strings"

	pdk "github.com/workbench-dev/workbench/pdk/go"
)

// ghReview decodes a pull request review.
type ghReview struct {
	ID          int64     `json:"id"`
	User        ghAccount `json:"user"`
	Body        string    `json:"body"`
	State       string    `json:"state"`
	CommitID    string    `json:"commit_id"`
	HTMLURL     string    `json:"html_url"`
	SubmittedAt string    `json:"submitted_at"`
}

// Review is a pull request review.
type Review struct {
	ID          int64  `json:"id"`
	User        string `json:"user" jsonschema:"login of the reviewer"`
	State       string `json:"state" jsonschema:"APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED or PENDING"`
	Body        string `json:"body,omitempty"`
	CommitID    string `json:"commit_id" jsonschema:"the commit the review is about"`
	HTMLURL     string `json:"html_url"`
	SubmittedAt string `json:"submitted_at,omitempty"`
}

func (r ghReview) out() Review {
	return Review{ID: r.ID, User: r.User.Login, State: r.State, Body: r.Body, CommitID: r.CommitID,
		HTMLURL: r.HTMLURL, SubmittedAt: r.SubmittedAt}
}

// ListReviewsInput is the input of github_list_reviews.
type ListReviewsInput struct {
	PullRef
	Paging
}

// ReviewList is one page of reviews, oldest first.
type ReviewList struct {
	Reviews  []Review `json:"reviews"`
	NextPage int      `json:"next_page" jsonschema:"page to ask for next; 0 when this is the last page"`
}

var listReviews = pdk.Tool("github_list_reviews",
	"Lists the reviews of a pull request, oldest first, one page at a time.",
	func(_ pdk.Context, in ListReviewsInput) (ReviewList, error) {
		path, err := in.path("reviews")
		if err != nil {
			return ReviewList{}, err
		}
		q := url.Values{}
		in.Paging.set(q)
		var reviews []ghReview
		resp, err := send("GET", path, q, nil, &reviews)
		if err != nil {
			return ReviewList{}, err
		}
		out := ReviewList{Reviews: make([]Review, 0, len(reviews)), NextPage: nextPage(resp.Header)}
		for _, r := range reviews {
			out.Reviews = append(out.Reviews, r.out())
		}
		return out, nil
	}, readOptions("List pull request reviews")...)

// CreateReviewInput is the input of github_create_review.
type CreateReviewInput struct {
	PullRef
	Event    string `json:"event" jsonschema:"the verdict" enum:"APPROVE,REQUEST_CHANGES,COMMENT"`
	Body     string `json:"body,omitempty" jsonschema:"the review text, in GitHub Markdown; required for REQUEST_CHANGES and COMMENT"`
	CommitID string `json:"commit_id,omitempty" jsonschema:"review this commit; the pull request's head when left out"`
}

// createReviewBody is GitHub's request body for submitting a review.
type createReviewBody struct {
	Event    string `json:"event"`
	Body     string `json:"body,omitempty"`
	CommitID string `json:"commit_id,omitempty"`
}

var createReview = pdk.Tool("github_create_review",
	"Submits a review on a pull request: approve it, request changes or comment.",
	func(_ pdk.Context, in CreateReviewInput) (Review, error) {
		path, err := in.path("reviews")
		if err != nil {
			return Review{}, err
		}
		if in.Event != "APPROVE" && strings.TrimSpace(in.Body) == "" {
			return Review{}, pdk.InvalidArguments("body must not be empty when event is %s", in.Event).
				WithDetails(map[string]string{"field": "body"})
		}
		var r ghReview
		body := createReviewBody{Event: in.Event, Body: in.Body, CommitID: in.CommitID}
		if _, err := send("POST", path, nil, body, &r); err != nil {
			return Review{}, err
		}
		return r.out(), nil
	}, pdk.OpenWorld(), pdk.Title("Review a pull request"))
