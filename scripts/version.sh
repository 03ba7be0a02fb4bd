#!/bin/sh
# Prints imgflow's version for `make build` / `make install`
# (-X main.version): the tag at HEAD, else the Go pseudo-version of HEAD
# (what `go install github.com/imgflow/imgflow/cmd/imgflow@VERSION`
# accepts), "+dirty" when the tree has changes; "dev" outside git.
set -eu
git rev-parse --git-dir >/dev/null 2>&1 || { echo dev; exit 0; }
if tag=$(git describe --tags --exact-match HEAD 2>/dev/null); then
	v=$tag
else
	when=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD)
	v="v0.0.0-$when-$(git rev-parse --short=12 HEAD)"
fi
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	v="$v+dirty"
fi
echo "$v"
