//! Native unit tests of the parts that need no Jira: ADF conversion, input
//! checks, error mapping and where requests go. The full tool behaviour is
//! tested against a fake Jira in plugins-wasm/atlassianjiratest.

use crate::adf;
use crate::client::{map_error, valid_issue_ref, valid_project_ref, valid_site};
use workbench::http::{Headers, Response};
use workbench::json::parse_str;
use workbench::testing::{self, Reply};
use workbench::{obj, Error, Value};

#[test]
fn adf_from_text_builds_paragraphs_and_breaks() {
    let cases: &[(&str, &str)] = &[
        ("", r#"{"type":"doc","version":1,"content":[]}"#),
        ("one", r#"{"type":"doc","version":1,"content":[{"type":"paragraph","content":[{"type":"text","text":"one"}]}]}"#),
        (
            "a\nb\r\n\r\nc\n",
            r#"{"type":"doc","version":1,"content":[{"type":"paragraph","content":[{"type":"text","text":"a"},{"type":"hardBreak"},{"type":"text","text":"b"}]},{"type":"paragraph","content":[{"type":"text","text":"c"}]}]}"#,
        ),
        ("\n\n\n\nx", r#"{"type":"doc","version":1,"content":[{"type":"paragraph","content":[{"type":"text","text":"x"}]}]}"#),
    ];
    for (text, want) in cases {
        assert_eq!(adf::from_text(text).to_json(), *want, "from_text({:?})", text);
    }
}

#[test]
fn adf_to_text_renders_common_nodes() {
    let doc = parse_str(
        r#"{"type":"doc","version":1,"content":[
            {"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"Title"}]},
            {"type":"paragraph","content":[{"type":"text","text":"Hi ","marks":[{"type":"strong"}]},{"type":"mention","attrs":{"id":"1","text":"@Ada"}},{"type":"hardBreak"},{"type":"emoji","attrs":{"shortName":":smile:"}}]},
            {"type":"bulletList","content":[{"type":"listItem","content":[{"type":"paragraph","content":[{"type":"text","text":"one"}]}]},{"type":"listItem","content":[{"type":"paragraph","content":[{"type":"text","text":"two"}]}]}]},
            {"type":"orderedList","attrs":{"order":3},"content":[{"type":"listItem","content":[{"type":"paragraph","content":[{"type":"text","text":"three"}]}]}]},
            {"type":"panel","content":[{"type":"paragraph","content":[{"type":"inlineCard","attrs":{"url":"https://x.test"}}]}]},
            {"type":"rule"},
            {"type":"codeBlock","content":[{"type":"text","text":"let x = 1;"}]},
            {"type":"unknownBlock"}
        ]}"#,
    )
    .unwrap();
    assert_eq!(adf::to_text(&doc), "Title\n\nHi @Ada\n:smile:\n\n- one\n- two\n\n3. three\n\nhttps://x.test\n\n---\n\nlet x = 1;");
    for text in ["a", "a\nb\n\nc", "p1\n\np2\nline"] {
        assert_eq!(adf::to_text(&adf::from_text(text)), text, "round trip of {:?}", text);
    }
    assert_eq!(adf::to_text(&Value::from("plain v2 text")), "plain v2 text");
    assert_eq!(adf::to_text(&Value::from(5)), "");
    let deep = format!("{}{}", r#"{"type":"panel","content":["#.repeat(200), "]}".repeat(200));
    assert_eq!(adf::to_text(&parse_str(&format!(r#"{{"type":"doc","version":1,"content":[{}]}}"#, deep)).unwrap()), "");
    assert!(adf::is_document(&adf::from_text("x")));
    assert!(!adf::is_document(&obj! { "type" => "doc", "version" => 2, "content" => Value::Array(vec![]) }));
}

#[test]
fn references_are_checked() {
    for ok in ["PROJ-1", "A_B2-10", "proj-7", "10001"] {
        assert!(valid_issue_ref(ok), "{} must be valid", ok);
    }
    for bad in ["", "PROJ", "PROJ-", "-1", "1PROJ-2", "PROJ-1/..", "..", "PROJ-1?x", "PR OJ-1", "PROJ-1a"] {
        assert!(!valid_issue_ref(bad), "{:?} must be refused", bad);
    }
    assert!(valid_project_ref("PROJ") && valid_project_ref("10000") && !valid_project_ref("P-1") && !valid_project_ref(""));
    for ok in ["acme", "a", "my-site-2"] {
        assert!(valid_site(ok), "{}", ok);
    }
    for bad in ["", "-acme", "Acme", "acme.evil.com", "acme/x", &"a".repeat(63)] {
        assert!(!valid_site(bad), "{:?}", bad);
    }
}

fn response(status: u16, headers: &[(&str, &str)], body: &str) -> Response {
    let mut h = Headers::new();
    for (k, v) in headers {
        h.add(k, v);
    }
    Response { status, headers: h, body: body.as_bytes().to_vec(), url: "https://acme.atlassian.net/rest/api/3/x".into() }
}

#[test]
fn jira_errors_map_to_tool_errors() {
    let cases: &[(u16, &[(&str, &str)], &str, &str, &str, &str)] = &[
        (
            400,
            &[],
            r#"{"errorMessages":[],"errors":{"summary":"You must specify a summary of the issue."}}"#,
            "INVALID_ARGUMENTS",
            "Jira rejected the request: summary: You must specify a summary of the issue.",
            r#"{"status":400,"errors":{"summary":"You must specify a summary of the issue."}}"#,
        ),
        (401, &[], "Client must be authenticated to access this resource.", "UNAUTHORIZED", "Client must be authenticated to access this resource.", r#"{"status":401}"#),
        (403, &[], r#"{"errorMessages":["No permission."],"errors":{}}"#, "FORBIDDEN", "Jira refused the request: No permission.", r#"{"status":403,"error_messages":["No permission."]}"#),
        (
            404,
            &[],
            r#"{"errorMessages":["Issue does not exist or you do not have permission to see it."],"errors":{}}"#,
            "NOT_FOUND",
            "Issue does not exist or you do not have permission to see it.",
            r#"{"status":404,"error_messages":["Issue does not exist or you do not have permission to see it."]}"#,
        ),
        (429, &[("Retry-After", "17")], "", "RATE_LIMITED", "retry after 17 seconds", r#"{"status":429,"retry_after_seconds":17}"#),
        (503, &[], "<html>\n  down  </html>", "UPSTREAM_ERROR", "Jira answered HTTP 503: <html> down </html>", r#"{"status":503}"#),
        (500, &[], "{}", "UPSTREAM_ERROR", "Jira answered HTTP 500: HTTP 500", r#"{"status":500}"#),
    ];
    for (status, headers, body, code, msg, details) in cases {
        let e: Error = map_error(&response(*status, headers, body));
        assert_eq!(e.code, *code, "{} {}", status, body);
        assert!(e.message.contains(msg), "{}: message {:?} lacks {:?}", status, e.message, msg);
        assert_eq!(e.details.map(|d| d.to_json()).as_deref(), Some(*details), "{}", status);
    }
}

#[test]
fn tools_target_the_connection_site_without_a_base_url() {
    testing::reset();
    testing::set_config("site", "acme");
    testing::set_http(Box::new(|_| Reply::Response { status: 200, headers: vec![], body: br#"{"accountId":"a1","displayName":"Ada"}"#.to_vec() }));
    let (status, out) = testing::call(crate::plugin, "atlassian_jira_get_myself", "{}");
    assert_eq!(status, 0, "{}", out);
    assert_eq!(out.get_str("site"), Some("https://acme.atlassian.net"));
    let ex = testing::exchanges();
    assert_eq!(ex[0].url, "https://acme.atlassian.net/rest/api/3/myself");
    assert_eq!(ex[0].header("Accept"), Some("application/json"));
    assert!(ex[0].header("Authorization").is_none(), "the plugin must leave the credential to the host");

    testing::reset();
    let (status, out) = testing::call(crate::plugin, "atlassian_jira_get_myself", "{}");
    assert_eq!((status, out.get_str("code")), (1, Some("NOT_CONNECTED")), "{}", out);
    testing::set_config("site", "evil.com/x");
    let (_, out) = testing::call(crate::plugin, "atlassian_jira_get_myself", "{}");
    assert_eq!(out.get_str("code"), Some("NOT_CONNECTED"), "{}", out);
    assert!(testing::exchanges().is_empty(), "no request may leave for an invalid site");
}

#[test]
fn manifest_is_valid() {
    let (status, m) = testing::manifest(crate::plugin);
    assert_eq!(status, 0, "{}", m);
    assert!(m.get_array("tools").map_or(0, Vec::len) >= 12);
}
