#!/usr/bin/env bash
# Runs `go test` package by package, each with its own -timeout, and says
# what is going on while it runs: a line per finished package, and every
# PROGRESS_EVERY seconds (default 60) the packages still running, how long
# they have run against their limit and the test each is in. A package
# that passes its limit fails with the limit named, rather than the whole
# run hanging silently until one global timeout.
#
#   scripts/gotest.sh [-j jobs] [-t default-timeout] [pkg=timeout …] [-- go test flags]
#
# pkg=timeout pairs (./cloud/azure=12m) give packages their own limit and
# run first, in the order given (slowest first keeps both jobs busy to the
# end); every other package of ./... gets the default. The limit is go
# test's -timeout: the test binary's run, not its compilation. Flags after
# -- go to every go test (e.g. -race -count=1). A failed package's whole
# -v output is printed; the exit status is 1 if any package failed.
set -euo pipefail

jobs=2
default_timeout=5m
declare -A limit=()
order=()
while [ $# -gt 0 ]; do
	case "$1" in
	-j) jobs="$2"; shift 2 ;;
	-t) default_timeout="$2"; shift 2 ;;
	--) shift; break ;;
	*=*) limit["${1%%=*}"]="${1#*=}"; order+=("${1%%=*}"); shift ;;
	*) echo "gotest.sh: unknown argument $1 (want -j N, -t DURATION, pkg=DURATION or --)" >&2; exit 2 ;;
	esac
done
go_flags=("$@")
every="${PROGRESS_EVERY:-60}"
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
cleanup() {
	# Interrupted: stop the go test runs this script started.
	for pid in "${!pid_pkg[@]}"; do pkill -P "$pid" 2>/dev/null || true; done
	rm -rf "$logs"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

logfile() { echo "$logs/$(echo "$1" | tr '/.' '__').log"; }
rcfile() { echo "$(logfile "$1").rc"; }
timeout_of() { echo "${limit[$1]:-$default_timeout}"; }
dur() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

launch() {
	local pkg="$1"
	(
		code=0
		"$go" test "${go_flags[@]}" -v -timeout "$(timeout_of "$pkg")" "$pkg" >"$(logfile "$pkg")" 2>&1 || code=$?
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
	echo "...   $(dur $now): ${#pid_pkg[@]} running:${line%;}"
}

next=0
last_progress=$SECONDS
while [ $next -lt ${#pkgs[@]} ] || [ ${#pid_pkg[@]} -gt 0 ]; do
	while [ $next -lt ${#pkgs[@]} ] && [ ${#pid_pkg[@]} -lt "$jobs" ]; do
		launch "${pkgs[$next]}"
		next=$((next + 1))
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
	if [ $((SECONDS - last_progress)) -ge "$every" ] && [ ${#pid_pkg[@]} -gt 0 ]; then
		progress
		last_progress=$SECONDS
	fi
	[ ${#pid_pkg[@]} -gt 0 ] && sleep 1
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
		echo "FAIL  $pkg, its failed tests:"
		failures "$pkg"
	done
	echo "FAIL  ${#failed[@]} of ${#pkgs[@]} packages in $total: ${failed[*]}"
	exit 1
fi
echo "PASS  ${#pkgs[@]} packages in $total"
