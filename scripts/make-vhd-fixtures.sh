#!/usr/bin/env bash
# Regenerates the VHD test fixtures in testdata/vhd/ with qemu-img.
#
# The fixtures are real qemu-img output so the vhd package is tested against
# what users actually upload, not only against files the package wrote itself.
# Every fixture stays well under 4 MiB so the repository stays small.
#
# Requires qemu-img (Debian/Ubuntu: apt-get install -y qemu-utils).
set -euo pipefail

if ! command -v qemu-img >/dev/null 2>&1; then
	echo "qemu-img not found: install qemu-utils (apt-get install -y qemu-utils, or make deps)" >&2
	exit 1
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/testdata/vhd"
mkdir -p "$out"
cd "$out"

rm -f fixed-2m.vhd fixed-unaligned.vhd dynamic-2m.vhd raw-1m.img

# Azure-valid: fixed, virtual size exactly 2 MiB (force_size keeps qemu from
# rounding the size up to a CHS geometry boundary).
qemu-img create -q -f vpc -o subformat=fixed,force_size=on fixed-2m.vhd 2M

# Fixed but without force_size: qemu rounds 3M up to the CHS geometry, so the
# virtual size is not a whole number of MiB and Azure rejects it.
qemu-img create -q -f vpc -o subformat=fixed fixed-unaligned.vhd 3M

# Dynamic (qemu's default vpc subformat): Azure rejects it.
qemu-img create -q -f vpc -o subformat=dynamic dynamic-2m.vhd 2M

# Raw image: no VHD footer at all.
qemu-img create -q -f raw raw-1m.img 1M

ls -l "$out"
