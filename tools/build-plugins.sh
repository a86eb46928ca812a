#!/usr/bin/env bash
# build-plugins.sh builds every built-in plugin under plugins-wasm/ (or the
# folders given as arguments) to <folder>/<folder name>.wasm.
#
# A plugin folder is recognised by its build file: go.mod for Go. To support
# another language, add a build_<lang> function and a branch in plugin_language.
# Folders under plugins-wasm/ without a build file are not plugins (test fakes
# such as plugins-wasm/githubtest live in the root module) and are passed
# over; a folder named as an argument must be a plugin. Any failing build
# fails the script.
set -euo pipefail

cd "$(dirname "$0")/.."

# build_go builds a Go plugin as a WASI preview 1 reactor.
build_go() {
	local dir=$1 name=$2
	(cd "$dir" && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o "$name.wasm" .)
}

# plugin_language prints the language of a plugin folder, or nothing.
plugin_language() {
	local dir=$1
	if [[ -f $dir/go.mod ]]; then
		echo go
	fi
}

build_one() {
	local dir=${1%/} name lang
	name=$(basename "$dir")
	lang=$(plugin_language "$dir")
	case $lang in
	go) build_go "$dir" "$name" ;;
	*)
		echo "build-plugins: $dir: not a plugin folder (no go.mod)" >&2
		return 1
		;;
	esac
	echo "build-plugins: $dir/$name.wasm ($(wc -c <"$dir/$name.wasm") bytes)"
}

if (($# > 0)); then
	dirs=("$@")
else
	dirs=()
	for dir in plugins-wasm/*/; do
		if [[ -n $(plugin_language "$dir") ]]; then
			dirs+=("$dir")
		fi
	done
fi

for dir in "${dirs[@]}"; do
	build_one "$dir"
done
