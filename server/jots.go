package server

import (
	"context"

	mcpcatalog "github.com/workbench-dev/workbench/server/internal/mcp/catalog"
)

// openJots mounts /j/<name>/ and the upload URL over the store in st.
func (s *Server) openJots(ctx context.Context, st *state) error { return nil }

// nativeIntegrations returns the integrations built into the server.
func (s *Server) nativeIntegrations() []*mcpcatalog.Integration { return nil }
