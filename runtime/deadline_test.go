package runtime

import (
	"context"
	"encoding/json"
	"errors"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/toolcall"
)

// runawayTools are the exports of testdata/runaway.wat.
var runawayTools = []string{"runaway_loop", "runaway_recurse", "runaway_tree", "runaway_sleep"}

// loadRunaway loads testdata/runaway.wat with the given call deadline.
func loadRunaway(t testing.TB, timeout time.Duration) *Plugin {
	t.Helper()
	var tools []map[string]any
	for _, slug := range runawayTools {
		tools = append(tools, map[string]any{"slug": slug, "description": "never returns", "inputSchema": map[string]any{"type": "object"}})
	}
	m, err := json.Marshal(map[string]any{
		"abi": 1, "name": "runaway", "version": "1.0.0", "description": "Tools that never return.",
		"auth": map[string]any{"mode": "none"}, "tools": tools,
		"limits": map[string]any{"timeoutMs": timeout.Milliseconds(), "concurrency": 64},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := newTestHost(t, Config{}).Load(context.Background(), wat(t, "runaway", string(m)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlugin_Call_runawaysAreStopped runs 2 x GOMAXPROCS runaway calls of
// each shape at once. Every one must end at its deadline (infinite
// recursion may end earlier, when the stack runs out), and a goroutine
// started after them must get to run while they are still running: the
// interrupt check yields to the scheduler, which cannot preempt guest code.
func TestPlugin_Call_runawaysAreStopped(t *testing.T) {
	const timeout = 300 * time.Millisecond
	p := loadRunaway(t, timeout)
	n := 2 * goruntime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	var returned atomic.Int32
	errs := make(chan error, n*len(runawayTools))
	start := time.Now()
	for i := range n {
		for _, tool := range runawayTools {
			wg.Go(func() {
				defer returned.Add(1)
				_, err := p.Call(context.Background(), toolcall.Call{Tool: tool, UserID: string(rune('a' + i))})
				if d := time.Since(start); d > timeout+2*time.Second {
					err = errors.Join(err, errors.New(tool+" ran "+d.String()+" past a deadline of "+timeout.String()))
				}
				errs <- err
			})
		}
	}
	for p.Stats().InstancesBusy < n*len(runawayTools) && returned.Load() == 0 {
		goruntime.Gosched()
	}
	// A goroutine that sleeps needs a free P to wake up on.
	ran := make(chan int32)
	go func() {
		time.Sleep(10 * time.Millisecond)
		ran <- returned.Load()
	}()
	if r := <-ran; r != 0 {
		t.Errorf("a goroutine started beside the runaways ran only after %d of them returned", r)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		var te *failure.Error
		switch {
		case !errors.As(err, &te):
			t.Errorf("runaway call: %v", err)
		case te.Code == failure.Timeout:
		case te.Code == failure.Trap && strings.Contains(te.Message, "stack overflow"):
		default:
			t.Errorf("runaway call ended with %v, want TIMEOUT", err)
		}
	}
}

// TestPlugin_Call_runawayCanceled checks that a canceled call ends with
// CANCELED, in a loop and in a sleep.
func TestPlugin_Call_runawayCanceled(t *testing.T) {
	p := loadRunaway(t, time.Minute)
	for _, tool := range []string{"runaway_loop", "runaway_tree", "runaway_sleep"} {
		t.Run(tool, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			_, err := p.Call(ctx, toolcall.Call{Tool: tool, UserID: "u1"})
			if te, ok := err.(*failure.Error); !ok || te.Code != failure.Canceled {
				t.Fatalf("canceled %s = %v, want CANCELED", tool, err)
			}
		})
	}
}
