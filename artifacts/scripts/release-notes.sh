#!/bin/bash
# release-notes.sh — runs on the build VM (as root, from a packer shell
# provisioner) after everything is installed, and writes the release notes
# /opt/azure/vhd-install.complete (AgentBaker's name for them), which the
# template then downloads as release-notes.txt: what the image was built
# from, its kernel, the files imgflow installed with their modes, and the
# packages.
#
#   IMG_PUBLISHER, IMG_OFFER, IMG_SKU, IMG_VERSION   the marketplace image
#   BUILD_ID                                         the build
#   NOTES                                            where to write (tests)
set -euo pipefail

NOTES="${NOTES:-/opt/azure/vhd-install.complete}"

notes() {
	echo "Image built by imgflow, build ${BUILD_ID:-unknown}"
	echo "Source image: ${IMG_PUBLISHER:-}/${IMG_OFFER:-}/${IMG_SKU:-}/${IMG_VERSION:-}"
	echo "Kernel: $(uname -r)"
	if [ -r /etc/os-release ]; then
		# shellcheck disable=SC1091
		echo "OS: $(. /etc/os-release && echo "${PRETTY_NAME:-$ID}")"
	fi
	echo
	echo "Installed files (path, mode):"
	# A family without the MGLRU rule lacks its file: list what is there.
	{ find /opt/azure/containers /etc/tmpfiles.d/aks-mglru.conf -type f -printf '  %p %m\n' 2>/dev/null || true; } | sort
	echo
	echo "Packages:"
	if command -v dpkg-query >/dev/null; then
		dpkg-query -W -f='  ${Package} ${Version}\n' | sort
	elif command -v rpm >/dev/null; then
		rpm -qa --qf '  %{NAME} %{VERSION}-%{RELEASE}\n' | sort
	else
		echo "  (neither dpkg nor rpm found)"
	fi
}

mkdir -p "$(dirname "$NOTES")"
notes >"$NOTES"
echo "release-notes: wrote $NOTES ($(wc -l <"$NOTES") lines)"
