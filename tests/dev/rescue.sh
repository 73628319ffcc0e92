#!/bin/bash
# rescue=1 against GNU ddrescue 1.27 on the same failing disk: a loop
# device over tests/faultfs with 4 clusters of 64 bad blocks, 40 scattered
# bad blocks, two slow areas and slow failures, with 512- and 4096-byte
# sectors.  pdd's map marks exactly the blocks ddrescue's does (ddrescuelog
# -p), its image is ddrescue's byte for byte, it rescues as many bytes,
# and it says so in the closing line, in status=json and in its exit
# status (3: blocks left bad); the map's status line is finished.
# reverse=1 ends with the same map; trim=0 leaves the '*' areas and
# scrape=0 the '/' ones, as ddrescue -N and -n do, and a rerun without
# them ends as ddrescue does; retries= reads again a block that fails
# twice and then reads (faultfs flaky=); of=/dev/null
# scans; the operands that need rescue=1 and what contradicts it are
# refused before anything is written.
. "$(dirname "$0")/../lib.sh"
requires_root
command -v ddrescue >/dev/null || skip "no ddrescue (package gddrescue)"
command -v ddrescuelog >/dev/null || skip "no ddrescuelog (package gddrescue)"

MiB=1048576
size=$((16 * MiB))

# faults SECTOR: the fault line for the disk (seeded by the test's seed)
faults() {
	python3 - "$size" "$1" "$RANDOM" <<'PY'
import random, sys
size, sec, seed = map(int, sys.argv[1:])
random.seed(seed)
bad = []
for _ in range(4):
    a = random.randrange(0, size - 64 * sec) // sec * sec
    bad.append((a, a + 64 * sec))
for _ in range(40):
    a = random.randrange(0, size // sec) * sec
    bad.append((a, a + sec))
bad.sort()
print("read=" + ",".join("%d-%d" % b for b in bad),
      "slow=%d-%d:500,%d-%d:500" % (size // 4, size // 4 + 2 * 1048576, size // 2, size // 2 + 1048576),
      "bad_delay_us=500")
PY
}
# blocks MAP: the block lines of a map, for messages
blocks() { grep -v '^#' "$1" | tail -n +2; }
# bytes MAP ST: bytes of status ST in MAP
bytes() {
	local n=0 pos sz st
	while read -r pos sz st; do
		[ "$st" = "$2" ] && n=$((n + sz))
	done < <(blocks "$1")
	echo "$n"
}
areas() { blocks "$1" | awk '$3 == "-" { n++ } END { print n + 0 }'; }

for sec in 512 4096; do
	echo "--- $sec-byte sectors"
	"$STAMP" fill "$T/back$sec" 0 "$size" $((sec / 512))
	line=$(faults "$sec")
	mkfaultfs "$T/back$sec" "$T/ff$sec" $line
	D=$(mkloop_unmerged "$T/ff$sec/disk" "$sec")

	rm -f "$T/dd.img" "$T/dd.map"
	ddrescue -d -q -b "$sec" "$D" "$T/dd.img" "$T/dd.map" || fail "ddrescue failed"
	rm -f "$T/p.img" "$T/p.map"
	run_pdd if="$D" of="$T/p.img" rescue=1 map="$T/p.map" status=json >"$T/json"
	expect_rc 3
	ddrescuelog -b "$sec" -p "$T/p.map" "$T/dd.map" >/dev/null ||
		{ diff <(blocks "$T/dd.map") <(blocks "$T/p.map"); fail "$sec: the maps differ"; }
	cmp -s "$T/p.img" "$T/dd.img" || fail "$sec: the images differ"
	[ "$(grep -v '^#' "$T/p.map" | head -1 | awk '{ print $2 }')" = + ] ||
		{ cat "$T/p.map"; fail "$sec: the map's status line is not finished"; }
	grep -qx '# Finished' "$T/p.map" || fail "$sec: no '# Finished' in the map"
	rescued=$(bytes "$T/dd.map" +) bad=$(bytes "$T/dd.map" -) n=$(areas "$T/dd.map")
	[ "$((rescued + bad))" = "$size" ] || fail "$sec: ddrescue's map does not cover the disk"
	python3 - "$T/json" "$rescued" "$bad" "$n" <<'PY' || fail "$sec: the JSON's rescue"
import json, sys
r = json.load(open(sys.argv[1]))["rescue"]
want = dict(status="+", rescued=int(sys.argv[2]), bad_bytes=int(sys.argv[3]),
            bad_areas=int(sys.argv[4]), non_tried=0, non_trimmed=0, non_scraped=0,
            gave_up=False)
for k, v in want.items():
    assert r[k] == v, (k, r[k], v)
assert r["read_errors"] >= r["bad_areas"], r
PY
	# the closing line
	run_pdd if="$D" of="$T/p2.img" rescue=1
	expect_rc 3
	grep -qE "^pdd: rescue: $rescued of $size bytes rescued \\([0-9.]+%\\), $bad bad in $n areas; 0 not tried, 0 not trimmed, 0 not scraped; [0-9]+ read errors$" "$T/err" ||
		{ cat "$T/err"; fail "$sec: the closing line"; }
	grep -q "to resume" "$T/err" && fail "$sec: a finished rescue says how to resume"

	# reverse=1: the same map
	rm -f "$T/r.map"
	run_pdd if="$D" of="$T/r.img" rescue=1 reverse=1 map="$T/r.map"
	expect_rc 3
	ddrescuelog -b "$sec" -p "$T/r.map" "$T/dd.map" >/dev/null ||
		{ diff <(blocks "$T/dd.map") <(blocks "$T/r.map"); fail "$sec: reverse=1 gave another map"; }
	cmp -s "$T/r.img" "$T/dd.img" || fail "$sec: reverse=1 gave another image"

	# trim=0 and scrape=0, as ddrescue -N and -n: where the '*' and '/'
	# areas end depends on the order of the reads, so the check is that
	# nothing bad is marked finished, nothing of that phase's making is
	# left, and a rerun without it ends where ddrescue does
	for o in trim:/ scrape:-; do
		rm -f "$T/n.map"
		run_pdd if="$D" of="$T/n.img" rescue=1 "${o%:*}=0" map="$T/n.map"
		expect_rc 3
		python3 - "$T/n.map" "$T/dd.map" "$sec" "${o#*:}" <<'PY' || fail "$sec: ${o%:*}=0: the map"
import sys
def sectors(path, sec):
    out, first = {}, True
    for line in open(path):
        line = line.split("#")[0].split()
        if not line:
            continue
        if first:
            first = False
            continue
        pos, size, st = int(line[0], 0), int(line[1], 0), line[2]
        for s in range(pos // sec, (pos + size) // sec):
            out[s] = st
    return out
got, ref = sectors(sys.argv[1], int(sys.argv[3])), sectors(sys.argv[2], int(sys.argv[3]))
made = sys.argv[4]	# what the phase left out would have made
assert set(got.values()) <= set("+*-/") - set(made if made == "/" else ""), set(got.values())
for s, st in got.items():
    assert st != "+" or ref[s] == "+", ("finished but bad", s)
    assert ref[s] != "-" or st != "+", ("bad but finished", s)
PY
		run_pdd if="$D" of="$T/n.img" rescue=1 map="$T/n.map"
		expect_rc 3
		ddrescuelog -b "$sec" -p "$T/n.map" "$T/dd.map" >/dev/null ||
			{ diff <(blocks "$T/dd.map") <(blocks "$T/n.map"); fail "$sec: after ${o%:*}=0, a rerun ends elsewhere"; }
		cmp -s "$T/n.img" "$T/dd.img" || fail "$sec: after ${o%:*}=0, a rerun's image differs"
	done
	rm -f "$T/dn.img" "$T/n.img" "$T/r.img" "$T/p2.img"
done

# --- retries=: a block that fails twice, then reads
"$STAMP" fill "$T/fback" 0 $((4 * MiB)) 9
mkfaultfs "$T/fback" "$T/fl" "flaky=$((3000 * 512))-$((3001 * 512)):2"
F=$(mkloop_unmerged "$T/fl/disk" 512)
rm -f "$T/f.map"
# the copying read and trimming fail on it: two failures
run_pdd if="$F" of="$T/f.img" rescue=1 map="$T/f.map"
expect_rc 3
[ "$(bytes "$T/f.map" -)" = 512 ] || { cat "$T/f.map"; fail "the flaky block is not the one bad block"; }
run_pdd if="$F" of="$T/f.img" rescue=1 retries=1 map="$T/f.map"
expect_rc 0
[ "$(bytes "$T/f.map" +)" = $((4 * MiB)) ] || { cat "$T/f.map"; fail "retries=1 did not rescue the flaky block"; }
cmp -s "$T/f.img" "$T/fback" || fail "the rescued image differs from the disk"
grep -qx '# Finished' "$T/f.map" || fail "no '# Finished' after the retry"

# --- of=/dev/null: a scan of the input, the map says what is bad
rm -f "$T/s.map"
run_pdd if="$D" of=/dev/null rescue=1 map="$T/s.map"
expect_rc 3
ddrescuelog -b 4096 -p "$T/s.map" "$T/dd.map" >/dev/null || fail "a scan gave another map"

# --- refusals, nothing written
rm -f "$T/x"
run_pdd if="$D" of="$T/x" skip_size=1M
expect_rc 1
expect_err "pdd: skip_size= needs rescue=1"
run_pdd if="$D" of="$T/x" rescue=1 verify=1
expect_rc 1
expect_err "pdd: rescue=1 and verify= contradict: a rescue writes where it reads, in any order"
run_pdd if="$D" of="$T/x" rescue=1 skip_size=2M max_skip=1M
expect_rc 1
expect_err "pdd: skip_size=2097152 is more than max_skip=1048576"
run_pdd of="$T/x" rescue=1 < <(printf 'abc')
expect_rc 31
expect_err "pdd: rescue=1: 'standard input' is a fifo, which cannot be read at any place"
[ ! -e "$T/x" ] || fail "a refused rescue created the output"

echo "rescue=1 maps what ddrescue maps under engine ${PDD_ENGINE:-auto}"
