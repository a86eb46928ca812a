#!/usr/bin/env bash
# build-plugins.sh builds every built-in plugin under plugins-wasm/ (or the
# folders given as arguments) to <folder>/<folder name>.wasm.
#
# A plugin folder is recognised by its build file: go.mod for Go. To support
# another language, add a build_<lang> function and a branch in plugin_language.
# Folders under plugins-wasm/ without a build file are not plugins (test fakes
# such as plugins-wasm/githubtest live in the root module) and are passed
# over, and so are test-only plugins (a TEST-ONLY file: the conformance
# fixtures); a folder named as an argument must be a plugin. Any failing build
# fails the script.
set -euo pipefail

cd "$(dirname "$0")/.."

# build_go builds a Go plugin as a WASI preview 1 reactor.
build_go() {
	local dir=$1 name=$2
	(cd "$dir" && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o "$name.wasm" .)
}

# build_rust builds a Rust plugin (a folder with Cargo.toml whose crate root
# is src/lib.rs) with Debian's rustc, without cargo or a network: the PDK in
# pdk/rust as a wasm32-wasi rlib, then the plugin as a cdylib linked to it.
# RUSTC overrides the compiler; rustup's default toolchain usually lacks the
# wasm32-wasi target, hence /usr/bin/rustc (libstd-rust-dev-wasm32). The
# stack is 256 KiB instead of Rust's 1 MiB (twice what the kit's 512-level
# JSON nesting needs), which cuts each instance's memory from 17 to 7 pages;
# the stack sits below the data, so an overflow traps.
build_rust() {
	local dir=$1 name=$2 rustc=${RUSTC:-/usr/bin/rustc}
	if [[ ! -x $rustc ]]; then
		echo "build-plugins: $rustc is missing: run tools/test-deps.sh (Debian rustc and libstd-rust-dev-wasm32)" >&2
		return 1
	fi
	local tmp
	tmp=$(mktemp -d)
	local flags=(--edition 2021 --target wasm32-wasi -C opt-level=s -C panic=abort)
	if ! "$rustc" "${flags[@]}" --crate-type=rlib --crate-name workbench pdk/rust/src/lib.rs -o "$tmp/libworkbench.rlib" ||
		! "$rustc" "${flags[@]}" --crate-type=cdylib --crate-name "${name//-/_}" -C lto -C codegen-units=1 -C strip=symbols -C link-arg=-zstack-size=262144 \
			--extern workbench="$tmp/libworkbench.rlib" "$dir/src/lib.rs" -o "$tmp/$name.wasm"; then
		rm -rf "$tmp"
		return 1
	fi
	mv "$tmp/$name.wasm" "$dir/$name.wasm"
	rm -rf "$tmp"
}

# build_assemblyscript builds an AssemblyScript plugin (a folder with
# package.json and asconfig.json; entry assembly/index.ts) with the asc that
# its package-lock.json pins. npm ci runs only when node_modules is missing or
# older than the lock file; the kit in pdk/assemblyscript is linked, not copied.
build_assemblyscript() {
	local dir=$1 name=$2
	if ! command -v npm >/dev/null 2>&1; then
		echo "build-plugins: npm is missing: install Node.js 20 (tools/test-deps.sh checks for it)" >&2
		return 1
	fi
	if [[ ! -f $dir/node_modules/.package-lock.json || $dir/package-lock.json -nt $dir/node_modules/.package-lock.json ]]; then
		(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
	fi
	(cd "$dir" && node node_modules/assemblyscript/bin/asc.js assembly/index.ts --config asconfig.json -o "$name.wasm")
}

# build_c builds a C plugin (a folder whose Makefile includes
# pdk/c/plugin.mk) with Debian's clang, lld and wasi-libc for wasm32-wasi as a
# reactor; plugin.mk holds the flags, so authors and this script build alike.
build_c() {
	local dir=$1 name=$2
	if ! command -v clang >/dev/null 2>&1 || [[ ! -f /usr/lib/wasm32-wasi/crt1-reactor.o ]]; then
		echo "build-plugins: clang or wasi-libc is missing: run tools/test-deps.sh" >&2
		return 1
	fi
	make --no-print-directory -s -C "$dir" NAME="$name"
}

# plugin_language prints the language of a plugin folder, or nothing.
plugin_language() {
	local dir=$1
	if [[ -f $dir/go.mod ]]; then
		echo go
	elif [[ -f $dir/Cargo.toml ]]; then
		echo rust
	elif [[ -f $dir/package.json && -f $dir/asconfig.json ]]; then
		echo assemblyscript
	elif [[ -f $dir/Makefile ]] && grep -q 'pdk/c/plugin.mk' "$dir/Makefile"; then
		echo c
	fi
}

build_one() {
	local dir=${1%/} name lang
	name=$(basename "$dir")
	lang=$(plugin_language "$dir")
	case $lang in
	go) build_go "$dir" "$name" ;;
	rust) build_rust "$dir" "$name" ;;
	assemblyscript) build_assemblyscript "$dir" "$name" ;;
	c) build_c "$dir" "$name" ;;
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
		# A folder with a TEST-ONLY file holds test fixtures that the server
		# must not load as built-ins; the tests build it themselves.
		if [[ -n $(plugin_language "$dir") && ! -f $dir/TEST-ONLY ]]; then
			dirs+=("$dir")
		fi
	done
fi

for dir in "${dirs[@]}"; do
	build_one "$dir"
done
