#!/bin/bash
# engines: uring
# rescue=1 stopped and taken up again, by pdd and by GNU ddrescue 1.27: on
# a failing disk (tests/faultfs: clustered and scattered bad blocks, every
# request a little slow), a rescue stopped by SIGINT or killed by SIGKILL
# at a random moment leaves a map that ddrescuelog reads and whose
# finished blocks the image holds, and run again ends with the map and
# image of ddrescue's own uninterrupted rescue; a map pdd left is finished
# by ddrescue, and one ddrescue left by pdd, to the same end; domain=
# rescues only what another map marks finished, as ddrescue -m does.
. "$(dirname "$0")/../lib.sh"
requires_root
command -v ddrescue >/dev/null || skip "no ddrescue (package gddrescue)"
command -v ddrescuelog >/dev/null || skip "no ddrescuelog (package gddrescue)"

MiB=1048576
size=$((8 * MiB))
"$STAMP" fill "$T/back" 0 "$size" 21
line=$(python3 - "$size" "$RANDOM" <<'PY'
import random, sys
size, seed = map(int, sys.argv[1:])
random.seed(seed)
bad = []
for _ in range(4):
    a = random.randrange(0, size - 64 * 512) // 512 * 512
    bad.append((a, a + 64 * 512))
for _ in range(30):
    a = random.randrange(0, size // 512) * 512
    bad.append((a, a + 512))
print("read=" + ",".join("%d-%d" % b for b in sorted(bad)), "delay_us=1500")
PY
)
mkfaultfs "$T/back" "$T/ff" $line
D=$(mkloop_unmerged "$T/ff/disk" 512)

# the reference: ddrescue's rescue, uninterrupted
ddrescue -d -q "$D" "$T/ref.img" "$T/ref.map" || fail "ddrescue failed"

blocks() { grep -v '^#' "$1" | tail -n +2; }
# same MAP IMG WHAT: MAP and IMG are the reference's
same() {
	ddrescuelog -p "$1" "$T/ref.map" >/dev/null ||
		{ diff <(blocks "$T/ref.map") <(blocks "$1"); fail "$3: the map differs from ddrescue's"; }
	cmp -s "$2" "$T/ref.img" || fail "$3: the image differs from ddrescue's"
}
# holds MAP IMG WHAT: the map is one ddrescuelog reads, and every block
# it marks finished holds the disk's bytes in the image
holds() {
	ddrescuelog -t "$1" >/dev/null || { cat "$1"; fail "$3: ddrescuelog cannot read the map"; }
	map_holds "$1" "$2" "$T/back" || fail "$3: a finished block does not hold the disk's bytes"
}
# stop SIG: start pdd's rescue on the disk made slower (6 ms a request,
# one read at a time: a few seconds) and send SIG at a random moment in
# its first 2.5 s once it runs (its map written before the first read:
# a SIGKILL before pdd has even started would leave none, rightly),
# after a save of the map or before; the status in $rc
stop() {
	echo "$line delay_us=6000" >"$T/ff/control"
	"$PDD" if="$D" of="$T/p.img" rescue=1 map="$T/p.map" map_interval=1 qd=1 "${eng[@]}" 2>"$T/err" &
	pid=$!
	for _ in $(seq 250); do
		[ -e "$T/p.map" ] || ! kill -0 "$pid" 2>/dev/null && break
		sleep 0.02
	done
	sleep "$((RANDOM % 3)).$((RANDOM % 10))"
	kill -"$1" "$pid" 2>/dev/null
	rc=0
	wait "$pid" || rc=$?
	echo "$line" >"$T/ff/control"
}

for sig in INT KILL INT KILL; do
	rm -f "$T/p.img" "$T/p.map" "$T/p.map.bak"
	stop "$sig"
	case $sig:$rc in
	INT:130|KILL:137) echo "stopped by SIG$sig" ;;
	*:3) echo "finished before SIG$sig" ;;
	*) cat "$T/err"; fail "SIG$sig: status $rc" ;;
	esac
	[ -e "$T/p.map" ] || fail "SIG$sig: no map (one is written before the first read)"
	holds "$T/p.map" "$T/p.img" "after SIG$sig"
	if [ "$rc" = 130 ]; then
		grep -q '^pdd: to resume: ' "$T/err" || { cat "$T/err"; fail "SIGINT: no resume line"; }
		[ "$(grep -v '^#' "$T/p.map" | head -1 | awk '{ print $2 }')" != + ] ||
			fail "SIGINT: the map says finished"
	fi
	run_pdd if="$D" of="$T/p.img" rescue=1 map="$T/p.map"
	expect_rc 3
	same "$T/p.map" "$T/p.img" "after SIG$sig, a rerun"
done

# --- pdd stops, ddrescue goes on
rm -f "$T/p.img" "$T/p.map"
stop INT
[ -e "$T/p.map" ] || fail "no map after SIGINT"
ddrescue -d -q "$D" "$T/p.img" "$T/p.map" || fail "ddrescue could not go on from pdd's map"
same "$T/p.map" "$T/p.img" "pdd then ddrescue"

# --- ddrescue stops, pdd goes on
rm -f "$T/d.img" "$T/d.map"
timeout -s INT "0.$((RANDOM % 3 + 2))" ddrescue -d -q "$D" "$T/d.img" "$T/d.map"
[ -e "$T/d.map" ] || fail "ddrescue left no map"
run_pdd if="$D" of="$T/d.img" rescue=1 map="$T/d.map"
expect_rc 3
same "$T/d.map" "$T/d.img" "ddrescue then pdd"

# --- domain=: only what another map marks finished
printf '# Mapfile\n0x0 +\n0x0 0x100000 ?\n0x100000 0x200000 +\n0x300000 0x180000 ?\n0x480000 0x100000 +\n0x580000 0x280000 ?\n' >"$T/dom.map"
rm -f "$T/m.img" "$T/m.map" "$T/dm.img" "$T/dm.map"
ddrescue -d -q -m "$T/dom.map" "$D" "$T/dm.img" "$T/dm.map" || fail "ddrescue -m failed"
echo reset >"$T/ff/control"
echo "$line" >"$T/ff/control"
run_pdd if="$D" of="$T/m.img" rescue=1 domain="$T/dom.map" map="$T/m.map"
read_bytes=$(tail -1 "$T/ff/control" | tr ' ' '\n' | sed -n 's/^read_bytes=//p')
ddrescuelog -p "$T/m.map" "$T/dm.map" >/dev/null ||
	{ diff <(blocks "$T/dm.map") <(blocks "$T/m.map"); fail "domain=: the map differs from ddrescue -m's"; }
[ "$read_bytes" -le $((3 * MiB)) ] || fail "domain=: $read_bytes bytes read, the domain is 3 MiB"
# outside the domain, nothing was tried
while read -r pos n st; do
	for r in 0:$((0x100000)) $((0x300000)):$((0x480000)) $((0x580000)):$((0x800000)); do
		[ "$pos" -lt "${r#*:}" ] && [ "${r%:*}" -lt $((pos + n)) ] && [ "$st" != "?" ] &&
			fail "domain=: $pos+$n is '$st' outside the domain"
	done
done < <(map_extents "$T/m.map")

echo "rescues stopped anywhere end as ddrescue's under engine ${PDD_ENGINE:-auto}"
