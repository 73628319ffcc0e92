#!/usr/bin/env bash
# scripts/bench-rate.sh - does a copy take the slower disk's time?
#
# A copy that reads, then writes, then reads again takes the read time
# plus the write time; one whose reads and writes overlap takes the time
# of the slower disk alone.  That is "the slower disk's time" here: the
# larger of the source's read-only time and the target's write-only time,
# each measured with fio (libaio, direct, iodepth 16) at the same transfer
# size on the same devices.
#
# Two models of a disk with a rate, each a source and a target loop device
# (direct I/O) over files in /dev/shm:
#   blkio  cgroup v1 blkio limits (blkio.throttle.read_bps_device on the
#          source, write_bps_device on the target) on a cgroup of this
#          script's own, every tool run inside it.  The token bucket gives
#          an idle device credit, so even dd comes near the slower disk's
#          time; it shows whether a tool keeps up.
#   rate   tests/faultfs rate= under each loop: one request served at a
#          time, each taking its size / rate, with no idle credit.  dd
#          really takes the read time plus the write time here.
# For each limit pair R/W in LIMITS (MB/s, 10^6 bytes: the source's read
# rate / the target's write rate) and each transfer size X in XFERS, each
# round runs, interleaved and in rotated order, with the page cache
# dropped before each:
#   dd          bs=X iflag=direct oflag=direct
#   sgp_dd      bs=512 bpt=X/512 thr=4 iflag=direct oflag=direct
#   pdd-ENGINE  bs=512 bpt=X/512 engine=ENGINE, each engine in ENGINES
#   pdd-stream  pdd if=SRC of=- | pdd if=- of=DST (the engine pdd picks)
#   fio-read    the source alone; fio-write  the target alone
# Every copy is checked once per setting with cmp (the target zeroed
# first).  Times are wall clock from the start of the command, each
# program loaded once before (fio's from its own report, without its
# start).  The table gives median seconds, the ratio to the slower disk's
# time (target: at most 1.05), CPU seconds per GiB, peak RSS and, for the
# rate model, the disk time the host lost: faultfs's turns that ran over
# because their server thread was woken late (late_us in its control
# file), source and target together, in ms.
#
# Jitter (JITTER=1): a rate-model source at JIT_READ MB/s whose every
# other JIT_AREA_MIB MiB area is served at JIT_SLOW MB/s (faultfs
# slow_rate=), on average about the rate of a steady target at JIT_WRITE
# MB/s, copied by pdd (uring) at each qd in QDS and each X: how the window
# in flight (qd x X) absorbs the slow areas, as mbuffer's buffer does.
#
#   scripts/bench-rate.sh                        # everything, ~45 min
#   MODELS=blkio LIMITS=120/90 RUNS=1 JITTER=0 scripts/bench-rate.sh
#   MODELS= scripts/bench-rate.sh                # the jitter sweep alone
#
# Settings (environment): MODELS="blkio rate" LIMITS="120/90 90/120
#   100/100" XFERS="65536 1048576" SIZE_MIB=512 RUNS=3
#   ENGINES="uring aio threads" JITTER=1 QDS="1 2 4 8 16 32 64"
#   JIT_READ=240 JIT_SLOW=60 JIT_WRITE=90 JIT_AREA_MIB=8
#   OUT=results/bench-rate-DATE PDD=./pdd
# Writes runs.csv, table.txt (and jitter.txt) into OUT.  Needs root,
# fio, sgp_dd, tests/faultfs/faultfs (make check builds it), /usr/bin/time.
# Only the loop devices, mounts, cgroup and files it makes are touched.

set -euo pipefail

MODELS=${MODELS-blkio rate}
LIMITS=${LIMITS:-120/90 90/120 100/100}
XFERS=${XFERS:-65536 1048576}
SIZE_MIB=${SIZE_MIB:-512}
RUNS=${RUNS:-3}
ENGINES=${ENGINES:-uring aio threads}
JITTER=${JITTER:-1}
QDS=${QDS:-1 2 4 8 16 32 64}
JIT_READ=${JIT_READ:-240}
JIT_SLOW=${JIT_SLOW:-60}
JIT_WRITE=${JIT_WRITE:-90}
JIT_AREA_MIB=${JIT_AREA_MIB:-8}
OUT=${OUT:-results/bench-rate-$(date +%Y%m%d-%H%M%S)}
PDD=${PDD:-./pdd}
FAULTFS=${FAULTFS:-tests/faultfs/faultfs}
DIR=${DIR:-/dev/shm/pdd-bench-rate.$$}
CG=/sys/fs/cgroup/blkio/pdd-bench-rate.$$

die() { echo "bench-rate.sh: $*" >&2; exit 1; }
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,50p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
[[ $(id -u) == 0 ]] || die "needs root (loop devices, cgroups, FUSE)"
for c in fio sgp_dd dd losetup cmp awk jq; do
	command -v "$c" >/dev/null || die "'$c' not found (scripts/install-deps.sh installs it)"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (package time)"
for x in "$PDD" "$FAULTFS"; do [[ -x $x ]] || die "no '$x' (run make check first)"; done
PDD=$(realpath "$PDD")
FAULTFS=$(realpath "$FAULTFS")
[[ " $MODELS " != *" blkio "* || -e /sys/fs/cgroup/blkio/blkio.throttle.read_bps_device ]] ||
	die "no cgroup v1 blkio hierarchy at /sys/fs/cgroup/blkio (MODELS=rate runs without it)"

mkdir -p "$OUT/logs" "$DIR"
OUT=$(realpath "$OUT")
LOOPS=() MOUNTS=()
cleanup() {
	set +e
	local d
	for d in "${LOOPS[@]}"; do unmerged "$d" 0; losetup -d "$d"; done
	for d in "${MOUNTS[@]}"; do
		for _ in $(seq 50); do fusermount3 -u "$d" 2>/dev/null && break; sleep 0.2; done
	done
	# an interrupted tool may still be leaving the cgroup
	for _ in $(seq 50); do [[ -d $CG ]] || break; rmdir "$CG" 2>/dev/null || sleep 0.1; done
	# never into a faultfs still mounted: its files are the backing files
	for d in "${MOUNTS[@]}"; do
		mountpoint -q "$d" && { echo "bench-rate.sh: $d still mounted; $DIR left" >&2; return; }
	done
	rm -rf -- "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

MiB=1048576
BYTES=$((SIZE_MIB * MiB))
head -c "$BYTES" /dev/urandom >"$DIR/src.img"
truncate -s "$BYTES" "$DIR/dst.img"
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
devno() { lsblk -dno MAJ:MIN "$1" | tr -d ' '; }
loop() {	# loop FILE -> LOOPDEV (direct I/O, requests not merged)
	LOOPDEV=$(losetup --find --show --direct-io=on "$1") || die "losetup $1 failed"
	LOOPS+=("$LOOPDEV")
	unmerged "$LOOPDEV" 2
}
# a loop device keeps nomerges after it is detached: 0, the default, is
# put back first
unmerged() { echo "$2" >"/sys/block/${1#/dev/}/queue/nomerges"; }
unloop_all() {
	local d m
	for d in "${LOOPS[@]}"; do unmerged "$d" 0; losetup -d "$d" || die "cannot detach $d"; done
	for m in "${MOUNTS[@]}"; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do fusermount3 -u "$m" 2>/dev/null && break; sleep 0.2; done
	done
	LOOPS=() MOUNTS=()
}
mbps() { echo $(($1 * 1000000)); }

# setup MODEL R W [SRC_FAULTS...]: SRC and DST, and RUN_IN (a cgroup or none)
setup() {
	local model=$1 r=$2 w=$3
	shift 3
	unloop_all
	if [[ $model == blkio ]]; then
		loop "$DIR/src.img"; SRC=$LOOPDEV
		loop "$DIR/dst.img"; DST=$LOOPDEV
		SRC_BACK=$DIR/src.img DST_BACK=$DIR/dst.img
		[[ -d $CG ]] || mkdir "$CG"
		echo "$(devno "$SRC") $(mbps "$r")" >"$CG/blkio.throttle.read_bps_device"
		echo "$(devno "$DST") $(mbps "$w")" >"$CG/blkio.throttle.write_bps_device"
		RUN_IN=$CG
	else
		mkdir -p "$DIR/ms" "$DIR/md"
		"$FAULTFS" "$DIR/src.img" "$DIR/ms" "rate=$(mbps "$r")" "$@" || die "faultfs on the source"
		MOUNTS+=("$DIR/ms")
		"$FAULTFS" "$DIR/dst.img" "$DIR/md" "rate=$(mbps "$w")" || die "faultfs on the target"
		MOUNTS+=("$DIR/md")
		loop "$DIR/ms/disk"; SRC=$LOOPDEV
		loop "$DIR/md/disk"; DST=$LOOPDEV
		SRC_BACK=$DIR/src.img DST_BACK=$DIR/dst.img
		RUN_IN=
	fi
}

# faultfs's turns that ran over (their server thread woken late): the
# disk's time the host lost, zeroed before each run (the fault set
# written back as it is, with reset) and read after it, in ms
late_reset() {
	local m
	for m in "$DIR/ms" "$DIR/md"; do
		mountpoint -q "$m" || continue
		echo "$(head -1 "$m/control") reset" >"$m/control"
	done
}
late_ms() {	# late_ms MOUNT -> ms, or nothing without faultfs
	mountpoint -q "$1" || return 0
	tail -1 "$1/control" | tr ' ' '\n' | awk -F= '$1 == "late_us" { printf "%.0f", $2 / 1000 }'
}

# inside CMD...: run in the model's cgroup (the process joins it before
# it opens a device, as its io_uring and AIO workers do)
inside() {
	if [[ -n $RUN_IN ]]; then
		bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$RUN_IN" "$@"
	else
		"$@"
	fi
}

tool_cmd() {	# tool_cmd TOOL X [QD] -> CMD
	local t=$1 x=$2 bpt=$(($2 / 512)) n=$((BYTES / $2))
	case $t in
	dd) CMD=(dd "if=$SRC" "of=$DST" "bs=$x" "count=$n" iflag=direct oflag=direct status=none) ;;
	sgp_dd) CMD=(sgp_dd "if=$SRC" "of=$DST" bs=512 "bpt=$bpt" "count=$((BYTES / 512))" thr=4
		iflag=direct oflag=direct) ;;
	pdd-stream) CMD=(bash -c '"$1" if="$2" of=- bs=512 bpt="$4" status=none |
		"$1" if=- of="$3" bs=512 bpt="$4" oflag=direct status=none' _ "$PDD" "$SRC" "$DST" "$bpt") ;;
	pdd-*) CMD=("$PDD" "if=$SRC" "of=$DST" bs=512 "bpt=$bpt" "engine=${t#pdd-}" status=none)
		if [[ -n ${3:-} ]]; then CMD+=("qd=$3"); fi ;;
	fio-read|fio-write) CMD=(fio --output-format=json --direct=1 --ioengine=libaio --bs="$x"
		--iodepth=16 --size="$BYTES" --name=j --rw="${t#fio-}"
		--filename="$([[ $t == fio-read ]] && echo "$SRC" || echo "$DST")") ;;
	*) die "unknown tool $t" ;;
	esac
}

declare -A CHECKED=()
echo "model,limits,xfer,tool,qd,round,rc,seconds,user_s,sys_s,maxrss_kib,check,late_src_ms,late_dst_ms" >"$OUT/runs.csv"
# run_one KEY TOOL X ROUND [QD]: one timed run, a line in runs.csv
run_one() {
	local key=$1 t=$2 x=$3 round=$4 qd=${5:-} log tf t0 t1 rc=0 secs u s m chk="" ls ld
	tool_cmd "$t" "$x" "$qd"
	log=$OUT/logs/${key//\//-}-$t-$x-q${qd:-d}-r$round.log
	tf=$log.time
	if [[ $t != fio-* && -z ${CHECKED[$key:$t:$x:$qd]:-} ]]; then
		dd if=/dev/zero of="$DST_BACK" bs=1M count="$SIZE_MIB" conv=notrunc status=none
		chk=pending
	fi
	drop_caches
	# the programs and their libraries in memory, as on a second run: the
	# devices are read and written with direct I/O either way
	case $t in
	pdd-*) "$PDD" --version >/dev/null ;;
	fio-*) fio --version >/dev/null ;;
	*) "$t" --version >/dev/null 2>&1 || true ;;
	esac
	late_reset
	t0=$(date +%s%N)
	# fio's JSON alone on stdout, its warnings apart
	inside /usr/bin/time -f '%e %U %S %M' -o "$tf" "${CMD[@]}" >"$log" 2>"$log.err" || rc=$?
	t1=$(date +%s%N)
	ls=$(late_ms "$DIR/ms") ld=$(late_ms "$DIR/md")
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
	if [[ $t == fio-* && $rc == 0 ]]; then
		# fio's own run time, without its start
		secs=$(jq '[.jobs[] | (.read.runtime, .write.runtime)] | max / 1000' "$log") || rc=1
	fi
	u=0 s=0 m=0
	[[ -s $tf ]] && read -r _ u s m < <(tail -n 1 "$tf")
	if [[ $chk == pending ]]; then
		drop_caches
		if cmp -n "$BYTES" "$SRC_BACK" "$DST_BACK" >>"$log" 2>&1; then chk=ok; else chk=FAIL; fi
		CHECKED[$key:$t:$x:$qd]=$chk
		[[ $chk == ok ]] || echo "bench-rate.sh: $t X=$x $key: the copy differs (see $log)" >&2
	fi
	echo "${key%%:*},${key#*:},$x,$t,$qd,$round,$rc,$secs,$u,$s,$m,$chk,$ls,$ld" >>"$OUT/runs.csv"
	printf '  %-6s %-8s X=%-8s %-12s qd=%-3s round %s rc=%s %8s s %s%s\n' "${key%%:*}" "${key#*:}" \
		"$x" "$t" "${qd:--}" "$round" "$rc" "$secs" "$chk" "${ls:+ (lost ms: $ls/$ld)}" >&2
}

TOOLS=(dd sgp_dd)
for e in $ENGINES; do TOOLS+=("pdd-$e"); done
TOOLS+=(pdd-stream fio-read fio-write)
{
	echo "date: $(date -Is)"
	echo "host: $(uname -srm), $(nproc) cpus"
	echo "pdd: $("$PDD" --version 2>&1 | paste -sd ';' -)"
	echo "settings: MODELS=\"$MODELS\" LIMITS=\"$LIMITS\" XFERS=\"$XFERS\" SIZE_MIB=$SIZE_MIB RUNS=$RUNS ENGINES=\"$ENGINES\""
} >"$OUT/info.txt"

for model in $MODELS; do
	for lim in $LIMITS; do
		setup "$model" "${lim%/*}" "${lim#*/}"
		for round in $(seq "$RUNS"); do
			for x in $XFERS; do
				n=${#TOOLS[@]}
				for i in $(seq 0 $((n - 1))); do
					run_one "$model:$lim" "${TOOLS[$(((i + round) % n))]}" "$x" "$round"
				done
			done
		done
	done
done

if [[ $JITTER == 1 ]]; then
	# every other area of the source slow: faultfs slow_rate= ranges
	areas=() a=$((JIT_AREA_MIB * MiB))
	for ((o = a; o < BYTES; o += 2 * a)); do areas+=("$o-$((o + a)):$(mbps "$JIT_SLOW")"); done
	slow=$(IFS=,; echo "${areas[*]}")
	setup rate "$JIT_READ" "$JIT_WRITE" "slow_rate=$slow"
	for round in $(seq "$RUNS"); do
		for x in $XFERS; do
			run_one "jitter:$JIT_READ/$JIT_WRITE" fio-read "$x" "$round"
			run_one "jitter:$JIT_READ/$JIT_WRITE" fio-write "$x" "$round"
			run_one "jitter:$JIT_READ/$JIT_WRITE" dd "$x" "$round"
			for qd in $QDS; do run_one "jitter:$JIT_READ/$JIT_WRITE" pdd-uring "$x" "$round" "$qd"; done
		done
	done
fi
unloop_all

# --- the tables --------------------------------------------------------------
awk -F, -v size="$SIZE_MIB" '
NR == 1 { next }
$7 != 0 || $12 == "FAIL" { bad[$1 SUBSEP $2 SUBSEP $3 SUBSEP $4 SUBSEP $5] = 1; next }
{
	k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4 SUBSEP $5
	n[k]++; t[k, n[k]] = $8; c[k, n[k]] = ($9 + $10) / (size / 1024); l[k, n[k]] = $13 + $14
	if ($11 > rss[k]) rss[k] = $11
	if (!(k in seen)) { seen[k] = 1; order[++no] = k }
}
function med(a, k, m,   i, j, v, x) {
	for (i = 1; i <= m; i++) v[i] = a[k, i]
	for (i = 2; i <= m; i++) { x = v[i]; for (j = i - 1; j > 0 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
	return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
END {
	for (i = 1; i <= no; i++) {
		k = order[i]; split(k, f, SUBSEP)
		T[k] = med(t, k, n[k]); C[k] = med(c, k, n[k]); L[k] = med(l, k, n[k])
		slow[f[1] SUBSEP f[2] SUBSEP f[3]] += 0
		g = f[1] SUBSEP f[2] SUBSEP f[3]
		if (f[4] == "fio-read" || f[4] == "fio-write") if (T[k] > slow[g]) slow[g] = T[k]
	}
	printf "%-6s %-8s %-5s %-11s %-3s %8s %9s %10s %8s %8s\n", "model", "limits", "xfer", "tool", "qd", "seconds", "x slower", "CPU s/GiB", "RSS MiB", "lost ms"
	for (i = 1; i <= no; i++) {
		k = order[i]; split(k, f, SUBSEP)
		g = f[1] SUBSEP f[2] SUBSEP f[3]
		printf "%-6s %-8s %-5s %-11s %-3s %8.2f %9.2f %10.2f %8.1f %8s\n", f[1], f[2],
			(f[3] >= 1048576 ? f[3] / 1048576 "M" : f[3] / 1024 "K"), f[4], (f[5] == "" ? "-" : f[5]),
			T[k], (slow[g] > 0 ? T[k] / slow[g] : 0), C[k], rss[k] / 1024, (f[1] == "blkio" ? "-" : L[k])
	}
	for (k in bad) { split(k, f, SUBSEP); printf "FAILED or wrong: %s %s %s %s qd=%s\n", f[1], f[2], f[3], f[4], f[5] }
}' "$OUT/runs.csv" | tee "$OUT/table.txt"
echo "results in $OUT" >&2
