package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/server/internal/jots"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
	"github.com/workbench-dev/workbench/server/internal/proxy"
)

// openProxy mounts /c/<integration>/<path> over the store in st and
// registers the proxy's audit writer and sweeper.
func (s *Server) openProxy(ctx context.Context, st *state) error {
	svc, err := proxy.New(proxy.Options{
		Store:       st.store,
		Catalog:     catalog{reg: s.reg},
		Credentials: st.connections,
		Connections: proxyConnections{s: s, st: st},
		Egress:      egress.NewClient(egress.Options{AllowPrivate: s.cfg.EgressAllowPrivate}),
		Settings:    runtime.EnvSettings{},
		PublicURL:   s.cfg.PublicURL,
		Logger:      s.logger.With("component", "proxy"),
	})
	if err != nil {
		return err
	}
	svc.Mount(s.app)
	st.proxy = svc
	st.sweepers = append(st.sweepers, func(ctx context.Context) {
		svc.Run(ctx)
		svc.Close()
	})
	return nil
}

// proxyConnections tells the proxy whether a user is connected.
type proxyConnections struct {
	s  *Server
	st *state
}

func (c proxyConnections) Connected(ctx context.Context, userID, integration string) (bool, error) {
	in, ok := c.s.reg.Current().Integration(integration)
	if !ok {
		return false, nil
	}
	state, err := c.st.connections.Status(ctx, userID, integration, in.Manifest().Auth.Mode)
	return state.Connected, err
}

// curlSessions returns what curl_session mints tokens with.
func (s *Server) curlSessions() metatools.CurlSessions { return proxySessions{s} }

// proxySessions mints through the proxy service of the server's state,
// read at call time (the /mcp endpoint is built before the store opens).
type proxySessions struct{ s *Server }

var _ metatools.CurlSessions = proxySessions{}

func (p proxySessions) Mint(ctx context.Context, userID string, integrations []string) (metatools.CurlSession, error) {
	st := p.s.state
	if st == nil || st.proxy == nil {
		return metatools.CurlSession{}, errors.New("the proxy is not open yet")
	}
	m, err := st.proxy.Mint(ctx, userID, integrations)
	switch {
	case errors.Is(err, failure.ErrUnknownIntegration):
		return metatools.CurlSession{}, fmt.Errorf("%w: %w", failure.ErrUnknownIntegration, err)
	case errors.Is(err, failure.ErrNoProxy):
		return metatools.CurlSession{}, fmt.Errorf("%w: %w", failure.ErrNoProxy, err)
	case errors.Is(err, failure.ErrNotConnected):
		return metatools.CurlSession{}, fmt.Errorf("%w: %w", failure.ErrNotConnected, err)
	case err != nil:
		return metatools.CurlSession{}, err
	}
	return metatools.CurlSession{Token: m.Token, ExpiresAt: m.ExpiresAt, Endpoints: m.Endpoints}, nil
}

// streamedBodies lists the path prefixes whose handlers read request bodies
// as streams (fiber.Config.StreamRequestBody) and enforce their own limits
// while they read: the proxy's uploads and jot uploads.
var streamedBodies = []string{proxy.Route, jots.UploadPrefix}
