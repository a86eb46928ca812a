package storetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// testJots checks jot names, uploads that publish atomically once, patches
// within limits, case-insensitive paths, ownership and deletion.
func testJots(t *testing.T, h *harness) {
	st := h.st
	alice := newUser(t, st, "alice@example.com")
	bob := newUser(t, st, "bob@example.com")
	public := store.JotSettings{Access: store.JotPublic}
	lim := store.JotLimits{MaxFiles: 3, MaxBytes: 100}

	// Names: DNS labels, global, first come first served.
	for _, bad := range []string{"", "Upper", "-lead", "trail-", "dot.ted", "under_score", "_upload", strings.Repeat("a", 64), "spa ce"} {
		_, err := st.CreateJot(ctx, store.NewJot{UserID: alice.ID, Name: bad, JotSettings: public})
		wantErr(t, fmt.Sprintf("CreateJot %q", bad), err, store.ErrInvalid)
	}
	badSettings := []store.JotSettings{
		{Access: "secret"},
		{Access: store.JotPassword},
		{Access: store.JotPublic, PasswordHash: "$argon2id$x"},
		{Access: store.JotPassword, PasswordHash: "$argon2id$x", CORS: true},
	}
	for _, s := range badSettings {
		_, err := st.CreateJot(ctx, store.NewJot{UserID: alice.ID, Name: "fine", JotSettings: s})
		wantErr(t, fmt.Sprintf("CreateJot settings %+v", s), err, store.ErrInvalid)
	}
	site, err := st.CreateJot(ctx, store.NewJot{UserID: alice.ID, Name: "site", JotSettings: store.JotSettings{Access: store.JotPublic, CORS: true}})
	must(t, "CreateJot", err)
	if !strings.HasPrefix(site.ID, store.PrefixJot) || site.TenantID != store.DefaultTenant || site.Version != 0 || len(site.CookieKey) != 32 ||
		!site.PublishedAt.IsZero() || !site.CreatedAt.Equal(h.clock.Now()) || !site.CORS {
		t.Fatalf("CreateJot = %+v", site)
	}
	_, err = st.CreateJot(ctx, store.NewJot{UserID: bob.ID, Name: "site", JotSettings: public})
	wantErr(t, "another user's name", err, store.ErrConflict)
	_, err = st.CreateJot(ctx, store.NewJot{UserID: "usr_missing", Name: "orphan", JotSettings: public})
	wantErr(t, "unknown user", err, store.ErrNotFound)
	got, err := st.Jot(ctx, "site")
	must(t, "Jot", err)
	if got.ID != site.ID || got.UserID != alice.ID || !bytes.Equal(got.CookieKey, site.CookieKey) || !got.CORS {
		t.Fatalf("Jot = %+v, want %+v", got, site)
	}
	_, err = st.Jot(ctx, "nope")
	wantErr(t, "unknown jot", err, store.ErrNotFound)

	// Uploads: only for one's own jot, hashed, expiring, single-use.
	tok := func(s string) string { return secrets.HashToken("upload-" + s) }
	exp := h.clock.Now().Add(5 * time.Minute)
	_, err = st.CreateJotUpload(ctx, store.NewJotUpload{JotID: site.ID, UserID: bob.ID, TokenHash: tok("bob"), JotSettings: public, ExpiresAt: exp})
	wantErr(t, "upload to another user's jot", err, store.ErrNotFound)
	_, err = st.CreateJotUpload(ctx, store.NewJotUpload{JotID: site.ID, UserID: alice.ID, TokenHash: "plain", JotSettings: public, ExpiresAt: exp})
	wantErr(t, "malformed token hash", err, store.ErrInvalid)
	_, err = st.CreateJotUpload(ctx, store.NewJotUpload{JotID: site.ID, UserID: alice.ID, TokenHash: tok("noexp"), JotSettings: public})
	wantErr(t, "no expiry", err, store.ErrInvalid)
	up, err := st.CreateJotUpload(ctx, store.NewJotUpload{JotID: site.ID, UserID: alice.ID, TokenHash: tok("1"), JotSettings: public, ExpiresAt: exp})
	must(t, "CreateJotUpload", err)
	if up.Access != store.JotPublic || !up.ExpiresAt.Equal(exp) {
		t.Fatalf("CreateJotUpload = %+v", up)
	}
	if u, err := st.JotUpload(ctx, tok("1")); err != nil || u.JotID != site.ID || u.UserID != alice.ID {
		t.Fatalf("JotUpload = %+v, %v", u, err)
	}
	_, err = st.JotUpload(ctx, tok("unknown"))
	wantErr(t, "unknown upload", err, store.ErrNotFound)

	files := []store.JotContent{
		{Path: "index.html", ContentType: "text/html; charset=utf-8", Data: []byte("<h1>v1</h1>")},
		{Path: "data/a.json", ContentType: "application/json", Data: []byte(`{"a":1}`)},
	}
	// Failed publishes change nothing and leave the upload usable.
	failed := []struct {
		name  string
		files []store.JotContent
		want  error
	}{
		{"too many files", append(slices.Clone(files), store.JotContent{Path: "b", ContentType: "text/plain"}, store.JotContent{Path: "c", ContentType: "text/plain"}), store.ErrJotLimit},
		{"too many bytes", []store.JotContent{{Path: "big", ContentType: "text/plain", Data: bytes.Repeat([]byte("x"), 101)}}, store.ErrJotLimit},
		{"case duplicate", []store.JotContent{{Path: "A.txt", ContentType: "text/plain"}, {Path: "a.TXT", ContentType: "text/plain"}}, store.ErrConflict},
		{"traversal", []store.JotContent{{Path: "../x", ContentType: "text/plain"}}, store.ErrInvalid},
		{"absolute", []store.JotContent{{Path: "/etc/passwd", ContentType: "text/plain"}}, store.ErrInvalid},
		{"no content type", []store.JotContent{{Path: "x"}}, store.ErrInvalid},
	}
	for _, f := range failed {
		_, err := st.PublishJot(ctx, tok("1"), f.files, lim)
		wantErr(t, "PublishJot "+f.name, err, f.want)
	}
	if j, _ := st.Jot(ctx, "site"); j.Version != 0 || j.Files != 0 {
		t.Fatalf("after failed publishes: %+v", j)
	}
	h.clock.Advance(time.Second)
	pub, err := st.PublishJot(ctx, tok("1"), files, lim)
	must(t, "PublishJot", err)
	if pub.Version != 1 || pub.Files != 2 || pub.Bytes != int64(len("<h1>v1</h1>")+len(`{"a":1}`)) || !pub.PublishedAt.Equal(h.clock.Now()) ||
		pub.CORS || !bytes.Equal(pub.CookieKey, site.CookieKey) {
		t.Fatalf("PublishJot = %+v", pub)
	}
	_, err = st.PublishJot(ctx, tok("1"), files, lim)
	wantErr(t, "second publish with one upload", err, store.ErrNotFound)
	_, err = st.JotUpload(ctx, tok("1"))
	wantErr(t, "used upload", err, store.ErrNotFound)

	list, err := st.JotFiles(ctx, site.ID)
	must(t, "JotFiles", err)
	if len(list) != 2 || list[0].Path != "data/a.json" || list[1].Path != "index.html" || list[1].Size != 11 ||
		list[1].SHA256 != sha("<h1>v1</h1>") || list[0].ContentType != "application/json" || !list[0].ModifiedAt.Equal(h.clock.Now()) {
		t.Fatalf("JotFiles = %+v", list)
	}
	f, data, err := st.JotFile(ctx, site.ID, "index.html")
	must(t, "JotFile", err)
	if string(data) != "<h1>v1</h1>" || f.SHA256 != sha("<h1>v1</h1>") {
		t.Fatalf("JotFile = %+v %q", f, data)
	}
	_, _, err = st.JotFile(ctx, site.ID, "INDEX.HTML")
	wantErr(t, "JotFile in another case", err, store.ErrNotFound)

	// An expired upload publishes nothing.
	_, err = st.CreateJotUpload(ctx, store.NewJotUpload{JotID: site.ID, UserID: alice.ID, TokenHash: tok("2"), JotSettings: public,
		ExpiresAt: h.clock.Now().Add(time.Minute)})
	must(t, "CreateJotUpload 2", err)
	h.clock.Advance(time.Minute)
	_, err = st.JotUpload(ctx, tok("2"))
	wantErr(t, "expired upload", err, store.ErrExpired)
	_, err = st.PublishJot(ctx, tok("2"), files[:1], lim)
	wantErr(t, "expired publish", err, store.ErrExpired)
	if j, _ := st.Jot(ctx, "site"); j.Version != 1 || j.Files != 2 {
		t.Fatalf("after expired publish: %+v", j)
	}

	// Patches: put, replace, delete, settings; atomic on failure.
	badPatches := []struct {
		name string
		p    store.JotPatch
		want error
	}{
		{"delete missing", store.JotPatch{Put: []store.JotContent{{Path: "new.txt", ContentType: "text/plain"}}, Delete: []string{"missing"}, Limits: lim}, store.ErrNotFound},
		{"case clash with a kept file", store.JotPatch{Put: []store.JotContent{{Path: "Index.HTML", ContentType: "text/html"}}, Limits: lim}, store.ErrConflict},
		{"over files", store.JotPatch{Put: []store.JotContent{{Path: "x", ContentType: "text/plain"}, {Path: "y", ContentType: "text/plain"}}, Limits: lim}, store.ErrJotLimit},
		{"over bytes", store.JotPatch{Put: []store.JotContent{{Path: "x", ContentType: "text/plain", Data: bytes.Repeat([]byte("x"), 90)}}, Limits: lim}, store.ErrJotLimit},
		{"bad delete path", store.JotPatch{Delete: []string{"a/../b"}, Limits: lim}, store.ErrInvalid},
		{"password without hash", store.JotPatch{Settings: &store.JotSettings{Access: store.JotPassword}, Limits: lim}, store.ErrInvalid},
	}
	for _, b := range badPatches {
		_, err := st.PatchJot(ctx, alice.ID, "site", b.p)
		wantErr(t, "PatchJot "+b.name, err, b.want)
	}
	if j, _ := st.Jot(ctx, "site"); j.Version != 1 || j.Files != 2 {
		t.Fatalf("after failed patches: %+v", j)
	}
	if _, _, err := st.JotFile(ctx, site.ID, "new.txt"); err == nil {
		t.Fatal("a failed patch left a file behind")
	}
	_, err = st.PatchJot(ctx, bob.ID, "site", store.JotPatch{Delete: []string{"index.html"}, Limits: lim})
	wantErr(t, "PatchJot by another user", err, store.ErrNotFound)

	h.clock.Advance(time.Second)
	patched, err := st.PatchJot(ctx, alice.ID, "site", store.JotPatch{
		Put:    []store.JotContent{{Path: "data/a.json", ContentType: "application/json", Data: []byte(`{"a":2}`)}, {Path: "b.txt", ContentType: "text/plain", Data: []byte("b")}},
		Delete: []string{"index.html"},
		Limits: lim,
	})
	must(t, "PatchJot files", err)
	if patched.Version != 2 || patched.Files != 2 || patched.Bytes != 8 || !patched.UpdatedAt.Equal(h.clock.Now()) {
		t.Fatalf("PatchJot = %+v", patched)
	}
	list, _ = st.JotFiles(ctx, site.ID)
	if len(list) != 2 || list[0].Path != "b.txt" || list[1].SHA256 != sha(`{"a":2}`) || !list[1].ModifiedAt.Equal(h.clock.Now()) {
		t.Fatalf("JotFiles after patch = %+v", list)
	}
	locked, err := st.PatchJot(ctx, alice.ID, "site", store.JotPatch{Settings: &store.JotSettings{Access: store.JotPassword, PasswordHash: "$argon2id$h1"}, Limits: lim})
	must(t, "PatchJot settings", err)
	if locked.Version != 3 || locked.Access != store.JotPassword || locked.PasswordHash != "$argon2id$h1" || bytes.Equal(locked.CookieKey, site.CookieKey) {
		t.Fatalf("PatchJot settings = %+v", locked)
	}
	if j, _ := st.Jot(ctx, "site"); !bytes.Equal(j.CookieKey, locked.CookieKey) || j.Access != store.JotPassword {
		t.Fatalf("Jot after settings = %+v", j)
	}
	same, err := st.PatchJot(ctx, alice.ID, "site", store.JotPatch{Settings: &locked.JotSettings, Limits: lim})
	must(t, "PatchJot same settings", err)
	if !bytes.Equal(same.CookieKey, locked.CookieKey) || same.Version != 4 {
		t.Fatalf("unchanged settings rotated the key or kept the version: %+v", same)
	}

	// A publish applies the upload's settings and replaces every file.
	_, err = st.CreateJotUpload(ctx, store.NewJotUpload{JotID: site.ID, UserID: alice.ID, TokenHash: tok("3"), JotSettings: public, ExpiresAt: h.clock.Now().Add(time.Minute)})
	must(t, "CreateJotUpload 3", err)
	pub, err = st.PublishJot(ctx, tok("3"), files[:1], lim)
	must(t, "PublishJot 3", err)
	if pub.Access != store.JotPublic || pub.PasswordHash != "" || pub.Files != 1 || pub.Version != 5 || bytes.Equal(pub.CookieKey, locked.CookieKey) {
		t.Fatalf("PublishJot 3 = %+v", pub)
	}

	// Listing and deleting are per user; deleting frees the name.
	other, err := st.CreateJot(ctx, store.NewJot{UserID: alice.ID, Name: "another", JotSettings: public})
	must(t, "CreateJot another", err)
	mine, err := st.JotsOf(ctx, alice.ID)
	must(t, "JotsOf", err)
	if len(mine) != 2 || mine[0].Name != "another" || mine[1].Name != "site" {
		t.Fatalf("JotsOf = %+v", mine)
	}
	if theirs, err := st.JotsOf(ctx, bob.ID); err != nil || len(theirs) != 0 {
		t.Fatalf("JotsOf bob = %+v, %v", theirs, err)
	}
	wantErr(t, "DeleteJot by another user", st.DeleteJot(ctx, bob.ID, "site"), store.ErrNotFound)
	_, err = st.CreateJotUpload(ctx, store.NewJotUpload{JotID: site.ID, UserID: alice.ID, TokenHash: tok("4"), JotSettings: public, ExpiresAt: h.clock.Now().Add(time.Minute)})
	must(t, "CreateJotUpload 4", err)
	must(t, "DeleteJot", st.DeleteJot(ctx, alice.ID, "site"))
	wantErr(t, "DeleteJot twice", st.DeleteJot(ctx, alice.ID, "site"), store.ErrNotFound)
	_, err = st.JotUpload(ctx, tok("4"))
	wantErr(t, "upload of a deleted jot", err, store.ErrNotFound)
	if list, err := st.JotFiles(ctx, site.ID); err != nil || len(list) != 0 {
		t.Fatalf("files of a deleted jot = %+v, %v", list, err)
	}
	if _, err := st.CreateJot(ctx, store.NewJot{UserID: bob.ID, Name: "site", JotSettings: public}); err != nil {
		t.Fatalf("the name is not free after delete: %v", err)
	}

	// Pruning removes used and expired uploads only.
	_, err = st.CreateJotUpload(ctx, store.NewJotUpload{JotID: other.ID, UserID: alice.ID, TokenHash: tok("5"), JotSettings: public, ExpiresAt: h.clock.Now().Add(time.Minute)})
	must(t, "CreateJotUpload 5", err)
	_, err = st.CreateJotUpload(ctx, store.NewJotUpload{JotID: other.ID, UserID: alice.ID, TokenHash: tok("6"), JotSettings: public, ExpiresAt: h.clock.Now().Add(time.Hour)})
	must(t, "CreateJotUpload 6", err)
	_, err = st.PublishJot(ctx, tok("5"), files[:1], lim)
	must(t, "PublishJot 5", err)
	h.clock.Advance(2 * time.Minute)
	n, err := st.PruneJotUploads(ctx)
	must(t, "PruneJotUploads", err)
	if n != 1 { // 5, used; the uploads of "site" went with it
		t.Fatalf("PruneJotUploads = %d, want 1", n)
	}
	if _, err := st.JotUpload(ctx, tok("6")); err != nil {
		t.Fatalf("a live upload was pruned: %v", err)
	}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
