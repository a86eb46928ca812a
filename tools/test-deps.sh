#!/usr/bin/env bash
# test-deps.sh installs what the test suite needs, once: each dependency is
# checked before anything is installed, so re-runs cost nothing.
set -euo pipefail

apt_packages=()

# wat2wasm compiles the hand-written WAT fixtures of the runtime and registry tests.
if ! command -v wat2wasm >/dev/null 2>&1; then
	apt_packages+=(wabt)
fi

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

# ---------------------------------------------------------------------------
# PostgreSQL server binaries (initdb, postgres) for the store tests: pgtest
# starts a throwaway cluster from them. Debian keeps them outside PATH, in
# /usr/lib/postgresql/<version>/bin.
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "test-deps: missing postgresql and no apt-get to install it; install it by hand" >&2
		exit 1
	fi
	pg_as_root=()
	if [[ $(id -u) -ne 0 ]]; then
		if ! command -v sudo >/dev/null 2>&1; then
			echo "test-deps: installing postgresql needs root (or sudo)" >&2
			exit 1
		fi
		pg_as_root=(sudo)
	fi
	echo "test-deps: installing postgresql" >&2
	"${pg_as_root[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${pg_as_root[@]}" apt-get install -y -qq postgresql >/dev/null
fi

# ---------------------------------------------------------------------------
# AssemblyScript: Node.js and npm run asc, the compiler pinned by
# pdk/assemblyscript/package-lock.json. The slacktest package builds the
# kit's conformance and JSON probe modules with it; plugin folders get their
# own npm ci from tools/build-plugins.sh. npm ci runs only when node_modules
# is missing or older than the lock file.
if ! command -v npm >/dev/null 2>&1; then
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "test-deps: missing node and npm and no apt-get to install them; install Node.js 20" >&2
		exit 1
	fi
	as_npm_root=()
	if [[ $(id -u) -ne 0 ]]; then
		as_npm_root=(sudo)
	fi
	echo "test-deps: installing nodejs and npm" >&2
	"${as_npm_root[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${as_npm_root[@]}" apt-get install -y -qq nodejs npm >/dev/null
fi
as_pdk="$(dirname "$0")/../pdk/assemblyscript"
if [[ ! -f $as_pdk/node_modules/.package-lock.json || $as_pdk/package-lock.json -nt $as_pdk/node_modules/.package-lock.json ]]; then
	echo "test-deps: npm ci in pdk/assemblyscript" >&2
	(cd "$as_pdk" && npm ci --no-audit --no-fund --loglevel=error)
fi

# ---------------------------------------------------------------------------
# MCP interop and conformance (server/internal/mcp): the TypeScript SDK
# client, the official conformance suites (0.1.16 and 0.2.0-alpha) and
# Node 22 (npm package "node"; the suites need it), pinned by
# tools/conformance/package-lock.json. npm ci runs only when node_modules is
# missing or older than the lock file.
conformance_dir="$(dirname "$0")/conformance"
if [[ ! -x $conformance_dir/node_modules/.bin/node || ! -f $conformance_dir/node_modules/.package-lock.json ||
	$conformance_dir/package-lock.json -nt $conformance_dir/node_modules/.package-lock.json ]]; then
	echo "test-deps: npm ci in tools/conformance" >&2
	(cd "$conformance_dir" && npm ci --no-audit --no-fund --loglevel=error)
fi

# ---------------------------------------------------------------------------
# C: Debian's clang, lld (wasm-ld), wasi-libc and the wasm32 compiler-rt
# builtins build the C plugin kit's plugins (pdk/c, plugins-wasm/newrelic)
# for wasm32-wasi; gcc, already needed by Go's race detector, builds the
# kit's native unit tests.
c_packages=()
command -v clang >/dev/null 2>&1 || c_packages+=(clang)
command -v wasm-ld >/dev/null 2>&1 || c_packages+=(lld)
[[ -f /usr/lib/wasm32-wasi/crt1-reactor.o ]] || c_packages+=(wasi-libc)
compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a' >/dev/null || c_packages+=(libclang-rt-dev-wasm32)
if ((${#c_packages[@]} > 0)); then
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "test-deps: missing ${c_packages[*]} and no apt-get to install them; install them by hand" >&2
		exit 1
	fi
	c_as_root=()
	if [[ $(id -u) -ne 0 ]]; then
		c_as_root=(sudo)
	fi
	echo "test-deps: installing ${c_packages[*]}" >&2
	"${c_as_root[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${c_as_root[@]}" apt-get install -y -qq "${c_packages[@]}" >/dev/null
fi

# ---------------------------------------------------------------------------
# Chromium for the portal's browser test (server, through chromedp): Debian's
# chromium package, run headless by the test.
if ! command -v chromium >/dev/null 2>&1; then
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "test-deps: missing chromium and no apt-get to install it; install it by hand" >&2
		exit 1
	fi
	chromium_as_root=()
	if [[ $(id -u) -ne 0 ]]; then
		if ! command -v sudo >/dev/null 2>&1; then
			echo "test-deps: installing chromium needs root (or sudo)" >&2
			exit 1
		fi
		chromium_as_root=(sudo)
	fi
	echo "test-deps: installing chromium" >&2
	"${chromium_as_root[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${chromium_as_root[@]}" apt-get install -y -qq chromium >/dev/null
fi

# ---------------------------------------------------------------------------
# Rust: Debian's rustc 1.63 and the wasm32-wasi standard library build the
# Rust plugin kit's plugins (pdk/rust, plugins-wasm/atlassian-jira) without
# cargo or a network; gcc links the kit's native unit tests. They are called
# as /usr/bin/rustc, since a rustup toolchain earlier in PATH usually lacks
# the wasm32-wasi target.
rust_packages=()
[[ -x /usr/bin/rustc ]] || rust_packages+=(rustc)
compgen -G '/usr/lib/rustlib/wasm32-wasi/lib/libstd-*.rlib' >/dev/null || rust_packages+=(libstd-rust-dev-wasm32)
if ((${#rust_packages[@]} > 0)); then
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "test-deps: missing ${rust_packages[*]} and no apt-get to install them; install them by hand" >&2
		exit 1
	fi
	rust_as_root=()
	if [[ $(id -u) -ne 0 ]]; then
		if ! command -v sudo >/dev/null 2>&1; then
			echo "test-deps: installing ${rust_packages[*]} needs root (or sudo)" >&2
			exit 1
		fi
		rust_as_root=(sudo)
	fi
	echo "test-deps: installing ${rust_packages[*]}" >&2
	"${rust_as_root[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${rust_as_root[@]}" apt-get install -y -qq "${rust_packages[@]}" >/dev/null
fi
