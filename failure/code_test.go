package failure_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/workbench-dev/workbench/failure"
)

func TestCode_Valid(t *testing.T) {
	tests := []struct {
		code failure.Code
		want bool
	}{
		{"NOT_FOUND", true},
		{"HTTP_599", true},
		{"X", true},
		{"", false},
		{"not_found", false},
		{"NOT-FOUND", false},
		{"NOT FOUND", false},
		{failure.Code(make([]byte, 65)), false},
	}
	for _, tt := range tests {
		t.Run(string(tt.code), func(t *testing.T) {
			if got := tt.code.Valid(); got != tt.want {
				t.Errorf("Code(%q).Valid() = %v, want %v", tt.code, got, tt.want)
			}
		})
	}
}

// TestCode_declaredOnce checks that every code constant is well formed,
// documented, and declared under one name only.
func TestCode_declaredOnce(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "code.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			name := vs.Names[0].Name
			value, err := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !failure.Code(value).Valid() {
				t.Errorf("%s = %q is not a valid code", name, value)
			}
			if vs.Doc == nil {
				t.Errorf("%s has no doc comment", name)
			}
			if other, ok := seen[value]; ok {
				t.Errorf("%q is declared as %s and %s", value, other, name)
			}
			seen[value] = name
		}
	}
	if len(seen) < 40 {
		t.Errorf("found %d codes in code.go; the parse missed some", len(seen))
	}
}
