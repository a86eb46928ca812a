package githubtest

import (
	"fmt"
	"net/http"
	"slices"
	"time"
)

// Release seeds a release.
type Release struct {
	Tag        string
	Name, Body string
	Target     string // branch the tag is cut from; the default branch when empty
	Draft      bool
	Prerelease bool
	Assets     []string // file names; each asset is 1024 bytes
}

type releaseRecord struct {
	Release
	id                 int64
	sha                string // the tagged commit
	created, published time.Time
}

// AddRelease adds a release whose tag points at the head of its target
// branch, and returns its id. Drafts are not published.
func (f *Fake) AddRelease(owner, repo string, rel Release) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(owner, repo)
	if rel.Target == "" {
		rel.Target = r.DefaultBranch
	}
	sha, ok := r.branchSHA[rel.Target]
	if !ok {
		panic(fmt.Sprintf("githubtest: %s/%s has no branch %q", owner, repo, rel.Target))
	}
	rec := &releaseRecord{Release: rel, id: f.id(), sha: sha, created: f.now()}
	if !rel.Draft {
		rec.published = rec.created
	}
	r.releases = append(r.releases, rec)
	return rec.id
}

func (f *Fake) releaseJSON(r *repoRecord, rel *releaseRecord) map[string]any {
	name := r.Owner + "/" + r.Name
	assets := []map[string]any{}
	for i, a := range rel.Assets {
		assets = append(assets, map[string]any{
			"id": rel.id*100 + int64(i), "name": a, "label": nil, "content_type": "application/octet-stream",
			"state": "uploaded", "size": 1024, "download_count": 3 * (i + 1),
			"browser_download_url": "https://github.com/" + name + "/releases/download/" + rel.Tag + "/" + a,
			"created_at":           timestamp(rel.created), "updated_at": timestamp(rel.created),
		})
	}
	return map[string]any{
		"id": rel.id, "node_id": fmt.Sprintf("RE_%d", rel.id), "tag_name": rel.Tag, "target_commitish": rel.Target,
		"name": nullable(rel.Name), "body": nullable(rel.Body), "draft": rel.Draft, "prerelease": rel.Prerelease,
		"author": f.accountJSON(f.login), "assets": assets,
		"url":        fmt.Sprintf("%s/repos/%s/releases/%d", f.URL, name, rel.id),
		"html_url":   "https://github.com/" + name + "/releases/tag/" + rel.Tag,
		"created_at": timestamp(rel.created), "published_at": timestamp(rel.published),
		"tarball_url": f.URL + "/repos/" + name + "/tarball/" + rel.Tag,
		"zipball_url": f.URL + "/repos/" + name + "/zipball/" + rel.Tag,
	}
}

// newestReleases returns a repository's releases, newest first.
func (r *repoRecord) newestReleases() []*releaseRecord {
	out := slices.Clone(r.releases)
	slices.SortStableFunc(out, func(a, b *releaseRecord) int { return b.created.Compare(a.created) })
	return out
}

func (f *Fake) listReleases(x *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	out := []map[string]any{}
	for _, rel := range paginate(x, f.URL, r.newestReleases()) {
		out = append(out, f.releaseJSON(r, rel))
	}
	return http.StatusOK, out, nil
}

// getLatestRelease serves the most recently published release that is
// neither a draft nor a prerelease; 404 when there is none.
func (f *Fake) getLatestRelease(_ *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	for _, rel := range r.newestReleases() {
		if !rel.Draft && !rel.Prerelease {
			return http.StatusOK, f.releaseJSON(r, rel), nil
		}
	}
	return 0, nil, notFound()
}
