#!/usr/bin/env bash
# scripts/bench.sh - benchmark pdd against sgp_dd, GNU dd and a fio ceiling.
#
# What it measures
#   A whole-device copy between two loop devices of its own (created with
#   --direct-io=on over sparse files on disk or in /dev/shm), for each
#   transfer size X in $XFERS:
#     pdd     if=SRC of=DST bs=SECTOR bpt=X/SECTOR threads=4 engine=threads
#     sgp_dd  if=SRC of=DST bs=SECTOR bpt=X/SECTOR thr=4 dio=1
#             iflag=direct oflag=direct   (dio=1 only affects sg devices;
#             without the direct flags sgp_dd 1.46 does buffered I/O on
#             block devices, so they are added to compare like with like)
#     dd      if=SRC of=DST bs=X iflag=direct oflag=direct
#     fio     the ceiling: one fio run with a read job on SRC and a write
#             job on DST at the same time (libaio, O_DIRECT, bs=X,
#             iodepth=16); its figure is the smaller of the two bandwidths.
#   The four run interleaved, RUNS rounds, the order rotated every round;
#   page cache is dropped before every run.  Wall time, user+sys CPU and
#   peak RSS come from /usr/bin/time (wall is also bracketed with
#   nanosecond clocks, which MiB/s uses); fio's bandwidth from its JSON.
#   Every copying tool's copy is verified once per transfer size (first
#   round: the target is overwritten with zeros first, then the whole
#   device is compared with cmp), so a fast wrong copy cannot win.
#
# Output (in $OUT): runs.csv (every run), summary.csv (the table),
#   chart.dat + chart.gp + chart.png (MiB/s and CPU s/GiB bars), info.txt
#   (versions, devices, settings), logs/ (each run's stderr).  The table
#   gives medians over the runs, the maximum RSS, and ratios to the fio
#   ceiling and to sgp_dd, measured side by side - compare ratios, not
#   absolute numbers, on a shared machine.
#
# How to run (as root, from the repository root, after `make`):
#   sudo scripts/bench.sh
#   SIZE_MIB=128 RUNS=2 scripts/bench.sh             # quick check
#   XFERS="4096 65536 1048576" BACKING=mem scripts/bench.sh
#   scripts/bench.sh --help
#
# Needs: losetup, sgp_dd (sg3-utils), dd, fio, jq, gnuplot, cmp and
# /usr/bin/time (package `time`; installed with apt-get when missing).
# Only the loop devices and files this script creates are touched.

set -euo pipefail

usage() {
	cat <<'EOF'
Usage: scripts/bench.sh [--help]

Benchmark pdd against sgp_dd, GNU dd and a fio read+write ceiling on two
loop devices of its own.  Run as root from the repository root.
Settings are environment variables:

  SIZE_MIB=1024      size of each loop device in MiB
  RUNS=5             rounds; each round runs every tool once per size
  XFERS="65536"      transfer sizes in bytes, space separated (multiples
                     of SECTOR); bpt = X / SECTOR for pdd and sgp_dd
  BACKING=disk       disk: sparse files in BENCH_DIR (default
                     /var/tmp/pdd-bench); mem: files in /dev/shm/pdd-bench
  BENCH_DIR=DIR      override the directory of the backing files
  SECTOR=512         logical sector size of the loops (512 or 4096); also bs
  THREADS=4          threads for pdd and sgp_dd
  FIO_DEPTH=16       iodepth of the fio ceiling jobs
  OUT=DIR            results folder (default results/bench-DATE-TIME)
  PDD=./pdd          pdd binary

Writes runs.csv, summary.csv, chart.png, info.txt and logs/ into OUT and
prints the summary table.
EOF
}

case "${1:-}" in
-h|--help) usage; exit 0 ;;
"") ;;
*) echo "bench.sh: unknown argument '$1' (settings are environment variables; see --help)" >&2; exit 2 ;;
esac

SIZE_MIB=${SIZE_MIB:-1024}
RUNS=${RUNS:-5}
XFERS=${XFERS:-65536}
BACKING=${BACKING:-disk}
SECTOR=${SECTOR:-512}
THREADS=${THREADS:-4}
FIO_DEPTH=${FIO_DEPTH:-16}
OUT=${OUT:-results/bench-$(date +%Y%m%d-%H%M%S)}
PDD=${PDD:-./pdd}

die() { echo "bench.sh: $*" >&2; exit 1; }
note() { echo "bench.sh: $*" >&2; }
is_uint() { [[ $1 =~ ^[0-9]+$ ]] && (( 10#$1 > 0 )); }

# --- checks ----------------------------------------------------------------
is_uint "$SIZE_MIB" || die "SIZE_MIB must be a positive integer"
is_uint "$RUNS" || die "RUNS must be a positive integer"
is_uint "$THREADS" || die "THREADS must be a positive integer"
is_uint "$FIO_DEPTH" || die "FIO_DEPTH must be a positive integer"
[[ $SECTOR == 512 || $SECTOR == 4096 ]] || die "SECTOR must be 512 or 4096"
case "$BACKING" in
disk) BENCH_DIR=${BENCH_DIR:-/var/tmp/pdd-bench} ;;
mem)  BENCH_DIR=${BENCH_DIR:-/dev/shm/pdd-bench} ;;
*) die "BACKING must be disk or mem" ;;
esac
read -r -a XFER_LIST <<<"$XFERS"
(( ${#XFER_LIST[@]} > 0 )) || die "XFERS is empty"
for x in "${XFER_LIST[@]}"; do
	is_uint "$x" || die "transfer size '$x' is not a positive integer"
	(( x % SECTOR == 0 )) || die "transfer size $x is not a multiple of SECTOR=$SECTOR"
	(( x <= SIZE_MIB * 1048576 )) || die "transfer size $x exceeds the device"
done
[[ $(id -u) == 0 ]] || die "must run as root (loop devices, drop_caches)"
[[ -x $PDD ]] || die "no pdd binary at '$PDD' (run make, or set PDD=)"
PDD=$(cd "$(dirname "$PDD")" && pwd)/$(basename "$PDD")

if [[ ! -x /usr/bin/time ]]; then
	note "installing package 'time' for /usr/bin/time"
	apt-get install -y time >/dev/null || { apt-get update >/dev/null && apt-get install -y time >/dev/null; }
fi
if ! command -v jq >/dev/null; then
	note "installing package 'jq' to read fio's JSON"
	apt-get install -y jq >/dev/null || { apt-get update >/dev/null && apt-get install -y jq >/dev/null; }
fi
for c in losetup sgp_dd dd fio jq gnuplot cmp awk; do
	command -v "$c" >/dev/null || die "'$c' not found (scripts/install-deps.sh installs it)"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time still missing"

# --- resources, cleaned up on exit ---------------------------------------
LOOPS=()	# exactly the names losetup printed for us
FILES=()	# backing files we created
MADE_DIR=""
cleanup() {
	local rc=$? d f
	set +e
	for d in "${LOOPS[@]}"; do
		losetup -d "$d" || note "could not detach $d"
	done
	for f in "${FILES[@]}"; do
		rm -f -- "$f"
	done
	[[ -n $MADE_DIR ]] && rmdir -- "$MADE_DIR" 2>/dev/null
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [[ ! -d $BENCH_DIR ]]; then
	mkdir -p -- "$BENCH_DIR"
	MADE_DIR=$BENCH_DIR
fi
need_kib=$(( 2 * SIZE_MIB * 1024 + 65536 ))
avail_kib=$(df -Pk -- "$BENCH_DIR" | awk 'NR==2 {print $4}')
(( avail_kib >= need_kib )) || die "$BENCH_DIR has ${avail_kib} KiB free, needs ${need_kib}"

new_loop() {	# new_loop NAME -> sets LOOPDEV
	local f
	f=$(mktemp -- "$BENCH_DIR/$1.XXXXXX")
	FILES+=("$f")
	truncate -s "${SIZE_MIB}M" -- "$f"
	if ! LOOPDEV=$(losetup --find --show --direct-io=on --sector-size "$SECTOR" -- "$f"); then
		die "losetup failed for $f"
	fi
	[[ $LOOPDEV == /dev/* ]] || die "losetup printed '$LOOPDEV'"
	LOOPS+=("$LOOPDEV")
}
new_loop src; SRC=$LOOPDEV
new_loop dst; DST=$LOOPDEV
loop_dio() { cat "/sys/block/$(basename "$1")/loop/dio" 2>/dev/null || echo "?"; }
for d in "$SRC" "$DST"; do
	[[ $(loop_dio "$d") == 1 ]] || note "warning: $d has direct I/O off (backing fs refused it)"
	[[ $(blockdev --getss "$d") == "$SECTOR" ]] || die "$d: sector size is not $SECTOR"
done
note "source $SRC, target $DST (${SIZE_MIB} MiB each, sector $SECTOR, backing $BACKING in $BENCH_DIR)"

mkdir -p -- "$OUT/logs"
OUT=$(cd "$OUT" && pwd)

drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

note "filling the source with random data, the target with zeros"
dd if=/dev/urandom of="$SRC" bs=1M count="$SIZE_MIB" iflag=fullblock oflag=direct status=none
dd if=/dev/zero of="$DST" bs=1M count="$SIZE_MIB" oflag=direct status=none

{
	echo "date: $(date -Is)"
	echo "host: $(uname -srm), $(nproc) cpus"
	echo "settings: SIZE_MIB=$SIZE_MIB RUNS=$RUNS XFERS=\"$XFERS\" BACKING=$BACKING BENCH_DIR=$BENCH_DIR SECTOR=$SECTOR THREADS=$THREADS FIO_DEPTH=$FIO_DEPTH"
	echo "source: $SRC dio=$(loop_dio "$SRC"), target: $DST dio=$(loop_dio "$DST")"
	echo "pdd: $PDD ($("$PDD" --version 2>&1 | head -1))"
	echo "sgp_dd: $(sgp_dd --version 2>&1 | head -1)"
	echo "dd: $(dd --version | head -1)"
	echo "fio: $(fio --version)"
} >"$OUT/info.txt"

# --- one run ---------------------------------------------------------------
RUNS_CSV=$OUT/runs.csv
echo "xfer,tool,round,rc,wall_s,time_e_s,user_s,sys_s,maxrss_kib,mib_s,verify" >"$RUNS_CSV"
SIZE_BYTES=$(( SIZE_MIB * 1048576 ))
declare -A SKIP=()	# "tool:xfer" -> reason, for combinations a tool refused
declare -A VERIFY=()	# "tool:xfer" -> ok / FAIL

tool_cmd() {	# tool_cmd TOOL X -> CMD array
	local bpt=$(( $2 / SECTOR ))
	case "$1" in
	pdd)    CMD=("$PDD" "if=$SRC" "of=$DST" "bs=$SECTOR" "bpt=$bpt" "threads=$THREADS" engine=threads) ;;
	sgp_dd) CMD=(sgp_dd "if=$SRC" "of=$DST" "bs=$SECTOR" "bpt=$bpt" "thr=$THREADS" dio=1 iflag=direct oflag=direct) ;;
	dd)     CMD=(dd "if=$SRC" "of=$DST" "bs=$2" iflag=direct oflag=direct) ;;
	fio)    CMD=(fio --output-format=json --direct=1 --ioengine=libaio --bs="$2"
			--iodepth="$FIO_DEPTH" --size="$SIZE_BYTES"
			--name=read --filename="$SRC" --rw=read
			--name=write --filename="$DST" --rw=write) ;;
	esac
}

run_one() {	# run_one TOOL X ROUND
	local tool=$1 x=$2 round=$3 verify="" log tf t0 t1 rc wall e u s m mibs r w
	[[ -n ${SKIP[$tool:$x]:-} ]] && return 0
	tool_cmd "$tool" "$x"
	log=$OUT/logs/$tool-$x-r$round.log
	tf=$OUT/logs/$tool-$x-r$round.time
	if [[ $tool != fio && -z ${VERIFY[$tool:$x]:-} ]]; then
		# Verified run: wipe the target so that a copy which writes
		# nothing (or too little) cannot pass the comparison.
		dd if=/dev/zero of="$DST" bs=1M count="$SIZE_MIB" oflag=direct status=none
		verify=pending
	fi
	drop_caches
	t0=$(date +%s%N)
	rc=0
	if [[ $tool == fio ]]; then
		/usr/bin/time -f '%e %U %S %M' -o "$tf" "${CMD[@]}" >"$log.json" 2>"$log" || rc=$?
	else
		/usr/bin/time -f '%e %U %S %M' -o "$tf" "${CMD[@]}" >"$log" 2>&1 || rc=$?
	fi
	t1=$(date +%s%N)
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
	read -r e u s m < <(tail -n 1 "$tf")
	mibs=""
	if (( rc != 0 )); then
		if [[ $tool == sgp_dd ]]; then
			SKIP[$tool:$x]="rc=$rc"
			note "sgp_dd refused bs=$SECTOR bpt=$(( x / SECTOR )) (rc=$rc, see $log); recorded as n/a"
		else
			note "$tool failed at X=$x round $round (rc=$rc, see $log)"
		fi
		[[ -n $verify ]] && verify=""
	elif [[ $tool == fio ]]; then
		r=$(jq '[.jobs[] | select(.jobname == "read")  | .read.bw_bytes]  | add' "$log.json")
		w=$(jq '[.jobs[] | select(.jobname == "write") | .write.bw_bytes] | add' "$log.json")
		mibs=$(awk -v r="$r" -v w="$w" 'BEGIN { m = r < w ? r : w; printf "%.1f", m / 1048576 }')
		echo "read $r B/s, write $w B/s" >>"$log"
	else
		mibs=$(awk -v sz="$SIZE_MIB" -v t="$wall" 'BEGIN { printf "%.1f", sz / t }')
	fi
	if [[ $verify == pending ]]; then
		drop_caches
		if cmp -- "$SRC" "$DST" >>"$log" 2>&1; then
			verify=ok
		else
			verify=FAIL
			note "$tool X=$x: copy differs from the source (see $log)"
		fi
		VERIFY[$tool:$x]=$verify
	fi
	echo "$x,$tool,$round,$rc,$wall,$e,$u,$s,$m,$mibs,$verify" >>"$RUNS_CSV"
	printf '  %-6s X=%-8s round %-2s rc=%-3s %8s s %8s MiB/s  cpu %5.2f s  rss %6d KiB %s\n' \
		"$tool" "$x" "$round" "$rc" "$wall" "${mibs:-n/a}" \
		"$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" "$m" "$verify" >&2
}

TOOLS=(pdd sgp_dd dd fio)
NT=${#TOOLS[@]}
for x in "${XFER_LIST[@]}"; do
	note "transfer size $x bytes (bpt=$(( x / SECTOR )) x bs=$SECTOR), $RUNS rounds"
	for (( round = 1; round <= RUNS; round++ )); do
		for (( i = 0; i < NT; i++ )); do
			run_one "${TOOLS[(i + round - 1) % NT]}" "$x" "$round"
		done
	done
done

# --- summary ---------------------------------------------------------------
# median of the numbers on stdin ("" when none)
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) printf "%.3f\n", v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# ok_runs TOOL X -> lines "mib_s user sys rss" of successful runs
ok_runs() { awk -F, -v t="$1" -v x="$2" '$1 == x && $2 == t && $4 == 0 && $10 != "" { print $10, $7, $8, $9 }' "$RUNS_CSV"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f\n", a / b }'; }
fmt() { [[ -z $1 ]] && return 0; awk -v v="$1" -v f="%.$2f\n" 'BEGIN { printf f, v }'; }

SUM_CSV=$OUT/summary.csv
echo "tool,xfer,runs_ok,mib_s_median,cpu_s_per_gib_median,peak_rss_mib,ratio_fio,ratio_sgp_dd,verify" >"$SUM_CSV"
CHART=$OUT/chart.dat
echo "xfer pdd sgp_dd dd fio pdd_cpu sgp_dd_cpu dd_cpu fio_cpu" >"$CHART"
GIB=$(awk -v s="$SIZE_MIB" 'BEGIN { print s / 1024 }')
for x in "${XFER_LIST[@]}"; do
	declare -A MED=() CPU=()
	for t in "${TOOLS[@]}"; do
		MED[$t]=$(ok_runs "$t" "$x" | awk '{ print $1 }' | median)
		CPU[$t]=$(ok_runs "$t" "$x" | awk -v g="$GIB" '{ print ($2 + $3) / g }' | median)
	done
	fiomed=${MED[fio]}
	sgpmed=${MED[sgp_dd]}
	[[ ${VERIFY[sgp_dd:$x]:-} == FAIL ]] && sgpmed=""
	for t in "${TOOLS[@]}"; do
		n=$(ok_runs "$t" "$x" | wc -l)
		rss=$(ok_runs "$t" "$x" | awk 'BEGIN { m = -1 } { if ($4 > m) m = $4 } END { if (m < 0) print ""; else printf "%.1f\n", m / 1024 }')
		v=${VERIFY[$t:$x]:-n/a}
		[[ $t == fio ]] && v="-"
		med=$(fmt "${MED[$t]}" 1) cpu=$(fmt "${CPU[$t]}" 3)
		rf=$(ratio "$med" "$fiomed"); rs=$(ratio "$med" "$sgpmed")
		if [[ $v == FAIL ]]; then rf="wrong"; rs="wrong"; MED[$t]=""; fi
		[[ -n ${SKIP[$t:$x]:-} ]] && v="n/a (${SKIP[$t:$x]})"
		echo "$t,$x,$n,${med:-n/a},${cpu:-n/a},${rss:-n/a},$rf,$rs,$v" >>"$SUM_CSV"
	done
	na() { echo "${1:-n/a}"; }
	echo "$x $(na "${MED[pdd]}") $(na "${MED[sgp_dd]}") $(na "${MED[dd]}") $(na "${MED[fio]}") $(na "${CPU[pdd]}") $(na "${CPU[sgp_dd]}") $(na "${CPU[dd]}") $(na "${CPU[fio]}")" >>"$CHART"
	unset MED CPU
done

human_size() { awk -v b="$1" 'BEGIN { if (b % 1048576 == 0) printf "%dMiB", b / 1048576; else if (b % 1024 == 0) printf "%dKiB", b / 1024; else printf "%dB", b }'; }

cat >"$OUT/chart.gp" <<EOF
set terminal pngcairo noenhanced size 1200,500 font ",10"
set output "$OUT/chart.png"
set datafile missing "n/a"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key top left
set grid ytics
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set multiplot layout 1,2 title "pdd bench: ${SIZE_MIB} MiB, ${BACKING}-backed loops, sector ${SECTOR}, medians of ${RUNS} runs"
set title "throughput (MiB/s, higher is better)"
set xlabel "transfer size (bytes)"
plot "$CHART" using 2:xtic(1) title "pdd", '' using 3 title "sgp_dd", '' using 4 title "dd", '' using 5 title "fio ceiling"
set title "CPU seconds per GiB (user+sys, lower is better)"
plot "$CHART" using 6:xtic(1) title "pdd", '' using 7 title "sgp_dd", '' using 8 title "dd", '' using 9 title "fio (read+write)"
unset multiplot
EOF
if ! gnuplot "$OUT/chart.gp" 2>"$OUT/logs/gnuplot.log"; then
	note "gnuplot failed (see $OUT/logs/gnuplot.log)"
fi

echo
echo "pdd bench: ${SIZE_MIB} MiB copy, ${BACKING}-backed loops ($SRC -> $DST), sector $SECTOR, $RUNS runs, threads $THREADS, fio iodepth $FIO_DEPTH"
printf '%-7s %-8s %5s %9s %10s %8s %7s %8s  %s\n' tool xfer runs "MiB/s" "CPU s/GiB" "RSS MiB" "x fio" "x sgp_dd" verify
awk -F, 'NR > 1 { print }' "$SUM_CSV" | while IFS=, read -r t x n med cpu rss rf rs v; do
	printf '%-7s %-8s %5s %9s %10s %8s %7s %8s  %s\n' "$t" "$(human_size "$x")" "$n" "$med" "$cpu" "$rss" "$rf" "$rs" "$v"
done
echo "(MiB/s and CPU: medians; RSS: maximum; fio = concurrent read+write ceiling, smaller bandwidth)"
echo "results: $OUT"
