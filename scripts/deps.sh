#!/usr/bin/env bash
# Installs what the test suite needs when it is missing. Idempotent; run by
# `make test` (and so by CI) on a fresh machine.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

need_apt=()
command -v qemu-img >/dev/null 2>&1 || need_apt+=(qemu-utils)
command -v packer >/dev/null 2>&1 || need_apt+=(packer)
# Azurite (below) runs on node and installs with npm.
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)

if [ ${#need_apt[@]} -gt 0 ]; then
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || { echo "deps: need root or sudo to install ${need_apt[*]}" >&2; exit 1; }
		sudo=sudo
	fi
	echo "deps: installing ${need_apt[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Azurite, the Azure Storage emulator, for the Azure target's blob tests
# (cloud/azure, cloud/conformance start its blob service themselves). It
# goes to .tools/azurite, outside the module and never committed; no
# package.json or lockfile is written.
azurite_version=3.37.0
azurite_dir="$root/.tools/azurite"
azurite_pkg="$azurite_dir/node_modules/azurite/package.json"
if [ ! -f "$azurite_dir/node_modules/azurite/dist/src/blob/main.js" ] ||
	! grep -q "\"version\": \"$azurite_version\"" "$azurite_pkg" 2>/dev/null; then
	echo "deps: installing azurite $azurite_version into .tools/azurite"
	mkdir -p "$azurite_dir"
	npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
		--prefix "$azurite_dir" "azurite@$azurite_version" >/dev/null
	# npm keeps a hidden lockfile in node_modules even with --no-package-lock.
	rm -f "$azurite_dir/node_modules/.package-lock.json"
fi
