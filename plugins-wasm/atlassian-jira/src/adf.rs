//! Plain text to and from the Atlassian Document Format, which REST API v3
//! uses for descriptions and comment bodies.

use workbench::{obj, Value};

/// from_text returns an ADF document for plain text: blank lines separate
/// paragraphs and single newlines become hard breaks.
pub fn from_text(text: &str) -> Value {
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut paragraphs = Vec::new();
    for block in normalized.split("\n\n") {
        let mut content = Vec::new();
        for line in block.split('\n') {
            if !content.is_empty() {
                content.push(obj! { "type" => "hardBreak" });
            }
            if !line.is_empty() {
                content.push(obj! { "type" => "text", "text" => line });
            }
        }
        // Breaks at either end of a paragraph carry nothing; drop them.
        while content.last().and_then(|n| n.get_str("type")) == Some("hardBreak") {
            content.pop();
        }
        while content.first().and_then(|n| n.get_str("type")) == Some("hardBreak") {
            content.remove(0);
        }
        if !content.is_empty() {
            paragraphs.push(obj! { "type" => "paragraph", "content" => Value::Array(content) });
        }
    }
    obj! { "type" => "doc", "version" => 1, "content" => Value::Array(paragraphs) }
}

/// is_document reports whether v looks like an ADF document: an object of
/// type "doc", version 1, with a content array.
pub fn is_document(v: &Value) -> bool {
    v.get_str("type") == Some("doc") && v.get_i64("version") == Some(1) && v.get_array("content").is_some()
}

/// to_text renders an ADF document (or any ADF node) as plain text:
/// blocks separated by blank lines, list items on their own lines. Marks
/// are dropped; mentions, emoji, dates and links keep their visible text.
/// A value that is a string is returned as is (API v2 style); anything
/// else renders as "".
pub fn to_text(v: &Value) -> String {
    if let Some(s) = v.as_str() {
        return s.to_string();
    }
    let mut blocks = Vec::new();
    render_blocks(v.get_array("content").map(Vec::as_slice).unwrap_or_default(), &mut blocks, 0);
    if blocks.is_empty() && v.get_str("type").is_some() && v.get_str("type") != Some("doc") {
        // A single inline node or block given on its own.
        let mut line = String::new();
        render_inline(v, &mut line, 0);
        return line;
    }
    blocks.join("\n\n")
}

/// MAX_NESTING bounds the walk; parsed JSON is already bounded, this keeps
/// the renderer cheap on deliberately deep documents.
const MAX_NESTING: usize = 64;

fn render_blocks(nodes: &[Value], out: &mut Vec<String>, depth: usize) {
    if depth > MAX_NESTING {
        return;
    }
    for node in nodes {
        let children = node.get_array("content").map(Vec::as_slice).unwrap_or_default();
        match node.get_str("type").unwrap_or_default() {
            "paragraph" | "heading" | "codeBlock" => {
                let mut line = String::new();
                for c in children {
                    render_inline(c, &mut line, depth + 1);
                }
                if !line.is_empty() {
                    out.push(line);
                }
            }
            "bulletList" | "orderedList" => {
                let ordered = node.get_str("type") == Some("orderedList");
                let start = node.pointer("/attrs/order").and_then(Value::as_i64).unwrap_or(1);
                let mut lines = Vec::new();
                for (i, item) in children.iter().enumerate() {
                    let mut inner = Vec::new();
                    render_blocks(item.get_array("content").map(Vec::as_slice).unwrap_or_default(), &mut inner, depth + 1);
                    let marker = if ordered { format!("{}. ", start.saturating_add(i as i64)) } else { "- ".to_string() };
                    let text = inner.join("\n").replace('\n', "\n  ");
                    lines.push(format!("{}{}", marker, text));
                }
                if !lines.is_empty() {
                    out.push(lines.join("\n"));
                }
            }
            "rule" => out.push("---".to_string()),
            "text" | "hardBreak" | "mention" | "emoji" | "inlineCard" | "date" | "status" => {
                let mut line = String::new();
                render_inline(node, &mut line, depth + 1);
                if !line.is_empty() {
                    out.push(line);
                }
            }
            _ => render_blocks(children, out, depth + 1),
        }
    }
}

fn render_inline(node: &Value, line: &mut String, depth: usize) {
    if depth > MAX_NESTING {
        return;
    }
    let attr = |name: &str| node.pointer(&format!("/attrs/{}", name)).and_then(Value::as_str);
    match node.get_str("type").unwrap_or_default() {
        "text" => line.push_str(node.get_str("text").unwrap_or_default()),
        "hardBreak" => line.push('\n'),
        "mention" => line.push_str(attr("text").unwrap_or("@someone")),
        "emoji" => line.push_str(attr("text").or_else(|| attr("shortName")).unwrap_or_default()),
        "inlineCard" | "blockCard" => line.push_str(attr("url").unwrap_or_default()),
        "status" => line.push_str(attr("text").unwrap_or_default()),
        "date" => line.push_str(attr("timestamp").unwrap_or_default()),
        _ => {
            for c in node.get_array("content").map(Vec::as_slice).unwrap_or_default() {
                render_inline(c, line, depth + 1);
            }
        }
    }
}
