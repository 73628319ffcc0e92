#!/bin/bash
# Real block devices: loop devices with 512- and 4096-byte sectors over
# files of odd sizes, copied device->device, device->file, file->device,
# stdin->device and device->stdout; every result checked byte by byte
# against address-stamped data, and the records lines against GNU dd.
. "$(dirname "$0")/../lib.sh"
requires_root

MiB=1048576
# 512-byte sectors over 8 MiB + 1000 bytes: the device holds 8 MiB + 512
"$STAMP" fill "$T/a.img" 0 $((8 * MiB + 1000)) 11
A=$(mkloop "$T/a.img" 512 2>/dev/null)
# 4096-byte sectors over 16 MiB + 512: the kernel reports the extra 512
# bytes but cannot read them; pdd must see 16 MiB
"$STAMP" fill "$T/b.img" 0 $((16 * MiB + 512)) 22
B=$(mkloop "$T/b.img" 4096)
"$STAMP" fill "$T/c.img" 0 $((16 * MiB)) 33
C=$(mkloop "$T/c.img" 4096)
"$STAMP" fill "$T/d.img" 0 $((16 * MiB)) 44
D=$(mkloop "$T/d.img" 512)

# --- device -> file: the 4Kn tail is not copied, bs defaults to 4096
run_pdd if="$B" of="$T/b.out"
expect_rc 0
expect_err "4096+0 records in"
expect_err "4096+0 records out"
[ "$(stat -c %s "$T/b.out")" = $((16 * MiB)) ] || fail "4Kn copy is $(stat -c %s "$T/b.out") bytes"
"$STAMP" check "$T/b.out" 0 $((16 * MiB)) 22 0 || fail "4Kn device -> file"
# GNU dd itself fails with EINVAL on the unreachable tail, so give it count=
dd if="$B" of="$T/b.dd" bs=4096 count=4096 iflag=direct 2>"$T/dd.err" || fail "dd read of $B"
grep " records " "$T/dd.err" | cmp -s - <(grep " records " "$T/err") || fail "records differ from dd"

# count= past the rounded end: the kernel shortens the 4096-byte read to
# the 512 bytes it believes are there, then refuses it as misaligned; the
# EINVAL is reported as the alignment problem it is, by every engine
run_pdd if="$B" of="$T/b.tail" skip=4095 count=2 bpt=1
expect_rc 15
expect_err "pdd: error reading '$B' at block 4096: Invalid argument"
expect_err "pdd: '$B' refused direct I/O of 4096 bytes at byte 16777216 although it reports a 4096-byte alignment; iflag=nodirect copies through the page cache"
expect_err "pdd: 4096 bytes are copied: input below block 4096 is in output below block 1"
"$STAMP" check "$T/b.tail" 0 4096 22 $((4095 * 4096)) || fail "block before the unreachable tail"

# the 512-byte device rounds 8 MiB + 1000 down to 8 MiB + 512
run_pdd if="$A" of="$T/a.out" threads=7 bpt=5
expect_rc 0
expect_err "16385+0 records in"
[ "$(stat -c %s "$T/a.out")" = $((8 * MiB + 512)) ] || fail "512 copy size"
"$STAMP" check "$T/a.out" 0 $((8 * MiB + 512)) 11 0 || fail "512 device -> file"

# --- device -> device, 4Kn to 4Kn, with skip and seek in 4096 blocks
run_pdd if="$B" of="$C" skip=3 seek=5 count=1000 threads=8 bpt=3
expect_rc 0
expect_err "1000+0 records out"
"$STAMP" check "$C" $((5 * 4096)) $((1000 * 4096)) 22 $((3 * 4096)) 4096 || fail "4Kn -> 4Kn range"
"$STAMP" check "$C" 0 $((5 * 4096)) 33 0 4096 || fail "4Kn -> 4Kn: blocks before seek touched"
"$STAMP" check "$C" $((1005 * 4096)) $((16 * MiB - 1005 * 4096)) 33 $((1005 * 4096)) 4096 ||
	fail "4Kn -> 4Kn: blocks after the range touched"

# --- 512 -> 4Kn with bs=512: skip and seek in multiples of 8 align
run_pdd if="$A" of="$D" bs=512 skip=8 seek=16 count=4096 bpt=64 threads=3
expect_rc 0
"$STAMP" check "$D" $((16 * 512)) $((4096 * 512)) 11 $((8 * 512)) || fail "512 -> 512 range"
run_pdd if="$D" of="$C" bs=512 skip=16 seek=8 count=4096 bpt=16 threads=16
expect_rc 0
"$STAMP" check "$C" $((8 * 512)) $((4096 * 512)) 11 $((8 * 512)) || fail "512 -> 4Kn range"

# --- file -> device: a 1000000-byte file (not whole sectors) onto 512s
"$STAMP" fill "$D" 0 $((16 * MiB)) 44
"$STAMP" fill "$T/f" 0 1000000 55
run_pdd if="$T/f" of="$D" threads=4
expect_rc 0
expect_err "1953+1 records in"
expect_err "1953+1 records out"
"$STAMP" check "$D" 0 1000000 55 0 || fail "file -> device"
"$STAMP" check "$D" 1000000 $((16 * MiB - 1000000)) 44 1000000 || fail "file -> device: tail touched"

# --- stdin -> device, through a pipe
"$STAMP" fill "$C" 0 $((16 * MiB)) 33
head -c $((3 * MiB)) "$T/a.img" | pdd of="$C" bs=4096 seek=2 2>"$T/err" || fail "stdin -> device"
expect_err "768+0 records out"
"$STAMP" check "$C" 8192 $((3 * MiB)) 11 0 4096 || fail "stdin -> device data"
"$STAMP" check "$C" 0 8192 33 0 4096 || fail "stdin -> device: before seek"

# --- device -> stdout, into a pipe and into a file
pdd if="$A" skip=2 count=100 2>"$T/err" | cmp - <(head -c $((102 * 512)) "$T/a.img" | tail -c $((100 * 512))) ||
	fail "device -> stdout pipe"
pdd if="$B" >"$T/stdout.out" 2>"$T/err" || fail "device -> stdout file"
"$STAMP" check "$T/stdout.out" 0 $((16 * MiB)) 22 0 || fail "device -> stdout file data"

# --- the same device as stdin (reopened for direct I/O)
pdd of="$T/stdin.out" <"$B" 2>"$T/err" || fail "device on stdin"
"$STAMP" check "$T/stdin.out" 0 $((16 * MiB)) 22 0 || fail "device on stdin data"
echo "loop device copies exact"
