package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/interrupt"
)

// InterruptImport is the function of ImportModule that every module calls,
// once the host has rewritten it with package interrupt, when its budget of
// loop iterations and function entries runs out. It is internal to the
// host, not part of ABI v1: a module that imports it itself is refused. An
// ABI registers it with Interrupt as its implementation (docs/abi.md,
// section 6).
var InterruptImport = interrupt.Import{Module: ImportModule, Name: "_interrupt"}

// Interrupt is the host side of the interrupt check for the call running in
// ctx: it ends the call, by panicking with a *failure.Error (TIMEOUT or
// CANCELED) that the engine recovers, once ctx is done; otherwise it lets
// other goroutines run, which a guest in a loop never does on its own, and
// returns the next budget.
func Interrupt(ctx context.Context) uint32 {
	if err := ctx.Err(); err != nil {
		panic(callEnded(err))
	}
	goruntime.Gosched()
	return interrupt.Budget
}

// interruptCheck serves InterruptImport for ABI v1 modules. A module closed
// under a running call (its plugin unloaded, the host closed) ends the call.
func interruptCheck(ctx context.Context, mod api.Module, stack []uint64) {
	if mod.IsClosed() {
		panic(&abort{toolError(failure.PluginClosed, ErrClosed.Error())})
	}
	stack[0] = uint64(Interrupt(ctx))
}

// callEnded is the error of a call whose context ended with err.
func callEnded(err error) *failure.Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return toolError(failure.Timeout, "the call did not finish before its deadline")
	}
	return toolError(failure.Canceled, "the call was canceled")
}

// sleeper is a guest's clock: a guest sleeping (WASI poll_oneoff) past its
// call's end is woken and the call ends, where the interrupt check would
// only run after the sleep. ctx is the running call's; a guest runs one call
// at a time.
type sleeper struct {
	ctx context.Context
}

func (s *sleeper) sleep(ns int64) {
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		panic(callEnded(ctx.Err()))
	}
}

// rewrite returns wasm with the interrupt check injected (package
// interrupt), read from the cache directory when this exact module was
// rewritten before by this version of the rewriter.
func (h *Host) rewrite(wasm []byte) ([]byte, error) {
	var path string
	if h.cfg.CacheDir != "" {
		sum := sha256.Sum256(wasm)
		path = filepath.Join(h.cfg.CacheDir, "rewrites", "v"+strconv.Itoa(interrupt.Version), hex.EncodeToString(sum[:])+".wasm")
		if b, err := os.ReadFile(path); err == nil {
			return b, nil
		}
	}
	out, err := interrupt.Inject(wasm, InterruptImport)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if path != "" {
		if err := writeFileAtomic(path, out); err != nil {
			h.logger.Warn("cannot cache the rewritten module", "path", path, "error", err)
		}
	}
	return out, nil
}
