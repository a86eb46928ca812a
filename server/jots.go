package server

import (
	"context"
	"encoding/json"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/jots"
	mcpcatalog "github.com/workbench-dev/workbench/server/internal/mcp/catalog"
	"github.com/workbench-dev/workbench/toolcall"
)

// jotsService is the state's jots service (named here so state.go needs no
// import for it).
type jotsService = jots.Service

// jotLimits returns the jot limits cfg sets; zero fields mean the defaults.
func jotLimits(cfg Config) jots.Limits {
	return jots.Limits{MaxBytes: cfg.JotMaxBytes, MaxFiles: cfg.JotMaxFiles, UploadTTL: cfg.JotUploadTTL}
}

// openJots mounts /j/<name>/ and the upload URL over the store in st.
func (s *Server) openJots(ctx context.Context, st *state) error {
	svc, err := jots.New(jots.Options{Store: st.store, PublicURL: s.cfg.PublicURL, Limits: jotLimits(s.cfg),
		Passwords: s.passwords, ClientAddr: s.cfg.TrustedProxies, Logger: s.logger.With("component", "jots")})
	if err != nil {
		return err
	}
	svc.Mount(s.app)
	st.jots = svc
	st.sweepers = append(st.sweepers, svc.RunSweeper)
	return nil
}

// nativeIntegrations returns the integrations built into the server.
func (s *Server) nativeIntegrations() []*mcpcatalog.Integration {
	return []*mcpcatalog.Integration{{Manifest: jots.Manifest(jotLimits(s.cfg)), Builtin: true, Caller: jotsCaller{s}}}
}

// jotsCaller runs the jots tools on the service of the server's state, read
// at call time: the /mcp endpoint is built before the store opens.
type jotsCaller struct{ s *Server }

var _ mcpcatalog.Caller = jotsCaller{}

func (j jotsCaller) Call(ctx context.Context, c toolcall.Call) (json.RawMessage, error) {
	st := j.s.state
	if st == nil || st.jots == nil {
		return nil, &failure.Error{Code: failure.Unavailable, Message: "jots are not available yet: the store is still opening; try again"}
	}
	return st.jots.Call(ctx, c)
}
