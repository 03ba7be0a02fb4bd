#!/usr/bin/env bash
# Follows README.md and WORKFLOWS.md as a newcomer would, on a fresh clone:
# builds imgflow, puts it on PATH with make install (GOBIN in the clone),
# then runs every ```sh block of both files as written, in order, except
# those that run the whole test suites or need a real Azure subscription.
# The emulator section runs when Azurite is installed (make deps, or
# TOOLS=DIR pointing at a .tools with it).
#
#   scripts/fresh-clone-check.sh [REPO]      # default: this repository's HEAD
set -euo pipefail
src=${1:-$(git rev-parse --show-toplevel)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$src" "$work/imgflow"
cd "$work/imgflow"
echo "fresh clone of $src at $(git rev-parse --short HEAD) in $work/imgflow"
if [ -n "${TOOLS:-}" ]; then ln -s "$TOOLS" .tools; fi
export GOBIN="$work/gobin" PATH="$work/gobin:$PWD/.tools/bin:$PATH"

skip_reason() {
	case "$1" in
	*"--target azure"*"--journal"*|*'--subscription "$SUB"'*) echo "needs a real Azure subscription" ;;
	*imgflow-emulator*) [ -x .tools/azurite/node_modules/.bin/azurite ] || echo "Azurite is not installed (make deps)" ;;
	*"git clone https://"*) online || echo "clones from GitHub, which this machine cannot reach" ;;
	esac
}

# online: GitHub answers (the upstream checkouts' blocks clone from it).
online() { git ls-remote -q https://github.com/Azure/AgentBaker HEAD >/dev/null 2>&1; }

pass=0 fail=0 skipped=0
for doc in README.md WORKFLOWS.md; do
	n=0
	while IFS= read -r -d '' block; do
		n=$((n + 1))
		why=$(skip_reason "$block")
		if [ -n "$why" ]; then
			echo "SKIP $doc#$n: $why"
			skipped=$((skipped + 1))
			continue
		fi
		# The test suites are the lead's to run (make test): their lines
		# are left out, the rest of the block runs.
		block=$(grep -vE '^(make test|go test)( |$)' <<<"$block" || true)
		if out=$(timeout 900 bash -e -c "$block" 2>&1); then
			echo "PASS $doc#$n: $(head -1 <<<"$block")"
			pass=$((pass + 1))
		else
			echo "FAIL $doc#$n:"
			sed 's/^/    | /' <<<"$block"
			tail -20 <<<"$out" | sed 's/^/    > /'
			fail=$((fail + 1))
		fi
	done < <(awk '/^```(sh|bash)$/ {f = 1; b = ""; next} f && /^```/ {f = 0; printf "%s%c", b, 0; next} f {b = b $0 "\n"}' "$doc")
done
echo "fresh clone: $pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
