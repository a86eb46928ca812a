//go:build !wasip1

package pdk

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
)

type planInner struct {
	Name string `json:"name" pattern:"^[a-z]*$"`
	N    int    `json:"n,omitempty" minimum:"-5" maximum:"500" default:"7"`
}

type planEmbedded struct {
	E string `json:"e,omitempty" enum:"a,b" default:"a"`
}

type planLabel string

// planInput has a field of every kind the fast path decodes.
type planInput struct {
	planEmbedded
	S     string               `json:"s,omitempty"`
	B     bool                 `json:"b,omitempty"`
	BE    bool                 `json:"be,omitempty" enum:"true"`
	I8    int8                 `json:"i8,omitempty"`
	I     int                  `json:"i,omitempty" enum:"1,2,30"`
	U16   uint16               `json:"u16,omitempty"`
	U     uint64               `json:"u,omitempty"`
	F32   float32              `json:"f32,omitempty"`
	F     float64              `json:"f,omitempty" minimum:"-1.5" maximum:"1e10"`
	P     *string              `json:"p,omitempty"`
	PB    *bool                `json:"pb,omitempty" default:"true"`
	PI    *int                 `json:"pi,omitempty" enum:"3,4"`
	Arr   [2]int               `json:"arr,omitempty"`
	Tags  []string             `json:"tags,omitempty" enum:"x,y,z"`
	Label planLabel            `json:"label,omitempty"`
	List  []planInner          `json:"list,omitempty"`
	PList []*planInner         `json:"plist,omitempty"`
	Map   map[string]planInner `json:"map,omitempty"`
	MapS  map[string]string    `json:"maps,omitempty"`
	Any   any                  `json:"any,omitempty"`
	Inner *planInner           `json:"inner,omitempty"`
	Req   string               `json:"req"`
}

var planTool = Tool("test_plan", "Decodes every kind.", func(_ Context, in planInput) (planInput, error) { return in, nil })

// decodeBoth decodes input with the fast path and the reference path.
func decodeBoth[T any](t testing.TB, tool *ToolDef, input []byte) (fast, ref T, fastOK bool, refErr error) {
	t.Helper()
	plans := tool.buildPlans()
	if plans.err != nil || plans.decoder == nil {
		t.Fatalf("no fast plan for %s: %v", tool.slug, plans.err)
	}
	fastOK = decodeFast(plans.decoder, append([]byte(nil), input...), unsafe.Pointer(&fast))
	refErr = tool.decodeReference(input, &ref)
	return fast, ref, fastOK, refErr
}

func TestDecodeFast_agreesWithReference(t *testing.T) {
	tests := []string{
		`{"req":""}`,
		` { "req" : "r" , "s" : "plain" } `,
		"{\"req\":\"r\",\n\t\"s\":\"tab\\tquote\\\"slash\\/back\\\\nl\\nbs\\bff\\fcr\\r\"}",
		`{"req":"r","s":"\u00e9\u4e16 é 世界 \ud7ff\u0000"}`,
		`{"req":"a very long string that spans several eight byte words","s":"ünïcödé spanning words","label":"lbl"}`,
		`{"req":"r","b":true,"be":true,"i8":-128,"i":30,"u16":65535,"u":18446744073709551,"f32":1.5e3,"f":-1.5}`,
		`{"req":"r","i8":127,"f":1e10,"f32":-0,"u":0,"i":1}`,
		`{"req":"r","p":"x","pb":false,"pi":4}`,
		`{"req":"r","p":null,"pb":null,"inner":null,"tags":null,"list":null,"any":null}`,
		`{"req":"r","arr":[1,-2],"tags":["x","z","x"]}`,
		`{"req":"r","tags":[],"list":[],"plist":[],"map":{},"maps":{}}`,
		`{"req":"r","list":[{"name":"a"},{"name":"b","n":-5}],"plist":[{"name":"c"},null]}`,
		`{"req":"r","list":[` + strings.Repeat(`{"name":"x","n":3},`, 20) + `{"name":"last"}],"plist":[` + strings.Repeat(`{"name":"p"},null,`, 9) + `{"name":"q"}]}`,
		`{"req":"r","tags":[` + strings.Repeat(`"x","y",`, 20) + `"z"],"any":[` + strings.Repeat(`1,"s",`, 20) + `{}]}`,
		`{"req":"r","map":{"k":{"name":"m"},"j":{"name":"n","n":500}},"maps":{"a":"b","a":"c","":"empty"}}`,
		`{"req":"r","inner":{"name":"i"},"e":"b"}`,
		`{"req":"r","any":{"a":[1,2.5,-3e2,"s",true,false,null,{}],"b":{"c":[]},"a2":"dup","a2":"last"}}`,
		`{"req":"r","any":"text"}`,
		`{"req":"r","any":12345678901234567890}`,
		`{"req":"r","list":[{"name":"a","n":0}],"tags":["y"],"s":""}`,
	}
	for _, input := range tests {
		t.Run(input, func(t *testing.T) {
			fast, ref, ok, refErr := decodeBoth[planInput](t, planTool, []byte(input))
			if refErr != nil {
				t.Fatalf("reference path refused the input: %v", refErr)
			}
			if !ok {
				t.Fatal("the fast path gave up on an input it should decode")
			}
			if !reflect.DeepEqual(fast, ref) {
				t.Errorf("fast path decoded\n%+v\nreference path decoded\n%+v", fast, ref)
			}
		})
	}
}

func TestDecodeFast_givesUpOnWhatTheReferenceDecides(t *testing.T) {
	tests := []string{
		``, // handled by the fast path as {} but misses "req"
		`null`, `[]`, `"s"`, `{"req":"r"} x`, `{"req":"r"`, `{"req":"r",}`, `{"req" "r"}`, `{req:"r"}`,
		`{"req":"r","s":"bad \x01 control"}`, `{"req":"r","s":"bad \xff utf-8"}`, `{"req":"r","s":"lone \ud800 surrogate"}`,
		`{"req":"r","s":"pair \ud83d\ude00"}`, `{"req":"r","s":"\q"}`, `{"req":"r","s":"\u12"}`,
		`{"req":"r","req":"again"}`, `{"req":"r","bogus":1}`, `{"Req":"r"}`,
		`{"req":"r","i":1.0}`, `{"req":"r","i":1e0}`, `{"req":"r","i":3}`, `{"req":"r","i":01}`, `{"req":"r","i":-}`,
		`{"req":"r","i8":128}`, `{"req":"r","i8":-129}`, `{"req":"r","u16":65536}`, `{"req":"r","u":-1}`,
		`{"req":"r","u":12345678901234567890}`, `{"req":"r","f":-2}`, `{"req":"r","f":1e400}`, `{"req":"r","f32":1e39}`,
		`{"req":"r","f":.5}`, `{"req":"r","f":1.}`, `{"req":"r","f":1e}`, `{"req":"r","be":false}`, `{"req":"r","b":tru}`,
		`{"req":"r","pi":null}`, `{"req":"r","pi":5}`, `{"req":"r","s":null}`, `{"req":"r","map":null}`, `{"req":"r","arr":null}`,
		`{"req":"r","arr":[1]}`, `{"req":"r","arr":[1,2,3]}`, `{"req":"r","tags":["w"]}`, `{"req":"r","tags":[1]}`,
		`{"req":"r","list":[{"name":"A"}]}`, `{"req":"r","list":[{}]}`, `{"req":"r","list":[null]}`, `{"req":"r","list":[{"name":"a","n":501}]}`,
		`{"req":"r","e":"c"}`, `{"req":"r","inner":{"name":"a","x":1}}`, `{"req":"r","any":1e400}`, `{"req":"r","any":[1,]}`,
		`{"req":"r","s":"x"}` + "\v", "\u00a0" + `{"req":"r"}`,
	}
	for _, input := range tests {
		t.Run(input, func(t *testing.T) {
			fast, ref, ok, refErr := decodeBoth[planInput](t, planTool, []byte(input))
			switch {
			case ok && refErr != nil:
				t.Fatalf("the fast path accepted what the reference refuses: %v", refErr)
			case ok && !reflect.DeepEqual(fast, ref):
				t.Fatalf("fast path decoded %+v, reference %+v", fast, ref)
			case ok && input != ``:
				t.Errorf("the fast path decoded an input it should leave to the reference path")
			}
		})
	}
}

type (
	withTime      struct{ T time.Time }
	withRaw       struct{ R json.RawMessage }
	withBytes     struct{ B []byte }
	withNumber    struct{ N json.Number }
	withStringOpt struct {
		N int `json:"n,string"`
	}
	withStringer   struct{ S interface{ String() string } }
	withKeyMap     struct{ M map[planKey]string }
	embeddedPtr    struct{ *planInner }
	taggedEmbedded struct {
		planInner `json:"inner"`
	}
	dupA struct{ X int }
	dupB struct {
		Y int `json:"X"`
	}
	duplicateName struct {
		dupA
		dupB
	}
	boundedAny struct {
		A any `json:"a" minimum:"1"`
	}
)

// planKey is a map key that encoding/json writes through MarshalText.
type planKey int

func (k planKey) MarshalText() ([]byte, error) { return []byte{'k', byte('0' + k%10)}, nil }

func TestCompileDecoder_leavesTypesToTheReferencePath(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
	}{
		{"time.Time", reflect.TypeFor[withTime]()},
		{"json.RawMessage", reflect.TypeFor[withRaw]()},
		{"[]byte", reflect.TypeFor[withBytes]()},
		{"json.Number", reflect.TypeFor[withNumber]()},
		{",string option", reflect.TypeFor[withStringOpt]()},
		{"interface with methods", reflect.TypeFor[withStringer]()},
		{"map with text-marshaled keys", reflect.TypeFor[withKeyMap]()},
		{"embedded pointer", reflect.TypeFor[embeddedPtr]()},
		{"tagged embedded struct", reflect.TypeFor[taggedEmbedded]()},
		{"two fields named X", reflect.TypeFor[duplicateName]()},
		{"bounds on an any", reflect.TypeFor[boundedAny]()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, err := schemaFor(tt.typ)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := compileDecoder(tt.typ, s); ok {
				t.Errorf("compileDecoder took %s", tt.typ)
			}
		})
	}
	t.Run("a tool of such a type still works", func(t *testing.T) {
		tool := Tool("test_time", "Time.", func(_ Context, in withTime) (withTime, error) { return in, nil })
		status, out := (&TestHost{}).Call(tool, []byte(`{"T":"2024-01-31T10:00:00Z"}`))
		if status != statusOK {
			t.Fatalf("status %d: %s", status, out)
		}
		assertSameJSON(t, out, `{"T":"2024-01-31T10:00:00Z"}`)
	})
}

// FuzzDecodeFast checks that the fast path only ever takes inputs the
// reference path accepts, and decodes them to the same value.
func FuzzDecodeFast(f *testing.F) {
	for _, seed := range []string{
		`{"req":"r","s":"x\n","i":2,"list":[{"name":"a"}],"map":{"k":{"name":"b","n":3}},"any":[1,{"a":null}]}`,
		`{"req":"r","p":"\u00e9","pb":false,"arr":[1,2],"tags":["x"],"f":0.5,"f32":2,"u16":7,"i8":-1,"e":"b"}`,
		`{"inner":{"owner":"a","labels":["x"]},"list":[{"owner":"b","per_page":100}],"map":{"m":{"owner":"c","state":"closed"}},"flag":false,"big":-5}`,
		`{"tags":["a","b"],"score":0.75,"small":-3,"extra":{"k":1},"any":{"x":[true]},"nested":{"tags":[]},"level":3}`,
	} {
		f.Add([]byte(seed))
	}
	check := func(t *testing.T, input []byte, fastOK bool, refErr error, fast, ref any) {
		if !fastOK {
			return
		}
		if refErr != nil {
			t.Fatalf("input %q: fast path accepted, reference refused: %v", input, refErr)
		}
		if !reflect.DeepEqual(fast, ref) {
			t.Fatalf("input %q: fast %+v, reference %+v", input, fast, ref)
		}
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		a, b, ok, err := decodeBoth[planInput](t, planTool, input)
		check(t, input, ok, err, a, b)
		c, d, ok, err := decodeBoth[nestedInput](t, nestedTool, input)
		check(t, input, ok, err, c, d)
		e, g, ok, err := decodeBoth[validateInput](t, validateTool, input)
		check(t, input, ok, err, e, g)
	})
}

var validateTool = Tool("test_validate", "Validates.", func(_ Context, in validateInput) (validateInput, error) { return in, nil })

type lenientOwner struct {
	Login string `json:"login"`
}

type lenientRepo struct {
	ID        int64            `json:"id"`
	Name      string           `json:"name"`
	Owner     lenientOwner     `json:"owner"`
	Private   bool             `json:"private"`
	Topics    []string         `json:"topics"`
	Stars     int              `json:"stargazers_count"`
	Score     float64          `json:"score"`
	License   *lenientOwner    `json:"license"`
	Pair      [2]int           `json:"pair"`
	Extra     map[string]any   `json:"extra"`
	Any       any              `json:"any"`
	Children  []lenientRepo    `json:"children"`
	Labels    map[string]int32 `json:"labels"`
	Untagged  string
	unexposed string
}

// lenientCase decodes input into a new T with decodeJSON and json.Unmarshal.
func lenientCase[T any](t testing.TB, input []byte) (got, want T, gotErr, wantErr error) {
	t.Helper()
	gotErr = decodeJSON(input, &got)
	wantErr = json.Unmarshal(input, &want)
	return got, want, gotErr, wantErr
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}

func TestDecodeJSON_matchesUnmarshal(t *testing.T) {
	_ = lenientRepo{}.unexposed
	tests := []struct {
		name  string
		input string
		fast  bool // the plan decodes it itself
	}{
		{"a GitHub-like repository with unknown keys", `{"id":1296269,"node_id":"MDEwOlJlcG9zaXRvcnkxMjk2MjY5","name":"Hello-World",` +
			`"full_name":"octocat/Hello-World","owner":{"login":"octocat","id":1,"site_admin":false,"urls":{"a":[1,{"b":null}]}},` +
			`"private":false,"topics":["octocat","api"],"stargazers_count":80,"score":1.5e2,"license":null,"pair":[1,2,3,4],` +
			`"extra":{"k":[true,"v"]},"any":"x","children":[{"name":"c","escaped":"\u00e9\n\"","children":[]}],"labels":{"bug":3},` +
			`"Untagged":"u","unexposed":"skipped","created_at":"2011-01-26T19:01:12Z","permissions":{"admin":false}}`, true},
		{"nulls everywhere", `{"id":null,"name":null,"owner":null,"topics":null,"license":null,"pair":null,"extra":null,"any":null,"children":null}`, true},
		{"empty containers", `{"topics":[],"children":[],"extra":{},"labels":{},"pair":[]}`, true},
		{"long lists", `{"children":[` + strings.Repeat(`{"id":7,"name":"child","owner":{"login":"o"},"topics":["a","b","c","d","e"]},`, 30) +
			`{"id":8}],"topics":[` + strings.Repeat(`"t",`, 40) + `"u"]}`, true},
		{"space around everything", " {\n \"name\" : \"spaced\" ,\t\"id\": -7 } \n", true},
		{"a key in another case", `{"Name":"folded"}`, false},
		{"a key that folds by Unicode rules", `{"ſcore":1}`, false},
		{"a repeated key", `{"name":"a","name":"b"}`, false},
		{"a number for a string", `{"name":5,"id":2}`, false},
		{"a float for an integer", `{"id":1.5}`, false},
		{"an integer too large", `{"labels":{"x":3000000000}}`, false},
		{"a string for a struct", `{"owner":"octocat"}`, false},
		{"invalid JSON in a skipped value", `{"unknown":{"a":tru}}`, false},
		{"invalid escape in a skipped string", `{"unknown":"\x"}`, false},
		{"trailing data", `{"name":"a"} {}`, false},
		{"not an object", `[1,2]`, false},
		{"empty input", ``, false},
		{"invalid UTF-8", `{"name":"\xff"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want, gotErr, wantErr := lenientCase[lenientRepo](t, []byte(tt.input))
			if !sameError(gotErr, wantErr) {
				t.Fatalf("decodeJSON error %v, json.Unmarshal error %v", gotErr, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decodeJSON\n%+v\njson.Unmarshal\n%+v", got, want)
			}
			var direct lenientRepo
			if ok := decodeLenient(lenientPlan(reflect.TypeFor[lenientRepo]()), []byte(tt.input), unsafe.Pointer(&direct)); ok != tt.fast {
				t.Errorf("the plan decoded it itself: %v, want %v", ok, tt.fast)
			}
		})
	}
	t.Run("a value that is not zero merges as json.Unmarshal does", func(t *testing.T) {
		got := lenientRepo{Name: "kept", Topics: []string{"old", "older"}, Labels: map[string]int32{"a": 1}}
		want := got
		want.Topics = slices.Clone(want.Topics)
		want.Labels = map[string]int32{"a": 1}
		input := []byte(`{"id":3,"topics":["new"],"labels":{"b":2}}`)
		if err := decodeJSON(input, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(input, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("decodeJSON %+v, json.Unmarshal %+v", got, want)
		}
	})
	t.Run("other targets", func(t *testing.T) {
		input := []byte(`[{"name":"a"},{"name":"b","owner":{"login":"o"}}]`)
		got, want, gotErr, wantErr := lenientCase[[]*lenientRepo](t, input)
		if !sameError(gotErr, wantErr) || !reflect.DeepEqual(got, want) {
			t.Errorf("decodeJSON %v %v, json.Unmarshal %v %v", got, gotErr, want, wantErr)
		}
		var nonPointer any = lenientRepo{}
		if err := decodeJSON(input, nonPointer); !sameError(err, json.Unmarshal(input, nonPointer)) {
			t.Errorf("a non-pointer target: %v", err)
		}
	})
}

// FuzzDecodeLenient checks decodeJSON against json.Unmarshal.
func FuzzDecodeLenient(f *testing.F) {
	for _, seed := range []string{
		`{"id":1,"name":"n","owner":{"login":"o","x":[1,{"y":null}]},"topics":["a"],"pair":[1,2,3],"children":[{"id":2}],"labels":{"k":1},"any":{"z":1.5}}`,
		`{"ID":1,"unknown":"\u00e9\\\"","score":-0.5e-3,"license":{"login":"l"},"extra":{}}`,
		`[{"id":1},null]`,
		`[{"id":1},{"id":2},{"id":3},{"id":4},{"id":5},{"id":6},{"id":7},{"id":8},{"id":9}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		got, want, gotErr, wantErr := lenientCase[lenientRepo](t, input)
		if !sameError(gotErr, wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("input %q: decodeJSON %+v (%v), json.Unmarshal %+v (%v)", input, got, gotErr, want, wantErr)
		}
		list, wantList, gotErr, wantErr := lenientCase[[]lenientRepo](t, input)
		if !sameError(gotErr, wantErr) || !reflect.DeepEqual(list, wantList) {
			t.Fatalf("input %q: decodeJSON %+v (%v), json.Unmarshal %+v (%v)", input, list, gotErr, wantList, wantErr)
		}
		generic, wantGeneric, gotErr, wantErr := lenientCase[any](t, input)
		if !sameError(gotErr, wantErr) || !reflect.DeepEqual(generic, wantGeneric) {
			t.Fatalf("input %q: decodeJSON %+v (%v), json.Unmarshal %+v (%v)", input, generic, gotErr, wantGeneric, wantErr)
		}
	})
}
