package argcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const repoSchema = `{
	"type": "object",
	"properties": {
		"owner": {"type": "string", "minLength": 1, "maxLength": 39, "pattern": "^[A-Za-z0-9-]+$"},
		"repo": {"type": "string"},
		"per_page": {"type": "integer", "minimum": 1, "maximum": 100},
		"state": {"enum": ["open", "closed", "all"]},
		"labels": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
		"kind": {"const": "issue"},
		"ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
		"nested": {"type": "object", "properties": {"deep": {"type": "boolean"}}, "required": ["deep"], "additionalProperties": false},
		"odd key": {"type": "string"},
		"either": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
	},
	"required": ["owner", "repo"],
	"additionalProperties": false
}`

func TestSchema_Check(t *testing.T) {
	s, err := Compile(json.RawMessage(repoSchema))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args string
		want []Problem
	}{
		{"valid", `{"owner":"octo","repo":"hello","per_page":30,"state":"open","labels":["a"],"kind":"issue","ratio":0.5,"nested":{"deep":true},"either":3}`, nil},
		{"integral float is an integer", `{"owner":"o","repo":"r","per_page":30.0}`, nil},
		{"missing required", `{}`, []Problem{
			{"$.owner", "is required"},
			{"$.repo", "is required"},
		}},
		{"null means empty object", `null`, []Problem{
			{"$.owner", "is required"},
			{"$.repo", "is required"},
		}},
		{"not an object", `[1,2]`, []Problem{{"$", "arguments must be a JSON object, got array"}}},
		{"not JSON", `{"owner":`, []Problem{{"$", "arguments are not valid JSON: unexpected end of JSON input"}}},
		{"many problems at once", `{"owner":"bad owner!","repo":7,"per_page":0,"state":"merged","labels":["a",2,"c"],"kind":"pr","ratio":1,"nested":{"extra":1},"color":"red"}`, []Problem{
			{"$.color", "is not a known property (known: either, kind, labels, nested, odd key, owner, per_page, ratio, repo, state)"},
			{"$.kind", `must be "issue", got "pr"`},
			{"$.labels", "must have at most 2 items, got 3"},
			{"$.labels[1]", "must be string, got integer"},
			{"$.nested.deep", "is required"},
			{"$.nested.extra", "is not a known property (known: deep)"},
			{"$.owner", "must match the pattern ^[A-Za-z0-9-]+$"},
			{"$.per_page", "must be at least 1, got 0"},
			{"$.ratio", "must be less than 1, got 1"},
			{"$.repo", "must be string, got integer"},
			{"$.state", `must be one of ["open","closed","all"], got "merged"`},
		}},
		{"fraction for integer", `{"owner":"o","repo":"r","per_page":2.5}`, []Problem{{"$.per_page", "must be integer, got number"}}},
		{"odd property name", `{"owner":"o","repo":"r","odd key":1}`, []Problem{{`$["odd key"]`, "must be string, got integer"}}},
		{"length counts code points", `{"owner":"","repo":"r"}`, []Problem{
			{"$.owner", "must be at least 1 characters long, got 0"},
			{"$.owner", "must match the pattern ^[A-Za-z0-9-]+$"},
		}},
		{"anyOf left to the full validator", `{"owner":"o","repo":"r","either":true}`, []Problem{{"$.either", `anyOf: did not validate against any of the allowed alternatives (type: true has type "boolean", want "string"; type: true has type "boolean", want "integer")`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Check(json.RawMessage(tt.args))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Check(%s) =\n%s\nwant\n%s", tt.args, dump(got), dump(tt.want))
			}
		})
	}
}

func dump(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "  %s: %s\n", p.Path, p.Message)
	}
	return b.String()
}

func TestSchema_CheckKeywords(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		args   string
		want   []Problem
	}{
		{"allOf is checked in place", `{"type":"object","allOf":[{"required":["a"]},{"properties":{"b":{"type":"string"}}}]}`, `{"b":1}`,
			[]Problem{{"$.a", "is required"}, {"$.b", "must be string, got integer"}}},
		{"false property schema", `{"type":"object","properties":{"x":false}}`, `{"x":1}`,
			[]Problem{{"$.x", "no value is allowed here"}}},
		{"additionalProperties schema", `{"type":"object","additionalProperties":{"type":"integer"}}`, `{"a":1,"b":"2"}`,
			[]Problem{{"$.b", "must be integer, got string"}}},
		{"patternProperties are evaluated", `{"type":"object","patternProperties":{"^x_":{"type":"integer"}},"additionalProperties":false}`, `{"x_a":"s","y":1}`,
			[]Problem{{"$.x_a", "must be integer, got string"}, {"$.y", "is not a known property"}}},
		{"prefixItems then items", `{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"}}}}`, `{"t":[1,"a"]}`,
			[]Problem{{"$.t[0]", "must be string, got integer"}, {"$.t[1]", "must be integer, got string"}}},
		{"draft-07 items array", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"t":{"type":"array","items":[{"type":"string"}],"additionalItems":{"type":"integer"}}}}`, `{"t":[1,"a"]}`,
			[]Problem{{"$.t[0]", "must be string, got integer"}, {"$.t[1]", "must be integer, got string"}}},
		{"type list", `{"type":"object","properties":{"v":{"type":["string","null"]}}}`, `{"v":1}`,
			[]Problem{{"$.v", "must be string or null, got integer"}}},
		{"min and max properties", `{"type":"object","minProperties":2,"properties":{"o":{"type":"object","maxProperties":1}}}`, `{"o":{"a":1,"b":2}}`,
			[]Problem{{"$", "must have at least 2 properties, got 1"}, {"$.o", "must have at most 1 properties, got 2"}}},
		{"min items", `{"type":"object","properties":{"l":{"type":"array","minItems":1}}}`, `{"l":[]}`,
			[]Problem{{"$.l", "must have at least 1 items, got 0"}}},
		{"ref is left to the full validator", `{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"n":{"$ref":"#/$defs/n"}}}`, `{"n":"x"}`,
			[]Problem{{"$.n", `type: x has type "string", want "integer"`}}},
		{"valid against ref", `{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"n":{"$ref":"#/$defs/n"}}}`, `{"n":4}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile(json.RawMessage(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			got := s.Check(json.RawMessage(tt.args))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Check(%s) =\n%s\nwant\n%s", tt.args, dump(got), dump(tt.want))
			}
		})
	}
}

func TestSchema_CheckCapsProblems(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("{")
	for i := range 50 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"p%02d":1`, i)
	}
	b.WriteString("}")
	got := s.Check(json.RawMessage(b.String()))
	if len(got) != MaxProblems {
		t.Fatalf("%d problems, want %d", len(got), MaxProblems)
	}
	if last := got[len(got)-1]; last.Message != "31 more problems not shown" {
		t.Errorf("last problem = %+v", last)
	}
	if got[0].Path != "$.p00" {
		t.Errorf("first problem = %+v, want $.p00 in name order", got[0])
	}
}

func TestCompile_Errors(t *testing.T) {
	tests := []struct {
		name   string
		schema string
	}{
		{"not JSON", `{`},
		{"bad pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`},
		{"bad ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Compile(json.RawMessage(tt.schema)); !errors.Is(err, ErrSchema) {
				t.Errorf("Compile = %v, want ErrSchema", err)
			}
		})
	}
	if _, err := Compile(nil); err != nil {
		t.Errorf("Compile(nil) = %v, want the any-object schema", err)
	}
}

func TestSchema_CheckDepth(t *testing.T) {
	// A deeply nested schema and value must not recurse without bound.
	schema := `{"type":"object"}`
	args := `1`
	for range 200 {
		schema = `{"type":"object","properties":{"a":` + schema + `}}`
		args = `{"a":` + args + `}`
	}
	s, err := Compile(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Check(json.RawMessage(args)); len(got) != 1 {
		t.Errorf("Check found %d problems, want the full validator's one: %v", len(got), got)
	}
}
