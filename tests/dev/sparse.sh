#!/bin/bash
# sparse=: address-stamped data with zero islands of random sizes (some
# across transfers and blocks, some shorter than a grain), copied to a new
# file, over a file and a loop device full of other data, and with
# oflag=zeroed: the output is the input byte for byte, a new file is
# sparse where the input has whole grains of zeros, and the report counts
# what was zeroed and what was not written.
. "$(dirname "$0")/../lib.sh"
requires_root

MiB=1048576
size=$((16 * MiB))
"$STAMP" fill "$T/src" 0 "$size" 41
# islands: one that is the whole of two transfers, one across a transfer's
# end, small ones inside a grain, and random ones
zero() { dd if=/dev/zero of="$T/src" bs=1 seek="$1" count="$2" conv=notrunc status=none; }
zero_big() { dd if=/dev/zero of="$T/src" bs=4096 seek=$(($1 / 4096)) count=$(($2 / 4096)) conv=notrunc status=none; }
zero_big $((2 * MiB)) $((2 * MiB))
zero_big $((5 * MiB - 12288)) 24576
zero 100000 3000
zero $((9 * MiB + 5)) 4100
for _ in 1 2 3 4 5 6; do
	zero_big $(((RANDOM % 4000) * 4096)) $(((1 + RANDOM % 200) * 4096))
done
truncate -s "$size" "$T/src"


# zeros in whole 4096-byte grains of the input, the least a sparse copy
# must leave unwritten
whole=$(od -An -v -w4096 -tx8 "$T/src" |
	awk '{ for (i = 1; i <= NF; i++) if ($i != "0000000000000000") next; n++ } END { print n * 4096 }')
[ "$whole" -ge $((2 * MiB)) ] || fail "the input has only $whole bytes of zero grains"

# a new file: exact, sparse, the right size
rm -f "$T/new"
pdd if="$T/src" of="$T/new" status=json >"$T/json" 2>"$T/err" || fail "copy to a new file: $(cat "$T/err")"
same_bytes "$T/src" "$T/new"
[ "$(stat -c %s "$T/new")" = "$size" ] || fail "the new file is $(stat -c %s "$T/new") bytes"
[ "$(json bytes_skipped "$T/json")" = "$whole" ] || fail "skipped $(json bytes_skipped "$T/json"), not $whole"
[ "$(json bytes_zeroed "$T/json")" = 0 ] || fail "a new file had ranges zeroed"
alloc=$(($(stat -c %b "$T/new") * $(stat -c %B "$T/new")))
[ "$alloc" -le $((size - whole + MiB)) ] || fail "the new file has $alloc bytes allocated, data is $((size - whole))"

# over a file of other data: the zeros are punched, the file is exact
"$STAMP" fill "$T/old" 0 "$size" 42
pdd if="$T/src" of="$T/old" status=json >"$T/json" 2>"$T/err" || fail "copy over a file: $(cat "$T/err")"
same_bytes "$T/src" "$T/old"
[ "$(json bytes_zeroed "$T/json")" = "$whole" ] || fail "zeroed $(json bytes_zeroed "$T/json"), not $whole"
alloc=$(($(stat -c %b "$T/old") * $(stat -c %B "$T/old")))
[ "$alloc" -le $((size - whole + MiB)) ] || fail "punched: $alloc bytes still allocated"

# a file that grows, where the zeros at the input's end begin inside the
# file's old size: the punched part does not lengthen it, the end does
"$STAMP" fill "$T/grow" 0 10000 46
{ head -c 4096 "$T/src"; head -c 8192 /dev/zero; } >"$T/in2"
pdd if="$T/in2" of="$T/grow" 2>"$T/err" || fail "a growing file: $(cat "$T/err")"
same_bytes "$T/in2" "$T/grow"

# sparse=0: every byte written
"$STAMP" fill "$T/old" 0 "$size" 43
pdd if="$T/src" of="$T/old" sparse=0 status=json >"$T/json" 2>"$T/err" || fail "sparse=0: $(cat "$T/err")"
same_bytes "$T/src" "$T/old"
[ "$(json bytes_written "$T/json")" = "$size" ] || fail "sparse=0 wrote $(json bytes_written "$T/json")"

# loop devices with 512- and 4096-byte sectors full of other data
for sec in 512 4096; do
	"$STAMP" fill "$T/dev$sec" 0 "$size" 44
	D=$(mkloop "$T/dev$sec" "$sec")
	pdd if="$T/src" of="$D" status=json >"$T/json" 2>"$T/err" || fail "copy to $D: $(cat "$T/err")"
	cmp -s -n "$size" "$T/src" "$D" || fail "$sec-byte device: the copy differs"
	[ "$(json bytes_zeroed "$T/json")" = "$whole" ] || fail "$sec-byte device: zeroed $(json bytes_zeroed "$T/json"), not $whole"
done

# oflag=zeroed: the output is said to hold zeros, and they are not written
truncate -s 0 "$T/z"
truncate -s "$size" "$T/z"
Z=$(mkloop "$T/z" 512)
pdd if="$T/src" of="$Z" oflag=zeroed status=json >"$T/json" 2>"$T/err" || fail "oflag=zeroed: $(cat "$T/err")"
cmp -s -n "$size" "$T/src" "$Z" || fail "oflag=zeroed: the copy differs"
[ "$(json bytes_skipped "$T/json")" = "$whole" ] || fail "oflag=zeroed skipped $(json bytes_skipped "$T/json"), not $whole"

# an input file with holes: they are not read, and the copy is exact,
# with an odd size (the last block partial, in a hole)
truncate -s $((32 * MiB + 123)) "$T/holes"
"$STAMP" fill "$T/part" 0 $((3 * MiB)) 45
dd if="$T/part" of="$T/holes" bs=4096 seek=$((5 * 256)) conv=notrunc status=none
dd if="$T/part" of="$T/holes" bs=1 count=777 seek=$((20 * MiB + 99)) conv=notrunc status=none
# holes_of FILE: the bytes in its holes, as SEEK_DATA and SEEK_HOLE say
holes_of() {
	data_extents "$1" | awk -v size="$(stat -c %s "$1")" '{ n += $3 - $2 } END { print size - n }'
}
inholes=$(holes_of "$T/holes")
[ "$inholes" -gt $((28 * MiB)) ] || fail "the input has only $inholes bytes of holes"
# transfers of 64 KiB, 4 KiB (the holes cut them) and 32 MiB (one
# transfer holds data and holes: it is cut at their edges)
for b in "" "bpt=8" "bs=1M"; do
	rm -f "$T/hout"
	pdd if="$T/holes" of="$T/hout" $b status=json >"$T/json" 2>"$T/err" || fail "holes $b: $(cat "$T/err")"
	same_bytes "$T/holes" "$T/hout"
	[ "$(json bytes_in_holes "$T/json")" = "$inholes" ] ||
		fail "holes $b: $(json bytes_in_holes "$T/json") bytes not read, the holes are $inholes"
done
# the same to a 4096-byte device of other data, and through a map
"$STAMP" fill "$T/hdev" 0 $((33 * MiB)) 47
D=$(mkloop "$T/hdev" 4096)
rm -f "$T/hmap"
pdd if="$T/holes" of="$D" count=$((32 * MiB / 512)) map="$T/hmap" status=json >"$T/json" 2>"$T/err" ||
	fail "holes to a 4096-byte device: $(cat "$T/err")"
cmp -s -n $((32 * MiB)) "$T/holes" "$D" || fail "holes to a 4096-byte device: the copy differs"
[ "$(json bytes_in_holes "$T/json")" = $((inholes - 123)) ] ||
	fail "holes to a device: $(json bytes_in_holes "$T/json") bytes not read, not $((inholes - 123))"

# a 4096-byte device written from byte 512 through the page cache: the
# zero runs that end inside a block leave that part to a write, and the
# rest is zeroed (a run the device cannot zero does not turn zeroing off)
"$STAMP" fill "$T/d4" 0 $((4 * MiB)) 48
D4=$(mkloop "$T/d4" 4096)
"$STAMP" fill "$T/dat" 0 200000 49
{ head -c 100000 "$T/dat"; head -c 300000 /dev/zero; head -c 5000 "$T/dat"; head -c 200000 /dev/zero; } >"$T/i4"
pdd if="$T/i4" of="$D4" bs=512 seek=1 oflag=nodirect status=json >"$T/json" 2>"$T/err" ||
	fail "4096-byte device from byte 512: $(cat "$T/err")"
cmp -s -i 0:512 -n "$(stat -c %s "$T/i4")" "$T/i4" "$D4" || fail "4096-byte device from byte 512: the copy differs"
# whole 4096-byte blocks of the device in the two islands: 72 and 47,
# less one at each of the 8 transfers' edges (at 512 + k * 65536) inside
# them, where a transfer's last block is partial
[ "$(json bytes_zeroed "$T/json")" = $(((72 + 47 - 8) * 4096)) ] ||
	fail "4096-byte device from byte 512: zeroed $(json bytes_zeroed "$T/json")"

# holes that start or end inside a device's block, through the page
# cache: the parts of blocks are written as zeros (not from a buffer that
# was never filled), the whole blocks zeroed; 512- and 4096-byte devices
# of 0xff bytes, the 4096-byte one written from byte 512
"$STAMP" fill "$T/hp" 0 $MiB 50
truncate -s $((MiB + 1000)) "$T/hp"		# a hole to an odd end
"$STAMP" fill "$T/hq" 0 $MiB 51
truncate -s $((5 * MiB)) "$T/hq"
"$STAMP" fill "$T/hq" $((5 * MiB)) $((MiB - 700)) 52	# data, hole, data
for sec in 512 4096; do
	for f in hp hq; do
		tr '\0' '\377' </dev/zero | head -c $((7 * MiB)) >"$T/ff$sec"
		F=$(mkloop "$T/ff$sec" "$sec")
		sk=0
		[ "$sec" = 4096 ] && sk=1
		# few buffers, so that each is used again: a stale one shows
		pdd if="$T/$f" of="$F" seek=$sk bpt=32 qd=2 oflag=nodirect verbose=1 status=json >"$T/json" 2>"$T/err" ||
			fail "$f to a $sec-byte device: $(cat "$T/err")"
		cmp -s -i 0:$((sk * 512)) -n "$(stat -c %s "$T/$f")" "$T/$f" "$F" ||
			fail "$f to a $sec-byte device through the page cache: the copy differs"
		grep -q "cannot zero" "$T/err" && fail "$f to a $sec-byte device: $(grep "cannot zero" "$T/err")"
		# hp's 1000-byte hole: one whole block of 512, none of 4096 (from
		# byte 512 of it); hq's 4 MiB hole: all of it on 512-byte
		# blocks, and from byte 512 of 4096-byte ones 12 KiB of each
		# 16 KiB transfer (its first and last blocks are parts)
		case $sec$f in
		512hp) want=512 ;; 512hq) want=$((4 * MiB)) ;;
		4096hp) want=0 ;; 4096hq) want=$((3 * MiB)) ;;
		esac
		[ "$(json bytes_zeroed "$T/json")" = "$want" ] ||
			fail "$f to a $sec-byte device: $(json bytes_zeroed "$T/json") bytes zeroed, not $want"
		want=$((4 * MiB))
		[ "$f" = hp ] && want=1000
		[ "$(json bytes_in_holes "$T/json")" = "$want" ] ||
			fail "$f to a $sec-byte device: $(json bytes_in_holes "$T/json") bytes in holes, not $want"
		losetup -d "$F"
	done
done

# zeros that run past a device's end: the copy fails there with ENOSPC,
# as writes do, and claims no more than the device holds (a zeroing past
# the end is not a refusal, nor done)
truncate -s 0 "$T/allhole"
truncate -s $((4 * MiB)) "$T/allhole"
truncate -s $((MiB + 4096)) "$T/small"
S=$(mkloop "$T/small" 512)
for z in "" oflag=zeroed; do
	run_pdd if="$T/allhole" of="$S" count=8192 $z verbose=1 status=json >"$T/json"
	expect_rc 15
	# what the device holds, and no more
	[ "$(json bytes_out "$T/json")" = 1052672 ] || fail "zeros past the end $z: bytes_out $(json bytes_out "$T/json")"
	expect_err "pdd: error writing '$S' at block 2056: No space left on device"
	expect_err "pdd: 1052672 bytes are copied: input below block 2056 is in output below block 2056"
	grep -q "cannot zero" "$T/err" && fail "zeros past the end $z: $(grep "cannot zero" "$T/err")"
done

# a file that cannot grow to the zeros at the input's end (ulimit -f):
# the copy fails at the file's end, and claims no more than it holds
{ head -c $MiB "$T/hp"; head -c $((7 * MiB)) /dev/zero; } >"$T/i8"
rm -f "$T/o8" "$T/m8"
rc=0
(ulimit -f 4096; trap '' XFSZ; exec "$PDD" if="$T/i8" of="$T/o8" bs=64K map="$T/m8" "${eng[@]}") 2>"$T/err" || rc=$?
expect_rc 15
expect_err "pdd: error writing '$T/o8' at block 16: File too large"
expect_err "pdd: $MiB bytes are copied; the map '$T/m8' records what is done"
[ "$(stat -c %s "$T/o8")" = "$MiB" ] || fail "the file that cannot grow is $(stat -c %s "$T/o8") bytes"
grep -qx "0x00000000  0x00100000  +" "$T/m8" || { cat "$T/m8"; fail "the map claims more than the file holds"; }

# conv=sparse is dd's name for the default; other conversions are not pdd's
rm -f "$T/new3"
pdd if="$T/src" of="$T/new3" conv=sparse status=json >"$T/json" 2>"$T/err" || fail "conv=sparse: $(cat "$T/err")"
same_bytes "$T/src" "$T/new3"
[ "$(json bytes_skipped "$T/json")" = "$whole" ] || fail "conv=sparse skipped $(json bytes_skipped "$T/json")"
run_pdd if="$T/src" of="$T/new4" conv=sparse,noerror
expect_rc 1
expect_err "pdd: conv=sparse,noerror: unknown conversion 'noerror' (pdd takes conv=sparse only)"
run_pdd if="$T/src" of="$T/new4" conv=sparse sparse=0
expect_rc 1
expect_err "pdd: conv=sparse and sparse=0 contradict"
[ ! -e "$T/new4" ] || fail "a refused conv= created the output"

# oflag=zeroed where zero runs cannot be left out says so
pdd if="$T/src" of="$T/new3" sparse=0 oflag=zeroed 2>"$T/err" >/dev/null || fail "sparse=0 oflag=zeroed: $(cat "$T/err")"
expect_err "pdd: oflag=zeroed: no effect, every byte is written to '$T/new3' (sparse=0)"

# a grain the output's blocks do not divide is refused before anything
run_pdd if="$T/src" of="$T/new2" sparse=1000
expect_rc 31
expect_err "pdd: sparse=1000: not a multiple of the 512-byte blocks of '$T/new2'"
[ ! -e "$T/new2" ] || fail "a refused sparse= created the output"

echo "sparse copies exact under engine ${PDD_ENGINE:-auto}"
