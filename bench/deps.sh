#!/usr/bin/env bash
# Installs what the VHD benchmarks need, when missing: the test
# dependencies (scripts/deps.sh: Azurite, node), GNU time for peak RSS,
# and azcopy (npm package @azure-tools/azcopy-linux, a prebuilt binary
# that needs libsecret) into .tools/azcopy. Idempotent; `make bench-deps`.
# Not part of `make test`: the tests never need azcopy.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/deps.sh"

need_apt=()
[ -x /usr/bin/time ] || need_apt+=(time)
if ! ldconfig -p 2>/dev/null | grep -q 'libsecret-1\.so\.0'; then
	need_apt+=(libsecret-1-0)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || { echo "bench-deps: need root or sudo to install ${need_apt[*]}" >&2; exit 1; }
		sudo=sudo
	fi
	echo "bench-deps: installing ${need_apt[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# azcopy: the version the reference measured (§5); npm is its only source
# here (the Go module proxy refuses azure-storage-azcopy).
azcopy_version=10.32.2
azcopy_dir="$root/.tools/azcopy"
azcopy_pkg="$azcopy_dir/node_modules/@azure-tools/azcopy-linux"
if [ ! -f "$azcopy_pkg/dist/bin/azcopy_linux_amd64" ] ||
	! grep -q "\"version\": \"$azcopy_version\"" "$azcopy_pkg/package.json" 2>/dev/null; then
	echo "bench-deps: installing azcopy $azcopy_version into .tools/azcopy"
	mkdir -p "$azcopy_dir"
	npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
		--prefix "$azcopy_dir" "@azure-tools/azcopy-linux@$azcopy_version" >/dev/null
	rm -f "$azcopy_dir/node_modules/.package-lock.json"
fi
chmod +x "$azcopy_pkg/dist/bin/azcopy_linux_amd64"
echo "bench-deps: $("$azcopy_pkg/dist/bin/azcopy_linux_amd64" --version 2>/dev/null | head -1)"
