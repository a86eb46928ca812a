package shellpolicy_test

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// benchLine is a typical agent line: a loop, a substitution, a here-string
// and a pipeline.
const benchLine = `set -e; n=0; for f in *.txt; do c=$(wc -l < "$f"); n=$((n + c)); done; grep -c x <<< "$n" | sort | uniq > out.txt`

// BenchmarkPolicy_Check is parsing plus the whole-tree check; the baseline
// BenchmarkParse is parsing alone, so the difference is the policy's cost.
func BenchmarkPolicy_Check(b *testing.B) {
	for b.Loop() {
		if _, err := all.Check(benchLine); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(benchLine), ""); err != nil {
			b.Fatal(err)
		}
	}
}
