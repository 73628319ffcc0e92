#!/usr/bin/env bash
# scripts/bench-sparse.sh - pdd's sparse copies against dd conv=sparse,
# cp --sparse=always, nbdcopy and qemu-img convert.
#
# An image of SIZE_MIB MiB in DIR (default /var/tmp, a disk) with about
# DATA_PCT percent of data in scattered extents of 64 KiB to 4 MiB (random
# bytes) and holes elsewhere; a loop device over a copy of it (every byte
# allocated: what a disk is), and a target loop device over a file of the
# same size.  For each pair:
#   img-img   the image to a new file (removed before each copy)
#   img-dev   the image to the target device (which holds other data)
#   dev-dev   the source device to the target device: every byte is read
#   img-zdev  the image to the target device just zeroed (blkdiscard -z):
#             pdd with oflag=zeroed; the others as for img-dev
# the tools, where they apply:
#   dd        dd if=IN of=OUT bs=1M conv=sparse,notrunc (img-img and
#             img-zdev; over other data it would leave that data where
#             the input has zeros, so img-dev and dev-dev run without it)
#   cp        cp --sparse=always IN OUT   (files only)
#   nbdcopy   nbdcopy IN OUT              (local files and devices)
#   qemu-img  qemu-img convert -n -f raw -O raw IN OUT (img-img without -n)
#   pdd       pdd if=IN of=OUT bs=1M      (its defaults: sparse=4096)
#   read      pdd if=IN of=/dev/null bs=1M (img-zdev: the time of reading
#             the input, which a copy with oflag=zeroed should take)
#   write     pdd's img-zdev copy with the image's data in the page cache
#             (the time of the writes alone)
# Every copy is timed to its data on stable storage: pdd flushes before it
# exits (sync=1), the others are followed by sync -d OUT.  The page cache
# is dropped before each copy, then the tool's program loaded (--version).
# interleaved, RUNS rounds, the order rotated; each tool's first copy is
# checked with cmp.  The table gives medians (seconds), the ratio of the
# fastest other tool's time to pdd's and of dd's to pdd's (above 1, pdd is
# faster), and pdd's time over the time of reading the input.
#
#   scripts/bench-sparse.sh                  # as root, after make
#   SIZE_MIB=1024 RUNS=3 scripts/bench-sparse.sh
# Settings: SIZE_MIB=4096 DATA_PCT=5 RUNS=5 PAIRS="img-img img-dev dev-dev
#   img-zdev" DIR=/var/tmp OUT=results/bench-sparse-DATE PDD=./pdd
set -euo pipefail

SIZE_MIB=${SIZE_MIB:-4096}
DATA_PCT=${DATA_PCT:-5}
RUNS=${RUNS:-5}
PAIRS=${PAIRS:-img-img img-dev dev-dev img-zdev}
DIR=${DIR:-/var/tmp}/pdd-bench-sparse.$$
OUT=${OUT:-results/bench-sparse-$(date +%Y%m%d-%H%M%S)}
PDD=${PDD:-./pdd}

die() { echo "bench-sparse.sh: $*" >&2; exit 1; }
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
[[ $(id -u) == 0 ]] || die "must run as root (loop devices)"
for c in dd cp nbdcopy qemu-img losetup blkdiscard cmp bc; do
	command -v "$c" >/dev/null || die "'$c' not found (scripts/install-deps.sh installs it)"
done
[[ -x $PDD ]] || die "no pdd at '$PDD' (run make)"
PDD=$(realpath "$PDD")
mkdir -p "$OUT/logs" "$DIR"
loops=()
cleanup() {
	local l
	for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done
	rm -rf "$DIR"
}
trap cleanup EXIT

IMG=$DIR/img NEW=$DIR/new
size=$((SIZE_MIB << 20))
truncate -s "$size" "$IMG"
# extents of data until DATA_PCT of the image holds data
want=$((size / 100 * DATA_PCT)) have=0
while ((have < want)); do
	len=$(((64 + RANDOM % 4032) * 1024))
	at=$(((RANDOM * 32768 + RANDOM) % (size / 65536) * 65536))
	head -c "$len" /dev/urandom | dd of="$IMG" bs=64K seek=$((at / 65536)) conv=notrunc status=none iflag=fullblock
	have=$((have + len))
done
truncate -s "$size" "$IMG"
cp --sparse=never "$IMG" "$DIR/full"
SRC=$(losetup --find --show --direct-io=on "$DIR/full")
loops+=("$SRC")
head -c 0 /dev/null >"$DIR/target"
truncate -s "$size" "$DIR/target"
DST=$(losetup --find --show --direct-io=on "$DIR/target")
loops+=("$DST")

echo "pair,tool,run,secs" >"$OUT/runs.csv"
tools_for() {
	case $1 in
	img-img)  echo "dd cp nbdcopy qemu-img pdd" ;;
	img-zdev) echo "dd nbdcopy qemu-img pdd read write" ;;
	*)        echo "dd nbdcopy qemu-img pdd" ;;
	esac
}
# prepare PAIR: the output as the pair wants it before a copy
prepare() {
	case $1 in
	img-img)  rm -f "$NEW" ;;
	img-zdev) blkdiscard -z "$DST" ;;
	*)        dd if=/dev/urandom of="$DST" bs=1M count=64 oflag=direct status=none ;;
	esac
}
cmd_for() {	# cmd_for PAIR TOOL: the command in CMD
	local in=$IMG out=$DST
	[[ $1 == dev-dev ]] && in=$SRC
	[[ $1 == img-img ]] && out=$NEW
	case $2 in
	dd)       CMD=(dd if="$in" of="$out" bs=1M conv=sparse,notrunc status=none)
		  # over other data conv=sparse leaves it there: a wrong copy
		  [[ $1 == img-dev || $1 == dev-dev ]] &&
			CMD=(dd if="$in" of="$out" bs=1M conv=notrunc status=none) ;;
	cp)       CMD=(cp --sparse=always "$in" "$out") ;;
	nbdcopy)  CMD=(nbdcopy "$in" "$out") ;;
	qemu-img) CMD=(qemu-img convert -f raw -O raw "$in" "$out")
		  [[ $1 == img-img ]] || CMD=(qemu-img convert -n -f raw -O raw "$in" "$out") ;;
	pdd)      CMD=("$PDD" if="$in" of="$out" bs=1M status=none)
		  [[ $1 == img-zdev ]] && CMD+=(oflag=zeroed) ;;
	read)     CMD=("$PDD" if="$in" of=/dev/null bs=1M status=none) ;;
	write)    CMD=("$PDD" if="$in" of="$out" bs=1M status=none oflag=zeroed) ;;
	esac
	OUTP=$out
}
run() {	# run PAIR TOOL RUN
	local t0 t1
	prepare "$1"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	cmd_for "$1" "$2"
	# the program itself is loaded once, so that what is timed is the
	# copy, not its libraries read from disk (pdd's, with libnbd's, take
	# ~60 ms cold)
	"${CMD[0]}" --version >/dev/null 2>&1 || true
	# write: the image's data already in the page cache, so that only
	# the writes take time
	[[ $2 == write ]] && "$PDD" if="$IMG" of=/dev/null bs=1M status=none
	t0=$EPOCHREALTIME
	"${CMD[@]}" >"$OUT/logs/$1-$2-$3.log" 2>&1 || die "$2 failed ($1): see $OUT/logs/$1-$2-$3.log"
	# pdd flushes the output before it exits (sync=1): the others are
	# timed to the same point
	[[ $2 == pdd || $2 == read ]] || sync -d "$OUTP"
	t1=$EPOCHREALTIME
	echo "$1,$2,$3,$(echo "$t1 - $t0" | bc -l)" >>"$OUT/runs.csv"
}

for pair in $PAIRS; do
	read -r -a T <<<"$(tools_for "$pair")"
	for t in "${T[@]}"; do
		run "$pair" "$t" 0
		[[ $t == read ]] && continue	# write is checked as pdd's copy
		cmp -s -n "$size" "$IMG" "$OUTP" || die "$t copied wrongly ($pair)"
	done
	for r in $(seq "$RUNS"); do
		n=${#T[@]}
		for i in $(seq 0 $((n - 1))); do
			run "$pair" "${T[$(((i + r) % n))]}" "$r"
		done
	done
done

awk -F, 'NR > 1 && $3 > 0 { k = $1 "," $2; n[k]++; v[k, n[k]] = $4 }
function med(k,   i, j, t, a, c) { c = n[k]; for (i = 1; i <= c; i++) a[i] = v[k, i]
	for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2 }
END { for (k in n) { m[k] = med(k); split(k, f, ","); if (f[2] != "pdd" && f[2] != "read" && f[2] != "write" && (!(f[1] in best) || m[k] < best[f[1]])) best[f[1]] = m[k] }
	print "pair,tool,secs,best_other_over_pdd,dd_over_pdd,pdd_over_read,pdd_over_read_plus_write"
	for (k in n) { split(k, f, ","); p = f[2] == "pdd"
		printf "%s,%s,%.3f,%s,%s,%s,%s\n", f[1], f[2], m[k], p ? sprintf("%.2f", best[f[1]] / m[k]) : "",
			p && ((f[1] ",dd") in m) ? sprintf("%.2f", m[f[1] ",dd"] / m[k]) : "",
			p && ((f[1] ",read") in m) ? sprintf("%.2f", m[k] / m[f[1] ",read"]) : "",
			p && ((f[1] ",write") in m) ? sprintf("%.2f", m[k] / (m[f[1] ",read"] + m[f[1] ",write"])) : "" } }' \
	"$OUT/runs.csv" | { IFS= read -r h; echo "$h"; sort; } >"$OUT/summary.csv"
{
	echo "sparse copies: $SIZE_MIB MiB image, ~$DATA_PCT% data, $RUNS rounds, medians (s)"
	column -s, -t "$OUT/summary.csv"
} | tee "$OUT/table.txt"
