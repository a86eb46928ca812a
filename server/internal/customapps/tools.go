package customapps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Bounds on what an app's tool list may hold.
const (
	maxListPages       = 20       // pages of tools/list followed
	maxSchemaBytes     = 64 << 10 // one tool's input schema, as shown
	maxDescriptionLen  = 4096     // one tool's description, as shown
	maxCachedListings  = 10000    // listings (and users' app lists) kept before expired ones are dropped
	toolSeparator      = "__"     // between the app's name and the remote tool's
	truncatedMarkerLen = 3
)

// remoteNameRe is the form of a remote tool name Workbench passes on; MCP
// recommends [A-Za-z0-9_.-]{1,128}. Others are skipped and logged.
var remoteNameRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// appKey names one user's app.
type appKey struct{ user, app string }

// listing is an app's tool list as last fetched: its integration for the
// catalog, or why it could not be listed.
type listing struct {
	app   store.CustomApp
	in    *registry.Integration
	names map[string]bool // remote tool names
	err   *failure.Error
	until int64 // unix nanoseconds after which it is fetched again
}

// Integrations returns the user's apps as integrations of the catalog, for
// that user only: each named by its app, its tools <app>__<remote tool>.
// An app that cannot be listed is an integration without tools whose calls
// fail with the listing's error. An app whose name an integration of the
// shared catalog took since it was added is left out and logged.
func (s *Service) Integrations(ctx context.Context, userID string) ([]*registry.Integration, error) {
	apps, err := s.appsOf(ctx, userID)
	if err != nil || len(apps) == 0 {
		return nil, err
	}
	out := make([]*registry.Integration, len(apps))
	var wg sync.WaitGroup
	for i, a := range apps {
		if s.opts.Taken != nil && s.opts.Taken(a.Name) {
			s.logger.Warn("custom app hidden: an integration took its name", "user", userID, "app", a.Name)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = s.listing(ctx, a, false).in
		}()
	}
	wg.Wait()
	kept := out[:0]
	for _, in := range out {
		if in != nil {
			kept = append(kept, in)
		}
	}
	return kept, nil
}

// listing returns the app's tool list, fetching it when there is none, it
// is older than its TTL, it was for another URL or auth, or refresh is set.
// Concurrent callers for one app share one fetch.
func (s *Service) listing(ctx context.Context, a store.CustomApp, refresh bool) *listing {
	key := appKey{a.UserID, a.ID}
	for {
		s.mu.Lock()
		l := s.tools[key]
		if l != nil && !refresh && l.app == a && s.opts.Now().UnixNano() < l.until {
			s.mu.Unlock()
			return l
		}
		if wait, busy := s.flight[key]; busy {
			s.mu.Unlock()
			select {
			case <-wait:
				refresh = false // take what the other fetch found
				continue
			case <-ctx.Done():
				return s.failedListing(a, &failure.Error{Code: failure.Canceled, Message: "the request ended while the app's tools were being listed"})
			}
		}
		done := make(chan struct{})
		s.flight[key] = done
		s.mu.Unlock()

		l = s.fetch(ctx, a)
		s.mu.Lock()
		delete(s.flight, key)
		if ctx.Err() == nil { // a listing cut short by its caller says nothing of the app
			keep(s.tools, key, l, s.opts.Now().UnixNano())
		}
		s.mu.Unlock()
		close(done)
		return l
	}
}

// fetch lists the app's tools.
func (s *Service) fetch(ctx context.Context, a store.CustomApp) *listing {
	ctx, cancel := context.WithTimeout(ctx, s.opts.ListTimeout)
	defer cancel()
	cs, ferr := s.session(ctx, a)
	if ferr != nil {
		return s.failedListing(a, ferr)
	}
	defer cs.Close()
	var (
		remote []*sdk.Tool
		cursor string
	)
	for page := 0; ; page++ {
		if page == maxListPages {
			return s.failedListing(a, failure.Errorf(failure.LimitExceeded, "app %s lists its tools over more than %d pages (the limit)", a.Name, maxListPages))
		}
		res, err := cs.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return s.failedListing(a, classify(ctx, a, "listing tools", err))
		}
		remote = append(remote, res.Tools...)
		if len(remote) > s.opts.MaxToolsPerApp {
			return s.failedListing(a, failure.Errorf(failure.LimitExceeded, "app %s lists more than %d tools (the limit per app)", a.Name, s.opts.MaxToolsPerApp))
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	m, names := s.manifest(a, remote)
	return &listing{app: a, in: s.integration(a, m), names: names, until: s.opts.Now().Add(s.opts.ToolsTTL).UnixNano()}
}

// failedListing is a listing of no tools that remembers why.
func (s *Service) failedListing(a store.CustomApp, err *failure.Error) *listing {
	s.logger.Warn("listing a custom app's tools failed", "user", a.UserID, "app", a.Name, "err", err)
	in := s.integration(a, s.baseManifest(a))
	in.Problem = err.Error()
	return &listing{app: a, in: in, err: err, until: s.opts.Now().Add(s.opts.FailureTTL).UnixNano()}
}

// integration wraps an app's manifest for the catalog.
func (s *Service) integration(a store.CustomApp, m *manifest.Manifest) *registry.Integration {
	in := registry.Native(m, caller{svc: s, app: a})
	in.Builtin, in.Custom = false, true
	return in
}

// baseManifest is an app's manifest without tools. Its auth mode is none:
// an app's own credential is attached by the app's client, not by the
// connection check of the meta-tools.
func (s *Service) baseManifest(a store.CustomApp) *manifest.Manifest {
	host := a.URL
	if u, err := url.Parse(a.URL); err == nil {
		host = u.Host
	}
	return &manifest.Manifest{
		Name:        a.Name,
		Version:     "0.0.0",
		Description: "Custom app: the MCP server at " + host,
		Auth:        manifest.Auth{Mode: manifest.ModeNone},
	}
}

// manifest turns the remote tools into the app's manifest: slugs
// <app>__<remote name>, descriptions and schemas capped. Tools with a name
// outside [A-Za-z0-9_.-]{1,64} or a name seen before are skipped.
func (s *Service) manifest(a store.CustomApp, remote []*sdk.Tool) (*manifest.Manifest, map[string]bool) {
	m := s.baseManifest(a)
	names := make(map[string]bool, len(remote))
	for _, t := range remote {
		if t == nil || !remoteNameRe.MatchString(t.Name) || names[t.Name] {
			s.logger.Warn("custom app tool skipped: its name is malformed or repeated", "user", a.UserID, "app", a.Name)
			continue
		}
		names[t.Name] = true
		m.Tools = append(m.Tools, manifest.Tool{
			Slug:        a.Name + toolSeparator + t.Name,
			Title:       capText(t.Title, 200),
			Description: capText(t.Description, maxDescriptionLen),
			InputSchema: schemaOf(t.InputSchema),
			Annotations: annotationsOf(t.Annotations),
		})
	}
	return m, names
}

// schemaOf is a remote input schema as shown to agents: an object schema
// of at most maxSchemaBytes, or a bare object schema that says why not.
func schemaOf(schema any) json.RawMessage {
	b, err := json.Marshal(schema)
	var probe map[string]json.RawMessage
	switch {
	case err != nil || json.Unmarshal(b, &probe) != nil:
		return json.RawMessage(`{"type":"object","description":"the app's input schema is not a JSON object"}`)
	case len(b) > maxSchemaBytes:
		return json.RawMessage(fmt.Sprintf(`{"type":"object","description":"the app's input schema is over %d bytes (the limit) and is not shown"}`, maxSchemaBytes))
	}
	return b
}

func annotationsOf(a *sdk.ToolAnnotations) manifest.Annotations {
	if a == nil {
		return manifest.Annotations{}
	}
	return manifest.Annotations{
		ReadOnly:    a.ReadOnlyHint,
		Destructive: a.DestructiveHint != nil && *a.DestructiveHint,
		Idempotent:  a.IdempotentHint,
		OpenWorld:   a.OpenWorldHint == nil || *a.OpenWorldHint,
	}
}

// capText cuts s to at most n bytes of valid UTF-8, marking a cut.
func capText(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-truncatedMarkerLen], "") + "..."
}
