//! The Jira Cloud REST API v3 client: where requests go, what they carry,
//! and how Jira's error answers become tool errors.

use workbench::http::{encode_component, Query, Request, Response};
use workbench::json::quote;
use workbench::{code, obj, Error, Map, Value};

/// Api sends requests to one Jira site.
pub struct Api {
    base: String,
}

impl Api {
    /// new returns the client for the calling user's site: the operator's
    /// base URL when one is set (a test fake, a proxy), else
    /// https://<site>.atlassian.net from the connection's site field.
    pub fn new() -> Result<Api, Error> {
        if let Some(base) = workbench::base_url() {
            return Ok(Api { base });
        }
        match workbench::config("site") {
            Some(site) if valid_site(&site) => Ok(Api { base: format!("https://{}.atlassian.net", site) }),
            Some(site) => Err(Error::new(
                code::NOT_CONNECTED,
                format!("the connection's site {} is not a Jira Cloud site name: reconnect atlassian-jira with the <site> of https://<site>.atlassian.net", quote(&site)),
            )),
            None => Err(Error::new(code::NOT_CONNECTED, "you are not connected to atlassian-jira: call connect('atlassian-jira') first")),
        }
    }

    /// base returns the site's base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// browse_url returns the web page of an issue.
    pub fn browse_url(&self, key: &str) -> String {
        format!("{}/browse/{}", self.base, encode_component(key))
    }

    /// get sends a GET and returns the JSON answer.
    pub fn get(&self, path: &str, query: &Query) -> Result<Value, Error> {
        self.send("GET", path, query, None)
    }

    /// send sends one request with an optional JSON body and returns the
    /// JSON answer, or null for an answer without a body (204).
    pub fn send(&self, method: &str, path: &str, query: &Query, body: Option<&Value>) -> Result<Value, Error> {
        let url = query.append_to(&format!("{}{}", self.base, path));
        let mut req = Request::new(method, &url).header("Accept", "application/json");
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req.send()?;
        if !resp.ok() {
            return Err(map_error(&resp));
        }
        if resp.status == 204 || resp.body.iter().all(|b| b.is_ascii_whitespace()) {
            return Ok(Value::Null);
        }
        resp.json()
    }
}

/// valid_site reports whether s is a site name as the connection form
/// requires: ^[a-z0-9][a-z0-9-]{0,61}$.
pub fn valid_site(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 62
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b.first().map_or(false, |c| *c != b'-')
}

/// issue_path returns /rest/api/3/issue/{issueIdOrKey} followed by rest,
/// after checking that the reference is an issue key or id.
pub fn issue_path(field: &str, issue: &str, rest: &str) -> Result<String, Error> {
    if !valid_issue_ref(issue) {
        return Err(Error::field(field, format!("{} is not an issue key (PROJ-123) or id (10001)", quote(issue))));
    }
    Ok(format!("/rest/api/3/issue/{}{}", encode_component(issue), rest))
}

/// valid_issue_ref accepts an issue id (digits) or key (PROJ-123).
pub fn valid_issue_ref(s: &str) -> bool {
    if s.is_empty() || s.len() > 64 {
        return false;
    }
    if s.bytes().all(|c| c.is_ascii_digit()) {
        return true;
    }
    match s.rsplit_once('-') {
        Some((project, number)) => valid_project_key(project) && !number.is_empty() && number.bytes().all(|c| c.is_ascii_digit()),
        None => false,
    }
}

/// valid_project_ref accepts a project id (digits) or key (PROJ).
pub fn valid_project_ref(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && (s.bytes().all(|c| c.is_ascii_digit()) || valid_project_key(s))
}

fn valid_project_key(s: &str) -> bool {
    let b = s.as_bytes();
    b.first().map_or(false, |c| c.is_ascii_alphabetic()) && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// map_error turns a Jira error answer into a tool error. Jira's body is
/// {"errorMessages": [...], "errors": {"field": "message"}}; both parts
/// are kept in the details, with the status.
pub fn map_error(resp: &Response) -> Error {
    let body = resp.json().ok();
    let messages: Vec<String> = body
        .as_ref()
        .and_then(|b| b.get_array("errorMessages"))
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let mut field_errors = Map::new();
    if let Some(errors) = body.as_ref().and_then(|b| b.get_object("errors")) {
        for (k, v) in errors.iter() {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_json(),
            };
            field_errors.insert(k, text);
        }
    }
    let mut parts = messages.clone();
    for (k, v) in field_errors.iter() {
        parts.push(format!("{}: {}", k, v.as_str().unwrap_or_default()));
    }
    let mut summary = parts.join("; ");
    if summary.is_empty() && body.is_none() {
        summary = snippet(&resp.text());
    }
    if summary.is_empty() {
        summary = format!("HTTP {}", resp.status);
    }
    let mut details = obj! { "status" => resp.status };
    if !messages.is_empty() {
        details = details.with("error_messages", messages.iter().map(|m| Value::from(m.as_str())).collect::<Value>());
    }
    if !field_errors.is_empty() {
        details = details.with("errors", field_errors);
    }
    let e = match resp.status {
        400 => Error::invalid_arguments(format!("Jira rejected the request: {}", summary)),
        401 => Error::unauthorized(format!(
            "Jira did not accept this connection's email and API token ({}): reconnect atlassian-jira with a valid API token",
            summary
        )),
        403 => Error::forbidden(format!("Jira refused the request: {}", summary)),
        404 => Error::not_found(summary),
        409 => Error::conflict(summary),
        429 => {
            let retry = resp.header("Retry-After").and_then(|v| v.trim().parse::<u64>().ok());
            if let Some(s) = retry {
                details = details.with("retry_after_seconds", s);
            }
            match retry {
                Some(s) => Error::rate_limited(format!("Jira's rate limit was reached: retry after {} seconds", s)),
                None => Error::rate_limited("Jira's rate limit was reached: retry later"),
            }
        }
        s => Error::upstream(format!("Jira answered HTTP {}: {}", s, summary)),
    };
    e.with_details(details)
}

/// snippet returns the start of a non-JSON body, on one line.
fn snippet(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = one_line.chars().take(200).collect();
    if one_line.chars().count() > 200 {
        out.push('…');
    }
    out
}
