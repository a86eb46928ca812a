package secrets

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// cheapCost keeps argon2id real but fast in tests.
var cheapCost = PasswordCost{Time: 1, MemoryKiB: 64, Threads: 1}

func TestPasswords_HashVerify(t *testing.T) {
	p := NewPasswords(PasswordOptions{Cost: cheapCost})
	ctx := context.Background()
	h, err := p.Hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	for pw, want := range map[string]bool{"correct horse": true, "correct horse ": false} {
		if ok, err := p.Verify(ctx, pw, h); err != nil || ok != want {
			t.Errorf("Verify(%q) = %v, %v; want %v", pw, ok, err, want)
		}
	}
	if err := p.VerifyNothing(ctx, "correct horse"); err != nil {
		t.Errorf("VerifyNothing: %v", err)
	}
	if _, err := p.Hash(ctx, ""); !errors.Is(err, ErrPassword) {
		t.Errorf("Hash(\"\") err = %v, want ErrPassword", err)
	}
}

func TestPasswords_acquire(t *testing.T) {
	ctx := context.Background()
	p := NewPasswords(PasswordOptions{Concurrency: 2, Queue: 1, MaxWait: time.Hour, Cost: cheapCost})
	var held []func()
	for range 2 {
		release, err := p.acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, release)
	}
	// One caller may queue; it gets the first slot freed.
	queued := make(chan error, 1)
	go func() {
		release, err := p.acquire(ctx)
		if err == nil {
			release()
		}
		queued <- err
	}()
	for len(p.waiting) == 0 {
		time.Sleep(time.Millisecond)
	}
	// With the slots and the queue taken, the next caller is refused at
	// once, not after MaxWait (an hour).
	if _, err := p.acquire(ctx); !errors.Is(err, ErrBusy) {
		t.Fatalf("acquire with slots and queue full: %v, want ErrBusy", err)
	}
	if _, err := p.Verify(ctx, "x", "$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"); !errors.Is(err, ErrBusy) {
		t.Fatalf("Verify with slots and queue full: %v, want ErrBusy", err)
	}
	held[0]()
	if err := <-queued; err != nil {
		t.Fatalf("queued caller: %v", err)
	}
	held[1]()
	if len(p.running) != 0 || len(p.waiting) != 0 {
		t.Fatalf("after release: %d running, %d waiting", len(p.running), len(p.waiting))
	}
}

func TestPasswords_acquireGivesUp(t *testing.T) {
	tests := []struct {
		name    string
		opts    PasswordOptions
		ctx     func() context.Context
		wantErr error
	}{
		{"no queue", PasswordOptions{Concurrency: 1, Queue: -1, MaxWait: time.Hour}, context.Background, ErrBusy},
		{"wait over", PasswordOptions{Concurrency: 1, MaxWait: time.Millisecond}, context.Background, ErrBusy},
		{"caller gone", PasswordOptions{Concurrency: 1, MaxWait: time.Hour}, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPasswords(tt.opts)
			release, err := p.acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			if _, err := p.acquire(tt.ctx()); !errors.Is(err, tt.wantErr) {
				t.Fatalf("second acquire: %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// TestPasswords_hammer runs many checks at once: each one either verifies or
// is refused as busy, and every slot and queue place is given back.
func TestPasswords_hammer(t *testing.T) {
	p := NewPasswords(PasswordOptions{Concurrency: 3, Queue: 4, MaxWait: 50 * time.Millisecond, Cost: cheapCost})
	h, err := p.Hash(context.Background(), "pw")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ok   int
		busy int
	)
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			matched, err := p.Verify(context.Background(), "pw", h)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, ErrBusy):
				busy++
			case err != nil || !matched:
				t.Errorf("Verify = %v, %v", matched, err)
			default:
				ok++
			}
		}()
	}
	wg.Wait()
	if ok+busy != 64 || ok < 3 {
		t.Fatalf("%d verified, %d busy of 64", ok, busy)
	}
	if len(p.running) != 0 || len(p.waiting) != 0 {
		t.Fatalf("after the hammer: %d running, %d waiting", len(p.running), len(p.waiting))
	}
}
