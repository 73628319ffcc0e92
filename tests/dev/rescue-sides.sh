#!/bin/bash
# engines: threads
# rescue=1 on the other kinds of side, and what it says while it runs: an
# NBD export with bad blocks (nbdkit's ddrescue filter) rescued to a file
# and a file rescued to an NBD export; an sg device (the double) whose
# medium errors name the first bad block in the sense data, which pdd
# uses; give_up= on a disk that stops answering well (exit 33, the map
# saved with its phase, how to resume); the progress line, SIGUSR1's
# report and the closing line on a slow disk; max_rate= holds the reads
# back; a range past the input's end ends with the input, the map too;
# an output that fails a write or a flush stops the rescue with the error
# named, and the map never marks finished what was not flushed.
. "$(dirname "$0")/../lib.sh"
requires_root

MiB=1048576
blocks() { grep -v '^#' "$1" | tail -n +2; }
# badmap SIZE BLOCK...: a map of SIZE bytes, the 512-byte BLOCKs bad
badmap() {
	python3 - "$@" <<'PY'
import sys
size, bad = int(sys.argv[1]), set(int(b) for b in sys.argv[2:])
print("# Mapfile\n0x0 +")
pos, blk = 0, 0
while pos < size:
    st = "-" if pos // 512 in bad else "+"
    end = pos + 512
    while end < size and ("-" if end // 512 in bad else "+") == st:
        end += 512
    print("0x%X 0x%X %s" % (pos, end - pos, st))
    pos = end
PY
}
# same_bad MAP WANT WHAT: the blocks of MAP are WANT's
same_bad() {
	[ "$(map_extents "$1")" = "$(map_extents "$2")" ] ||
		{ blocks "$1"; fail "$3: the map is not the bad blocks'"; }
}

size=$((4 * MiB))
"$STAMP" fill "$T/src" 0 "$size" 31
bad="100 101 102 103 2048 5000 5001 8191"
badmap "$size" $bad >"$T/bad.map"

# --- an NBD export with bad blocks, to a file; a file to an NBD export
if command -v nbdkit >/dev/null && "$PDD" --version | grep -q '^engines:.* nbd'; then
	serve b --filter=ddrescue file "$T/src" ddrescue-mapfile="$T/bad.map"
	rm -f "$T/n.img" "$T/n.map"
	run_pdd if="$(uri b)" of="$T/n.img" rescue=1 map="$T/n.map"
	expect_rc 3
	same_bad "$T/n.map" "$T/bad.map" "NBD input"
	[ "$(stat -c %s "$T/n.img")" = "$size" ] || fail "NBD input: the image's size"
	map_holds "$T/bad.map" "$T/n.img" "$T/src" || fail "NBD input: the image"
	truncate -s "$size" "$T/nbd-out.img"
	serve o file "$T/nbd-out.img"
	rm -f "$T/o.map"
	run_pdd if="$T/src" of="$(uri o)" rescue=1 map="$T/o.map"
	expect_rc 0
	cmp -s "$T/src" "$T/nbd-out.img" || fail "file to NBD: the export differs"
else
	echo "no nbdkit or pdd without NBD: no NBD case"
fi

# --- an sg device whose errors name the first bad block
needs_sgdouble
mkdir -p "$T/nodes"
cp "$T/src" "$T/sg.img"
faults=$(printf 'medium:%s,' 100-103 2048 5000-5001 8191)
sgrun() {
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	LD_PRELOAD=$SGD SGDOUBLE_DEVS="$T/nodes/sg0=$T/sg.img:512" SGDOUBLE_FAULTS=${faults%,} \
	SGDOUBLE_LOG=$T/sglog "$PDD" "$@" 2>"$T/err"
}
rm -f "$T/g.img" "$T/g.map"
: >"$T/sglog"
rc=0
sgrun if="$T/nodes/sg0" of="$T/g.img" rescue=1 map="$T/g.map" || rc=$?
expect_rc 3
same_bad "$T/g.map" "$T/bad.map" "sg input"
# the first read of block 100's cluster failed naming block 100: blocks
# 0-99 were read again at once, as one read
grep -q ' READ(10) \[.*\] lba 0 blocks 100 len 51200 .* -> GOOD' "$T/sglog" ||
	{ grep 'READ' "$T/sglog" | head -5; fail "sg: the blocks before the one named bad were not read again"; }
# a bad block just before a transfer's last: that last one, never read by
# the failed READ, is rescued, not marked bad
faults=medium:126
rm -f "$T/g.img" "$T/g.map"
rc=0
sgrun if="$T/nodes/sg0" of="$T/g.img" rescue=1 map="$T/g.map" || rc=$?
expect_rc 3
badmap "$size" 126 >"$T/bad126.map"
same_bad "$T/g.map" "$T/bad126.map" "sg input, block 126"

# --- give_up=: a disk whose second half fails, slowly
"$STAMP" fill "$T/gback" 0 "$size" 32
mkfaultfs "$T/gback" "$T/gf" "read=$((size / 2))-$size" bad_delay_us=300000
G=$(mkloop_unmerged "$T/gf/disk" 512)
rm -f "$T/gu.img" "$T/gu.map"
"$PDD" if="$G" of="$T/gu.img" rescue=1 give_up=1 map="$T/gu.map" qd=2 -p 2>"$T/err" &
pid=$!
wait_for '^rescue: copying pass 1 forwards, ' 10
kill -USR1 "$pid"
rc=0
wait "$pid" || rc=$?
expect_rc 33
expect_err "pdd: rescue: nothing read for 1 s (give_up=1): stopping"
grep -qE '^pdd: rescue: copying pass 1 forwards, [0-9.]+ [kMG]?B rescued \([0-9.]+%\), [0-9]+ bad areas? \([0-9.]+ [kMG]?B\), [0-9.]+ [kMG]?B/s now, last good read [0-9]+ s ago$' "$T/err" ||
	{ cat "$T/err"; fail "give_up: no SIGUSR1 report line"; }
grep -qE '^pdd: rescue: [0-9]+ bytes not tried, [0-9]+ not trimmed, [0-9]+ not scraped, [0-9]+ read errors$' "$T/err" ||
	{ cat "$T/err"; fail "give_up: no SIGUSR1 counts line"; }
grep -q "^pdd: to resume: $PDD if=$G of=$T/gu.img rescue=1 give_up=1 map=$T/gu.map qd=2 -p" "$T/err" ||
	{ cat "$T/err"; fail "give_up: no resume line"; }
st=$(grep -v '^#' "$T/gu.map" | head -1 | awk '{ print $2 }')
[ "$st" != + ] || fail "give_up: the map says finished"
[ "$(blocks "$T/gu.map" | head -1)" = "0x00000000  0x00200000  +" ] ||
	{ cat "$T/gu.map"; fail "give_up: the good half is not finished"; }

# --- max_rate=: 1 MiB at 256 KiB a second takes three seconds at least
start=$(date +%s%N)
run_pdd if="$T/src" of="$T/mr.img" rescue=1 count=2048 max_rate=256K
expect_rc 0
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$ms" -ge 2900 ] || fail "max_rate=256K read 1 MiB in $ms ms"

# --- a range past the input's end: the input's end ends it, and the map
rm -f "$T/sh.img" "$T/sh.map"
run_pdd if="$T/src" of="$T/sh.img" rescue=1 count=$((3 * size / 512)) map="$T/sh.map"
expect_rc 0
cmp -s "$T/src" "$T/sh.img" || fail "short input: the image"
[ "$(blocks "$T/sh.map")" = "$(printf '0x00000000  0x%08X  +' "$size")" ] ||
	{ cat "$T/sh.map"; fail "short input: the map goes past the input's end"; }
grep -qE "^pdd: rescue: $size of $size bytes rescued \(100.00%\), 0 bad in 0 areas; 0 not tried" "$T/err" ||
	{ cat "$T/err"; fail "short input: the closing line"; }

# --- an output that fails a write, then one that fails its flush
"$STAMP" fill "$T/wback" 0 "$size" 33
mkfaultfs "$T/wback" "$T/wf" "write=$((2 * MiB))-$((2 * MiB + 4096))"
W=$(mkloop "$T/wf/disk" 512)
rm -f "$T/w.map"
run_pdd if="$T/src" of="$W" rescue=1 map="$T/w.map"
expect_rc 3
grep -qE "^pdd: error writing '$W' at block [0-9]+: Input/output error$" "$T/err" ||
	{ cat "$T/err"; fail "a write error is not named"; }
grep -q "^pdd: to resume: " "$T/err" || fail "a write error: no resume line"
map_holds "$T/w.map" "$W" "$T/src" || fail "a write error: the map marks what the output does not hold"
while read -r pos n st; do
	[ "$st" = + ] && [ "$pos" -lt $((2 * MiB + 4096)) ] && [ $((pos + n)) -gt $((2 * MiB)) ] &&
		fail "a write error: the block that failed is marked finished"
done < <(map_extents "$T/w.map")
echo "fsync=1" >"$T/wf/control"
rm -f "$T/w.map"
run_pdd if="$T/src" of="$W" rescue=1 map="$T/w.map"
expect_rc 3
grep -qE "^pdd: error flushing '$W': Input/output error$" "$T/err" ||
	{ cat "$T/err"; fail "a failed flush is not named"; }
expect_err "pdd: the map '$T/w.map' marks nothing finished that was written since it was last saved"
grep -q '+$' <(blocks "$T/w.map") && { cat "$T/w.map"; fail "a failed flush: the map marks blocks finished"; }

echo "rescue=1 on NBD and sg sides, give_up= and the reports hold"
