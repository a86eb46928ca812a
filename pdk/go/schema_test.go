//go:build !wasip1

package pdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
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
			got, err := json.Marshal(s)
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
