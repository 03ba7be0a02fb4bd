#!/usr/bin/env bash
# Installs what the VHD benchmarks need, when missing: the test
# dependencies (scripts/deps.sh: Azurite, node), GNU time for peak RSS,
# and azcopy (npm package @azure-tools/azcopy-linux, a prebuilt binary
# that needs libsecret) into .tools/azcopy. Idempotent; `make bench-deps`.
# Not part of `make test`: the tests never need azcopy.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/deps.sh"
# shellcheck source=scripts/install.sh
. "$root/scripts/install.sh"

need_apt=()
[ -x /usr/bin/time ] || need_apt+=(time)
if ! ldconfig -p 2>/dev/null | grep -q 'libsecret-1\.so\.0'; then
	need_apt+=(libsecret-1-0)
fi
apt_install bench-deps "${need_apt[@]}"

# azcopy: the version the reference measured (§5); npm is its only source
# here (the Go module proxy refuses azure-storage-azcopy).
azcopy_pkg="$root/.tools/azcopy/node_modules/@azure-tools/azcopy-linux"
npm_tool bench-deps "$root/.tools/azcopy" @azure-tools/azcopy-linux 10.32.2 dist/bin/azcopy_linux_amd64
chmod +x "$azcopy_pkg/dist/bin/azcopy_linux_amd64"
echo "bench-deps: $("$azcopy_pkg/dist/bin/azcopy_linux_amd64" --version 2>/dev/null | head -1)"
