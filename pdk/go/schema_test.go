//go:build !wasip1

package pdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type schemaOwner struct {
	Login string `json:"login" jsonschema:"the account name"`
}

type schemaInput struct {
	Owner   string      `json:"owner" jsonschema:"repository owner" pattern:"^[a-z]+$"`
	State   string      `json:"state,omitempty" enum:"open, closed,all" default:"open"`
	PerPage int         `json:"per_page,omitempty" minimum:"1" maximum:"100" default:"30"`
	Labels  []string    `json:"labels,omitempty" enum:"bug,docs"`
	Draft   *bool       `json:"draft,omitempty"`
	Nested  schemaOwner `json:"nested"`
	Ignored string      `json:"-"`
	hidden  string
}

func TestSchemaFor(t *testing.T) {
	_ = schemaInput{}.hidden
	tests := []struct {
		name         string
		typ          reflect.Type
		want         string
		wantDefaults bool
	}{
		{
			name: "tags refine the inferred schema",
			typ:  reflect.TypeFor[schemaInput](),
			want: `{"type":"object","required":["owner","nested"],"properties":{` +
				`"owner":{"type":"string","description":"repository owner","pattern":"^[a-z]+$"},` +
				`"state":{"type":"string","default":"open","enum":["open","closed","all"]},` +
				`"per_page":{"type":"integer","default":30,"minimum":1,"maximum":100},` +
				`"labels":{"type":["null","array"],"items":{"type":"string","enum":["bug","docs"]}},` +
				`"draft":{"type":["null","boolean"]},` +
				`"nested":{"type":"object","required":["login"],"properties":{"login":{"type":"string","description":"the account name"}},"additionalProperties":false}},` +
				`"additionalProperties":false}`,
			wantDefaults: true,
		},
		{
			name: "a pointer to a struct is an object, not a nullable object",
			typ:  reflect.TypeFor[*schemaOwner](),
			want: `{"type":"object","required":["login"],"properties":{"login":{"type":"string","description":"the account name"}},"additionalProperties":false}`,
		},
		{
			name: "a slice stays an array",
			typ:  reflect.TypeFor[[]schemaOwner](),
			want: `{"type":["null","array"],"items":{"type":"object","required":["login"],"properties":{"login":{"type":"string","description":"the account name"}},"additionalProperties":false}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, hasDefaults, err := schemaFor(tt.typ)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.marshal()
			if err != nil {
				t.Fatal(err)
			}
			assertSameJSON(t, got, tt.want)
			if hasDefaults != tt.wantDefaults {
				t.Errorf("hasDefaults = %v, want %v", hasDefaults, tt.wantDefaults)
			}
		})
	}
}

func TestSchemaFor_badTags(t *testing.T) {
	tests := []struct {
		name    string
		typ     reflect.Type
		wantErr string
	}{
		{"enum on a struct", reflect.TypeFor[struct {
			X schemaOwner `json:"x" enum:"a"`
		}](), "take no enum or default tag"},
		{"integer enum that is not a number", reflect.TypeFor[struct {
			X int `json:"x" enum:"one"`
		}](), "enum tag"},
		{"default of the wrong type", reflect.TypeFor[struct {
			X bool `json:"x,omitempty" default:"maybe"`
		}](), "default tag"},
		{"minimum that is not a number", reflect.TypeFor[struct {
			X int `json:"x" minimum:"low"`
		}](), `minimum tag "low" is not a number`},
		{"pattern that does not compile", reflect.TypeFor[struct {
			X string `json:"x" pattern:"("`
		}](), "pattern tag"},
		{"default outside the enum", reflect.TypeFor[struct {
			X string `json:"x,omitempty" enum:"a,b" default:"c"`
		}](), `default tag: field "X": must be one of "a", "b"; got "c"`},
		{"default above the maximum", reflect.TypeFor[struct {
			X int `json:"x,omitempty" maximum:"10" default:"11"`
		}](), "default tag: field \"X\": must be at most 10, got 11"},
		{"unsupported field type", reflect.TypeFor[struct {
			X chan int `json:"x"`
		}](), "unsupported"},
		{"a recursive type", reflect.TypeFor[schemaCycle](), "cycle detected for type pdk.schemaCycle"},
		{"an empty description", reflect.TypeFor[struct {
			X int `json:"x" jsonschema:""`
		}](), "empty jsonschema tag"},
		{"a description that looks like an option", reflect.TypeFor[struct {
			X int `json:"x" jsonschema:"default=3"`
		}](), "must not begin with 'WORD='"},
		{"a map with integer keys", reflect.TypeFor[map[int]string](), "unsupported map key type int"},
		{"an embedded time", reflect.TypeFor[struct{ time.Time }](), `custom schema for embedded struct must have type "object"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := schemaFor(tt.typ)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

type schemaCycle struct {
	Next *schemaCycle `json:"next"`
}

// assertSameJSON compares JSON documents ignoring key order and spacing.
func assertSameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON mismatch\n got: %s\nwant: %s", got, want)
	}
}

type schemaEmbedded struct {
	A string `json:"a"`
	B int    `json:"b,omitempty" jsonschema:"the b"`
}

type schemaHidden struct{ x int }

// schemaAll has a field of every kind a schema is inferred for.
type schemaAll struct {
	schemaEmbedded
	S     string            `json:"s" enum:"x,y" default:"x"`
	I8    int8              `json:"i8,omitempty"`
	U     uint              `json:"u,omitempty"`
	U16   uint16            `json:"u16,omitempty"`
	I32   int32             `json:"i32,omitempty"`
	U32   uint32            `json:"u32,omitempty"`
	F32   float32           `json:"f32,omitempty" minimum:"0.5" maximum:"1e40"`
	F     float64           `json:"f,omitzero"`
	P     *int              `json:"p,omitempty" default:"4"`
	PP    **string          `json:"pp,omitempty"`
	Arr   [3]bool           `json:"arr"`
	Sl    []*schemaEmbedded `json:"sl"`
	M     map[string][]int  `json:"m,omitempty"`
	MA    map[string]any    `json:"ma,omitempty"`
	Any   any               `json:"any,omitempty" jsonschema:"anything"`
	T     time.Time         `json:"t"`
	PT    *time.Time        `json:"pt"`
	R     json.RawMessage   `json:"r,omitempty"`
	Dash  string            `json:"-,"`
	Skip  string            `json:"-"`
	NoTag string
	Pat   string    `json:"pat,omitempty" pattern:"^a+$"`
	Tags  []string  `json:"tags,omitempty" enum:"p,q"`
	PSl   *[]string `json:"psl,omitempty"`
	unexp int
}

// TestSchema_marshal pins the exact bytes of generated schemas: they are
// those github.com/google/jsonschema-go wrote when the PDK used it, so
// manifests did not change when it was dropped.
func TestSchema_marshal(t *testing.T) {
	_ = schemaAll{}.unexp
	_ = schemaHidden{}.x
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"every kind", reflect.TypeFor[schemaAll](), `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer","description":"the b"},"s":{"type":"string","default":"x","enum":["x","y"]},"i8":{"type":"integer","minimum":-128,"maximum":127},"u":{"type":"integer","minimum":0},"u16":{"type":"integer","minimum":0,"maximum":65535},"i32":{"type":"integer","minimum":-2147483648,"maximum":2147483647},"u32":{"type":"integer","minimum":0,"maximum":4294967295},"f32":{"type":"number","minimum":0.5,"maximum":1e+40},"f":{"type":"number"},"p":{"type":["null","integer"],"default":4},"pp":{"type":["null","string"]},"arr":{"type":"array","items":{"type":"boolean"},"minItems":3,"maxItems":3},"sl":{"type":["null","array"],"items":{"type":["null","object"],"properties":{"a":{"type":"string"},"b":{"type":"integer","description":"the b"}},"required":["a"],"additionalProperties":false}},"m":{"type":"object","additionalProperties":{"type":["null","array"],"items":{"type":"integer"}}},"ma":{"type":"object","additionalProperties":true},"any":{"description":"anything"},"t":{"type":"string"},"pt":{"type":["null","string"]},"r":{"type":["null","array"],"items":{"type":"integer","minimum":0,"maximum":255}},"-":{"type":"string"},"NoTag":{"type":"string"},"pat":{"type":"string","pattern":"^a+$"},"tags":{"type":["null","array"],"items":{"type":"string","enum":["p","q"]}},"psl":{"type":["null","array"],"items":{"type":"string"}}},"required":["a","s","arr","sl","t","pt","-","NoTag"],"additionalProperties":false}`},
		{"only unexported fields", reflect.TypeFor[schemaHidden](), `{"type":"object","properties":{},"additionalProperties":false}`},
		{"a map of any", reflect.TypeFor[map[string]any](), `{"type":"object","additionalProperties":true}`},
		{"an any", reflect.TypeFor[any](), `true`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, err := schemaFor(tt.typ)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.marshal()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("schema\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}
