#!/usr/bin/env bash
# scripts/bench.sh - benchmark pdd against sgp_dd, GNU dd and a fio ceiling.
#
# What it measures
#   For each backing in $BACKINGS (disk: files in /var/tmp, mem: files in
#   /dev/shm) and each logical sector size in $SECTORS (512, 4096), one
#   source and one target loop device of its own (losetup --direct-io=on
#   over files of SIZE_MIB), set up, measured and torn down before the next
#   combination, so that at most two backing files exist at a time.  On each
#   pair, for each transfer size X in $XFERS, a copy of COPY bytes from the
#   start of the source to the start of the target:
#     dd          if=SRC of=DST bs=X count=COPY/X iflag=direct oflag=direct
#     sgp_dd      if=SRC of=DST bs=SECTOR bpt=X/SECTOR count=COPY/SECTOR
#                 thr=4 dio=1 iflag=direct oflag=direct   (dio=1 only affects
#                 sg devices; without the direct flags sgp_dd 1.46 does
#                 buffered I/O on block devices, so they are added to
#                 compare like with like)
#     pdd-ENGINE  if=SRC of=DST bs=SECTOR bpt=X/SECTOR count=COPY/SECTOR
#                 engine=ENGINE, once per engine in $ENGINES (threads=4 is
#                 pdd's default; it is given explicitly for engine=threads,
#                 and for every engine when THREADS is not 4)
#     fio         the ceiling: one fio run with a read job on SRC and a write
#                 job on DST at the same time (libaio, O_DIRECT, bs=X,
#                 iodepth=16, size=COPY); its figure is the smaller of the
#                 two bandwidths.
#   COPY is COPY_MIB_SMALL MiB for X < 64 KiB (dd and sgp_dd manage only
#   50-70 MiB/s there) and the whole device otherwise.
#   The tools run interleaved, RUNS rounds, the order rotated every round;
#   page cache is dropped before every run.  Wall time, user+sys CPU and
#   peak RSS come from /usr/bin/time (wall is also bracketed with
#   nanosecond clocks, which MiB/s uses); fio's bandwidth from its JSON.
#   CPU is the tool's own (its process and threads): the loop devices'
#   kernel workers, which do the I/O on the backing files, are not in it.
#   Every copying tool's copy is verified once per transfer size and pair
#   (its first successful run: the copied range plus 1 MiB after it is
#   overwritten with zeros first, then the copied range is compared with
#   the source by cmp and the MiB after it must still be zeros), so a fast
#   wrong copy cannot win: it is flagged and left out of ratios and chart.
#
# Output (in $OUT): runs.csv (every run), summary.csv (the table),
#   chart.dat + chart.gp + chart.png (MiB/s and CPU s/GiB bars, one row of
#   panels per backing/sector pair), info.txt (versions, devices, settings,
#   pdd's plan per engine), logs/ (each run's output).  The table gives
#   medians over the runs, the maximum RSS, and ratios to the fio ceiling
#   and to sgp_dd, measured side by side - compare ratios, not absolute
#   numbers, on a shared machine.
#
# How to run (as root, from the repository root, after `make`):
#   scripts/bench.sh                                  # everything
#   QUICK=1 scripts/bench.sh                          # smoke run, ~2 min
#   BACKINGS=mem SECTORS=512 RUNS=3 scripts/bench.sh
#   ENGINES="uring threads" XFERS=65536 scripts/bench.sh
#   scripts/bench.sh --help
#
# Needs: losetup, sgp_dd (sg3-utils), dd, fio, jq, gnuplot, cmp and
# /usr/bin/time (package `time`; installed with apt-get when missing).
# Only the loop devices and files this script creates are touched.

set -euo pipefail

usage() {
	cat <<'EOF'
Usage: scripts/bench.sh [--help]

Benchmark pdd (each engine) against sgp_dd, GNU dd and a fio read+write
ceiling on loop devices of its own, for each backing and sector size.
Run as root from the repository root.  Settings are environment variables:

  BACKINGS="disk mem"  disk: files in DISK_DIR (default /var/tmp/pdd-bench);
                       mem: files in MEM_DIR (default /dev/shm/pdd-bench)
  SECTORS="512 4096"   logical sector sizes of the loops; also bs
                       One source+target pair per (backing, sector), set up,
                       measured and removed before the next.
  SIZE_MIB=1024        size of each loop device in MiB
  XFERS="4096 65536 1048576"
                       transfer sizes in bytes (multiples of every sector
                       size); bpt = X / SECTOR for pdd and sgp_dd
  COPY_MIB_SMALL=256   MiB copied at transfer sizes below 64 KiB; larger
                       transfers copy the whole device
  RUNS=5               rounds; each round runs every tool once per size
  ENGINES="auto uring aio threads"
                       pdd engines, one table row (pdd-ENGINE) each
  THREADS=4            threads for sgp_dd and pdd engine=threads
  FIO_DEPTH=16         iodepth of the fio ceiling jobs
  QUICK=1              smoke run: defaults become SIZE_MIB=128 RUNS=1
                       COPY_MIB_SMALL=32 (each still overridable)
  OUT=DIR              results folder (default results/bench-DATE-TIME)
  PDD=./pdd            pdd binary
  RATE=1               then the pairs with a disk's rate (cgroup blkio limits
                       and faultfs rate=): scripts/bench-rate.sh, into OUT/rate
  PDD_BASE=PATH        another pdd (an earlier build, to compare before and
                       after): its engines run too, interleaved with pdd's,
                       as rows base-ENGINE
  (BACKING= and SECTOR= are accepted for BACKINGS= and SECTORS=.)

Writes runs.csv, summary.csv, chart.png, info.txt and logs/ into OUT and
prints the summary table.
EOF
}

case "${1:-}" in
-h|--help) usage; exit 0 ;;
"") ;;
*) echo "bench.sh: unknown argument '$1' (settings are environment variables; see --help)" >&2; exit 2 ;;
esac

QUICK=${QUICK:-0}
if [[ $QUICK == 1 ]]; then
	SIZE_MIB=${SIZE_MIB:-128}
	RUNS=${RUNS:-1}
	COPY_MIB_SMALL=${COPY_MIB_SMALL:-32}
fi
SIZE_MIB=${SIZE_MIB:-1024}
RUNS=${RUNS:-5}
COPY_MIB_SMALL=${COPY_MIB_SMALL:-256}
XFERS=${XFERS:-4096 65536 1048576}
BACKINGS=${BACKINGS:-${BACKING:-disk mem}}
SECTORS=${SECTORS:-${SECTOR:-512 4096}}
ENGINES=${ENGINES:-auto uring aio threads}
THREADS=${THREADS:-4}
FIO_DEPTH=${FIO_DEPTH:-16}
DISK_DIR=${DISK_DIR:-/var/tmp/pdd-bench}
MEM_DIR=${MEM_DIR:-/dev/shm/pdd-bench}
OUT=${OUT:-results/bench-$(date +%Y%m%d-%H%M%S)}
PDD=${PDD:-./pdd}
SMALL_XFER=65536	# transfers below this copy COPY_MIB_SMALL, not the device
GUARD_MIB=1		# zeros after the copied range that a copy must not touch

die() { echo "bench.sh: $*" >&2; exit 1; }
note() { echo "bench.sh: $*" >&2; }
is_uint() { [[ $1 =~ ^[0-9]+$ ]] && (( 10#$1 > 0 )); }
human_size() { awk -v b="$1" 'BEGIN { if (b % 1048576 == 0) printf "%dMiB", b / 1048576; else if (b % 1024 == 0) printf "%dKiB", b / 1024; else printf "%dB", b }'; }

# --- checks ----------------------------------------------------------------
is_uint "$SIZE_MIB" || die "SIZE_MIB must be a positive integer"
is_uint "$RUNS" || die "RUNS must be a positive integer"
is_uint "$COPY_MIB_SMALL" || die "COPY_MIB_SMALL must be a positive integer"
is_uint "$THREADS" || die "THREADS must be a positive integer"
is_uint "$FIO_DEPTH" || die "FIO_DEPTH must be a positive integer"
if (( COPY_MIB_SMALL > SIZE_MIB )); then
	note "COPY_MIB_SMALL=$COPY_MIB_SMALL exceeds SIZE_MIB; using $SIZE_MIB"
	COPY_MIB_SMALL=$SIZE_MIB
fi
read -r -a BACKING_LIST <<<"$BACKINGS"
read -r -a SECTOR_LIST <<<"$SECTORS"
read -r -a XFER_LIST <<<"$XFERS"
read -r -a ENGINE_LIST <<<"$ENGINES"
(( ${#BACKING_LIST[@]} > 0 )) || die "BACKINGS is empty"
(( ${#SECTOR_LIST[@]} > 0 )) || die "SECTORS is empty"
(( ${#XFER_LIST[@]} > 0 )) || die "XFERS is empty"
for b in "${BACKING_LIST[@]}"; do
	[[ $b == disk || $b == mem ]] || die "backing '$b' is neither disk nor mem"
done
for s in "${SECTOR_LIST[@]}"; do
	[[ $s == 512 || $s == 4096 ]] || die "sector size '$s' is neither 512 nor 4096"
done

copy_mib() {	# copy_mib X -> MiB copied at transfer size X
	if (( $1 < SMALL_XFER )); then echo "$COPY_MIB_SMALL"; else echo "$SIZE_MIB"; fi
}
for x in "${XFER_LIST[@]}"; do
	is_uint "$x" || die "transfer size '$x' is not a positive integer"
	for s in "${SECTOR_LIST[@]}"; do
		(( x % s == 0 )) || die "transfer size $x is not a multiple of sector size $s"
	done
	c=$(( $(copy_mib "$x") * 1048576 ))
	(( x <= c )) || die "transfer size $x exceeds the $(human_size "$c") copied"
	(( c % x == 0 )) || die "transfer size $x does not divide the $(human_size "$c") copied (dd's count)"
done
PDD_TOOLS=()
for e in "${ENGINE_LIST[@]}"; do
	[[ $e =~ ^[a-z0-9_]+$ ]] || die "engine name '$e' is not a plain word"
	PDD_TOOLS+=("pdd-$e")
done
PDD_BASE=${PDD_BASE:-}
if [[ -n $PDD_BASE ]]; then
	[[ -x $PDD_BASE ]] || die "no pdd binary at PDD_BASE='$PDD_BASE'"
	PDD_BASE=$(cd "$(dirname "$PDD_BASE")" && pwd)/$(basename "$PDD_BASE")
	for e in "${ENGINE_LIST[@]}"; do PDD_TOOLS+=("base-$e"); done
fi
[[ $(id -u) == 0 ]] || die "must run as root (loop devices, drop_caches)"
[[ -x $PDD ]] || die "no pdd binary at '$PDD' (run make, or set PDD=)"
PDD=$(cd "$(dirname "$PDD")" && pwd)/$(basename "$PDD")
for e in "${ENGINE_LIST[@]}"; do
	"$PDD" --version 2>&1 | grep -Eq "^engines:(.*,)? $e(,|\$)" ||
		die "pdd does not list engine '$e' ($("$PDD" --version 2>&1 | grep '^engines:'))"
done

if [[ ! -x /usr/bin/time ]]; then
	note "installing package 'time' for /usr/bin/time"
	apt-get install -y time >/dev/null || { apt-get update >/dev/null && apt-get install -y time >/dev/null; }
fi
if ! command -v jq >/dev/null; then
	note "installing package 'jq' to read fio's JSON"
	apt-get install -y jq >/dev/null || { apt-get update >/dev/null && apt-get install -y jq >/dev/null; }
fi
for c in losetup blockdev sgp_dd dd fio jq gnuplot cmp awk; do
	command -v "$c" >/dev/null || die "'$c' not found (scripts/install-deps.sh installs it)"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time still missing"

# --- resources, cleaned up after each pair and on exit ----------------------
LOOPS=()	# exactly the names losetup printed for us
FILES=()	# backing files we created
MADE_DIRS=()
teardown() {	# detach our loops, remove our files
	local d f
	for d in "${LOOPS[@]}"; do
		losetup -d "$d" || note "could not detach $d"
	done
	for f in "${FILES[@]}"; do
		rm -f -- "$f"
	done
	LOOPS=() FILES=()
}
cleanup() {
	local rc=$? d
	set +e
	teardown
	for d in "${MADE_DIRS[@]}"; do
		rmdir -- "$d" 2>/dev/null
	done
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bench_dir() { if [[ $1 == mem ]]; then echo "$MEM_DIR"; else echo "$DISK_DIR"; fi; }
for b in "${BACKING_LIST[@]}"; do
	dir=$(bench_dir "$b")
	if [[ ! -d $dir ]]; then
		mkdir -p -- "$dir"
		MADE_DIRS+=("$dir")
	fi
	need_kib=$(( 2 * SIZE_MIB * 1024 + 65536 ))
	avail_kib=$(df -Pk -- "$dir" | awk 'NR==2 {print $4}')
	(( avail_kib >= need_kib )) || die "$dir has ${avail_kib} KiB free, needs ${need_kib}"
done

new_loop() {	# new_loop DIR NAME SECTOR -> sets LOOPDEV
	local f
	f=$(mktemp -- "$1/$2.XXXXXX")
	FILES+=("$f")
	truncate -s "${SIZE_MIB}M" -- "$f"
	if ! LOOPDEV=$(losetup --find --show --direct-io=on --sector-size "$3" -- "$f"); then
		die "losetup failed for $f"
	fi
	[[ $LOOPDEV == /dev/* ]] || die "losetup printed '$LOOPDEV'"
	LOOPS+=("$LOOPDEV")
	# a loop device keeps the queue settings its last user gave it
	# (nomerges=2 from a test that did not put it back): the defaults
	echo 0 >"/sys/block/${LOOPDEV#/dev/}/queue/nomerges"
	echo "$(cat "/sys/block/${LOOPDEV#/dev/}/queue/max_hw_sectors_kb")" \
		>"/sys/block/${LOOPDEV#/dev/}/queue/max_sectors_kb" 2>/dev/null || true
}
loop_dio() { cat "/sys/block/$(basename "$1")/loop/dio" 2>/dev/null || echo "?"; }
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

mkdir -p -- "$OUT/logs"
OUT=$(cd "$OUT" && pwd)
{
	echo "date: $(date -Is)"
	echo "host: $(uname -srm), $(nproc) cpus, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "settings: BACKINGS=\"$BACKINGS\" SECTORS=\"$SECTORS\" SIZE_MIB=$SIZE_MIB XFERS=\"$XFERS\" COPY_MIB_SMALL=$COPY_MIB_SMALL RUNS=$RUNS ENGINES=\"$ENGINES\" THREADS=$THREADS FIO_DEPTH=$FIO_DEPTH QUICK=$QUICK"
	echo "dirs: disk $DISK_DIR ($(stat -f -c %T "$DISK_DIR" 2>/dev/null || echo '?')), mem $MEM_DIR ($(stat -f -c %T "$MEM_DIR" 2>/dev/null || echo '?'))"
	echo "pdd: $PDD ($("$PDD" --version 2>&1 | paste -sd ';' -))"
	[[ -z $PDD_BASE ]] || echo "base: $PDD_BASE ($("$PDD_BASE" --version 2>&1 | paste -sd ';' -))"
	echo "sgp_dd: $(sgp_dd --version 2>&1 | head -1)"
	echo "dd: $(dd --version | head -1)"
	echo "fio: $(fio --version)"
} >"$OUT/info.txt"

RUNS_CSV=$OUT/runs.csv
echo "backing,sector,xfer,copy_mib,tool,round,rc,wall_s,time_e_s,user_s,sys_s,maxrss_kib,mib_s,verify" >"$RUNS_CSV"
SUM_CSV=$OUT/summary.csv
echo "backing,sector,tool,xfer,copy_mib,runs_ok,mib_s_median,cpu_s_per_gib_median,peak_rss_mib,ratio_fio,ratio_sgp_dd,verify" >"$SUM_CSV"
TOOLS=(dd sgp_dd "${PDD_TOOLS[@]}" fio)
NT=${#TOOLS[@]}
CHART=$OUT/chart.dat
: >"$CHART"
declare -a PANELS=()	# "backing sector" of each chart.dat index
declare -A AUTO_ENGINE=()	# "backing:sector" -> engine pdd's auto picked

# --- one run ---------------------------------------------------------------
# Set per pair: BACKING SECTOR SRC DST LOGDIR; per size: X COPY_MIB
declare -A SKIP=()	# "tool:X" -> reason, for combinations a tool refused
declare -A VERIFY=()	# "tool:X" -> ok / FAIL

tool_cmd() {	# tool_cmd TOOL -> CMD array (uses X, COPY_MIB, SECTOR, SRC, DST)
	local bpt=$(( X / SECTOR )) bytes=$(( COPY_MIB * 1048576 )) e
	case "$1" in
	dd)     CMD=(dd "if=$SRC" "of=$DST" "bs=$X" "count=$(( bytes / X ))" iflag=direct oflag=direct) ;;
	sgp_dd) CMD=(sgp_dd "if=$SRC" "of=$DST" "bs=$SECTOR" "bpt=$bpt" "count=$(( bytes / SECTOR ))"
			"thr=$THREADS" dio=1 iflag=direct oflag=direct) ;;
	pdd-*|base-*)
		e=${1#*-}
		local bin=$PDD
		[[ $1 == base-* ]] && bin=$PDD_BASE
		CMD=("$bin" "if=$SRC" "of=$DST" "bs=$SECTOR" "bpt=$bpt" "count=$(( bytes / SECTOR ))" "engine=$e")
		if [[ $e == threads || $THREADS != 4 ]]; then CMD+=("threads=$THREADS"); fi ;;
	fio)    CMD=(fio --output-format=json --direct=1 --ioengine=libaio --bs="$X"
			--iodepth="$FIO_DEPTH" --size="$bytes"
			--name=read --filename="$SRC" --rw=read
			--name=write --filename="$DST" --rw=write) ;;
	*)      die "unknown tool $1" ;;
	esac
}

zero_target() {	# zero the copied range and the guard after it
	local mib=$(( COPY_MIB + GUARD_MIB ))
	(( mib <= SIZE_MIB )) || mib=$SIZE_MIB
	dd if=/dev/zero of="$DST" bs=1M count="$mib" oflag=direct status=none
}

check_copy() {	# check_copy LOG -> 0 when the copied range matches and the guard is zeros
	local bytes=$(( COPY_MIB * 1048576 )) guard
	guard=$(( (SIZE_MIB - COPY_MIB) < GUARD_MIB ? SIZE_MIB - COPY_MIB : GUARD_MIB ))
	cmp -n "$bytes" -- "$SRC" "$DST" >>"$1" 2>&1 || return 1
	if (( guard > 0 )); then
		if ! cmp -n "$(( guard * 1048576 ))" -i "0:$bytes" -- /dev/zero "$DST" >>"$1" 2>&1; then
			echo "bytes after the copied range were changed" >>"$1"
			return 1
		fi
	fi
	return 0
}

run_one() {	# run_one TOOL ROUND
	local tool=$1 round=$2 verify="" log tf t0 t1 rc wall e u s m mibs r w
	[[ -n ${SKIP[$tool:$X]:-} ]] && return 0
	tool_cmd "$tool"
	log=$LOGDIR/$tool-$X-r$round.log
	tf=$LOGDIR/$tool-$X-r$round.time
	printf '%q ' "${CMD[@]}" >"$log"; echo >>"$log"
	if [[ $tool != fio && -z ${VERIFY[$tool:$X]:-} ]]; then
		# Verified run: wipe the target so that a copy which writes
		# nothing (or too little) cannot pass the comparison.
		zero_target
		verify=pending
	fi
	drop_caches
	t0=$(date +%s%N)
	rc=0
	if [[ $tool == fio ]]; then
		/usr/bin/time -f '%e %U %S %M' -o "$tf" "${CMD[@]}" >"$log.json" 2>>"$log" || rc=$?
	else
		/usr/bin/time -f '%e %U %S %M' -o "$tf" "${CMD[@]}" >>"$log" 2>&1 || rc=$?
	fi
	t1=$(date +%s%N)
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
	read -r e u s m < <(tail -n 1 "$tf")
	mibs=""
	if (( rc != 0 )); then
		# A tool that refuses a setting refuses it every round: record
		# it once and skip it for this size and pair.
		SKIP[$tool:$X]="rc=$rc"
		note "$tool failed at X=$X round $round (rc=$rc, see $log); recorded as n/a"
		verify=""
	elif [[ $tool == fio ]]; then
		r=$(jq '[.jobs[] | select(.jobname == "read")  | .read.bw_bytes]  | add' "$log.json")
		w=$(jq '[.jobs[] | select(.jobname == "write") | .write.bw_bytes] | add' "$log.json")
		mibs=$(awk -v r="$r" -v w="$w" 'BEGIN { m = r < w ? r : w; printf "%.1f", m / 1048576 }')
		echo "read $r B/s, write $w B/s" >>"$log"
	else
		mibs=$(awk -v sz="$COPY_MIB" -v t="$wall" 'BEGIN { printf "%.1f", sz / t }')
	fi
	if [[ $verify == pending ]]; then
		drop_caches
		if check_copy "$log"; then
			verify=ok
		else
			verify=FAIL
			note "$tool X=$X: copy differs from the source (see $log)"
		fi
		VERIFY[$tool:$X]=$verify
	fi
	echo "$BACKING,$SECTOR,$X,$COPY_MIB,$tool,$round,$rc,$wall,$e,$u,$s,$m,$mibs,$verify" >>"$RUNS_CSV"
	printf '  %-11s X=%-8s round %-2s rc=%-3s %8s s %8s MiB/s  cpu %5.2f s  rss %6d KiB %s\n' \
		"$tool" "$X" "$round" "$rc" "$wall" "${mibs:-n/a}" \
		"$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" "$m" "$verify" >&2
}

# --- summary of one pair -----------------------------------------------------
# median of the numbers on stdin ("" when none)
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) printf "%.3f\n", v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# ok_runs TOOL -> lines "mib_s user sys rss" of this pair's successful runs at X
ok_runs() {
	awk -F, -v b="$BACKING" -v sec="$SECTOR" -v t="$1" -v x="$X" \
		'$1 == b && $2 == sec && $3 == x && $5 == t && $7 == 0 && $13 != "" { print $13, $10, $11, $12 }' "$RUNS_CSV"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f\n", a / b }'; }
fmt() { [[ -z $1 ]] && return 0; awk -v v="$1" -v f="%.$2f\n" 'BEGIN { printf f, v }'; }
na() { echo "${1:-n/a}"; }

summarize_pair() {	# appends to summary.csv and one index to chart.dat
	local t n rss v med cpu rf rs fiomed sgpmed gib line
	PANELS+=("$BACKING $SECTOR")
	{
		printf '# xfer/copied'
		for t in "${TOOLS[@]}"; do printf ' %s' "$t"; done
		for t in "${TOOLS[@]}"; do printf ' %s_cpu' "$t"; done
		echo
	} >>"$CHART"
	for X in "${XFER_LIST[@]}"; do
		COPY_MIB=$(copy_mib "$X")
		gib=$(awk -v s="$COPY_MIB" 'BEGIN { print s / 1024 }')
		declare -A MED=() CPU=()
		for t in "${TOOLS[@]}"; do
			MED[$t]=$(ok_runs "$t" | awk '{ print $1 }' | median)
			CPU[$t]=$(ok_runs "$t" | awk -v g="$gib" '{ print ($2 + $3) / g }' | median)
		done
		fiomed=${MED[fio]}
		sgpmed=${MED[sgp_dd]}
		[[ ${VERIFY[sgp_dd:$X]:-} == FAIL ]] && sgpmed=""
		line="$(human_size "$X")/$(human_size $(( COPY_MIB * 1048576 )))"
		for t in "${TOOLS[@]}"; do
			n=$(ok_runs "$t" | wc -l)
			rss=$(ok_runs "$t" | awk 'BEGIN { m = -1 } { if ($4 > m) m = $4 } END { if (m < 0) print ""; else printf "%.1f\n", m / 1024 }')
			v=${VERIFY[$t:$X]:-n/a}
			[[ $t == fio ]] && v="-"
			med=$(fmt "${MED[$t]}" 1) cpu=$(fmt "${CPU[$t]}" 3)
			rf=$(ratio "$med" "$fiomed"); rs=$(ratio "$med" "$sgpmed")
			if [[ $v == FAIL ]]; then rf="wrong"; rs="wrong"; MED[$t]=""; CPU[$t]=""; fi
			[[ -n ${SKIP[$t:$X]:-} ]] && v="n/a (${SKIP[$t:$X]})"
			echo "$BACKING,$SECTOR,$t,$X,$COPY_MIB,$n,${med:-n/a},${cpu:-n/a},${rss:-n/a},$rf,$rs,$v" >>"$SUM_CSV"
		done
		for t in "${TOOLS[@]}"; do line+=" $(na "${MED[$t]}")"; done
		for t in "${TOOLS[@]}"; do line+=" $(na "${CPU[$t]}")"; done
		echo "$line" >>"$CHART"
		unset MED CPU
	done
	printf '\n\n' >>"$CHART"
}

# --- each (backing, sector) pair ----------------------------------------------
for BACKING in "${BACKING_LIST[@]}"; do
	for SECTOR in "${SECTOR_LIST[@]}"; do
		dir=$(bench_dir "$BACKING")
		new_loop "$dir" "src-$SECTOR" "$SECTOR"; SRC=$LOOPDEV
		new_loop "$dir" "dst-$SECTOR" "$SECTOR"; DST=$LOOPDEV
		for d in "$SRC" "$DST"; do
			[[ $(loop_dio "$d") == 1 ]] || note "warning: $d has direct I/O off (backing fs refused it)"
			[[ $(blockdev --getss "$d") == "$SECTOR" ]] || die "$d: sector size is not $SECTOR"
			[[ $(blockdev --getsize64 "$d") == $(( SIZE_MIB * 1048576 )) ]] || die "$d: size is not $SIZE_MIB MiB"
		done
		note "== $BACKING-backed, sector $SECTOR: source $SRC, target $DST (${SIZE_MIB} MiB each, in $dir)"
		LOGDIR=$OUT/logs/$BACKING-$SECTOR
		mkdir -p -- "$LOGDIR"

		note "filling the source with random data, the target with zeros"
		dd if=/dev/urandom of="$SRC" bs=1M count="$SIZE_MIB" iflag=fullblock oflag=direct status=none
		dd if=/dev/zero of="$DST" bs=1M count="$SIZE_MIB" oflag=direct status=none

		{
			echo
			echo "[$BACKING, sector $SECTOR] source: $SRC dio=$(loop_dio "$SRC"), target: $DST dio=$(loop_dio "$DST")"
			for X in "${XFER_LIST[@]}"; do
				COPY_MIB=$(copy_mib "$X")
				for t in "${PDD_TOOLS[@]}"; do
					tool_cmd "$t"
					echo "\$ ${CMD[*]} --dry-run"
					"${CMD[@]}" --dry-run 2>&1 | sed 's/^/    /' || true
				done
			done
		} >>"$OUT/info.txt"
		X=${XFER_LIST[0]} COPY_MIB=$(copy_mib "${XFER_LIST[0]}")
		tool_cmd pdd-auto
		AUTO_ENGINE[$BACKING:$SECTOR]=$("${CMD[@]}" --dry-run 2>&1 | sed -n 's/.*using *engine=\([a-z0-9_]*\).*/\1/p' | head -1)

		SKIP=() VERIFY=()
		for X in "${XFER_LIST[@]}"; do
			COPY_MIB=$(copy_mib "$X")
			note "transfer size $X bytes (bpt=$(( X / SECTOR )) x bs=$SECTOR), copying $COPY_MIB MiB, $RUNS rounds"
			for (( round = 1; round <= RUNS; round++ )); do
				for (( i = 0; i < NT; i++ )); do
					run_one "${TOOLS[(i + round - 1) % NT]}" "$round"
				done
			done
		done
		summarize_pair
		teardown
		note "detached $SRC and $DST, removed their files"
	done
done

# --- chart -------------------------------------------------------------------
NP=${#PANELS[@]}
NX=${#XFER_LIST[@]}
# Colour-blind-safe (Okabe-Ito), neighbouring pdd engines well apart; fio black.
COLORS=("#999999" "#e69f00" "#0072b2" "#d55e00" "#009e73" "#cc79a7" "#56b4e9" "#f0e442" "#882255")
color_of() {	# color_of INDEX
	if [[ ${TOOLS[$1]} == fio ]]; then echo "#222222"
	else echo "${COLORS[$1 % ${#COLORS[@]}]}"; fi
}
plot_cmd() {	# plot_cmd INDEX FIRSTCOL FORMAT -> a gnuplot plot command
	local k=$1 c0=$2 f=$3 i c p=""
	for (( i = 0; i < NT; i++ )); do
		c=$(( c0 + i ))
		if (( i == 0 )); then
			p="plot \"$CHART\" index $k using $c:xtic(1)"
		else
			p+=", '' index $k using $c"
		fi
		p+=" title \"${TOOLS[i]}\" lc rgb \"$(color_of "$i")\""
	done
	# the value above each bar; clustered bars (gap 1) sit at
	# cluster + (i - (NT-1)/2) / (NT + 1)
	for (( i = 0; i < NT; i++ )); do
		c=$(( c0 + i ))
		p+=", '' index $k using (\$0 + ($i - ($NT - 1) / 2.0) / ($NT + 1)):$c:(sprintf(\"$f\", \$$c))"
		p+=" with labels rotate left offset 0,0.4 font \",8\" notitle"
	done
	echo "$p"
}
{
	cat <<EOF
set terminal pngcairo noenhanced size 1600,$(( 80 + 420 * NP )) font ",10"
set output "$OUT/chart.png"
set datafile missing "n/a"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set yrange [0:*]
set xrange [-0.55:$NX - 0.45]
set offsets 0, 0, graph 0.15, 0
set xlabel "transfer size / amount copied"
set multiplot layout $NP,2 title "pdd bench: loops of ${SIZE_MIB} MiB, medians of ${RUNS} run(s); fio = concurrent read+write ceiling"
EOF
	for (( k = 0; k < NP; k++ )); do
		read -r pb ps <<<"${PANELS[k]}"
		echo "unset key"
		echo "set title \"$pb-backed, sector $ps: MiB/s (higher is better)\""
		plot_cmd "$k" 2 "%.0f"
		echo "set key outside right top vertical"
		echo "set title \"$pb-backed, sector $ps: CPU s/GiB, user+sys of the tool itself (lower is better)\""
		plot_cmd "$k" $(( 2 + NT )) "%.2f"
	done
	echo "unset multiplot"
} >"$OUT/chart.gp"
if ! gnuplot "$OUT/chart.gp" 2>"$OUT/logs/gnuplot.log"; then
	note "gnuplot failed (see $OUT/logs/gnuplot.log)"
fi

# --- table -------------------------------------------------------------------
echo
echo "pdd bench: loops of ${SIZE_MIB} MiB; copied: ${COPY_MIB_SMALL} MiB at transfers < $(human_size "$SMALL_XFER"), else the whole ${SIZE_MIB} MiB"
echo "${RUNS} run(s) per tool, interleaved; threads $THREADS (sgp_dd, pdd-threads); fio iodepth $FIO_DEPTH"
for p in "${PANELS[@]}"; do
	read -r pb ps <<<"$p"
	echo "pdd-auto on $pb/$ps ran engine=${AUTO_ENGINE[$pb:$ps]:-?}"
done
printf '%-7s %6s %-12s %-7s %4s %9s %10s %8s %6s %8s  %s\n' backing sector tool xfer runs "MiB/s" "CPU s/GiB" "RSS MiB" "x fio" "x sgp_dd" verify
awk -F, 'NR > 1 { print }' "$SUM_CSV" | {
	prev=""
	while IFS=, read -r b s t x c n med cpu rss rf rs v; do
		[[ -n $prev && $prev != "$b/$s/$x" ]] && echo
		prev="$b/$s/$x"
		printf '%-7s %6s %-12s %-7s %4s %9s %10s %8s %6s %8s  %s\n' "$b" "$s" "$t" "$(human_size "$x")" "$n" "$med" "$cpu" "$rss" "$rf" "$rs" "$v"
	done
}
echo "(MiB/s and CPU: medians; RSS: maximum; fio = concurrent read+write ceiling, smaller bandwidth)"
echo "results: $OUT"

# --- devices with a disk's rate ----------------------------------------------
# RATE=1: the throttled pairs (cgroup blkio limits, faultfs rate=) and the
# jitter sweep of scripts/bench-rate.sh, into OUT/rate, with the same
# RUNS and pdd
if [[ ${RATE:-0} == 1 ]]; then
	OUT=$OUT/rate RUNS=$RUNS PDD=$PDD "$(dirname "$0")/bench-rate.sh"
fi
