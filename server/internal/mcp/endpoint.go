package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/server/internal/hostguard"
	"github.com/workbench-dev/workbench/server/internal/mcp/idempotency"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
	"github.com/workbench-dev/workbench/server/internal/mcp/roundstate"
	"github.com/workbench-dev/workbench/server/internal/registry"
)

// Surface says which tools tools/list advertises.
type Surface string

// The tool surfaces (MCP_TOOL_SURFACE).
const (
	SurfaceMeta   Surface = "meta"   // the nine meta-tools
	SurfaceDirect Surface = "direct" // every plugin tool plus whoami, list_integrations, connect, wait_for_connection
	SurfaceBoth   Surface = "both"   // the nine meta-tools and every plugin tool
)

// Defaults of Options.
const (
	DefaultPageSize    = 100
	DefaultSessionIdle = 30 * time.Minute
	// MaxBodyBytes caps a request body, as Fiber's default body limit does.
	MaxBodyBytes = 4 << 20
)

// newEra is the first protocol version of the stateless era: requests that
// declare it (in the Mcp-Protocol-Version header) are served without
// sessions, and a client that goes away cancels its call.
const newEra = "2026-07-28"

// Options configure an Endpoint. Every zero value has a documented default.
type Options struct {
	// Catalog supplies integrations and tools. Required.
	Catalog metatools.Catalog
	// Apps supplies each caller's custom apps to the meta-tools; nil means
	// callers have none.
	Apps metatools.Apps
	// Authenticator resolves bearer tokens. Required.
	Authenticator Authenticator
	// PublicURL is the server's external URL (SERVER_PUBLIC_URL). Required:
	// its host is allowed by the DNS-rebinding guard, and it prefixes the
	// resource metadata URL.
	PublicURL string
	// ResourceMetadataURL is named in WWW-Authenticate; empty means
	// PublicURL + "/.well-known/oauth-protected-resource".
	ResourceMetadataURL string
	// RequiredScopes must all be granted to a token; a token without them
	// gets 403.
	RequiredScopes []string
	// Surface selects the advertised tools; empty means SurfaceMeta.
	Surface Surface
	// Connections, CurlSessions and Idempotency are passed to the
	// meta-tools; see metatools.Options for what nil means.
	Connections  metatools.Connections
	CurlSessions metatools.CurlSessions
	Idempotency  idempotency.Store
	// Concurrency bounds one execute_tools call; zero means metatools.DefaultConcurrency.
	Concurrency int
	// PageSize is the page size of tools/list and resources/list; zero means DefaultPageSize.
	PageSize int
	// SessionIdle closes 2025-era sessions idle this long; zero means DefaultSessionIdle.
	SessionIdle time.Duration
	// SessionsPerUser bounds a user's 2025-era sessions: a new one closes
	// the oldest past it. Zero means DefaultSessionsPerUser.
	SessionsPerUser int
	// MaxSessions bounds the 2025-era sessions of all users: an initialize
	// past it is refused. Zero means DefaultMaxSessions.
	MaxSessions int
	// UnusedSessionIdle closes a 2025-era session that made no call (any
	// request but initialize and ping) this long after it started; zero
	// means DefaultUnusedSessionIdle.
	UnusedSessionIdle time.Duration
	// Now is the clock of the session bounds; nil means time.Now.
	Now func() time.Time
	// RequestStateKey signs the requestState of input-required results
	// (2026-07-28 era; at least 32 bytes). Nil means a random key per
	// process: replicas that share clients need one shared key, or a retry
	// reaching another replica is refused.
	RequestStateKey []byte
	// Version is reported as the server's version.
	Version string
	// Logger receives the endpoint's logs; nil discards.
	Logger *slog.Logger
}

// Endpoint is the /mcp endpoint. It is an http.Handler; Refresh it after
// every change of the catalog.
type Endpoint struct {
	opts   Options
	logger *slog.Logger
	tools  *metatools.Tools
	server *sdk.Server
	states *roundstate.Sealer
	http   *transport // guard, authentication, era routing
	bounds *sessionBounds

	// closing ends when Close starts; every tool call's context ends with it.
	closing  context.Context
	endCalls context.CancelFunc

	mu      sync.Mutex // serialises Refresh
	synced  *registry.Snapshot
	direct  *registered     // plugin tools
	listed  *registered     // workbench:// resources
	reserve map[string]bool // tool names plugin tools may not take

	pluginURIs      *registered // plugin resources
	pluginTemplates *registered // plugin resource templates
	pluginPrompts   *registered // plugin prompts
	content         atomic.Pointer[pluginContent]
}

// New builds the endpoint and registers the tools of the current catalog.
func New(opts Options) (*Endpoint, error) {
	switch {
	case opts.Catalog == nil:
		return nil, errors.New("mcp: Options.Catalog is required")
	case opts.Authenticator == nil:
		return nil, errors.New("mcp: Options.Authenticator is required")
	case opts.PublicURL == "":
		return nil, errors.New("mcp: Options.PublicURL is required")
	}
	switch opts.Surface {
	case "":
		opts.Surface = SurfaceMeta
	case SurfaceMeta, SurfaceDirect, SurfaceBoth:
	default:
		return nil, fmt.Errorf("mcp: surface %q is not one of meta, direct, both", opts.Surface)
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = DefaultSessionIdle
	}
	if opts.ResourceMetadataURL == "" {
		opts.ResourceMetadataURL = strings.TrimRight(opts.PublicURL, "/") + "/.well-known/oauth-protected-resource"
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	guard, err := hostguard.App(opts.PublicURL)
	if err != nil {
		return nil, fmt.Errorf("mcp: public URL: %w", err)
	}
	tools, err := metatools.New(metatools.Options{
		Catalog:      opts.Catalog,
		Apps:         opts.Apps,
		Connections:  opts.Connections,
		CurlSessions: opts.CurlSessions,
		Idempotency:  opts.Idempotency,
		Concurrency:  opts.Concurrency,
		Logger:       logger,
	})
	if err != nil {
		return nil, err
	}
	states, err := roundstate.New(opts.RequestStateKey, 0)
	if err != nil {
		return nil, fmt.Errorf("mcp: request state: %w", err)
	}
	closing, endCalls := context.WithCancel(context.Background())
	e := &Endpoint{
		states:   states,
		closing:  closing,
		endCalls: endCalls,
		opts:     opts,
		logger:   logger,
		tools:    tools,
		reserve:  map[string]bool{},
	}
	e.server = sdk.NewServer(&sdk.Implementation{Name: "workbench", Title: "Workbench", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: instructions(opts.Surface),
		// Every resource read answers for the calling user: the workbench://
		// entries carry the user's connected flag and plugin resources run
		// with the user's credential. Lists are the same for everyone.
		SetCacheable: func(_ context.Context, req sdk.Request, c *sdk.Cacheable) {
			if _, ok := req.(*sdk.ReadResourceRequest); ok {
				c.CacheScope = "private"
			}
		},
		Logger:   logger,
		PageSize: opts.PageSize,
		// Completion answers from the completions plugins declare; every
		// resource served can be subscribed to (updates follow reloads).
		CompletionHandler:  e.complete,
		SubscribeHandler:   e.subscribe,
		UnsubscribeHandler: e.unsubscribe,
		// Prompts come from plugins; the SDK answers prompts/list (empty
		// without them) whatever is declared.
		Capabilities: &sdk.ServerCapabilities{
			Logging:     &sdk.LoggingCapabilities{},
			Tools:       &sdk.ToolCapabilities{ListChanged: true},
			Resources:   &sdk.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:     &sdk.PromptCapabilities{ListChanged: true},
			Completions: &sdk.CompletionCapabilities{},
		},
	})
	e.bounds = newSessionBounds(opts, e.server.Sessions)
	e.server.AddReceivingMiddleware(e.bounds.middleware)
	go e.bounds.run(closing)
	e.direct = newRegistered(e.server.RemoveTools)
	e.listed = newRegistered(e.server.RemoveResources)
	e.pluginURIs = newRegistered(e.server.RemoveResources)
	e.pluginTemplates = newRegistered(e.server.RemoveResourceTemplates)
	e.pluginPrompts = newRegistered(e.server.RemovePrompts)
	e.registerMetaTools()
	e.registerTemplates()
	e.Refresh()

	e.http = newTransport(opts, guard, e.server, logger)
	return e, nil
}

// ServeHTTP serves /mcp through the transport.
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.http.ServeHTTP(w, r) }

// Close cancels every tool call in flight and closes every session,
// waiting until ctx ends at most. Sessions still closing then finish in the
// background.
func (e *Endpoint) Close(ctx context.Context) error {
	e.endCalls()
	var wg sync.WaitGroup
	for s := range e.server.Sessions() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.Close()
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mcp: sessions still closing: %w", ctx.Err())
	}
}

// scoped ends ctx when Close starts, so no call outlives the endpoint.
func (e *Endpoint) scoped(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(e.closing, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

func instructions(s Surface) string {
	switch s {
	case SurfaceDirect:
		return "Workbench serves the tools of the integrations the operator installed. Call a tool directly; when it fails with NOT_CONNECTED, call connect with the integration and then wait_for_connection."
	default:
		return "Workbench serves thousands of tools of many integrations through a few meta-tools: search_tools to find a tool, get_tool_schema for its arguments, execute_tools to run one or more. When a tool fails with NOT_CONNECTED, call connect and then wait_for_connection."
	}
}

// registerMetaTools adds the meta-tools the surface advertises.
func (e *Endpoint) registerMetaTools() {
	for _, d := range metatools.Definitions() {
		if e.opts.Surface == SurfaceDirect && !d.Account {
			continue
		}
		e.reserve[d.Name] = true
		e.server.AddTool(&sdk.Tool{
			Name:         d.Name,
			Title:        d.Title,
			Description:  d.Description,
			InputSchema:  d.InputSchema,
			OutputSchema: d.OutputSchema,
			Annotations:  annotations(d.Title, d.ReadOnly, d.Destructive, d.Idempotent, d.OpenWorld),
		}, e.metaHandler(d.Name))
	}
}

func annotations(title string, readOnly, destructive, idempotent, openWorld bool) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: &openWorld}
}

// errNoPrincipal is a protocol error: requireBearer always attaches one.
var errNoPrincipal = errors.New("the request carries no authenticated user")

func (e *Endpoint) metaHandler(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		p, ok := principalOf(tokenInfo(req.Extra))
		if !ok {
			return nil, errNoPrincipal
		}
		ctx, cancel := e.scoped(ctx)
		defer cancel()
		r, err := e.tools.Invoke(ctx, p, name, req.Params.Arguments, peerOf(ctx, req))
		if err != nil {
			return nil, err
		}
		res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(r.JSON)}}, IsError: r.IsError}
		if r.Structured {
			res.StructuredContent = json.RawMessage(r.JSON)
		}
		return res, nil
	}
}

func tokenInfo(extra *sdk.RequestExtra) *auth.TokenInfo {
	if extra == nil {
		return nil
	}
	return extra.TokenInfo
}

// peerOf is how a tool call talks back to its client: MCP progress
// notifications on the request's stream when the client sent a progress
// token, and the session client for plugins' log, elicitation and sampling.
func peerOf(ctx context.Context, req *sdk.CallToolRequest) metatools.Peer {
	if req.Session == nil {
		return metatools.Peer{}
	}
	peer := metatools.Peer{Client: &sessionClient{ctx: ctx, ss: req.Session, caps: req.ClientCapabilities()}}
	if token := req.Params.GetProgressToken(); token != nil {
		peer.Progress = func(progress, total float64, message string) {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
				ProgressToken: token, Progress: progress, Total: total, Message: message,
			})
		}
	}
	return peer
}
