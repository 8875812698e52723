#!/bin/sh
# Get QEMU 10 (x2APIC under TCG: more than 255 vCPUs) from Debian's bookworm-backports into a
# private root, for `make test-big` and make test's x2APIC rows. Not an install: the machine's
# apt sources, Debian's QEMU 7.2 (which every other row of `make test` uses) and its module
# folder are left exactly as they are.
#
# usage: sh tests/qemu10.sh DIR    (DIR: build/qemu10; DIR/qemu-system-x86_64 is the result)
#
# How: a private apt configuration (tests/private_apt.sh: its own sources.list, state and cache
# under DIR/apt) that
# lists only bookworm-backports, on the same mirror as the machine's bookworm entry; `apt-get
# download` of QEMU 10's three packages and its SeaBIOS; `dpkg -x` into DIR/root. The libraries
# QEMU 10 links are all in Debian 12 itself: missing ones are installed with the machine's own
# apt configuration (`apt-get satisfy`, as root). DIR/qemu-system-x86_64 is a wrapper that runs
# the private binary with its own module folder (QEMU_MODULE_DIR) and firmware (-L): a QEMU 10
# that loads one of 7.2's modules from the system folder aborts ("Only modules from the same
# build can be loaded"). `-display none -audio none` keep it from asking for display or sound
# modules that the private root does not have (QEMU would then look in the system folder).
set -u
DIR=${1:?usage: qemu10.sh DIR}
SUITE=${QEMU10_SUITE:-bookworm-backports}	# another suite only to try the failure path
PKGS="qemu-system-x86 qemu-system-common qemu-system-data seabios"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

mkdir -p "$DIR" || exit 1
DIR=$(cd "$DIR" && pwd)
LOG=$DIR/get.log
: >"$LOG"
say() { echo "qemu10: $*"; }
fail() {
	say "FAILED: $*"
	say "full log: $LOG"
	exit 1
}

# The Debian mirror this machine already uses for bookworm main (deb822 or one-line sources).
mirror=$(apt-cache policy 2>/dev/null | awk '$3 == "bookworm/main" && $2 ~ /^https?:/ { print $2; exit }')
[ -n "$mirror" ] || fail "no 'bookworm main' entry in this machine's apt sources (run 'apt-get update' first; is this Debian 12?)"
[ -r "$KEYRING" ] || fail "$KEYRING is missing (apt-get install debian-archive-keyring)"

APT=$DIR/apt
. "$(dirname "$0")/private_apt.sh"
rm -rf "$DIR/debs" "$DIR/root" "$DIR/qemu-system-x86_64"
private_apt "$APT" && mkdir -p "$DIR/debs" "$DIR/root" || exit 1
echo "deb [signed-by=$KEYRING] $mirror $SUITE main" >"$APT/etc/sources.list"
set -- -c "$APT/apt.conf"

say "reading $SUITE from $mirror (private apt configuration in $APT)"
apt-get "$@" update >>"$LOG" 2>&1
if grep -qE '^(E|W): ' "$LOG" || ! ls "$APT/lists/"*"${SUITE}_main_binary-amd64_Packages"* >/dev/null 2>&1; then
	grep -E '^(E|W|Err):? ' "$LOG" | sed 's/^/    /'
	fail "cannot read $SUITE from $mirror: this machine cannot reach Debian's backports, so there is no QEMU 10 for make test-big"
fi
ver=$(apt-cache "$@" policy qemu-system-x86 | awk '/Candidate:/ { print $2 }')
case "$ver" in
*:10.*) ;;
*) fail "$SUITE offers qemu-system-x86 '$ver', not 10.x" ;;
esac
say "downloading $PKGS ($ver)"
(cd "$DIR/debs" && apt-get "$@" download $PKGS) >>"$LOG" 2>&1 || {
	tail -n 5 "$LOG" | sed 's/^/    /'
	fail "apt-get download"
}
for deb in "$DIR"/debs/*.deb; do
	dpkg -x "$deb" "$DIR/root" || fail "dpkg -x $deb"
done

# Libraries from Debian 12 itself: the Depends of the binaries, less the QEMU and firmware
# packages that come from the private root.
deps=$(for p in qemu-system-x86 qemu-system-common; do dpkg-deb -f "$DIR"/debs/${p}_*.deb Depends; done |
	tr ',' '\n' | sed 's/^ *//' | grep -vE '^(qemu-system-|seabios)' | paste -sd, -)
if ! apt-get -s satisfy "$deps" >"$DIR/satisfy.txt" 2>&1; then
	cat "$DIR/satisfy.txt" >>"$LOG"
	fail "Debian 12 cannot satisfy QEMU 10's libraries: $(grep '^E:' "$DIR/satisfy.txt" | head -3)"
fi
need=$(awk '/^Inst / { print $2 }' "$DIR/satisfy.txt" | paste -sd' ' -)
if [ -n "$need" ]; then
	[ "$(id -u)" = 0 ] || fail "QEMU 10 needs these Debian 12 packages; as root: apt-get install $need"
	say "installing Debian 12 libraries it needs: $need"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $need >>"$LOG" 2>&1 ||
		fail "apt-get install $need"
fi

R=$DIR/root
missing=$(ldd "$R/usr/bin/qemu-system-x86_64" | grep 'not found')
[ -z "$missing" ] || fail "libraries not found: $missing"
cat >"$DIR/qemu-system-x86_64" <<EOF
#!/bin/sh
# QEMU $ver from $SUITE, private to this build (made by tests/qemu10.sh).
QEMU_MODULE_DIR='$R/usr/lib/x86_64-linux-gnu/qemu' exec '$R/usr/bin/qemu-system-x86_64' \\
	-L '$R/usr/share/seabios' -L '$R/usr/share/qemu' -display none -audio none "\$@"
EOF
chmod +x "$DIR/qemu-system-x86_64"
got=$("$DIR/qemu-system-x86_64" --version 2>&1 | head -1)
case "$got" in
*"version 10."*) say "ready: $DIR/qemu-system-x86_64 ($got)" ;;
*) rm -f "$DIR/qemu-system-x86_64"; fail "the private QEMU does not run: $got" ;;
esac
