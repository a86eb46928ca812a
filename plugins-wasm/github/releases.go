package main

import (
	"net/url"

	pdk "github.com/workbench-dev/workbench/pdk/go"
)

// ghRelease decodes a release.
type ghRelease struct {
	ID              int64          `json:"id"`
	TagName         string         `json:"tag_name"`
	TargetCommitish string         `json:"target_commitish"`
	Name            string         `json:"name"`
	Body            string         `json:"body"`
	Draft           bool           `json:"draft"`
	Prerelease      bool           `json:"prerelease"`
	Author          ghAccount      `json:"author"`
	HTMLURL         string         `json:"html_url"`
	CreatedAt       string         `json:"created_at"`
	PublishedAt     string         `json:"published_at"`
	Assets          []ReleaseAsset `json:"assets"`
}

// ReleaseAsset is a file attached to a release.
type ReleaseAsset struct {
	Name               string `json:"name"`
	Size               int64  `json:"size"`
	DownloadCount      int    `json:"download_count"`
	BrowserDownloadURL string `json:"browser_download_url"`
}

// Release is a release.
type Release struct {
	ID              int64          `json:"id"`
	TagName         string         `json:"tag_name"`
	Name            string         `json:"name,omitempty"`
	Body            string         `json:"body,omitempty" jsonschema:"release notes"`
	Draft           bool           `json:"draft"`
	Prerelease      bool           `json:"prerelease"`
	TargetCommitish string         `json:"target_commitish" jsonschema:"branch or commit the tag was created from"`
	Author          string         `json:"author"`
	HTMLURL         string         `json:"html_url"`
	CreatedAt       string         `json:"created_at"`
	PublishedAt     string         `json:"published_at,omitempty" jsonschema:"absent for drafts"`
	Assets          []ReleaseAsset `json:"assets"`
}

func (r ghRelease) out() Release {
	assets := r.Assets
	if assets == nil {
		assets = []ReleaseAsset{}
	}
	return Release{ID: r.ID, TagName: r.TagName, Name: r.Name, Body: r.Body, Draft: r.Draft, Prerelease: r.Prerelease,
		TargetCommitish: r.TargetCommitish, Author: r.Author.Login, HTMLURL: r.HTMLURL, CreatedAt: r.CreatedAt,
		PublishedAt: r.PublishedAt, Assets: assets}
}

// ListReleasesInput is the input of github_list_releases.
type ListReleasesInput struct {
	RepoRef
	Paging
}

// ReleaseList is one page of releases, newest first.
type ReleaseList struct {
	Releases []Release `json:"releases" jsonschema:"releases without their notes"`
	NextPage int       `json:"next_page" jsonschema:"page to ask for next; 0 when this is the last page"`
}

var listReleases = pdk.Tool("github_list_releases",
	"Lists a repository's releases, newest first, one page at a time. Drafts are listed only for people with push access.",
	func(_ pdk.Context, in ListReleasesInput) (ReleaseList, error) {
		path, err := in.path("releases")
		if err != nil {
			return ReleaseList{}, err
		}
		q := url.Values{}
		in.Paging.set(q)
		var releases []ghRelease
		resp, err := send("GET", path, q, nil, &releases)
		if err != nil {
			return ReleaseList{}, err
		}
		out := ReleaseList{Releases: make([]Release, 0, len(releases)), NextPage: nextPage(resp.Header)}
		for _, r := range releases {
			o := r.out()
			o.Body = ""
			out.Releases = append(out.Releases, o)
		}
		return out, nil
	}, readOptions("List releases")...)

var getLatestRelease = pdk.Tool("github_get_latest_release",
	"Returns the repository's latest published release (not a draft or prerelease) with its notes and assets. NOT_FOUND when there is none.",
	func(_ pdk.Context, in RepoRef) (Release, error) {
		path, err := in.path("releases", "latest")
		if err != nil {
			return Release{}, err
		}
		var r ghRelease
		if _, err := send("GET", path, nil, nil, &r); err != nil {
			return Release{}, err
		}
		return r.out(), nil
	}, readOptions("Get the latest release")...)
