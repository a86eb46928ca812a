//! Structured tool errors (docs/abi.md section 3).

use crate::json::{Map, Value};
use std::fmt;

/// Error codes a plugin commonly reports. Any upper-snake-case word is
/// allowed; codes the host reports to the plugin (EGRESS_DENIED,
/// NOT_CONNECTED, ...) are usually passed on unchanged.
pub mod code {
    pub const NOT_FOUND: &str = "NOT_FOUND";
    pub const INVALID_ARGUMENTS: &str = "INVALID_ARGUMENTS";
    pub const UNAUTHORIZED: &str = "UNAUTHORIZED";
    pub const FORBIDDEN: &str = "FORBIDDEN";
    pub const CONFLICT: &str = "CONFLICT";
    pub const RATE_LIMITED: &str = "RATE_LIMITED";
    pub const UPSTREAM_ERROR: &str = "UPSTREAM_ERROR";
    pub const NOT_CONNECTED: &str = "NOT_CONNECTED";
    pub const TOOL_ERROR: &str = "TOOL_ERROR";
    pub const INVALID_MANIFEST: &str = "INVALID_MANIFEST";
}

/// Error is what a tool reports with status 1, and what host imports report
/// to the plugin (an http_request failure arrives with the host's code).
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    /// code is an upper-snake-case word such as NOT_FOUND.
    pub code: String,
    /// message is shown to the agent.
    pub message: String,
    /// details is optional extra JSON.
    pub details: Option<Value>,
}

impl Error {
    /// new returns an error with code and message. A code that is not upper
    /// snake case is replaced by TOOL_ERROR when the error is written, as the
    /// host would do.
    pub fn new<C: Into<String>, M: Into<String>>(code: C, message: M) -> Error {
        Error { code: code.into(), message: message.into(), details: None }
    }

    /// with_details returns the error carrying details.
    pub fn with_details<V: Into<Value>>(mut self, details: V) -> Error {
        self.details = Some(details.into());
        self
    }

    /// not_found returns a NOT_FOUND error.
    pub fn not_found<M: Into<String>>(message: M) -> Error {
        Error::new(code::NOT_FOUND, message)
    }

    /// invalid_arguments returns an INVALID_ARGUMENTS error.
    pub fn invalid_arguments<M: Into<String>>(message: M) -> Error {
        Error::new(code::INVALID_ARGUMENTS, message)
    }

    /// unauthorized returns an UNAUTHORIZED error.
    pub fn unauthorized<M: Into<String>>(message: M) -> Error {
        Error::new(code::UNAUTHORIZED, message)
    }

    /// forbidden returns a FORBIDDEN error.
    pub fn forbidden<M: Into<String>>(message: M) -> Error {
        Error::new(code::FORBIDDEN, message)
    }

    /// conflict returns a CONFLICT error.
    pub fn conflict<M: Into<String>>(message: M) -> Error {
        Error::new(code::CONFLICT, message)
    }

    /// rate_limited returns a RATE_LIMITED error.
    pub fn rate_limited<M: Into<String>>(message: M) -> Error {
        Error::new(code::RATE_LIMITED, message)
    }

    /// upstream returns an UPSTREAM_ERROR error.
    pub fn upstream<M: Into<String>>(message: M) -> Error {
        Error::new(code::UPSTREAM_ERROR, message)
    }

    /// field returns INVALID_ARGUMENTS about one input field, with details
    /// {"field": path}.
    pub fn field<M: fmt::Display>(path: &str, message: M) -> Error {
        let mut d = Map::new();
        d.insert("field", path);
        Error::invalid_arguments(format!("field {}: {}", crate::json::quote(path), message)).with_details(d)
    }

    /// to_value returns the error object written with status 1. An invalid
    /// code becomes TOOL_ERROR and an empty message names the code.
    pub fn to_value(&self) -> Value {
        let code = if valid_code(&self.code) { self.code.as_str() } else { code::TOOL_ERROR };
        let message = if self.message.is_empty() { format!("tool failed with {}", code) } else { self.message.clone() };
        let mut m = Map::new();
        m.insert("code", code);
        m.insert("message", message);
        if let Some(d) = &self.details {
            m.insert("details", d.clone());
        }
        Value::Object(m)
    }

    /// from_value reads an error object such as the one http_request
    /// reports; None when it has no code.
    pub fn from_value(v: &Value) -> Option<Error> {
        let code = v.get_str("code").filter(|c| !c.is_empty())?;
        Some(Error {
            code: code.to_string(),
            message: v.get_str("message").unwrap_or_default().to_string(),
            details: v.get("details").cloned(),
        })
    }
}

impl fmt::Display for Error {
    /// An error displays as "CODE: message".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

impl From<crate::json::ParseError> for Error {
    /// A parse error is bad upstream data unless the caller says otherwise.
    fn from(e: crate::json::ParseError) -> Error {
        Error::upstream(format!("invalid JSON: {}", e))
    }
}

/// valid_code reports whether code is an upper-snake-case word: A-Z first,
/// then A-Z, 0-9 and underscores.
pub fn valid_code(code: &str) -> bool {
    let b = code.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_uppercase() => {}
        _ => return false,
    }
    b.iter().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
}
