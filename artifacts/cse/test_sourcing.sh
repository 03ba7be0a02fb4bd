#!/usr/bin/env bash
# Proves the CSE parent's sourcing rule both ways, for every module beside
# it (cse_config_*.sh):
#   - a path variable that is unset or empty → the sibling named like the
#     parent: cse_config_gpu.sh in the tree, provision_configs_gpu.sh on the
#     node;
#   - a path variable that is set → that file, even when the sibling exists;
#   - a module that cannot be found → sourcing the parent fails.
# Run by artifacts/artifacts_test.go; run it by hand with
#   bash artifacts/cse/test_sourcing.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

modules=()
for f in "$here"/cse_config_*.sh; do
	m="${f##*/cse_config_}"
	modules+=("${m%.sh}")
done
[ "${#modules[@]}" -gt 0 ] || fail "no cse_config_*.sh modules beside $here/cse_config.sh"

upper() { printf '%s' "$1" | tr '[:lower:]' '[:upper:]'; }

# load PARENT [VAR=value ...]: sources PARENT in a clean bash with only the
# given variables, printing "module=path it was loaded from" per module.
load() {
	local parent="$1"
	shift
	env -i PATH="$PATH" "$@" bash -c '
		set -e
		source "$1" >/dev/null
		shift
		for m in "$@"; do
			var="CSE_CONFIG_$(printf "%s" "$m" | tr "[:lower:]" "[:upper:]")_LOADED_FROM"
			printf "%s=%s\n" "$m" "${!var:-}"
		done
	' load "$parent" "${modules[@]}"
}

# expect LABEL OUTPUT MODULE=PATH...: every module loaded from its path.
expect() {
	local label="$1" out="$2"
	shift 2
	local want
	for want in "$@"; do
		grep -qxF -- "$want" <<<"$out" || fail "$label: want $want, got:
$out"
	done
	echo "ok: $label"
}

# 1. The source tree: siblings by source name.
wants=()
for m in "${modules[@]}"; do wants+=("$m=$here/cse_config_$m.sh"); done
expect "tree, variables unset → cse_config_<module>.sh siblings" "$(load "$here/cse_config.sh")" "${wants[@]}"

empty=()
for m in "${modules[@]}"; do empty+=("CSE_CONFIG_$(upper "$m")_FILEPATH="); done
expect "tree, variables empty → siblings" "$(load "$here/cse_config.sh" "${empty[@]}")" "${wants[@]}"

# 2. The node: installed under runtime names.
node="$work/node"
mkdir -p "$node"
cp "$here/cse_config.sh" "$node/provision_configs.sh"
wants=()
for m in "${modules[@]}"; do
	cp "$here/cse_config_$m.sh" "$node/provision_configs_$m.sh"
	wants+=("$m=$node/provision_configs_$m.sh")
done
expect "node, variables unset → provision_configs_<module>.sh siblings" "$(load "$node/provision_configs.sh")" "${wants[@]}"

# 3. Explicit paths win over the siblings, which still exist.
hotfix="$work/hotfix"
mkdir -p "$hotfix"
vars=()
wants=()
for m in "${modules[@]}"; do
	cp "$here/cse_config_$m.sh" "$hotfix/newer-$m.sh"
	vars+=("CSE_CONFIG_$(upper "$m")_FILEPATH=$hotfix/newer-$m.sh")
	wants+=("$m=$hotfix/newer-$m.sh")
done
expect "node, every variable set → the explicit paths" "$(load "$node/provision_configs.sh" "${vars[@]}")" "${wants[@]}"

# 4. One explicit path, the others siblings.
first="${modules[0]}"
wants=("$first=$hotfix/newer-$first.sh")
for m in "${modules[@]:1}"; do wants+=("$m=$node/provision_configs_$m.sh"); done
expect "node, only $first set → it explicit, the others siblings" \
	"$(load "$node/provision_configs.sh" "CSE_CONFIG_$(upper "$first")_FILEPATH=$hotfix/newer-$first.sh")" "${wants[@]}"

# 5. A module that cannot be sourced fails the parent.
if load "$node/provision_configs.sh" "CSE_CONFIG_$(upper "$first")_FILEPATH=$work/missing.sh" >/dev/null 2>&1; then
	fail "an explicit path to a missing module must fail the parent"
fi
echo "ok: explicit path to a missing module fails"
last="${modules[${#modules[@]}-1]}"
rm "$node/provision_configs_$last.sh"
if load "$node/provision_configs.sh" >/dev/null 2>&1; then
	fail "a missing sibling module must fail the parent"
fi
echo "ok: missing sibling $last fails"
echo "PASS: ${#modules[@]} modules (${modules[*]})"
