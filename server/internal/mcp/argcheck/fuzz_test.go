package argcheck

import (
	"encoding/json"
	"testing"
)

// FuzzSchema_Check feeds arbitrary arguments to a schema that uses every
// keyword the walker handles. It must never panic, and it must be sound:
// whenever Check reports a problem, the full validator rejects the
// arguments too, and whenever Check reports none, the full validator
// accepts them.
func FuzzSchema_Check(f *testing.F) {
	s, err := Compile(json.RawMessage(repoSchema))
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{}`, `null`, `[]`, `"x"`, `{"owner":"o","repo":"r"}`,
		`{"owner":"bad owner!","repo":7,"per_page":0,"state":"merged","labels":["a",2,"c"],"kind":"pr","ratio":1,"nested":{"extra":1},"color":"red"}`,
		`{"owner":"o","repo":"r","per_page":1e308,"ratio":-0,"nested":{"deep":null},"either":[1]}`,
		`{"owner":"ü","repo":"","labels":[],"odd key":"\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		problems := s.Check(args)
		v, decodeProblem := decode(args)
		if decodeProblem != nil {
			if len(problems) != 1 || problems[0] != *decodeProblem {
				t.Fatalf("undecodable arguments gave %v", problems)
			}
			return
		}
		authorityErr := s.resolved.Validate(v)
		if (len(problems) > 0) != (authorityErr != nil) {
			t.Fatalf("Check(%s) = %v but the full validator says %v", args, problems, authorityErr)
		}
		for _, p := range problems {
			if p.Path == "" || p.Path[0] != '$' || p.Message == "" {
				t.Fatalf("malformed problem %+v", p)
			}
		}
	})
}
