# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by every test in tests/dev.  Gives:
#   PDD, STAMP, DD         programs under test and helpers
#   T                      a scratch directory on disk (ext4 here), removed at exit
#   requires_root          skip (exit 77) with a reason when not root
#   mkloop FILE [SECTOR]   make a loop device, print its name; detached at exit
#   mktmpfs DIR SIZE       mount a tmpfs of SIZE on DIR; unmounted at exit
#   fail MSG / skip MSG    end the test
#   pdd ARGS...            run pdd with engine=$PDD_ENGINE added when set
#   run_pdd ARGS...        run pdd, stderr in $T/err, status in $rc
#   expect_rc N            check $rc
#   expect_err TEXT        check $T/err holds the exact line TEXT
#   stamped, same, zeros   checks on stamped data in blocks of $lbs bytes
#   SGD, needs_sgdouble    the sg double's library, and a check it is built
#   mkfaultfs BACK DIR F.. mount tests/faultfs over BACK on DIR (file
#                          DIR/disk, faults F..); unmounted at exit
#   mkloop_unmerged FILE [SECTOR]  mkloop with nomerges=2, so that a
#                          request meeting a bad sector fails alone
#   set_queue DEV ATTR VAL set DEV's /sys/block/DEV/queue/ATTR; the value
#                          before is put back at exit (a loop device keeps
#                          it after it is detached, for its next user)
#   add_partition DISK N START LEN  a partition node of a loop device, in
#                          $part; deleted at exit
#   serve NAME ARGS...     an NBD server (nbdkit ARGS) on $T/NAME.sock with
#                          the pid in $T/NAME.pid; stopped by that pid at exit
#   serve_qemu NAME ARGS.. the same with qemu-nbd ARGS
#   serve_tcp NAME ARGS... nbdkit ARGS on 127.0.0.1, a free port in $port
#   stop_server NAME       stop it now (and wait for it)
#   uri NAME               its nbd+unix URI
#   zero_islands, grain_runs, zero_bytes, data_extents, json  zeros and
#                          holes (sparse=): see there
#   map_extents MAP        a ddrescue map's block lines, "POS SIZE STATUS"
#                          in decimal
#   map_holds MAP IMG SRC  every block MAP marks finished holds in IMG
#                          what SRC holds there
#   PROGRESS_RE, progress_lines FILE TOTAL  the progress line with a known
#                          total, and a count of FILE's, checked
#   wait_for PATTERN SECS  until $T/err has a line matching the extended
#                          regular expression; fails after SECS, or when
#                          pdd (its pid in $pid) ends first
# Only the loop devices this test made are ever detached.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PDD=${PDD:-$top/pdd}
case $PDD in /*) ;; *) PDD=$top/$PDD ;; esac
STAMP=$top/tests/tools/stamp
name=$(basename "$0" .sh)
seed=${PDD_SEED:-$(( ($$ * 7919 + $(date +%s)) % 32768 ))}
RANDOM=$seed
echo "seed: PDD_SEED=$seed"

T=$(mktemp -d "${PDD_TEST_DIR:-/var/tmp}/pdd-$name.XXXXXX")
: >"$T/.loops"
: >"$T/.mounts"
: >"$T/.parts"
: >"$T/.servers"
: >"$T/.queues"

cleanup() {
	local dev p
	while read -r p; do
		[ -n "$p" ] && kill "$p" 2>/dev/null
	done <"$T/.servers"
	# a loop device keeps added partitions after it is detached: they go
	# first (a moment after their last user lets go)
	while read -r p; do
		[ -n "$p" ] || continue
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			delpart "${p% *}" "${p#* }" 2>/dev/null && break
			sleep 0.2
		done
	done <"$T/.parts"
	restore_queue
	while read -r dev; do
		[ -n "$dev" ] && losetup -d "$dev" 2>/dev/null
	done <"$T/.loops"
	# a detached loop device lets go of its backing file a moment later
	while read -r dev; do
		[ -n "$dev" ] || continue
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			umount "$dev" 2>/dev/null && break
			sleep 0.2
		done
	done <"$T/.mounts"
	rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL: $name: $*"; exit 1; }
skip() { echo "SKIP: $name: $*"; exit 77; }

requires_root() {
	[ "$(id -u)" = 0 ] || skip "needs root to make loop devices"
	[ -e /dev/loop-control ] || skip "no loop device support"
}

# mkloop FILE [SECTOR]: losetup's own answer is the only name we trust
mkloop() {
	local file=$1 sector=${2:-512} dev
	dev=$(losetup --find --show --direct-io=on --sector-size "$sector" "$file") ||
		fail "losetup on $file failed"
	echo "$dev" >>"$T/.loops"
	echo "$dev"
}

set_queue() {
	local p=/sys/block/${1#/dev/}/queue/$2 v
	v=$(cat "$p") && [ -n "$v" ] || fail "cannot read $p"
	echo "$p $v" >>"$T/.queues"
	echo "$3" >"$p" || fail "cannot set $2 on $1"
}

# restore_queue [DEV]: put back what set_queue changed (on DEV alone), the
# first value set last
restore_queue() {
	local p v
	tac "$T/.queues" | while read -r p v; do
		[[ -z $p || ( -n ${1:-} && $p != /sys/block/${1#/dev/}/* ) ]] ||
			echo "$v" >"$p" 2>/dev/null
	done
	[ -z "${1:-}" ] || sed -i "\|^/sys/block/${1#/dev/}/|d" "$T/.queues"
}

mkloop_unmerged() {
	local dev
	dev=$(mkloop "$@") || exit 1
	set_queue "$dev" nomerges 2
	echo "$dev"
}

# the sg test double, LD_PRELOADed by the tests that need sg or raw nodes
SGD=$top/tests/sgdouble/libsgdouble.so
needs_sgdouble() {
	[ -e "$SGD" ] || fail "build the double first: make tests/sgdouble/libsgdouble.so"
}

FAULTFS=$top/tests/faultfs/faultfs
mkfaultfs() {
	local back=$1 dir=$2
	shift 2
	[ -x "$FAULTFS" ] || skip "tests/faultfs/faultfs is not built (needs libfuse3-dev)"
	[ -e /dev/fuse ] || skip "no /dev/fuse"
	mkdir -p "$dir"
	"$FAULTFS" "$back" "$dir" "$@" || fail "faultfs did not mount on $dir"
	echo "$dir" >>"$T/.mounts"
}

# add_partition DISK N START LEN (512-byte sectors): a partition of a loop
# device this test made (there is no partition scan), its node in $part;
# devtmpfs makes it, or else it is made in $T.  Deleted at exit.
add_partition() {
	local disk=$1 n=$2 node
	addpart "$disk" "$n" "$3" "$4" || fail "addpart $disk $n failed"
	echo "$disk $n" >>"$T/.parts"
	node=${disk}p$n
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ -b "$node" ] && break
		sleep 0.1
	done
	if [ ! -b "$node" ]; then
		node=$T/$(basename "$node")
		mknod "$node" b $(tr : ' ' <"/sys/block/${disk#/dev/}/$(basename "$node")/dev") ||
			fail "cannot make $node"
	fi
	part=$node
}

mktmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o size="$2" pdd-test "$1" || fail "cannot mount a tmpfs on $1"
	echo "$1" >>"$T/.mounts"
}

# every test runs once per engine: tests/run-tests sets PDD_ENGINE
eng=()
[ -n "${PDD_ENGINE:-}" ] && eng=(engine="$PDD_ENGINE")
pdd() { "$PDD" "$@" "${eng[@]}"; }

run_pdd() {
	rc=0
	pdd "$@" 2>"$T/err" || rc=$?
}

expect_rc() {
	[ "$rc" = "$1" ] || { cat "$T/err"; fail "exit status $rc, expected $1 (line ${BASH_LINENO[0]})"; }
}

expect_err() {
	grep -qxF -- "$1" "$T/err" || {
		echo "--- stderr:"; cat "$T/err"
		fail "missing line: $1 (line ${BASH_LINENO[0]})"
	}
}

# same_bytes A B: byte-identical files or devices
same_bytes() {
	cmp -- "$1" "$2" >/dev/null || fail "$1 and $2 differ: $(cmp -- "$1" "$2" 2>&1 | head -1) (line ${BASH_LINENO[0]})"
}

# pick WORD...: one of the words, from the seeded sequence (no subshell:
# bash reseeds RANDOM in each one).  Result in $picked.
pick() { local a=("$@"); picked=${a[RANDOM % $#]}; }

# Checks on address-stamped data (tests/tools/stamp) in blocks of $lbs bytes:
# stamped FILE BLK N SALT SRCBLK: blocks BLK.. of FILE hold the stamps of
# source blocks SRCBLK.. with SALT
stamped() {
	"$STAMP" check "$1" $(($2 * lbs)) $(($3 * lbs)) "$4" $(($5 * lbs)) "$lbs" ||
		fail "$1 blocks $2+$3 are not salt $4 from block $5 (line ${BASH_LINENO[0]})"
}

# same FILE1 FILE2 BLK N: both hold the same blocks BLK..BLK+N-1
same() {
	cmp -s -n $(($4 * lbs)) -i $(($3 * lbs)):$(($3 * lbs)) -- "$1" "$2" ||
		fail "$1 and $2 differ in blocks $3+$4 (line ${BASH_LINENO[0]})"
}

# zeros FILE BLK N: blocks BLK..BLK+N-1 of FILE are zeros
zeros() {
	cmp -s -n $(($3 * lbs)) -i $(($2 * lbs)):0 -- "$1" /dev/zero ||
		fail "$1 blocks $2+$3 are not zero (line ${BASH_LINENO[0]})"
}

# NBD servers on Unix sockets in $T, known by their pid files.  nbdkit
# writes its pid file only after it has forked into the background, when
# the command may have returned already: the file is removed first and
# waited for, lest a server go unrecorded (and outlive the test) or a
# restarted one be known by its predecessor's pid.
await_pid() {
	local p=
	for _ in $(seq 200); do
		p=$(cat "$T/$1.pid" 2>/dev/null)
		[[ $p =~ ^[0-9]+$ ]] && break
		sleep 0.05
	done
	[[ $p =~ ^[0-9]+$ ]] || fail "server $1 wrote no pid file"
	echo "$p" >>"$T/.servers"
}
serve() {
	local name=$1
	shift
	rm -f "$T/$name.pid"
	nbdkit -U "$T/$name.sock" -P "$T/$name.pid" "$@" || fail "nbdkit $* did not start"
	await_pid "$name"
}
serve_qemu() {
	local name=$1
	shift
	rm -f "$T/$name.pid"
	qemu-nbd -k "$T/$name.sock" --pid-file="$T/$name.pid" --fork "$@" ||
		fail "qemu-nbd $* did not start"
	await_pid "$name"
}
serve_tcp() {
	local name=$1
	shift
	# a port nobody holds: nbdkit fails at once on one that is taken
	for _ in $(seq 20); do
		port=$((20000 + RANDOM % 40000))
		rm -f "$T/$name.pid"
		nbdkit -i 127.0.0.1 -p "$port" -P "$T/$name.pid" "$@" 2>"$T/$name.err" &&
			{ await_pid "$name"; return; }
	done
	fail "nbdkit $* did not start on 127.0.0.1: $(cat "$T/$name.err")"
}
stop_server() {
	local p
	p=$(cat "$T/$1.pid")
	kill "$p" 2>/dev/null
	while kill -0 "$p" 2>/dev/null; do sleep 0.05; done
	# not signalled again at exit, when the number may be another's
	grep -vx "$p" "$T/.servers" >"$T/.servers.new"
	mv "$T/.servers.new" "$T/.servers"
	rm -f "$T/$1.sock"	# nbdkit leaves it, and a new one could not bind
}
uri() { echo "nbd+unix:///?socket=$T/$1.sock"; }

# wait_for PATTERN SECS: until $T/err has a line matching the extended
# regular expression, or fail after SECS; pdd ($pid) must still run
wait_for() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		grep -qE -- "$1" "$T/err" && return 0
		kill -0 "$pid" 2>/dev/null || { cat "$T/err"; fail "pdd ended before: $1 (line ${BASH_LINENO[0]})"; }
		sleep 0.05
	done
	cat "$T/err"
	fail "no line matching '$1' within $2 s (line ${BASH_LINENO[0]})"
}

# the progress line with a known total, exactly as pdd(1) gives it
PROGRESS_RE='^[0-9]+ bytes \([0-9.]+ [kMGTPE]B, [0-9.]+ [KMGTPE]iB\) copied, [0-9]{1,3}%, '
PROGRESS_RE+='[0-9.]+ [kMGTPE]?B/s now, [0-9.]+ [kMGTPE]?B/s average, [0-9]+:[0-5][0-9]:[0-5][0-9] left$'

# progress_lines FILE TOTAL: prints how many progress lines FILE has;
# fails unless there is one at least, their bytes rise, and each percent
# is the bytes' of TOTAL, rounded down
progress_lines() {
	grep -E "$PROGRESS_RE" "$1" | awk -v total="$2" '
		{ pct = $0; sub(/.* copied, /, "", pct); sub(/%.*/, "", pct)
		  if (NR > 1 && $1 <= last) { print "bytes did not rise: " $0 >"/dev/stderr"; exit 1 }
		  if (pct != int($1 * 100 / total)) { print "wrong percent: " $0 >"/dev/stderr"; exit 1 }
		  last = $1; n++ }
		END { if (!n) { print "no progress line" >"/dev/stderr"; exit 1 } print n }' ||
		{ cat -A "$1" >&2; return 1; }
}

# Zeros and holes (sparse=):
# zero_islands FILE SIZE SALT: FILE made of SIZE bytes (at least 10 MiB)
# stamped with SALT, with zero islands of random sizes: one of two whole
# MiBs, one across a 1 MiB boundary, two small ones inside grains, six
# random ones of whole 4096-byte grains
zero_islands() {
	local f=$1 size=$2 MiB=1048576
	"$STAMP" fill "$f" 0 "$size" "$3"
	zi() { dd if=/dev/zero of="$f" bs=4096 seek=$(($1 / 4096)) count=$(($2 / 4096)) conv=notrunc status=none; }
	zi $((2 * MiB)) $((2 * MiB))
	zi $((5 * MiB - 12288)) 24576
	dd if=/dev/zero of="$f" bs=1 seek=100000 count=3000 conv=notrunc status=none
	dd if=/dev/zero of="$f" bs=1 seek=$((9 * MiB + 5)) count=4100 conv=notrunc status=none
	for _ in 1 2 3 4 5 6; do
		zi $(((RANDOM % (size / 4096 - 200)) * 4096)) $(((1 + RANDOM % 200) * 4096))
	done
}

# grain_runs FILE [GRAIN [FROM [LEN]]]: the runs of FILE's bytes FROM..FROM+LEN
# (default: all) in grains of GRAIN bytes (4096) counted from FROM, one a
# line: "data|zero START END" (bytes of FILE, END excluded); a last short
# grain counts as a grain
grain_runs() {
	local f=$1 g=${2:-4096} from=${3:-0} len=${4:-}
	[ -n "$len" ] || len=$(($(stat -c %s "$f") - from))
	tail -c +$((from + 1)) "$f" | head -c "$len" | od -An -v -w"$g" -tx8 |
		awk -v g="$g" -v from="$from" -v len="$len" '
		{ z = "zero"; for (i = 1; i <= NF; i++) if ($i !~ /^0+$/) { z = "data"; break }
		  s = from + (NR - 1) * g; e = s + g; if (e > from + len) e = from + len
		  if (z == kind && s == end) { end = e; next }
		  if (kind != "") print kind, start, end
		  kind = z; start = s; end = e }
		END { if (kind != "") print kind, start, end }'
}

# zero_bytes FILE [GRAIN...]: the bytes in whole grains of zeros (grain_runs)
zero_bytes() { grain_runs "$@" | awk '$1 == "zero" { n += $3 - $2 } END { print n + 0 }'; }

# data_extents FILE: FILE's data extents as SEEK_DATA and SEEK_HOLE see
# them, "data START END" a line
data_extents() {
	python3 - "$1" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
pos = 0
while pos < size:
    try:
        d = os.lseek(fd, pos, os.SEEK_DATA)
    except OSError:
        break
    h = os.lseek(fd, d, os.SEEK_HOLE)
    print("data", d, h)
    pos = h
PY
}

# map_extents MAP: the block lines of a ddrescue mapfile (comments and the
# status line left out), "POS SIZE STATUS" in decimal, one per line
map_extents() {
	local first=1 pos size st rest
	sed 's/#.*//' "$1" | while read -r pos size st rest; do
		[ -n "$pos" ] || continue
		[ $first = 1 ] && { first=0; continue; }
		echo "$((pos)) $((size)) $st"
	done
}

# map_holds MAP IMG SRC: every block MAP marks finished holds in IMG the
# bytes SRC holds at the same place; fails with the first that does not
map_holds() {
	local pos size st
	while read -r pos size st; do
		[ "$st" = + ] || continue
		cmp -s -i "$pos:$pos" -n "$size" "$2" "$3" ||
			{ echo "$2 differs from $3 in $pos+$size"; return 1; }
	done < <(map_extents "$1")
}

# json KEY FILE: a number from pdd's status=json
json() { sed -n "s/.*\"$1\": *\\([0-9]*\\).*/\\1/p" "$2" | head -1; }
