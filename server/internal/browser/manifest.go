package browser

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/workbench-dev/workbench/runtime/manifest"
)

// Integration is the name of the built-in integration.
const Integration = "browser"

// Tool slugs.
const (
	ToolNavigate   = "browser_navigate"
	ToolGetText    = "browser_get_text"
	ToolClick      = "browser_click"
	ToolType       = "browser_type"
	ToolScreenshot = "browser_screenshot"
	ToolWaitFor    = "browser_wait_for"
	ToolEvaluate   = "browser_evaluate"
	ToolTabs       = "browser_tabs"
)

// Bounds of the tools' inputs and outputs, quoted in descriptions and
// errors.
const (
	maxURLBytes        = 8 << 10
	maxSelectorBytes   = 1 << 10
	maxTypeBytes       = 16 << 10
	maxTextBytes       = 64 << 10
	maxLinks           = 200
	maxLinkTextBytes   = 200
	maxTitleBytes      = 1 << 10
	maxScreenshotBytes = 8 << 20
	maxExpressionBytes = 64 << 10
	maxResultBytes     = 64 << 10
	maxTabs            = 10
	maxTabIDBytes      = 64
	defaultWaitSeconds = 10
	maxWaitSeconds     = 25 // under maxActionTime
	waitInterval       = 100 * time.Millisecond
)

var selectorSchema = fmt.Sprintf(`{"type":"string","minLength":1,"maxLength":%d,"description":"A CSS selector; the first matching element is used."}`, maxSelectorBytes)

// Manifest returns the built-in integration's manifest.
func Manifest() *manifest.Manifest {
	return &manifest.Manifest{
		ABI:         1,
		Name:        Integration,
		Version:     "0.1.0",
		Title:       "Browser",
		Description: "Drive your own headless Chromium: open web pages, read their text and links, click, type and take screenshots. The browser keeps its cookies and logins between calls; it closes after a few idle minutes and reopens with the same profile.",
		Categories:  []string{"browsing"},
		Auth:        manifest.Auth{Mode: manifest.ModeNone},
		Tools: []manifest.Tool{
			{
				Slug:  ToolNavigate,
				Title: "Open a web page",
				Description: "Loads an http(s) URL in your browser's tab and waits for the page to load. " +
					"Loopback, private, link-local and cloud metadata addresses are refused (EGRESS_DENIED), redirects and the page's own requests included; " +
					"`refused` lists requests of the page the browser was not allowed to make.",
				InputSchema: raw(fmt.Sprintf(`{"type":"object","properties":{"url":{"type":"string","minLength":1,"maxLength":%d,"description":"An absolute http or https URL."}},
  "required":["url"],"additionalProperties":false}`, maxURLBytes)),
				OutputSchema: raw(`{"type":"object","properties":{"url":{"type":"string","description":"The page's URL after redirects."},
  "title":{"type":"string"},"status":{"type":"integer","description":"The HTTP status of the document."},
  "refused":{"type":"array","items":{"type":"string"}}},"required":["url","title","status"]}`),
				Annotations: manifest.Annotations{OpenWorld: true},
			},
			{
				Slug:  ToolGetText,
				Title: "Read the page",
				Description: fmt.Sprintf("Returns the readable text of the page (or of the first element matching selector), with its links (at most %d). "+
					"Text over %d bytes is cut and truncated is true.", maxLinks, maxTextBytes),
				InputSchema: raw(`{"type":"object","properties":{"selector":` + selectorSchema + `},"additionalProperties":false}`),
				OutputSchema: raw(`{"type":"object","properties":{"url":{"type":"string"},"title":{"type":"string"},"text":{"type":"string"},
  "truncated":{"type":"boolean"},"links":{"type":"array","items":{"type":"object","properties":{"text":{"type":"string"},"href":{"type":"string"}},"required":["text","href"]}}},
  "required":["url","title","text","truncated","links"]}`),
				Annotations: manifest.Annotations{ReadOnly: true},
			},
			{
				Slug:         ToolClick,
				Title:        "Click an element",
				Description:  "Clicks the first element matching selector once it is visible, as a user's mouse would.",
				InputSchema:  raw(`{"type":"object","properties":{"selector":` + selectorSchema + `},"required":["selector"],"additionalProperties":false}`),
				OutputSchema: raw(`{"type":"object","properties":{"url":{"type":"string"},"title":{"type":"string"}},"required":["url","title"]}`),
				Annotations:  manifest.Annotations{Destructive: true, OpenWorld: true},
			},
			{
				Slug:  ToolType,
				Title: "Type into an element",
				Description: fmt.Sprintf("Focuses the first element matching selector and types text (at most %d bytes) as key presses; "+
					"submit presses Enter afterwards.", maxTypeBytes),
				InputSchema: raw(fmt.Sprintf(`{"type":"object","properties":{"selector":%s,"text":{"type":"string","maxLength":%d},
  "submit":{"type":"boolean","description":"Press Enter after typing. Default false."}},"required":["selector","text"],"additionalProperties":false}`, selectorSchema, maxTypeBytes)),
				OutputSchema: raw(`{"type":"object","properties":{"url":{"type":"string"},"title":{"type":"string"}},"required":["url","title"]}`),
				Annotations:  manifest.Annotations{Destructive: true, OpenWorld: true},
			},
			{
				Slug:  ToolScreenshot,
				Title: "Take a screenshot",
				Description: fmt.Sprintf("Returns a PNG of the viewport, of the whole page (full_page), or of the first element matching selector; "+
					"images over %d bytes are refused.", maxScreenshotBytes),
				InputSchema: raw(`{"type":"object","properties":{"selector":` + selectorSchema + `,
  "full_page":{"type":"boolean","description":"Capture the whole page, not just the viewport. Default false."}},"additionalProperties":false}`),
				Annotations: manifest.Annotations{ReadOnly: true},
			},
			{
				Slug:  ToolWaitFor,
				Title: "Wait for an element or text",
				Description: fmt.Sprintf("Waits until an element matches selector, or the page's text contains text (give exactly one), "+
					"for at most timeout_seconds (default %d, at most %d); TIMEOUT when it does not appear.", defaultWaitSeconds, maxWaitSeconds),
				InputSchema: raw(fmt.Sprintf(`{"type":"object","properties":{"selector":%s,"text":{"type":"string","minLength":1,"maxLength":%d},
  "timeout_seconds":{"type":"integer","minimum":1,"maximum":%d}},"additionalProperties":false}`, selectorSchema, maxSelectorBytes, maxWaitSeconds)),
				OutputSchema: raw(`{"type":"object","properties":{"url":{"type":"string"},"title":{"type":"string"}},"required":["url","title"]}`),
				Annotations:  manifest.Annotations{ReadOnly: true},
			},
			{
				Slug:  ToolEvaluate,
				Title: "Evaluate JavaScript",
				Description: fmt.Sprintf("Evaluates a JavaScript expression (not statements; wrap those in an arrow function you call) in the page, awaits it when it is a promise, "+
					"and returns its value as JSON; results over %d bytes of JSON are refused (OUTPUT_TOO_LARGE), a thrown exception is a TOOL_ERROR with its message.", maxResultBytes),
				InputSchema: raw(fmt.Sprintf(`{"type":"object","properties":{"expression":{"type":"string","minLength":1,"maxLength":%d}},
  "required":["expression"],"additionalProperties":false}`, maxExpressionBytes)),
				OutputSchema: raw(`{"type":"object","properties":{"value":{"description":"The expression's value as JSON; null for undefined."}},"required":["value"]}`),
				Annotations:  manifest.Annotations{Destructive: true, OpenWorld: true},
			},
			{
				Slug:  ToolTabs,
				Title: "Manage tabs",
				Description: fmt.Sprintf("list: your browser's tabs (id, url, title, current). open: a new tab (at most %d), optionally loading url, and make it current. "+
					"switch: make tab_id current (tabs a page opened too). close: close tab_id (not the first tab). The other tools act on the current tab.", maxTabs),
				InputSchema: raw(fmt.Sprintf(`{"type":"object","properties":{"action":{"type":"string","enum":["list","open","close","switch"]},
  "tab_id":{"type":"string","minLength":1,"maxLength":%d,"description":"For close and switch: an id from list."},
  "url":{"type":"string","maxLength":%d,"description":"For open: an http(s) URL to load in the new tab."}},
  "required":["action"],"additionalProperties":false}`, maxTabIDBytes, maxURLBytes)),
				OutputSchema: raw(`{"type":"object","properties":{"tabs":{"type":"array","items":{"type":"object","properties":{
    "id":{"type":"string"},"url":{"type":"string"},"title":{"type":"string"},"current":{"type":"boolean"}},"required":["id","url","title","current"]}},
  "page":{"type":"object","description":"For open with url: the loaded page, as browser_navigate returns it."}},"required":["tabs"]}`),
				Annotations: manifest.Annotations{Destructive: true, OpenWorld: true},
			},
		},
	}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }
