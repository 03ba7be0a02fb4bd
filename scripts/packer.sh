#!/usr/bin/env bash
# Installs packer 1.9.5 (the last MPL release, azure builder bundled) into
# .tools/bin when it is missing, built from source with the Go toolchain.
# Debian's packer 1.6.6 is too old for today's templates (skip_create_image,
# security_type, HCL2). The first build compiles about a thousand packages:
# minutes on two cores.
#
#   scripts/packer.sh               build now (deps.sh, make deps)
#   scripts/packer.sh --background  start the build and return at once
#                                   (make test: the Go tests that do not
#                                   run packer go first)
#   scripts/packer.sh --wait        wait for a background build (or build
#                                   now when none runs); scripts/gotest.sh
#                                   runs it before the packages that run packer
#
# The binary is installed by a rename: a test never sees half of it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version=1.9.5
tools="$root/.tools"
log="$tools/packer-build.log"
pidfile="$tools/packer-build.pid"

have() { "$tools/bin/packer" version 2>/dev/null | grep -q "^Packer v$version\$"; }

build() {
	mkdir -p "$tools/bin"
	# Global, not local: the EXIT trap runs after build returned, under
	# set -u.
	gobin="$(mktemp -d "$tools/packer-build.XXXXXX")"
	trap 'rm -rf "$gobin"' EXIT
	# Static and stripped, without paths: cgo and DWARF only cost link
	# time here (-s -w: about a tenth of the link), and -trimpath compiles
	# the standard library as the build tools (deps.sh) need it, once for
	# both. None of them changes what packer does.
	(cd "$root" && CGO_ENABLED=0 GOBIN="$gobin" go install -trimpath -ldflags="-s -w" "github.com/hashicorp/packer@v$version")
	mv -f "$gobin/packer" "$tools/bin/packer"
}

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

case "${1:-}" in
"")
	have && exit 0
	echo "deps: building packer $version into .tools/bin (first time only: minutes)"
	build
	;;
--background)
	have && exit 0
	if running; then
		echo "deps: packer $version is being built already (log: .tools/packer-build.log)"
		exit 0
	fi
	echo "deps: building packer $version into .tools/bin in the background (first time only: minutes; log: .tools/packer-build.log); the tests that run packer wait for it"
	mkdir -p "$tools"
	# Niced: on two cores the test packages that do not need packer get
	# the CPU first (the first results come minutes sooner); packer takes
	# what they leave, and all of it once only its tests are left.
	nohup nice -n 10 "$0" >"$log" 2>&1 </dev/null &
	echo $! >"$pidfile"
	;;
--wait)
	start=$SECONDS
	last=$SECONDS
	waited=""
	while running && ! have; do
		waited=1
		if [ $((SECONDS - last)) -ge 60 ]; then
			echo "...   packer $version still building ($((SECONDS - start)) s; log: .tools/packer-build.log)"
			last=$SECONDS
		fi
		sleep 2
	done
	if ! have; then
		[ -s "$log" ] && { echo "packer's background build did not install it; its log:"; sed 's/^/    /' "$log"; }
		echo "deps: building packer $version into .tools/bin"
		build
	fi
	[ -z "$waited" ] || echo "packer $version ready after $((SECONDS - start)) s of waiting"
	have
	;;
*)
	echo "packer.sh: unknown argument $1 (want --background or --wait)" >&2
	exit 2
	;;
esac
