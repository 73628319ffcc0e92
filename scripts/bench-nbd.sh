#!/usr/bin/env bash
# scripts/bench-nbd.sh - pdd against nbdcopy on NBD exports.
#
# Two nbdkit servers on Unix sockets (TCP=1: on 127.0.0.1, ports PORT and
# PORT+1), with the file plugin over files in /dev/shm (PLUGIN=memory: the
# memory plugin, the input filled by nbdcopy first),
# so that no disk sets the pace: what shows is each client's cost per
# request and how well it keeps the server busy.  nbdkit's delay filter
# can hold every request LATENCY_MS milliseconds, like a network's round
# trip and a remote disk: there the number of requests in flight decides.
#
# For each pair in $PAIRS (nbd-file: export A to a file in /dev/shm;
# file-nbd: that file's twin to export B; nbd-nbd: export A to export B),
# each latency in $LATENCIES and transfer size X in $XFERS, a copy of
# SIZE_MIB MiB:
#   nbdcopy   nbdcopy --request-size=X --flush IN OUT   (its defaults: 4
#             connections, 64 requests in flight on each, writes in any
#             order; --flush so that it ends durable, as pdd does)
#   nbdcopy-sync  the same with --synchronous: one request at a time, in
#             order (SYNC=0 leaves it out)
#   qemu-img  qemu-img convert -n -f raw -O raw IN OUT     (in order)
#   pdd       pdd if=IN of=OUT bs=512 bpt=X/512     (its defaults)
#   pdd-cN    the same with conns=N, for each N in $CONNS
#   base      pdd with PDD_BASE, an earlier pdd, when given
# The tools run interleaved, RUNS rounds, the order rotated every round.
# Each tool's first copy at each setting is checked: the output is zeroed
# first, and compared with the input after (an export read back by
# nbdcopy).  The table gives medians
# (MiB/s, CPU seconds per GiB of the client from /usr/bin/time; nbdkit's
# CPU is not in it) and the ratio to nbdcopy (above 1: pdd is faster).
#
#   scripts/bench-nbd.sh                           # defaults below
#   RUNS=3 LATENCIES="0 2" PAIRS=nbd-nbd scripts/bench-nbd.sh
#
# Settings (environment):
#   SIZE_MIB=512 XFERS="65536 262144 1048576" LATENCIES="0 1" RUNS=5
#   PAIRS="nbd-file file-nbd nbd-nbd" CONNS="1 2 4" SYNC=1 TCP=0 PORT=10809
#   PLUGIN=file QEMU=1
#   OUT=results/bench-nbd-DATE PDD=./pdd PDD_BASE=
# Writes runs.csv, summary.csv and table.txt into OUT and prints the table.
# Needs nbdkit, nbdcopy (libnbd-bin), qemu-img (qemu-utils) for QEMU=1,
# cmp, bc, /usr/bin/time; no root.

set -euo pipefail

SIZE_MIB=${SIZE_MIB:-512}
XFERS=${XFERS:-65536 262144 1048576}
LATENCIES=${LATENCIES:-0 1}
RUNS=${RUNS:-5}
PAIRS=${PAIRS:-nbd-file file-nbd nbd-nbd}
CONNS=${CONNS:-1 2 4}
SYNC=${SYNC:-1}
QEMU=${QEMU:-1}
PLUGIN=${PLUGIN:-file}
TCP=${TCP:-0}
PORT=${PORT:-10809}
PDD_BASE=${PDD_BASE:-}
OUT=${OUT:-results/bench-nbd-$(date +%Y%m%d-%H%M%S)}
PDD=${PDD:-./pdd}
DIR=${DIR:-/dev/shm/pdd-bench-nbd.$$}

die() { echo "bench-nbd.sh: $*" >&2; exit 1; }
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,45p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
[[ $PLUGIN == file || $PLUGIN == memory ]] || die "PLUGIN is file or memory"
[[ $QEMU == 1 ]] && { command -v qemu-img >/dev/null || die "'qemu-img' not found (package qemu-utils; or QEMU=0)"; }
for c in nbdkit nbdcopy cmp awk bc; do
	command -v "$c" >/dev/null || die "'$c' not found (scripts/install-deps.sh installs it)"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time missing (package time)"
[[ -x $PDD ]] || die "no pdd at '$PDD' (run make)"
"$PDD" --version | grep -q '^engines:.* nbd' || die "'$PDD' is built without libnbd"
PDD=$(realpath "$PDD")
[[ -z $PDD_BASE ]] || { [[ -x $PDD_BASE ]] || die "no pdd at PDD_BASE='$PDD_BASE'"; PDD_BASE=$(realpath "$PDD_BASE"); }

mkdir -p "$OUT/logs" "$DIR"
servers=()
stop_servers() {
	local p
	for p in "${servers[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${servers[@]}"; do while kill -0 "$p" 2>/dev/null; do sleep 0.05; done; done
	rm -f "$DIR"/*.sock
	servers=()
}
trap 'stop_servers; rm -rf "$DIR"' EXIT
A=$DIR/a.img B=$DIR/b.img F=$DIR/f.img
head -c $((SIZE_MIB << 20)) /dev/urandom >"$A"
Z=$DIR/z.img
truncate -s $((SIZE_MIB << 20)) "$B" "$F" "$Z"
UA="nbd+unix:///?socket=$DIR/a.sock" UB="nbd+unix:///?socket=$DIR/b.sock"
[[ $TCP == 1 ]] && UA="nbd://127.0.0.1:$PORT/" UB="nbd://127.0.0.1:$((PORT + 1))/"

# serve LAT: both exports, each request held LAT ms when LAT > 0
serve() {
	local n f filter=() delay=() where plugin
	stop_servers
	if (( $1 > 0 )); then
		filter=(--filter=delay)
		delay=(rdelay="$1"ms wdelay="$1"ms)
	fi
	for n in a b; do
		f=$DIR/$n.img
		where=(-U "$DIR/$n.sock")
		if [[ $TCP == 1 ]]; then
			where=(-i 127.0.0.1 -p "$PORT")
			[[ $n == b ]] && where=(-i 127.0.0.1 -p "$((PORT + 1))")
		fi
		plugin=(file "$f")
		[[ $PLUGIN == memory ]] && plugin=(memory "$((SIZE_MIB << 20))")
		nbdkit "${where[@]}" -P "$DIR/$n.pid" "${filter[@]}" "${plugin[@]}" "${delay[@]}" ||
			die "nbdkit did not start"
		for _ in $(seq 100); do [[ -s $DIR/$n.pid ]] && break; sleep 0.05; done
		servers+=("$(cat "$DIR/$n.pid")")
	done
	[[ $PLUGIN == memory ]] && { nbdcopy "$A" "$UA" || die "cannot fill export A"; }
	return 0
}

TOOLS=(nbdcopy pdd)
[[ $SYNC == 1 ]] && TOOLS+=(nbdcopy-sync)
[[ $QEMU == 1 ]] && TOOLS+=(qemu-img)
for c in $CONNS; do TOOLS+=("pdd-c$c"); done
[[ -z $PDD_BASE ]] || TOOLS+=(base)
echo "pair,tool,latency_ms,xfer,run,secs,cpu_secs,mib_s" >"$OUT/runs.csv"

# sides PAIR: the input and output in IN and OUTP
sides() {
	case $1 in
	nbd-file) IN=$UA OUTP=$F ;;
	file-nbd) IN=$A OUTP=$UB ;;
	nbd-nbd)  IN=$UA OUTP=$UB ;;
	*)        die "unknown pair '$1' (nbd-file, file-nbd, nbd-nbd)" ;;
	esac
}

# run PAIR TOOL LAT X RUN: one copy, timed; appends to runs.csv
run() {
	local pair=$1 tool=$2 lat=$3 x=$4 r=$5 bpt=$(($4 / 512))
	local log=$OUT/logs/$pair-$tool-$lat-$x-$r.log cmd
	sides "$pair"
	case $tool in
	nbdcopy)      cmd=(nbdcopy --request-size="$x" --flush "$IN" "$OUTP") ;;
	nbdcopy-sync) cmd=(nbdcopy --request-size="$x" --flush --synchronous "$IN" "$OUTP") ;;
	qemu-img)     cmd=(qemu-img convert -n -f raw -O raw "$IN" "$OUTP") ;;
	pdd)          cmd=("$PDD" if="$IN" of="$OUTP" bs=512 bpt="$bpt") ;;
	pdd-c*)       cmd=("$PDD" if="$IN" of="$OUTP" bs=512 bpt="$bpt" conns="${tool#pdd-c}") ;;
	base)         cmd=("$PDD_BASE" if="$IN" of="$OUTP" bs=512 bpt="$bpt") ;;
	esac
	local t0=$EPOCHREALTIME t1
	/usr/bin/time -f "TIME %U %S" "${cmd[@]}" >"$log" 2>&1 ||
		die "$tool failed ($pair, latency $lat ms, xfer $x): see $log"
	t1=$EPOCHREALTIME
	awk -v p="$pair" -v t="$tool" -v l="$lat" -v x="$x" -v r="$r" -v mib="$SIZE_MIB" -v s="$(echo "$t1 - $t0" | bc -l)" '
		/^TIME / { c = $2 + $3
			   printf "%s,%s,%s,%s,%s,%.4f,%.3f,%.1f\n", p, t, l, x, r, s, c, mib / s }' \
		"$log" >>"$OUT/runs.csv"
}

# check PAIR TOOL LAT X: the output zeroed, one copy, then it must equal A
check() {
	local got
	sides "$1"
	got=$OUTP
	if [[ $OUTP == "$F" ]]; then
		dd if=/dev/zero of="$F" bs=1M count="$SIZE_MIB" conv=notrunc status=none
	else
		nbdcopy "$Z" "$OUTP" || die "cannot zero $OUTP"
	fi
	run "$1" "$2" "$3" "$4" 0
	if [[ $OUTP != "$F" ]]; then
		got=$DIR/got.img
		nbdcopy "$OUTP" "$got" || die "cannot read $OUTP back"
	fi
	cmp -s "$A" "$got" || die "$2 copied wrongly ($1, latency $3 ms, xfer $4)"
	rm -f "$DIR/got.img"
}

for lat in $LATENCIES; do
	serve "$lat"
	for pair in $PAIRS; do
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
	c[k, n[k]] = $7 / ('"$SIZE_MIB"' / 1024) }
function med(a, k, cnt,   i, j, t, v) {
	for (i = 1; i <= cnt; i++) v[i] = a[k, i]
	for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++)
		if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return cnt % 2 ? v[(cnt + 1) / 2] : (v[cnt / 2] + v[cnt / 2 + 1]) / 2
}
END {
	print "pair,tool,latency_ms,xfer,mib_s,cpu_s_per_gib,vs_nbdcopy"
	for (k in n) { ms[k] = med(m, k, n[k]); cs[k] = med(c, k, n[k]) }
	for (k in n) { split(k, f, ","); base = ms[f[1] ",nbdcopy," f[3] "," f[4]]
		printf "%s,%.1f,%.2f,%.2f\n", k, ms[k], cs[k], base ? ms[k] / base : 0 }
}' "$OUT/runs.csv" | { IFS= read -r head; echo "$head"; sort -t, -k1,1 -k3,3n -k4,4n -k2,2; } \
	>"$OUT/summary.csv"

{
	echo "NBD exports (nbdkit $PLUGIN plugin$([[ $PLUGIN == file ]] && echo " on /dev/shm"), $([[ $TCP == 1 ]] && echo "TCP 127.0.0.1" || echo "Unix sockets")), $SIZE_MIB MiB per copy, $RUNS rounds, medians"
	printf '%-9s %-13s %6s %8s %10s %12s %11s\n' pair tool lat_ms xfer MiB/s "CPU s/GiB" "vs nbdcopy"
	tail -n +2 "$OUT/summary.csv" |
		awk -F, '{ printf "%-9s %-13s %6s %8s %10s %12s %10s\n", $1, $2, $3, $4, $5, $6, $7 "x" }'
} | tee "$OUT/table.txt"
