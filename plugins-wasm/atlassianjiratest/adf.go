package atlassianjiratest

import (
	"fmt"
	"strings"
)

// ADF nodes the fake accepts, as the Atlassian Document Format defines them.
var (
	adfBlocks  = map[string]bool{"paragraph": true, "heading": true, "bulletList": true, "orderedList": true, "listItem": true, "codeBlock": true, "blockquote": true, "rule": true, "panel": true}
	adfInlines = map[string]bool{"text": true, "hardBreak": true, "mention": true, "emoji": true, "inlineCard": true, "date": true, "status": true}
)

// checkADF returns what is wrong with an ADF document, or "" when it is
// one: {"type": "doc", "version": 1, "content": [blocks]}.
func checkADF(v any) string {
	doc, ok := v.(map[string]any)
	if !ok {
		return "the value is not an object"
	}
	if doc["type"] != "doc" {
		return fmt.Sprintf("type is %v, want doc", doc["type"])
	}
	if doc["version"] != float64(1) {
		return fmt.Sprintf("version is %v, want 1", doc["version"])
	}
	content, ok := doc["content"].([]any)
	if !ok {
		return "content must be an array"
	}
	for i, b := range content {
		if p := checkNode(b, true, 1); p != "" {
			return fmt.Sprintf("content[%d]: %s", i, p)
		}
	}
	return ""
}

func checkNode(v any, block bool, depth int) string {
	if depth > 32 {
		return "nested too deeply"
	}
	n, ok := v.(map[string]any)
	if !ok {
		return "a node must be an object"
	}
	typ, _ := n["type"].(string)
	switch {
	case block && !adfBlocks[typ]:
		return fmt.Sprintf("%q is not a block node", typ)
	case !block && !adfInlines[typ]:
		return fmt.Sprintf("%q is not an inline node", typ)
	}
	if typ == "text" {
		if s, _ := n["text"].(string); s == "" {
			return "a text node needs non-empty text"
		}
		return ""
	}
	raw, present := n["content"]
	if !present {
		return ""
	}
	content, ok := raw.([]any)
	if !ok {
		return "content must be an array"
	}
	// Paragraphs, headings and code blocks hold inline nodes; the others blocks.
	childBlock := typ != "paragraph" && typ != "heading" && typ != "codeBlock"
	for i, c := range content {
		if p := checkNode(c, childBlock, depth+1); p != "" {
			return fmt.Sprintf("%s.content[%d]: %s", typ, i, p)
		}
	}
	return ""
}

// adfText returns the text of a document's text nodes, separated by
// spaces, for JQL text search.
func adfText(v any) string {
	var parts []string
	var walk func(any, int)
	walk = func(v any, depth int) {
		n, ok := v.(map[string]any)
		if !ok || depth > 32 {
			return
		}
		if s, ok := n["text"].(string); ok {
			parts = append(parts, s)
		}
		if c, ok := n["content"].([]any); ok {
			for _, x := range c {
				walk(x, depth+1)
			}
		}
	}
	walk(v, 0)
	return strings.Join(parts, " ")
}
