#!/bin/bash
# A block-device destination that cannot hold the input after seek= is
# refused before anything is written, and its contents stay as they were;
# with count= the user chose the range and pdd copies it; a write past the
# end of the device stops with the position and a non-zero status.
. "$(dirname "$0")/../lib.sh"
requires_root

MiB=1048576
"$STAMP" fill "$T/big.img" 0 $((8 * MiB)) 1
BIG=$(mkloop "$T/big.img" 512)
"$STAMP" fill "$T/small.img" 0 $((4 * MiB)) 2
SMALL=$(mkloop "$T/small.img" 512)
before=$(md5sum <"$SMALL")

run_pdd if="$BIG" of="$SMALL"
expect_rc 31
expect_err "pdd: '$SMALL' is too small: the copy needs 8388608 bytes from byte 0 on, and the device holds 4194304; give count= to copy less"
[ "$(md5sum <"$SMALL")" = "$before" ] || fail "refused copy changed the destination"

# it fits, but not after seek=
run_pdd if="$T/small.img" of="$SMALL" seek=1
expect_rc 31
expect_err "pdd: '$SMALL' is too small: the copy needs 4194304 bytes from byte 512 on, and the device holds 4194304; give count= to copy less"
[ "$(md5sum <"$SMALL")" = "$before" ] || fail "refused copy changed the destination"

# a dry run refuses the same way
run_pdd if="$BIG" of="$SMALL" --dry-run
expect_rc 31

# count= that fits: copied
run_pdd if="$BIG" of="$SMALL" count=8192
expect_rc 0
"$STAMP" check "$SMALL" 0 $((4 * MiB)) 1 0 || fail "count= copy onto the small device"

# count= that does not fit: everything up to the end is written, then the
# copy stops with the error and where it got to
"$STAMP" fill "$SMALL" 0 $((4 * MiB)) 2
run_pdd if="$BIG" of="$SMALL" count=16384 bpt=128
expect_rc 15
expect_err "pdd: error writing '$SMALL' at block 8192: No space left on device"
expect_err "pdd: 4194304 bytes are copied: input below block 8192 is in output below block 8192"
expect_err "8192+0 records out"
"$STAMP" check "$SMALL" 0 $((4 * MiB)) 1 0 || fail "data before the end of the device"

# seek= to the last block and count=2: the block that fits is written,
# and counted as written, as GNU dd counts it; a rerun of the resume
# command would start after it
run_pdd if="$BIG" of="$SMALL" seek=8191 count=2
expect_rc 15
expect_err "pdd: error writing '$SMALL' at block 8192: No space left on device"
expect_err "pdd: 512 bytes are copied: input below block 1 is in output below block 8192"
expect_err "2+0 records in"
expect_err "1+0 records out"
expect_err "pdd: to resume: pdd if=$BIG of=$SMALL${PDD_ENGINE:+ engine=$PDD_ENGINE} bs=512 skip=1 seek=8192 count=1"
"$STAMP" check "$SMALL" $((8191 * 512)) 512 1 0 || fail "the last block is not the input's first"
dd if="$BIG" of="$SMALL" bs=512 seek=8191 count=2 oflag=direct 2>"$T/dd.err" && fail "GNU dd did not fail"
grep -qxF "1+0 records out" "$T/dd.err" || { cat "$T/dd.err"; fail "GNU dd counts otherwise"; }
echo "too-small destinations refused"
