package main

import (
	"net/url"
	"strings"

	pdk "github.com/workbench-dev/workbench/pdk/go"
)

// Label is a repository label.
type Label struct {
	Name        string `json:"name"`
	Color       string `json:"color" jsonschema:"hex colour without the leading #"`
	Description string `json:"description,omitempty"`
	Default     bool   `json:"default" jsonschema:"true for the labels GitHub creates with every repository"`
}

// ListLabelsInput is the input of github_list_labels.
type ListLabelsInput struct {
	RepoRef
	Paging
}

// LabelList is one page of labels.
type LabelList struct {
	Labels   []Label `json:"labels"`
	NextPage int     `json:"next_page" jsonschema:"page to ask for next; 0 when this is the last page"`
}

var listLabels = pdk.Tool("github_list_labels",
	"Lists the labels defined in a repository, one page at a time.",
	func(_ pdk.Context, in ListLabelsInput) (LabelList, error) {
		path, err := in.path("labels")
		if err != nil {
			return LabelList{}, err
		}
		q := url.Values{}
		in.Paging.set(q)
		var labels []Label
		resp, err := send("GET", path, q, nil, &labels)
		if err != nil {
			return LabelList{}, err
		}
		return LabelList{Labels: nonNilLabels(labels), NextPage: nextPage(resp.Header)}, nil
	}, readOptions("List labels")...)

func nonNilLabels(labels []Label) []Label {
	if labels == nil {
		return []Label{}
	}
	return labels
}

// AddLabelsInput is the input of github_add_labels.
type AddLabelsInput struct {
	IssueRef
	Labels []string `json:"labels" jsonschema:"label names to add; existing labels stay"`
}

// IssueLabels is every label an issue has after a change.
type IssueLabels struct {
	Labels []Label `json:"labels"`
}

var addLabels = pdk.Tool("github_add_labels",
	"Adds labels to an issue or pull request, keeping the ones it has. Returns every label it then has.",
	func(_ pdk.Context, in AddLabelsInput) (IssueLabels, error) {
		path, err := in.path("labels")
		if err != nil {
			return IssueLabels{}, err
		}
		if len(in.Labels) == 0 {
			return IssueLabels{}, pdk.InvalidArguments("labels must name at least one label").WithDetails(map[string]string{"field": "labels"})
		}
		for _, l := range in.Labels {
			if strings.TrimSpace(l) == "" {
				return IssueLabels{}, pdk.InvalidArguments("labels must not contain an empty name").WithDetails(map[string]string{"field": "labels"})
			}
		}
		var labels []Label
		if _, err := send("POST", path, nil, map[string][]string{"labels": in.Labels}, &labels); err != nil {
			return IssueLabels{}, err
		}
		return IssueLabels{Labels: nonNilLabels(labels)}, nil
	}, pdk.OpenWorld(), pdk.Idempotent(), pdk.Title("Add labels to an issue"))
