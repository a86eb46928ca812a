package jots_test

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/jots"
	"github.com/workbench-dev/workbench/server/internal/jots/tarball/tarballtest"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

type entry = tarballtest.Entry

// TestManifest_Validate runs the plugin manifest validator over the
// built-in manifest. "jots" is reserved for the built-in, so the validator
// refuses exactly that; renamed, everything else must pass.
func TestManifest_Validate(t *testing.T) {
	m := jots.Manifest(jots.Limits{})
	err := m.Validate()
	var fe *manifest.FieldError
	if !errors.As(err, &fe) || fe.Field != "name" || !strings.Contains(fe.Msg, "reserved") {
		t.Fatalf("Validate = %v, want only the reserved name", err)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	renamed := strings.ReplaceAll(string(data), `"jots_`, `"jotz_`)
	renamed = strings.Replace(renamed, `"name":"jots"`, `"name":"jotz"`, 1)
	if _, err := manifest.Parse([]byte(renamed)); err != nil {
		t.Fatalf("manifest (renamed jotz) does not validate: %v", err)
	}
	want := map[string]manifest.Annotations{
		jots.ToolDeploy: {OpenWorld: true}, jots.ToolUpdate: {Destructive: true, OpenWorld: true},
		jots.ToolListFiles: {ReadOnly: true, Idempotent: true}, jots.ToolList: {ReadOnly: true, Idempotent: true},
		jots.ToolDelete: {Destructive: true, Idempotent: true},
	}
	if len(m.Tools) != len(want) || m.Auth.Mode != manifest.ModeNone {
		t.Fatalf("manifest has %d tools, auth %q", len(m.Tools), m.Auth.Mode)
	}
	for _, tool := range m.Tools {
		if tool.Annotations != want[tool.Slug] || len(tool.OutputSchema) == 0 {
			t.Errorf("%s: annotations %+v, want %+v; output schema %d bytes", tool.Slug, tool.Annotations, want[tool.Slug], len(tool.OutputSchema))
		}
	}
	// The limits are quoted where agents read them.
	custom := jots.Manifest(jots.Limits{MaxBytes: 1 << 20, MaxFiles: 7, UploadTTL: time.Minute})
	if d := custom.Tool(jots.ToolDeploy).Description; !strings.Contains(d, "1 MiB") || !strings.Contains(d, "7 files") || !strings.Contains(d, "1m0s") {
		t.Errorf("deploy description does not quote the limits: %s", d)
	}
}

func TestService_Call(t *testing.T) {
	f := newFixture(t, nil)
	wantErr := func(what string, te *failure.Error, code failure.Code, mention ...string) {
		t.Helper()
		if te == nil || te.Code != code {
			t.Fatalf("%s: error %v, want code %s", what, te, code)
		}
		for _, m := range mention {
			if !strings.Contains(te.Message, m) {
				t.Errorf("%s: message %q lacks %q", what, te.Message, m)
			}
		}
	}
	bad := []struct {
		name    string
		in      map[string]any
		code    failure.Code
		mention string
	}{
		{"upper-case name", map[string]any{"name": "Site", "access": "public"}, failure.InvalidArguments, "DNS label"},
		{"password without password", map[string]any{"name": "s", "access": "password"}, failure.InvalidArguments, "needs a password"},
		{"password on a public jot", map[string]any{"name": "s", "access": "public", "password": "x"}, failure.InvalidArguments, "only for access 'password'"},
		{"cors on a password jot", map[string]any{"name": "s", "access": "password", "password": "x", "cors": true}, failure.InvalidArguments, "public jots"},
		{"bad access", map[string]any{"name": "s", "access": "secret"}, failure.InvalidArguments, "'public' or 'password'"},
		{"unknown argument", map[string]any{"name": "s", "access": "public", "ttl": 5}, failure.InvalidArguments, "ttl"},
	}
	for _, b := range bad {
		_, te := f.call(f.alice, jots.ToolDeploy, b.in)
		wantErr("deploy "+b.name, te, b.code, b.mention)
	}
	out := f.mustCall(f.alice, jots.ToolDeploy, map[string]any{"name": "report", "access": "public"})
	up := out["uploadUrl"].(string)
	if !strings.HasPrefix(up, f.base+"/j/_upload/") || out["url"] != f.base+"/j/report/" || out["method"] != "PUT" ||
		out["maxBytes"] != float64(5<<20) || out["maxFiles"] != float64(1000) || !strings.Contains(out["example"].(string), up) {
		t.Fatalf("deploy = %v", out)
	}
	exp, err := time.Parse(time.RFC3339, out["expiresAt"].(string))
	if err != nil || exp.Sub(time.Now()) > 5*time.Minute+time.Second || exp.Sub(time.Now()) < 4*time.Minute {
		t.Fatalf("expiresAt = %v (%v)", out["expiresAt"], err)
	}
	// The name is alice's: taken for bob, whatever the tool.
	for tool, in := range map[string]map[string]any{
		jots.ToolDeploy:    {"name": "report", "access": "public"},
		jots.ToolUpdate:    {"name": "report", "cors": true},
		jots.ToolListFiles: {"name": "report"},
		jots.ToolDelete:    {"name": "report"},
	} {
		_, te := f.call(f.bob, tool, in)
		wantErr("bob "+tool, te, failure.NameTaken, `"report"`, "taken by another user")
	}
	status, body := f.put(up, bytes.NewReader(f.build(entry{Name: "index.html", Body: "<h1>v1</h1>"}, entry{Name: "data/points.json", Body: `[1,2]`})))
	if status != http.StatusOK || body["version"] != float64(1) || body["files"] != float64(2) || body["url"] != f.base+"/j/report/" {
		t.Fatalf("upload = %d %v", status, body)
	}
	// Single use.
	status, body = f.put(up, bytes.NewReader(f.build(entry{Name: "index.html", Body: "v2"})))
	if status != http.StatusNotFound || !strings.Contains(body["error"].(map[string]any)["message"].(string), "already used") {
		t.Fatalf("second upload = %d %v", status, body)
	}

	files := f.mustCall(f.alice, jots.ToolListFiles, map[string]any{"name": "report"})
	list := files["files"].([]any)
	first := list[0].(map[string]any)
	if len(list) != 2 || first["path"] != "data/points.json" || first["contentType"] != "application/json" || first["size"] != float64(5) ||
		first["sha256"] != sha("[1,2]") || files["totalBytes"] != float64(16) {
		t.Fatalf("list_jot_files = %v", files)
	}

	// update_jot: put text and binary, delete, flip settings; errors change nothing.
	png := []byte{0x89, 'P', 'N', 'G', 0, 1, 2}
	tgz := f.build(entry{Name: "extra/a.txt", Body: "A"})
	upd := f.mustCall(f.alice, jots.ToolUpdate, map[string]any{"name": "report",
		"files":   []any{map[string]any{"path": "data/points.json", "content": "[3]"}, map[string]any{"path": "img/dot.png", "content": base64.StdEncoding.EncodeToString(png), "encoding": "base64"}},
		"tarball": base64.StdEncoding.EncodeToString(tgz),
	})
	if upd["version"] != float64(2) || upd["files"] != float64(4) {
		t.Fatalf("update = %v", upd)
	}
	if r := f.get("GET", "/j/report/img/dot.png"); r.status != 200 || r.body != string(png) || r.header.Get("Content-Type") != "image/png" {
		t.Fatalf("patched binary: %d %q %q", r.status, r.body, r.header.Get("Content-Type"))
	}
	badUpdates := []struct {
		name    string
		in      map[string]any
		code    failure.Code
		mention string
	}{
		{"nothing", map[string]any{"name": "report"}, failure.InvalidArguments, "nothing to update"},
		{"traversal", map[string]any{"name": "report", "files": []any{map[string]any{"path": "../x", "content": "x"}}}, failure.InvalidArguments, "'..'"},
		{"case clash", map[string]any{"name": "report", "files": []any{map[string]any{"path": "INDEX.html", "content": "x"}}}, failure.PathConflict, "ignoring case"},
		{"delete missing", map[string]any{"name": "report", "files": []any{map[string]any{"path": "new.txt", "content": "x"}}, "delete": []string{"nope.txt"}}, failure.NotFound, "nope.txt"},
		{"bad base64", map[string]any{"name": "report", "files": []any{map[string]any{"path": "b.bin", "content": "@@", "encoding": "base64"}}}, failure.InvalidArguments, "base64"},
		{"over the byte limit", map[string]any{"name": "report", "files": []any{map[string]any{"path": "big.txt", "content": strings.Repeat("x", 5<<20)}}}, failure.LimitExceeded, "JOTS_MAX_BYTES"},
		{"hostile tarball", map[string]any{"name": "report", "tarball": base64.StdEncoding.EncodeToString(f.build(entry{Name: "l", Typeflag: tar.TypeSymlink, Link: "/etc"}))}, failure.InvalidArguments, "symbolic link"},
		{"password flip without password", map[string]any{"name": "report", "access": "password"}, failure.InvalidArguments, "needs a password"},
		{"unknown jot", map[string]any{"name": "nothing-here", "cors": true}, failure.NotFound, "jots_deploy_jot"},
	}
	for _, b := range badUpdates {
		_, te := f.call(f.alice, jots.ToolUpdate, b.in)
		wantErr("update "+b.name, te, b.code, b.mention)
	}
	if r := f.get("GET", "/j/report/new.txt"); r.status != http.StatusNotFound {
		t.Fatalf("a failed update left new.txt: %d", r.status)
	}
	upd = f.mustCall(f.alice, jots.ToolUpdate, map[string]any{"name": "report", "delete": []string{"extra/a.txt"}, "access": "password", "password": "open sesame"})
	if upd["access"] != "password" || upd["files"] != float64(3) {
		t.Fatalf("flip to password = %v", upd)
	}
	_, te := f.call(f.alice, jots.ToolUpdate, map[string]any{"name": "report", "cors": true})
	wantErr("cors on a password jot", te, failure.InvalidArguments, "public jots")
	upd = f.mustCall(f.alice, jots.ToolUpdate, map[string]any{"name": "report", "access": "public", "cors": true})
	if upd["access"] != "public" || upd["cors"] != true {
		t.Fatalf("flip to public = %v", upd)
	}

	listed := f.mustCall(f.alice, jots.ToolList, map[string]any{})["jots"].([]any)
	if len(listed) != 1 || listed[0].(map[string]any)["url"] != f.base+"/j/report/" || listed[0].(map[string]any)["cors"] != true {
		t.Fatalf("list_jots = %v", listed)
	}
	if none := f.mustCall(f.bob, jots.ToolList, nil)["jots"].([]any); len(none) != 0 {
		t.Fatalf("bob's list_jots = %v", none)
	}
	del := f.mustCall(f.alice, jots.ToolDelete, map[string]any{"name": "report"})
	if del["deleted"] != true {
		t.Fatalf("delete = %v", del)
	}
	if r := f.get("GET", "/j/report/"); r.status != http.StatusNotFound {
		t.Fatalf("deleted jot still served: %d", r.status)
	}
	_, te = f.call(f.alice, jots.ToolDelete, map[string]any{"name": "report"})
	wantErr("delete twice", te, failure.NotFound)
	// The name is free for anyone now.
	f.mustCall(f.bob, jots.ToolDeploy, map[string]any{"name": "report", "access": "public"})
	_, te = f.call(f.alice, "jots_unknown", nil)
	wantErr("unknown tool", te, failure.UnknownTool)
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestService_Claims reproduces the review's name squatting (one user
// claimed 205 names, admin and login among them, without uploading, and
// the claims never lapsed): reserved names are refused, a user's jots and
// bytes are bounded and the errors name the bound, and a claim never
// uploaded to is free again once its upload URL expired.
func TestService_Claims(t *testing.T) {
	clock := storetest.NewClock(time.Now())
	f := newFixture(t, func(o *jots.Options) {
		o.Limits = jots.Limits{UploadTTL: time.Minute, MaxJotsPerUser: 3, MaxBytesPerUser: 150}
		o.Now = clock.Now
	}, store.WithClock(clock.Now))
	deploy := func(u store.User, name string) *failure.Error {
		_, te := f.call(u, jots.ToolDeploy, map[string]any{"name": name, "access": "public"})
		return te
	}
	tests := []struct {
		name, jot  string
		user       store.User
		code, text string // "" when it succeeds
	}{
		{"reserved admin", "admin", f.alice, "INVALID_ARGUMENTS", `"admin" is reserved`},
		{"reserved login", "login", f.alice, "INVALID_ARGUMENTS", "is reserved"},
		{"reserved www", "www", f.bob, "INVALID_ARGUMENTS", "is reserved"},
		{"first", "squat-0", f.alice, "", ""},
		{"second", "squat-1", f.alice, "", ""},
		{"third", "squat-2", f.alice, "", ""},
		{"past the count", "squat-3", f.alice, "LIMIT_EXCEEDED", "the limit of 3 jots per user; the limits are 3 jots (JOTS_MAX_PER_USER)"},
		{"redeploying one's own", "squat-0", f.alice, "", ""},
		{"another user's claim", "squat-1", f.bob, "NAME_TAKEN", "taken by another user"},
	}
	for _, tt := range tests {
		te := deploy(tt.user, tt.jot)
		switch {
		case tt.code == "" && te != nil:
			t.Errorf("%s: deploy %s = %v", tt.name, tt.jot, te)
		case tt.code != "" && (te == nil || string(te.Code) != tt.code || !strings.Contains(te.Message, tt.text)):
			t.Errorf("%s: deploy %s = %v, want %s saying %q", tt.name, tt.jot, te, tt.code, tt.text)
		}
	}
	// The upload URLs expire unused: the names are free for anyone, and
	// alice's quota has room again.
	clock.Advance(2 * time.Minute)
	if te := deploy(f.bob, "squat-1"); te != nil {
		t.Fatalf("bob claiming a lapsed name: %v", te)
	}
	if te := deploy(f.alice, "fresh"); te != nil {
		t.Fatalf("alice after her claims lapsed: %v", te)
	}
	// Bytes across a user's jots.
	f.publish("fresh", nil, entry{Name: "index.html", Body: strings.Repeat("x", 100)})
	status, body := f.put(f.deploy("second", nil), bytes.NewReader(f.build(entry{Name: "index.html", Body: strings.Repeat("y", 60)})))
	if status != 413 || !strings.Contains(fmt.Sprint(body), "LIMIT_EXCEEDED") || !strings.Contains(fmt.Sprint(body), "over the limit of 150 bytes per user") {
		t.Fatalf("upload past the user's bytes: %d %v", status, body)
	}
	_, te := f.call(f.alice, jots.ToolUpdate, map[string]any{"name": "fresh", "files": []any{map[string]any{"path": "more.txt", "content": strings.Repeat("z", 60)}}})
	if te == nil || te.Code != failure.LimitExceeded || !strings.Contains(te.Message, "JOTS_MAX_BYTES_PER_USER") {
		t.Fatalf("update past the user's bytes: %v", te)
	}
}
