#!/usr/bin/env bash
# scripts/bench-rescue.sh - rescuing a failing disk: pdd rescue=1 against
# GNU ddrescue -d with its defaults.
#
# The disk is a loop device (direct I/O, nomerges=2) over tests/faultfs,
# whose file fails 4 clusters of 64 sectors and NSCAT scattered sectors
# with EIO (512-byte sectors, the same every run: positions from SEED),
# and serves two areas of SLOW_MIB MiB each SLOW_US slower per request.
# The backing file and the images live in /dev/shm, so that the faulty
# device and the tools, not a disk under them, set the pace.  For each
# service time in DELAYS (faultfs delay_us=, every request: a disk's seek
# and rotation), each round rescues the whole device to a fresh image and
# map with each tool, interleaved, the order rotated:
#   ddrescue   ddrescue -d DEV IMG MAP
#   pdd        pdd if=DEV of=IMG rescue=1 map=MAP
# and measures, from faultfs's count of bytes read well (sampled every
# 20 ms): t99, the time until 99% of the good data has been read; end,
# the time to the end (trimming, scraping); and the bytes the map marks
# rescued.  Every rescue is checked: the image is the source with the bad
# sectors zero, the map lists exactly the bad sectors.  The table gives
# medians and the ratios of ddrescue's times to pdd's (above 1, pdd is
# faster).
#
#   scripts/bench-rescue.sh                   # 1 GiB, as issue 16 asks
#   SIZE_MIB=256 RUNS=1 DELAYS=0 scripts/bench-rescue.sh
#
# Settings (environment):
#   SIZE_MIB=1024 NSCAT=200 SLOW_MIB=16 SLOW_US=2000 DELAYS="0 100"
#   RUNS=3 SEED=1 OUT=results/bench-rescue-DATE PDD=./pdd
# Writes runs.csv and table.txt into OUT.  Needs root (loop devices,
# FUSE), ddrescue and ddrescuelog (gddrescue), tests/faultfs/faultfs
# (make check builds it).

set -euo pipefail

SIZE_MIB=${SIZE_MIB:-1024}
NSCAT=${NSCAT:-200}
SLOW_MIB=${SLOW_MIB:-16}
SLOW_US=${SLOW_US:-2000}
DELAYS=${DELAYS:-0 100}
RUNS=${RUNS:-3}
SEED=${SEED:-1}
OUT=${OUT:-results/bench-rescue-$(date +%Y%m%d-%H%M%S)}
PDD=${PDD:-./pdd}
FAULTFS=${FAULTFS:-tests/faultfs/faultfs}
STAMP=${STAMP:-tests/tools/stamp}
DIR=${DIR:-/dev/shm/pdd-bench-rescue.$$}

die() { echo "bench-rescue.sh: $*" >&2; exit 1; }
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
[[ $(id -u) == 0 ]] || die "needs root (loop devices, FUSE)"
for c in ddrescue ddrescuelog losetup cmp awk python3; do
	command -v "$c" >/dev/null || die "'$c' not found (scripts/install-deps.sh installs it)"
done
for x in "$PDD" "$FAULTFS" "$STAMP"; do
	[[ -x $x ]] || die "no '$x' (run make check first)"
done
PDD=$(realpath "$PDD")

mkdir -p "$OUT/logs" "$DIR/mnt"
LOOP= SAMPLER=
# unmount_disk: the loop device and faultfs go
unmount_disk() {
	# a loop device keeps nomerges after it is detached: the default back
	[[ -n $LOOP ]] && { echo 0 >"/sys/block/${LOOP#/dev/}/queue/nomerges"; losetup -d "$LOOP"; }
	LOOP=
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		umount "$DIR/mnt" 2>/dev/null && break
		grep -q " $DIR/mnt " /proc/mounts || break
		sleep 0.2
	done
}
cleanup() {
	[[ -n $SAMPLER ]] && kill "$SAMPLER" 2>/dev/null
	unmount_disk
	rm -rf "$DIR"
}
trap cleanup EXIT

size=$((SIZE_MIB << 20))
"$STAMP" fill "$DIR/back" 0 "$size" 9
# the bad sectors (one per line, 512-byte sectors) and the fault line
python3 - "$size" "$NSCAT" "$SEED" "$SLOW_MIB" "$SLOW_US" >"$DIR/faults" <<'PY'
import random, sys
size, nscat, seed, slow_mib, slow_us = map(int, sys.argv[1:])
random.seed(seed)
nsec = size // 512
bad = set()
for _ in range(4):
    a = random.randrange(0, nsec - 64)
    bad.update(range(a, a + 64))
while len(bad) < 4 * 64 + nscat:
    bad.add(random.randrange(0, nsec))
ranges, s = [], sorted(bad)
for x in s:
    if ranges and ranges[-1][1] == x:
        ranges[-1][1] = x + 1
    else:
        ranges.append([x, x + 1])
slow = [(size // 3, size // 3 + (slow_mib << 20)), (2 * size // 3, 2 * size // 3 + (slow_mib << 20))]
print(" ".join(str(x) for x in s))
print("read=" + ",".join("%d-%d" % (a * 512, b * 512) for a, b in ranges) +
      " slow=" + ",".join("%d-%d:%d" % (a, b, slow_us) for a, b in slow))
PY
read -r -a bad <"$DIR/faults"
faultline=$(sed -n 2p "$DIR/faults")
good=$((size - ${#bad[@]} * 512))
cp "$DIR/back" "$DIR/want"
python3 - "$DIR/want" "${bad[@]}" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    for s in sys.argv[2:]:
        f.seek(int(s) * 512); f.write(bytes(512))
PY
# mount_disk DELAY: the disk with its faults and that service time (the fault
# line is too long for one write to faultfs's control file: given at
# mount; the counters are read before and after each run instead)
mount_disk() {
	"$FAULTFS" "$DIR/back" "$DIR/mnt" $faultline "delay_us=$1" || die "faultfs did not mount"
	LOOP=$(losetup --find --show --direct-io=on "$DIR/mnt/disk") || die "losetup failed"
	echo 2 >"/sys/block/${LOOP#/dev/}/queue/nomerges"
}
echo "$SIZE_MIB MiB: ${#bad[@]} bad sectors (4 clusters of 64, $NSCAT scattered)," \
	"2 areas of $SLOW_MIB MiB $SLOW_US us slower; service times: $DELAYS us" | tee "$OUT/setup.txt"

TOOLS=(ddrescue pdd)
echo "delay_us,tool,run,t99,end,rescued" >"$OUT/runs.csv"

read_bytes() { tail -1 "$DIR/mnt/control" | tr ' ' '\n' | sed -n 's/^read_bytes=//p'; }

# run DELAY TOOL RUN: one rescue to a fresh image and map, timed, checked
run() {
	local delay=$1 tool=$2 r=$3 img=$DIR/img map=$DIR/map log=$OUT/logs/$1-$2-$3.log
	local samples=$DIR/samples t0 t1 rc=0 t99 rescued base
	rm -f "$img" "$map" "$map.bak" "$samples"
	base=$(read_bytes)
	t0=$EPOCHREALTIME
	( while :; do echo "$EPOCHREALTIME $(read_bytes)"; sleep 0.02; done ) >"$samples" &
	SAMPLER=$!
	case $tool in
	ddrescue) ddrescue -d "$LOOP" "$img" "$map" >"$log" 2>&1 || rc=$? ;;
	pdd)      "$PDD" if="$LOOP" of="$img" rescue=1 map="$map" >"$log" 2>&1 || rc=$? ;;
	esac
	t1=$EPOCHREALTIME
	kill "$SAMPLER"; wait "$SAMPLER" 2>/dev/null || true
	SAMPLER=
	echo "$t1 $(read_bytes)" >>"$samples"
	case $tool in
	ddrescue) [[ $rc == 0 ]] || die "ddrescue failed ($rc): see $log" ;;
	pdd)      [[ $rc == 3 ]] || die "pdd exited $rc, not 3: see $log" ;;
	esac
	truncate -s "$size" "$img"	# ddrescue leaves a bad end short
	cmp -s "$DIR/want" "$img" || die "$tool's image is not the source with the bad sectors zero"
	[[ "$(ddrescuelog -b 512 -l- "$map" | tr '\n' ' ')" == "${bad[*]} " ]] ||
		die "$tool's map does not list exactly the bad sectors"
	t99=$(awk -v t0="$t0" -v want="$good" -v base="$base" \
		'$2 - base >= 0.99 * want { print $1 - t0; exit }' "$samples")
	rescued=$(python3 - "$map" <<'PY'
import sys
n, first = 0, True
for line in open(sys.argv[1]):
    f = line.split("#")[0].split()
    if not f:
        continue
    if first:
        first = False
        continue
    if f[2] == "+":
        n += int(f[1], 0)
print(n)
PY
)
	echo "$delay,$tool,$r,$t99,$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'),$rescued" >>"$OUT/runs.csv"
}

for delay in $DELAYS; do
	mount_disk "$delay"
	for r in $(seq "$RUNS"); do
		n=${#TOOLS[@]}
		for i in $(seq 0 $((n - 1))); do
			run "$delay" "${TOOLS[$(((i + r) % n))]}" "$r"
		done
	done
	unmount_disk
done

awk -F, 'NR > 1 { k = $1 "," $2; n[k]++; t99[k, n[k]] = $4; e[k, n[k]] = $5; res[k] = $6
	delays[$1] = 1 }
function med(arr, k, cnt,   i, j, x, a) {
	for (i = 1; i <= cnt; i++) a[i] = arr[k, i]
	for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++)
		if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
	return cnt % 2 ? a[(cnt + 1) / 2] : (a[cnt / 2] + a[cnt / 2 + 1]) / 2
}
END {
	printf "%-9s %-9s %9s %9s %14s %12s %12s\n", "delay_us", "tool", "t99 (s)", "end (s)",
		"rescued", "t99 dd/pdd", "end dd/pdd"
	for (d in delays) {
		kd = d ",ddrescue"; kp = d ",pdd"
		d99 = med(t99, kd, n[kd]); dend = med(e, kd, n[kd])
		p99 = med(t99, kp, n[kp]); pend = med(e, kp, n[kp])
		printf "%-9s %-9s %9.3f %9.3f %14d\n", d, "ddrescue", d99, dend, res[kd]
		printf "%-9s %-9s %9.3f %9.3f %14d %11.2fx %11.2fx\n", d, "pdd", p99, pend, res[kp],
			d99 / p99, dend / pend
	}
}' "$OUT/runs.csv" | {
	echo "rescue of $SIZE_MIB MiB, ${#bad[@]} bad sectors, $RUNS rounds, medians"
	cat
} | tee "$OUT/table.txt"
