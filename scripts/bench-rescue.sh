#!/usr/bin/env bash
# scripts/bench-rescue.sh - rescuing a disk with bad sectors: pdd coe=1
# against GNU ddrescue.
#
# The disk is a loop device (direct I/O, nomerges=2) over tests/faultfs,
# whose file fails NBAD scattered 512-byte sectors with EIO (the same
# sectors every run: positions from SEED).  Its backing file and the
# images live in /dev/shm, so that the faulty device and the tools, not a
# disk under them, set the pace.  Each round copies the whole device to
# a fresh image with each tool, interleaved, the order rotated:
#   ddrescue   ddrescue -d -b 512 DEV IMG MAP     its defaults: copy in
#                                                 64 KiB clusters, then
#                                                 trim and scrape around
#                                                 the errors
#   pdd        pdd if=DEV of=IMG coe=1             its defaults (engine,
#                                                 transfer size, queue)
#   pdd+map    pdd if=DEV of=IMG coe=1 map=MAP     the same, keeping a map
# DELAY_US gives every request to the device that service time (faultfs
# delay_us=), as a disk's seek and rotation would; 0 leaves the pace to
# memory and FUSE.
# Every copy is checked: the image must be the source with exactly the
# bad sectors zero, and each map must list exactly those sectors as bad.
# The table gives the median seconds and the ratio of ddrescue's time to
# each tool's.
#
#   scripts/bench-rescue.sh                   # 1 GiB, 20 bad sectors
#   SIZE_MIB=256 RUNS=3 scripts/bench-rescue.sh
#
# Settings (environment):
#   SIZE_MIB=1024 NBAD=20 RUNS=5 SEED=1 DELAY_US=0
#   OUT=results/bench-rescue-DATE
#   PDD=./pdd
# Writes runs.csv and table.txt into OUT.  Needs root (loop devices,
# FUSE), ddrescue and ddrescuelog (gddrescue), tests/faultfs/faultfs
# (make check builds it).

set -euo pipefail

SIZE_MIB=${SIZE_MIB:-1024}
NBAD=${NBAD:-20}
DELAY_US=${DELAY_US:-0}
RUNS=${RUNS:-5}
SEED=${SEED:-1}
OUT=${OUT:-results/bench-rescue-$(date +%Y%m%d-%H%M%S)}
PDD=${PDD:-./pdd}
FAULTFS=${FAULTFS:-tests/faultfs/faultfs}
STAMP=${STAMP:-tests/tools/stamp}
DIR=${DIR:-/dev/shm/pdd-bench-rescue.$$}

die() { echo "bench-rescue.sh: $*" >&2; exit 1; }
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
[[ $(id -u) == 0 ]] || die "needs root (loop devices, FUSE)"
for c in ddrescue ddrescuelog losetup cmp awk bc; do
	command -v "$c" >/dev/null || die "'$c' not found (scripts/install-deps.sh installs it)"
done
for x in "$PDD" "$FAULTFS" "$STAMP"; do
	[[ -x $x ]] || die "no '$x' (run make check first)"
done
PDD=$(realpath "$PDD")

mkdir -p "$OUT/logs" "$DIR/mnt"
LOOP=
cleanup() {
	[[ -n $LOOP ]] && losetup -d "$LOOP"
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		umount "$DIR/mnt" 2>/dev/null && break
		mountpoint -q "$DIR/mnt" || break
		sleep 0.2
	done
	rm -rf "$DIR"
}
trap cleanup EXIT

size=$((SIZE_MIB << 20))
nsec=$((size / 512))
"$STAMP" fill "$DIR/back" 0 "$size" 9
# NBAD distinct sectors, one in each of NBAD equal stretches of the disk
RANDOM=$SEED
bad=() faults=
for i in $(seq 0 $((NBAD - 1))); do
	s=$((i * nsec / NBAD + (RANDOM * 32768 + RANDOM) % (nsec / NBAD)))
	bad+=("$s")
	faults+="${faults:+,}$((s * 512))-$((s * 512 + 512))"
done
cp "$DIR/back" "$DIR/want"
for s in "${bad[@]}"; do
	dd if=/dev/zero of="$DIR/want" bs=512 seek="$s" count=1 conv=notrunc status=none
done
"$FAULTFS" "$DIR/back" "$DIR/mnt" "read=$faults" "delay_us=$DELAY_US" || die "faultfs did not mount"
LOOP=$(losetup --find --show --direct-io=on "$DIR/mnt/disk") || die "losetup failed"
echo 2 >"/sys/block/${LOOP#/dev/}/queue/nomerges"
echo "$SIZE_MIB MiB on $LOOP, $DELAY_US us per request, bad sectors: ${bad[*]}" | tee "$OUT/setup.txt"

TOOLS=(ddrescue pdd pdd+map)
echo "tool,run,secs" >"$OUT/runs.csv"

# run TOOL RUN: one rescue to a fresh image, timed and checked
run() {
	local tool=$1 r=$2 img=$DIR/img map=$DIR/map log=$OUT/logs/$1-$2.log t0 t1 rc=0
	rm -f "$img" "$map" "$map.bak"
	t0=$EPOCHREALTIME
	case $tool in
	ddrescue) ddrescue -d -b 512 "$LOOP" "$img" "$map" >"$log" 2>&1 || rc=$? ;;
	pdd)      "$PDD" if="$LOOP" of="$img" coe=1 >"$log" 2>&1 || rc=$? ;;
	pdd+map)  "$PDD" if="$LOOP" of="$img" coe=1 map="$map" >"$log" 2>&1 || rc=$? ;;
	esac
	t1=$EPOCHREALTIME
	case $tool in
	ddrescue) [[ $rc == 0 ]] || die "ddrescue failed ($rc): see $log" ;;
	*)        [[ $rc == 3 ]] || die "$tool exited $rc, not 3: see $log" ;;
	esac
	# ddrescue leaves bad sectors untouched: a fresh image has zeros there
	truncate -s "$size" "$img"
	cmp -s "$DIR/want" "$img" || die "$tool's image is not the source with the bad sectors zero"
	if [[ $tool != pdd ]]; then
		[[ "$(ddrescuelog -b 512 -l- "$map" | tr '\n' ' ')" == "${bad[*]} " ]] ||
			die "$tool's map does not list exactly the bad sectors"
	fi
	echo "$tool,$r,$(echo "$t1 - $t0" | bc -l)" >>"$OUT/runs.csv"
}

for r in $(seq "$RUNS"); do
	n=${#TOOLS[@]}
	for i in $(seq 0 $((n - 1))); do
		run "${TOOLS[$(((i + r) % n))]}" "$r"
	done
done

awk -F, 'NR > 1 { n[$1]++; v[$1, n[$1]] = $3 }
function med(t, cnt,   i, j, x, a) {
	for (i = 1; i <= cnt; i++) a[i] = v[t, i]
	for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++)
		if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
	return cnt % 2 ? a[(cnt + 1) / 2] : (a[cnt / 2] + a[cnt / 2 + 1]) / 2
}
END {
	for (t in n) m[t] = med(t, n[t])
	printf "%-10s %10s %10s %14s\n", "tool", "seconds", "MiB/s", "ddrescue/tool"
	split("ddrescue pdd pdd+map", order, " ")
	for (i = 1; i <= 3; i++) { t = order[i]
		printf "%-10s %10.2f %10.1f %13.2fx\n", t, m[t], '"$SIZE_MIB"' / m[t], m["ddrescue"] / m[t] }
}' "$OUT/runs.csv" | {
	echo "rescue of $SIZE_MIB MiB with $NBAD bad sectors, $DELAY_US us per request, $RUNS rounds, medians"
	cat
} | tee "$OUT/table.txt"
