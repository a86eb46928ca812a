//! Typed access to a tool's input.

use crate::error::Error;
use crate::json::{Map, Value};

/// Input is a tool call's input object, already checked against the tool's
/// input schema and with defaults filled in. Its accessors treat an absent
/// member and null alike, and report a member of the wrong type as an
/// INVALID_ARGUMENTS error naming it.
#[derive(Clone, Debug)]
pub struct Input {
    tool: String,
    value: Value,
}

fn missing(name: &str) -> Error {
    let mut d = Map::new();
    d.insert("field", name);
    Error::invalid_arguments(format!("missing required field {}", crate::json::quote(name))).with_details(d)
}

fn wrong_type(name: &str, want: &str, got: &Value) -> Error {
    Error::field(name, format!("expected {}, got {}", want, got.type_name()))
}

impl Input {
    /// new wraps an input value for the tool with the given slug.
    pub fn new(tool: &str, value: Value) -> Input {
        Input { tool: tool.to_string(), value }
    }

    /// tool returns the slug of the tool being called.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// value returns the whole input.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// get returns member name; None when it is absent or null.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.value.get(name).filter(|v| !v.is_null())
    }

    /// has reports whether member name is present, null included.
    pub fn has(&self, name: &str) -> bool {
        self.value.get(name).is_some()
    }

    /// str returns a string member.
    pub fn str(&self, name: &str) -> Result<Option<&str>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(wrong_type(name, "string", v)),
        }
    }

    /// required_str returns a string member that must be present.
    pub fn required_str(&self, name: &str) -> Result<&str, Error> {
        self.str(name)?.ok_or_else(|| missing(name))
    }

    /// i64 returns an integer member.
    pub fn i64(&self, name: &str) -> Result<Option<i64>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => match v.as_i64() {
                Some(n) => Ok(Some(n)),
                None => Err(wrong_type(name, "integer", v)),
            },
        }
    }

    /// required_i64 returns an integer member that must be present.
    pub fn required_i64(&self, name: &str) -> Result<i64, Error> {
        self.i64(name)?.ok_or_else(|| missing(name))
    }

    /// f64 returns a number member.
    pub fn f64(&self, name: &str) -> Result<Option<f64>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(n) => Ok(Some(n)),
                None => Err(wrong_type(name, "number", v)),
            },
        }
    }

    /// bool returns a boolean member.
    pub fn bool(&self, name: &str) -> Result<Option<bool>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(wrong_type(name, "boolean", v)),
        }
    }

    /// array returns an array member.
    pub fn array(&self, name: &str) -> Result<Option<&Vec<Value>>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(v) => Err(wrong_type(name, "array", v)),
        }
    }

    /// strings returns an array member whose items are all strings.
    pub fn strings(&self, name: &str) -> Result<Option<Vec<&str>>, Error> {
        let items = match self.array(name)? {
            None => return Ok(None),
            Some(a) => a,
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(s) => out.push(s.as_str()),
                v => return Err(wrong_type(&format!("{}[{}]", name, i), "string", v)),
            }
        }
        Ok(Some(out))
    }

    /// object returns an object member.
    pub fn object(&self, name: &str) -> Result<Option<&Map>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(v) => Err(wrong_type(name, "object", v)),
        }
    }
}
