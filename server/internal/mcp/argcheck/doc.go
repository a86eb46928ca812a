// Package argcheck validates tool arguments against a tool's input JSON
// Schema and reports every failing value by its path, so an agent can fix
// all of its mistakes in one retry.
//
// The structural keywords (type, required, properties, additionalProperties,
// items, enum, const, bounds, lengths, patterns, allOf) are checked by a
// walker that knows where it is in the instance. github.com/google/jsonschema-go
// stays the authority: when the walker finds nothing, the full validator runs
// and any failure it reports becomes a problem at the root. The walker only
// reports what the full validator also rejects, which a fuzz test checks.
//
// It does not decode arguments into Go values and does not apply defaults.
package argcheck
