//! Issue tools: search, count, get, create, update, delete, transitions,
//! comments and assignment.

use crate::adf;
use crate::client::{issue_path, valid_project_ref, Api};
use workbench::http::Query;
use workbench::json::quote;
use workbench::{obj, Error, Input, Map, Value};

/// DEFAULT_FIELDS are the issue fields returned when the caller names none.
pub const DEFAULT_FIELDS: &[&str] = &["summary", "status", "issuetype", "priority", "assignee", "reporter", "project", "labels", "created", "updated"];

/// ISSUE_FIELDS are the default fields of get_issue: the search defaults
/// plus the heavier ones.
const ISSUE_FIELDS: &[&str] = &["description", "parent", "duedate"];

/// user_ref reduces a Jira user object to its id and name; null stays null.
pub fn user_ref(u: &Value) -> Value {
    match u.get_str("accountId") {
        Some(id) => obj! { "account_id" => id, "display_name" => u.get_str("displayName") },
        None => Value::Null,
    }
}

/// issue_summary flattens a Jira issue into the tool output: the common
/// fields get short names and plain values (the description as text), and
/// any other field the caller asked for is kept as Jira sent it under
/// "fields".
pub fn issue_summary(api: &Api, issue: &Value) -> Value {
    let key = issue.get_str("key").unwrap_or_default();
    let mut out = obj! { "id" => issue.get_str("id"), "key" => key, "url" => api.browse_url(key) };
    let mut rest = Map::new();
    let fields = match issue.get_object("fields") {
        Some(f) => f,
        None => return out,
    };
    let name = |v: &Value| -> Value { v.get_str("name").map(Value::from).unwrap_or(Value::Null) };
    for (field, v) in fields.iter() {
        let (k, converted): (&str, Value) = match field {
            "summary" => ("summary", v.clone()),
            "status" => {
                out = out.with("status_category", v.pointer("/statusCategory/key").and_then(Value::as_str));
                ("status", name(v))
            }
            "issuetype" => ("issue_type", name(v)),
            "priority" => ("priority", name(v)),
            "assignee" => ("assignee", user_ref(v)),
            "reporter" => ("reporter", user_ref(v)),
            "project" => ("project", if v.is_null() { Value::Null } else { obj! { "key" => v.get_str("key"), "name" => v.get_str("name") } }),
            "labels" => ("labels", v.clone()),
            "created" => ("created", v.clone()),
            "updated" => ("updated", v.clone()),
            "duedate" => ("due_date", v.clone()),
            "description" => ("description", if v.is_null() { Value::Null } else { Value::from(adf::to_text(v)) }),
            "parent" => ("parent", if v.is_null() { Value::Null } else { obj! { "key" => v.get_str("key"), "summary" => v.pointer("/fields/summary").and_then(Value::as_str) } }),
            other => {
                rest.insert(other, v.clone());
                continue;
            }
        };
        out = out.with(k, converted);
    }
    if !rest.is_empty() {
        out = out.with("fields", rest);
    }
    out
}

fn field_list(input: &Input, defaults: &[&str]) -> Result<Vec<String>, Error> {
    Ok(match input.strings("fields")? {
        Some(f) if !f.is_empty() => f.into_iter().map(str::to_string).collect(),
        _ => defaults.iter().map(|s| s.to_string()).collect(),
    })
}

/// search_issues runs JQL through the enhanced search endpoint,
/// POST /rest/api/3/search/jql, one page at a time.
pub fn search_issues(input: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let fields = field_list(input, DEFAULT_FIELDS)?;
    let mut body = obj! {
        "jql" => input.required_str("jql")?,
        "maxResults" => input.required_i64("max_results")?,
        "fields" => fields.iter().map(|f| Value::from(f.as_str())).collect::<Value>(),
    };
    if let Some(token) = input.str("next_page_token")? {
        body = body.with("nextPageToken", token);
    }
    let resp = api.send("POST", "/rest/api/3/search/jql", &Query::new(), Some(&body))?;
    let issues: Value = resp.get_array("issues").map(|a| a.iter().map(|i| issue_summary(&api, i)).collect()).unwrap_or_else(|| Value::Array(Vec::new()));
    let next = resp.get_str("nextPageToken").filter(|t| !t.is_empty());
    // Jira omits isLast on some pages; without a token there is no next page.
    let is_last = resp.get_bool("isLast").unwrap_or(next.is_none()) || next.is_none();
    Ok(obj! { "issues" => issues, "next_page_token" => next, "is_last" => is_last })
}

/// count_issues asks POST /rest/api/3/search/approximate-count for the
/// number of issues a JQL query matches.
pub fn count_issues(input: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let resp = api.send("POST", "/rest/api/3/search/approximate-count", &Query::new(), Some(&obj! { "jql" => input.required_str("jql")? }))?;
    Ok(obj! { "count" => resp.get("count").cloned().unwrap_or(Value::Null) })
}

/// get_issue returns one issue: GET /rest/api/3/issue/{issueIdOrKey}.
pub fn get_issue(input: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let path = issue_path("issue_key", input.required_str("issue_key")?, "")?;
    let defaults: Vec<&str> = DEFAULT_FIELDS.iter().chain(ISSUE_FIELDS.iter()).copied().collect();
    let fields = field_list(input, &defaults)?;
    let issue = api.get(&path, &Query::new().add("fields", fields.join(",")))?;
    Ok(issue_summary(&api, &issue))
}

/// description_value reads the description inputs: plain text, or an ADF
/// document for rich content. An empty text clears the description.
fn description_value(input: &Input) -> Result<Option<Value>, Error> {
    match (input.str("description")?, input.object("description_adf")?) {
        (Some(_), Some(_)) => Err(Error::invalid_arguments("give description or description_adf, not both")),
        (Some(""), None) => Ok(Some(Value::Null)),
        (Some(text), None) => Ok(Some(adf::from_text(text))),
        (None, Some(doc)) => {
            let doc = Value::Object(doc.clone());
            if !adf::is_document(&doc) {
                return Err(Error::field("description_adf", "must be an ADF document: {\"type\": \"doc\", \"version\": 1, \"content\": [...]}"));
            }
            Ok(Some(doc))
        }
        (None, None) => Ok(None),
    }
}

/// named returns {"name": name}, the way Jira references issue types and
/// priorities.
fn named(name: &str) -> Value {
    obj! { "name" => name }
}

/// create_issue creates an issue: POST /rest/api/3/issue.
pub fn create_issue(input: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let project = input.required_str("project_key")?;
    if !valid_project_ref(project) {
        return Err(Error::field("project_key", format!("{} is not a project key (PROJ) or id", quote(project))));
    }
    let project_ref = if project.bytes().all(|c| c.is_ascii_digit()) { obj! { "id" => project } } else { obj! { "key" => project } };
    let mut fields = obj! {
        "project" => project_ref,
        "summary" => input.required_str("summary")?,
        "issuetype" => named(input.required_str("issue_type")?),
    };
    match description_value(input)? {
        None | Some(Value::Null) => {}
        Some(doc) => fields = fields.with("description", doc),
    }
    if let Some(labels) = input.array("labels")? {
        fields = fields.with("labels", Value::Array(labels.clone()));
    }
    if let Some(p) = input.str("priority")? {
        fields = fields.with("priority", named(p));
    }
    if let Some(a) = input.str("assignee_account_id")? {
        fields = fields.with("assignee", obj! { "accountId" => a });
    }
    if let Some(parent) = input.str("parent_key")? {
        issue_path("parent_key", parent, "")?;
        fields = fields.with("parent", obj! { "key" => parent });
    }
    let created = api.send("POST", "/rest/api/3/issue", &Query::new(), Some(&obj! { "fields" => fields }))?;
    let key = created.get_str("key").unwrap_or_default();
    Ok(obj! { "id" => created.get_str("id"), "key" => key, "url" => api.browse_url(key) })
}

/// update_issue edits an issue's fields: PUT /rest/api/3/issue/{key}.
pub fn update_issue(input: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let key = input.required_str("issue_key")?;
    let path = issue_path("issue_key", key, "")?;
    let mut fields = Map::new();
    let mut update = Map::new();
    let mut changed: Vec<Value> = Vec::new();
    if let Some(s) = input.str("summary")? {
        fields.insert("summary", s);
        changed.push("summary".into());
    }
    if let Some(d) = description_value(input)? {
        fields.insert("description", d);
        changed.push("description".into());
    }
    if let Some(p) = input.str("priority")? {
        fields.insert("priority", named(p));
        changed.push("priority".into());
    }
    let add = input.strings("add_labels")?.unwrap_or_default();
    let remove = input.strings("remove_labels")?.unwrap_or_default();
    if let Some(labels) = input.array("labels")? {
        if !add.is_empty() || !remove.is_empty() {
            return Err(Error::invalid_arguments("give labels (replacing them all) or add_labels/remove_labels, not both"));
        }
        fields.insert("labels", Value::Array(labels.clone()));
        changed.push("labels".into());
    } else if !add.is_empty() || !remove.is_empty() {
        let ops: Value = add.iter().map(|l| obj! { "add" => *l }).chain(remove.iter().map(|l| obj! { "remove" => *l })).collect();
        update.insert("labels", ops);
        changed.push("labels".into());
    }
    if changed.is_empty() {
        return Err(Error::invalid_arguments("nothing to update: give at least one of summary, description, description_adf, priority, labels, add_labels, remove_labels"));
    }
    let mut body = Map::new();
    if !fields.is_empty() {
        body.insert("fields", fields);
    }
    if !update.is_empty() {
        body.insert("update", update);
    }
    let query = Query::new().add("notifyUsers", input.bool("notify_users")?.unwrap_or(true));
    api.send("PUT", &path, &query, Some(&Value::Object(body)))?;
    Ok(obj! { "key" => key, "updated" => Value::Array(changed), "url" => api.browse_url(key) })
}

/// delete_issue deletes an issue: DELETE /rest/api/3/issue/{key}.
pub fn delete_issue(input: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let key = input.required_str("issue_key")?;
    let path = issue_path("issue_key", key, "")?;
    let subtasks = input.bool("delete_subtasks")?.unwrap_or(false);
    api.send("DELETE", &path, &Query::new().add("deleteSubtasks", subtasks), None)?;
    Ok(obj! { "key" => key, "deleted" => true })
}

fn transition_summary(t: &Value) -> Value {
    obj! {
        "id" => t.get_str("id"),
        "name" => t.get_str("name"),
        "to_status" => t.pointer("/to/name").and_then(Value::as_str),
        "to_status_category" => t.pointer("/to/statusCategory/key").and_then(Value::as_str),
        "has_screen" => t.get_bool("hasScreen").unwrap_or(false),
    }
}

fn fetch_transitions(api: &Api, path: &str) -> Result<Vec<Value>, Error> {
    let resp = api.get(path, &Query::new())?;
    Ok(resp.get_array("transitions").cloned().unwrap_or_default())
}

/// get_transitions lists the transitions the caller may perform on an
/// issue now: GET /rest/api/3/issue/{key}/transitions.
pub fn get_transitions(input: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let path = issue_path("issue_key", input.required_str("issue_key")?, "/transitions")?;
    let list: Value = fetch_transitions(&api, &path)?.iter().map(transition_summary).collect();
    Ok(obj! { "transitions" => list })
}

/// transition_issue moves an issue through its workflow:
/// POST /rest/api/3/issue/{key}/transitions. The transition is given by id,
/// or by name (its own or its target status's), looked up first.
pub fn transition_issue(input: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let key = input.required_str("issue_key")?;
    let path = issue_path("issue_key", key, "/transitions")?;
    let (id, name) = match (input.str("transition_id")?, input.str("transition")?) {
        (Some(_), Some(_)) => return Err(Error::invalid_arguments("give transition_id or transition, not both")),
        (None, None) => return Err(Error::invalid_arguments("give transition_id or transition (a transition or status name)")),
        (Some(id), None) => (id.to_string(), None),
        (None, Some(wanted)) => {
            let available = fetch_transitions(&api, &path)?;
            let matches = |t: &&Value| {
                t.get_str("name").map_or(false, |n| n.eq_ignore_ascii_case(wanted))
                    || t.pointer("/to/name").and_then(Value::as_str).map_or(false, |n| n.eq_ignore_ascii_case(wanted))
            };
            match available.iter().find(matches) {
                Some(t) => (t.get_str("id").unwrap_or_default().to_string(), t.get_str("name").map(str::to_string)),
                None => {
                    let names: Vec<String> = available.iter().filter_map(|t| t.get_str("name")).map(quote).collect();
                    return Err(Error::field(
                        "transition",
                        format!("{} is not a transition available on {} now; available: {}", quote(wanted), key, if names.is_empty() { "none".to_string() } else { names.join(", ") }),
                    ));
                }
            }
        }
    };
    let mut body = obj! { "transition" => obj! { "id" => id.as_str() } };
    if let Some(comment) = input.str("comment")? {
        let add = obj! { "add" => obj! { "body" => adf::from_text(comment) } };
        body = body.with("update", obj! { "comment" => Value::Array(vec![add]) });
    }
    api.send("POST", &path, &Query::new(), Some(&body))?;
    Ok(obj! { "key" => key, "transition_id" => id, "transition" => name })
}

fn comment_summary(c: &Value) -> Value {
    obj! {
        "id" => c.get_str("id"),
        "author" => c.get("author").map(user_ref).unwrap_or(Value::Null),
        "body" => c.get("body").map(adf::to_text).unwrap_or_default(),
        "created" => c.get_str("created"),
        "updated" => c.get_str("updated"),
    }
}

/// add_comment comments on an issue: POST /rest/api/3/issue/{key}/comment.
pub fn add_comment(input: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let path = issue_path("issue_key", input.required_str("issue_key")?, "/comment")?;
    let body = input.required_str("body")?;
    if body.trim().is_empty() {
        return Err(Error::field("body", "must not be empty"));
    }
    let created = api.send("POST", &path, &Query::new(), Some(&obj! { "body" => adf::from_text(body) }))?;
    Ok(comment_summary(&created))
}

/// list_comments pages through an issue's comments:
/// GET /rest/api/3/issue/{key}/comment with startAt and maxResults.
pub fn list_comments(input: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let path = issue_path("issue_key", input.required_str("issue_key")?, "/comment")?;
    let start = input.required_i64("start_at")?;
    let max = input.required_i64("max_results")?;
    let query = Query::new().add("startAt", start).add("maxResults", max).add("orderBy", input.required_str("order_by")?);
    let page = api.get(&path, &query)?;
    let comments: Vec<Value> = page.get_array("comments").map(|a| a.iter().map(comment_summary).collect()).unwrap_or_default();
    let start_at = page.get_i64("startAt").unwrap_or(start);
    let total = page.get_i64("total");
    let next = start_at.saturating_add(comments.len() as i64);
    let more = !comments.is_empty() && total.map_or(false, |t| next < t);
    Ok(obj! {
        "comments" => Value::Array(comments),
        "start_at" => start_at,
        "total" => total,
        "next_start_at" => if more { Value::from(next) } else { Value::Null },
    })
}

/// assign_issue sets or clears an issue's assignee:
/// PUT /rest/api/3/issue/{key}/assignee with {"accountId": id or null}.
pub fn assign_issue(input: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let key = input.required_str("issue_key")?;
    let path = issue_path("issue_key", key, "/assignee")?;
    let account = input.str("account_id")?;
    if account.map_or(false, |a| a.trim().is_empty()) {
        return Err(Error::field("account_id", "must not be empty; use null to unassign"));
    }
    api.send("PUT", &path, &Query::new(), Some(&obj! { "accountId" => account }))?;
    Ok(obj! { "key" => key, "assignee_account_id" => account })
}
