package plugintest

import (
	"context"
	"log/slog"
	"sync"
)

// Logs is a slog.Handler that keeps the level and message of every record
// it receives, such as the records a plugin logs. The zero Logs is ready.
type Logs struct {
	mu      sync.Mutex
	records []slog.Record
}

// Enabled reports true: every level is kept.
func (l *Logs) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps r.
func (l *Logs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r)
	return nil
}

// WithAttrs returns l: attributes are not kept.
func (l *Logs) WithAttrs([]slog.Attr) slog.Handler { return l }

// WithGroup returns l: groups are not kept.
func (l *Logs) WithGroup(string) slog.Handler { return l }

// Messages returns the messages logged at level, oldest first.
func (l *Logs) Messages(level slog.Level) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.records {
		if r.Level == level {
			out = append(out, r.Message)
		}
	}
	return out
}
