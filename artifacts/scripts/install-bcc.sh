#!/bin/bash
# install-bcc.sh — builds and installs BCC (the eBPF tools) from source on
# an Ubuntu build VM, as AgentBaker's installBcc does. Uploaded and run by
# the Ubuntu templates in artifacts/packer (Mariner/Azure Linux install the
# bcc-tools package instead).
#
#   BCC_VERSION   the tag to build, required; workflows pass
#                 aks.BCC_VERSION, pinned in lib/aks/packer.star
#
# The tag is fetched with a shallow clone and built with at most eight
# parallel make jobs (fewer when the VM has fewer cores). The log goes to
# /var/log/bcc_installation.log.
set -euo pipefail

BCC_REPO="${BCC_REPO:-https://github.com/iovisor/bcc.git}"
BCC_MAX_JOBS=8

# bcc_make_jobs [CORES]: the make -j value, min(cores, 8), at least 1.
bcc_make_jobs() {
	local cores="${1:-$(nproc 2>/dev/null || echo 1)}"
	if ! [[ "$cores" =~ ^[0-9]+$ ]] || [ "$cores" -lt 1 ]; then
		cores=1
	fi
	if [ "$cores" -gt "$BCC_MAX_JOBS" ]; then
		cores="$BCC_MAX_JOBS"
	fi
	echo "$cores"
}

# bcc_clone DIR: a shallow clone of exactly the pinned tag.
bcc_clone() {
	git clone --depth 1 --branch "$BCC_VERSION" "$BCC_REPO" "$1"
}

# bcc_build_deps: packages needed only to build, purged afterwards.
bcc_build_deps() {
	local deps=(bison cmake flex libedit-dev llvm-14 llvm-14-dev libclang-14-dev zlib1g-dev libelf-dev liblzma-dev)
	if grep -q 'VERSION_ID="24.04"' /etc/os-release 2>/dev/null; then
		deps+=(libpolly-14-dev)
	fi
	printf '%s\n' "${deps[@]}"
}

# bcc_runtime_deps: packages the tools need, kept.
bcc_runtime_deps() {
	printf '%s\n' build-essential git python3 python3-setuptools arping netperf iperf3
}

main() {
	if [ -z "${BCC_VERSION:-}" ]; then
		echo "install-bcc: BCC_VERSION is not set: pass the pinned tag (aks.BCC_VERSION in lib/aks/packer.star)" >&2
		exit 1
	fi
	exec > >(tee -a /var/log/bcc_installation.log) 2>&1
	local deps runtime
	mapfile -t deps < <(bcc_build_deps)
	mapfile -t runtime < <(bcc_runtime_deps)
	DEBIAN_FRONTEND=noninteractive apt-get install -y "${runtime[@]}" "${deps[@]}"
	local src
	src="$(mktemp -d)"
	bcc_clone "$src/bcc"
	mkdir -p "$src/bcc/build"
	cd "$src/bcc/build"
	cmake .. -DENABLE_EXAMPLES=off
	make -j"$(bcc_make_jobs)"
	make install
	cmake .. -DPYTHON_CMD=python3 -DENABLE_EXAMPLES=off
	(cd src/python && make -j"$(bcc_make_jobs)" && make install)
	cd /
	rm -rf "$src"
	DEBIAN_FRONTEND=noninteractive apt-get purge -y "${deps[@]}"
	DEBIAN_FRONTEND=noninteractive apt-get autoremove -y
	echo "install-bcc: BCC $BCC_VERSION installed"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
