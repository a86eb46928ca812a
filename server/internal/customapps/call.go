package customapps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/toolcall"
)

// maxErrorText caps the remote message of a failed tool call.
const maxErrorText = 4096

// clientInfo is how Workbench introduces itself to apps.
var clientInfo = &sdk.Implementation{Name: "workbench", Version: "1"}

// caller runs one app's tools; it is the app integration's toolcall.Caller.
type caller struct {
	svc *Service
	app store.CustomApp
}

var _ toolcall.Caller = caller{}

// Call implements toolcall.Caller: it calls the remote tool named after the
// app's prefix with the arguments as they are (the app validates them). A
// tool the app no longer lists, even after listing again, is APP_TOOL_GONE.
func (c caller) Call(ctx context.Context, call toolcall.Call) (json.RawMessage, error) {
	name, ok := strings.CutPrefix(call.Tool, c.app.Name+toolSeparator)
	if !ok || call.UserID != c.app.UserID {
		return nil, failure.Errorf(failure.UnknownTool, "app %s has no tool %q", c.app.Name, call.Tool)
	}
	l := c.svc.listing(ctx, c.app, false)
	if l.err == nil && !l.names[name] {
		l = c.svc.listing(ctx, c.app, true) // it may have gained the tool since
	}
	if l.err != nil {
		return nil, l.err
	}
	if !l.names[name] {
		return nil, toolGone(c.app, name)
	}
	ctx, cancel := context.WithTimeout(ctx, c.svc.opts.CallTimeout)
	defer cancel()
	cs, ferr := c.svc.session(ctx, c.app)
	if ferr != nil {
		return nil, ferr
	}
	defer cs.Close()
	args := json.RawMessage(call.Input)
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		fe := classify(ctx, c.app, "calling "+name, err)
		if fe.Code == failure.AppProtocol { // perhaps the tool is gone since it was listed
			if l := c.svc.listing(ctx, c.app, true); l.err == nil && !l.names[name] {
				return nil, toolGone(c.app, name)
			}
		}
		return nil, fe
	}
	return result(c.app, res)
}

// toolGone is APP_TOOL_GONE for the app's tool name.
func toolGone(a store.CustomApp, name string) *failure.Error {
	return failure.Errorf(failure.AppToolGone, "app %s no longer has a tool %q; search_tools shows what it has now", a.Name, name)
}

// session connects to the app as its user: the bearer token of a manual
// app attached to requests to the app's origin only.
func (s *Service) session(ctx context.Context, a store.CustomApp) (*sdk.ClientSession, *failure.Error) {
	if s.opts.HTTPClient == nil {
		return nil, failure.Errorf(failure.Unavailable, "this server does not call custom apps")
	}
	hc := s.opts.HTTPClient
	if a.Auth == store.AppAuthManual {
		if s.opts.Credentials == nil {
			return nil, failure.Errorf(failure.NotConfigured, "app %s needs a credential this server cannot open", a.Name)
		}
		token, err := s.opts.Credentials.Bearer(ctx, a.UserID, a.ID)
		if err != nil {
			s.logger.Warn("opening a custom app's token", "user", a.UserID, "app", a.Name, "err", err)
			return nil, failure.Errorf(failure.NotConfigured, "app %s has no usable token; remove it and add it again with --bearer", a.Name)
		}
		u, _ := url.Parse(a.URL) // checked when the app was added
		hc = &http.Client{CheckRedirect: hc.CheckRedirect, Transport: bearerTransport{origin: u.Scheme + "://" + u.Host, token: token, next: hc.Transport}}
	}
	t := &sdk.StreamableClientTransport{Endpoint: a.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}
	cs, err := sdk.NewClient(clientInfo, nil).Connect(ctx, t, nil)
	if err != nil {
		return nil, classify(ctx, a, "connecting", err)
	}
	return cs, nil
}

// classify turns a failure talking to an app into a coded error: egress's
// own code (EGRESS_DENIED, UPSTREAM_UNREACHABLE, ...), UPSTREAM_TIMEOUT,
// RESPONSE_TOO_LARGE, UPSTREAM_UNREACHABLE for a connection that failed,
// and APP_PROTOCOL_ERROR for an app that answered something that is not
// MCP (or a JSON-RPC error).
func classify(ctx context.Context, a store.CustomApp, doing string, err error) *failure.Error {
	var (
		ee   *egress.Error
		op   *net.OpError
		dns  *net.DNSError
		code failure.Code
		msg  string
	)
	switch {
	case errors.As(err, &ee):
		code, msg = ee.Code, ee.Message
	case errors.Is(err, errResponseTooLarge) || strings.Contains(err.Error(), errResponseTooLarge.Error()):
		code, msg = failure.ResponseTooLarge, err.Error()
	case errors.Is(ctx.Err(), context.Canceled):
		code, msg = failure.Canceled, "the request ended before the app answered"
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		code, msg = failure.UpstreamTimeout, "the app did not answer in time"
	case errors.As(err, &op) || errors.As(err, &dns):
		code, msg = failure.UpstreamUnreachable, "the app cannot be reached"
	default:
		code, msg = failure.AppProtocol, "the app did not answer as an MCP server: "+capText(err.Error(), 300)
	}
	return &failure.Error{Code: code, Message: fmt.Sprintf("app %s: %s: %s", a.Name, doing, msg), Cause: err}
}

// result is the JSON an app tool's result becomes: {"content": [...]} with
// image and audio content reduced to a marker, and "structuredContent"
// when the app sent one. A result the app marked as an error is a
// TOOL_ERROR carrying the app's text.
func result(a store.CustomApp, res *sdk.CallToolResult) (json.RawMessage, error) {
	type item struct {
		Type string `json:"type"`
		Text string `json:"text,omitempty"`
		URI  string `json:"uri,omitempty"`
	}
	out := struct {
		Content    []item `json:"content"`
		Structured any    `json:"structuredContent,omitempty"`
	}{Content: make([]item, 0, len(res.Content)), Structured: res.StructuredContent}
	var text strings.Builder
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			out.Content = append(out.Content, item{Type: "text", Text: c.Text})
			text.WriteString(c.Text)
		case *sdk.ImageContent:
			out.Content = append(out.Content, item{Type: "text", Text: marker("image", c.MIMEType, len(c.Data))})
		case *sdk.AudioContent:
			out.Content = append(out.Content, item{Type: "text", Text: marker("audio", c.MIMEType, len(c.Data))})
		case *sdk.ResourceLink:
			out.Content = append(out.Content, item{Type: "resource_link", URI: c.URI, Text: c.Name})
		case *sdk.EmbeddedResource:
			if c.Resource != nil {
				out.Content = append(out.Content, item{Type: "resource", URI: c.Resource.URI, Text: c.Resource.Text})
			}
		}
	}
	if res.IsError {
		msg := text.String()
		if msg == "" {
			msg = "the tool failed without a message"
		}
		return nil, failure.Errorf(failure.ToolError, "app %s: %s", a.Name, capText(msg, maxErrorText))
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, &failure.Error{Code: failure.AppProtocol, Message: fmt.Sprintf("app %s: the result cannot be encoded", a.Name), Cause: err}
	}
	return b, nil
}

// marker stands in for binary content: "[image: image/png, 14 KB]".
func marker(kind, mime string, n int) string {
	if mime == "" {
		mime = "unknown type"
	}
	return fmt.Sprintf("[%s: %s, %d KB]", kind, capText(mime, 100), (n+1023)/1024)
}
