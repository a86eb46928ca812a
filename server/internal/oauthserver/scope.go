package oauthserver

import (
	"fmt"
	"slices"
	"strings"
)

// The scopes Workbench's authorization server issues.
const (
	// ScopeMCP lets a client use the MCP endpoint: list, search and call
	// tools and read resources. Every /mcp request needs it, and it is what
	// a request that names no scope is granted.
	ScopeMCP = "mcp"
	// ScopeOfflineAccess is accepted from clients that ask for it before
	// expecting a refresh token (SEP-2207). Workbench issues refresh tokens
	// with every grant; alone, this scope does not open /mcp.
	ScopeOfflineAccess = "offline_access"
)

// supportedScopes lists every scope the server issues, as its metadata
// advertises them.
var supportedScopes = []string{ScopeMCP, ScopeOfflineAccess}

// RequiredScopes returns the scopes the MCP endpoint requires of a token;
// an API token carries them all.
func RequiredScopes() []string { return []string{ScopeMCP} }

// errInvalidScope is a scope parameter naming a scope outside allowed.
type errInvalidScope struct {
	scope   string
	allowed []string
}

func (e errInvalidScope) Error() string {
	return fmt.Sprintf("scope %q is not one of: %s", e.scope, strings.Join(e.allowed, " "))
}

// grantScope returns the scope to grant for a requested scope parameter:
// every name must be supported; duplicates are dropped, the order is that
// of supportedScopes, and an empty request gets ScopeMCP.
func grantScope(requested string) (string, error) {
	names := strings.Fields(requested)
	if len(names) == 0 {
		return ScopeMCP, nil
	}
	for _, n := range names {
		if !slices.Contains(supportedScopes, n) {
			return "", errInvalidScope{n, supportedScopes}
		}
	}
	var out []string
	for _, s := range supportedScopes {
		if slices.Contains(names, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " "), nil
}

// narrowScope returns the scope of a refreshed token: requested when it is
// a subset of granted (RFC 6749 section 6), granted when requested is
// empty.
func narrowScope(requested, granted string) (string, error) {
	if strings.TrimSpace(requested) == "" {
		return granted, nil
	}
	have := strings.Fields(granted)
	for _, n := range strings.Fields(requested) {
		if !slices.Contains(have, n) {
			return "", errInvalidScope{n, have}
		}
	}
	return grantScope(requested)
}
