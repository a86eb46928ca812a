package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/server/internal/jots"
	mcpcatalog "github.com/workbench-dev/workbench/server/internal/mcp/catalog"
)

// jotsService is the state's jots service (named here so state.go needs no
// import for it).
type jotsService = jots.Service

// jotsLimitsFromEnv reads JOTS_MAX_BYTES, JOTS_MAX_FILES and
// JOTS_UPLOAD_TTL_SECONDS; unset means the default. They belong in Config
// eventually.
func jotsLimitsFromEnv() (jots.Limits, error) {
	var lim jots.Limits
	num := func(name string, min, max int64) (int64, error) {
		v := os.Getenv(name)
		if v == "" {
			return 0, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < min || n > max {
			return 0, fmt.Errorf("%w: %s=%q must be a whole number from %d to %d", ErrConfig, name, v, min, max)
		}
		return n, nil
	}
	var err error
	if lim.MaxBytes, err = num("JOTS_MAX_BYTES", 1, 1<<30); err != nil {
		return lim, err
	}
	files, err := num("JOTS_MAX_FILES", 1, 100000)
	if err != nil {
		return lim, err
	}
	lim.MaxFiles = int(files)
	ttl, err := num("JOTS_UPLOAD_TTL_SECONDS", 1, 86400)
	if err != nil {
		return lim, err
	}
	lim.UploadTTL = time.Duration(ttl) * time.Second
	return lim, nil
}

// openJots mounts /j/<name>/ and the upload URL over the store in st.
func (s *Server) openJots(ctx context.Context, st *state) error {
	lim, err := jotsLimitsFromEnv()
	if err != nil {
		return err
	}
	svc, err := jots.New(jots.Options{Store: st.store, PublicURL: s.cfg.PublicURL, Limits: lim, Logger: s.logger.With("component", "jots")})
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
	lim, err := jotsLimitsFromEnv()
	if err != nil {
		lim = jots.Limits{} // openJots reports the error when Run starts
	}
	return []*mcpcatalog.Integration{{Manifest: jots.Manifest(lim), Builtin: true, Caller: jotsCaller{s}}}
}

// jotsCaller runs the jots tools on the service of the server's state, read
// at call time: the /mcp endpoint is built before the store opens.
type jotsCaller struct{ s *Server }

var _ mcpcatalog.Caller = jotsCaller{}

func (j jotsCaller) Call(ctx context.Context, c runtime.Call) (json.RawMessage, error) {
	st := j.s.state
	if st == nil || st.jots == nil {
		return nil, &runtime.ToolError{Code: jots.CodeUnavailable, Message: "jots are not available yet: the store is still opening; try again"}
	}
	return st.jots.Call(ctx, c)
}
