package atlassianjiratest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// User seeds a user.
type User struct {
	AccountID   string // generated when empty
	DisplayName string
	Email       string
	Inactive    bool
}

// Project seeds a project.
type Project struct {
	Key, Name   string
	Description string
	Lead        string // account id; the authenticated user when empty
	TypeKey     string // "software" when empty
	// IssueTypes are the names of the project's issue types; Task, Bug,
	// Story, Epic and Sub-task when empty.
	IssueTypes []string
	// NoDelete denies the authenticated user the delete-issues permission.
	NoDelete bool
}

// Issue seeds or reads back an issue.
type Issue struct {
	Key         string // set by the fake
	ID          string // set by the fake
	Project     string // project key
	Summary     string
	Description any    // an ADF document or nil
	Type        string // "Task" when empty
	Status      string // "To Do" when empty
	Priority    string // "Medium" when empty
	Assignee    string // account id or ""
	Reporter    string // account id; the authenticated user when empty
	Labels      []string
	Parent      string // parent issue key
	StoryPoints float64
}

// Comment seeds or reads back a comment.
type Comment struct {
	ID     string // set by the fake
	Author string // account id; the authenticated user when empty
	Body   any    // an ADF document
}

type issueType struct {
	id      string
	name    string
	subtask bool
}

type projectRecord struct {
	Project
	id         string
	issueTypes []issueType
}

type issueRecord struct {
	id               int
	key              string
	project          *projectRecord
	summary          string
	description      any
	typ              issueType
	status           string
	priority         string
	assignee         string
	reporter         string
	labels           []string
	parent           string
	storyPoints      float64
	created, updated time.Time
	comments         []*commentRecord
}

type commentRecord struct {
	id               int
	author           string
	body             any
	created, updated time.Time
}

// statusInfo describes a workflow status: its id and category.
type statusInfo struct {
	id, category, categoryName, color string
	categoryID                        int
}

// statuses is the fake's workflow, shared by every project.
var statuses = map[string]statusInfo{
	"To Do":       {"10000", "new", "To Do", "blue-gray", 2},
	"In Progress": {"3", "indeterminate", "In Progress", "yellow", 4},
	"Done":        {"10001", "done", "Done", "green", 3},
}

// transition is one workflow transition to a status.
type transition struct {
	id, name, to string
}

var transitions = []transition{
	{"11", "Back to To Do", "To Do"},
	{"21", "Start Progress", "In Progress"},
	{"31", "Done", "Done"},
}

var priorities = []string{"Highest", "High", "Medium", "Low", "Lowest"}

// AddUser adds a user and returns its account id.
func (f *Fake) AddUser(u User) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if u.AccountID == "" {
		u.AccountID = fmt.Sprintf("712020:%08d-0000-4000-8000-%012d", len(f.users)+1, len(f.users)+1)
	}
	f.users = append(f.users, &u)
	return u.AccountID
}

// AddProject adds a project.
func (f *Fake) AddProject(p Project) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.Lead == "" {
		p.Lead = f.me
	}
	if p.TypeKey == "" {
		p.TypeKey = "software"
	}
	if len(p.IssueTypes) == 0 {
		p.IssueTypes = []string{"Task", "Bug", "Story", "Epic", "Sub-task"}
	}
	rec := &projectRecord{Project: p, id: strconv.Itoa(10000 + len(f.projects))}
	for i, name := range p.IssueTypes {
		rec.issueTypes = append(rec.issueTypes, issueType{id: strconv.Itoa(10001 + i), name: name, subtask: name == "Sub-task"})
	}
	f.projects = append(f.projects, rec)
}

// AddIssue adds an issue to an existing project and returns its key.
func (f *Fake) AddIssue(is Issue) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.project(is.Project)
	if p == nil {
		panic("atlassianjiratest: AddIssue in unknown project " + is.Project)
	}
	typ, ok := p.issueType(cmpOr(is.Type, "Task"))
	if !ok {
		panic("atlassianjiratest: AddIssue with unknown type " + is.Type)
	}
	rec := f.newIssue(p, typ, is.Summary)
	rec.description = is.Description
	rec.status = cmpOr(is.Status, "To Do")
	rec.priority = cmpOr(is.Priority, "Medium")
	rec.assignee = is.Assignee
	rec.reporter = cmpOr(is.Reporter, f.me)
	rec.labels = append([]string(nil), is.Labels...)
	rec.parent = is.Parent
	rec.storyPoints = is.StoryPoints
	return rec.key
}

// AddComment adds a comment to an issue and returns its id.
func (f *Fake) AddComment(key string, c Comment) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	is := f.issue(key)
	if is == nil {
		panic("atlassianjiratest: AddComment on unknown issue " + key)
	}
	return f.newComment(is, cmpOr(c.Author, f.me), c.Body).idString()
}

// Issue returns the current state of an issue, or false.
func (f *Fake) Issue(key string) (Issue, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	is := f.issue(key)
	if is == nil {
		return Issue{}, false
	}
	return Issue{
		Key: is.key, ID: strconv.Itoa(is.id), Project: is.project.Key, Summary: is.summary, Description: is.description,
		Type: is.typ.name, Status: is.status, Priority: is.priority, Assignee: is.assignee, Reporter: is.reporter,
		Labels: append([]string(nil), is.labels...), Parent: is.parent, StoryPoints: is.storyPoints,
	}, true
}

// Comments returns an issue's comments.
func (f *Fake) Comments(key string) []Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	is := f.issue(key)
	if is == nil {
		return nil
	}
	var out []Comment
	for _, c := range is.comments {
		out = append(out, Comment{ID: c.idString(), Author: c.author, Body: c.body})
	}
	return out
}

func (f *Fake) newIssue(p *projectRecord, typ issueType, summary string) *issueRecord {
	f.nextIssue++
	n := 1
	for _, other := range f.issues {
		if other.project == p {
			n++
		}
	}
	now := f.now()
	rec := &issueRecord{
		id: f.nextIssue, key: fmt.Sprintf("%s-%d", p.Key, n), project: p, summary: summary, typ: typ,
		status: "To Do", priority: "Medium", reporter: f.me, labels: []string{}, created: now, updated: now,
	}
	f.issues = append(f.issues, rec)
	return rec
}

func (f *Fake) newComment(is *issueRecord, author string, body any) *commentRecord {
	f.nextCmt++
	now := f.now()
	c := &commentRecord{id: f.nextCmt, author: author, body: body, created: now, updated: now}
	is.comments = append(is.comments, c)
	is.updated = now
	return c
}

func (c *commentRecord) idString() string { return strconv.Itoa(c.id) }

// project finds a project by key (any case) or id.
func (f *Fake) project(ref string) *projectRecord {
	for _, p := range f.projects {
		if strings.EqualFold(p.Key, ref) || p.id == ref {
			return p
		}
	}
	return nil
}

// issue finds an issue by key (any case) or id.
func (f *Fake) issue(ref string) *issueRecord {
	for _, is := range f.issues {
		if strings.EqualFold(is.key, ref) || strconv.Itoa(is.id) == ref {
			return is
		}
	}
	return nil
}

func (f *Fake) user(accountID string) *User {
	for _, u := range f.users {
		if u.AccountID == accountID {
			return u
		}
	}
	return nil
}

func (p *projectRecord) issueType(name string) (issueType, bool) {
	for _, t := range p.issueTypes {
		if strings.EqualFold(t.name, name) {
			return t, true
		}
	}
	return issueType{}, false
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// JSON renderings, shaped like Jira's.

func (f *Fake) userJSON(accountID string) any {
	u := f.user(accountID)
	if u == nil {
		return nil
	}
	return map[string]any{
		"self":         f.URL + "/rest/api/3/user?accountId=" + u.AccountID,
		"accountId":    u.AccountID,
		"accountType":  "atlassian",
		"emailAddress": u.Email,
		"avatarUrls":   map[string]string{"48x48": "https://avatar.example/48.png"},
		"displayName":  u.DisplayName,
		"active":       !u.Inactive,
		"timeZone":     "Europe/London",
		"locale":       "en_GB",
	}
}

func (f *Fake) projectJSON(p *projectRecord, expand []string) map[string]any {
	out := map[string]any{
		"self":           f.URL + "/rest/api/3/project/" + p.id,
		"id":             p.id,
		"key":            p.Key,
		"name":           p.Name,
		"projectTypeKey": p.TypeKey,
		"simplified":     false,
		"style":          "classic",
		"isPrivate":      false,
		"avatarUrls":     map[string]string{"48x48": "https://avatar.example/p48.png"},
	}
	if slices.Contains(expand, "description") {
		out["description"] = p.Description
	}
	if slices.Contains(expand, "lead") {
		out["lead"] = f.userJSON(p.Lead)
	}
	if slices.Contains(expand, "issueTypes") {
		var types []any
		for _, t := range p.issueTypes {
			types = append(types, map[string]any{
				"self": f.URL + "/rest/api/3/issuetype/" + t.id, "id": t.id, "name": t.name,
				"description": t.name + " issue type", "subtask": t.subtask, "hierarchyLevel": hierarchy(t),
			})
		}
		out["issueTypes"] = types
	}
	return out
}

// hierarchy is an issue type's level: -1 for sub-tasks, 1 for epics.
func hierarchy(t issueType) int {
	switch {
	case t.subtask:
		return -1
	case t.name == "Epic":
		return 1
	}
	return 0
}

func (f *Fake) statusJSON(name string) map[string]any {
	s := statuses[name]
	return map[string]any{
		"self": f.URL + "/rest/api/3/status/" + s.id, "description": "", "iconUrl": f.URL + "/images/icons/status.png",
		"name": name, "id": s.id,
		"statusCategory": map[string]any{
			"self": f.URL + "/rest/api/3/statuscategory/" + strconv.Itoa(s.categoryID), "id": s.categoryID,
			"key": s.category, "colorName": s.color, "name": s.categoryName,
		},
	}
}

// allFields renders every field of an issue.
func (f *Fake) allFields(is *issueRecord) map[string]any {
	pr := slices.Index(priorities, is.priority)
	fields := map[string]any{
		"summary":     is.summary,
		"description": is.description,
		"status":      f.statusJSON(is.status),
		"issuetype": map[string]any{
			"self": f.URL + "/rest/api/3/issuetype/" + is.typ.id, "id": is.typ.id, "name": is.typ.name,
			"subtask": is.typ.subtask, "hierarchyLevel": hierarchy(is.typ),
		},
		"priority": map[string]any{"self": f.URL + "/rest/api/3/priority/" + strconv.Itoa(pr+1), "id": strconv.Itoa(pr + 1), "name": is.priority},
		"assignee": f.userJSON(is.assignee),
		"reporter": f.userJSON(is.reporter),
		"creator":  f.userJSON(is.reporter),
		"project":  f.projectJSON(is.project, nil),
		"labels":   append([]string{}, is.labels...),
		"created":  jiraTime(is.created),
		"updated":  jiraTime(is.updated),
		"duedate":  nil,
		"subtasks": []any{},
		"parent":   nil,
		// Story points, a custom field as Jira Software names it.
		"customfield_10016": nil,
	}
	if is.storyPoints != 0 {
		fields["customfield_10016"] = is.storyPoints
	}
	if p := f.issue(is.parent); p != nil {
		fields["parent"] = map[string]any{
			"id": strconv.Itoa(p.id), "key": p.key, "self": f.URL + "/rest/api/3/issue/" + strconv.Itoa(p.id),
			"fields": map[string]any{"summary": p.summary, "status": f.statusJSON(p.status)},
		}
	}
	return fields
}

// issueJSON renders an issue with the requested fields. Jira's field list
// takes names, *all, *navigable and -name exclusions; nil means every field.
func (f *Fake) issueJSON(is *issueRecord, fields []string) map[string]any {
	all := f.allFields(is)
	selected := all
	if fields != nil {
		selected = map[string]any{}
		for _, name := range fields {
			switch {
			case name == "*all" || name == "*navigable":
				for k, v := range all {
					selected[k] = v
				}
			case strings.HasPrefix(name, "-"):
			default:
				if v, ok := all[name]; ok {
					selected[name] = v
				}
			}
		}
		for _, name := range fields {
			if strings.HasPrefix(name, "-") {
				delete(selected, name[1:])
			}
		}
	}
	out := map[string]any{
		"expand": "renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations",
		"id":     strconv.Itoa(is.id),
		"self":   f.URL + "/rest/api/3/issue/" + strconv.Itoa(is.id),
		"key":    is.key,
	}
	if len(selected) > 0 {
		out["fields"] = selected
	}
	return out
}

func (f *Fake) commentJSON(c *commentRecord, is *issueRecord) map[string]any {
	return map[string]any{
		"self":         f.URL + "/rest/api/3/issue/" + strconv.Itoa(is.id) + "/comment/" + c.idString(),
		"id":           c.idString(),
		"author":       f.userJSON(c.author),
		"body":         c.body,
		"updateAuthor": f.userJSON(c.author),
		"created":      jiraTime(c.created),
		"updated":      jiraTime(c.updated),
		"jsdPublic":    true,
	}
}
