#!/bin/bash
# map= with sparse= on file outputs, where zeros past the file's old end
# are not written and the file reaches its length only when pdd makes it:
#  - a copy killed with SIGKILL after a map save (a slow input: faultfs
#    with delay_us; 1 MiB of data, then 63 MiB of zeros, map_interval=1),
#    into a new file and into a shorter file of other data: every extent
#    the map marks finished is inside the file and holds the input's
#    bytes; a rerun with the map finishes byte-identical;
#  - a file that cannot grow (ulimit -f, SIGXFSZ ignored) when the last
#    runs are zeros past its old end: the copy fails, does not report more
#    copied than the file holds, and its map marks nothing finished past
#    the file's end; a rerun without the limit finishes byte-identical.
. "$(dirname "$0")/../lib.sh"
requires_root

MiB=1048576
size=$((64 * MiB))
"$STAMP" fill "$T/in" 0 "$MiB" 81
truncate -s "$size" "$T/in"

extents() { grep -v '^#' "$1" | tail -n +2; }
# plus MAP: "START END" of each finished extent
plus() { extents "$1" | while read -r pos len st; do
	[ "$st" = + ] && echo "$((pos)) $((pos + len))"; done; }
# check_map MAP OUT WHAT: every finished extent is in OUT and is the input's
check_map() {
	local s e osize
	osize=$(stat -c %s "$2")
	while read -r s e; do
		[ "$e" -le "$osize" ] || { cat "$1"; fail "$3: the map marks [$s, $e) finished, the file is $osize bytes"; }
		cmp -s -n $((e - s)) -i "$s:$s" "$T/in" "$2" ||
			fail "$3: the map marks [$s, $e) finished, the file differs there"
	done < <(plus "$1")
}
# last_end MAP: the end of the last finished extent (0: none)
last_end() { plus "$1" | tail -1 | awk '{ print $2 + 0 } END { if (!NR) print 0 }' | tail -1; }

# --- killed mid-copy -------------------------------------------------------------
mkfaultfs "$T/in" "$T/slow" delay_us=50000
killed() {	# killed OUT WHAT
	local out=$1 i end=0
	rm -f "$T/map" "$T/map".*
	"$PDD" if="$T/slow/disk" of="$out" map="$T/map" map_interval=1 "${eng[@]}" 2>"$T/err" &
	pid=$!
	# a save that marks zeros past 2 MiB finished, then SIGKILL at once
	for ((i = 0; i < 300; i++)); do
		[ -e "$T/map" ] && end=$(last_end "$T/map")
		[ "$end" -gt $((2 * MiB)) ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.02
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	# the reads it left in flight end at once (an io_uring holds the file
	# until they do, which would keep the mount busy at exit)
	echo "" >"$T/slow/control"
	[ "$end" -gt $((2 * MiB)) ] || { cat "$T/err"; fail "$2: no map save marked the zeros finished before the copy ended"; }
	end=$(last_end "$T/map")
	echo "$2: killed with [0, $end) finished in the map, the file $(stat -c %s "$out") bytes" >&2
	check_map "$T/map" "$out" "$2"
	run_pdd if="$T/slow/disk" of="$out" map="$T/map" map_interval=1
	expect_rc 0
	same_bytes "$T/in" "$out"
	echo "delay_us=50000" >"$T/slow/control"
}
rm -f "$T/new"
killed "$T/new" "a new file"
"$STAMP" fill "$T/short" 0 $((512 * 1024)) 82
killed "$T/short" "a shorter file of other data"

# --- a file that cannot grow -----------------------------------------------------
small=$((4 * MiB))
head -c "$small" "$T/in" >"$T/in4"
rm -f "$T/out4" "$T/map"*
rc=0
( trap '' XFSZ; ulimit -f 2048; exec "$PDD" if="$T/in4" of="$T/out4" map="$T/map" status=json "${eng[@]}" ) \
	>"$T/json" 2>"$T/err" || rc=$?
cat "$T/err" >&2
held=$(stat -c %s "$T/out4")
[ "$rc" != 0 ] || fail "a file that could not grow to $small bytes (it holds $held) was a success"
grep -q "File too large" "$T/err" || { cat "$T/err"; fail "no EFBIG said"; }
check_map "$T/map" "$T/out4" "a file that cannot grow"
# the data (1 MiB) is written, the zeros past it skipped, and the file
# cannot be made 4 MiB long (EFBIG): pdd counts what the file holds
copied=$(sed -n 's/^pdd: \([0-9]*\) bytes are copied.*/\1/p' "$T/err")
[ -n "$copied" ] || fail "no 'bytes are copied' line"
[ "$copied" -le "$held" ] || fail "a file that cannot grow: pdd says $copied bytes are copied, the file holds $held"
[ "$(json bytes_out "$T/json")" -le "$held" ] ||
	fail "a file that cannot grow: status=json has bytes_out $(json bytes_out "$T/json"), the file holds $held"
run_pdd if="$T/in4" of="$T/out4" map="$T/map"
expect_rc 0
same_bytes "$T/in4" "$T/out4"

echo "maps of sparse copies hold only what the file holds under engine ${PDD_ENGINE:-auto}"
