//! JSON Schema helpers for tool inputs, and the input check the PDK runs
//! before a handler.
//!
//! The builders produce plain [`Value`]s, so a schema can also be written by
//! hand (or parsed from a string) and refined with [`Value::with`]:
//!
//! ```ignore
//! object(vec![
//!     ("jql", string("A JQL query.")),
//!     ("max_results", integer("Page size.").with("minimum", 1).with("maximum", 100).with("default", 50)),
//! ], &["jql"])
//! ```
//!
//! The check understands `type` (one or a list), `enum`, `const`,
//! `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//! `minLength`, `maxLength`, `minItems`, `maxItems`, `items`, `properties`,
//! `required`, `additionalProperties` (a boolean or a schema) and `default`
//! (filled in for absent properties). Other keywords, `pattern` and
//! `format` among them, are passed to the manifest but not checked: the
//! handler must check what they say.

use crate::error::Error;
use crate::json::{Map, Value};

/// object returns an object schema with the given properties, required
/// names, and no other properties allowed.
pub fn object(properties: Vec<(&str, Value)>, required: &[&str]) -> Value {
    let props: Map = properties.into_iter().collect();
    let mut s = Value::object().with("type", "object").with("properties", props);
    if !required.is_empty() {
        s = s.with("required", Value::from(required));
    }
    s.with("additionalProperties", false)
}

/// string returns a string schema with a description.
pub fn string(description: &str) -> Value {
    typed("string", description)
}

/// integer returns an integer schema with a description.
pub fn integer(description: &str) -> Value {
    typed("integer", description)
}

/// number returns a number schema with a description.
pub fn number(description: &str) -> Value {
    typed("number", description)
}

/// boolean returns a boolean schema with a description.
pub fn boolean(description: &str) -> Value {
    typed("boolean", description)
}

/// array returns an array schema whose items follow items.
pub fn array(items: Value, description: &str) -> Value {
    typed("array", description).with("items", items)
}

/// enumeration returns a string schema admitting only the given values.
pub fn enumeration(values: &[&str], description: &str) -> Value {
    string(description).with("enum", Value::from(values))
}

/// open_object returns an object schema that admits any members.
pub fn open_object(description: &str) -> Value {
    typed("object", description)
}

fn typed(t: &str, description: &str) -> Value {
    let s = Value::object().with("type", t);
    if description.is_empty() {
        s
    } else {
        s.with("description", description)
    }
}

/// check validates value against schema. The first violation is an
/// INVALID_ARGUMENTS error naming the field ("fields[1]", "a.b") with
/// details {"field": path}.
pub fn check(schema: &Value, value: &Value) -> Result<(), Error> {
    check_at(schema, value, "", 0)
}

/// The validator recurses along the value, which the parser already bounded
/// to MAX_DEPTH; this cap keeps hand-built values safe too.
const MAX_CHECK_DEPTH: usize = crate::json::MAX_DEPTH + 8;

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{}.{}", path, name)
    }
}

fn article(t: &str) -> String {
    match t {
        "null" => "null".to_string(),
        "array" | "integer" | "object" => format!("an {}", t),
        _ => format!("a {}", t),
    }
}

fn type_matches(want: &str, v: &Value) -> bool {
    let got = v.type_name();
    want == got || (want == "number" && got == "integer")
}

fn number_text(v: &Value) -> String {
    v.to_json()
}

fn check_at(schema: &Value, value: &Value, path: &str, depth: usize) -> Result<(), Error> {
    if depth > MAX_CHECK_DEPTH {
        return Err(Error::invalid_arguments("the input is nested too deeply"));
    }
    let s = match schema {
        Value::Object(s) => s,
        Value::Bool(false) => return Err(Error::field(path, "is not allowed")),
        _ => return Ok(()),
    };
    let types: Vec<&str> = match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !types.is_empty() && !types.iter().any(|t| type_matches(t, value)) {
        if path.is_empty() {
            return Err(Error::invalid_arguments(format!(
                "the input must be {}, not {}",
                article(types.first().copied().unwrap_or("object")),
                article(value.type_name())
            )));
        }
        return Err(Error::field(path, format!("expected {}, got {}", types.join(" or "), value.type_name())));
    }
    if let Some(Value::Array(allowed)) = s.get("enum") {
        if !allowed.iter().any(|a| a == value) {
            let words: Vec<String> = allowed.iter().map(Value::to_json).collect();
            return Err(Error::field(path, format!("must be one of {}; got {}", words.join(", "), value.to_json())));
        }
    }
    if let Some(c) = s.get("const") {
        if c != value {
            return Err(Error::field(path, format!("must be {}; got {}", c.to_json(), value.to_json())));
        }
    }
    match value {
        Value::Number(_) => {
            let f = value.as_f64().unwrap_or(0.0);
            let bound = |k: &str| s.get(k).and_then(Value::as_f64);
            if let Some(min) = bound("minimum") {
                if f < min {
                    return Err(Error::field(path, format!("must be at least {}, got {}", number_text(&Value::from(min)), number_text(value))));
                }
            }
            if let Some(max) = bound("maximum") {
                if f > max {
                    return Err(Error::field(path, format!("must be at most {}, got {}", number_text(&Value::from(max)), number_text(value))));
                }
            }
            if let Some(min) = bound("exclusiveMinimum") {
                if f <= min {
                    return Err(Error::field(path, format!("must be more than {}, got {}", number_text(&Value::from(min)), number_text(value))));
                }
            }
            if let Some(max) = bound("exclusiveMaximum") {
                if f >= max {
                    return Err(Error::field(path, format!("must be less than {}, got {}", number_text(&Value::from(max)), number_text(value))));
                }
            }
        }
        Value::String(text) => {
            let n = text.chars().count() as u64;
            if let Some(min) = s.get("minLength").and_then(Value::as_u64) {
                if n < min {
                    return Err(Error::field(path, format!("must be at least {} characters long, got {}", min, n)));
                }
            }
            if let Some(max) = s.get("maxLength").and_then(Value::as_u64) {
                if n > max {
                    return Err(Error::field(path, format!("must be at most {} characters long, got {}", max, n)));
                }
            }
        }
        Value::Array(items) => {
            let n = items.len() as u64;
            if let Some(min) = s.get("minItems").and_then(Value::as_u64) {
                if n < min {
                    return Err(Error::field(path, format!("must have at least {} items, got {}", min, n)));
                }
            }
            if let Some(max) = s.get("maxItems").and_then(Value::as_u64) {
                if n > max {
                    return Err(Error::field(path, format!("must have at most {} items, got {}", max, n)));
                }
            }
            if let Some(item_schema) = s.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check_at(item_schema, item, &format!("{}[{}]", path, i), depth + 1)?;
                }
            }
        }
        Value::Object(members) => check_object(s, members, path, depth)?,
        _ => {}
    }
    Ok(())
}

fn check_object(s: &Map, members: &Map, path: &str, depth: usize) -> Result<(), Error> {
    if let Some(Value::Array(required)) = s.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !members.contains_key(name) {
                let p = join(path, name);
                let mut d = Map::new();
                d.insert("field", p.as_str());
                return Err(Error::invalid_arguments(format!("missing required field {}", crate::json::quote(&p))).with_details(d));
            }
        }
    }
    let props = s.get("properties").and_then(Value::as_object);
    let additional = s.get("additionalProperties");
    for (name, v) in members.iter() {
        let p = join(path, name);
        match props.and_then(|ps| ps.get(name)) {
            Some(sub) => check_at(sub, v, &p, depth + 1)?,
            None => match additional {
                Some(Value::Bool(false)) => {
                    let mut d = Map::new();
                    d.insert("field", p.as_str());
                    return Err(Error::invalid_arguments(format!("unknown field {}", crate::json::quote(&p))).with_details(d));
                }
                Some(sub @ Value::Object(_)) => check_at(sub, v, &p, depth + 1)?,
                _ => {}
            },
        }
    }
    Ok(())
}

/// apply_defaults fills absent properties that have a default, in value and
/// in the objects it holds, as schema describes them. Call it after check.
pub fn apply_defaults(schema: &Value, value: &mut Value) {
    apply_defaults_at(schema, value, 0)
}

fn apply_defaults_at(schema: &Value, value: &mut Value, depth: usize) {
    if depth > MAX_CHECK_DEPTH {
        return;
    }
    match value {
        Value::Object(members) => {
            let props = match schema.get_object("properties") {
                Some(p) => p,
                None => return,
            };
            for (name, sub) in props.iter() {
                match members.get_mut(name) {
                    Some(v) => apply_defaults_at(sub, v, depth + 1),
                    None => {
                        if let Some(d) = sub.get("default") {
                            members.insert(name, d.clone());
                        }
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items.iter_mut() {
                    apply_defaults_at(item_schema, item, depth + 1);
                }
            }
        }
        _ => {}
    }
}
