#!/bin/sh
# setup.sh: install what kvplan needs to build (Debian packages, only those
# missing), then bootstrap, configure and build it in place.
#   scripts/setup.sh [configure options...]
set -eu
cd "$(dirname "$0")/.."

need=""
for pkg in build-essential autoconf automake pkgconf libyaml-dev check gnuplot-nox libxml2-utils; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || need="$need $pkg"
done
if [ -n "$need" ]; then
	echo "setup: installing$need"
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need >/dev/null
fi

[ -x configure ] && [ configure -nt configure.ac ] && [ Makefile.in -nt Makefile.am ] || ./bootstrap
[ -f Makefile ] && [ config.status -nt configure ] || ./configure "$@"
make -j"$(nproc 2>/dev/null || echo 2)"
echo "setup: built ./kvplan and ./kvbench"
