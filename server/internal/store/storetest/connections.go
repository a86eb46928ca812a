package storetest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

func testConnections(t *testing.T, h *harness) {
	st := h.st
	seal := newSealer('k')
	alice := newUser(t, st, "alice@example.com")
	bob := newUser(t, st, "bob@example.com")

	in := seal.connection(t, alice, "github", "gho_alice")
	in.ExpiresAt = h.clock.Now().Add(time.Hour).Add(123 * time.Nanosecond) // rounded to microseconds
	c, err := st.PutConnection(ctx, in)
	must(t, "PutConnection", err)
	if !strings.HasPrefix(c.ID, store.PrefixConnection) || c.TenantID != store.DefaultTenant || c.UserID != alice.ID ||
		c.Integration != "github" || c.Mode != "oauth2" || c.Status != store.ConnectionActive || c.Reason != "" ||
		!c.ExpiresAt.Equal(store.Round(in.ExpiresAt)) || !c.CreatedAt.Equal(h.clock.Now()) || !c.UpdatedAt.Equal(h.clock.Now()) {
		t.Fatalf("PutConnection = %+v", c)
	}
	if bytes.Contains(c.Sealed, []byte("gho_alice")) {
		t.Fatal("stored blob holds the plaintext")
	}
	got, err := st.Connection(ctx, alice.ID, "github")
	must(t, "Connection", err)
	if secret, err := seal.open(got); err != nil || secret != "gho_alice" {
		t.Fatalf("round trip = %q, %v", secret, err)
	}
	if !got.ExpiresAt.Equal(c.ExpiresAt) || got.ID != c.ID || got.KeyID != in.KeyID {
		t.Fatalf("Connection = %+v, want %+v", got, c)
	}

	// A sealed blob copied into another user's row does not open there.
	stolen := got
	stolen.UserID = bob.ID
	stolen.ID = ""
	_, err = st.PutConnection(ctx, stolen)
	must(t, "PutConnection copied blob", err)
	copied, err := st.Connection(ctx, bob.ID, "github")
	must(t, "Connection copied", err)
	_, err = seal.open(copied)
	wantErr(t, "opening a blob copied to another user", err, secrets.ErrOpen)
	// Nor in the same user's row for another integration.
	moved := got
	moved.Integration = "slack"
	_, err = st.PutConnection(ctx, moved)
	must(t, "PutConnection moved blob", err)
	movedBack, _ := st.Connection(ctx, alice.ID, "slack")
	_, err = seal.open(movedBack)
	wantErr(t, "opening a blob moved to another integration", err, secrets.ErrOpen)
	must(t, "DeleteConnection slack", st.DeleteConnection(ctx, alice.ID, "slack"))

	// Put again replaces the credential but keeps id and creation time.
	h.clock.Advance(time.Minute)
	replaced := seal.connection(t, alice, "github", "gho_alice_2")
	replaced.SealedRefresh = nil
	c2, err := st.PutConnection(ctx, replaced)
	must(t, "PutConnection replace", err)
	if c2.ID != c.ID || !c2.CreatedAt.Equal(c.CreatedAt) || !c2.UpdatedAt.Equal(h.clock.Now()) || !c2.ExpiresAt.IsZero() || c2.SealedRefresh != nil {
		t.Fatalf("replaced connection = %+v (first %+v)", c2, c)
	}
	got, _ = st.Connection(ctx, alice.ID, "github")
	plain, err := seal.keys.Open(got.Sealed, got.KeyID, aad("credential", got.TenantID, got.UserID, "github"))
	if err != nil || string(plain) != "gho_alice_2" {
		t.Fatalf("replaced credential = %q, %v", plain, err)
	}

	// Status and reason.
	h.clock.Advance(time.Minute)
	must(t, "SetConnectionStatus", st.SetConnectionStatus(ctx, alice.ID, "github", store.ConnectionFailed, "invalid_grant: token revoked"))
	got, _ = st.Connection(ctx, alice.ID, "github")
	if got.Status != store.ConnectionFailed || got.Reason != "invalid_grant: token revoked" || !got.UpdatedAt.Equal(h.clock.Now()) {
		t.Fatalf("after SetConnectionStatus: %+v", got)
	}
	long := strings.Repeat("é", store.MaxReasonLen)
	must(t, "SetConnectionStatus long reason", st.SetConnectionStatus(ctx, alice.ID, "github", store.ConnectionFailed, long))
	got, _ = st.Connection(ctx, alice.ID, "github")
	if len(got.Reason) > store.MaxReasonLen || !strings.HasPrefix(long, got.Reason) || len(got.Reason) < store.MaxReasonLen-1 {
		t.Fatalf("long reason stored as %d bytes", len(got.Reason))
	}
	wantErr(t, "bad status", st.SetConnectionStatus(ctx, alice.ID, "github", "broken", ""), store.ErrInvalid)
	wantErr(t, "status of missing connection", st.SetConnectionStatus(ctx, alice.ID, "jira", store.ConnectionActive, ""), store.ErrNotFound)
	// Putting a connection again makes it active.
	c3, err := st.PutConnection(ctx, seal.connection(t, alice, "github", "gho_alice_3"))
	must(t, "PutConnection after failure", err)
	if c3.Status != store.ConnectionActive || c3.Reason != "" {
		t.Fatalf("re-put connection = %s %q", c3.Status, c3.Reason)
	}

	_, err = st.PutConnection(ctx, seal.connection(t, alice, "atlassian-jira", "jira"))
	must(t, "PutConnection jira", err)
	list, err := st.Connections(ctx, alice.ID)
	must(t, "Connections", err)
	if len(list) != 2 || list[0].Integration != "atlassian-jira" || list[1].Integration != "github" {
		t.Fatalf("Connections = %+v", list)
	}

	must(t, "DeleteConnection", st.DeleteConnection(ctx, alice.ID, "github"))
	_, err = st.Connection(ctx, alice.ID, "github")
	wantErr(t, "deleted connection", err, store.ErrNotFound)
	wantErr(t, "delete twice", st.DeleteConnection(ctx, alice.ID, "github"), store.ErrNotFound)

	valid := seal.connection(t, alice, "github", "x")
	tests := []struct {
		name   string
		change func(c *store.Connection)
		want   error
	}{
		{"unknown user", func(c *store.Connection) { c.UserID = "usr_missing" }, store.ErrNotFound},
		{"no user", func(c *store.Connection) { c.UserID = "" }, store.ErrInvalid},
		{"bad integration", func(c *store.Connection) { c.Integration = "Git Hub" }, store.ErrInvalid},
		{"no mode", func(c *store.Connection) { c.Mode = "" }, store.ErrInvalid},
		{"no key id", func(c *store.Connection) { c.KeyID = "" }, store.ErrInvalid},
		{"no blob", func(c *store.Connection) { c.Sealed = nil }, store.ErrInvalid},
		{"huge blob", func(c *store.Connection) { c.Sealed = make([]byte, store.MaxSealedLen+1) }, store.ErrInvalid},
		{"bad status", func(c *store.Connection) { c.Status = "weird" }, store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid
			tt.change(&c)
			_, err := st.PutConnection(ctx, c)
			wantErr(t, "PutConnection", err, tt.want)
		})
	}
}

func testReseal(t *testing.T, h *harness) {
	st := h.st
	oldSeal := newSealer('o')
	users := []store.User{newUser(t, st, "a@example.com"), newUser(t, st, "b@example.com")}
	for _, u := range users {
		for _, integ := range []string{"github", "slack", "notion"} {
			_, err := st.PutConnection(ctx, oldSeal.connection(t, u, integ, u.ID+"/"+integ))
			must(t, "PutConnection", err)
		}
	}
	newSeal := newSealer('n', 'o') // current key n, old key o still readable
	newID, err := newSeal.keys.CurrentKeyID()
	must(t, "CurrentKeyID", err)
	// One row is already under the new key and must not be visited.
	_, err = st.PutConnection(ctx, newSeal.connection(t, users[0], "jira", "already-new"))
	must(t, "PutConnection new", err)

	reseal := func(c store.Connection) (store.Connection, error) {
		var err error
		if c.KeyID == newID {
			t.Errorf("reseal visited %s/%s which is already under the current key", c.UserID, c.Integration)
		}
		oldKeyID := c.KeyID
		if c.Sealed, c.KeyID, err = newSeal.keys.Reseal(c.Sealed, oldKeyID, aad("credential", c.TenantID, c.UserID, c.Integration)); err != nil {
			return c, err
		}
		if c.SealedRefresh, _, err = newSeal.keys.Reseal(c.SealedRefresh, oldKeyID, aad("refresh", c.TenantID, c.UserID, c.Integration)); err != nil {
			return c, err
		}
		// A refresh lands while this row is being resealed: the store must
		// keep the refreshed row, not overwrite it.
		if c.UserID == users[1].ID && c.Integration == "slack" {
			if _, err := st.PutConnection(ctx, newSeal.connection(t, users[1], "slack", "refreshed")); err != nil {
				t.Errorf("concurrent PutConnection: %v", err)
			}
		}
		return c, nil
	}
	h.clock.Advance(time.Second) // the concurrent Put gets a new UpdatedAt
	n, err := st.ResealConnections(ctx, newID, 2, reseal)
	must(t, "ResealConnections", err)
	if n != 5 {
		t.Fatalf("ResealConnections rewrote %d rows, want 5 (6 old rows, one refreshed meanwhile)", n)
	}
	onlyNew := newSealer('n')
	for _, u := range users {
		list, err := st.Connections(ctx, u.ID)
		must(t, "Connections", err)
		for _, c := range list {
			if c.KeyID != newID {
				t.Errorf("%s/%s still under key %s", u.Email, c.Integration, c.KeyID)
				continue
			}
			secret, err := onlyNew.open(c)
			if err != nil {
				t.Errorf("%s/%s does not open with the new key alone: %v", u.Email, c.Integration, err)
			}
			want := u.ID + "/" + c.Integration
			switch {
			case c.Integration == "jira":
				want = "already-new"
			case u.ID == users[1].ID && c.Integration == "slack":
				want = "refreshed"
			}
			if secret != want {
				t.Errorf("%s/%s secret = %q, want %q", u.Email, c.Integration, secret, want)
			}
		}
	}
	// Nothing is left to do.
	if n, err := st.ResealConnections(ctx, newID, 2, reseal); err != nil || n != 0 {
		t.Fatalf("second ResealConnections = %d, %v", n, err)
	}
	// A reseal that returns the wrong key id is refused.
	_, err = st.PutConnection(ctx, oldSeal.connection(t, users[0], "github", "again-old"))
	must(t, "PutConnection", err)
	_, err = st.ResealConnections(ctx, newID, 0, func(c store.Connection) (store.Connection, error) { return c, nil })
	wantErr(t, "reseal keeping the old key", err, store.ErrInvalid)
}
