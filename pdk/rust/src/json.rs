//! A small JSON value type with a parser and a serializer.
//!
//! The parser is meant for hostile bytes: it never panics, refuses nesting
//! deeper than [`MAX_DEPTH`], refuses invalid UTF-8, control characters in
//! strings, leading zeros, trailing data and everything else RFC 8259 does
//! not allow, and reports the byte offset of the first problem. A lone UTF-16
//! surrogate in a `\u` escape becomes U+FFFD, as Go's encoding/json does.
//!
//! Objects keep their members in input order, duplicates included; lookups
//! return the last member with a name (what JavaScript and Go do). Numbers
//! keep their original text, so integers beyond 2^53 survive a round trip.

use std::fmt;

/// MAX_DEPTH is the deepest nesting of arrays and objects the parser accepts.
pub const MAX_DEPTH: usize = 512;

/// Value is one JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Map),
}

/// Number is a JSON number kept as its text, which is always valid JSON
/// number syntax.
#[derive(Clone, Debug)]
pub struct Number(String);

impl Number {
    /// from_i64 returns the number n.
    pub fn from_i64(n: i64) -> Number {
        Number(n.to_string())
    }

    /// from_u64 returns the number n.
    pub fn from_u64(n: u64) -> Number {
        Number(n.to_string())
    }

    /// from_f64 returns the number f, or None when f is NaN or infinite,
    /// which JSON cannot represent.
    pub fn from_f64(f: f64) -> Option<Number> {
        if !f.is_finite() {
            return None;
        }
        // Rust prints finite floats without exponent and with at least one
        // digit on each side of a '.', which is valid JSON; integral values
        // print without the fraction ("3").
        Some(Number(format!("{}", f)))
    }

    /// as_str returns the number's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// is_integer reports whether the number has an integral value
    /// ("3", "3.0" and "3e2" do; "3.5" does not).
    pub fn is_integer(&self) -> bool {
        if !self.0.contains(&['.', 'e', 'E'][..]) {
            return true;
        }
        match self.as_f64() {
            Some(f) => f.fract() == 0.0,
            None => false,
        }
    }

    /// as_i64 returns the number as an i64 when it is integral and in range.
    pub fn as_i64(&self) -> Option<i64> {
        if let Ok(n) = self.0.parse::<i64>() {
            return Some(n);
        }
        let f = self.as_f64()?;
        // 2^63 is exactly representable; anything at or above it is out of range.
        if f.fract() != 0.0 || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
            return None;
        }
        Some(f as i64)
    }

    /// as_u64 returns the number as a u64 when it is integral, not negative
    /// and in range.
    pub fn as_u64(&self) -> Option<u64> {
        let n = self.as_i64()?;
        if n < 0 {
            return None;
        }
        Some(n as u64)
    }

    /// as_f64 returns the number as the nearest f64, or None when it is too
    /// large for one.
    pub fn as_f64(&self) -> Option<f64> {
        match self.0.parse::<f64>() {
            Ok(f) if f.is_finite() => Some(f),
            _ => None,
        }
    }
}

impl PartialEq for Number {
    /// Numbers are equal when their values are: "1", "1.0" and "1e0" are.
    fn eq(&self, other: &Number) -> bool {
        if self.0 == other.0 {
            return true;
        }
        match (self.0.parse::<i64>(), other.0.parse::<i64>()) {
            (Ok(a), Ok(b)) => a == b,
            _ => match (self.as_f64(), other.as_f64()) {
                (Some(a), Some(b)) => a == b,
                _ => false,
            },
        }
    }
}

/// Map is a JSON object: members in insertion order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Map {
    members: Vec<(String, Value)>,
}

impl Map {
    /// new returns an empty object.
    pub fn new() -> Map {
        Map { members: Vec::new() }
    }

    /// get returns the value of the last member named key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// get_mut returns the value of the last member named key.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.members.iter_mut().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// contains_key reports whether a member is named key.
    pub fn contains_key(&self, key: &str) -> bool {
        self.members.iter().any(|(k, _)| k == key)
    }

    /// insert sets key to value: it replaces the last member named key, or
    /// appends a member.
    pub fn insert<K: Into<String>, V: Into<Value>>(&mut self, key: K, value: V) {
        let key = key.into();
        let value = value.into();
        match self.members.iter_mut().rev().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.members.push((key, value)),
        }
    }

    /// push appends a member without looking for an existing one.
    pub fn push<K: Into<String>, V: Into<Value>>(&mut self, key: K, value: V) {
        self.members.push((key.into(), value.into()));
    }

    /// remove deletes every member named key and returns the last one's value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let mut out = None;
        let mut i = 0;
        while i < self.members.len() {
            if self.members[i].0 == key {
                out = Some(self.members.remove(i).1);
            } else {
                i += 1;
            }
        }
        out
    }

    /// len returns the number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// is_empty reports whether the object has no members.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// iter yields the members in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.members.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// keys yields the member names in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.members.iter().map(|(k, _)| k.as_str())
    }
}

impl<K: Into<String>> FromIterator<(K, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Map {
        let mut m = Map::new();
        for (k, v) in iter {
            m.insert(k, v);
        }
        m
    }
}

impl IntoIterator for Map {
    type Item = (String, Value);
    type IntoIter = std::vec::IntoIter<(String, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.members.into_iter()
    }
}

impl Value {
    /// object returns an empty object.
    pub fn object() -> Value {
        Value::Object(Map::new())
    }

    /// type_name names the value's JSON type; integral numbers are "integer".
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_integer() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }

    /// is_null reports whether the value is null.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// as_bool returns a boolean's value.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// as_str returns a string's value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// as_number returns a number.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    /// as_i64 returns an integral number that fits an i64.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::as_i64)
    }

    /// as_u64 returns an integral, non-negative number that fits a u64.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(Number::as_u64)
    }

    /// as_f64 returns a number as an f64.
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().and_then(Number::as_f64)
    }

    /// as_array returns an array's items.
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// as_object returns an object's members.
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// as_object_mut returns an object's members for changing.
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// get returns the member key of an object; None for other values.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|m| m.get(key))
    }

    /// index returns item i of an array; None for other values.
    pub fn index(&self, i: usize) -> Option<&Value> {
        self.as_array().and_then(|a| a.get(i))
    }

    /// get_str returns the string member key of an object.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }

    /// get_i64 returns the integral member key of an object.
    pub fn get_i64(&self, key: &str) -> Option<i64> {
        self.get(key).and_then(Value::as_i64)
    }

    /// get_f64 returns the number member key of an object.
    pub fn get_f64(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(Value::as_f64)
    }

    /// get_bool returns the boolean member key of an object.
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(Value::as_bool)
    }

    /// get_array returns the array member key of an object.
    pub fn get_array(&self, key: &str) -> Option<&Vec<Value>> {
        self.get(key).and_then(Value::as_array)
    }

    /// get_object returns the object member key of an object.
    pub fn get_object(&self, key: &str) -> Option<&Map> {
        self.get(key).and_then(Value::as_object)
    }

    /// pointer follows an RFC 6901 JSON pointer ("/fields/status/name");
    /// "" is the value itself.
    pub fn pointer(&self, ptr: &str) -> Option<&Value> {
        if ptr.is_empty() {
            return Some(self);
        }
        let rest = ptr.strip_prefix('/')?;
        let mut cur = self;
        for raw in rest.split('/') {
            let token = raw.replace("~1", "/").replace("~0", "~");
            cur = match cur {
                Value::Object(m) => m.get(&token)?,
                Value::Array(a) => {
                    if token.len() > 1 && token.starts_with('0') {
                        return None;
                    }
                    a.get(token.parse::<usize>().ok()?)?
                }
                _ => return None,
            };
        }
        Some(cur)
    }

    /// with returns the object with key set to value; other values are
    /// returned unchanged. It makes nested literals short to write.
    pub fn with<K: Into<String>, V: Into<Value>>(mut self, key: K, value: V) -> Value {
        if let Value::Object(m) = &mut self {
            m.insert(key, value);
        }
        self
    }

    /// to_json serializes the value compactly.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        write_value(&mut out, self);
        out
    }
}

impl fmt::Display for Value {
    /// A value displays as its compact JSON.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::String(s.clone())
    }
}

macro_rules! from_signed {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Number(Number::from_i64(n as i64))
            }
        }
    )*};
}
from_signed!(i8, i16, i32, i64, isize);

macro_rules! from_unsigned {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Number(Number::from_u64(n as u64))
            }
        }
    )*};
}
from_unsigned!(u8, u16, u32, u64, usize);

impl From<f64> for Value {
    /// NaN and infinities become null.
    fn from(f: f64) -> Value {
        match Number::from_f64(f) {
            Some(n) => Value::Number(n),
            None => Value::Null,
        }
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}

impl From<Map> for Value {
    fn from(m: Map) -> Value {
        Value::Object(m)
    }
}

impl From<Vec<Value>> for Value {
    fn from(a: Vec<Value>) -> Value {
        Value::Array(a)
    }
}

impl From<&[&str]> for Value {
    fn from(a: &[&str]) -> Value {
        Value::Array(a.iter().map(|s| Value::from(*s)).collect())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    /// None becomes null.
    fn from(o: Option<T>) -> Value {
        match o {
            Some(v) => v.into(),
            None => Value::Null,
        }
    }
}

impl FromIterator<Value> for Value {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Value {
        Value::Array(iter.into_iter().collect())
    }
}

/// ParseError says why bytes are not JSON and where.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    /// offset is the byte offset of the problem.
    pub offset: usize,
    /// message describes the problem.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for ParseError {}

/// parse parses one JSON value; only whitespace may surround it.
pub fn parse(input: &[u8]) -> Result<Value, ParseError> {
    // Outside strings only ASCII is valid JSON, and each string's bytes are
    // checked as they are copied, so the input is not scanned for UTF-8
    // separately.
    let mut p = Parser { s: input, pos: 0 };
    p.skip_ws();
    let v = p.value(0)?;
    p.skip_ws();
    if p.pos < p.s.len() {
        return Err(p.err("unexpected data after the JSON value"));
    }
    Ok(v)
}

/// parse_str parses one JSON value from a string.
pub fn parse_str(input: &str) -> Result<Value, ParseError> {
    parse(input.as_bytes())
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, msg: &str) -> ParseError {
        ParseError { offset: self.pos, message: msg.to_string() }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &str, v: Value) -> Result<Value, ParseError> {
        let end = self.pos.saturating_add(word.len());
        if self.s.get(self.pos..end) == Some(word.as_bytes()) {
            self.pos = end;
            Ok(v)
        } else {
            Err(self.err("invalid literal"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        match self.peek() {
            None => Err(self.err("unexpected end of input")),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'"') => self.string().map(Value::String),
            Some(b'[') => self.array(depth + 1),
            Some(b'{') => self.object(depth + 1),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("unexpected character")),
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.err("nesting is deeper than the limit"));
        }
        self.pos += 1; // '['
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                None => return Err(self.err("unexpected end of input in an array")),
                Some(_) => return Err(self.err("expected ',' or ']' in an array")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.err("nesting is deeper than the limit"));
        }
        self.pos += 1; // '{'
        let mut map = Map::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(map));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.err("expected a member name in an object"));
            }
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.err("expected ':' after a member name"));
            }
            self.pos += 1;
            self.skip_ws();
            let v = self.value(depth)?;
            map.push(key, v);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                None => return Err(self.err("unexpected end of input in an object")),
                Some(_) => return Err(self.err("expected ',' or '}' in an object")),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(self.err("leading zero in a number"));
                }
            }
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("expected a digit")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.err("expected a digit after '.'"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("expected a digit in the exponent"));
            }
        }
        let text = std::str::from_utf8(self.s.get(start..self.pos).unwrap_or_default()).unwrap_or_default();
        Ok(Value::Number(Number(text.to_string())))
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let mut n = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.err("expected 4 hex digits after \\u")),
            };
            n = n * 16 + d as u32;
            self.pos += 1;
        }
        Ok(n)
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        let mut run = self.pos; // start of the unescaped run
        loop {
            self.pos = plain_run_end(self.s, self.pos, b'"');
            match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.push_run(&mut out, run)?;
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.push_run(&mut out, run)?;
                    self.pos += 1;
                    self.escape(&mut out)?;
                    run = self.pos;
                }
                Some(_) => return Err(self.err("control character in a string")),
            }
        }
    }

    /// push_run appends the unescaped bytes from run to the current position,
    /// which must be UTF-8. Runs end at ASCII bytes, which never occur
    /// inside a multi-byte character, so each run is checked on its own.
    fn push_run(&self, out: &mut String, run: usize) -> Result<(), ParseError> {
        let bytes = self.s.get(run..self.pos).unwrap_or_default();
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                Ok(())
            }
            Err(e) => Err(ParseError { offset: run + e.valid_up_to(), message: "invalid UTF-8".to_string() }),
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), ParseError> {
        let c = match self.peek() {
            Some(c) => c,
            None => return Err(self.err("unterminated string")),
        };
        self.pos += 1;
        match c {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let hi = self.hex4()?;
                let ch = if (0xD800..0xDC00).contains(&hi) {
                    // A high surrogate needs a low one right after it.
                    let save = self.pos;
                    if self.s.get(self.pos..self.pos.saturating_add(2)) == Some(b"\\u") {
                        self.pos += 2;
                        let lo = self.hex4()?;
                        if (0xDC00..0xE000).contains(&lo) {
                            char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                        } else {
                            self.pos = save;
                            None
                        }
                    } else {
                        None
                    }
                } else {
                    char::from_u32(hi)
                };
                out.push(ch.unwrap_or('\u{FFFD}'));
            }
            _ => {
                self.pos -= 1;
                return Err(self.err("invalid escape in a string"));
            }
        }
        Ok(())
    }
}

/// write_value appends v's compact JSON to out.
fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => out.push_str(&n.0),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, item)) in m.members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

/// write_string appends s as a JSON string. Control characters, quotes and
/// backslashes are escaped, and so are U+2028 and U+2029 so the output is
/// also safe inside JavaScript source. Runs of other characters are copied
/// whole.
pub fn write_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let b = s.as_bytes();
    out.push('"');
    let mut i = 0;
    loop {
        // 0xE2 leads U+2028 and U+2029 (E2 80 A8, E2 80 A9) and other
        // characters; every stop is on a character boundary.
        let end = plain_run_end(b, i, 0xE2);
        out.push_str(s.get(i..end).unwrap_or_default());
        i = end;
        let c = match b.get(i) {
            Some(c) => *c,
            None => break,
        };
        if c == 0xE2 {
            let ch_end = i.saturating_add(3).min(b.len());
            match b.get(i + 1..ch_end) {
                Some([0x80, 0xA8]) => out.push_str("\\u2028"),
                Some([0x80, 0xA9]) => out.push_str("\\u2029"),
                _ => out.push_str(s.get(i..ch_end).unwrap_or_default()),
            }
            i = ch_end;
            continue;
        }
        match c {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            _ => {
                out.push_str("\\u00");
                out.push(HEX[(c >> 4) as usize & 0xf] as char);
                out.push(HEX[(c & 0xf) as usize] as char);
            }
        }
        i += 1;
    }
    out.push('"');
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// has_byte reports whether any byte of v equals b.
fn has_byte(v: u64, b: u8) -> bool {
    let x = v ^ (ONES * b as u64);
    x.wrapping_sub(ONES) & !x & HIGHS != 0
}

/// has_control reports whether any byte of v is below 0x20.
fn has_control(v: u64) -> bool {
    v.wrapping_sub(ONES * 0x20) & !v & HIGHS != 0
}

/// plain_run_end returns the index of the first byte at or after i that is
/// a quote, a backslash, a control character or extra, or s.len(). It looks
/// at eight bytes per step: each loop step is checked for the call's
/// deadline by the host, so fewer steps make long strings much cheaper.
fn plain_run_end(s: &[u8], mut i: usize, extra: u8) -> usize {
    while let Some(chunk) = s.get(i..i.saturating_add(8)) {
        let v = match <[u8; 8]>::try_from(chunk) {
            Ok(w) => u64::from_le_bytes(w),
            Err(_) => break,
        };
        if has_byte(v, b'"') || has_byte(v, b'\\') || has_control(v) || has_byte(v, extra) {
            break;
        }
        i += 8;
    }
    while let Some(&c) = s.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 || c == extra {
            break;
        }
        i += 1;
    }
    i
}

/// quote returns s as a JSON string literal.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_string(&mut out, s);
    out
}
