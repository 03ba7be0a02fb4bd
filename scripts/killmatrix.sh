#!/usr/bin/env bash
# Kill matrix on the local target (KILLMATRIX_TARGET=azure: the Azure
# target against imgflow-emulator, packer simulated): runs workflows and interrupts them
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

target=${KILLMATRIX_TARGET:-local}
cells=(
	"workflows/flatcar.star --vars-file $root/testdata/plans/flatcar.vars.json"
	"workflows/flatcar_capi.star --vars-file $root/testdata/plans/flatcar_capi.vars.json"
	"workflows/linux.star --var os=Ubuntu --var os_version=20.04"
	"workflows/capz.star --vars-file $root/testdata/plans/capz.vars.json"
)
tflag=
if [ "$target" = azure ]; then
	# The Azure target against imgflow-emulator (README: "Try the Azure
	# target locally"), one emulator for all trials: each run's names
	# derive from its run id, so trials do not meet. linux.star thrice
	# (its sig_to_vhd), flatcar once (its upload).
	(cd "$root" && go build -o "$work/emulator" ./cmd/imgflow-emulator) || exit 1
	mkdir -p "$work/emu-tmp"
	TMPDIR=$work/emu-tmp "$work/emulator" >"$work/emulator.env" 2>"$work/emulator.log" &
	emu=$!
	trap 'kill $emu 2>/dev/null; wait $emu 2>/dev/null; rm -rf "$work"' EXIT
	for ((w = 0; w < 120; w++)); do
		grep -q '^# ready' "$work/emulator.env" && break
		sleep 1
	done
	grep -q '^# ready' "$work/emulator.env" || { echo "emulator did not start: $(cat "$work/emulator.log")"; exit 1; }
	# shellcheck disable=SC1091
	. "$work/emulator.env"
	tflag="--target azure"
	cells=(
		"workflows/linux.star"
		"workflows/linux.star --var os=Ubuntu --var os_version=20.04"
		"workflows/flatcar.star --var version=4152.2.3 --var vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd"
		"workflows/linux.star --var generation=V1"
	)
fi
# RECn: SIGKILL right after the run's journal holds n records (n cycles
# over the records a run writes), so every point between two records,
# those inside sig_to_vhd included, is hit.
signals=(KILL REC KILL INT TERM INTINT REC)
records=26

# kill_after_record PID JOURNAL_DIR N: SIGKILL once a journal in the dir
# has N lines (polled without forking).
kill_after_record() {
	local pid=$1 runs=$2 n=$3 f lines
	while kill -0 "$pid" 2>/dev/null; do
		for f in "$runs"/*.jsonl; do
			[ -f "$f" ] || continue
			mapfile -t lines <"$f"
			if [ ${#lines[@]} -ge "$n" ]; then
				kill -KILL "$pid" 2>/dev/null
				return
			fi
		done
		sleep 0.002
	done
}

ok=0 bad=0 unresumable=0 leaked=0 secrets=0 interrupted=0 recs=0
# KILLMATRIX_UNTIL (seconds since the epoch): start no trial after it.
until=${KILLMATRIX_UNTIL:-0}
# KILLMATRIX_KEEP (a directory): the logs of trials with a finding go there.
keep=${KILLMATRIX_KEEP:-}
for ((i = 0; i < trials; i++)); do
	if [ "$until" -gt 0 ] && [ "$(date +%s)" -ge "$until" ]; then
		trials=$i
		break
	fi
	cell=${cells[i % ${#cells[@]}]}
	sig=${signals[(i / ${#cells[@]}) % ${#signals[@]}]}
	dir=$work/t$i
	mkdir -p "$dir/tmp"
	export TMPDIR=$dir/tmp IMGFLOW_SECRET_UA_TOKEN=$secret
	# shellcheck disable=SC2086
	"$bin" run $tflag --root "$root" "$root"/$cell --state "$dir/state" >"$dir/run.log" 2>&1 &
	pid=$!
	case $sig in
	REC)
		n=$((1 + recs % records)) recs=$((recs + 1))
		sig=REC$n
		kill_after_record $pid "$dir/state/runs" $n
		;;
	*)
		# A random point of the run: 0 to 1.5 s (a run takes 1-3 s).
		sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
		[ $((RANDOM % 3)) = 0 ] && sleep 0.5
		;;
	esac
	case $sig in
	REC*) ;;
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
			"$bin" run $tflag --root "$root" "$root"/$cell --state "$dir/state" >"$dir/resume.log" 2>&1
		else
			"$bin" run $tflag --root "$root" --state "$dir/state" --resume "$id" >"$dir/resume.log" 2>&1
		fi
		rc=$?
		if [ $rc -ne 0 ] && grep -q "had not started" "$dir/resume.log"; then
			# Torn header: reported as not started; run it again.
			"$bin" run $tflag --root "$root" "$root"/$cell --state "$dir/state" >"$dir/resume.log" 2>&1
			rc=$?
		fi
		if [ $rc -ne 0 ]; then
			echo "trial $i ($cell, SIG$sig): resume failed: $(grep -m1 -i error "$dir/resume.log")"
			unresumable=$((unresumable + 1)) trial_bad=1
		fi
	fi
	"$bin" gc $tflag --root "$root" --state "$dir/state" --older-than 0s >"$dir/gc.log" 2>&1 || {
		echo "trial $i ($cell, SIG$sig): gc failed: $(tail -1 "$dir/gc.log")"
		trial_bad=1
	}
	left=$( (ls -A "$dir/tmp"; cd "$dir/state" && ls -A | grep '^\.state-'; ls -A "$dir/state/blobs/.tmp" 2>/dev/null; ls -A "$dir/state/runs" 2>/dev/null | grep '^\.'; find "$dir/state/artifacts" -name '.*' 2>/dev/null) | tr '\n' ' ')
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
	if [ $trial_bad = 1 ] && [ -n "$keep" ]; then
		mkdir -p "$keep/t$i" && cp "$dir"/*.log "$keep/t$i/" 2>/dev/null
	fi
	rm -rf "$dir"
done
echo "killmatrix ($target): $trials trials ($interrupted interrupted), $ok clean, $bad with a finding: $unresumable unresumable, $leaked with temporaries left, $secrets with a secret on disk"
[ $bad = 0 ]
