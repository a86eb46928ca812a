//! Project and user tools.

use crate::client::{valid_project_ref, Api};
use workbench::http::{encode_component, Query};
use workbench::json::quote;
use workbench::{obj, Error, Input, Value};

fn project_summary(p: &Value) -> Value {
    obj! {
        "id" => p.get_str("id"),
        "key" => p.get_str("key"),
        "name" => p.get_str("name"),
        "project_type" => p.get_str("projectTypeKey"),
        "style" => p.get_str("style"),
    }
}

/// list_projects pages through the projects the caller can see:
/// GET /rest/api/3/project/search with startAt, maxResults and isLast.
pub fn list_projects(input: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let start = input.required_i64("start_at")?;
    let query = Query::new()
        .add("startAt", start)
        .add("maxResults", input.required_i64("max_results")?)
        .add("orderBy", "key")
        .add_opt("query", input.str("query")?);
    let page = api.get("/rest/api/3/project/search", &query)?;
    let projects: Vec<Value> = page.get_array("values").map(|a| a.iter().map(project_summary).collect()).unwrap_or_default();
    let start_at = page.get_i64("startAt").unwrap_or(start);
    let is_last = page.get_bool("isLast").unwrap_or(true) || projects.is_empty();
    let next = start_at.saturating_add(projects.len() as i64);
    Ok(obj! {
        "projects" => Value::Array(projects),
        "start_at" => start_at,
        "total" => page.get_i64("total"),
        "is_last" => is_last,
        "next_start_at" => if is_last { Value::Null } else { Value::from(next) },
    })
}

/// get_project returns one project with its lead and issue types:
/// GET /rest/api/3/project/{projectIdOrKey}.
pub fn get_project(input: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let key = input.required_str("project_key")?;
    if !valid_project_ref(key) {
        return Err(Error::field("project_key", format!("{} is not a project key (PROJ) or id", quote(key))));
    }
    let path = format!("/rest/api/3/project/{}", encode_component(key));
    let p = api.get(&path, &Query::new().add("expand", "description,lead,issueTypes"))?;
    let issue_types: Value = p
        .get_array("issueTypes")
        .map(|a| a.iter().map(|t| obj! { "id" => t.get_str("id"), "name" => t.get_str("name"), "subtask" => t.get_bool("subtask").unwrap_or(false) }).collect())
        .unwrap_or_else(|| Value::Array(Vec::new()));
    Ok(project_summary(&p)
        .with("description", p.get_str("description"))
        .with("lead", p.get("lead").map(crate::issues::user_ref).unwrap_or(Value::Null))
        .with("issue_types", issue_types))
}

fn user_summary(u: &Value) -> Value {
    obj! {
        "account_id" => u.get_str("accountId"),
        "display_name" => u.get_str("displayName"),
        "email" => u.get_str("emailAddress"),
        "active" => u.get_bool("active"),
        "account_type" => u.get_str("accountType"),
    }
}

/// search_users finds users by name or email prefix:
/// GET /rest/api/3/user/search?query=.
pub fn search_users(input: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let query = Query::new()
        .add("query", input.required_str("query")?)
        .add("startAt", input.required_i64("start_at")?)
        .add("maxResults", input.required_i64("max_results")?);
    let found = api.get("/rest/api/3/user/search", &query)?;
    let users: Value = found.as_array().map(|a| a.iter().map(user_summary).collect()).unwrap_or_else(|| Value::Array(Vec::new()));
    Ok(obj! { "users" => users })
}

/// get_myself returns the user the connection authenticates as:
/// GET /rest/api/3/myself.
pub fn get_myself(_: &Input) -> Result<Value, Error> {
    let api = Api::new()?;
    let me = api.get("/rest/api/3/myself", &Query::new())?;
    Ok(user_summary(&me).with("time_zone", me.get_str("timeZone")).with("locale", me.get_str("locale")).with("site", api.base()))
}
