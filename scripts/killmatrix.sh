#!/usr/bin/env bash
# Kill matrix on the local target: runs workflows and interrupts them
# (SIGKILL at a random point, SIGINT, SIGTERM, a double SIGINT), then
# resumes each interrupted run and runs gc, and checks that
#   - every interrupted run resumes to success (nothing unresumable),
#   - no temporary is left: nothing in the trial's TMPDIR, no state save
#     temp (.state-*.json) or blob temp in the state dir,
#   - the secret given to the run (IMGFLOW_SECRET_UA_TOKEN) is in no file.
# Not part of `make test` (slow). Usage: scripts/killmatrix.sh [TRIALS]
# (default 40); prints one line per failed check and a summary.
set -u
trials=${1:-40}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/imgflow
(cd "$root" && go build -o "$bin" ./cmd/imgflow) || exit 1
secret=KillMatrixSecret$RANDOM$RANDOM

cells=(
	"workflows/flatcar.star --vars-file $root/testdata/plans/flatcar.vars.json"
	"workflows/flatcar_capi.star --vars-file $root/testdata/plans/flatcar_capi.vars.json"
	"workflows/linux.star --var os=Ubuntu --var os_version=20.04"
	"workflows/capz.star --vars-file $root/testdata/plans/capz.vars.json"
)
signals=(KILL KILL KILL INT TERM INTINT)

ok=0 bad=0 unresumable=0 leaked=0 secrets=0 interrupted=0
for ((i = 0; i < trials; i++)); do
	cell=${cells[i % ${#cells[@]}]}
	sig=${signals[(i / ${#cells[@]}) % ${#signals[@]}]}
	dir=$work/t$i
	mkdir -p "$dir/tmp"
	export TMPDIR=$dir/tmp IMGFLOW_SECRET_UA_TOKEN=$secret
	# shellcheck disable=SC2086
	"$bin" run --root "$root" "$root"/$cell --state "$dir/state" >"$dir/run.log" 2>&1 &
	pid=$!
	# A random point of the run: 0 to 1.5 s (a run takes 1-3 s).
	sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
	[ $((RANDOM % 3)) = 0 ] && sleep 0.5
	case $sig in
	INTINT) kill -INT $pid 2>/dev/null && sleep 0.05 && kill -INT $pid 2>/dev/null ;;
	*) kill -"$sig" $pid 2>/dev/null ;;
	esac
	wait $pid 2>/dev/null
	code=$?
	trial_bad=0
	if [ $code -ne 0 ]; then
		interrupted=$((interrupted + 1))
		id=$(ls "$dir/state/runs" 2>/dev/null | sed -n 's/\.jsonl$//p' | head -1)
		if [ -z "$id" ]; then
			# Killed before its journal: nothing to resume, a new run.
			"$bin" run --root "$root" "$root"/$cell --state "$dir/state" >"$dir/resume.log" 2>&1
		else
			"$bin" run --root "$root" --state "$dir/state" --resume "$id" >"$dir/resume.log" 2>&1
		fi
		if [ $? -ne 0 ]; then
			echo "trial $i ($cell, SIG$sig): resume failed: $(grep -m1 -i error "$dir/resume.log")"
			unresumable=$((unresumable + 1)) trial_bad=1
		fi
	fi
	"$bin" gc --root "$root" --state "$dir/state" --older-than 0s >"$dir/gc.log" 2>&1 || {
		echo "trial $i ($cell, SIG$sig): gc failed: $(tail -1 "$dir/gc.log")"
		trial_bad=1
	}
	left=$( (ls -A "$dir/tmp"; cd "$dir/state" && ls -A | grep '^\.state-'; ls -A "$dir/state/blobs/.tmp" 2>/dev/null) | tr '\n' ' ')
	if [ -n "$left" ]; then
		echo "trial $i ($cell, SIG$sig): temporaries left: $left"
		leaked=$((leaked + 1)) trial_bad=1
	fi
	if grep -rlsF "$secret" "$dir/tmp" "$dir/state" >"$dir/secret.txt"; then
		echo "trial $i ($cell, SIG$sig): secret on disk: $(tr '\n' ' ' <"$dir/secret.txt")"
		secrets=$((secrets + 1)) trial_bad=1
	fi
	if [ $trial_bad = 0 ]; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
	echo "trial $i ($cell, SIG$sig, exit $code): $([ $trial_bad = 0 ] && echo clean || echo finding)"
	rm -rf "$dir"
done
echo "killmatrix: $trials trials ($interrupted interrupted), $ok clean, $bad with a finding: $unresumable unresumable, $leaked with temporaries left, $secrets with a secret on disk"
[ $bad = 0 ]
