package slacktest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/toolcall"
)

// probeEntry is the JSON probe module built from the kit's tests folder.
const probeEntry = "tests/jsonprobe/index.ts"

type probe struct {
	plugin *runtime.Plugin
	logs   *plugintest.Logs
}

func newProbe(t testing.TB) *probe {
	t.Helper()
	p := &probe{logs: &plugintest.Logs{}}
	p.plugin = plugintest.Load(t, buildAS(t, probeEntry), plugintest.HostConfig{CacheDir: cacheDir, Logger: slog.New(p.logs)})
	return p
}

type probeResult struct {
	OK     bool   `json:"ok"`
	JSON   string `json:"json"`
	Error  string `json:"error"`
	Offset int    `json:"offset"`
}

func (p *probe) roundtrip(t testing.TB, data []byte, maxDepth int) probeResult {
	t.Helper()
	in := map[string]any{"b64": base64.StdEncoding.EncodeToString(data)}
	if maxDepth > 0 {
		in["max_depth"] = maxDepth
	}
	raw, _ := json.Marshal(in)
	out, err := p.plugin.Call(context.Background(), toolcall.Call{Tool: "asjson_probe_roundtrip", UserID: "u1", Input: raw})
	if err != nil {
		t.Fatalf("roundtrip(%q): %v", data, err)
	}
	var r probeResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("roundtrip output %s: %v", out, err)
	}
	return r
}

// depthOf is the nesting depth of JSON text (0 for a scalar).
func depthOf(data []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range data {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == '[' || c == '{'):
			depth++
			deepest = max(deepest, depth)
		case !inString && (c == ']' || c == '}'):
			depth--
		}
	}
	return deepest
}

// decodeNumbers decodes JSON keeping numbers as text.
func decodeNumbers(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// checkAgainstGo asserts that the kit accepts exactly what encoding/json
// accepts (within the depth limit) and writes back the same value as valid
// UTF-8 JSON.
func checkAgainstGo(t *testing.T, p *probe, data []byte) {
	t.Helper()
	r := p.roundtrip(t, data, 0)
	valid := json.Valid(data)
	if valid && depthOf(data) > 128 {
		if r.OK || !strings.Contains(r.Error, "nesting deeper than 128") {
			t.Errorf("parse(%q) = %+v, want the depth limit", data, r)
		}
		return
	}
	if r.OK != valid {
		t.Fatalf("parse(%q): kit ok=%v (%s at %d), encoding/json valid=%v", data, r.OK, r.Error, r.Offset, valid)
	}
	if !valid {
		if r.Offset < 0 || r.Offset > len(data) {
			t.Errorf("parse(%q) error offset %d outside the input", data, r.Offset)
		}
		return
	}
	if !utf8.ValidString(r.JSON) || !json.Valid([]byte(r.JSON)) {
		t.Fatalf("write(parse(%q)) = %q: not valid UTF-8 JSON", data, r.JSON)
	}
	want, err := decodeNumbers(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeNumbers([]byte(r.JSON))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("write(parse(%q)) = %s, want the value %#v", data, r.JSON, want)
	}
}

var probeSeeds = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `-0.0`, `1e400`, `-1.5E-7`, `12345678901234567890`,
	`"plain"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00\ud800"`, `"\ud83d\u0041"`,
	`"tab\there"`, `"\"\\\/\b\f\n\r\t"`, "\"\xff\xfe\"", "\"\xed\xa0\x80\"", "\"\xc0\xaf\"", "\"\xf4\x90\x80\x80\"",
	"\"\xe2\x82\"", "\"\U0001F600\"", `{"a":1,"a":2}`, `{"k":{"k":{"k":[1,[2,[3]]]}}}`, ` [ 1 , 2 ] `,
	`01`, `1.`, `.5`, `-`, `+1`, `1e`, `1e+`, `0x10`, `NaN`, `Infinity`, `tru`, `nul`, `[1,]`, `{"a":1,}`,
	`{"a"}`, `{a:1}`, `[1 2]`, `"unterminated`, `"bad \x escape"`, `"\u12"`, `"\u12G4"`, "\"ctl\x01\"",
	`{} {}`, `[]]`, ``, ` `, "\x00", `"\`, `[` + strings.Repeat(`[`, 200) + strings.Repeat(`]`, 201),
	strings.Repeat(`[`, 128) + strings.Repeat(`]`, 128), strings.Repeat(`[`, 129) + strings.Repeat(`]`, 129),
	strings.Repeat(`{"a":`, 129) + `1` + strings.Repeat(`}`, 129),
	// Long strings, which the kit decodes on first use.
	`["a long string without escapes, decoded late", "and one with an escape \" in it, decoded now"]`,
	"{\"long key with bad utf-8 \xff\xc0 and more\":\"long value with bad utf-8 \xed\xa0\x80 \xf0\x9f\x98\x80 end\"}",
	`"a long string that is never closed because the input ends`,
	"\"a long string with a raw control character \x07 in the middle\"",
}

func TestJSON_MatchesEncodingJSON(t *testing.T) {
	p := newProbe(t)
	for _, s := range probeSeeds {
		checkAgainstGo(t, p, []byte(s))
	}
}

func TestJSON_DepthLimit(t *testing.T) {
	p := newProbe(t)
	tests := []struct {
		depth, limit int
		ok           bool
	}{
		{3, 3, true}, {4, 3, false}, {1, 1, true}, {2, 1, false}, {500, 128, false},
	}
	for _, tt := range tests {
		data := strings.Repeat("[", tt.depth) + strings.Repeat("]", tt.depth)
		r := p.roundtrip(t, []byte(data), tt.limit)
		if r.OK != tt.ok {
			t.Errorf("depth %d with limit %d: %+v, want ok=%v", tt.depth, tt.limit, r, tt.ok)
		}
	}
}

func TestJSON_WriterEscapes(t *testing.T) {
	p := newProbe(t)
	tests := []struct {
		in, want string
	}{
		{`"a\"b\\c\/d"`, `"a\"b\\c/d"`},
		{`"\u0001\u001f\n"`, `"\u0001\u001f\n"`},
		{`"\ud83d\ude00"`, "\"\U0001F600\""},
		{`"\ud800x"`, `"\ud800x"`},
		{`"\u00e9"`, "\"\u00e9\""},
		{"\"\xff\"", "\"\uFFFD\""},
	}
	for _, tt := range tests {
		r := p.roundtrip(t, []byte(tt.in), 0)
		if !r.OK || r.JSON != tt.want {
			t.Errorf("write(parse(%s)) = %q (%+v), want %q", tt.in, r.JSON, r, tt.want)
		}
	}
}

func TestJSON_AbortTraps(t *testing.T) {
	p := newProbe(t)
	_, err := p.plugin.Call(context.Background(), toolcall.Call{Tool: "asjson_probe_abort", UserID: "u1", Input: []byte(`{"index":9}`)})
	var te *failure.Error
	if !errors.As(err, &te) || te.Code != "TRAP" {
		t.Fatalf("abort call = %v, want TRAP", err)
	}
	errorLogs := p.logs.Messages(slog.LevelError)
	if !slices.ContainsFunc(errorLogs, func(m string) bool { return strings.HasPrefix(m, "abort: Index out of range at ~lib/array.ts") }) {
		t.Errorf("error logs = %q, want the abort message", errorLogs)
	}
	out, err := p.plugin.Call(context.Background(), toolcall.Call{Tool: "asjson_probe_abort", UserID: "u1", Input: []byte(`{"index":0}`)})
	if err != nil || string(out) != `{"value":0}` {
		t.Errorf("call after the trap = %s, %v; want a fresh instance answering", out, err)
	}
}

// FuzzJSON compares the kit's reader and writer with encoding/json on
// arbitrary bytes.
func FuzzJSON(f *testing.F) {
	for _, s := range probeSeeds {
		f.Add([]byte(s))
	}
	p := newProbe(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		checkAgainstGo(t, p, data)
	})
}

func TestManifest_InvalidDeclarationRefused(t *testing.T) {
	_, err := plugintest.NewHost(t, plugintest.HostConfig{CacheDir: cacheDir}).Load(context.Background(), buildAS(t, "tests/badmanifest/index.ts"))
	if err == nil || !strings.Contains(err.Error(), "INVALID_MANIFEST") || !strings.Contains(err.Error(), "tool other_noop: slug must start with asbad_") {
		t.Errorf("load = %v, want INVALID_MANIFEST naming other_noop", err)
	}
}

// TestJSON_LargeInputs feeds shapes that make naive parsers quadratic or
// slow: an object with tens of thousands of members, very long numbers and
// a long string full of escapes. Each must parse and round-trip within the
// call's deadline.
func TestJSON_LargeInputs(t *testing.T) {
	p := newProbe(t)
	var keys strings.Builder
	keys.WriteString("{")
	for i := 0; i < 40000; i++ {
		if i > 0 {
			keys.WriteString(",")
		}
		fmt.Fprintf(&keys, `"k%d":%d`, i, i)
	}
	keys.WriteString(`,"k7":"last wins"}`)
	inputs := map[string]string{
		"40000 members":       keys.String(),
		"200000-digit number": "1" + strings.Repeat("0", 200000) + ".5e-3",
		"long fraction":       "0." + strings.Repeat("1", 300000),
		"escaped string":      `"` + strings.Repeat(`\u00e9\ud83d\ude00\n`, 20000) + `"`,
	}
	for name, in := range inputs {
		start := time.Now()
		r := p.roundtrip(t, []byte(in), 0)
		if !r.OK {
			t.Errorf("%s: %+v", name, r)
			continue
		}
		want, _ := decodeNumbers([]byte(in))
		got, err := decodeNumbers([]byte(r.JSON))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the round trip changed the value (%v)", name, err)
		}
		t.Logf("%s: %v", name, time.Since(start))
	}
}
