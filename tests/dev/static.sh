#!/bin/bash
# engines: threads
# make static, and its pdd on a rescue system: a root holding nothing but
# that binary, the two loop devices' nodes, and /proc and /sys mounted (in
# a mount namespace of its own, so nothing outlives the test).  There it
# prints its version and copies one loop device onto the other
# byte-identically with io_uring, libaio and threads; the guard refuses a
# mounted output there (read by pdd itself where libmount has no static
# archive), and any output when /proc is not mounted.
# The sg engine is compiled in and --version lists it; the sg double
# (tests/sgdouble) is an LD_PRELOAD library, which a static binary never
# loads, so the copy through it is not tried here.
. "$(dirname "$0")/../lib.sh"
requires_root
command -v chroot >/dev/null && command -v unshare >/dev/null || skip "needs chroot and unshare"
[[ $(${CC:-cc} -print-file-name=libc.a) == /* ]] || skip "no static libc (libc6-dev)"

# this tree's sources, built in $T (the tree's own build is not touched)
mkdir "$T/b"
ln -s "$top/src" "$T/b/src"
ln -s "$top/include" "$T/b/include"
start=$SECONDS
make -C "$T/b" -f "$top/Makefile" -j2 static >"$T/make.log" 2>&1 ||
	{ cat "$T/make.log"; fail "make static failed"; }
echo "make static: $((SECONDS - start)) s"
static=$T/b/pdd-static
size=$(stat -c %s "$static")
grep -qx "  pdd-static: $size bytes" "$T/make.log" || { cat "$T/make.log"; fail "make static did not print the size"; }
echo "pdd-static: $size bytes"
readelf -l "$static" | grep -q INTERP && fail "pdd-static asks for a dynamic loader"
readelf -d "$static" | grep -q NEEDED && fail "pdd-static needs shared libraries"

# the engines whose archives are there, and the libraries left out, said
archive() { [[ $(${CC:-cc} -print-file-name="lib$1.a") == /* ]]; }
"$static" --version >"$T/ver" || fail "pdd-static --version"
[ "$(head -1 "$T/ver")" = "$("$PDD" --version | head -1) (static)" ] || fail "first line: $(head -1 "$T/ver")"
want=auto
archive uring && want+=", uring"
archive aio && want+=", aio"
want+=", threads"
archive sgutils2 && want+=", sg"
grep -qx "engines: $want" "$T/ver" || fail "engines: $(cat "$T/ver")"
archive sgutils2 && { grep -qE '^libsgutils2: [0-9]+\.[0-9]+ ' "$T/ver" || fail "sg support not in: $(cat "$T/ver")"; }
archive mount || grep -qx "libmount: not built (no libmount.a); pdd reads /proc's mounts and swaps itself" "$T/ver" ||
	fail "libmount: $(cat "$T/ver")"
echo "sg double: not tried, LD_PRELOAD does not reach a static binary; sg is built in: $(grep '^libsgutils2:' "$T/ver")"

# two loop devices with address-stamped data on the first
lbs=512
"$STAMP" fill "$T/a" 0 $((8 << 20)) 7
truncate -s $((8 << 20)) "$T/z"
a=$(mkloop "$T/a") || exit 1
z=$(mkloop "$T/z") || exit 1

# the rescue root: the binary, the nodes, and mount points
root=$T/root
mkdir -p "$root/dev" "$root/proc" "$root/sys"
cp "$static" "$root/pdd"
cp "$PDD" "$root/pdd-shared"
for d in "$a" "$z"; do
	mknod "$root$d" b $(stat -c '0x%t 0x%T' "$d") || fail "mknod $root$d"
done

# inroot CMD...: CMD run in $root, with /proc and /sys mounted for it
# alone (and the device $MNT on /mnt, read-only, when set: mounting it
# writes nothing to it); its stderr in $T/err and its status in $rc
inroot() {
	rc=0
	MNT=${MNT:-} unshare --mount --propagation private sh -c '
		mount -t proc proc "$0/proc" && mount -t sysfs sysfs "$0/sys" &&
		{ [ -z "$MNT" ] || mount -o ro,noload "$MNT" "$0/mnt"; } && exec chroot "$0" "$@"' \
		"$root" "$@" 2>"$T/err" || rc=$?
}

# nothing else is there: the shared pdd cannot even start
inroot /pdd-shared --version
[ "$rc" = 127 ] || fail "the shared pdd ran in the empty root (status $rc): the root is not empty"
rm "$root/pdd-shared"
inroot /pdd --version >"$T/ver.root"
expect_rc 0
cmp -s "$T/ver" "$T/ver.root" || fail "--version in the root: $(cat "$T/ver.root")"

copy() {	# copy ENGINE BS OPERANDS...: a whole copy of $a onto $z, checked
	local e=$1 bs=$2
	shift 2
	dd if=/dev/zero of="$z" bs=1M count=8 oflag=direct status=none
	inroot /pdd if="$a" of="$z" engine="$e" bs="$bs" "$@"
	expect_rc 0
	expect_err "$(((8 << 20) / bs))+0 records in"
	expect_err "$(((8 << 20) / bs))+0 records out"
	same_bytes "$T/a" "$z"
	echo "engine=$e bs=$bs${*:+ $*}: copied in the root"
}

# the guard reads the root's own /proc/self/mountinfo (through libmount,
# or guard-proc.c where libmount has no archive): a mounted output is
# refused, and so is any output where /proc is not mounted
command -v mkfs.ext4 >/dev/null || skip "needs mkfs.ext4"
mkfs.ext4 -q "$z" || fail "mkfs.ext4 $z"
cp "$z" "$T/z.fs"
mkdir "$root/mnt"
MNT=$z inroot /pdd if="$a" of="$z"
expect_rc 66
expect_err "pdd: '$z' is mounted on /mnt: pdd does not write to a mounted device"
rc=0
chroot "$root" /pdd if="$a" of="$z" 2>"$T/err" || rc=$?
expect_rc 52
expect_err "pdd: cannot read '/proc/self/mountinfo' to see whether '$z' is mounted: No such file or directory"
same_bytes "$T/z.fs" "$z"
echo "the guard refused a mounted output, and one with no /proc, in the root"

grep -q '^engines:.* uring' "$T/ver" && copy uring 512
grep -q '^engines:.* aio' "$T/ver" && copy aio 4096 qd=8
copy threads 1024 threads=3
