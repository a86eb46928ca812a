#!/usr/bin/env bash
# fuzz.sh runs every Fuzz* target of every Go module in the repository for
# FUZZ_TIME each (default 1m), one at a time. `go test` (make test) already
# runs each target over its seed corpus; this explores beyond it.
set -euo pipefail

cd "$(dirname "$0")/.."
time=${FUZZ_TIME:-1m}

grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r file; do
	dir=$(dirname "$file")
	# The Go module holding the file: the nearest folder with a go.mod.
	mod=$dir
	while [[ ! -f $mod/go.mod ]]; do mod=$(dirname "$mod"); done
	pkg=.
	[[ $dir == "$mod" ]] || pkg=./${dir#"$mod"/}
	for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | cut -d' ' -f2); do
		echo "fuzz: $dir $target ($time)"
		(cd "$mod" && go test -run '^$' -fuzz "^$target\$" -fuzztime "$time" "$pkg") </dev/null
	done
done
