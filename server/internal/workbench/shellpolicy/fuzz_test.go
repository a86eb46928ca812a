package shellpolicy_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/workbench-dev/workbench/server/internal/workbench/shellpolicy"
)

// FuzzPolicy_Check checks that Check never panics, that every failure is a
// refusal naming a rule of the table, and that an accepted tree holds,
// by syntax.Walk's independent count, only table commands written as plain
// words and none of the constructs the table refuses outright.
func FuzzPolicy_Check(f *testing.F) {
	for _, seed := range []string{
		"echo hi > a.txt && cat a.txt | wc -l",
		"echo $(curl x)", "echo `id`", "cat <(ls)", "eval x", ". x", "f() { :; }",
		"for ((i=0;i<3;i++)); do echo $i; done", "x=$((y+=1))", "cat <<EOF\n$(id)\nEOF",
		"PATH=/ cat", "${x} y", "echo ${!x}", "echo x > /etc/y", "case a in b) c;; esac",
		"[[ $(id) ]]", "a[$(id)]=1", "declare -n x=y", "echo ~/x", "read -a PATH",
	} {
		f.Add(seed)
	}
	allowed := append(shellpolicy.Commands(shellpolicy.Builtin), shellpolicy.Commands(shellpolicy.Tool)...)
	f.Fuzz(func(t *testing.T, line string) {
		file, err := all.Check(line)
		if err != nil {
			var r *shellpolicy.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("Check(%q) = %T %v, want a *Refusal", line, err, err)
			}
			if r.Code() == "" || !strings.HasSuffix(r.Error(), "(rule "+string(r.Rule)+")") {
				t.Fatalf("Check(%q): refusal %q has no rule of the table", line, r.Error())
			}
			return
		}
		syntax.Walk(file, func(node syntax.Node) bool {
			switch x := node.(type) {
			case *syntax.CallExpr:
				if len(x.Args) == 0 {
					break
				}
				name := x.Args[0].Lit()
				if len(x.Args[0].Parts) != 1 || !slices.Contains(allowed, name) {
					t.Fatalf("Check(%q) accepted command %q", line, name)
				}
			case *syntax.ProcSubst, *syntax.FuncDecl, *syntax.CoprocClause, *syntax.ExtGlob:
				t.Fatalf("Check(%q) accepted a %T", line, x)
			case *syntax.Stmt:
				if x.Background || x.Coprocess {
					t.Fatalf("Check(%q) accepted a background statement", line)
				}
			case *syntax.Redirect:
				if x.Word != nil && x.Op != syntax.Hdoc && x.Op != syntax.DashHdoc {
					if lit := x.Word.Lit(); strings.HasPrefix(lit, "/") && lit != "/dev/null" {
						t.Fatalf("Check(%q) accepted a redirection to %q", line, lit)
					}
				}
			}
			return true
		})
	})
}
