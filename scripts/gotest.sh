#!/usr/bin/env bash
# Runs `go test` package by package, each with its own -timeout, and says
# what is going on while it runs: a line per finished package, and every
# PROGRESS_EVERY seconds (default 60) the packages still running, how long
# they have run against their limit and the test each is in. A package
# that passes its limit fails with the limit named, rather than the whole
# run hanging silently until one global timeout.
#
#   scripts/gotest.sh [-j jobs] [-t default-timeout] [-b dir] [-w command -a pkg …] [-s pkg:Test …] [pkg=timeout …] [-- go test flags]
#
# pkg=timeout pairs (./cloud/azure=12m) give packages their own limit and
# run first, in the order given (slowest first keeps both jobs busy to the
# end); every other package of ./... gets the default. The limit is go
# test's -timeout: the test binary's run, not its compilation. Flags after
# -- go to every go test (e.g. -race -count=1). A failed package's whole
# -v output is printed; the exit status is 1 if any package failed.
#
# -b dir keeps each package's test binary under dir (go test -o): go
# links a test binary only when what it is built from changed, and a
# link is most of the CPU of a small package's go test (0.5 of 1.1 s)
# and seconds for the big ones; without -b every run links every package
# again.
#
# -w command runs (in the background, from the start) what the packages
# named by -a need, e.g. `scripts/packer.sh --wait`: those start only
# once it succeeded, the others go first; when it fails they fail with
# its output.
#
# -s pkg:Test shows, once pkg passed, the result line of each of Test's
# subtests (from the -v log it has anyway): e.g. the conformance cases,
# case by case, without running them a second time.
set -euo pipefail

jobs=2
default_timeout=5m
bindir=""
declare -A limit=() gated=() show=()
order=()
gate=""
while [ $# -gt 0 ]; do
	case "$1" in
	-j) jobs="$2"; shift 2 ;;
	-t) default_timeout="$2"; shift 2 ;;
	-b) mkdir -p "$2" && bindir="$(cd "$2" && pwd)"; shift 2 ;;
	-w) gate="$2"; shift 2 ;;
	-a) gated["$2"]=1; shift 2 ;;
	-s) show["${2%%:*}"]="${2#*:}"; shift 2 ;;
	--) shift; break ;;
	*=*) limit["${1%%=*}"]="${1#*=}"; order+=("${1%%=*}"); shift ;;
	*) echo "gotest.sh: unknown argument $1 (want -j N, -t DURATION, -b DIR, -w COMMAND, -a PKG, -s PKG:TEST, pkg=DURATION or --)" >&2; exit 2 ;;
	esac
done
go_flags=("$@")
every="${PROGRESS_EVERY:-60}"
grace="${GATE_GRACE:-15}"
go="${GO:-go}"

module="$("$go" list -m)"
listed="$("$go" list ./...)" # fails the script when go list does
mapfile -t all <<<"$listed"
# Packages as ./rel paths, those with their own limit first.
pkgs=("${order[@]}")
for p in "${all[@]}"; do
	r=".${p#"$module"}"
	[ -n "${limit[$r]+x}" ] || pkgs+=("$r")
done
known=" ${all[*]} "
for r in "${order[@]}"; do
	[[ "$known" == *" $module${r#.} "* ]] || { echo "gotest.sh: $r is not a package of this module (see the Makefile's TEST_TIMEOUTS)" >&2; exit 2; }
done

logs="$(mktemp -d)"
declare -A started=() pid_pkg=()
failed=()
start_all=$SECONDS
# The gate: "" none or passed, "running", "failed".
gate_state=""
gate_pid=""
if [ -n "$gate" ] && [ ${#gated[@]} -gt 0 ]; then
	(
		code=0
		bash -c "$gate" >"$logs/gate.log" 2>&1 || code=$?
		echo "$code" >"$logs/gate.rc"
	) &
	gate_pid=$!
	gate_state=running
fi
cleanup() {
	# Interrupted: stop the go test runs this script started.
	for pid in "${!pid_pkg[@]}"; do pkill -P "$pid" 2>/dev/null || true; done
	[ -n "$gate_pid" ] && pkill -P "$gate_pid" 2>/dev/null || true
	rm -rf "$logs"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

logfile() { echo "$logs/$(echo "$1" | tr '/.' '__').log"; }
rcfile() { echo "$(logfile "$1").rc"; }
timeout_of() { echo "${limit[$1]:-$default_timeout}"; }
dur() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# binflags prints go test's -o for pkg's test binary under bindir (named
# as go test names it: the package's last element .test), if -b was given.
binflags() {
	[ -n "$bindir" ] || return 0
	local rel="${1#./}"
	rel="${rel%/}"
	[ -n "$rel" ] && [ "$rel" != . ] || rel=root
	echo "-o"
	echo "$bindir/$rel/$(basename "$rel").test"
}

launch() {
	local pkg="$1" bin
	mapfile -t bin < <(binflags "$pkg")
	(
		code=0
		"$go" test "${go_flags[@]}" ${bin[@]+"${bin[@]}"} -v -timeout "$(timeout_of "$pkg")" "$pkg" >"$(logfile "$pkg")" 2>&1 || code=$?
		echo "$code" >"$(rcfile "$pkg")"
	) &
	pid_pkg[$!]="$pkg"
	started[$pkg]=$SECONDS
}

# finish reports one ended package from its log.
finish() {
	local pkg="$1" code="$2" log
	log="$(logfile "$pkg")"
	local took=$((SECONDS - ${started[$pkg]}))
	if [ "$code" -eq 0 ]; then
		if grep -q '^ok ' "$log"; then
			# go test's own time is the tests' run, without compiling.
			echo "ok    $pkg $(dur $took) (tests $(awk '/^ok /{print $3}' "$log"), limit $(timeout_of "$pkg"))"
			if [ -n "${show[$pkg]+x}" ]; then
				echo "      ${show[$pkg]} case by case:"
				grep -E "^ *--- (PASS|SKIP|FAIL): ${show[$pkg]}/" "$log" | sed 's/^/      /' || true
			fi
		else
			echo "--    $pkg (no tests)"
		fi
		return
	fi
	failed+=("$pkg")
	echo "FAIL  $pkg after $(dur $took); its whole output:"
	sed 's/^/    /' "$log"
	if grep -q '^panic: test timed out after' "$log"; then
		echo "FAIL  $pkg: its tests ran longer than its limit of $(timeout_of "$pkg") (the Makefile's TEST_TIMEOUT / TEST_TIMEOUTS): make the slow test faster (see 'running tests:' above) rather than the limit longer"
	fi
}

# progress prints the packages still running and the test each is in.
progress() {
	local now=$((SECONDS - start_all)) line="" pkg cur
	for pkg in "${pid_pkg[@]}"; do
		cur="$({ grep -E '^=== (RUN|CONT)' "$(logfile "$pkg")" || true; } | tail -1 | awk '{print $3}')"
		line+=" $pkg $(dur $((SECONDS - ${started[$pkg]})))/$(timeout_of "$pkg")${cur:+ in $cur};"
	done
	if [ "$gate_state" = running ]; then
		local held=0
		for pkg in "${pending[@]}"; do
			if [ -n "${gated[$pkg]+x}" ]; then held=$((held + 1)); fi
		done
		line+=" ($held waiting for $gate, ${#pending[@]} queued);"
	fi
	echo "...   $(dur $now): ${#pid_pkg[@]} running:${line%;}"
}

# gate_check notes the gate's end: its output once, and on failure the
# gated packages fail.
gate_check() {
	[ "$gate_state" = running ] && [ -f "$logs/gate.rc" ] || return 0
	wait "$gate_pid" || true
	if [ "$(cat "$logs/gate.rc")" -eq 0 ]; then
		gate_state=""
		sed 's/^/      /' "$logs/gate.log"
		echo "ok    $gate ($(dur $((SECONDS - start_all))))"
	else
		gate_state=failed
		echo "FAIL  $gate, needed by ${!gated[*]}; its output:"
		sed 's/^/    /' "$logs/gate.log"
	fi
}

# pick prints the index in pending of the next package to start: the
# first one not waiting for the gate; none (status 1) when all wait.
pick() {
	local i
	for i in "${!pending[@]}"; do
		if [ "$gate_state" != running ] || [ -z "${gated[${pending[$i]}]+x}" ]; then
			echo "$i"
			return 0
		fi
	done
	return 1
}

# slots prints how many packages may run now. During the gate's first
# GATE_GRACE seconds (default 15) the slots of the gated packages among
# the next jobs to start stay free: when the tool is installed already
# the gate passes within seconds, and the slowest packages, which come
# first and are gated (they run packer), then start first as ordered
# rather than after whichever ungated package took their slot (a warm
# make test started cmd/imgflow, its longest, 30 s late). A gate that
# takes longer (packer still building) frees them.
slots() {
	local reserved=0 i
	if [ "$gate_state" = running ] && [ $((SECONDS - start_all)) -lt "$grace" ]; then
		for ((i = 0; i < jobs && i < ${#pending[@]}; i++)); do
			if [ -n "${gated[${pending[$i]}]+x}" ]; then reserved=$((reserved + 1)); fi
		done
	fi
	echo $((jobs - reserved))
}

pending=("${pkgs[@]}")
last_progress=$SECONDS
while [ ${#pending[@]} -gt 0 ] || [ ${#pid_pkg[@]} -gt 0 ]; do
	gate_check
	while [ ${#pending[@]} -gt 0 ] && [ ${#pid_pkg[@]} -lt "$(slots)" ] && i="$(pick)"; do
		pkg="${pending[$i]}"
		unset "pending[$i]"
		pending=("${pending[@]}")
		if [ "$gate_state" = failed ] && [ -n "${gated[$pkg]+x}" ]; then
			failed+=("$pkg")
			echo "FAIL  $pkg: not run, $gate failed (above)"
			continue
		fi
		launch "$pkg"
	done
	# Reap whatever ended; poll once a second so progress lines keep time.
	for pid in "${!pid_pkg[@]}"; do
		pkg="${pid_pkg[$pid]}"
		if [ -f "$(rcfile "$pkg")" ]; then
			wait "$pid" || true
			unset "pid_pkg[$pid]"
			finish "$pkg" "$(cat "$(rcfile "$pkg")")"
		fi
	done
	if [ $((SECONDS - last_progress)) -ge "$every" ] && { [ ${#pid_pkg[@]} -gt 0 ] || [ "$gate_state" = running ]; }; then
		progress
		last_progress=$SECONDS
	fi
	if [ ${#pid_pkg[@]} -gt 0 ] || [ "$gate_state" = running ]; then
		sleep 1
	fi
done

# failures prints, from a failed package's -v log, only the output of its
# failed tests (the lines after each === RUN/CONT of a failed test, up to
# the next header), or the log's end when no test failed by name (a panic,
# a build error). Repeated at the very end so that a log cut in the middle
# still shows why the run failed.
failures() {
	awk -v max=200 '
		{ tail[++t] = $0 }
		/^=== (RUN|CONT|PAUSE|NAME) / { cur = $3; next }
		/^ *--- FAIL: / { order[++n] = $3 }
		/^ *--- (PASS|SKIP): / { next }
		cur != "" { out[cur] = out[cur] "      " $0 "\n" }
		END {
			printed = 0
			for (i = 1; i <= n; i++) {
				name = order[i]
				if (seen[name]++ || out[name] == "") continue
				s = "    " name ":\n" out[name]
				if (printed + split(s, lines, "\n") > max) { print "    (more cut; the whole log is above)"; break }
				printf "%s", s; printed += length(lines)
			}
			if (n == 0) for (i = (t > 40 ? t - 40 : 1); i <= t; i++) print "    " tail[i]
		}' "$(logfile "$1")"
}

total=$(dur $((SECONDS - start_all)))
if [ ${#failed[@]} -gt 0 ]; then
	for pkg in "${failed[@]}"; do
		if [ ! -f "$(logfile "$pkg")" ]; then
			echo "FAIL  $pkg: not run, $gate failed"
			continue
		fi
		echo "FAIL  $pkg, its failed tests:"
		failures "$pkg"
	done
	echo "FAIL  ${#failed[@]} of ${#pkgs[@]} packages in $total: ${failed[*]}"
	exit 1
fi
echo "PASS  ${#pkgs[@]} packages in $total"
