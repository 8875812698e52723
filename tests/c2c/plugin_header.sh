#!/bin/sh
# Get QEMU's TCG plugin API header, include/qemu/qemu-plugin.h, for the c2c plugin
# (tests/c2c/plugin.c). Debian ships it only in the qemu source package: a private apt
# configuration (tests/private_apt.sh: its own sources.list of deb-src lines, state and cache
# under DIR/apt) downloads that package and only the header is extracted. The machine's apt
# sources are left as they are; nothing is installed.
#
# usage: sh tests/c2c/plugin_header.sh DIR    (DIR/include/qemu-plugin.h is the result)
set -u
DIR=${1:?usage: plugin_header.sh DIR}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

mkdir -p "$DIR" || exit 1
DIR=$(cd "$DIR" && pwd)
LOG=$DIR/get-header.log
: >"$LOG"
say() { echo "c2c: $*"; }
fail() {
	say "FAILED: $*"
	say "full log: $LOG"
	exit 1
}

# The QEMU this machine runs, and the source version it was built from.
ver=$(dpkg-query -W -f '${source:Version}' qemu-system-x86 2>/dev/null)
[ -n "$ver" ] || fail "qemu-system-x86 is not installed (make deps)"
mirror=$(apt-cache policy 2>/dev/null | awk '$3 == "bookworm/main" && $2 ~ /^https?:/ { print $2; exit }')
[ -n "$mirror" ] || fail "no 'bookworm main' entry in this machine's apt sources (run 'apt-get update' first; is this Debian 12?)"
[ -r "$KEYRING" ] || fail "$KEYRING is missing (apt-get install debian-archive-keyring)"
security=$(echo "$mirror" | sed 's|/debian/*$|/debian-security|')

APT=$DIR/apt
. "$(dirname "$0")/../private_apt.sh"
rm -rf "$DIR/src"
private_apt "$APT" && mkdir -p "$DIR/src" "$DIR/include" || exit 1
{
	echo "deb-src [signed-by=$KEYRING] $mirror bookworm main"
	echo "deb-src [signed-by=$KEYRING] $mirror bookworm-updates main"
	echo "deb-src [signed-by=$KEYRING] $security bookworm-security main"
} >"$APT/etc/sources.list"
set -- -c "$APT/apt.conf"

say "downloading the qemu $ver source package to take include/qemu/qemu-plugin.h from it"
apt-get "$@" update >>"$LOG" 2>&1 || fail "apt-get update (private sources in $APT)"
# The installed version if the mirror still has it, else the newest 7.2 (the plugin API,
# QEMU_PLUGIN_VERSION 1, is the same in every 7.2 release).
(cd "$DIR/src" && { apt-get "$@" source --download-only "qemu=$ver" >>"$LOG" 2>&1 ||
	apt-get "$@" source --download-only qemu >>"$LOG" 2>&1; }) ||
	fail "apt-get source qemu: is Debian's mirror reachable?"
orig=$(ls "$DIR"/src/qemu_*.orig.tar.* 2>/dev/null | head -1)
[ -n "$orig" ] || fail "no orig tarball in $DIR/src"
tar -xf "$orig" -C "$DIR/src" --wildcards '*/include/qemu/qemu-plugin.h' >>"$LOG" 2>&1 ||
	fail "tar: no include/qemu/qemu-plugin.h in $orig"
cp "$DIR"/src/*/include/qemu/qemu-plugin.h "$DIR/include/qemu-plugin.h" || exit 1
grep -q 'define QEMU_PLUGIN_VERSION' "$DIR/include/qemu-plugin.h" || fail "the header has no QEMU_PLUGIN_VERSION"
rm -rf "$DIR/src" "$APT"
say "ready: $DIR/include/qemu-plugin.h ($(grep 'define QEMU_PLUGIN_VERSION' "$DIR/include/qemu-plugin.h"))"
