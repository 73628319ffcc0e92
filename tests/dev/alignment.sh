#!/bin/bash
# Direct I/O alignment is checked before anything is written: a skip,
# seek or transfer size that a 4096-byte-sector device can never take is
# refused with a message naming the operand and the multiple it needs,
# the destination is left as it was, and no output file is created.
# With nodirect the same operands copy exactly (through the page cache).
. "$(dirname "$0")/../lib.sh"
requires_root

MiB=1048576
"$STAMP" fill "$T/src.img" 0 $((4 * MiB)) 1
S=$(mkloop "$T/src.img" 4096)
"$STAMP" fill "$T/dst.img" 0 $((4 * MiB)) 2
D=$(mkloop "$T/dst.img" 4096)
before=$(md5sum <"$D")

refused() {	# refused MESSAGE: exit 31, exact message, nothing written
	expect_rc 31
	expect_err "$1"
	[ "$(md5sum <"$D")" = "$before" ] || fail "destination changed by a refused copy"
	[ ! -e "$T/new" ] || fail "a refused copy created its output file"
}

run_pdd if="$S" of="$T/new" bs=512 skip=1
refused "pdd: skip=1: offset 512 of '$S' is not a multiple of its logical block size 4096; with bs=512 skip= must be a multiple of 8"

run_pdd if="$T/src.img" of="$D" bs=512 seek=12
refused "pdd: seek=12: offset 6144 of '$D' is not a multiple of its logical block size 4096; with bs=512 seek= must be a multiple of 8"

run_pdd if="$S" of="$D" bs=512 bpt=1
refused "pdd: bs=512 bpt=1: a transfer of 512 bytes is not a multiple of the logical block size 4096 of '$S'; with bs=512 bpt= must be a multiple of 8"

run_pdd if="$T/src.img" of="$D" bs=1000 bpt=4
refused "pdd: bs=1000 bpt=4: a transfer of 4000 bytes is not a multiple of the logical block size 4096 of '$D'; with bs=1000 bpt= must be a multiple of 512"

run_pdd if="$S" of="$D" bs=6144 skip=1 --dry-run
refused "pdd: skip=1: offset 6144 of '$S' is not a multiple of its logical block size 4096; with bs=6144 skip= must be a multiple of 2"

# the same operands with nodirect go through the page cache, exactly
run_pdd if="$S" of="$T/nd" bs=512 skip=1 count=100 iflag=nodirect
expect_rc 0
"$STAMP" check "$T/nd" 0 51200 1 512 || fail "nodirect skip=1 copy"
run_pdd if="$T/src.img" of="$D" bs=512 seek=12 count=50 bpt=1 oflag=nodirect
expect_rc 0
expect_err "50+0 records out"
"$STAMP" check "$D" 6144 25600 1 0 || fail "nodirect seek=12 copy"
"$STAMP" check "$D" 0 6144 2 0 || fail "nodirect: before seek touched"

# aligned multiples are accepted: bs=512 skip=8 bpt=8
run_pdd if="$S" of="$T/ok" bs=512 skip=8 bpt=8 count=64
expect_rc 0
"$STAMP" check "$T/ok" 0 32768 1 4096 || fail "aligned bs=512 copy"

# a count that ends inside a logical block: the last piece goes buffered
run_pdd if="$S" of="$T/tail" bs=512 count=9
expect_rc 0
expect_err "9+0 records in"
"$STAMP" check "$T/tail" 0 4608 1 0 || fail "count ending inside a sector"
echo "alignment refusals exact"
