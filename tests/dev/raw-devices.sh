#!/bin/bash
# Raw devices (char 162) go through the block path with direct I/O.  Linux
# dropped the raw driver in 5.14, so the test double stands in for it
# (SGDOUBLE_RAW: the node opens the bound device with O_DIRECT forced and
# passes the block ioctls through, as drivers/char/raw.c did).  Bound to a
# regular file (no root needed) and, as root, to 512- and 4096-byte-sector
# loop devices: copies both ways are exact, the refusals are a block
# device's, and nodirect cannot turn direct I/O off.
. "$(dirname "$0")/../lib.sh"
needs_sgdouble

# rawp ARGS...: run_pdd with $raws bound
rawp() {
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	LD_PRELOAD=$SGD SGDOUBLE_RAW=$raws run_pdd "$@"
}

# check_raw BACKING LBS: raw1 bound to BACKING, whose blocks are LBS bytes
check_raw() {
	local back=$1 lbs=$2 R=$T/raw/raw1 n=$((3000 * $2 / 512))
	raws="$R=$back"
	"$STAMP" fill "$back" 0 $((n * 512)) 1
	"$STAMP" fill "$T/src" 0 $((n * 512)) 2
	echo "--- raw device over $back, $lbs-byte blocks"

	rm -f "$T/out"
	rawp if="$R" of="$T/out" verbose=1
	expect_rc 0
	expect_err "$((n * 512 / lbs))+0 records out"
	cmp -s "$back" "$T/out" || fail "raw -> file differs"
	rawp if="$T/src" of="$R" bs=$lbs skip=7 seek=9 count=100
	expect_rc 0
	"$STAMP" check "$back" $((9 * lbs)) $((100 * lbs)) 2 $((7 * lbs)) 512 || fail "file -> raw: copied blocks"
	"$STAMP" check "$back" 0 $((9 * lbs)) 1 0 512 || fail "file -> raw: blocks before"
	"$STAMP" check "$back" $((109 * lbs)) $((n * 512 - 109 * lbs)) 1 $((109 * lbs)) 512 ||
		fail "file -> raw: blocks after"

	# the dry run names it, and nodirect does not make it buffered
	rawp if="$R" of=/dev/null iflag=nodirect verbose=1 --dry-run >/dev/null
	expect_rc 0
	expect_err "pdd: '$R' is a raw device, which is always direct"
	ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=$SGD SGDOUBLE_RAW=$raws \
		"$PDD" if="$R" of=/dev/null --dry-run >"$T/plan" 2>&1 || fail "dry run failed"
	grep -qF "  input   '$R': raw device, $((n * 512)) bytes (" "$T/plan" ||
		{ cat "$T/plan"; fail "the dry run does not describe the raw device"; }
	grep -qE "^          logical block $lbs, physical block [0-9]+, direct I/O$" "$T/plan" ||
		{ cat "$T/plan"; fail "the dry run does not say direct I/O"; }

	# too small, and (on 4096-byte blocks) unaligned: refused, unchanged
	sum=$(md5sum <"$back")
	head -c $((n * 512 + 4096)) /dev/zero >"$T/big"
	rawp if="$T/big" of="$R"
	expect_rc 31
	expect_err "pdd: '$R' is too small: the copy needs $((n * 512 + 4096)) bytes from byte 0 on, and the device holds $((n * 512)); give count= to copy less"
	if [ "$lbs" = 4096 ]; then
		rawp if="$T/src" of="$R" bs=512 seek=1 count=8
		expect_rc 31
		expect_err "pdd: seek=1: offset 512 of '$R' is not a multiple of its logical block size 4096; with bs=512 seek= must be a multiple of 8"
		# a last piece shorter than a block has no page cache to go through
		rawp if="$T/src" of="$R" bs=512 count=9
		expect_rc 31
		expect_err "pdd: '$R' is a raw device, which moves whole 4096-byte blocks only, and the copy is 4608 bytes; give a count= of whole blocks"
	fi
	[ "$(md5sum <"$back")" = "$sum" ] || fail "a refused copy changed the raw device"
}

# bound to a regular file: the double answers the sizing ioctls with the
# file's direct-I/O alignment, which blockdev reads through it
truncate -s 1M "$T/back.img"
flbs=$(LD_PRELOAD=$SGD SGDOUBLE_RAW="$T/raw/probe=$T/back.img" blockdev --getss "$T/raw/probe") ||
	fail "blockdev cannot size the raw double"
check_raw "$T/back.img" "$flbs"

if [ "$(id -u)" = 0 ] && [ -e /dev/loop-control ]; then
	for lbs in 512 4096; do
		truncate -s $((3000 * lbs)) "$T/loop$lbs.img"
		dev=$(mkloop "$T/loop$lbs.img" "$lbs")
		check_raw "$dev" "$lbs"
	done
else
	echo "not root: raw devices over loop devices are left out"
fi
echo "raw devices copy exactly through the block path"
