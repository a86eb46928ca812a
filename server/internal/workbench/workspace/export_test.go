package workspace

import "time"

// SetNow replaces the set's clock.
func (s *Set) SetNow(now func() time.Time) { s.now = now }
