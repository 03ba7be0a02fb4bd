#!/usr/bin/env bash
# Whole-process times of the commands issue 15 set goals for, as medians
# (and the fastest run) of N runs each, with the machine's load before and
# after: `imgflow version` (start-up: package init), `imgflow plan
# workflows/gen2.star` (goal < 50 ms), the same plan with packer validate
# when packer is on PATH (packer's own time, reported apart) and `imgflow
# test workflows` (goal < 2 s). Prints a Markdown table.
#
#   bench/cli.sh [runs]        (default 9)
#
# The plan runs against an empty state directory with packer validate off
# (--no-packer-validate), so it measures imgflow; `go` must be on PATH for
# the workflow tests (their build-tools step runs go build once).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-9}"
bin="$(mktemp -d)/imgflow"
state="$(mktemp -d)"
trap 'rm -rf "$state" "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/imgflow
command -v go >/dev/null || { echo "bench/cli.sh: go must be on PATH (the workflow tests build a tool with it)" >&2; exit 1; }

# times runs a command $runs times after one warm-up run and prints
# "median min" in ms.
times() {
	"$@" >/dev/null 2>&1 || { echo "bench/cli.sh: failed: $*" >&2; "$@" >&2 || true; exit 1; }
	for _ in $(seq "$runs"); do
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1 || { echo "bench/cli.sh: failed: $*" >&2; exit 1; }
		e=$(date +%s%N)
		echo $(((e - s) / 100000))
	done | sort -n | awk '{a[NR] = $1} END {printf "%.1f %.1f\n", a[int((NR + 1) / 2)] / 10, a[1] / 10}'
}
row() {
	local what="$1"
	shift
	read -r median fastest < <(times "$@")
	echo "| $what | $median ms | $fastest ms |"
}

echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(go version | cut -d' ' -f3), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| command | median of $runs | fastest |"
echo "|---|---|---|"
row "imgflow version" "$bin" version
row "imgflow plan workflows/gen2.star --no-packer-validate" "$bin" plan --state "$state" --no-packer-validate workflows/gen2.star
if command -v packer >/dev/null; then
	row "imgflow plan workflows/gen2.star (packer validate: $(packer version | head -1))" "$bin" plan --state "$state" workflows/gen2.star
fi
row "imgflow test workflows" "$bin" test workflows
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
