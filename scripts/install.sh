# Helpers for scripts/deps.sh and bench/deps.sh (sourced, not run).

# apt_install TAG PACKAGE… installs the Debian packages (none: nothing),
# as root or through sudo.
apt_install() {
	local tag="$1"
	shift
	[ $# -gt 0 ] || return 0
	local sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || { echo "$tag: need root or sudo to install $*" >&2; exit 1; }
		sudo=sudo
	fi
	echo "$tag: installing $*"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# npm_tool TAG DIR PACKAGE VERSION FILE installs PACKAGE@VERSION with npm
# into DIR (outside the module, never committed) unless FILE, relative to
# the package, exists and the installed version is VERSION. No
# package.json or lockfile is written.
npm_tool() {
	local tag="$1" dir="$2" pkg="$3" version="$4" file="$5"
	local pkg_dir="$dir/node_modules/$pkg"
	if [ -f "$pkg_dir/$file" ] && grep -q "\"version\": \"$version\"" "$pkg_dir/package.json" 2>/dev/null; then
		return 0
	fi
	echo "$tag: installing $pkg $version into ${dir#"$root"/}"
	mkdir -p "$dir"
	npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
		--prefix "$dir" "$pkg@$version" >/dev/null
	# npm keeps a hidden lockfile in node_modules even with --no-package-lock.
	rm -f "$dir/node_modules/.package-lock.json"
}
