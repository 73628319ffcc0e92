#!/bin/bash
# sparse= on outputs whose writes and zeroings tests/faultfs counts:
#  - oflag=zeroed on a loop device over a faultfs file of zeros: the bytes
#    written are exactly the input's data (its size less its whole grains
#    of zeros), and the output is the input;
#  - the same copy over other data without oflag=zeroed: the zero runs go
#    to the loop device as ZERO_RANGE, which reaches the file as fallocate
#    (faultfs fallocate=1: only the data is written); when the file
#    refuses fallocate (fallocate=0) the kernel writes the zeros itself:
#    no block device here refuses FALLOC_FL_ZERO_RANGE (the loop driver
#    and blkdev_issue_zeroout fall back), so pdd says nothing;
#  - a regular file that refuses PUNCH_HOLE (a faultfs file with
#    fallocate=0): pdd says once that it cannot zero, writes the zeros,
#    and the output is the input;
#  - a 4Kn loop device with bs=512 seek=1 oflag=nodirect, where transfers
#    end inside the device's blocks: the copy is exact, and a zero run cut
#    short at a transfer's end (ZERO_RANGE gives EINVAL on a 4Kn device)
#    must not turn zeroing off for the whole copy.
. "$(dirname "$0")/../lib.sh"
requires_root
command -v fusermount3 >/dev/null || skip "no fusermount3 (package fuse3)"

MiB=1048576
size=$((16 * MiB))
zero_islands "$T/src" "$size" 61
whole=$(zero_bytes "$T/src")
data=$((size - whole))
[ "$whole" -ge $((2 * MiB)) ] || fail "the input has only $whole bytes of zero grains"
echo "input: $size bytes, $whole in whole 4096-byte grains of zeros" >&2

# count M NAME: a counter of the faultfs on $T/M
count() { tail -1 "$T/$1/control" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
expect_count() {	# expect_count M NAME N
	[ "$(count "$1" "$2")" = "$3" ] ||
		{ cat "$T/$1/control"; fail "$1: $2 is $(count "$1" "$2"), expected $3 (line ${BASH_LINENO[0]})"; }
}
# unmount M L: detach loop device L (made here) and unmount faultfs M now
unmount() {
	restore_queue "$2"
	losetup -d "$2" || fail "cannot detach $2"
	sed -i "\|^$2\$|d" "$T/.loops"
	for _ in $(seq 20); do fusermount3 -u "$T/$1" 2>/dev/null && break; sleep 0.2; done
	mountpoint -q "$T/$1" && fail "fusermount3 -u $T/$1 did not unmount"
	sed -i "\|^$T/$1\$|d" "$T/.mounts"
}

# --- oflag=zeroed: nothing written for the zero runs --------------------------
truncate -s "$size" "$T/zback"
mkfaultfs "$T/zback" "$T/z"
Z=$(mkloop_unmerged "$T/z/disk")
echo "reset" >"$T/z/control"
pdd if="$T/src" of="$Z" oflag=zeroed status=json >"$T/json" 2>"$T/err" || { cat "$T/err"; fail "oflag=zeroed failed"; }
expect_count z written_bytes "$data"
expect_count z fallocates 0
[ "$(json bytes_skipped "$T/json")" = "$whole" ] || fail "oflag=zeroed skipped $(json bytes_skipped "$T/json"), not $whole"
[ "$(json bytes_written "$T/json")" = "$data" ] || fail "oflag=zeroed: bytes_written $(json bytes_written "$T/json"), not $data"
same_bytes "$T/src" "$T/zback"
unmount z "$Z"

# --- over other data: ZERO_RANGE through the loop device to the file ---------
"$STAMP" fill "$T/aback" 0 "$size" 62
mkfaultfs "$T/aback" "$T/a" fallocate=1
A=$(mkloop_unmerged "$T/a/disk")
echo "fallocate=1 reset" >"$T/a/control"
pdd if="$T/src" of="$A" verbose=1 status=json >"$T/json" 2>"$T/err" || { cat "$T/err"; fail "copy over data failed"; }
grep -q "cannot zero" "$T/err" && { cat "$T/err"; fail "a loop device that zeroes was said not to"; }
[ "$(json bytes_zeroed "$T/json")" = "$whole" ] || fail "zeroed $(json bytes_zeroed "$T/json"), not $whole"
expect_count a written_bytes "$data"
expect_count a fallocated_bytes "$whole"
expect_count a failed_fallocates 0
same_bytes "$T/src" "$T/aback"
unmount a "$A"

# --- a file under the loop device that refuses fallocate: the kernel writes
# the zeros (the loop device stops offering write-zeroes), pdd does not know
"$STAMP" fill "$T/rback" 0 "$size" 63
mkfaultfs "$T/rback" "$T/r"
R=$(mkloop_unmerged "$T/r/disk")
echo "reset" >"$T/r/control"
pdd if="$T/src" of="$R" verbose=1 status=json >"$T/json" 2>"$T/err" || { cat "$T/err"; fail "copy over a refusing file failed"; }
grep -q "cannot zero" "$T/err" && { cat "$T/err"; fail "the kernel's fallback reached pdd"; }
[ "$(count r failed_fallocates)" -ge 1 ] || { cat "$T/r/control"; fail "the loop device never tried fallocate"; }
expect_count r fallocated_bytes 0
expect_count r written_bytes "$size"
[ "$(json bytes_zeroed "$T/json")" = "$whole" ] || fail "zeroed $(json bytes_zeroed "$T/json"), not $whole"
same_bytes "$T/src" "$T/rback"
unmount r "$R"

# --- a regular file that refuses PUNCH_HOLE: said once, the zeros written ----
"$STAMP" fill "$T/fback" 0 "$size" 64
mkfaultfs "$T/fback" "$T/f"
echo "reset" >"$T/f/control"
run_pdd if="$T/src" of="$T/f/disk" verbose=1 status=json >"$T/json"
expect_rc 0
expect_err "pdd: '$T/f/disk' cannot zero a range (Operation not supported): zero runs are written"
[ "$(grep -c "cannot zero" "$T/err")" = 1 ] || { cat "$T/err"; fail "the refusal was said more than once"; }
[ "$(count f failed_fallocates)" -ge 1 ] || { cat "$T/f/control"; fail "no fallocate reached faultfs"; }
expect_count f written_bytes "$size"
[ "$(json bytes_zeroed "$T/json")" = 0 ] || fail "a refused zeroing counted $(json bytes_zeroed "$T/json") bytes zeroed"
[ "$(json bytes_written "$T/json")" = "$size" ] || fail "bytes_written $(json bytes_written "$T/json"), not $size"
same_bytes "$T/src" "$T/fback"
for _ in $(seq 20); do fusermount3 -u "$T/f" 2>/dev/null && break; sleep 0.2; done
sed -i "\|^$T/f\$|d" "$T/.mounts"

# --- 4Kn, bs=512 seek=1 oflag=nodirect: transfers end inside blocks ----------
"$STAMP" fill "$T/k" 0 $((size + MiB)) 65
K=$(mkloop "$T/k" 4096)
run_pdd if="$T/src" of="$K" bs=512 seek=1 oflag=nodirect verbose=1 status=json >"$T/json"
expect_rc 0
cmp -s -n "$size" -i 0:512 "$T/src" "$K" || fail "4Kn seek=1: the copy differs"
lbs=512
stamped "$K" 0 1 65 0
stamped "$K" $((size / 512 + 1)) $((2048 - 1)) 65 $((size / 512 + 1))
# the zeros in whole 4096-byte blocks of the device: most of them zeroed
dev_whole=$(zero_bytes "$T/src" 4096 3584 $((size - 3584)))
z=$(json bytes_zeroed "$T/json")
echo "4Kn seek=1: $z bytes zeroed of $dev_whole in whole blocks of the device" >&2
# a zero run cut at a transfer's end is shorter than a block: it is
# written, not taken as the device refusing to zero (ZERO_RANGE says
# EINVAL to a part block), so the rest is still zeroed
grep -q "cannot zero" "$T/err" && { cat "$T/err"; fail "4Kn seek=1: one misaligned run turned zeroing off: $(grep "cannot zero" "$T/err")"; }
[ "$z" -ge $((dev_whole / 2)) ] || fail "4Kn seek=1: only $z of $dev_whole bytes of whole zero blocks zeroed"

echo "sparse outputs through faultfs counted under engine ${PDD_ENGINE:-auto}"
