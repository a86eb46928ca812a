package browser

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/toolcall"
)

// maxActionTime bounds one tool call's work in the browser, beside the
// call's own deadline.
const maxActionTime = 30 * time.Second

var _ toolcall.Caller = (*Manager)(nil)

// action is one decoded tool call, ready to run on a session's tab.
type action func(ctx context.Context, s *Session) (any, error)

// tools decode each tool's input into its action; decoding and checking
// happen before any browser is started.
var tools = map[string]func(input []byte) (action, error){
	ToolNavigate:   decodeAs(navigate),
	ToolGetText:    decodeAs(getText),
	ToolClick:      decodeAs(click),
	ToolType:       decodeAs(typeText),
	ToolScreenshot: decodeAs(screenshot),
	ToolWaitFor:    decodeAs(waitUntil),
	ToolEvaluate:   decodeAs(evaluate),
	ToolTabs:       decodeAs(tabs),
}

// checker is an input that checks itself after decoding.
type checker interface{ check() error }

// decodeAs decodes a tool's input strictly into In, checks it, and binds it
// to run.
func decodeAs[In checker](run func(ctx context.Context, s *Session, in In) (any, error)) func([]byte) (action, error) {
	return func(input []byte) (action, error) {
		var in In
		if len(bytes.TrimSpace(input)) == 0 {
			input = []byte("{}")
		}
		dec := json.NewDecoder(bytes.NewReader(input))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return nil, failure.Errorf(failure.InvalidArguments, "arguments: %v", err)
		}
		if err := in.check(); err != nil {
			return nil, err
		}
		return func(ctx context.Context, s *Session) (any, error) { return run(ctx, s, in) }, nil
	}
}

// Call runs one of the browser tools in c.UserID's session. Every failure
// is a *failure.Error.
func (m *Manager) Call(ctx context.Context, c toolcall.Call) (json.RawMessage, error) {
	decode, ok := tools[c.Tool]
	if !ok {
		return nil, failure.Errorf(failure.UnknownTool, "browser has no tool %q", c.Tool)
	}
	act, err := decode(c.Input)
	if err != nil {
		return nil, err
	}
	sess, release, err := m.Acquire(ctx, c.UserID)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := sess.lock(ctx); err != nil {
		return nil, err
	}
	defer sess.unlock()
	// Actions run on the tab's context, bounded by maxActionTime and ended
	// with the call.
	tctx, cancel := context.WithTimeout(sess.current(), maxActionTime)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	out, err := act(tctx, sess)
	if err != nil {
		return nil, m.toolError(ctx, tctx, c.Tool, err)
	}
	data, err := json.Marshal(out)
	if err != nil {
		return nil, failure.Errorf(failure.Internal, "encoding the result of %s: %v", c.Tool, err)
	}
	return data, nil
}

// toolError turns what an action returned into a *failure.Error: its own
// failures pass, an ended context is TIMEOUT or CANCELED, and anything else
// is the browser's error as TOOL_ERROR.
func (m *Manager) toolError(ctx, tctx context.Context, tool string, err error) error {
	var fe *failure.Error
	switch {
	case errors.As(err, &fe):
		return fe
	case ctx.Err() != nil:
		return ended(ctx, "running "+tool)
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		return failure.Errorf(failure.Timeout, "%s did not finish within %s", tool, maxActionTime)
	}
	m.logger.Info("browser tool failed", "tool", tool, "err", err)
	return failure.Errorf(failure.ToolError, "%s: the browser reported: %v", tool, err)
}

type navigateInput struct {
	URL string `json:"url"`
}

// check accepts an absolute http(s) URL with a host and no user info,
// within maxURLBytes.
func (in navigateInput) check() error {
	if len(in.URL) > maxURLBytes {
		return failure.Errorf(failure.InvalidArguments, "url is %d bytes, over the limit of %d", len(in.URL), maxURLBytes)
	}
	u, err := url.Parse(in.URL)
	switch {
	case err != nil:
		return failure.Errorf(failure.InvalidArguments, "url is not a URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return failure.Errorf(failure.EgressDenied, "the browser opens only http and https URLs, not %q", u.Scheme+":")
	case u.Host == "" || u.Opaque != "":
		return failure.Errorf(failure.InvalidArguments, "url %q has no host", in.URL)
	case u.User != nil:
		return failure.Errorf(failure.InvalidArguments, "url must not carry a user name or password")
	}
	return nil
}

type pageResult struct {
	URL     string   `json:"url"`
	Title   string   `json:"title"`
	Status  int64    `json:"status,omitempty"`
	Refused []string `json:"refused,omitempty"`
}

// navigate loads in.URL. A load that failed while the proxy refused a
// connection is EGRESS_DENIED naming the refusals; any other failed load is
// NAVIGATION_FAILED with the browser's net error.
func navigate(ctx context.Context, s *Session, in navigateInput) (any, error) {
	mark := s.proxy.mark()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(in.URL))
	refused := s.proxy.refusalsSince(mark)
	if err != nil {
		if len(refused) > 0 {
			return nil, failure.Errorf(failure.EgressDenied, "the browser may not reach %s", strings.Join(refused, "; "))
		}
		var le *chromedp.LoadError
		if errors.As(err, &le) {
			return nil, failure.Errorf(failure.NavigationFailed, "%s did not load: %s", in.URL, le.ErrorText)
		}
		return nil, err
	}
	res, err := location(ctx)
	if err != nil {
		return nil, err
	}
	if resp != nil {
		res.Status = resp.Status
	}
	res.Refused = refused
	return res, nil
}

// location returns the page's URL and title.
func location(ctx context.Context) (*pageResult, error) {
	res, err := chromedp.Run(ctx, chromedp.Evaluate[*pageResult](fmt.Sprintf(`({url: location.href.slice(0, %d), title: String(document.title).slice(0, %d)})`, maxURLBytes, maxTitleBytes)))
	if err == nil && res != nil {
		res.URL, _ = cut(res.URL, maxURLBytes)
		res.Title, _ = cut(res.Title, maxTitleBytes)
	}
	return res, err
}

type selectorInput struct {
	Selector string `json:"selector"`
}

// check accepts a selector within maxSelectorBytes; required says whether
// it may be empty.
func checkSelector(sel string, required bool) error {
	switch {
	case sel == "" && required:
		return failure.Errorf(failure.InvalidArguments, "selector is required")
	case len(sel) > maxSelectorBytes:
		return failure.Errorf(failure.InvalidArguments, "selector is %d bytes, over the limit of %d", len(sel), maxSelectorBytes)
	}
	return nil
}

func (in selectorInput) check() error { return checkSelector(in.Selector, true) }

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// findElement checks that sel is valid CSS and matches an element:
// INVALID_ARGUMENTS or SELECTOR_NOT_FOUND otherwise.
func findElement(ctx context.Context, sel string) error {
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](
		`(s => { try { return document.querySelectorAll(s).length } catch (e) { return -1 } })(`+jsString(sel)+`)`))
	switch {
	case err != nil:
		return err
	case n < 0:
		return failure.Errorf(failure.InvalidArguments, "selector %q is not valid CSS", sel)
	case n == 0:
		return failure.Errorf(failure.SelectorNotFound, "no element matches %q on %s", sel, currentURL(ctx))
	}
	return nil
}

// currentURL is the page's URL for messages; "the page" when unknown.
func currentURL(ctx context.Context) string {
	if res, err := location(ctx); err == nil && res != nil {
		return res.URL
	}
	return "the page"
}

func click(ctx context.Context, s *Session, in selectorInput) (any, error) {
	if err := findElement(ctx, in.Selector); err != nil {
		return nil, err
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(in.Selector))); err != nil {
		return nil, err
	}
	return location(ctx)
}

type typeInput struct {
	Selector string `json:"selector"`
	Text     string `json:"text"`
	Submit   bool   `json:"submit"`
}

func (in typeInput) check() error {
	if len(in.Text) > maxTypeBytes {
		return failure.Errorf(failure.InvalidArguments, "text is %d bytes, over the limit of %d", len(in.Text), maxTypeBytes)
	}
	return checkSelector(in.Selector, true)
}

func typeText(ctx context.Context, s *Session, in typeInput) (any, error) {
	if err := findElement(ctx, in.Selector); err != nil {
		return nil, err
	}
	keys := in.Text
	if in.Submit {
		keys += kb.Enter
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(in.Selector), keys)); err != nil {
		return nil, err
	}
	return location(ctx)
}

type getTextInput struct {
	Selector string `json:"selector"`
}

func (in getTextInput) check() error { return checkSelector(in.Selector, false) }

type link struct {
	Text string `json:"text"`
	Href string `json:"href"`
}

type textResult struct {
	URL       string `json:"url"`
	Title     string `json:"title"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
	Links     []link `json:"links"`
}

// getTextScript returns the text and links of the element matching its
// first argument (the body when empty), cut in the page to the budgets so a
// huge page never crosses the wire whole; null when nothing matches, and
// the string "invalid" for a selector that is not CSS.
const getTextScript = `((sel, maxChars, maxLinks, maxLinkChars, maxURL, maxTitle) => {
  let root;
  try { root = sel ? document.querySelector(sel) : (document.body || document.documentElement) } catch (e) { return "invalid" }
  if (!root) return null;
  const text = String(root.innerText ?? root.textContent ?? "");
  const links = [];
  for (const a of root.querySelectorAll("a[href]")) {
    if (links.length >= maxLinks) break;
    links.push({text: String(a.innerText ?? "").trim().slice(0, maxLinkChars), href: String(a.href).slice(0, maxURL)});
  }
  return {url: location.href.slice(0, maxURL), title: String(document.title).slice(0, maxTitle), text: text.slice(0, maxChars + 1), links};
})`

func getText(ctx context.Context, s *Session, in getTextInput) (any, error) {
	expr := fmt.Sprintf("%s(%s, %d, %d, %d, %d, %d)", getTextScript, jsString(in.Selector), maxTextBytes, maxLinks, maxLinkTextBytes, maxURLBytes, maxTitleBytes)
	v, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr))
	if err != nil {
		return nil, err
	}
	switch string(bytes.TrimSpace(v)) {
	case "null":
		return nil, failure.Errorf(failure.SelectorNotFound, "no element matches %q on %s", in.Selector, currentURL(ctx))
	case `"invalid"`:
		return nil, failure.Errorf(failure.InvalidArguments, "selector %q is not valid CSS", in.Selector)
	}
	var res textResult
	if err := json.Unmarshal(v, &res); err != nil {
		return nil, fmt.Errorf("reading the page's text: %w", err)
	}
	res.Text, res.Truncated = cut(res.Text, maxTextBytes)
	res.URL, _ = cut(res.URL, maxURLBytes)
	res.Title, _ = cut(res.Title, maxTitleBytes)
	if len(res.Links) > maxLinks {
		res.Links = res.Links[:maxLinks]
	}
	for i := range res.Links {
		res.Links[i].Text, _ = cut(res.Links[i].Text, maxLinkTextBytes)
		res.Links[i].Href, _ = cut(res.Links[i].Href, maxURLBytes)
	}
	if res.Links == nil {
		res.Links = []link{}
	}
	return &res, nil
}

// cut returns s cut to at most n bytes on a UTF-8 boundary, and whether it
// was cut.
func cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

type screenshotInput struct {
	Selector string `json:"selector"`
	FullPage bool   `json:"full_page"`
}

func (in screenshotInput) check() error {
	if in.Selector != "" && in.FullPage {
		return failure.Errorf(failure.InvalidArguments, "give selector or full_page, not both")
	}
	return checkSelector(in.Selector, false)
}

// imageResult is a content result holding one PNG (docs/abi.md, "Content
// results").
type imageResult struct {
	Content []imageBlock `json:"$content"`
}

type imageBlock struct {
	Type     string `json:"type"`
	Data     string `json:"data"`
	MIMEType string `json:"mimeType"`
}

func screenshot(ctx context.Context, s *Session, in screenshotInput) (any, error) {
	var shot chromedp.Action[[]byte]
	switch {
	case in.Selector != "":
		if err := findElement(ctx, in.Selector); err != nil {
			return nil, err
		}
		shot = chromedp.Screenshot(chromedp.CSS(in.Selector))
	case in.FullPage:
		shot = chromedp.FullScreenshot(100) // 100 means PNG
	default:
		shot = chromedp.CaptureScreenshot()
	}
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		return nil, err
	}
	if len(png) > maxScreenshotBytes {
		return nil, failure.Errorf(failure.OutputTooLarge, "the screenshot is %d bytes, over the limit of %d; capture an element with selector instead", len(png), maxScreenshotBytes)
	}
	return &imageResult{Content: []imageBlock{{Type: "image", Data: base64.StdEncoding.EncodeToString(png), MIMEType: "image/png"}}}, nil
}

type waitForInput struct {
	Selector       string `json:"selector"`
	Text           string `json:"text"`
	TimeoutSeconds *int   `json:"timeout_seconds"`
}

func (in waitForInput) check() error {
	switch {
	case (in.Selector == "") == (in.Text == ""):
		return failure.Errorf(failure.InvalidArguments, "give selector or text, exactly one")
	case len(in.Text) > maxSelectorBytes:
		return failure.Errorf(failure.InvalidArguments, "text is %d bytes, over the limit of %d", len(in.Text), maxSelectorBytes)
	case in.TimeoutSeconds != nil && (*in.TimeoutSeconds < 1 || *in.TimeoutSeconds > maxWaitSeconds):
		return failure.Errorf(failure.InvalidArguments, "timeout_seconds must be from 1 to %d", maxWaitSeconds)
	}
	return checkSelector(in.Selector, false)
}

// waitUntil polls the page (every waitInterval) until an element matches
// in.Selector or its text contains in.Text, or the timeout passes.
func waitUntil(ctx context.Context, s *Session, in waitForInput) (any, error) {
	timeout := defaultWaitSeconds * time.Second
	if in.TimeoutSeconds != nil {
		timeout = time.Duration(*in.TimeoutSeconds) * time.Second
	}
	what := fmt.Sprintf("the text %q", in.Text)
	predicate := `(document.body ? document.body.innerText : "").includes(` + jsString(in.Text) + `)`
	if in.Selector != "" {
		what = fmt.Sprintf("an element matching %q", in.Selector)
		predicate = `(s => { try { return document.querySelector(s) !== null } catch (e) { return "invalid" } })(` + jsString(in.Selector) + `)`
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := chromedp.Run(wctx, chromedp.Poll[json.RawMessage](predicate,
		chromedp.WithPollingInterval(waitInterval), chromedp.WithPollingTimeout(0)))
	switch {
	case err != nil && ctx.Err() == nil && wctx.Err() != nil:
		return nil, failure.Errorf(failure.Timeout, "%s did not appear on %s within %s (timeout_seconds)", what, currentURL(ctx), timeout)
	case err != nil:
		return nil, err
	case string(v) == `"invalid"`:
		return nil, failure.Errorf(failure.InvalidArguments, "selector %q is not valid CSS", in.Selector)
	}
	return location(ctx)
}

type evaluateInput struct {
	Expression string `json:"expression"`
}

func (in evaluateInput) check() error {
	switch {
	case strings.TrimSpace(in.Expression) == "":
		return failure.Errorf(failure.InvalidArguments, "expression is required")
	case len(in.Expression) > maxExpressionBytes:
		return failure.Errorf(failure.InvalidArguments, "expression is %d bytes, over the limit of %d", len(in.Expression), maxExpressionBytes)
	}
	return nil
}

// evaluateScript awaits the expression and encodes its value as JSON in
// the page, so a result over the limit never crosses the wire: it returns
// the JSON text, or {tooLarge: length} or {unserializable: why}. The line
// break before the closing parenthesis ends a trailing line comment.
const evaluateScript = `(async (max) => {
  const v = await (%s
  );
  let s;
  try { s = JSON.stringify(v) } catch (e) { return {unserializable: String(e)} }
  if (s === undefined) return "null";
  return s.length > max ? {tooLarge: s.length} : s;
})(%d)`

type evaluateResult struct {
	Value json.RawMessage `json:"value"`
}

// evaluate runs an expression in the page and returns its value as JSON,
// within maxResultBytes.
func evaluate(ctx context.Context, s *Session, in evaluateInput) (any, error) {
	v, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](fmt.Sprintf(evaluateScript, in.Expression, maxResultBytes), chromedp.EvalAwaitPromise))
	var exc *chromedp.ExceptionError
	if errors.As(err, &exc) {
		return nil, failure.Errorf(failure.ToolError, "the expression threw: %v", exc)
	}
	if err != nil {
		return nil, err
	}
	var text string
	if json.Unmarshal(v, &text) != nil {
		var odd struct {
			TooLarge       int    `json:"tooLarge"`
			Unserializable string `json:"unserializable"`
		}
		_ = json.Unmarshal(v, &odd) // a shape the script does not return leaves both empty
		if odd.TooLarge > 0 {
			return nil, failure.Errorf(failure.OutputTooLarge, "the result is %d characters of JSON, over the limit of %d bytes", odd.TooLarge, maxResultBytes)
		}
		return nil, failure.Errorf(failure.ToolError, "the result cannot be encoded as JSON: %s", odd.Unserializable)
	}
	if len(text) > maxResultBytes {
		return nil, failure.Errorf(failure.OutputTooLarge, "the result is %d bytes of JSON, over the limit of %d", len(text), maxResultBytes)
	}
	if !json.Valid([]byte(text)) {
		return nil, failure.Errorf(failure.ToolError, "the page returned a result that is not JSON")
	}
	return &evaluateResult{Value: json.RawMessage(text)}, nil
}

// Actions of browser_tabs.
const (
	tabsList   = "list"
	tabsOpen   = "open"
	tabsClose  = "close"
	tabsSwitch = "switch"
)

type tabsInput struct {
	Action string `json:"action"`
	TabID  string `json:"tab_id"`
	URL    string `json:"url"`
}

func (in tabsInput) check() error {
	switch in.Action {
	case tabsList:
	case tabsOpen:
		if in.URL != "" {
			return navigateInput{URL: in.URL}.check()
		}
		return nil
	case tabsClose, tabsSwitch:
		if in.TabID == "" || len(in.TabID) > maxTabIDBytes {
			return failure.Errorf(failure.InvalidArguments, "%s needs tab_id (1 to %d bytes) from browser_tabs list", in.Action, maxTabIDBytes)
		}
	default:
		return failure.Errorf(failure.InvalidArguments, "action must be list, open, close or switch, not %q", in.Action)
	}
	if in.URL != "" {
		return failure.Errorf(failure.InvalidArguments, "url goes only with action open")
	}
	return nil
}

type tabInfo struct {
	ID      string `json:"id"`
	URL     string `json:"url"`
	Title   string `json:"title"`
	Current bool   `json:"current"`
}

type tabsResult struct {
	Tabs []tabInfo   `json:"tabs"`
	Page *pageResult `json:"page,omitempty"`
}

// tabs lists, opens, closes or switches the session's tabs, then lists
// them. The first tab cannot be closed: the browser ends with it.
func tabs(callCtx context.Context, s *Session, in tabsInput) (any, error) {
	// The browser-wide steps run on the first tab, which outlives any tab
	// this call closes, within the call's bounds. callCtx lives on the
	// current tab, so it ends when that tab is closed: uncouple first.
	ctx, cancel := context.WithTimeout(s.first, maxActionTime)
	defer cancel()
	uncouple := context.AfterFunc(callCtx, cancel)
	defer uncouple()
	pages, err := pageTargets(ctx)
	if err != nil {
		return nil, err
	}
	res := &tabsResult{}
	id := target.ID(in.TabID)
	switch in.Action {
	case tabsOpen:
		if len(pages) >= maxTabs {
			return nil, failure.Errorf(failure.LimitExceeded, "%d tabs are open, the limit is %d; close one first", len(pages), maxTabs)
		}
		if err := s.attach(ctx, ""); err != nil {
			return nil, err
		}
		if in.URL != "" {
			nctx, cancelNav := context.WithTimeout(s.tab, maxActionTime)
			defer cancelNav()
			defer context.AfterFunc(ctx, cancelNav)()
			page, err := navigate(nctx, s, navigateInput{URL: in.URL})
			if err != nil {
				return nil, err
			}
			res.Page = page.(*pageResult)
		}
	case tabsSwitch:
		if pages[id] == nil {
			return nil, failure.Errorf(failure.NotFound, "no tab %q; browser_tabs list shows your tabs", in.TabID)
		}
		if err := s.attach(ctx, id); err != nil {
			return nil, err
		}
	case tabsClose:
		switch {
		case pages[id] == nil:
			return nil, failure.Errorf(failure.NotFound, "no tab %q; browser_tabs list shows your tabs", in.TabID)
		case id == chromedp.FromContext(s.first).Target.TargetID:
			return nil, failure.Errorf(failure.InvalidArguments, "the first tab cannot be closed; navigate it elsewhere")
		}
		if _, err := chromedp.CallBrowser(ctx, target.CloseTarget, target.CloseTargetParams{TargetID: id}); err != nil {
			return nil, err
		}
		if ref, ok := s.tabs[id]; ok {
			uncouple()
			ref.detach()
			delete(s.tabs, id)
			if s.tab == ref.ctx {
				s.tab = s.first
			}
		}
	}
	if pages, err = pageTargets(ctx); err != nil {
		return nil, err
	}
	current := chromedp.FromContext(s.tab).Target.TargetID
	for _, p := range pages {
		url, _ := cut(p.URL, maxURLBytes)
		title, _ := cut(p.Title, maxTitleBytes)
		res.Tabs = append(res.Tabs, tabInfo{ID: string(p.TargetID), URL: url, Title: title, Current: p.TargetID == current})
	}
	slices.SortFunc(res.Tabs, func(a, b tabInfo) int { return strings.Compare(a.ID, b.ID) })
	return res, nil
}

// pageTargets returns the browser's tabs by ID.
func pageTargets(ctx context.Context) (map[target.ID]*target.Info, error) {
	infos, err := chromedp.Targets(ctx)
	if err != nil {
		return nil, err
	}
	pages := make(map[target.ID]*target.Info)
	for _, t := range infos {
		if t.Type == "page" {
			pages[t.TargetID] = t
		}
	}
	return pages, nil
}
