//! Native unit tests: `rustc --edition 2021 --test src/lib.rs`.

use crate::http::{encode_component, Query, Request};
use crate::json::{self, parse, parse_str, quote, Value, MAX_DEPTH};
use crate::plugin::{Auth, Placement, Plugin, Tool, STATUS_ERROR, STATUS_OK};
use crate::testing::{self, Reply};
use crate::{obj, schema, ApiKeyField, Error, Input};

#[test]
fn json_parse_accepts_valid_documents() {
    let cases: &[(&str, &str)] = &[
        ("null", "null"),
        (" true ", "true"),
        ("false", "false"),
        ("0", "0"),
        ("-0", "-0"),
        ("12345678901234567890123", "12345678901234567890123"),
        ("-1.5e+10", "-1.5e+10"),
        ("1E-2", "1E-2"),
        ("\"\"", "\"\""),
        ("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"", "\"a\\\"b\\\\c/d\\b\\f\\n\\r\\t\""),
        ("\"\\u00e9\\u20AC\"", "\"é€\""),
        ("\"\\ud83d\\ude00\"", "\"😀\""),
        ("\"\\ud83d\"", "\"\u{fffd}\""),
        ("\"\\ude00x\"", "\"\u{fffd}x\""),
        ("\"\\ud83d\\u0041\"", "\"\u{fffd}A\""),
        ("\"\\u0001\"", "\"\\u0001\""),
        ("\"\\u2028\"", "\"\\u2028\""),
        ("[]", "[]"),
        ("[1, [2, []], {}]", "[1,[2,[]],{}]"),
        ("{\"a\": 1, \"b\": [true, null], \"a\": 2}", "{\"a\":1,\"b\":[true,null],\"a\":2}"),
        ("\r\n\t{ }\n", "{}"),
    ];
    for (input, want) in cases {
        match parse_str(input) {
            Ok(v) => assert_eq!(v.to_json(), *want, "parse({:?})", input),
            Err(e) => panic!("parse({:?}) = {}", input, e),
        }
    }
}

#[test]
fn json_parse_refuses_invalid_documents() {
    let cases: &[(&[u8], usize, &str)] = &[
        (b"", 0, "unexpected end"),
        (b"   ", 3, "unexpected end"),
        (b"nul", 0, "invalid literal"),
        (b"truex", 4, "after the JSON value"),
        (b"01", 1, "leading zero"),
        (b"-", 1, "expected a digit"),
        (b"1.", 2, "after '.'"),
        (b"1e", 2, "exponent"),
        (b"+1", 0, "unexpected character"),
        (b".5", 0, "unexpected character"),
        (b"NaN", 0, "unexpected character"),
        (b"\"abc", 4, "unterminated"),
        (b"\"a\nb\"", 2, "control character"),
        (b"\"\\x\"", 2, "invalid escape"),
        (b"\"\\u12\"", 5, "hex digits"),
        (b"[1,]", 3, "unexpected character"),
        (b"[1 2]", 3, "expected ','"),
        (b"{\"a\" 1}", 5, "expected ':'"),
        (b"{a:1}", 1, "member name"),
        (b"{\"a\":1,}", 7, "member name"),
        (b"{\"a\":1", 6, "end of input"),
        (b"[", 1, "unexpected end"),
        (b"\xef\xbb\xbf{}", 0, "unexpected character"),
        (b"\"\xff\"", 1, "invalid UTF-8"),
        (b"\"ok \xc3\xa9 \xe2\x82\"", 7, "invalid UTF-8"),
        (b"\"\\n\xc3\"", 3, "invalid UTF-8"),
        (b"[\xc3\xa9]", 1, "unexpected character"),
        (b"{} {}", 3, "after the JSON value"),
    ];
    for (input, offset, msg) in cases {
        match parse(input) {
            Ok(v) => panic!("parse({:?}) = {}, want an error", String::from_utf8_lossy(input), v),
            Err(e) => {
                assert!(e.message.contains(msg), "parse({:?}) error {:?}, want {:?}", String::from_utf8_lossy(input), e.message, msg);
                assert_eq!(e.offset, *offset, "parse({:?}) offset ({})", String::from_utf8_lossy(input), e);
            }
        }
    }
}

#[test]
fn json_parse_limits_depth() {
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(parse_str(&ok).is_ok(), "depth {} must parse", MAX_DEPTH);
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    let e = parse_str(&deep).unwrap_err();
    assert!(e.message.contains("deeper than the limit"), "{}", e);
    assert_eq!(e.offset, MAX_DEPTH);
    let mixed = "{\"a\":".repeat(MAX_DEPTH + 1) + "1" + &"}".repeat(MAX_DEPTH + 1);
    assert!(parse_str(&mixed).is_err());
    // Hostile depth far beyond the limit is refused without exhausting the stack.
    let hostile = "[".repeat(1_000_000);
    assert!(parse_str(&hostile).is_err());
}

/// Xorshift is a tiny deterministic generator for the hostile-input tests.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

#[test]
fn json_parse_never_panics_on_mutated_input() {
    let seeds: &[&[u8]] = &[
        br#"{"a":[1,2.5e3,-0.1,"x\u00e9\ud83d\ude00"],"b":{"c":null,"d":true,"e":false}}"#,
        br#"[[[[{"k":"v"}]]]]"#,
        br#""\\\"\/\b\f\n\r\t""#,
    ];
    let alphabet = b"{}[]\",:\\u0123456789eE+-.tfnrl \t\n\xff\xc3\xa9";
    let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15);
    let mut parsed = 0;
    for round in 0..20_000 {
        let seed = seeds[round % seeds.len()];
        let mut b = seed.to_vec();
        for _ in 0..(1 + rng.next() % 4) {
            let pos = (rng.next() as usize) % (b.len() + 1);
            let c = alphabet[(rng.next() as usize) % alphabet.len()];
            match rng.next() % 3 {
                0 if pos < b.len() => b[pos] = c,
                1 if pos < b.len() => {
                    b.remove(pos);
                }
                _ => b.insert(pos, c),
            }
        }
        if let Ok(v) = parse(&b) {
            parsed += 1;
            // Whatever parses must serialize to JSON that parses to the same value.
            let again = parse_str(&v.to_json()).expect("serialized output must parse");
            assert_eq!(again, v);
        }
    }
    assert!(parsed > 0, "no mutation parsed; the test is not exercising the success path");
}

#[test]
fn json_round_trips_strings_with_every_escape_class() {
    let s: String = (0u32..0x80).filter_map(char::from_u32).chain("é€😀\u{2028}\u{2029}".chars()).collect();
    let v = Value::from(s.as_str());
    let text = v.to_json();
    assert!(!text.bytes().any(|b| b < 0x20), "control bytes must be escaped: {}", text);
    assert!(text.contains("\\u0000") && text.contains("\\u001f") && text.contains("\\u2028"));
    assert_eq!(parse_str(&text).unwrap().as_str(), Some(s.as_str()));
    assert_eq!(quote("a\"b"), "\"a\\\"b\"");
}

#[test]
fn json_strings_find_specials_at_every_offset() {
    // The string scanners look at eight bytes at a time; put each special
    // character at every offset around those chunks.
    for special in ["\"", "\\", "\n", "\u{1}", "\u{2028}", "\u{2029}", "…", "é", "😀"] {
        for at in 0..20 {
            let s = format!("{}{}{}", "a".repeat(at), special, "b".repeat(19 - at));
            let text = Value::from(s.as_str()).to_json();
            assert!(!text.contains('\n') && !text.contains('\u{2028}') && !text.contains('\u{1}'), "unescaped in {:?}", text);
            assert_eq!(parse_str(&text).unwrap().as_str(), Some(s.as_str()), "round trip of {:?}", s);
        }
    }
    for at in 0..20 {
        let raw = format!("\"{}\u{1f}{}\"", "a".repeat(at), "b".repeat(19 - at));
        let e = parse_str(&raw).unwrap_err();
        assert_eq!((e.offset, e.message.as_str()), (at + 1, "control character in a string"), "{:?}", raw);
        let unterminated = format!("\"{}", "x".repeat(at));
        assert_eq!(parse_str(&unterminated).unwrap_err().offset, at + 1);
    }
}

#[test]
fn json_numbers_convert_exactly() {
    let n = |s: &str| parse_str(s).unwrap();
    assert_eq!(n("9007199254740993").as_i64(), Some(9007199254740993));
    assert_eq!(n("9007199254740993").to_json(), "9007199254740993");
    assert_eq!(n("-9223372036854775808").as_i64(), Some(i64::MIN));
    assert_eq!(n("9223372036854775808").as_i64(), None);
    assert_eq!(n("3.0").as_i64(), Some(3));
    assert_eq!(n("3e2").as_i64(), Some(300));
    assert_eq!(n("3.5").as_i64(), None);
    assert_eq!(n("-1").as_u64(), None);
    assert_eq!(n("1e400").as_f64(), None);
    assert_eq!(n("2.5").as_f64(), Some(2.5));
    assert_eq!(n("3.0").type_name(), "integer");
    assert_eq!(n("3.5").type_name(), "number");
    assert_eq!(n("1"), n("1.0"));
    assert_ne!(n("9007199254740993"), n("9007199254740992"));
    assert_eq!(Value::from(f64::NAN), Value::Null);
    assert_eq!(Value::from(0.1).to_json(), "0.1");
    assert_eq!(Value::from(1e21).to_json(), "1000000000000000000000");
    assert_eq!(Value::from(-7i32).to_json(), "-7");
    assert_eq!(Value::from(u64::MAX).to_json(), "18446744073709551615");
}

#[test]
fn json_accessors_and_pointer() {
    let v = parse_str(r#"{"a":{"b":[10,{"c":"x"}],"d~e/f":1},"s":"t","n":null,"a2":1,"a2":2}"#).unwrap();
    assert_eq!(v.pointer("/a/b/0").and_then(Value::as_i64), Some(10));
    assert_eq!(v.pointer("/a/b/1/c").and_then(Value::as_str), Some("x"));
    assert_eq!(v.pointer("/a/d~0e~1f").and_then(Value::as_i64), Some(1));
    assert!(v.pointer("/a/b/01").is_none());
    assert!(v.pointer("/a/b/9").is_none());
    assert!(v.pointer("a").is_none());
    assert_eq!(v.pointer(""), Some(&v));
    assert_eq!(v.get_str("s"), Some("t"));
    assert_eq!(v.get_i64("s"), None);
    assert!(v.get("n").map_or(false, Value::is_null));
    assert_eq!(v.get_i64("a2"), Some(2), "the last duplicate wins");
    assert_eq!(v.get_object("a").map(|m| m.len()), Some(2));
    let mut m = v.as_object().unwrap().clone();
    assert_eq!(m.remove("a2").and_then(|v| v.as_i64()), Some(2));
    assert!(!m.contains_key("a2"));
    let built = obj! { "k" => "v", "n" => 3, "none" => None::<i64>, "list" => Value::from(&["a", "b"][..]) };
    assert_eq!(built.to_json(), r#"{"k":"v","n":3,"none":null,"list":["a","b"]}"#);
    assert_eq!(format!("{}", built.get("k").unwrap()), "\"v\"");
}

fn tool_schema() -> Value {
    schema::object(
        vec![
            ("name", schema::string("A name.").with("minLength", 1).with("maxLength", 5)),
            ("count", schema::integer("A count.").with("minimum", 1).with("maximum", 100).with("default", 30)),
            ("mode", schema::enumeration(&["fast", "slow"], "A mode.").with("default", "fast")),
            ("tags", schema::array(schema::string("A tag."), "Tags.").with("maxItems", 2)),
            ("nested", schema::object(vec![("flag", schema::boolean("A flag.").with("default", true))], &[])),
            ("ratio", schema::number("A ratio.").with("exclusiveMaximum", 1)),
            ("maybe", Value::object().with("type", Value::from(&["string", "null"][..]))),
        ],
        &["name"],
    )
}

#[test]
fn schema_check_reports_the_first_violation_with_its_field() {
    let s = tool_schema();
    let cases: &[(&str, &str, &str)] = &[
        (r#"[]"#, "", "the input must be an object, not an array"),
        (r#"{}"#, "name", "missing required field \"name\""),
        (r#"{"name":""}"#, "name", "at least 1 characters"),
        (r#"{"name":"toolong"}"#, "name", "at most 5 characters"),
        (r#"{"name":"a","count":0}"#, "count", "must be at least 1, got 0"),
        (r#"{"name":"a","count":101}"#, "count", "must be at most 100, got 101"),
        (r#"{"name":"a","count":1.5}"#, "count", "expected integer, got number"),
        (r#"{"name":"a","count":"1"}"#, "count", "expected integer, got string"),
        (r#"{"name":"a","mode":"medium"}"#, "mode", "must be one of \"fast\", \"slow\"; got \"medium\""),
        (r#"{"name":"a","tags":["x",1]}"#, "tags[1]", "expected string, got integer"),
        (r#"{"name":"a","tags":["x","y","z"]}"#, "tags", "at most 2 items"),
        (r#"{"name":"a","nested":{"flag":1}}"#, "nested.flag", "expected boolean, got integer"),
        (r#"{"name":"a","nested":{"other":1}}"#, "nested.other", "unknown field \"nested.other\""),
        (r#"{"name":"a","extra":1}"#, "extra", "unknown field \"extra\""),
        (r#"{"name":"a","ratio":1}"#, "ratio", "must be less than 1"),
        (r#"{"name":"a","maybe":3}"#, "maybe", "expected string or null, got integer"),
    ];
    for (input, field, msg) in cases {
        let v = parse_str(input).unwrap();
        let e = schema::check(&s, &v).expect_err(input);
        assert_eq!(e.code, "INVALID_ARGUMENTS", "{}", input);
        assert!(e.message.contains(msg), "check({}) = {:?}, want {:?}", input, e.message, msg);
        if !field.is_empty() {
            assert_eq!(e.details.as_ref().and_then(|d| d.get_str("field")), Some(*field), "{}", input);
        }
    }
    for ok in [r#"{"name":"a"}"#, r#"{"name":"abcde","count":1.0,"maybe":null,"ratio":0.5,"tags":[]}"#] {
        schema::check(&s, &parse_str(ok).unwrap()).unwrap();
    }
}

#[test]
fn schema_apply_defaults_fills_absent_members_only() {
    let s = tool_schema();
    let mut v = parse_str(r#"{"name":"a","count":7,"nested":{}}"#).unwrap();
    schema::apply_defaults(&s, &mut v);
    assert_eq!(v.to_json(), r#"{"name":"a","count":7,"nested":{"flag":true},"mode":"fast"}"#);
}

fn greet(input: &Input) -> Result<Value, Error> {
    let name = input.required_str("name")?;
    crate::log_info(&format!("greeting {}", name));
    crate::progress(1.0, 2.0, "half");
    Ok(obj! { "greeting" => format!("hello {}", name), "count" => input.i64("count")?, "tool" => input.tool() })
}

fn fail(_: &Input) -> Result<Value, Error> {
    Err(Error::not_found("nothing here").with_details(obj! { "id" => 7 }))
}

fn bad_code(_: &Input) -> Result<Value, Error> {
    Err(Error::new("not-a-code", ""))
}

fn fetch(input: &Input) -> Result<Value, Error> {
    let url = format!("{}/items/{}", crate::base_url().unwrap_or_default(), encode_component(input.required_str("name")?));
    let resp = Request::post(&url).header("Accept", "application/json").json(&obj! { "q" => "x\"y" }).timeout_ms(500).send()?;
    Ok(obj! { "status" => resp.status, "ct" => resp.header("content-type"), "link" => resp.headers.values("LINK").len(), "body" => resp.json()? })
}

fn test_plugin() -> Plugin {
    Plugin::new("demo-kit", "1.2.3", "A demo.")
        .title("Demo")
        .hosts(&["{site}.example.com"])
        .auth(Auth::ApiKey {
            fields: vec![ApiKeyField::new("site", "Site").required().pattern("^[a-z]+$"), ApiKeyField::new("token", "Token").secret().required()],
            placement: Placement::Basic { username: "{site}".into(), password: "{token}".into() },
        })
        .setting("region", "Region", &["US", "EU"], "US")
        .tool(Tool::new("demo_kit_greet", "Greets.", greet).input(tool_schema()).read_only().open_world())
        .tool(Tool::new("demo_kit_fail", "Fails.", fail).destructive())
        .tool(Tool::new("demo_kit_bad_code", "Bad code.", bad_code))
        .tool(Tool::new("demo_kit_fetch", "Fetches.", fetch).input(tool_schema()).export("fetch_export"))
}

#[test]
fn plugin_manifest_has_every_declared_part() {
    let (status, m) = testing::manifest(test_plugin);
    assert_eq!(status, STATUS_OK, "{}", m);
    let want = r#"{"abi":1,"name":"demo-kit","version":"1.2.3","title":"Demo","description":"A demo.","hosts":["{site}.example.com"],"auth":{"mode":"apikey","apikey":{"fields":[{"name":"site","label":"Site","secret":false,"required":true,"pattern":"^[a-z]+$"},{"name":"token","label":"Token","secret":true,"required":true}],"placement":{"in":"basic","username":"{site}","password":"{token}"}}},"settings":[{"name":"region","description":"Region","enum":["US","EU"],"default":"US"}],"tools":["#;
    assert!(m.to_json().starts_with(want), "manifest head = {}", m);
    let tools = m.get_array("tools").unwrap();
    assert_eq!(tools.len(), 4);
    assert_eq!(tools[0].get("annotations").unwrap().to_json(), r#"{"readOnly":true,"destructive":false,"idempotent":false,"openWorld":true}"#);
    assert_eq!(tools[0].pointer("/inputSchema/required/0").and_then(Value::as_str), Some("name"));
    assert_eq!(tools[1].pointer("/annotations/destructive"), Some(&Value::Bool(true)));
    assert_eq!(tools[1].get_str("export"), Some("demo_kit_fail"));
    assert_eq!(tools[3].get_str("export"), Some("fetch_export"));
}

fn dup_plugin() -> Plugin {
    Plugin::new("demo", "1.0.0", "d").tool(Tool::new("demo_a", "A.", fail)).tool(Tool::new("demo_a", "A again.", fail))
}
fn prefix_plugin() -> Plugin {
    Plugin::new("demo", "1.0.0", "d").tool(Tool::new("other_a", "A.", fail))
}
fn both_plugin() -> Plugin {
    Plugin::new("demo", "1.0.0", "d").tool(Tool::new("demo_a", "A.", fail).read_only().destructive())
}
fn schema_plugin() -> Plugin {
    Plugin::new("demo", "1.0.0", "d").tool(Tool::new("demo_a", "A.", fail).input(schema::string("no")))
}
fn export_plugin() -> Plugin {
    Plugin::new("demo", "1.0.0", "d").tool(Tool::new("demo_a", "A.", fail).export("wb_a"))
}
fn shared_export_plugin() -> Plugin {
    Plugin::new("demo", "1.0.0", "d").tool(Tool::new("demo_a", "A.", fail).export("x")).tool(Tool::new("demo_b", "B.", fail).export("x"))
}
fn slug_plugin() -> Plugin {
    Plugin::new("demo", "1.0.0", "d").tool(Tool::new("demo_A", "A.", fail))
}
fn description_plugin() -> Plugin {
    Plugin::new("demo", "1.0.0", "d").tool(Tool::new("demo_a", " ", fail))
}

#[test]
fn plugin_manifest_refuses_inconsistent_declarations() {
    let cases: &[(fn() -> Plugin, &str)] = &[
        (dup_plugin, "is declared twice"),
        (prefix_plugin, "must start with \"demo_\""),
        (both_plugin, "both read-only and destructive"),
        (schema_plugin, "type must be \"object\""),
        (export_plugin, "is reserved"),
        (shared_export_plugin, "is also the export of demo_a"),
        (slug_plugin, "must match"),
        (description_plugin, "description is required"),
    ];
    for (declare, msg) in cases {
        let (status, out) = testing::manifest(*declare);
        assert_eq!(status, STATUS_ERROR);
        assert_eq!(out.get_str("code"), Some("INVALID_MANIFEST"));
        assert!(out.get_str("message").unwrap_or_default().contains(msg), "{} does not say {:?}", out, msg);
    }
}

#[test]
fn plugin_call_checks_input_and_runs_the_handler() {
    testing::reset();
    let (status, out) = testing::call(test_plugin, "demo_kit_greet", r#"{"name":"ada"}"#);
    assert_eq!(status, STATUS_OK, "{}", out);
    assert_eq!(out.to_json(), r#"{"greeting":"hello ada","count":30,"tool":"demo_kit_greet"}"#);
    assert_eq!(testing::logs(), vec![(1, "greeting ada".to_string())]);
    assert_eq!(testing::progress_reports(), vec![(1.0, 2.0, "half".to_string())]);

    let cases: &[(&str, &str, &str, &str)] = &[
        ("demo_kit_greet", "", "INVALID_ARGUMENTS", "missing required field \"name\""),
        ("demo_kit_greet", "{\"name\":", "INVALID_ARGUMENTS", "the input is not valid JSON: unexpected end of input at byte 8"),
        ("demo_kit_greet", "[1]", "INVALID_ARGUMENTS", "the input must be an object, not an array"),
        ("demo_kit_fail", "{}", "NOT_FOUND", "nothing here"),
        ("demo_kit_fail", "{\"x\":1}", "INVALID_ARGUMENTS", "unknown field \"x\""),
        ("demo_kit_bad_code", "", "TOOL_ERROR", "tool failed with TOOL_ERROR"),
        ("demo_kit_nope", "{}", "TOOL_ERROR", "this module declares no tool \"demo_kit_nope\""),
    ];
    for (slug, input, code, msg) in cases {
        let (status, out) = testing::call(test_plugin, slug, input);
        assert_eq!(status, STATUS_ERROR, "{}({}) = {}", slug, input, out);
        assert_eq!(out.get_str("code"), Some(*code), "{}({}) = {}", slug, input, out);
        assert_eq!(out.get_str("message"), Some(*msg), "{}({}) = {}", slug, input, out);
    }
    let (_, out) = testing::call(test_plugin, "demo_kit_fail", "{}");
    assert_eq!(out.get("details").map(Value::to_json).as_deref(), Some(r#"{"id":7}"#));
}

#[test]
fn http_request_round_trips_through_the_host() {
    testing::reset();
    testing::set_config("base_url", "https://api.example.com/");
    testing::set_http(Box::new(|ex| {
        assert_eq!(ex.method, "POST");
        Reply::Response {
            status: 201,
            headers: vec![("Content-Type".into(), "application/json".into()), ("Link".into(), "<a>".into()), ("Link".into(), "<b>".into())],
            body: br#"{"ok":true}"#.to_vec(),
        }
    }));
    let (status, out) = testing::call(test_plugin, "demo_kit_fetch", r#"{"name":"a/b c"}"#);
    assert_eq!(status, STATUS_OK, "{}", out);
    assert_eq!(out.to_json(), r#"{"status":201,"ct":"application/json","link":2,"body":{"ok":true}}"#);
    let ex = testing::exchanges();
    assert_eq!(ex.len(), 1);
    assert_eq!(ex[0].url, "https://api.example.com/items/a%2Fb%20c");
    assert_eq!(ex[0].header("accept"), Some("application/json"));
    assert_eq!(ex[0].header("Content-Type"), Some("application/json"));
    assert_eq!(ex[0].body, br#"{"q":"x\"y"}"#.to_vec());
    assert_eq!(ex[0].timeout_ms, Some(500));

    // A host failure keeps the host's code.
    testing::set_http(Box::new(|_| Reply::Failure(Error::new("EGRESS_DENIED", "no"))));
    let (status, out) = testing::call(test_plugin, "demo_kit_fetch", r#"{"name":"a"}"#);
    assert_eq!((status, out.get_str("code")), (STATUS_ERROR, Some("EGRESS_DENIED")));

    // A body that is not JSON is an upstream error, not a panic.
    testing::set_http(Box::new(|_| Reply::Response { status: 200, headers: vec![], body: b"<html>".to_vec() }));
    let (status, out) = testing::call(test_plugin, "demo_kit_fetch", r#"{"name":"a"}"#);
    assert_eq!((status, out.get_str("code")), (STATUS_ERROR, Some("UPSTREAM_ERROR")), "{}", out);
}

#[test]
fn http_encoding_and_query() {
    assert_eq!(encode_component("AZaz09-._~"), "AZaz09-._~");
    assert_eq!(encode_component("a b/c?d&e=f%g+é"), "a%20b%2Fc%3Fd%26e%3Df%25g%2B%C3%A9");
    let q = Query::new().add("jql", "project = A").add("n", 5).add_opt("x", None::<&str>).add_opt("y", Some("z"));
    assert_eq!(q.append_to("https://h/p"), "https://h/p?jql=project%20%3D%20A&n=5&y=z");
    assert_eq!(Query::new().append_to("https://h/p"), "https://h/p");
    let head = Request::get("https://h/p").header("Accept", "a").header("accept", "b").head_json();
    assert_eq!(head, r#"{"method":"GET","url":"https://h/p","headers":{"accept":["b"]}}"#);
}

#[test]
fn input_accessors_report_wrong_types() {
    let i = Input::new("t", parse_str(r#"{"s":"x","n":3,"f":1.5,"b":true,"a":["p","q"],"bad":[1],"o":{},"z":null}"#).unwrap());
    assert_eq!(i.str("s").unwrap(), Some("x"));
    assert_eq!(i.str("z").unwrap(), None);
    assert!(i.has("z") && !i.has("missing"));
    assert_eq!(i.i64("n").unwrap(), Some(3));
    assert_eq!(i.f64("f").unwrap(), Some(1.5));
    assert_eq!(i.bool("b").unwrap(), Some(true));
    assert_eq!(i.strings("a").unwrap(), Some(vec!["p", "q"]));
    assert!(i.object("o").unwrap().is_some());
    let e = i.required_str("missing").unwrap_err();
    assert_eq!(e.message, "missing required field \"missing\"");
    let e = i.i64("f").unwrap_err();
    assert_eq!(e.message, "field \"f\": expected integer, got number");
    let e = i.strings("bad").unwrap_err();
    assert_eq!(e.details.unwrap().get_str("field"), Some("bad[0]"));
    assert!(i.bool("s").is_err() && i.array("s").is_err() && i.object("s").is_err() && i.str("n").is_err());
}

#[test]
fn error_values_follow_the_abi() {
    let e = Error::new("RATE_LIMITED", "slow down").with_details(obj! { "retry_after_seconds" => 30 });
    assert_eq!(e.to_value().to_json(), r#"{"code":"RATE_LIMITED","message":"slow down","details":{"retry_after_seconds":30}}"#);
    assert_eq!(Error::new("lower", "m").to_value().get_str("code"), Some("TOOL_ERROR"));
    assert_eq!(Error::new("A1_B", "m").to_value().get_str("code"), Some("A1_B"));
    assert_eq!(Error::from_value(&parse_str(r#"{"code":"EGRESS_DENIED","message":"m"}"#).unwrap()).map(|e| e.code), Some("EGRESS_DENIED".to_string()));
    assert_eq!(Error::from_value(&parse_str(r#"{"message":"m"}"#).unwrap()), None);
    assert_eq!(format!("{}", Error::not_found("x")), "NOT_FOUND: x");
    let _ = json::MAX_DEPTH;
}
