// Package search ranks tools for the search_tools meta-tool and suggests the
// closest slugs when an agent names a tool that does not exist.
//
// An Index is built once per catalog and is immutable; it holds an inverted
// index of slug, title and description tokens, so a query touches only the
// tools that share a token with it. Ranking is deterministic: an exact slug
// first, then tools whose name tokens (slug and title) match more of the
// query, then tools whose description does, and slug order within a tier.
// Pages are addressed by an opaque cursor bound to the query.
//
// It knows nothing about MCP, users or connections.
package search
