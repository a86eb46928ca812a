package githubtest

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Workflow seeds a GitHub Actions workflow.
type Workflow struct {
	Name  string
	Path  string // such as .github/workflows/ci.yml
	State string // "active" when empty
}

type workflowRecord struct {
	Workflow
	id      int64
	created time.Time
}

// WorkflowRun seeds a workflow run.
type WorkflowRun struct {
	WorkflowID int64
	Branch     string // the default branch when empty
	Event      string // "push" when empty
	Status     string // "completed" when empty
	Conclusion string // for completed runs, such as success or failure
	Actor      string // the authenticated user when empty
}

type runRecord struct {
	WorkflowRun
	id       int64
	number   int
	headSHA  string
	workflow *workflowRecord
	created  time.Time
}

// AddWorkflow adds a workflow and returns its id.
func (f *Fake) AddWorkflow(owner, repo string, w Workflow) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(owner, repo)
	if w.State == "" {
		w.State = "active"
	}
	rec := &workflowRecord{Workflow: w, id: f.id(), created: f.now()}
	r.workflows = append(r.workflows, rec)
	return rec.id
}

// AddWorkflowRun adds a run of a workflow at the head of its branch and
// returns its id.
func (f *Fake) AddWorkflowRun(owner, repo string, run WorkflowRun) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(owner, repo)
	i := slices.IndexFunc(r.workflows, func(w *workflowRecord) bool { return w.id == run.WorkflowID })
	if i < 0 {
		panic(fmt.Sprintf("githubtest: %s/%s has no workflow %d", owner, repo, run.WorkflowID))
	}
	if run.Branch == "" {
		run.Branch = r.DefaultBranch
	}
	f.ensureBranch(r, run.Branch)
	run.Event = cmp.Or(run.Event, "push")
	run.Status = cmp.Or(run.Status, "completed")
	run.Actor = cmp.Or(run.Actor, f.login)
	number := 1
	for _, other := range r.runs {
		if other.workflow == r.workflows[i] {
			number++
		}
	}
	rec := &runRecord{WorkflowRun: run, id: f.id(), number: number, headSHA: r.branchSHA[run.Branch],
		workflow: r.workflows[i], created: f.now()}
	r.runs = append(r.runs, rec)
	return rec.id
}

func (f *Fake) workflowJSON(r *repoRecord, w *workflowRecord) map[string]any {
	name := r.Owner + "/" + r.Name
	return map[string]any{
		"id": w.id, "node_id": fmt.Sprintf("W_%d", w.id), "name": w.Name, "path": w.Path, "state": w.State,
		"created_at": timestamp(w.created), "updated_at": timestamp(w.created),
		"url":       fmt.Sprintf("%s/repos/%s/actions/workflows/%d", f.URL, name, w.id),
		"html_url":  "https://github.com/" + name + "/blob/" + r.DefaultBranch + "/" + w.Path,
		"badge_url": "https://github.com/" + name + "/workflows/" + w.Name + "/badge.svg",
	}
}

func (f *Fake) runJSON(r *repoRecord, run *runRecord) map[string]any {
	name := r.Owner + "/" + r.Name
	return map[string]any{
		"id": run.id, "node_id": fmt.Sprintf("WFR_%d", run.id), "name": run.workflow.Name,
		"display_title": r.commits[run.headSHA].message, "head_branch": run.Branch, "head_sha": run.headSHA,
		"path": run.workflow.Path, "run_number": run.number, "run_attempt": 1, "event": run.Event,
		"status": run.Status, "conclusion": nullable(run.Conclusion), "workflow_id": run.workflow.id,
		"actor": f.accountJSON(run.Actor), "triggering_actor": f.accountJSON(run.Actor),
		"url":        fmt.Sprintf("%s/repos/%s/actions/runs/%d", f.URL, name, run.id),
		"html_url":   fmt.Sprintf("https://github.com/%s/actions/runs/%d", name, run.id),
		"created_at": timestamp(run.created), "updated_at": timestamp(run.created), "run_started_at": timestamp(run.created),
	}
}

func (f *Fake) listWorkflows(x *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	out := []map[string]any{}
	for _, w := range paginate(x, f.URL, r.workflows) {
		out = append(out, f.workflowJSON(r, w))
	}
	return http.StatusOK, map[string]any{"total_count": len(r.workflows), "workflows": out}, nil
}

// runStatuses are the values GitHub accepts for the status filter: a status
// or a conclusion.
var runStatuses = []string{"completed", "action_required", "cancelled", "failure", "neutral", "skipped", "stale",
	"success", "timed_out", "in_progress", "queued", "requested", "waiting", "pending"}

// listRuns serves GET /repos/{owner}/{repo}/actions/runs, newest first,
// with the actor, branch, event, status and head_sha filters.
func (f *Fake) listRuns(x *exchange, parts []string) (int, any, *apiError) {
	r, e := f.repo(parts)
	if e != nil {
		return 0, nil, e
	}
	status, e := x.enumParam("WorkflowRun", "status", "", runStatuses...)
	if e != nil {
		return 0, nil, e
	}
	q := x.r.URL.Query()
	var runs []*runRecord
	for _, run := range slices.Backward(r.runs) {
		if (status != "" && run.Status != status && run.Conclusion != status) ||
			(q.Get("branch") != "" && q.Get("branch") != run.Branch) ||
			(q.Get("event") != "" && q.Get("event") != run.Event) ||
			(q.Get("actor") != "" && !strings.EqualFold(q.Get("actor"), run.Actor)) ||
			(q.Get("head_sha") != "" && q.Get("head_sha") != run.headSHA) {
			continue
		}
		runs = append(runs, run)
	}
	out := []map[string]any{}
	for _, run := range paginate(x, f.URL, runs) {
		out = append(out, f.runJSON(r, run))
	}
	return http.StatusOK, map[string]any{"total_count": len(runs), "workflow_runs": out}, nil
}
