#!/bin/bash
# sparse= with an NBD input: the export's zero extents (BLOCK_STATUS in
# base:allocation) are not read.  An address-stamped image with holes,
# some straddling transfers and one across the 32 MiB that qemu-nbd
# answers at a time, odd-sized with a hole at its end:
#  - nbdkit's file plugin (the log filter counts the reads): the copy is
#    the image and nbdcopy's byte for byte, bytes_in_holes is what the
#    server's map (nbdinfo --map) puts under zero extents in whole grains,
#    no read lies wholly in one and the bytes read are the rest;
#  - qemu-nbd -f raw: the same, against qemu-nbd's own map;
#  - a server whose extents say "all data" (--filter=noextents) and one
#    without base:allocation (--no-sr): everything read, same bytes;
#  - BLOCK_STATUS failing mid-copy (the error filter): a note at -v, the
#    rest read, the copy exact and successful;
#  - an NBD output without WRITE_ZEROES (--filter=nozero): zero runs are
#    written from the start, with a note at -v only, and no WRITE_ZEROES
#    is sent; with oflag=zeroed they are not written at all.
# Servers on Unix sockets in the test's own directory, stopped by pid.
# engines: uring
. "$(dirname "$0")/../lib.sh"
"$PDD" --version | grep -q '^engines:.* nbd' || skip "this pdd is built without libnbd"
for t in nbdkit nbdcopy nbdinfo qemu-nbd; do
	command -v $t >/dev/null || skip "no $t (scripts/install-deps.sh installs it)"
done

MiB=1048576
KiB=1024
size=$((48 * MiB + 1536))
xfer=$((768 * KiB))	# transfers straddle 1 MiB and 32 MiB boundaries
"$STAMP" fill "$T/img" 0 $((48 * MiB)) 51
punch() { fallocate -p -o "$1" -l "$2" "$T/img" || fail "cannot punch a hole in $T/img"; }
punch $((3 * MiB)) $((5 * MiB))
punch $((10 * MiB + 256 * KiB)) $((3 * MiB))
punch $((30 * MiB + 512 * KiB)) $((4 * MiB + 512 * KiB))	# across 32 MiB
punch $(((9216 + RANDOM % 2048) * 4096)) $(((1 + RANDOM % 512) * 4096))
truncate -s "$size" "$T/img"	# a hole at the end, past the last block


# zero_map URI FILE: the export's zero extents as nbdinfo --map gives
# them, adjacent ones merged, one "START END" a line
zero_map() {
	nbdinfo --map "$1" | awk '
		$3 % 4 >= 2 { if (n && $1 == e) { e = $1 + $2; next }
			     if (n) print s, e; s = $1; e = $1 + $2; n = 1 }
		END { if (n) print s, e }' >"$2" || fail "nbdinfo --map $1 failed"
	[ -s "$2" ] || fail "the server reports no zero extent: $(nbdinfo --map "$1")"
}

# in_zeros MAP A B: [A, B) lies wholly in one of MAP's zero extents
in_zeros() {
	local s e
	while read -r s e; do
		((s <= $2 && $3 <= e)) && return 0
	done <"$1"
	return 1
}

# holes_of MAP END: the bytes below END in zero extents, in whole 4096-byte
# grains (transfers are cut where data and zeros meet, in grains); a run
# that reaches END counts whole
holes_of() {
	local s e n=0
	while read -r s e; do
		((e > $2)) && e=$2
		s=$(((s + 4095) / 4096 * 4096))
		((e < $2)) && e=$((e / 4096 * 4096))
		((e > s)) && n=$((n + e - s))
	done <"$1"
	echo $n
}

# reads_of LOG MAP: checks that no read in nbdkit's LOG lies wholly in a
# zero extent of MAP; prints the bytes read.  A log emptied while nbdkit
# has it open starts with a run of NULs, which are left out.
reads_of() {
	local o c n=0
	while read -r o c; do
		in_zeros "$2" $((o)) $((o + c)) && fail "a read at $((o)) of $((c)) bytes, wholly in zeros"
		n=$((n + c))
	done < <(tr -d '\000' <"$1" | sed -n 's/.* Read id=[0-9]* offset=\(0x[0-9a-f]*\) count=\(0x[0-9a-f]*\) .*/\1 \2/p')
	echo $n
}

# --- nbdkit's file plugin ------------------------------------------------------
serve f --filter=log file "$T/img" logfile="$T/f.log"
zero_map "$(uri f)" "$T/f.map"
holes=$(holes_of "$T/f.map" "$size")
[ "$holes" -ge $((8 * MiB)) ] || fail "only $holes bytes of whole transfers in zeros: $(cat "$T/f.map")"
: >"$T/f.log"
"$PDD" if="$(uri f)" of="$T/new" --dry-run >"$T/plan" 2>&1 || fail "dry run: $(cat "$T/plan")"
grep -qx "          export '', multi-conn, flush, FUA, zero, trim, base:allocation" "$T/plan" ||
	fail "dry run: base:allocation not named: $(cat "$T/plan")"
run_pdd if="$(uri f)" of="$T/new" bs=$xfer bpt=1 status=json >"$T/json"
expect_rc 0
same_bytes "$T/img" "$T/new"
[ "$(json bytes_in_holes "$T/json")" = "$holes" ] ||
	fail "nbdkit: bytes_in_holes $(json bytes_in_holes "$T/json"), the map says $holes"
read_bytes=$(reads_of "$T/f.log" "$T/f.map") || { echo "$read_bytes"; exit 1; }
[ "$read_bytes" = $((size - holes)) ] || fail "nbdkit: $read_bytes bytes read, not $((size - holes))"
queries=$(grep -ac ' Extents id=[0-9]* offset=' "$T/f.log")
[ "$queries" -ge 1 ] && [ "$queries" -le 4 ] || fail "nbdkit: $queries BLOCK_STATUS queries"
nbdcopy "$(uri f)" "$T/ref" || fail "nbdcopy failed"
same_bytes "$T/ref" "$T/new"

# sparse=0: nothing is asked, everything read
: >"$T/f.log"
run_pdd if="$(uri f)" of="$T/new0" bs=$xfer bpt=1 sparse=0 status=json >"$T/json"
expect_rc 0
same_bytes "$T/img" "$T/new0"
[ "$(json bytes_in_holes "$T/json")" = 0 ] || fail "sparse=0: holes not read"
[ "$(grep -ac ' Extents id=' "$T/f.log")" = 0 ] || fail "sparse=0: BLOCK_STATUS was sent"
stop_server f

# --- qemu-nbd ------------------------------------------------------------------
serve_qemu q --persistent -r -f raw "$T/img"
zero_map "$(uri q)" "$T/q.map"
qholes=$(holes_of "$T/q.map" "$size")
[ "$qholes" -ge $((8 * MiB)) ] || fail "qemu-nbd: only $qholes bytes in zeros: $(cat "$T/q.map")"
rm -f "$T/new"
run_pdd if="$(uri q)" of="$T/new" bs=$xfer bpt=1 status=json >"$T/json"
expect_rc 0
same_bytes "$T/img" "$T/new"
[ "$(json bytes_in_holes "$T/json")" = "$qholes" ] ||
	fail "qemu-nbd: bytes_in_holes $(json bytes_in_holes "$T/json"), the map says $qholes"
stop_server q

# --- extents that say nothing, and none at all ---------------------------------
serve nx --filter=log --filter=noextents file "$T/img" logfile="$T/nx.log"
serve nsr --no-sr file "$T/img"
"$PDD" if="$(uri nsr)" of="$T/new" --dry-run >"$T/plan" 2>&1 || fail "dry run: $(cat "$T/plan")"
grep -qx "          export '', multi-conn, flush, FUA, zero, trim" "$T/plan" ||
	fail "dry run without structured replies: $(cat "$T/plan")"
for s in nsr nx; do
	: >"$T/nx.log"
	rm -f "$T/new"
	run_pdd if="$(uri $s)" of="$T/new" bs=$xfer bpt=1 status=json >"$T/json"
	expect_rc 0
	same_bytes "$T/img" "$T/new"
	[ "$(json bytes_in_holes "$T/json")" = 0 ] || fail "$s: $(json bytes_in_holes "$T/json") bytes in holes"
done
echo 0 0 >"$T/none.map"
read_bytes=$(reads_of "$T/nx.log" "$T/none.map") || { echo "$read_bytes"; exit 1; }
[ "$read_bytes" = "$size" ] || fail "noextents: $read_bytes bytes read, not $size"
stop_server nx
stop_server nsr

# --- BLOCK_STATUS failing mid-copy ---------------------------------------------
# queries of 4 MiB at most (the server's maximum block size), reads of
# 100 ms one at a time: the first query is answered to the end of the
# hole from 3 MiB (8 MiB), five whole transfers; the next, at 8 MiB,
# comes after the reads of the first three, and fails: the hole from
# 10.25 MiB, which holds the transfer at 11 MiB, is read
serve e --filter=log --filter=error --filter=delay --filter=blocksize-policy file "$T/img" \
	logfile="$T/e.log" error-extents=EIO error-extents-rate=100% error-extents-file="$T/fail-extents" rdelay=100ms \
	blocksize-maximum=$((4 * MiB))
rm -f "$T/new" "$T/fail-extents"
pdd if="$(uri e)" of="$T/new" bs=1M bpt=1 qd=1 count=12 status=json -v >"$T/json" 2>"$T/err" &
pid=$!
for _ in $(seq 100); do
	grep -aq ' Read id=' "$T/e.log" && break
	sleep 0.02
done
touch "$T/fail-extents"
rc=0
wait $pid || rc=$?
expect_rc 0
expect_err "pdd: '$(uri e)': no zero extents from the server (Input/output error): the rest is read"
cmp -s -n $((12 * MiB)) "$T/img" "$T/new" || fail "BLOCK_STATUS failing: the copy differs"
[ "$(json bytes_in_holes "$T/json")" = $((5 * MiB)) ] ||
	fail "BLOCK_STATUS failing: bytes_in_holes $(json bytes_in_holes "$T/json"), not $((5 * MiB))"
[ "$(grep -ac ' Extents id=[0-9]* offset=' "$T/e.log")" = 2 ] ||
	fail "BLOCK_STATUS failing: asked again after the error: $(grep ' Extents id=' "$T/e.log")"
stop_server e

# --- an NBD output without WRITE_ZEROES ----------------------------------------
"$STAMP" fill "$T/dst" 0 "$size" 52
serve z --filter=log --filter=nozero file "$T/dst" logfile="$T/z.log"
run_pdd if="$T/img" of="$(uri z)" bs=$xfer bpt=1 status=json -v >"$T/json"
expect_rc 0
expect_err "pdd: '$(uri z)' cannot zero a range (Operation not supported): zero runs are written"
same_bytes "$T/img" "$T/dst"
[ "$(grep -c "cannot zero" "$T/err")" = 1 ] || fail "nozero: the note is said more than once"
[ "$(json bytes_written "$T/json")" = "$size" ] || fail "nozero: wrote $(json bytes_written "$T/json")"
[ "$(json bytes_zeroed "$T/json")" = 0 ] || fail "nozero: zeroed $(json bytes_zeroed "$T/json")"
grep -aq ' Zero id=' "$T/z.log" && fail "nozero: WRITE_ZEROES was sent"
# no note without -v
"$STAMP" fill "$T/dst" 0 "$size" 53
run_pdd if="$T/img" of="$(uri z)" bs=$xfer bpt=1
expect_rc 0
same_bytes "$T/img" "$T/dst"
grep -q "cannot zero" "$T/err" && fail "nozero: a note without -v: $(cat "$T/err")"
stop_server z
# oflag=zeroed: an export of zeros, whose zero runs are not written
truncate -s 0 "$T/dst"
truncate -s "$size" "$T/dst"
serve zz --filter=log --filter=nozero file "$T/dst" logfile="$T/zz.log"
run_pdd if="$T/img" of="$(uri zz)" bs=$xfer bpt=1 oflag=zeroed status=json -v >"$T/json"
expect_rc 0
same_bytes "$T/img" "$T/dst"
grep -q "cannot zero" "$T/err" && fail "nozero, oflag=zeroed: a note: $(cat "$T/err")"
skipped=$(json bytes_skipped "$T/json")
[ "$skipped" -ge "$holes" ] || fail "nozero, oflag=zeroed: skipped $skipped, fewer than $holes"
[ "$(json bytes_written "$T/json")" = $((size - skipped)) ] || fail "nozero, oflag=zeroed: wrote $(json bytes_written "$T/json")"
grep -aq ' Zero id=' "$T/zz.log" && fail "nozero, oflag=zeroed: WRITE_ZEROES was sent"
stop_server zz

# --- a file's holes to an export over other data ------------------------------
# holes that end (or, with bs=1000, start) inside the export's 512-byte
# blocks: the parts of blocks are written as zeros, not from a buffer a
# hole never filled (few buffers, so that each is used again)
"$STAMP" fill "$T/hp" 0 $MiB 54
truncate -s $((MiB + 1000)) "$T/hp"
"$STAMP" fill "$T/hq" 0 $MiB 55
truncate -s $((5 * MiB)) "$T/hq"
"$STAMP" fill "$T/hq" $((5 * MiB)) $MiB 56
tr '\0' '\377' </dev/zero | head -c $((6 * MiB)) >"$T/ff"
serve ff file "$T/ff"
# bytes zeroed: of hp's 1000-byte hole one 512-byte block; of hq's 4 MiB
# all in 8 KiB transfers; in 7000-byte ones, what lies in whole 512-byte
# blocks of each hole transfer (near its end cut to whole 4096 bytes, its
# last 2784 read with the data after them), and 1024 of the transfer
# that reads the hole's first 1424 bytes with the data before it
for c in "hp 512 bs=512 qd=2" "hq 3889152 bs=1000 bpt=7 qd=2" "hq 4194304 bs=512 bpt=16 qd=2"; do
	read -r f want args <<<"$c"
	run_pdd if="$T/$f" of="$(uri ff)" $args status=json >"$T/json"
	expect_rc 0
	cmp -s -n "$(stat -c %s "$T/$f")" "$T/$f" "$T/ff" || fail "$c: the export differs from the input"
	[ "$(json bytes_zeroed "$T/json")" = "$want" ] ||
		fail "$c: $(json bytes_zeroed "$T/json") bytes zeroed, not $want"
done
stop_server ff

echo "NBD zero extents not read, exact under engine ${PDD_ENGINE:-auto}"
