package proxy

import (
	"context"
	"sync"
	"time"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// record queues an audit row for Run to write. A full queue makes the
// caller wait (up to defaultAuditEnqueueWait) rather than grow; a row that
// still finds no room is logged and dropped.
func (s *Service) record(c store.ProxyCall) {
	select {
	case s.audit <- c:
		return
	default:
	}
	t := time.NewTimer(defaultAuditEnqueueWait)
	defer t.Stop()
	select {
	case s.audit <- c:
	case <-t.C:
		s.logger.Error("proxy audit queue full: dropping a row", "user", c.UserID, "integration", c.Integration,
			"method", c.Method, "path", c.Path, "status", c.Status)
	}
}

// Run writes audit rows in batches and prunes expired and revoked sessions
// and old audit rows every SweepInterval, until ctx ends; then it writes
// what is still queued (for up to 10 seconds) and returns. Run it in one
// goroutine owned by the server.
func (s *Service) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { s.writeAudit(ctx) })
	wg.Go(func() { s.sweep(ctx) })
	wg.Wait()
}

// writeAudit is Run's writer loop.
func (s *Service) writeAudit(ctx context.Context) {
	batch := make([]store.ProxyCall, 0, defaultAuditBatch)
	flush := func(ctx context.Context) {
		if len(batch) == 0 {
			return
		}
		if err := s.opts.Store.RecordProxyCalls(ctx, batch); err != nil {
			s.logger.Error("writing proxy audit rows", "rows", len(batch), "err", err)
		}
		batch = batch[:0]
	}
	tick := time.NewTicker(defaultAuditFlush)
	defer tick.Stop()
	for {
		select {
		case c := <-s.audit:
			batch = append(batch, c)
			if len(batch) == cap(batch) {
				flush(ctx)
			}
		case <-tick.C:
			flush(ctx)
		case <-ctx.Done():
			drain, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultAuditDrainTimeout)
			defer cancel()
			for {
				select {
				case c := <-s.audit:
					batch = append(batch, c)
					if len(batch) == cap(batch) {
						flush(drain)
					}
				default:
					flush(drain)
					return
				}
			}
		}
	}
}

// sweep is Run's pruning loop.
func (s *Service) sweep(ctx context.Context) {
	t := time.NewTicker(s.opts.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.Prune(ctx)
	}
}

// Prune deletes sessions that expired or were revoked more than SessionKeep
// ago and audit rows older than AuditRetention.
func (s *Service) Prune(ctx context.Context) {
	now := s.opts.Now()
	sessions, err := s.opts.Store.PruneCurlSessions(ctx, now.Add(-s.opts.SessionKeep))
	if err != nil && ctx.Err() == nil {
		s.logger.Warn("pruning curl sessions", "err", err)
	}
	calls, err := s.opts.Store.PruneProxyCalls(ctx, now.Add(-s.opts.AuditRetention))
	if err != nil && ctx.Err() == nil {
		s.logger.Warn("pruning proxy audit rows", "err", err)
	}
	if sessions+calls > 0 {
		s.logger.Debug("pruned curl sessions and proxy audit rows", "sessions", sessions, "calls", calls)
	}
}
