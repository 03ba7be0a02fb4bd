#!/usr/bin/env bash
# A stand-in for packer 1.9.5 installed as "packer" on PATH by
# packer/hcl_init_test.go: it appends each invocation's argv (one line,
# arguments separated by spaces) to FAKE_PACKER_LOG and, for a -var-file,
# a line "varfile PATH" followed by the file's content.
#
#   init   prints what packer init prints; FAKE_PACKER_INIT_FAIL=1 makes it
#          fail the way packer does without network
#   build  prints a null build's machine-readable artifact lines
set -u
printf '%s\n' "$*" >>"$FAKE_PACKER_LOG"
case "${1:-}" in
init)
	if [ "${FAKE_PACKER_INIT_FAIL:-}" = 1 ]; then
		echo 'Failed getting the "github.com/hashicorp/azure" plugin:' >&2
		echo 'could not get releases: Get "https://api.github.com/repos/hashicorp/packer-plugin-azure/git/matching-refs/tags": dial tcp: lookup api.github.com: no such host' >&2
		exit 1
	fi
	echo "Installed plugin github.com/hashicorp/azure v2.5.0 in \"$HOME/.config/packer/plugins/github.com/hashicorp/azure/packer-plugin-azure_v2.5.0_x5.0_linux_amd64\""
	;;
build)
	for a in "$@"; do
		case "$a" in
		-var-file=*)
			printf 'varfile %s\n' "${a#-var-file=}" >>"$FAKE_PACKER_LOG"
			cat "${a#-var-file=}" >>"$FAKE_PACKER_LOG"
			;;
		esac
	done
	ts=$(date +%s)
	b=cvm.azure-arm.cvm
	printf '%s,,ui,say,Build '"'"'%s'"'"' finished after 1 second.\n' "$ts" "$b"
	printf '%s,%s,artifact-count,1\n' "$ts" "$b"
	printf '%s,%s,artifact,0,builder-id,fnoeding.null\n' "$ts" "$b"
	printf '%s,%s,artifact,0,id,Null\n' "$ts" "$b"
	printf '%s,%s,artifact,0,string,Did not export anything. This is the null builder\n' "$ts" "$b"
	printf '%s,%s,artifact,0,files-count,0\n' "$ts" "$b"
	printf '%s,%s,artifact,0,end\n' "$ts" "$b"
	;;
*)
	echo "fake-packer-init: unsupported command: $*" >&2
	exit 2
	;;
esac
