package server

import (
	"context"

	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
)

// openProxy mounts /c/<integration>/<path> over the store in st.
func (s *Server) openProxy(ctx context.Context, st *state) error { return nil }

// curlSessions returns what curl_session mints tokens with.
func (s *Server) curlSessions() metatools.CurlSessions { return nil }
