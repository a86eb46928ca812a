//go:build !wasip1

package pdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type validateNested struct {
	Tags  []string `json:"tags"`
	Score float64  `json:"score,omitempty"`
}

type validateInput struct {
	Tags   [2]string       `json:"tags"`
	Score  float64         `json:"score,omitempty" minimum:"0.5"`
	Small  int8            `json:"small,omitempty"`
	Extra  map[string]int  `json:"extra,omitempty"`
	Any    any             `json:"any,omitempty"`
	Nested *validateNested `json:"nested,omitempty"`
	Level  int             `json:"level,omitempty" enum:"1,2,3"`
}

func TestValidator_check(t *testing.T) {
	s, _, err := schemaFor(reflect.TypeFor[validateInput]())
	if err != nil {
		t.Fatal(err)
	}
	v, err := compileValidator(s)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		input string
		want  string // "" for valid
	}{
		{`{"tags":["a","b"]}`, ""},
		{`{"tags":["a","b"],"score":0.5,"small":-128,"extra":{"k":1},"any":[{"x":null}],"nested":null}`, ""},
		{`{"tags":["a","b"],"nested":{"tags":["c","d"],"score":2.25}}`, ""},
		{`[]`, "the input must be a JSON object, not an array"},
		{`null`, "the input must be a JSON object, not null"},
		{`"x"`, "the input must be a JSON object, not a string"},
		{`{}`, `missing required field "tags"`},
		{`{"tags":["a"]}`, `field "tags": must have at least 2 items, got 1`},
		{`{"tags":["a","b","c"]}`, `field "tags": must have at most 2 items, got 3`},
		{`{"tags":["a",null]}`, `field "tags[1]": expected string, got null`},
		{`{"tags":["a","b"],"score":0.25}`, `field "score": must be at least 0.5, got 0.25`},
		{`{"tags":["a","b"],"score":"high"}`, `field "score": expected number, got string`},
		{`{"tags":["a","b"],"small":1.5}`, `field "small": expected integer, got number`},
		{`{"tags":["a","b"],"small":200}`, `field "small": must be at most 127, got 200`},
		{`{"tags":["a","b"],"extra":{"k":"v"}}`, `field "extra.k": expected integer, got string`},
		{`{"tags":["a","b"],"nested":{"tags":["c","d"],"oops":1}}`, `unknown field "nested.oops"`},
		{`{"tags":["a","b"],"nested":{}}`, `missing required field "nested.tags"`},
		{`{"tags":["a","b"],"level":2}`, ""},
		{`{"tags":["a","b"],"level":4}`, `field "level": must be one of 1, 2, 3; got 4`},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			var instance any
			if err := json.Unmarshal([]byte(tt.input), &instance); err != nil {
				t.Fatal(err)
			}
			e := v.check("", instance)
			switch {
			case tt.want == "" && e != nil:
				t.Errorf("check = %v, want valid", e)
			case tt.want != "" && (e == nil || e.Code != CodeInvalidArguments || !strings.Contains(e.Message, tt.want)):
				t.Errorf("check = %v, want INVALID_ARGUMENTS containing %q", e, tt.want)
			}
		})
	}
}
