#!/bin/bash
# install-files.sh — runs on the build VM (as root, from a packer shell
# provisioner) and installs the files packer uploaded to /home/packer into
# their final paths, like AgentBaker's copyPackerFiles/cpAndMode.
#
# IMGFLOW_INSTALLS lists them, space-separated, as src:dest:mode; the
# workflow builds it with aks.installs_var() from stage_cse_modules()
# installs and the MGLRU rule, so the install list is data, not code.
set -euo pipefail

cpAndMode() {
	local src="$1" dest="$2" mode="$3"
	[ -f "$src" ] || { echo "install-files: $src was not uploaded" >&2; exit 1; }
	mkdir -p "$(dirname "$dest")"
	cp "$src" "$dest"
	chmod "$mode" "$dest"
	echo "install-files: $dest ($mode)"
}

main() {
	if [ -z "${IMGFLOW_INSTALLS:-}" ]; then
		echo "install-files: IMGFLOW_INSTALLS is empty: nothing to install" >&2
		exit 1
	fi
	local entry src dest mode
	for entry in $IMGFLOW_INSTALLS; do
		IFS=: read -r src dest mode <<<"$entry"
		if [ -z "$src" ] || [ -z "$dest" ] || [ -z "$mode" ]; then
			echo "install-files: bad entry $entry (want src:dest:mode)" >&2
			exit 1
		fi
		cpAndMode "$src" "$dest" "$mode"
	done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
