package mcp

// registered is what the endpoint registered with the SDK of one kind
// (plugin tools, resources, resource templates, prompts), so that a catalog
// change can remove what is no longer wanted.
type registered struct {
	names  map[string]bool
	remove func(names ...string) // the SDK's Remove* of the kind
}

func newRegistered(remove func(names ...string)) *registered {
	return &registered{names: map[string]bool{}, remove: remove}
}

// keep removes every registered name not in want (the caller has added the
// wanted ones already) and remembers want.
func (r *registered) keep(want map[string]bool) {
	var gone []string
	for name := range r.names {
		if !want[name] {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		r.remove(gone...)
	}
	r.names = want
}
