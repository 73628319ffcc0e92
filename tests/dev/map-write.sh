#!/bin/bash
# Write-side failures with map=: a write that fails with EIO (a loop
# device over tests/faultfs with a bad byte range), a flush that fails
# (faultfs fsync=1), both at the end and in the middle of the copy, and
# ENOSPC (a file on a 1 MiB tmpfs).  Each stops with its status and its
# position, and the map marks finished only what is on the output; a
# rerun with the same command, once the fault is gone, completes the copy
# byte-identically.  A map that cannot be saved stops the copy (15).
. "$(dirname "$0")/../lib.sh"
requires_root
MiB=1048576
SIZE=$((8 * MiB))
lbs=512

extents() { grep -v '^#' "$1" | tail -n +2; }
plus_lines() { extents "$1" | while read -r pos size st; do
	[ "$st" = + ] && echo "$((pos)) $((size))"; done; }
# every byte the map marks finished is the source's in the output
check_plus() {
	local pos size
	while read -r pos size; do
		cmp -s -n "$size" -i "$pos:$pos" "$T/src" "$1" ||
			fail "the map marks $size bytes at $pos finished, the output differs (line ${BASH_LINENO[0]})"
	done < <(plus_lines "$T/map")
}

"$STAMP" fill "$T/src" 0 "$SIZE" 7
truncate -s "$SIZE" "$T/back"
mkfaultfs "$T/back" "$T/mnt"
ctl=$T/mnt/control
dev=$(mkloop_unmerged "$T/mnt/disk")

# --- write EIO at byte 3 MiB + 3584: the copy stops at that transfer, the
# map holds exactly what is below it
echo "write=$((3 * MiB + 3584))-$((3 * MiB + 3585)) reset" >"$ctl"
rm -f "$T/map"*
run_pdd if="$T/src" of="$dev" bpt=64 map="$T/map"
expect_rc 3
expect_err "pdd: error writing '$dev' at block 6144: Input/output error"
expect_err "pdd: $((3 * MiB)) bytes are copied; the map '$T/map' records what is done"
expect_err "pdd: map '$T/map': of $SIZE bytes, $((3 * MiB)) finished, 0 bad, $((5 * MiB)) to try"
expect_err "pdd: to resume: pdd if=$T/src of=$dev bpt=64 map=$T/map${eng[*]:+ ${eng[*]}}"
printf '0x%08X  0x%08X  +\n0x%08X  0x%08X  ?\n' 0 $((3 * MiB)) $((3 * MiB)) $((5 * MiB)) |
	diff - <(extents "$T/map") || fail "the map after a write error"
check_plus "$dev"
echo "reset" >"$ctl"
run_pdd if="$T/src" of="$dev" bpt=64 map="$T/map"
expect_rc 0
expect_err "$((5 * MiB / 512))+0 records out"
cmp -s "$T/src" "$dev" || fail "the rerun after the write error differs"

# --- every flush fails: nothing may be marked finished
dd if=/dev/zero of="$dev" bs=1M count=8 oflag=direct status=none
echo "fsync=1 reset" >"$ctl"
rm -f "$T/map"*
run_pdd if="$T/src" of="$dev" map="$T/map"
expect_rc 3
expect_err "pdd: error flushing '$dev': Input/output error"
expect_err "pdd: the map '$T/map' marks nothing finished that was written since it was last saved"
expect_err "pdd: to resume: pdd if=$T/src of=$dev map=$T/map${eng[*]:+ ${eng[*]}}"
printf '0x%08X  0x%08X  ?\n' 0 "$SIZE" | diff - <(extents "$T/map") ||
	fail "a map after a failed flush claims something"
grep -qx '# Copying' "$T/map" && grep -qE '^0x[0-9A-F]{8}     \?               1$' "$T/map" ||
	{ cat "$T/map"; fail "a map after a failed flush says it is finished"; }
echo "reset" >"$ctl"
run_pdd if="$T/src" of="$dev" map="$T/map"
expect_rc 0
expect_err "$((SIZE / 512))+0 records out"
cmp -s "$T/src" "$dev" || fail "the rerun after the failed flush differs"

# --- the flush fails in the middle: the map keeps what the last good
# save had, and no more (a slow copy, the map saved every second)
dd if=/dev/zero of="$dev" bs=1M count=8 oflag=direct status=none
echo "delay_us=2000 reset" >"$ctl"
rm -f "$T/map"*
pdd if="$T/src" of="$dev" bpt=8 qd=2 threads=2 map="$T/map" map_interval=1 2>"$T/err" &
pid=$!
for _ in $(seq 100); do [ -e "$T/map" ] && break; sleep 0.05; done
[ -e "$T/map" ] || fail "no map after 5 seconds"
echo "fsync=1 delay_us=2000" >"$ctl"
rc=0
wait "$pid" || rc=$?
expect_rc 3
expect_err "pdd: error flushing '$dev': Input/output error"
check_plus "$dev"
[ -e "$T/map.bak" ] || fail "no .bak after two saves"
plus_lines "$T/map" >"$T/plus.now"
[ -s "$T/plus.now" ] || fail "the first save marked nothing finished"
# the save after the failure adds nothing to the one before it
plus_lines "$T/map.bak" | diff - "$T/plus.now" ||
	fail "the map gained finished bytes after a failed flush"
echo "reset" >"$ctl"
run_pdd if="$T/src" of="$dev" map="$T/map"
expect_rc 0
cmp -s "$T/src" "$dev" || fail "the rerun after the failed flush in the middle differs"

# --- ENOSPC: a 2 MiB copy to a file on a 1 MiB tmpfs
mktmpfs "$T/small" 1m
head -c $((2 * MiB)) "$T/src" >"$T/src2"
rm -f "$T/map"*
run_pdd if="$T/src2" of="$T/small/o" bpt=16 map="$T/map"
expect_rc 15
grep -q "^pdd: error writing '$T/small/o' at block [0-9]*: No space left on device$" "$T/err" ||
	{ cat "$T/err"; fail "no ENOSPC message"; }
done=$(sed -n "s|^pdd: \([0-9]*\) bytes are copied; the map '$T/map' records what is done$|\1|p" "$T/err")
[ -n "$done" ] && [ "$done" -le "$MiB" ] && [ $((done % 8192)) = 0 ] ||
	{ cat "$T/err"; fail "done mark '$done' after ENOSPC"; }
if [ "$done" = 0 ]; then
	printf '0x%08X  0x%08X  ?\n' 0 $((2 * MiB))
else
	printf '0x%08X  0x%08X  +\n0x%08X  0x%08X  ?\n' 0 "$done" "$done" $((2 * MiB - done))
fi | diff - <(extents "$T/map") || fail "the map after ENOSPC"
check_plus "$T/small/o"
mount -o remount,size=4m "$T/small" || fail "cannot grow the tmpfs"
run_pdd if="$T/src2" of="$T/small/o" bpt=16 map="$T/map"
expect_rc 0
expect_err "$(((2 * MiB - done) / 512))+0 records out"
cmp -s "$T/src2" "$T/small/o" || fail "the rerun after ENOSPC differs"

# --- the map itself cannot be saved: its file system is full
mktmpfs "$T/full" 64k
head -c 65536 /dev/zero >"$T/full/fill" 2>/dev/null
rm -f "$T/o"
run_pdd if="$T/src2" of="$T/o" map="$T/full/map"
expect_rc 15
expect_err "pdd: cannot save map '$T/full/map': No space left on device"
[ ! -e "$T/full/map.new" ] || fail "a failed save left map.new behind"
echo "write, flush and space failures leave a map that claims only what is written"
