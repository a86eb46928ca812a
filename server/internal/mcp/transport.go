package mcp

import (
	"net/http"

	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/server/internal/hostguard"
)

// transport is the HTTP side of /mcp: the DNS-rebinding guard, bearer
// authentication, and the routing of each request to the SDK transport of
// its protocol era. It knows nothing of tools; the SDK server it routes to
// holds the handlers.
type transport struct {
	guard     *hostguard.Hosts
	logger    *slog.Logger
	handler   http.Handler // authentication, then route
	stateful  *sdk.StreamableHTTPHandler
	stateless *sdk.StreamableHTTPHandler
}

func newTransport(opts Options, guard *hostguard.Hosts, server *sdk.Server, logger *slog.Logger) *transport {
	serverFor := func(*http.Request) *sdk.Server { return server }
	t := &transport{guard: guard, logger: logger}
	t.stateful = sdk.NewStreamableHTTPHandler(serverFor, &sdk.StreamableHTTPOptions{
		Logger:                     logger,
		EventStore:                 sdk.NewMemoryEventStore(nil),
		SessionTimeout:             opts.SessionIdle,
		DisableLocalhostProtection: true, // guard covers every host, not only loopback
		MaxRequestBodyBytes:        MaxBodyBytes,
	})
	t.stateless = sdk.NewStreamableHTTPHandler(serverFor, &sdk.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       logger,
		DisableLocalhostProtection:   true,
		MaxRequestBodyBytes:          MaxBodyBytes,
		PropagateRequestCancellation: true,
	})
	t.handler = requireBearer(http.HandlerFunc(t.route), opts.Authenticator, opts.ResourceMetadataURL, opts.RequiredScopes, logger)
	return t
}

// ServeHTTP serves /mcp: the Host/Origin guard, then bearer
// authentication, then the transport of the request's protocol era.
func (t *transport) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if why := t.guard.Check(r.Host, r.Header.Get("Origin")); why != "" {
		t.logger.Warn("refused a request", "reason", why, "remote", r.RemoteAddr)
		http.Error(w, "Forbidden: "+why, http.StatusForbidden)
		return
	}
	t.handler.ServeHTTP(w, r)
}

// route sends stateless-era requests (Mcp-Protocol-Version 2026-07-28 or
// later) to the stateless transport, which cancels a call when its request
// context ends, and every other request to the session transport.
func (t *transport) route(w http.ResponseWriter, r *http.Request) {
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= newEra {
		t.stateless.ServeHTTP(w, r)
		return
	}
	t.stateful.ServeHTTP(w, r)
}
