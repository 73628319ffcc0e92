#!/bin/bash
# coe_limit=N on a device with real bad sectors (faultfs under a loop):
# the copy stops right after the Nth bad block in address order, however
# the reads in flight finish; only blocks that were written as zeros are
# reported, once each, in ascending order (text, JSON and map), the limit
# is said once, and the resume command goes on from there.
. "$(dirname "$0")/../lib.sh"
requires_root
MiB=1048576

for lbs in 512 4096; do
	echo "--- $lbs-byte sectors"
	"$STAMP" fill "$T/back$lbs" 0 $((4 * MiB)) 6
	nblk=$((4 * MiB / lbs))
	bad="read=$((100 * lbs))-$((101 * lbs)),$((301 * lbs))-$((302 * lbs)),$((600 * lbs))-$((602 * lbs))"
	mkfaultfs "$T/back$lbs" "$T/mnt$lbs" "$bad"
	dev=$(mkloop_unmerged "$T/mnt$lbs/disk" "$lbs")
	for run in 1 2 3; do
		pick 1 4 16 64; bpt=$picked
		rm -f "$T/out" "$T/map" "$T/map.bak"
		rc=0
		pdd if="$dev" of="$T/out" coe=1 coe_limit=2 bpt="$bpt" qd=64 status=json map="$T/map" \
			>"$T/json" 2>"$T/err" || rc=$?
		expect_rc 3
		[ "$(grep -c 'cannot be read; writing zeros$' "$T/err")" = 2 ] ||
			{ cat "$T/err"; fail "bpt=$bpt: other than two blocks reported"; }
		expect_err "pdd: '$dev': LBA 100 ($lbs bytes at byte $((100 * lbs))) cannot be read; writing zeros"
		expect_err "pdd: '$dev': LBA 301 ($lbs bytes at byte $((301 * lbs))) cannot be read; writing zeros"
		[ "$(grep -c 'coe_limit=2 reached' "$T/err")" = 1 ] || { cat "$T/err"; fail "the limit said more than once"; }
		expect_err "pdd: coe_limit=2 reached: stopping after LBA 301"
		expect_err "pdd: 2 unreadable blocks of $lbs bytes written as zeros, LBA 100 to 301"
		expect_err "pdd: $((302 * lbs)) bytes are copied; the map '$T/map' records what is done"
		# the output ends right after LBA 301: 100 and 301 zero, the rest the input's
		[ "$(stat -c %s "$T/out")" = $((302 * lbs)) ] || fail "bpt=$bpt: output is $(stat -c %s "$T/out") bytes, not 302 blocks"
		stamped "$T/out" 0 100 6 0
		zeros "$T/out" 100 1
		stamped "$T/out" 101 200 6 101
		zeros "$T/out" 301 1
		python3 - "$T/json" "$lbs" <<'PY' || fail "bpt=$bpt: JSON"
import json, sys
j = json.load(open(sys.argv[1]))
u = j["unreadable_blocks"]
assert u["lbas"] == [100, 301], u
assert u["count"] == 2, u
assert j["bytes_out"] == 302 * int(sys.argv[2]), j["bytes_out"]
PY
		# the map marks those two bad and nothing past the stop
		got=$(ddrescuelog -b "$lbs" -l- "$T/map" 2>/dev/null | tr '\n' ' ')
		[ "$got" = "100 301 " ] || fail "bpt=$bpt: the map's bad blocks are '$got'"
		fin=$(ddrescuelog -b "$lbs" -l+ "$T/map" 2>/dev/null | tail -1)
		[ "$fin" = 300 ] || fail "bpt=$bpt: the map's last finished block is $fin"
	done
	# without the map, the resume command goes on after LBA 301
	rm -f "$T/out"
	run_pdd if="$dev" of="$T/out" coe=1 coe_limit=2 bpt=16
	expect_rc 3
	expect_err "pdd: to resume: pdd if=$dev of=$T/out coe=1 coe_limit=2 bpt=16${PDD_ENGINE:+ engine=$PDD_ENGINE} bs=$lbs skip=302 seek=302 count=$((nblk - 302))"
	# and that run meets the blocks at 600 and 601: the limit once more
	resume=$(sed -n 's/^pdd: to resume: pdd //p' "$T/err")
	rc=0
	# shellcheck disable=SC2086
	"$PDD" $resume 2>"$T/err" || rc=$?
	expect_rc 3
	expect_err "pdd: 2 unreadable blocks of $lbs bytes written as zeros, LBA 600 to 601"
	[ "$(stat -c %s "$T/out")" = $((602 * lbs)) ] || fail "the resumed run did not stop after LBA 601"
done

# a write that fails part way through a transfer holding a zero-filled
# block (the output fills up): the block is reported and marked bad, never
# finished; and a transfer cut at coe_limit= whose write fails reports the
# write error, not the limit (one write at a time, so that the one that
# fills the file system is the lowest)
lbs=512
"$STAMP" fill "$T/pback" 0 $MiB 11
mkfaultfs "$T/pback" "$T/pmnt" "read=10000-10001"
pdev=$(mkloop_unmerged "$T/pmnt/disk")
mktmpfs "$T/t64" 64k
rc=0
pdd if="$pdev" of="$T/t64/out" coe=1 bpt=256 qd=1 map="$T/pmap" status=json >"$T/json" 2>"$T/err" || rc=$?
expect_rc 15
expect_err "pdd: '$pdev': LBA 19 (512 bytes at byte 9728) cannot be read; writing zeros"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); u=j["unreadable_blocks"]; assert u["lbas"]==[19] and j["bytes_out"]==65536, (u, j["bytes_out"])' "$T/json" ||
	fail "the partly written transfer's bad block is not in the report"
[ "$(ddrescuelog -b 512 -l- "$T/pmap" | tr '\n' ' ')" = "19 " ] || { cat "$T/pmap"; fail "the map does not mark LBA 19 bad"; }
stamped "$T/t64/out" 0 19 11 0
zeros "$T/t64/out" 19 1
stamped "$T/t64/out" 20 108 11 20
rm -f "$T/t64/out"
echo "read=100000-100001" >"$T/pmnt/control"
run_pdd if="$pdev" of="$T/t64/out" coe=1 coe_limit=1 bpt=128 qd=1
expect_rc 15
expect_err "pdd: error writing '$T/t64/out' at block 128: No space left on device"
! grep -q "coe_limit=1 reached" "$T/err" || { cat "$T/err"; fail "the limit was said for a block never written"; }
! grep -q "cannot be read" "$T/err" || { cat "$T/err"; fail "a block never written was reported"; }
echo "coe_limit= stops after the Nth bad block in order, and reports only those"
