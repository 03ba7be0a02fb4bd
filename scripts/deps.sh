#!/usr/bin/env bash
# Installs what the test suite needs when it is missing. Idempotent; run by
# `make test` (and so by CI) on a fresh machine.
#
# On a fresh machine every step is slow, so the ones that wait on the
# network or on another program overlap: packer's build starts first
# (DEPS_PACKER=background, niced), the Go module download and Azurite's
# npm install run in the background while the Go tools compile, and the
# script waits for them at its end.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/install.sh
. "$root/scripts/install.sh"

# packer 1.9.5 into .tools/bin (scripts/packer.sh): the longest step by
# far (minutes of compiling on a fresh machine). DEPS_PACKER=background
# (make test) starts its build at once and goes on: the Go tests that run
# packer wait for it (scripts/gotest.sh -w), the others do not.
if [ "${DEPS_PACKER:-}" = background ]; then
	"$root/scripts/packer.sh" --background
fi

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
declare -A bg=()
# later NAME COMMAND… runs the command in the background; finish waits.
later() {
	local name="$1"
	shift
	"$@" >"$logs/$name" 2>&1 &
	bg[$name]=$!
}
finish() {
	local name failed=""
	for name in "${!bg[@]}"; do
		if wait "${bg[$name]}"; then
			cat "$logs/$name"
		else
			echo "deps: $name failed:" >&2
			sed 's/^/    /' "$logs/$name" >&2
			failed=1
		fi
	done
	[ -z "$failed" ]
}

# Every module the build and the tests need, fetched while the rest
# installs (the checks and the tests find them in the module cache; a
# no-op when they are there).
later "go mod download" bash -c "cd '$root' && go mod download"

need_apt=()
command -v qemu-img >/dev/null 2>&1 || need_apt+=(qemu-utils)
# Azurite (below) runs on node and installs with npm.
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)

apt_install deps "${need_apt[@]}"

# Azurite, the Azure Storage emulator, for the Azure target's blob tests
# (cloud/azure, cloud/conformance start its blob service themselves). It
# goes to .tools/azurite.
later azurite npm_tool deps "$root/.tools/azurite" azurite 3.37.0 dist/src/blob/main.js

# actionlint, which checks the GitHub Actions workflows `imgflow ci github`
# writes (the tests run it on ci/github/*.yml).
actionlint_version=1.7.12
if ! "$root/.tools/bin/actionlint" -version 2>/dev/null | grep -q "^v$actionlint_version\$"; then
	echo "deps: building actionlint $actionlint_version into .tools/bin"
	later actionlint bash -c "cd '$root' && GOBIN='$root/.tools/bin' go install 'github.com/rhysd/actionlint/cmd/actionlint@v$actionlint_version'"
fi

# The AKS build tools (artifacts/build-tools: a static, -trimpath Go
# binary), as the workflows' build-tools step makes them. Built here once,
# on a machine the tests do not load yet: the first build compiles the
# standard library in that configuration (about 25 s of CPU), which no
# other build shares. Left to TestCommandBuildsTheBuildTools, that compile
# ran under the race-enabled test packages and took 82 s; with it in the
# Go build cache the test only links (about 3 s).
make -s -C "$root/artifacts/build-tools" build-tools GOARCH=amd64

finish

if [ "${DEPS_PACKER:-}" != background ]; then
	"$root/scripts/packer.sh"
fi
