#!/usr/bin/env bash
# scripts/bench-sg.sh - pdd against sgp_dd and sg_dd on sg devices.
#
# This machine has no sg driver, so the devices are the test double
# (tests/sgdouble/libsgdouble.so, LD_PRELOADed into each tool): two sg
# devices backed by files in /dev/shm, so that no disk sets the pace.  The
# double can hold each READ and WRITE for LATENCY_US microseconds, without
# blocking the caller, like a disk's service time; at 0 the tools run as
# fast as the double itself (their CPU cost per command shows), above 0
# the number of commands in flight decides.
#
# For each pair in $PAIRS (sg-sg: device A to device B; sg-file: device A
# to a file in /dev/shm; file-sg: A's backing file to device B), each
# latency in $LATENCIES and transfer size X in $XFERS, a copy of COPY
# bytes from the start of the input to the start of the output:
#   sg_dd    if=A of=B bs=512 bpt=X/512 count=..      one SG_IO at a time
#   sgp_dd   if=A of=B bs=512 bpt=X/512 count=.. thr=THREADS
#                                                    one command per thread
#   pdd      if=A of=B bs=512 bpt=X/512 count=..      engine sg for an sg
#                                                    side, auto (io_uring)
#                                                    for a file; default qd
#   base     the same with PDD_BASE, an earlier pdd, when given
# COPY is COPY_MIB MiB.  The tools run interleaved, RUNS rounds, the order
# rotated every round.  Each tool's first copy at each setting is checked:
# B is zeroed first and compared with A after.  The table gives medians
# (MiB/s, CPU seconds per GiB from /usr/bin/time) and the ratio to sgp_dd.
#
#   scripts/bench-sg.sh                       # defaults below
#   RUNS=3 LATENCIES="0 200" scripts/bench-sg.sh
#
# Settings (environment):
#   SIZE_MIB=128 COPY_MIB=64 XFERS="4096 65536" LATENCIES="0 100"
#   PAIRS="sg-sg sg-file file-sg" RUNS=5 THREADS=4
#   OUT=results/bench-sg-DATE PDD=./pdd PDD_BASE=
# Writes runs.csv and summary.csv into OUT and prints the table.  Needs
# sg_dd and sgp_dd (sg3-utils), cmp, /usr/bin/time; no root.

set -euo pipefail

SIZE_MIB=${SIZE_MIB:-128}
COPY_MIB=${COPY_MIB:-64}
XFERS=${XFERS:-4096 65536}
LATENCIES=${LATENCIES:-0 100}
RUNS=${RUNS:-5}
PAIRS=${PAIRS:-sg-sg sg-file file-sg}
PDD_BASE=${PDD_BASE:-}
THREADS=${THREADS:-4}
OUT=${OUT:-results/bench-sg-$(date +%Y%m%d-%H%M%S)}
PDD=${PDD:-./pdd}
SGD=${SGD:-tests/sgdouble/libsgdouble.so}
DIR=${DIR:-/dev/shm/pdd-bench-sg.$$}

die() { echo "bench-sg.sh: $*" >&2; exit 1; }
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
for c in sg_dd sgp_dd cmp awk bc; do
	command -v "$c" >/dev/null || die "'$c' not found (scripts/install-deps.sh installs it)"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time missing (package time)"
[[ -x $PDD ]] || die "no pdd at '$PDD' (run make)"
[[ -e $SGD ]] || die "no double at '$SGD' (make tests/sgdouble/libsgdouble.so)"
(( COPY_MIB <= SIZE_MIB )) || die "COPY_MIB exceeds SIZE_MIB"
PDD=$(realpath "$PDD")
[[ -z $PDD_BASE ]] || { [[ -x $PDD_BASE ]] || die "no pdd at PDD_BASE='$PDD_BASE'"; PDD_BASE=$(realpath "$PDD_BASE"); }
SGD=$(realpath "$SGD")

mkdir -p "$OUT/logs" "$DIR"
trap 'rm -rf "$DIR"' EXIT
A=$DIR/a.img B=$DIR/b.img
head -c $((SIZE_MIB << 20)) /dev/urandom >"$A"
truncate -s $((SIZE_MIB << 20)) "$B"
DEVS="$DIR/sga=$A,$DIR/sgb=$B"
F=$DIR/f.img
TOOLS=(sg_dd sgp_dd pdd)
[[ -z $PDD_BASE ]] || TOOLS+=(base)
echo "pair,tool,latency_us,xfer,run,secs,cpu_secs,mib_s" >"$OUT/runs.csv"

# sides PAIR: the input and output paths in IN and OUTP
sides() {
	case $1 in
	sg-sg)   IN=$DIR/sga OUTP=$DIR/sgb ;;
	sg-file) IN=$DIR/sga OUTP=$F ;;
	file-sg) IN=$A OUTP=$DIR/sgb ;;
	*)       die "unknown pair '$1' (sg-sg, sg-file, file-sg)" ;;
	esac
}

# run PAIR TOOL LAT X RUN: one copy, timed; appends to runs.csv
run() {
	local pair=$1 tool=$2 lat=$3 x=$4 r=$5 bpt=$(($4 / 512)) count=$((COPY_MIB << 11))
	local log=$OUT/logs/$pair-$tool-$lat-$x-$r.log cmd
	sides "$pair"
	case $tool in
	sg_dd)	cmd=(sg_dd if="$IN" of="$OUTP" bs=512 bpt="$bpt" count="$count") ;;
	sgp_dd)	cmd=(sgp_dd if="$IN" of="$OUTP" bs=512 bpt="$bpt" count="$count" thr="$THREADS") ;;
	pdd)	cmd=("$PDD" if="$IN" of="$OUTP" bs=512 bpt="$bpt" count="$count") ;;
	base)	cmd=("$PDD_BASE" if="$IN" of="$OUTP" bs=512 bpt="$bpt" count="$count") ;;
	esac
	local t0=$EPOCHREALTIME t1
	LD_PRELOAD=$SGD SGDOUBLE_DEVS=$DEVS SGDOUBLE_LATENCY_US=$lat \
		/usr/bin/time -f "TIME %U %S" "${cmd[@]}" >"$log" 2>&1 ||
		die "$tool failed (latency $lat, xfer $x): see $log"
	t1=$EPOCHREALTIME
	awk -v p="$pair" -v t="$tool" -v l="$lat" -v x="$x" -v r="$r" -v mib="$COPY_MIB" -v s="$(echo "$t1 - $t0" | bc -l)" '
		/^TIME / { c = $2 + $3
			   printf "%s,%s,%s,%s,%s,%.4f,%.3f,%.1f\n", p, t, l, x, r, s, c, mib / s }' \
		"$log" >>"$OUT/runs.csv"
}

# check PAIR TOOL LAT X: the output zeroed, one copy, then it must equal A
# over COPY
check() {
	local o=$B
	[[ $1 == sg-file ]] && o=$F
	truncate -s 0 "$o"
	truncate -s $((SIZE_MIB << 20)) "$o"
	run "$1" "$2" "$3" "$4" 0
	cmp -s -n $((COPY_MIB << 20)) "$A" "$o" || die "$2 copied wrongly ($1, latency $3, xfer $4)"
}

for pair in $PAIRS; do
	for lat in $LATENCIES; do
		for x in $XFERS; do
			for t in "${TOOLS[@]}"; do
				check "$pair" "$t" "$lat" "$x"
			done
			for r in $(seq "$RUNS"); do
				n=${#TOOLS[@]}
				for i in $(seq 0 $((n - 1))); do
					run "$pair" "${TOOLS[$(((i + r) % n))]}" "$lat" "$x" "$r"
				done
			done
		done
	done
done

# medians over the runs (run 0, the checked one, is left out)
awk -F, 'NR > 1 && $5 > 0 { k = $1 "," $2 "," $3 "," $4; n[k]++; m[k, n[k]] = $8
	c[k, n[k]] = $7 / ('"$COPY_MIB"' / 1024) }
function med(a, k, cnt,   i, j, t, v) {
	for (i = 1; i <= cnt; i++) v[i] = a[k, i]
	for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++)
		if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return cnt % 2 ? v[(cnt + 1) / 2] : (v[cnt / 2] + v[cnt / 2 + 1]) / 2
}
END {
	print "pair,tool,latency_us,xfer,mib_s,cpu_s_per_gib,vs_sgp_dd"
	for (k in n) { ms[k] = med(m, k, n[k]); cs[k] = med(c, k, n[k]) }
	for (k in n) { split(k, f, ","); base = ms[f[1] ",sgp_dd," f[3] "," f[4]]
		printf "%s,%.1f,%.2f,%.2f\n", k, ms[k], cs[k], base ? ms[k] / base : 0 }
}' "$OUT/runs.csv" | { IFS= read -r head; echo "$head"; sort -t, -k1,1 -k3,3n -k4,4n -k2,2; } \
	>"$OUT/summary.csv"

{
	echo "sg devices through the double, $COPY_MIB MiB per copy, $RUNS rounds, medians"
	printf '%-8s %-8s %8s %8s %10s %12s %10s\n' pair tool lat_us xfer MiB/s "CPU s/GiB" "vs sgp_dd"
	tail -n +2 "$OUT/summary.csv" |
		awk -F, '{ printf "%-8s %-8s %8s %8s %10s %12s %9s\n", $1, $2, $3, $4, $5, $6, $7 "x" }'
} | tee "$OUT/table.txt"
