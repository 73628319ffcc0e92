#!/bin/bash
# engines: threads
# rescue=1 on the other kinds of side, and what it says while it runs: an
# NBD export with bad blocks (nbdkit's ddrescue filter) rescued to a file
# and a file rescued to an NBD export; an sg device (the double) whose
# medium errors name the first bad block in the sense data, which pdd
# uses; give_up= on a disk that stops answering well (exit 33, the map
# saved with its phase, how to resume); the progress line, SIGUSR1's
# report and the closing line on a slow disk.
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
# same_bad MAP WANT WHAT: the block lines of MAP are WANT's
same_bad() {
	python3 - "$1" "$2" <<'PY' || { blocks "$1"; fail "$3: the map is not the bad blocks'"; }
import sys
def bl(p):
    out, first = [], True
    for line in open(p):
        f = line.split("#")[0].split()
        if not f:
            continue
        if first:
            first = False
            continue
        out.append((int(f[0], 0), int(f[1], 0), f[2]))
    return out
assert bl(sys.argv[1]) == bl(sys.argv[2]), (bl(sys.argv[1]), bl(sys.argv[2]))
PY
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
	python3 - "$T/n.img" "$T/src" $bad <<'PY' || fail "NBD input: the image"
import sys
img, src = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
bad = set(int(b) for b in sys.argv[3:])
assert len(img) == len(src)
for i in range(len(src) // 512):
    if i not in bad:
        assert img[i * 512:(i + 1) * 512] == src[i * 512:(i + 1) * 512], i
PY
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

echo "rescue=1 on NBD and sg sides, give_up= and the reports hold"
