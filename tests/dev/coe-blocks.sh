#!/bin/bash
# coe=1 on a block device with real bad sectors (a loop device over
# tests/faultfs, nomerges=2), 512- and 4096-byte sectors, bad sectors
# scattered inside large transfers: exactly the bad blocks are zero-filled
# and reported by number, everything else is byte-identical, the exit
# status is 3, and the bad set is the one GNU ddrescue finds on the same
# device, also one block per transfer (which the threads engine merges).
# Without coe the copy stops at the failing transfer.
. "$(dirname "$0")/../lib.sh"
requires_root
command -v ddrescue >/dev/null || skip "needs GNU ddrescue (package gddrescue)"
MiB=1048576

for lbs in 512 4096; do
	echo "--- $lbs-byte sectors"
	"$STAMP" fill "$T/back$lbs" 0 $((8 * MiB)) 4
	# bad bytes: whole sectors, one byte, a pair across a boundary, a run
	bad="read=$((100 * lbs))-$((101 * lbs)),$((301 * lbs + 7))-$((301 * lbs + 8)),$((1000 * lbs + lbs - 1))-$((1001 * lbs + 1)),$((1500 * lbs))-$((1504 * lbs))"
	want="100 301 1000 1001 1500 1501 1502 1503"
	mkfaultfs "$T/back$lbs" "$T/mnt$lbs" "$bad"
	dev=$(mkloop_unmerged "$T/mnt$lbs/disk" "$lbs")
	nblk=$((8 * MiB / lbs))

	# what the output must be: the source with the bad blocks zeroed
	cp "$T/back$lbs" "$T/want"
	for b in $want; do
		dd if=/dev/zero of="$T/want" bs="$lbs" seek="$b" count=1 conv=notrunc status=none
	done

	rm -f "$T/out"
	run_pdd if="$dev" of="$T/out" coe=1 bpt=64
	expect_rc 3
	for b in $want; do
		expect_err "pdd: '$dev': LBA $b ($lbs bytes at byte $((b * lbs))) cannot be read; writing zeros"
	done
	[ "$(grep -c 'cannot be read; writing zeros$' "$T/err")" = 8 ] || { cat "$T/err"; fail "more blocks than the bad ones were zero-filled"; }
	expect_err "pdd: 8 unreadable blocks of $lbs bytes written as zeros, LBA 100 to 1503"
	expect_err "$nblk+0 records out"
	cmp -s "$T/want" "$T/out" || fail "coe output is not the source with exactly the bad blocks zeroed"

	# one block per transfer: under coe=1 each bad block is read once,
	# by itself (the threads engine merges no reads there); without coe
	# the threads engine merges runs of them into one call (faultfs sees
	# fewer reads than blocks), and the copy stops at the first bad block
	ctlval() { tail -1 "$T/mnt$lbs/control" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
	rm -f "$T/out"
	echo "$bad reset" >"$T/mnt$lbs/control"
	run_pdd if="$dev" of="$T/out" coe=1 bpt=1
	expect_rc 3
	expect_err "pdd: 8 unreadable blocks of $lbs bytes written as zeros, LBA 100 to 1503"
	cmp -s "$T/want" "$T/out" || fail "coe output at bpt=1 is not the source with exactly the bad blocks zeroed"
	[ "$(ctlval failed_reads)" = 8 ] || fail "coe=1 bpt=1 read the 8 bad blocks $(ctlval failed_reads) times"
	rm -f "$T/out"
	echo "$bad reset" >"$T/mnt$lbs/control"
	run_pdd if="$dev" of="$T/out" bpt=1
	expect_rc 3
	expect_err "pdd: error reading '$dev' at block 100: Input/output error"
	cmp -s -n $((100 * lbs)) "$T/back$lbs" "$T/out" || fail "the blocks before the bad one differ (bpt=1)"
	echo "bpt=1: $(ctlval reads) reads of the device up to block 100" >&2
	if [ "${PDD_ENGINE:-}" = threads ] && [ "$(ctlval reads)" -ge 100 ]; then
		fail "the threads engine read $(ctlval reads) times for 100 blocks: nothing merged"
	fi

	# ddrescue on the same device finds the same blocks
	rm -f "$T/dr.img" "$T/dr.map"
	ddrescue -q -d -b "$lbs" "$dev" "$T/dr.img" "$T/dr.map" || fail "ddrescue failed"
	got=$(ddrescuelog -b "$lbs" -l- "$T/dr.map" | tr '\n' ' ' | sed 's/ $//')
	[ "$got" = "$want" ] || fail "ddrescue's bad blocks ($got) are not pdd's ($want)"

	# without coe: the first failing read stops the copy, below it is exact
	rm -f "$T/out"
	run_pdd if="$dev" of="$T/out" bpt=64
	expect_rc 3
	expect_err "pdd: error reading '$dev' at block 64: Input/output error"
	cmp -s -n $((64 * lbs)) "$T/back$lbs" "$T/out" || fail "the blocks before the failing transfer differ"
done
echo "coe zero-fills exactly the bad sectors ddrescue finds"
