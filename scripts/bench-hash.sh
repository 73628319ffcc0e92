#!/usr/bin/env bash
# scripts/bench-hash.sh - pdd's hash= against dd | sha256sum pipelines and
# dc3dd hash=, and against its limit (issue 15).
#
# A source and a target loop device of SIZE_MIB each (losetup
# --direct-io=on, sector SECTOR, over files in /dev/shm: the memory-backed
# pair of scripts/bench.sh), the source filled with random bytes once and
# its sha256sum and md5sum taken once.  For each transfer size X in BS,
# the whole device is copied by each tool:
#   pdd              pdd if=SRC of=DST bs=SECTOR bpt=X/SECTOR status=noxfer
#   pdd-sha256       the same with hash=sha256
#   pdd-md5          hash=md5
#   pdd-sha256+md5   hash=sha256,md5 (a thread each: the slower sets the pace)
#   dd|sha256sum     sha256sum <FIFO & dd if=SRC bs=X iflag=direct |
#                    tee FIFO | dd of=DST bs=X iflag=fullblock oflag=direct
#                    conv=fsync; wait    (the usual way to hash while
#                    copying with dd: tee copies each block into two pipes)
#   dd|md5sum        the same with md5sum
#   dc3dd-sha256     dc3dd if=SRC of=DST hash=sha256 bufsz=X; sync -d DST
#   dc3dd-md5        hash=md5 (dc3dd has no direct I/O: it reads and
#                    writes through the page cache; the sync makes its time
#                    end with its data on the device, as pdd's does, which
#                    flushes before it exits, and the dd above, conv=fsync)
#   openssl-sha256   openssl speed -evp sha256 -bytes X -seconds OPENSSL_SECS:
#   openssl-md5      one thread hashing one buffer, nothing copied
# All tools that take it do direct I/O on both devices, so that the page
# cache neither helps nor costs; it is dropped before every run anyway
# (dc3dd's reads would come from it), then each tool's programs are run
# once (--version) to load them.  The tools run interleaved, RUNS
# rounds, the order rotated every round.  Wall time is bracketed with
# EPOCHREALTIME (MiB/s = SIZE_MIB / wall), user+sys CPU comes from
# /usr/bin/time and is the tool's own (all its processes and threads), not
# the loop devices' kernel workers that copy to and from the backing
# files.  Each tool's first copy at each size goes to a target zeroed
# before it and is compared with the source (cmp); every digest a tool
# prints is compared with sha256sum's or md5sum's of the source.
#
# The limit at size X is the slower of pdd without a hash and one stream
# of the algorithm in openssl speed at -bytes X (for sha256+md5, the
# slower of the two algorithms); the table gives each pdd hash row as a
# fraction of its limit (x limit) and as a multiple of dc3dd's and of the
# pipeline's speed with the same hash (x dc3dd, x pipe; sha256+md5 against
# the sha256 rows).  Issue 15's target: pdd-sha256 at 1 MiB >= 0.90 x
# limit, and every pdd hash row >= 2 x dc3dd.  CPU s/GiB: user+sys per GiB
# copied (openssl: 1024 / MiB/s, one thread busy); all s/GiB: the CPU time
# the whole machine was busy during the run (/proc/stat), per GiB: the
# loop devices' workers are in it, and so is anything else running then,
# which this column shows.
#
#   scripts/bench-hash.sh                     # as root, after make
#   RUNS=3 SIZE_MIB=512 scripts/bench-hash.sh
# Settings: SIZE_MIB=1024 RUNS=5 BS="1M 64K" SECTOR=512 OPENSSL_SECS=3
#   OUT=results/bench-hash-DATE PDD=./pdd PDD_ARGS= (more pdd arguments,
#   e.g. engine=threads) PDD_BASE= (another pdd, e.g. an earlier build: its
#   four rows run too, interleaved, as base, base-sha256, ...)
# Writes runs.csv (every run), summary.csv, table.txt, info.txt and logs/
# into OUT.  Only the loop devices and files this script creates are
# touched (/dev/shm/pdd-bench-hash.PID).
set -euo pipefail

SIZE_MIB=${SIZE_MIB:-1024}
RUNS=${RUNS:-5}
BS=${BS:-1M 64K}
SECTOR=${SECTOR:-512}
OPENSSL_SECS=${OPENSSL_SECS:-3}
DIR=/dev/shm/pdd-bench-hash.$$
OUT=${OUT:-results/bench-hash-$(date +%Y%m%d-%H%M%S)}
PDD=${PDD:-./pdd}
PDD_ARGS=${PDD_ARGS:-}
PDD_BASE=${PDD_BASE:-}

die() { echo "bench-hash.sh: $*" >&2; exit 1; }
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,58p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
[[ -z ${1:-} ]] || die "unknown argument '$1' (settings are environment variables; see --help)"
[[ $(id -u) == 0 ]] || die "must run as root (loop devices, drop_caches)"
for v in SIZE_MIB RUNS SECTOR OPENSSL_SECS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer"
done
for c in losetup blockdev dd tee sha256sum md5sum dc3dd openssl cmp awk column sync mkfifo; do
	command -v "$c" >/dev/null || die "'$c' not found (scripts/install-deps.sh installs it)"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (package 'time'; scripts/install-deps.sh)"
[[ -x $PDD ]] || die "no pdd at '$PDD' (run make)"
PDD=$(realpath "$PDD")
[[ -z $PDD_BASE ]] || { [[ -x $PDD_BASE ]] || die "no pdd at PDD_BASE='$PDD_BASE'"; PDD_BASE=$(realpath "$PDD_BASE"); }
"$PDD" --version 2>&1 | grep -q sha256 || die "this pdd has no hash= (built without libssl-dev)"
bytes_of() {	# 1M, 64K, 4096 -> bytes
	local n=${1%[KkMm]}
	[[ $n =~ ^[1-9][0-9]*$ ]] || return 1
	case $1 in *[Kk]) echo $((n << 10)) ;; *[Mm]) echo $((n << 20)) ;; *) echo "$n" ;; esac
}
read -r -a BS_LIST <<<"$BS"
(( ${#BS_LIST[@]} )) || die "BS is empty"
for b in "${BS_LIST[@]}"; do
	x=$(bytes_of "$b") || die "transfer size '$b' is not a number with K or M"
	(( x % SECTOR == 0 && (SIZE_MIB << 20) % x == 0 )) ||
		die "transfer size $b must be a multiple of SECTOR and divide SIZE_MIB"
done

loops=()
cleanup() {
	local l
	for l in "${loops[@]}"; do losetup -d "$l" || echo "bench-hash.sh: could not detach $l" >&2; done
	rm -rf -- "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$OUT/logs" "$DIR"
OUT=$(realpath "$OUT")
avail=$(df -Pk -- "$DIR" | awk 'NR == 2 { print $4 }')
(( avail >= 2 * (SIZE_MIB << 10) + 65536 )) || die "$DIR has $avail KiB free, needs two ${SIZE_MIB} MiB files"
new_loop() {	# new_loop FILE -> the loop device over it, recorded for cleanup
	local l
	truncate -s "${SIZE_MIB}M" -- "$1"
	l=$(losetup --find --show --direct-io=on --sector-size "$SECTOR" -- "$1") || die "losetup failed for $1"
	[[ $l == /dev/* ]] || die "losetup printed '$l'"
	loops+=("$l")
	[[ $(cat "/sys/block/${l#/dev/}/loop/dio") == 1 ]] || echo "bench-hash.sh: warning: $l has direct I/O off" >&2
	LOOPDEV=$l
}
new_loop "$DIR/src"; SRC=$LOOPDEV
new_loop "$DIR/dst"; DST=$LOOPDEV
SIZE=$((SIZE_MIB << 20))
mkfifo "$DIR/fifo"
echo "bench-hash.sh: source $SRC, target $DST (${SIZE_MIB} MiB each in $DIR); filling the source" >&2
dd if=/dev/urandom of="$SRC" bs=1M count="$SIZE_MIB" iflag=fullblock oflag=direct status=none
declare -A REF=([sha256]=$(sha256sum <"$SRC" | cut -d' ' -f1) [md5]=$(md5sum <"$SRC" | cut -d' ' -f1))
{
	echo "date: $(date -Is)"
	echo "host: $(uname -srm), $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
	echo "settings: SIZE_MIB=$SIZE_MIB RUNS=$RUNS BS=\"$BS\" SECTOR=$SECTOR OPENSSL_SECS=$OPENSSL_SECS PDD_ARGS=\"$PDD_ARGS\""
	echo "source $SRC, target $DST over $DIR (dio $(cat "/sys/block/${SRC#/dev/}/loop/dio")/$(cat "/sys/block/${DST#/dev/}/loop/dio"))"
	echo "source sha256 ${REF[sha256]} md5 ${REF[md5]}"
	echo "pdd: $PDD ($("$PDD" --version 2>&1 | paste -sd ';' -))"
	[[ -z $PDD_BASE ]] || echo "base: $PDD_BASE ($("$PDD_BASE" --version 2>&1 | paste -sd ';' -))"
	echo "dc3dd: $(dc3dd --version 2>&1 | grep -m1 -i 'dc3dd')"
	echo "openssl: $(openssl version)"
	echo "cpu flags: $(grep -m1 -o -w -E 'sha_ni|avx2|avx512f' /proc/cpuinfo | sort -u | paste -sd ' ' -)"
	for b in "${BS_LIST[@]}"; do
		x=$(bytes_of "$b")
		# shellcheck disable=SC2086
		"$PDD" if="$SRC" of="$DST" bs="$SECTOR" bpt=$((x / SECTOR)) hash=sha256 $PDD_ARGS --dry-run 2>&1 | grep using
	done
} >"$OUT/info.txt"

PDD_ROWS=(pdd pdd-sha256 pdd-md5 pdd-sha256+md5)
TOOLS=("${PDD_ROWS[@]}" "dd|sha256sum" "dd|md5sum" dc3dd-sha256 dc3dd-md5 openssl-sha256 openssl-md5)
[[ -z $PDD_BASE ]] || TOOLS+=(base base-sha256 base-md5 base-sha256+md5)
algs_of() {	# algs_of TOOL -> its hashes, comma-separated ("" for none)
	case $1 in
	*sha256+md5) echo sha256,md5 ;; *sha256*) echo sha256 ;; *md5*) echo md5 ;; *) echo "" ;;
	esac
}
# The command of TOOL at transfer size X (bytes) in CMD.  Pipelines run
# under bash -c: /usr/bin/time counts every process they wait for.
cmd_for() {
	local algs bin=$PDD
	algs=$(algs_of "$1")
	case $1 in
	pdd*|base*)
		[[ $1 == base* ]] && bin=$PDD_BASE
		# shellcheck disable=SC2206
		CMD=("$bin" if="$SRC" of="$DST" bs="$SECTOR" bpt=$((X / SECTOR)) status=noxfer $PDD_ARGS)
		[[ -z $algs ]] || CMD+=(hash="$algs") ;;
	dd\|*)	CMD=(bash -c 'set -o pipefail; "$1sum" <"$2" & dd if="$3" bs="$5" iflag=direct status=none |
		tee "$2" | dd of="$4" bs="$5" iflag=fullblock oflag=direct conv=fsync status=none && wait $!' \
			_ "$algs" "$DIR/fifo" "$SRC" "$DST" "$X") ;;
	dc3dd-*) CMD=(bash -c 'dc3dd if="$1" of="$2" hash="$3" bufsz="$4" nwspc=on && sync -d "$2"' \
			_ "$SRC" "$DST" "$algs" "$X") ;;
	openssl-*) CMD=(openssl speed -evp "$algs" -bytes "$X" -seconds "$OPENSSL_SECS") ;;
	esac
}
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
HZ=$(getconf CLK_TCK)
# CPU ticks the whole machine has been busy (all but idle and iowait)
busy_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
# The programs of TOOL loaded after the drop, so that what is timed is the
# copy, not binaries and libraries read from disk (pdd's with libcrypto's
# take 30-40 ms cold)
warm() {
	local p progs=()
	case $1 in
	pdd*) progs=("$PDD") ;; base*) progs=("$PDD_BASE") ;; dc3dd-*) progs=(dc3dd sync) ;;
	dd\|*) progs=(bash dd tee "$(algs_of "$1")sum") ;;
	esac
	for p in "${progs[@]}"; do "$p" --version >/dev/null 2>&1 || true; done
}
# digest_ok TOOL LOG: every digest the tool was asked for is the source's
# (the pipelines print "HEX  -", dc3dd "HEX (ALG)", pdd "pdd: ALG HEX")
digest_ok() {
	local a
	for a in $(algs_of "$1" | tr , ' '); do
		grep -Eq "^( *|pdd: $a )${REF[$a]}( |\$)" "$2" || return 1
	done
}
declare -A CHECKED=()
echo "bs,tool,round,rc,wall_s,user_s,sys_s,all_cpu_s,mib_s,copy,digest" >"$OUT/runs.csv"
run() {	# run TOOL ROUND
	local t=$1 log=$OUT/logs/${1//|/-}-$B-r$2 copy=- digest=- rc=0 t0 t1 c0 c1 e u s all wall mibs
	cmd_for "$t"
	printf '%q ' "${CMD[@]}" >"$log.cmd"
	if [[ $t != openssl-* && -z ${CHECKED[$t:$X]:-} ]]; then
		dd if=/dev/zero of="$DST" bs=1M count="$SIZE_MIB" oflag=direct status=none
		copy=pending
	fi
	drop_caches
	warm "$t"
	c0=$(busy_ticks)
	t0=$EPOCHREALTIME
	/usr/bin/time -f '%e %U %S' -o "$log.time" "${CMD[@]}" >"$log" 2>&1 || rc=$?
	t1=$EPOCHREALTIME
	c1=$(busy_ticks)
	read -r e u s <"$log.time" || true
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
	all=$(awk -v a="$c0" -v b="$c1" -v hz="$HZ" 'BEGIN { printf "%.2f", (b - a) / hz }')
	if [[ $t == openssl-* ]]; then	# "md5  768371.24k": 1000s of bytes/s
		mibs=$(awk -v a="$(algs_of "$t")" '$1 == a && $2 ~ /k$/ { printf "%.1f", $2 * 1000 / 1048576 }' "$log")
		[[ -n $mibs ]] || rc=99
	else
		mibs=$(awk -v m="$SIZE_MIB" -v w="$wall" 'BEGIN { printf "%.1f", m / w }')
		if [[ $copy == pending ]]; then
			drop_caches
			copy=ok
			cmp -n "$SIZE" -- "$SRC" "$DST" >>"$log" 2>&1 || copy=FAIL
			CHECKED[$t:$X]=$copy
		fi
		if [[ -n $(algs_of "$t") ]]; then
			digest=ok
			digest_ok "$t" "$log" || digest=FAIL
		fi
	fi
	(( rc == 0 )) || mibs=""
	echo "$X,$t,$2,$rc,$wall,$u,$s,$all,$mibs,$copy,$digest" >>"$OUT/runs.csv"
	printf '  %-16s %4s round %-2s rc=%-2s %8s s %8s MiB/s cpu %5.2f s, all %5.2f s %s %s\n' "$t" "$B" "$2" \
		"$rc" "$wall" "${mibs:-n/a}" "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" "$all" "$copy" "$digest" >&2
	[[ $copy != FAIL && $digest != FAIL ]] || echo "bench-hash.sh: $t at $B: copy $copy, digest $digest (see $log)" >&2
}

NT=${#TOOLS[@]}
for B in "${BS_LIST[@]}"; do
	X=$(bytes_of "$B")
	echo "bench-hash.sh: transfers of $B, $RUNS rounds of ${NT} tools" >&2
	for (( r = 1; r <= RUNS; r++ )); do
		for (( i = 0; i < NT; i++ )); do
			run "${TOOLS[(i + r - 1) % NT]}" "$r"
		done
	done
done

# --- summary: medians over the successful runs -------------------------------
# runs.csv: 1 bs, 2 tool, 3 round, 4 rc, 5 wall, 6 user, 7 sys, 8 all_cpu,
# 9 mib_s, 10 copy, 11 digest
awk -F, -v gib="$(awk -v m="$SIZE_MIB" 'BEGIN { print m / 1024 }')" '
function med(v, k,   i, j, t, a, c) { c = n[k]; for (i = 1; i <= c; i++) a[i] = v[k, i]
	for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2 }
function r(a, b) { return (a != "" && b != "" && b > 0) ? sprintf("%.2f", a / b) : "-" }
NR > 1 && !(($1, $2) in seen) { seen[$1, $2] = 1; order[++no] = $1 SUBSEP $2 }
NR > 1 && $4 == 0 && $9 != "" { k = $1 SUBSEP $2; n[k]++; v[k, n[k]] = $9
	os = $2 ~ /^openssl/
	c[k, n[k]] = os ? 1024 / $9 : ($6 + $7) / gib; all[k, n[k]] = os ? 0 : $8 / gib }
NR > 1 { if ($10 != "-") cp[$1, $2] = $10
	if ($11 == "FAIL" || !(($1, $2) in dg)) dg[$1, $2] = $11 }
END {
	for (k in n) { m[k] = med(v, k); cpu[k] = med(c, k); acpu[k] = med(all, k) }
	print "bs,tool,runs,mib_s,cpu_s_per_gib,all_cpu_s_per_gib,x_limit,x_dc3dd,x_pipe,copy,digest"
	for (o = 1; o <= no; o++) { split(order[o], f, SUBSEP); x = f[1]; t = f[2]; k = order[o]
		xl = xd = xp = "-"
		if (t ~ /^(pdd|base)-/) {	# against its limit, dc3dd, the pipeline
			a = t; sub(/^(pdd|base)-/, "", a); split(a, al, "+")
			lim = m[x, t ~ /^base/ ? "base" : "pdd"]
			for (i in al) { ol = m[x, "openssl-" al[i]]; if (ol == "" || ol < lim) lim = ol }
			xl = r(m[k], lim); xd = r(m[k], m[x, "dc3dd-" al[1]]); xp = r(m[k], m[x, "dd|" al[1] "sum"])
		}
		printf "%s,%s,%d,%s,%s,%s,%s,%s,%s,%s,%s\n", x, t, n[k], k in m ? sprintf("%.1f", m[k]) : "n/a",
			k in m ? sprintf("%.3f", cpu[k]) : "n/a", k in m && t !~ /^openssl/ ? sprintf("%.3f", acpu[k]) : "-",
			xl, xd, xp, (x, t) in cp ? cp[x, t] : "-", dg[x, t] }
}' "$OUT/runs.csv" >"$OUT/summary.csv"
{
	echo "hash= bench: memory-backed loops of ${SIZE_MIB} MiB (sector $SECTOR), medians of $RUNS interleaved rounds"
	awk -F, 'NR > 1 && $1 != p { p = $1
		printf "\n%-5s %-16s %4s %8s %9s %9s %7s %7s %6s %-5s %s\n", "bs", "tool", "runs", "MiB/s",
			"CPU s/GiB", "all s/GiB", "x limit", "x dc3dd", "x pipe", "copy", "digest" }
	NR > 1 { printf "%-5s %-16s %4s %8s %9s %9s %7s %7s %6s %-5s %s\n",
		($1 >= 1048576 ? $1 / 1048576 "M" : $1 / 1024 "K"), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }' "$OUT/summary.csv"
	echo
	echo "CPU s/GiB: the tool's user+sys (openssl: 1024 / MiB/s); all s/GiB: the whole machine's busy"
	echo "CPU time during the run (with the loop devices' workers, and whatever else ran)"
	echo "x limit: MiB/s over min(pdd without a hash, openssl speed of each of its algorithms)"
	echo "x dc3dd, x pipe: over dc3dd's and the dd pipeline's MiB/s with the same hash (sha256+md5: sha256)"
	echo "results: $OUT"
} | tee "$OUT/table.txt"
