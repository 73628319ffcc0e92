#!/bin/bash
# oflag=append.  On a regular file it appends, in order, with every
# engine; a descriptor the shell opened for appending (>>) is appended to
# the same way.  On a block device the kernel has no end to append at:
# pdd drops the flag and writes from the start, at the block positions,
# exactly as GNU dd's writes land there (every engine: io_uring once
# wrote every transfer at byte 0).
. "$(dirname "$0")/../lib.sh"
requires_root
KiB=1024

head -c 409600 /dev/urandom >"$T/src"
for sector in 512 4096; do
	truncate -s 16M "$T/disk$sector"
	dev=$(mkloop "$T/disk$sector" "$sector")
	dd if=/dev/zero of="$dev" bs=1M count=16 oflag=direct status=none
	run_pdd if="$T/src" of="$dev" bs=4096 oflag=append verbose=1
	expect_rc 0
	cmp -n 409600 "$T/src" "$dev" || fail "oflag=append to $dev ($sector-byte sectors) is not the input at byte 0"
	expect_err "pdd: '$dev' is a block device: oflag=append applies to regular files only; writing from the start of the range"
	expect_err "100+0 records out"
	# GNU dd puts the same bytes in the same place
	dd if=/dev/zero of="$dev" bs=1M count=16 oflag=direct status=none
	dd if="$T/src" of="$dev" bs=4096 oflag=append status=none || fail "dd"
	cmp -n 409600 "$T/src" "$dev" || fail "GNU dd does not agree"
done

# a regular file: what it held, then the input
for direct in "" ",direct"; do
	head -c $((64 * KiB)) /dev/urandom >"$T/out"
	cat "$T/out" "$T/src" >"$T/want"
	run_pdd if="$T/src" of="$T/out" bs=4096 bpt=4 "oflag=append$direct"
	expect_rc 0
	same_bytes "$T/want" "$T/out"
done

# >> : the shell's O_APPEND descriptor, many writers: still in order
# (4 MiB: enough writes in flight that they finish out of order)
head -c $((4096 * KiB)) /dev/urandom >"$T/src"
head -c $((64 * KiB)) /dev/urandom >"$T/out"
cat "$T/out" "$T/src" >"$T/want"
rc=0
pdd if="$T/src" bs=512 bpt=8 threads=8 qd=32 2>"$T/err" >>"$T/out" || rc=$?
expect_rc 0
same_bytes "$T/want" "$T/out"

# what oflag=append refuses, >> refuses too: seek= and oflag=trunc
printf ABCDEF >"$T/out"
rc=0
pdd if="$T/src" seek=2 2>"$T/err" >>"$T/out" || rc=$?
expect_rc 31
expect_err "pdd: seek=2: 'standard output' is opened for appending, and appended data goes to the end"
rc=0
pdd if="$T/src" oflag=trunc 2>"$T/err" >>"$T/out" || rc=$?
expect_rc 31
expect_err "pdd: oflag=trunc: 'standard output' is opened for appending, which keeps what it holds"
[ "$(cat "$T/out")" = ABCDEF ] || fail "a refused >> copy changed the file"
echo "append: files appended to, devices written from the start"
