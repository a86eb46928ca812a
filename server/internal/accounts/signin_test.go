package accounts

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/sqlite"
	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

// throttleFixture is a store on a settable clock with one user, alice.
func throttleFixture(t *testing.T) (store.Store, *storetest.Clock, *SignIn) {
	t.Helper()
	clock := storetest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wb.db"), store.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, _, err := AddUser(ctx, st, testPasswords, NewUser{Email: "alice@example.com", Password: "correct horse"}); err != nil {
		t.Fatal(err)
	}
	return st, clock, NewSignIn(st, testPasswords, SignInOptions{})
}

func wantThrottled(t *testing.T, err error, scope string, wait time.Duration) {
	t.Helper()
	var te *ThrottledError
	if !errors.As(err, &te) || !errors.Is(err, ErrThrottled) || te.Scope != scope || te.Wait != wait {
		t.Fatalf("err = %v, want throttled by %s for %v", err, scope, wait)
	}
}

func TestSignIn_perAccount(t *testing.T) {
	_, clock, s := throttleFixture(t)
	// Five wrong passwords from five addresses: the account is throttled,
	// whatever the address, and the right password waits too.
	for i := range DefaultPerAccount.Free {
		if _, err := s.Login(ctx, fmt.Sprintf("192.0.2.%d", i), "", "Alice@example.com", "wrong"); !errors.Is(err, failure.ErrUnauthenticated) {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
	}
	_, err := s.Login(ctx, "198.51.100.7", "", "alice@example.com", "correct horse")
	wantThrottled(t, err, "account", DefaultPerAccount.Wait)
	clock.Advance(DefaultPerAccount.Wait)
	if _, err := s.Login(ctx, "198.51.100.7", "", "alice@example.com", "wrong"); !errors.Is(err, failure.ErrUnauthenticated) {
		t.Fatalf("after the wait: %v", err)
	}
	_, err = s.Login(ctx, "198.51.100.7", "", "alice@example.com", "correct horse")
	wantThrottled(t, err, "account", 2*DefaultPerAccount.Wait) // the wait doubles
	clock.Advance(2 * DefaultPerAccount.Wait)
	if _, err := s.Login(ctx, "198.51.100.7", "", "alice@example.com", "correct horse"); err != nil {
		t.Fatalf("right password after the wait: %v", err)
	}
	// The success cleared the account's count.
	for i := range DefaultPerAccount.Free - 1 {
		if _, err := s.Login(ctx, "198.51.100.7", "", "alice@example.com", "wrong"); !errors.Is(err, failure.ErrUnauthenticated) {
			t.Fatalf("attempt %d after a success: %v", i+1, err)
		}
	}
	// Unknown accounts are counted the same way, so throttling says nothing
	// about which emails exist.
	for range DefaultPerAccount.Free {
		s.Login(ctx, "203.0.113.1", "", "nobody@example.com", "x")
	}
	_, err = s.Login(ctx, "203.0.113.2", "", "NOBODY@example.com", "x")
	wantThrottled(t, err, "account", DefaultPerAccount.Wait)
}

func TestSignIn_perAddress(t *testing.T) {
	_, _, s := throttleFixture(t)
	for i := range DefaultPerAddress.Free {
		if _, err := s.Login(ctx, "192.0.2.1", "", fmt.Sprintf("user%d@example.com", i), "x"); !errors.Is(err, failure.ErrUnauthenticated) {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
	}
	_, err := s.Login(ctx, "192.0.2.1", "", "alice@example.com", "correct horse")
	wantThrottled(t, err, "address", DefaultPerAddress.Wait)
	if _, err := s.Login(ctx, "192.0.2.2", "", "alice@example.com", "correct horse"); err != nil {
		t.Fatalf("another address: %v", err)
	}
}

// TestSignIn_burst sends 32 wrong passwords for one account at once: the
// attempts are counted before any is checked, so only the account's free
// attempts are checked at all.
func TestSignIn_burst(t *testing.T) {
	_, _, s := throttleFixture(t)
	var (
		wg                 sync.WaitGroup
		mu                 sync.Mutex
		checked, throttled int
	)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Login(ctx, fmt.Sprintf("192.0.2.%d", i), "", "alice@example.com", "guess")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, failure.ErrUnauthenticated):
				checked++
			case errors.Is(err, ErrThrottled):
				throttled++
			default:
				t.Errorf("unexpected: %v", err)
			}
		}()
	}
	wg.Wait()
	if checked != DefaultPerAccount.Free || throttled != 32-checked {
		t.Fatalf("%d checked, %d throttled; want %d checked", checked, throttled, DefaultPerAccount.Free)
	}
}

func TestSignIn_Recheck(t *testing.T) {
	st, _, s := throttleFixture(t)
	alice, err := st.UserByEmail(ctx, store.DefaultTenant, "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Recheck(ctx, alice, "correct horse"); err != nil {
		t.Fatalf("right password: %v", err)
	}
	for range DefaultPerAccount.Free {
		if err := s.Recheck(ctx, alice, "wrong"); !errors.Is(err, failure.ErrUnauthenticated) {
			t.Fatalf("wrong password: %v", err)
		}
	}
	wantThrottled(t, s.Recheck(ctx, alice, "correct horse"), "account", DefaultPerAccount.Wait)
}
