#!/usr/bin/env bash
# Whole-process times of the fast-feedback commands (issues 15 and 28), as
# the median and fastest of N runs each after one warm-up run, with the
# median CPU time (user + sys of the process and its children, which a
# busy machine inflates much less than wall time) and the load average
# before and after each row. Prints a Markdown table.
#
#   bench/cli.sh [runs]        (default 9)
#
# Rows: `imgflow version` (start-up: package init); `imgflow plan
# workflows/gen2.star` without packer on PATH (goal < 50 ms) and with it,
# warm (its build's verdict in the packer validate cache, so no packer
# runs); `imgflow plan releases/aks.star` (the 32 jobs, on the fixture
# checkout), warm with packer and without it; `imgflow test workflows`.
# Every plan has an empty state directory of its own (as on a fresh
# checkout) and the cache is a fresh IMGFLOW_CACHE_DIR that the warm-up
# run fills. packer rows are left out when no packer is on PATH; `go`
# must be on PATH (the workflow tests build a tool with it).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-9}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
bin="$tmp/imgflow"
CGO_ENABLED=0 go build -o "$bin" ./cmd/imgflow # as make build links it
command -v go >/dev/null || { echo "bench/cli.sh: go must be on PATH (the workflow tests build a tool with it)" >&2; exit 1; }
export IMGFLOW_CACHE_DIR="$tmp/cache" IMGFLOW_SECRET_UA_TOKEN=bench-token

# PATH without any directory that holds a packer: plans then use imgflow's
# model of the templates alone.
nopacker=""
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
	[ -x "$d/packer" ] || nopacker="${nopacker:+$nopacker:}$d"
done

# once runs a command with a new empty state directory ($STATE in its
# arguments) and prints "wall cpu" in tenths of a millisecond: wall from
# EPOCHREALTIME, CPU from bash's times (user + sys of this shell's
# finished children), both read without starting a process.
once() {
	local state
	state="$(mktemp -d "$tmp/state.XXXXXX")"
	local args=("${@//\$STATE/$state}")
	local s e
	times >"$tmp/cpu0"
	s=$EPOCHREALTIME
	"${args[@]}" >"$tmp/out" 2>&1 || { echo "bench/cli.sh: failed: $*" >&2; cat "$tmp/out" >&2; exit 1; }
	e=$EPOCHREALTIME
	times >"$tmp/cpu1"
	rm -rf "$state"
	echo "$(( (${e/./} - ${s/./}) / 100 )) $(($(cpu "$tmp/cpu1") - $(cpu "$tmp/cpu0")))"
}
# cpu reads a file of bash's times output (second line: the children's
# "XmY.YYYs XmY.YYYs") as tenths of a millisecond.
cpu() {
	awk 'NR == 2 {
		n = 0
		for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] }
		printf "%d\n", n * 10000
	}' "$1"
}

# row runs a command $runs times after a warm-up run and prints a table
# row: median and fastest wall time, median CPU time, the load before and
# after.
row() {
	local what="$1"
	shift
	local before
	before="$(cut -d' ' -f1 /proc/loadavg)"
	once "$@" >/dev/null
	for _ in $(seq "$runs"); do once "$@"; done >"$tmp/times"
	local wall cpu
	wall="$(cut -d' ' -f1 "$tmp/times" | sort -n | awk '{a[NR] = $1} END {printf "%.1f ms | %.1f ms", a[int((NR + 1) / 2)] / 10, a[1] / 10}')"
	cpu="$(cut -d' ' -f2 "$tmp/times" | sort -n | awk '{a[NR] = $1} END {printf "%.0f ms", a[int((NR + 1) / 2)] / 10}')"
	echo "| $what | $wall | $cpu | $before / $(cut -d' ' -f1 /proc/loadavg) |"
}

aks=(plan --state '$STATE' --var agentbaker=//testdata/agentbaker releases/aks.star)
echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(go version | cut -d' ' -f3), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| command | median of $runs | fastest | CPU (median) | load before / after |"
echo "|---|---|---|---|---|"
row "imgflow version" "$bin" version
row "imgflow plan workflows/gen2.star, no packer on PATH" env PATH="$nopacker" "$bin" plan --state '$STATE' workflows/gen2.star
if command -v packer >/dev/null; then
	v="$(packer version | head -1)"
	row "imgflow plan workflows/gen2.star, $v, warm cache" "$bin" plan --state '$STATE' workflows/gen2.star
	row "imgflow plan releases/aks.star (32 jobs), $v, warm cache" "$bin" "${aks[@]}"
fi
row "imgflow plan releases/aks.star (32 jobs), no packer on PATH" env PATH="$nopacker" "$bin" "${aks[@]}"
row "imgflow test workflows" "$bin" test workflows
