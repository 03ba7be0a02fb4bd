#!/usr/bin/env bash
# Interpreter cost as whole-process times: `imgflow plan` of every workflow
# (parse, load, validate, every builtin against a dry-run copy of an empty
# local state) and `imgflow test` of all workflows. Prints a Markdown table.
#
#   bench/interp.sh [runs]        (default 10 runs each; the median is shown)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
make -s build >/dev/null
state="$(mktemp -d)"
trap 'rm -rf "$state"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# ms runs a command $runs times and prints the median wall time in ms.
ms() {
	for _ in $(seq "$runs"); do
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
		e=$(date +%s%N)
		echo $(((e - s) / 1000000))
	done | median
}

echo "| command | median wall time ($runs runs) |"
echo "|---|---|"
for wf in workflows/*.star; do
	case "$wf" in *_test.star) continue ;; esac
	name=$(basename "$wf" .star)
	vars=()
	[ -f "testdata/plans/$name.vars.json" ] && vars=(--vars-file "testdata/plans/$name.vars.json")
	echo "| imgflow plan $wf | $(ms bin/imgflow plan --state "$state" "$wf" "${vars[@]}") ms |"
done
echo "| imgflow test workflows | $(ms bin/imgflow test workflows) ms |"
