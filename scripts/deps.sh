#!/usr/bin/env bash
# Installs what the test suite needs when it is missing. Idempotent; run by
# `make test` (and so by CI) on a fresh machine.
set -euo pipefail

need_apt=()
command -v qemu-img >/dev/null 2>&1 || need_apt+=(qemu-utils)
command -v packer >/dev/null 2>&1 || need_apt+=(packer)

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
