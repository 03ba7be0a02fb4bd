#!/usr/bin/env bash
# Compares the jobs of an AgentBaker checkout's release pipeline with the
# jobs of releases/aks.star (the workflow's `job =` names):
#
#   scripts/agentbaker-jobs.sh third_party/AgentBaker [releases/aks.star]
#
# prints "missing from RELEASE: NAME" for each pipeline job the release
# file lacks and "not in the pipeline: NAME" for each job it has that the
# pipeline no longer has; exits 1 when there is either, 0 when the lists
# are equal.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 AGENTBAKER_CHECKOUT [RELEASE_FILE]" >&2
	exit 2
fi
checkout=$1
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
release=${2:-$root/releases/aks.star}
pipeline=$checkout/.pipelines/.vsts-vhd-builder-release.yaml
if [ ! -f "$pipeline" ]; then
	echo "$checkout is not an AgentBaker checkout (no .pipelines/.vsts-vhd-builder-release.yaml): git clone https://github.com/Azure/AgentBaker $checkout" >&2
	exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A pipeline job is a "- job: NAME" line.
sed -nE 's/^[[:space:]]*- job:[[:space:]]*([A-Za-z0-9_]+).*/\1/p' "$pipeline" | sort -u >"$tmp/pipeline"
# The release file lists them as quoted names in JOBS.
sed -nE 's/^[[:space:]]*"([A-Za-z0-9_]+)",[[:space:]]*(#.*)?$/\1/p' "$release" | sort -u >"$tmp/release"

status=0
while read -r name; do
	echo "missing from $release: $name"
	status=1
done < <(comm -23 "$tmp/pipeline" "$tmp/release")
while read -r name; do
	echo "not in the pipeline: $name"
	status=1
done < <(comm -13 "$tmp/pipeline" "$tmp/release")
if [ $status -eq 0 ]; then
	echo "$release has the $(wc -l <"$tmp/pipeline") jobs of $pipeline"
fi
exit $status
