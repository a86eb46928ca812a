package storetest

import (
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// testCustomApps checks creating, listing and deleting custom apps: names
// unique per user, a manual credential stored and removed with its app,
// another user's apps out of reach, and malformed apps refused.
func testCustomApps(t *testing.T, h *harness) {
	st := h.st
	seal := newSealer('k')
	alice := newUser(t, st, "alice@example.com")
	bob := newUser(t, st, "bob@example.com")

	plain := store.NewCustomApp{ID: store.NewID(store.PrefixCustomApp), UserID: alice.ID, Name: "everything", URL: "http://127.0.0.1:3001/mcp", Auth: store.AppAuthNone}
	a, err := st.CreateCustomApp(ctx, plain, nil)
	must(t, "CreateCustomApp", err)
	if a.ID != plain.ID || a.TenantID != store.DefaultTenant || a.UserID != alice.ID || a.Name != "everything" ||
		a.URL != plain.URL || a.Auth != store.AppAuthNone || !a.CreatedAt.Equal(h.clock.Now()) {
		t.Fatalf("CreateCustomApp = %+v", a)
	}
	manual := store.NewCustomApp{ID: store.NewID(store.PrefixCustomApp), UserID: alice.ID, Name: "linear", URL: "https://mcp.linear.app/mcp", Auth: store.AppAuthManual}
	cred := seal.connection(t, alice, manual.ID, "lin_token")
	_, err = st.CreateCustomApp(ctx, manual, &cred)
	must(t, "CreateCustomApp manual", err)
	stored, err := st.Connection(ctx, alice.ID, manual.ID)
	must(t, "Connection of the manual app", err)
	if secret, err := seal.open(stored); err != nil || secret != "lin_token" {
		t.Fatalf("credential round trip = %q, %v", secret, err)
	}

	// The same name for the same user is a conflict; for another user it is
	// not.
	dup := plain
	dup.ID = store.NewID(store.PrefixCustomApp)
	_, err = st.CreateCustomApp(ctx, dup, nil)
	wantErr(t, "CreateCustomApp duplicate name", err, store.ErrConflict)
	dup.UserID = bob.ID
	_, err = st.CreateCustomApp(ctx, dup, nil)
	must(t, "CreateCustomApp same name for bob", err)

	apps, err := st.CustomApps(ctx, alice.ID)
	must(t, "CustomApps", err)
	if len(apps) != 2 || apps[0].Name != "everything" || apps[1].Name != "linear" {
		t.Fatalf("CustomApps(alice) = %+v, want everything and linear", apps)
	}

	// Bob cannot delete Alice's app; deleting his own leaves hers.
	_, err = st.DeleteCustomApp(ctx, bob.ID, "linear")
	wantErr(t, "DeleteCustomApp of another user's app", err, store.ErrNotFound)
	gone, err := st.DeleteCustomApp(ctx, bob.ID, "everything")
	must(t, "DeleteCustomApp bob", err)
	if gone.ID != dup.ID {
		t.Fatalf("DeleteCustomApp returned %+v, want id %s", gone, dup.ID)
	}
	if apps, _ := st.CustomApps(ctx, alice.ID); len(apps) != 2 {
		t.Fatalf("after bob's delete alice has %d apps, want 2", len(apps))
	}

	// Deleting the manual app deletes its credential.
	_, err = st.DeleteCustomApp(ctx, alice.ID, "linear")
	must(t, "DeleteCustomApp manual", err)
	_, err = st.Connection(ctx, alice.ID, manual.ID)
	wantErr(t, "credential of a deleted app", err, store.ErrNotFound)
	_, err = st.DeleteCustomApp(ctx, alice.ID, "linear")
	wantErr(t, "deleting twice", err, store.ErrNotFound)

	// A credential that fails to store rolls the app back.
	badCred := manual
	badCred.ID, badCred.Name = store.NewID(store.PrefixCustomApp), "broken"
	wrongUser := seal.connection(t, bob, badCred.ID, "x")
	_, err = st.CreateCustomApp(ctx, badCred, &wrongUser)
	wantErr(t, "credential of another user", err, store.ErrInvalid)

	ghost := plain
	ghost.ID, ghost.UserID = store.NewID(store.PrefixCustomApp), "usr_nobody"
	_, err = st.CreateCustomApp(ctx, ghost, nil)
	wantErr(t, "app of an unknown user", err, store.ErrNotFound)

	valid := func() store.NewCustomApp {
		return store.NewCustomApp{ID: store.NewID(store.PrefixCustomApp), UserID: alice.ID, Name: "ok-app", URL: "https://example.com/mcp", Auth: store.AppAuthNone}
	}
	tests := []struct {
		name   string
		change func(*store.NewCustomApp)
	}{
		{"one-character name", func(a *store.NewCustomApp) { a.Name = "a" }},
		{"name of 32 characters", func(a *store.NewCustomApp) { a.Name = "a" + strings.Repeat("b", 31) }},
		{"name starting with a digit", func(a *store.NewCustomApp) { a.Name = "1app" }},
		{"upper-case name", func(a *store.NewCustomApp) { a.Name = "App" }},
		{"underscore in the name", func(a *store.NewCustomApp) { a.Name = "my_app" }},
		{"id without prefix", func(a *store.NewCustomApp) { a.ID = "con_abc" }},
		{"file URL", func(a *store.NewCustomApp) { a.URL = "file:///etc/passwd" }},
		{"gopher URL", func(a *store.NewCustomApp) { a.URL = "gopher://example.com/" }},
		{"URL with credentials", func(a *store.NewCustomApp) { a.URL = "https://u:p@example.com/mcp" }},
		{"URL without host", func(a *store.NewCustomApp) { a.URL = "https:///mcp" }},
		{"URL with fragment", func(a *store.NewCustomApp) { a.URL = "https://example.com/mcp#x" }},
		{"URL too long", func(a *store.NewCustomApp) {
			a.URL = "https://example.com/" + strings.Repeat("a", store.MaxCustomAppURLLen)
		}},
		{"unknown auth", func(a *store.NewCustomApp) { a.Auth = "oauth" }},
		{"manual without credential", func(a *store.NewCustomApp) { a.Auth = store.AppAuthManual }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := valid()
			tt.change(&a)
			_, err := st.CreateCustomApp(ctx, a, nil)
			wantErr(t, "CreateCustomApp", err, store.ErrInvalid)
		})
	}
	if _, err := st.CreateCustomApp(ctx, valid(), nil); err != nil {
		t.Fatalf("the valid base app is refused: %v", err)
	}
}
