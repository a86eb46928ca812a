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
