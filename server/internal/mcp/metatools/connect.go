package metatools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/mcp/argcheck"
)

// ConnectInput is the input of connect and get_auth_url.
type ConnectInput struct {
	Integration string `json:"integration"`
	Reconnect   bool   `json:"reconnect"`
}

// ConnectOutput is the output of connect and get_auth_url.
type ConnectOutput struct {
	Integration  string `json:"integration"`
	Status       string `json:"status"`
	URL          string `json:"url,omitempty"`
	ConnectionID string `json:"connectionId,omitempty"`
	Message      string `json:"message"`
}

// WaitInput is the input of wait_for_connection.
type WaitInput struct {
	ConnectionID   string `json:"connectionId"`
	TimeoutSeconds int    `json:"timeoutSeconds"`
}

// WaitOutput is the output of wait_for_connection.
type WaitOutput struct {
	ConnectionID string `json:"connectionId"`
	Status       string `json:"status"`
	Reason       string `json:"reason,omitempty"`
	Message      string `json:"message"`
}

// CurlInput is the input of curl_session.
type CurlInput struct {
	Integrations []string `json:"integrations"`
}

// CurlOutput is the output of curl_session.
type CurlOutput struct {
	Token     string            `json:"token"`
	ExpiresAt time.Time         `json:"expiresAt"`
	Endpoints map[string]string `json:"endpoints"`
	Usage     string            `json:"usage"`
}

func unavailable(what string) *Error {
	return errorf(failure.Unavailable, "%s are not available on this server yet", what)
}

// Connect runs connect and get_auth_url.
func (t *Tools) Connect(ctx context.Context, p Principal, in ConnectInput) (*ConnectOutput, error) {
	v := t.current(ctx, p).view
	integration, ok := v.Integration(in.Integration)
	if !ok {
		return nil, unknownIntegration(v, in.Integration)
	}
	name := integration.Name
	if integration.Manifest().Auth.Mode == manifest.ModeNone {
		return &ConnectOutput{Integration: name, Status: StatusConnected,
			Message: fmt.Sprintf("%s needs no connection; its tools are ready to use", name)}, nil
	}
	if t.opts.Connections == nil {
		return nil, unavailable("connections")
	}
	if !in.Reconnect {
		ok, err := t.opts.Connections.Connected(ctx, p.UserID, name)
		if err != nil {
			return nil, fmt.Errorf("checking the connection to %s: %w", name, err)
		}
		if ok {
			return &ConnectOutput{Integration: name, Status: StatusConnected,
				Message: fmt.Sprintf("you are already connected to %s; pass reconnect: true to replace the connection", name)}, nil
		}
	}
	url, id, err := t.opts.Connections.Connect(ctx, p.UserID, name)
	switch {
	case errors.Is(err, failure.ErrUnknownIntegration):
		return nil, unknownIntegration(v, name)
	case errors.Is(err, failure.ErrNotConfigured):
		// The service's message names what the operator must set.
		return nil, &Error{Code: failure.NotConfigured, Integration: name,
			Message: fmt.Sprintf("%s cannot be connected on this server until the operator configures it: %v", name, err)}
	case err != nil:
		return nil, fmt.Errorf("starting a connection to %s: %w", name, err)
	}
	return &ConnectOutput{
		Integration: name, Status: StatusPending, URL: url, ConnectionID: id,
		Message: fmt.Sprintf("Ask the user to open %s and authorize %s, then call wait_for_connection with connectionId %q.", url, integration.Manifest().DisplayTitle(), id),
	}, nil
}

// WaitForConnection runs wait_for_connection.
func (t *Tools) WaitForConnection(ctx context.Context, p Principal, in WaitInput) (*WaitOutput, error) {
	if t.opts.Connections == nil {
		return nil, unavailable("connections")
	}
	timeout := in.TimeoutSeconds
	if timeout <= 0 {
		timeout = DefaultWaitSeconds
	}
	timeout = min(timeout, MaxWaitSeconds)
	status, reason, err := t.opts.Connections.Wait(ctx, p.UserID, in.ConnectionID, time.Duration(timeout)*time.Second)
	switch {
	case errors.Is(err, failure.ErrUnknownConnection):
		return nil, errorf(failure.UnknownConnection, "there is no pending connection %q for you; call connect to start one", truncate(in.ConnectionID, 128))
	case err != nil:
		return nil, fmt.Errorf("waiting for connection %s: %w", in.ConnectionID, err)
	}
	out := &WaitOutput{ConnectionID: in.ConnectionID, Status: status, Reason: reason}
	switch status {
	case StatusConnected:
		out.Message = "connected; the integration's tools are ready to use"
	case StatusPending:
		out.Message = "the user has not finished yet; call wait_for_connection again"
	case StatusExpired, StatusFailed:
		out.Message = "the connection did not complete; call connect again for a new URL"
	default:
		return nil, fmt.Errorf("connection service reported unknown status %q", status)
	}
	return out, nil
}

// CurlSession runs curl_session. Every integration must exist, declare a
// proxy and be connected before anything is minted; otherwise the error
// names every offending integration with its reason (Problems, one per
// name, and Details.refused with each one's code). Its Code is the most
// fundamental reason present: UNKNOWN_INTEGRATION, then NO_PROXY, then
// NOT_CONNECTED.
func (t *Tools) CurlSession(ctx context.Context, p Principal, in CurlInput) (*CurlOutput, error) {
	if t.opts.CurlSessions == nil {
		return nil, unavailable("curl sessions")
	}
	v := t.current(ctx, p).view
	memo := map[string]bool{}
	type refusal struct {
		Integration string       `json:"integration"`
		Code        failure.Code `json:"code"`
		Reason      string       `json:"reason"`
		Fix         string       `json:"fix,omitempty"`
		Suggestions []string     `json:"suggestions,omitempty"`
	}
	var refused []refusal
	var problems []argcheck.Problem
	seen := map[string]bool{}
	var names []string
	for i, name := range in.Integrations {
		if seen[name] {
			continue
		}
		seen[name] = true
		var r *refusal
		integration, ok := v.Integration(name)
		switch {
		case !ok:
			u := unknownIntegration(v, name)
			r = &refusal{Integration: truncate(name, 64), Code: failure.UnknownIntegration, Reason: "no such integration; list_integrations shows them all", Suggestions: u.Suggestions}
		case integration.Manifest().Proxy == nil:
			r = &refusal{Integration: name, Code: failure.NoProxy, Reason: "it cannot be used through curl sessions (no proxy); use its tools instead (search_tools)"}
		default:
			connected, err := t.connected(ctx, p, integration, memo)
			if err != nil {
				return nil, fmt.Errorf("checking the connection to %s: %w", name, err)
			}
			if !connected {
				r = &refusal{Integration: name, Code: failure.NotConnected, Reason: "you are not connected; call connect('" + name + "') and have the user finish it", Fix: "connect('" + name + "')"}
			}
		}
		if r != nil {
			refused = append(refused, *r)
			problems = append(problems, argcheck.Problem{Path: fmt.Sprintf("$.integrations[%d]", i), Message: r.Integration + ": " + r.Reason})
			continue
		}
		names = append(names, name)
	}
	if len(refused) > 0 {
		e := &Error{Problems: problems}
		rank := map[failure.Code]int{failure.UnknownIntegration: 0, failure.NoProxy: 1, failure.NotConnected: 2}
		e.Code = refused[0].Code
		var parts, fixes []string
		for _, r := range refused {
			if rank[r.Code] < rank[e.Code] {
				e.Code = r.Code
			}
			parts = append(parts, fmt.Sprintf("%s (%s: %s)", r.Integration, r.Code, r.Reason))
			if r.Fix != "" {
				fixes = append(fixes, r.Fix)
			}
		}
		e.Fix = strings.Join(fixes, ", ")
		if len(refused) == 1 {
			e.Integration, e.Suggestions = refused[0].Integration, refused[0].Suggestions
		}
		e.Message = fmt.Sprintf("no curl session was minted: %d of %d integrations cannot be used: %s", len(refused), len(seen), strings.Join(parts, "; "))
		e.Details, _ = json.Marshal(map[string]any{"refused": refused})
		return nil, e
	}
	slices.Sort(names)
	s, err := t.opts.CurlSessions.Mint(ctx, p.UserID, names)
	switch {
	case errors.Is(err, failure.ErrNotConnected):
		return nil, errorf(failure.NotConnected, "a connection went away while minting: %v; reconnect and try again", err)
	case errors.Is(err, failure.ErrUnknownIntegration), errors.Is(err, failure.ErrNoProxy):
		return nil, errorf(failure.NoProxy, "curl sessions cannot open these integrations: %v", err)
	case err != nil:
		return nil, fmt.Errorf("minting a curl session: %w", err)
	}
	var usage strings.Builder
	usage.WriteString(`Send "Authorization: Bearer <token>" and append the API path to an endpoint, e.g. curl -H "Authorization: Bearer <token>" "`)
	if len(names) > 0 {
		usage.WriteString(s.Endpoints[names[0]])
	}
	usage.WriteString(`<path>". The token expires at expiresAt.`)
	return &CurlOutput{Token: s.Token, ExpiresAt: s.ExpiresAt.UTC(), Endpoints: s.Endpoints, Usage: usage.String()}, nil
}
