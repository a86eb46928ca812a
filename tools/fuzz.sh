#!/usr/bin/env bash
# Runs every fuzz target of the host module and of pdk/go for FUZZ_TIME
# each (default 1m). `make test` runs the same targets on their seed
# corpora; new crashers land in the package's testdata/fuzz and stay there
# as regression seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_TIME=${FUZZ_TIME:-1m}
for mod in . pdk/go; do
	(
		cd "$mod"
		go list -f '{{.Dir}} {{.ImportPath}}' ./... | while read -r dir pkg; do
			for name in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
				echo "fuzz: $pkg $name for $FUZZ_TIME"
				go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZ_TIME" "$pkg"
			done
		done
	)
done
