#!/usr/bin/env bash
# Installs what the test suite needs when it is missing. Idempotent; run by
# `make test` (and so by CI) on a fresh machine.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/install.sh
. "$root/scripts/install.sh"

need_apt=()
command -v qemu-img >/dev/null 2>&1 || need_apt+=(qemu-utils)
command -v packer >/dev/null 2>&1 || need_apt+=(packer)
# Azurite (below) runs on node and installs with npm.
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)

apt_install deps "${need_apt[@]}"

# Azurite, the Azure Storage emulator, for the Azure target's blob tests
# (cloud/azure, cloud/conformance start its blob service themselves). It
# goes to .tools/azurite.
npm_tool deps "$root/.tools/azurite" azurite 3.37.0 dist/src/blob/main.js
