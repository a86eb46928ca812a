package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

// TestSessionBounds_Open reproduces the review's session flood (3 000
// initialize calls from one token made 3 000 sessions): a user keeps the
// newest sessions up to the bound and the older ones are closed; the server
// refuses sessions past its total without closing anyone else's; sessions
// that never made a call are closed once idle past the bound.
func TestSessionBounds_Open(t *testing.T) {
	clock := storetest.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	server := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	b := newSessionBounds(Options{SessionsPerUser: 3, MaxSessions: 5, UnusedSessionIdle: 5 * time.Minute, Now: clock.Now}, server.Sessions)
	connect := func() *sdk.ServerSession {
		t.Helper()
		st, _ := sdk.NewInMemoryTransports()
		ss, err := server.Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		return ss
	}
	open := func(user string) (*sdk.ServerSession, error) {
		ss := connect()
		clock.Advance(time.Second)
		err := b.open(ss, user)
		if err == nil {
			b.use(ss)
		}
		return ss, err
	}
	// Wait returns once a session is closed: no timing involved.
	closed := func(ss *sdk.ServerSession) { _ = ss.Wait() }
	isLive := func(ss *sdk.ServerSession) bool {
		for s := range server.Sessions() {
			if s == ss {
				return true
			}
		}
		return false
	}

	var mallory []*sdk.ServerSession
	for range 10 {
		ss, err := open("mallory")
		if err != nil {
			t.Fatalf("mallory's session: %v", err)
		}
		mallory = append(mallory, ss)
	}
	for _, ss := range mallory[:7] {
		closed(ss)
	}
	for i, ss := range mallory[7:] {
		if !isLive(ss) {
			t.Errorf("mallory's session %d of the newest 3 was closed", 7+i)
		}
	}
	alice := make([]*sdk.ServerSession, 2)
	for i := range alice {
		ss := connect()
		if err := b.open(ss, "alice"); err != nil { // never used
			t.Fatalf("alice's session: %v", err)
		}
		alice[i] = ss
	}
	// Five in all: a new user is refused, naming the bound; mallory may
	// still replace her oldest.
	if _, err := open("bob"); err == nil || !strings.Contains(err.Error(), "holds 5 sessions, its limit") {
		t.Fatalf("bob's session past the total = %v", err)
	}
	if _, err := open("mallory"); err != nil {
		t.Fatalf("mallory replacing her oldest: %v", err)
	}
	closed(mallory[7])
	for _, ss := range alice {
		if !isLive(ss) {
			t.Fatal("another user's session was closed")
		}
	}
	// Alice's sessions never made a call: closed once idle past 5 minutes.
	clock.Advance(4 * time.Minute)
	b.sweep()
	if !isLive(alice[0]) {
		t.Fatal("an unused session was closed before its idle bound")
	}
	clock.Advance(time.Minute)
	b.sweep()
	for _, ss := range alice {
		closed(ss)
	}
	for _, ss := range mallory[8:] {
		if !isLive(ss) {
			t.Error("a session that made calls was closed as unused")
		}
	}
	// Their room is free again.
	if _, err := open("bob"); err != nil {
		t.Fatalf("bob after the sweep: %v", err)
	}
}
