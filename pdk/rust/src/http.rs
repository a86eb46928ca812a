//! Outbound HTTP through the host's http_request import, and URL encoding.
//!
//! The host adds the user's credential to every request and removes any
//! credential header the plugin sets; the plugin never sees a credential.
//! An upstream 4xx or 5xx is a [`Response`], not an error: the plugin
//! decides what it means. Host failures (EGRESS_DENIED, NOT_CONNECTED,
//! UPSTREAM_TIMEOUT, ...) are [`Error`]s carrying the host's code.

use crate::error::{code, Error};
use crate::json::{self, Map, Value};
use crate::sys;

/// Headers is a list of header fields; lookups ignore case.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Headers {
    fields: Vec<(String, Vec<String>)>,
}

impl Headers {
    /// new returns empty headers.
    pub fn new() -> Headers {
        Headers::default()
    }

    /// get returns the first value of name.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values(name).first().map(String::as_str)
    }

    /// values returns every value of name.
    pub fn values(&self, name: &str) -> &[String] {
        match self.fields.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)) {
            Some((_, v)) => v,
            None => &[],
        }
    }

    /// set replaces the values of name with value.
    pub fn set(&mut self, name: &str, value: &str) {
        self.remove(name);
        self.fields.push((name.to_string(), vec![value.to_string()]));
    }

    /// add appends value to the values of name.
    pub fn add(&mut self, name: &str, value: &str) {
        match self.fields.iter_mut().find(|(k, _)| k.eq_ignore_ascii_case(name)) {
            Some((_, v)) => v.push(value.to_string()),
            None => self.fields.push((name.to_string(), vec![value.to_string()])),
        }
    }

    /// remove deletes name in any case.
    pub fn remove(&mut self, name: &str) {
        self.fields.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    }

    /// is_empty reports whether there are no fields.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// iter yields each name with its values.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[String])> {
        self.fields.iter().map(|(k, v)| (k.as_str(), v.as_slice()))
    }

    fn to_value(&self) -> Value {
        let mut m = Map::new();
        for (k, vs) in &self.fields {
            m.insert(k.as_str(), vs.iter().map(|v| Value::from(v.as_str())).collect::<Value>());
        }
        Value::Object(m)
    }

    /// from_value reads the host's header object; a value may be a list of
    /// strings or one string. Anything else is left out.
    fn from_value(v: Option<&Value>) -> Headers {
        let mut h = Headers::new();
        if let Some(m) = v.and_then(Value::as_object) {
            for (k, vs) in m.iter() {
                match vs {
                    Value::String(s) => h.add(k, s),
                    Value::Array(items) => {
                        for s in items.iter().filter_map(Value::as_str) {
                            h.add(k, s);
                        }
                    }
                    _ => {}
                }
            }
        }
        h
    }
}

/// Request is one outbound HTTP request.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// method defaults to GET when empty.
    pub method: String,
    /// url is absolute; the host checks it against the manifest's hosts.
    pub url: String,
    pub headers: Headers,
    /// body is sent as the request body; empty sends none.
    pub body: Vec<u8>,
    /// timeout_ms, when not 0, bounds the request; the host cuts it to the
    /// call's remaining time.
    pub timeout_ms: u64,
}

impl Request {
    /// new returns a request with method and url.
    pub fn new(method: &str, url: &str) -> Request {
        Request { method: method.to_string(), url: url.to_string(), headers: Headers::new(), body: Vec::new(), timeout_ms: 0 }
    }

    /// get returns a GET request.
    pub fn get(url: &str) -> Request {
        Request::new("GET", url)
    }

    /// post returns a POST request.
    pub fn post(url: &str) -> Request {
        Request::new("POST", url)
    }

    /// put returns a PUT request.
    pub fn put(url: &str) -> Request {
        Request::new("PUT", url)
    }

    /// patch returns a PATCH request.
    pub fn patch(url: &str) -> Request {
        Request::new("PATCH", url)
    }

    /// delete returns a DELETE request.
    pub fn delete(url: &str) -> Request {
        Request::new("DELETE", url)
    }

    /// header returns the request with name set to value.
    pub fn header(mut self, name: &str, value: &str) -> Request {
        self.headers.set(name, value);
        self
    }

    /// body returns the request with a body of the given content type.
    pub fn body(mut self, content_type: &str, body: Vec<u8>) -> Request {
        self.headers.set("Content-Type", content_type);
        self.body = body;
        self
    }

    /// json returns the request with v as its body and Content-Type
    /// application/json.
    pub fn json(self, v: &Value) -> Request {
        self.body("application/json", v.to_json().into_bytes())
    }

    /// timeout_ms returns the request with a timeout.
    pub fn timeout_ms(mut self, ms: u64) -> Request {
        self.timeout_ms = ms;
        self
    }

    /// head_json is the request JSON of http_request.
    pub fn head_json(&self) -> String {
        let mut m = Map::new();
        if !self.method.is_empty() {
            m.insert("method", self.method.as_str());
        }
        m.insert("url", self.url.as_str());
        if !self.headers.is_empty() {
            m.insert("headers", self.headers.to_value());
        }
        if self.timeout_ms > 0 {
            m.insert("timeoutMs", self.timeout_ms);
        }
        Value::Object(m).to_json()
    }

    /// send performs the request through the host.
    pub fn send(&self) -> Result<Response, Error> {
        if self.url.is_empty() {
            return Err(Error::new(code::TOOL_ERROR, "an HTTP request needs a URL"));
        }
        match sys::http(self.head_json().as_bytes(), &self.body) {
            Ok((head, body)) => {
                let h = json::parse(&head).map_err(|e| Error::new(code::TOOL_ERROR, format!("the host returned an unreadable response head: {}", e)))?;
                let status = h.get("status").and_then(Value::as_u64).filter(|s| *s <= 999).unwrap_or(0) as u16;
                Ok(Response { status, headers: Headers::from_value(h.get("headers")), url: h.get_str("url").unwrap_or_default().to_string(), body })
            }
            Err(failure) => match json::parse(&failure).ok().as_ref().and_then(Error::from_value) {
                Some(e) => Err(e),
                None => Err(Error::new(code::TOOL_ERROR, format!("the host reported an unreadable HTTP failure: {}", String::from_utf8_lossy(&failure)))),
            },
        }
    }
}

/// Response is the upstream's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub status: u16,
    pub headers: Headers,
    pub body: Vec<u8>,
    /// url is the final URL after redirects.
    pub url: String,
}

impl Response {
    /// ok reports whether the status is 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// header returns the first value of a response header, in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }

    /// text returns the body as text; bytes that are not UTF-8 are replaced.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// json parses the body. A body that is not JSON is an UPSTREAM_ERROR.
    pub fn json(&self) -> Result<Value, Error> {
        json::parse(&self.body).map_err(|e| Error::upstream(format!("the response from {} (status {}) is not valid JSON: {}", self.url, self.status, e)))
    }
}

/// encode_component percent-encodes s for use as one URL path segment or
/// one query name or value: everything but ALPHA, DIGIT and "-._~" is
/// encoded, "/" and "?" included.
pub fn encode_component(s: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xf) as usize] as char);
        }
    }
    out
}

/// Query builds a URL query string in the order parameters are added.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    /// new returns an empty query.
    pub fn new() -> Query {
        Query::default()
    }

    /// add appends name=value.
    pub fn add<V: ToString>(mut self, name: &str, value: V) -> Query {
        self.pairs.push((name.to_string(), value.to_string()));
        self
    }

    /// add_opt appends name=value when value is Some.
    pub fn add_opt<V: ToString>(self, name: &str, value: Option<V>) -> Query {
        match value {
            Some(v) => self.add(name, v),
            None => self,
        }
    }

    /// encode returns "a=1&b=2" with names and values percent-encoded.
    pub fn encode(&self) -> String {
        let parts: Vec<String> = self.pairs.iter().map(|(k, v)| format!("{}={}", encode_component(k), encode_component(v))).collect();
        parts.join("&")
    }

    /// append_to returns url followed by "?" and the query, or url alone
    /// when the query is empty.
    pub fn append_to(&self, url: &str) -> String {
        if self.pairs.is_empty() {
            url.to_string()
        } else {
            format!("{}?{}", url, self.encode())
        }
    }
}
