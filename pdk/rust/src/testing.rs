//! A stand-in for the Workbench host in native builds, so plugin code can be
//! unit-tested with `rustc --test` (this module does not exist in wasm32
//! builds).
//!
//! State is per thread, as Rust runs each test on its own thread: settings
//! come from [`set_config`], HTTP requests go to the handler given to
//! [`set_http`], and logs, progress reports and outputs are recorded.

use crate::error::Error;
use crate::json::{self, Map, Value};
use crate::plugin::{self, Plugin};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// Exchange is one HTTP request the plugin made, as the host saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct Exchange {
    pub method: String,
    pub url: String,
    /// headers are the request headers, each with its values.
    pub headers: Vec<(String, Vec<String>)>,
    pub body: Vec<u8>,
    pub timeout_ms: Option<u64>,
}

impl Exchange {
    /// header returns the first value of a request header, in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).and_then(|(_, v)| v.first()).map(String::as_str)
    }
}

/// Reply is what an HTTP handler answers: a response or a host failure.
pub enum Reply {
    /// Response is an upstream answer with a status, headers and body.
    Response { status: u16, headers: Vec<(String, String)>, body: Vec<u8> },
    /// Failure is a host error such as EGRESS_DENIED.
    Failure(Error),
}

/// HttpHandler answers the plugin's HTTP requests.
pub type HttpHandler = Box<dyn FnMut(&Exchange) -> Reply>;

#[derive(Default)]
struct State {
    config: BTreeMap<String, String>,
    http: Option<HttpHandler>,
    exchanges: Vec<Exchange>,
    logs: Vec<(i32, String)>,
    progress: Vec<(f64, f64, String)>,
    output: Vec<u8>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// reset forgets every setting, handler and record of this thread.
pub fn reset() {
    STATE.with(|s| *s.borrow_mut() = State::default());
}

/// set_config sets a value config_get returns.
pub fn set_config(key: &str, value: &str) {
    STATE.with(|s| s.borrow_mut().config.insert(key.to_string(), value.to_string()));
}

/// set_http sets the handler of HTTP requests; without one, every request
/// fails with EGRESS_DENIED.
pub fn set_http(handler: HttpHandler) {
    STATE.with(|s| s.borrow_mut().http = Some(handler));
}

/// exchanges returns the HTTP requests made so far.
pub fn exchanges() -> Vec<Exchange> {
    STATE.with(|s| s.borrow().exchanges.clone())
}

/// logs returns the log records (level, message) written so far.
pub fn logs() -> Vec<(i32, String)> {
    STATE.with(|s| s.borrow().logs.clone())
}

/// progress_reports returns the progress reports (done, total, message).
pub fn progress_reports() -> Vec<(f64, f64, String)> {
    STATE.with(|s| s.borrow().progress.clone())
}

/// call runs a tool as the host would, with input as the raw input bytes,
/// and returns the status and the parsed output.
pub fn call(declare: fn() -> Plugin, slug: &str, input: &str) -> (u32, Value) {
    let (out, status) = plugin::invoke(declare, slug, input.as_bytes());
    record_output(out.as_bytes());
    (status, parsed(&out))
}

/// manifest runs the manifest export and returns the status and output.
pub fn manifest(declare: fn() -> Plugin) -> (u32, Value) {
    let (out, status) = plugin::manifest_output(declare);
    record_output(out.as_bytes());
    (status, parsed(&out))
}

/// last_output returns the bytes last given to output_set.
pub fn last_output() -> Vec<u8> {
    STATE.with(|s| s.borrow().output.clone())
}

fn parsed(out: &str) -> Value {
    match json::parse_str(out) {
        Ok(v) => v,
        Err(e) => Value::from(format!("output is not JSON ({}): {}", e, out)),
    }
}

pub(crate) fn record_output(b: &[u8]) {
    STATE.with(|s| s.borrow_mut().output = b.to_vec());
}

pub(crate) fn config_value(key: &str) -> Option<String> {
    STATE.with(|s| s.borrow().config.get(key).cloned())
}

pub(crate) fn record_log(level: i32, msg: &str) {
    STATE.with(|s| s.borrow_mut().logs.push((level, msg.to_string())));
}

pub(crate) fn record_progress(done: f64, total: f64, msg: &str) {
    STATE.with(|s| s.borrow_mut().progress.push((done, total, msg.to_string())));
}

/// serve_http decodes the request JSON as the host does, hands it to the
/// handler and encodes the handler's reply as the host would.
pub(crate) fn serve_http(head: &[u8], body: &[u8]) -> crate::sys::HttpResult {
    let fail = |code: &str, msg: String| Err(Error::new(code, msg).to_value().to_json().into_bytes());
    let h = match json::parse(head) {
        Ok(h) => h,
        Err(e) => return fail("INVALID_REQUEST", format!("request is not valid: {}", e)),
    };
    let mut headers = Vec::new();
    if let Some(m) = h.get_object("headers") {
        for (k, v) in m.iter() {
            let values = match v {
                Value::String(s) => vec![s.clone()],
                Value::Array(a) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
                _ => return fail("INVALID_REQUEST", format!("header {} must be a string or a list of strings", json::quote(k))),
            };
            headers.push((k.to_string(), values));
        }
    }
    let ex = Exchange {
        method: h.get_str("method").unwrap_or("GET").to_string(),
        url: h.get_str("url").unwrap_or_default().to_string(),
        headers,
        body: body.to_vec(),
        timeout_ms: h.get("timeoutMs").and_then(Value::as_u64),
    };
    // The handler runs without the state borrowed: it may read settings.
    let handler = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.exchanges.push(ex.clone());
        s.http.take()
    });
    let mut handler = match handler {
        Some(h) => h,
        None => return fail("EGRESS_DENIED", format!("{} is not an allowed destination (no test HTTP handler)", ex.url)),
    };
    let reply = handler(&ex);
    STATE.with(|s| s.borrow_mut().http = Some(handler));
    match reply {
        Reply::Failure(e) => Err(e.to_value().to_json().into_bytes()),
        Reply::Response { status, headers, body } => {
            let mut hm = Map::new();
            for (k, v) in headers {
                let mut values = match hm.remove(&k) {
                    Some(Value::Array(a)) => a,
                    _ => Vec::new(),
                };
                values.push(Value::from(v));
                hm.insert(k, Value::Array(values));
            }
            let head = Value::object().with("status", status).with("headers", hm).with("url", ex.url.as_str());
            Ok((head.to_json().into_bytes(), body))
        }
    }
}
