#!/bin/bash
# What would only fail once the copy ran is refused before anything is
# written, in the dry run too: a read-only output device, a new output
# file where none can be made, a new regular file under /dev (a mistyped
# device name), and an oflag=trunc copy whose memory cannot be had (the
# file is not cut first).  A small copy never asks for more memory than
# it has bytes.
. "$(dirname "$0")/../lib.sh"
requires_root
MiB=1048576

"$STAMP" fill "$T/src" 0 $((2 * MiB)) 8
"$STAMP" fill "$T/disk" 0 $((4 * MiB)) 9
before=$(sha256sum <"$T/disk")

# losetup -r: opening it for writing works, every write fails
RO=$(losetup --find --show --read-only "$T/disk") || fail "losetup -r"
echo "$RO" >>"$T/.loops"
for dry in --dry-run ""; do
	run_pdd if="$T/src" of="$RO" $dry
	expect_rc 80
	expect_err "pdd: cannot open '$RO' for writing: Read-only file system"
	[ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err"; fail "more than the refusal was said"; }
done
[ "$(sha256sum <"$T/disk")" = "$before" ] || fail "the read-only device changed"
# reading it is fine
run_pdd if="$RO" of="$T/copy" count=8
expect_rc 0

# a new file on a read-only file system, or in a directory that is not there
mktmpfs "$T/ro" 1m
mount -o remount,ro "$T/ro" || fail "cannot make the tmpfs read-only"
for dry in --dry-run ""; do
	run_pdd if="$T/src" of="$T/ro/new" $dry
	expect_rc 80
	expect_err "pdd: cannot create '$T/ro/new': Read-only file system"
	run_pdd if="$T/src" of="$T/nodir/new" $dry
	expect_rc 52
	expect_err "pdd: cannot create '$T/nodir/new': No such file or directory"
done
[ ! -e "$T/ro/new" ] && [ ! -e "$T/nodir" ] || fail "something was created"

# a device name that does not exist: no regular file in /dev
typo=/dev/pdd-test-no-such-disk-$$
for dry in --dry-run ""; do
	run_pdd if="$T/src" of="$typo" $dry
	expect_rc 52
	expect_err "pdd: '$typo' does not exist, and pdd makes no regular file under /dev: is the device name right? (oflag=force makes the file)"
	[ ! -e "$typo" ] || { rm -f "$typo"; fail "a file was made in /dev"; }
done
# the same through a path that resolves into /dev
run_pdd if="$T/src" of="/dev/../dev/./pdd-test-no-such-disk-$$"
expect_rc 52
[ ! -e "$typo" ] || { rm -f "$typo"; fail "a file was made in /dev"; }
# oflag=force makes it, when that is really what is wanted
run_pdd if="$T/src" of="$typo" oflag=force count=8
rc_force=$rc
rm -f "$typo"
[ "$rc_force" = 0 ] || { cat "$T/err"; fail "oflag=force did not make the file"; }
# a regular file an earlier typo left in /dev is not written again
touch "$typo"
run_pdd if="$T/src" of="$typo"
rc_typo=$rc
size=$(stat -c %s "$typo")
rm -f "$typo"
[ "$rc_typo" = 65 ] && [ "$size" = 0 ] || { cat "$T/err"; fail "a regular file in /dev was written (status $rc_typo)"; }
expect_err "pdd: '$typo' is a regular file under /dev, not a device: is the device name right? (oflag=force writes it)"
# /dev/shm is a file system of its own, where files belong
if mountpoint -q /dev/shm; then
	run_pdd if="$T/src" of="/dev/shm/pdd-test-$$" count=8
	rm -f "/dev/shm/pdd-test-$$"
	expect_rc 0
fi

# oflag=trunc and no memory for the buffers: the file is not cut
truncate -s 2G "$T/big"
"$STAMP" fill "$T/tr" 0 $MiB 10
rc=0
(ulimit -v 400000; exec "$PDD" if="$T/big" of="$T/tr" bs=512M oflag=trunc ${PDD_ENGINE:+engine=$PDD_ENGINE}) 2>"$T/err" || rc=$?
expect_rc 99
expect_err "pdd: cannot allocate 1 buffers of 1073741824 bytes: Cannot allocate memory"
"$STAMP" check "$T/tr" 0 $MiB 10 0 || fail "oflag=trunc cut the file although the copy could not start"

# a 2 MiB copy with bs=1G takes 2 MiB of buffer, not 1 GiB
rm -f "$T/copy"
rc=0
(ulimit -v 400000; exec "$PDD" if="$T/src" of="$T/copy" bs=1G ${PDD_ENGINE:+engine=$PDD_ENGINE}) 2>"$T/err" || rc=$?
expect_rc 0
expect_err "0+1 records out"
same_bytes "$T/src" "$T/copy"
echo "refused before writing: read-only outputs, impossible new files, /dev typos"
