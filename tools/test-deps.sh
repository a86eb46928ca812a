#!/usr/bin/env bash
# test-deps.sh installs what the tests and the plugin builds need, once:
# every dependency is checked first, missing Debian packages are installed in
# one apt-get run, and npm ci runs only where node_modules is missing or older
# than its lock file. Re-runs cost nothing.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
apt_packages=()

# need PACKAGE CHECK...: queue a Debian package unless the check passes.
need() {
	local pkg=$1
	shift
	"$@" >/dev/null 2>&1 || apt_packages+=("$pkg")
}

# wat2wasm compiles the hand-written WAT fixtures of the runtime, registry,
# server and MCP tests.
need wabt command -v wat2wasm

# PostgreSQL server binaries for the store tests: pgtest starts a throwaway
# cluster from them. Debian keeps them outside PATH.
need postgresql compgen -G '/usr/lib/postgresql/*/bin/initdb'

# Node.js and npm run the AssemblyScript compiler and the MCP interop and
# conformance clients (Node 20 is on a fresh machine; this covers others).
need nodejs command -v node
need npm command -v npm

# C plugin kit (pdk/c, plugins-wasm/newrelic): clang, wasm-ld, wasi-libc and
# the wasm32 compiler-rt builtins; gcc builds the kit's native unit tests.
need clang command -v clang
need lld command -v wasm-ld
need wasi-libc test -f /usr/lib/wasm32-wasi/crt1-reactor.o
need libclang-rt-dev-wasm32 compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a'

# Rust plugin kit (pdk/rust, plugins-wasm/atlassian-jira): Debian's rustc and
# the wasm32-wasi standard library, called as /usr/bin/rustc since a rustup
# toolchain earlier in PATH usually lacks the wasm32-wasi target.
need rustc test -x /usr/bin/rustc
need libstd-rust-dev-wasm32 compgen -G '/usr/lib/rustlib/wasm32-wasi/lib/libstd-*.rlib'

# Chromium for the portal's browser test (chromedp, headless).
need chromium command -v chromium

if ((${#apt_packages[@]} > 0)); then
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "test-deps: missing ${apt_packages[*]} and no apt-get to install them; install them by hand" >&2
		exit 1
	fi
	as_root=()
	if [[ $(id -u) -ne 0 ]]; then
		if ! command -v sudo >/dev/null 2>&1; then
			echo "test-deps: installing ${apt_packages[*]} needs root (or sudo)" >&2
			exit 1
		fi
		as_root=(sudo)
	fi
	echo "test-deps: installing ${apt_packages[*]}" >&2
	"${as_root[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq "${apt_packages[@]}" >/dev/null
fi

# npm_ci DIR: install DIR's locked npm packages when they are missing or stale.
npm_ci() {
	local dir=$root/$1
	if [[ ! -f $dir/node_modules/.package-lock.json || $dir/package-lock.json -nt $dir/node_modules/.package-lock.json ]]; then
		echo "test-deps: npm ci in $1" >&2
		(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
	fi
}

# The AssemblyScript compiler pinned by the kit; plugin folders get their own
# npm ci from tools/build-plugins.sh.
npm_ci pdk/assemblyscript
# The runtime's Extism AssemblyScript PDK test plugin.
npm_ci runtime/testdata/extismas
# The MCP TypeScript SDK client, the official conformance suites and the
# Node 22 they need (npm package "node").
npm_ci tools/conformance
# The reference MCP server (server-everything) the custom apps interop test
# adds as a user's app.
npm_ci tools/everything
