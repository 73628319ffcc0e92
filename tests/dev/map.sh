#!/bin/bash
# map=FILE on real bad sectors (loop devices over tests/faultfs, 512- and
# 4096-byte sectors): the map pdd writes lists exactly the blocks GNU
# ddrescue finds, extent for extent, and ddrescuelog accepts it; a map
# written by ddrescue is read correctly; a rerun copies only what the map
# does not mark finished (the finished part is made unreadable to prove
# it is not read) and retries the bad blocks; skip/seek/count bound the
# map's domain; the map is saved safely (the previous one kept as .bak);
# a map that cannot be read, or could not be saved, stops pdd with the
# reason before it copies.
. "$(dirname "$0")/../lib.sh"
requires_root
command -v ddrescue >/dev/null || skip "needs GNU ddrescue (package gddrescue)"
MiB=1048576

# the extent lines of a mapfile (no comments, no status line)
extents() { grep -v '^#' "$1" | tail -n +2; }

# want_extents SIZE LBS BLOCK...: the extent lines of a map of SIZE bytes
# where exactly the given blocks (ascending) are bad, the rest finished
want_extents() {
	local size=$1 unit=$2 pos=0 b lo=-1 hi=-1
	shift 2
	for b in "$@" end; do
		if [ "$b" != end ] && [ "$b" = "$hi" ]; then
			hi=$((b + 1))
			continue
		fi
		if [ "$lo" -ge 0 ]; then
			[ $((lo * unit)) -gt "$pos" ] && printf '0x%08X  0x%08X  +\n' "$pos" $((lo * unit - pos))
			printf '0x%08X  0x%08X  -\n' $((lo * unit)) $(((hi - lo) * unit))
			pos=$((hi * unit))
		fi
		[ "$b" = end ] || { lo=$b; hi=$((b + 1)); }
	done
	[ "$size" -gt "$pos" ] && printf '0x%08X  0x%08X  +\n' "$pos" $((size - pos))
	true
}

for lbs in 512 4096; do
	echo "--- $lbs-byte sectors"
	size=$((8 * MiB)) nblk=$((8 * MiB / lbs))
	"$STAMP" fill "$T/back$lbs" 0 "$size" 4
	bad="read=$((100 * lbs))-$((101 * lbs)),$((301 * lbs + 7))-$((301 * lbs + 8)),$((1000 * lbs + lbs - 1))-$((1001 * lbs + 1)),$((1500 * lbs))-$((1504 * lbs))"
	want=(100 301 1000 1001 1500 1501 1502 1503)
	mkfaultfs "$T/back$lbs" "$T/mnt$lbs" "$bad"
	ctl=$T/mnt$lbs/control
	dev=$(mkloop_unmerged "$T/mnt$lbs/disk" "$lbs")

	# coe with a new map: the map is exactly the bad blocks and the rest
	rm -f "$T/out" "$T/m" "$T/m.bak"
	run_pdd if="$dev" of="$T/out" coe=1 bpt=64 map="$T/m"
	expect_rc 3
	expect_err "pdd: 8 unreadable blocks of $lbs bytes written as zeros, LBA 100 to 1503"
	expect_err "pdd: map '$T/m': of $size bytes, $((size - 8 * lbs)) finished, $((8 * lbs)) bad, 0 to try"
	want_extents "$size" "$lbs" "${want[@]}" >"$T/want.ext"
	extents "$T/m" >"$T/got.ext"
	diff "$T/want.ext" "$T/got.ext" || fail "the map's extents are not the bad blocks"
	sed -n 7p "$T/m" | grep -qx "0x$(printf %08X "$size")     +               1" ||
		fail "status line: $(sed -n 7p "$T/m")"
	head -1 "$T/m" | grep -qx '# Mapfile. Created by pdd [0-9.]*' || fail "header: $(head -1 "$T/m")"
	ddrescuelog -t "$T/m" >/dev/null 2>&1 || fail "ddrescuelog does not accept pdd's map"
	got=$(ddrescuelog -b "$lbs" -l- "$T/m" | tr '\n' ' ')
	[ "$got" = "${want[*]} " ] || fail "ddrescuelog reads bad blocks '$got' from pdd's map"
	[ ! -e "$T/m.bak" ] || fail "a first save left a .bak"

	# GNU ddrescue on the same device: the same extents, line for line
	rm -f "$T/dr.img" "$T/dr.map"
	ddrescue -q -d -b "$lbs" "$dev" "$T/dr.img" "$T/dr.map" || fail "ddrescue failed"
	extents "$T/dr.map" | diff "$T/got.ext" - || fail "ddrescue's map differs from pdd's"

	# pdd reads ddrescue's map; a dry run tells what it holds
	cp "$T/dr.map" "$T/m2"
	pdd if="$dev" of="$T/dr.img" map="$T/m2" --dry-run >"$T/plan" || fail "dry run failed"
	grep -qxF "  map '$T/m2': of $size bytes, $((size - 8 * lbs)) finished, $((8 * lbs)) bad, 0 to try" "$T/plan" ||
		{ cat "$T/plan"; fail "the dry run does not show ddrescue's map"; }

	# the disk "heals", but everything the map marks finished turns bad:
	# a rerun with ddrescue's map reads only the 8 bad blocks, retries
	# them, and completes ddrescue's image
	good="read=0-$((100 * lbs)),$((101 * lbs))-$((301 * lbs)),$((302 * lbs))-$((1000 * lbs)),$((1002 * lbs))-$((1500 * lbs)),$((1504 * lbs))-$size"
	echo "$good reset" >"$ctl" || fail "cannot set faults"
	run_pdd if="$dev" of="$T/dr.img" map="$T/m2" bpt=64
	expect_rc 0
	cmp -s "$T/back$lbs" "$T/dr.img" || fail "the rerun did not complete ddrescue's image"
	grep -q "failed_reads=0" "$ctl" || fail "the rerun read finished blocks: $(cat "$ctl")"
	printf '0x%08X  0x%08X  +\n' 0 "$size" | diff - <(extents "$T/m2") || fail "map after the rerun"
	extents "$T/m2.bak" | diff - <(extents "$T/dr.map") || fail ".bak is not the map before the save"
	ddrescuelog -t "$T/m2" >/dev/null 2>&1 || fail "ddrescuelog does not accept the rerun's map"

	# the same with pdd's own map from the coe run, bad blocks retried
	run_pdd if="$dev" of="$T/out" map="$T/m" bpt=64
	expect_rc 0
	cmp -s "$T/back$lbs" "$T/out" || fail "the rerun did not complete pdd's own copy"
	grep -q "failed_reads=0" "$ctl" || fail "the rerun read finished blocks: $(cat "$ctl")"

	# a map ddrescue stopped half-way (-s): pdd copies only the rest
	echo "reset" >"$ctl"
	rm -f "$T/out" "$T/m3"
	ddrescue -q -d -b "$lbs" -s $((size / 2)) "$dev" "$T/out" "$T/m3" || fail "ddrescue -s failed"
	echo "read=0-$((size / 2))" >"$ctl"
	run_pdd if="$dev" of="$T/out" map="$T/m3"
	expect_rc 0
	cmp -s "$T/back$lbs" "$T/out" || fail "pdd did not finish ddrescue's half copy"
	expect_err "$((size / 2 / lbs))+0 records out"

	# skip/seek/count bound the domain: outside it the map stays untried
	echo "$bad reset" >"$ctl"
	rm -f "$T/out" "$T/m4"
	run_pdd if="$dev" of="$T/out" bs="$lbs" skip=1000 seek=7 count=600 coe=1 map="$T/m4"
	expect_rc 3
	{
		printf '0x%08X  0x%08X  ?\n' 0 $((1000 * lbs))
		printf '0x%08X  0x%08X  -\n' $((1000 * lbs)) $((2 * lbs))
		printf '0x%08X  0x%08X  +\n' $((1002 * lbs)) $((498 * lbs))
		printf '0x%08X  0x%08X  -\n' $((1500 * lbs)) $((4 * lbs))
		printf '0x%08X  0x%08X  +\n' $((1504 * lbs)) $((96 * lbs))
		printf '0x%08X  0x%08X  ?\n' $((1600 * lbs)) $((size - 1600 * lbs))
	} | diff - <(extents "$T/m4") || fail "map of a skip/count domain"
	cmp -s -n $((498 * lbs)) -i $((1002 * lbs)):$((9 * lbs)) "$T/back$lbs" "$T/out" ||
		fail "the domain's blocks are not at seek="
	# a wider domain: only its new part and the bad blocks are read (the
	# finished part is unreadable now)
	echo "read=$((1002 * lbs))-$((1500 * lbs)),$((1504 * lbs))-$((1600 * lbs)) reset" >"$ctl"
	run_pdd if="$dev" of="$T/out" bs="$lbs" skip=1000 seek=7 count=1000 map="$T/m4"
	expect_rc 0
	expect_err "406+0 records out"
	grep -q "failed_reads=0" "$ctl" || fail "the wider rerun read finished blocks: $(cat "$ctl")"
	cmp -s -n $((1000 * lbs)) -i $((1000 * lbs)):$((7 * lbs)) "$T/back$lbs" "$T/out" ||
		fail "the wider domain is not the source"
	if [ "$lbs" = 4096 ]; then
		# a map finer than the device's blocks (512 bytes of bad block
		# 100 finished): coe must not write zeros over them
		echo "$bad reset" >"$ctl"
		printf '0 ?\n0 0x64000 ?\n0x64000 0x200 +\n0x64200 %d ?\n' $((size - 0x64200)) >"$T/m6"
		run_pdd if="$dev" of="$T/out" coe=1 map="$T/m6"
		expect_rc 3
		expect_err "pdd: '$dev': LBA 100 cannot be read, and the map marks part of it finished: stopping rather than writing zeros over it"
		grep -qx "0x00000000  0x00064200  +" "$T/m6" || fail "the finished part of LBA 100 lost its mark"
	fi
done

# a map that cannot be read or saved stops pdd before or as it copies
lbs=512
"$STAMP" fill "$T/src" 0 $MiB 6
printf '# x\n0 ?\n0 512 +\n1024 512 -\n' >"$T/broken"
run_pdd if="$T/src" of="$T/o" map="$T/broken"
expect_rc 15
expect_err "pdd: map '$T/broken' line 4: blocks are not contiguous"
[ ! -e "$T/o" ] || fail "a bad map still let pdd create the output"
mkdir "$T/mapdir"
run_pdd if="$T/src" of="$T/o" map="$T/mapdir"
expect_rc 15
expect_err "pdd: map=$T/mapdir: '$(realpath "$T/mapdir")' is a directory, not a regular file"
# a map that could not be saved is found out before the copy, not after
run_pdd if="$T/src" of="$T/o" map="$T/nodir/m"
expect_rc 15
expect_err "pdd: map=$T/nodir/m: cannot save the map in '$T/nodir': No such file or directory"
[ ! -e "$T/o" ] || fail "a map in a missing directory still let pdd copy"
run_pdd if=/dev/zero of="$T/o" map="$T/m5"
expect_rc 31
run_pdd if=- of="$T/o" map="$T/m5" < <(cat "$T/src")
expect_rc 31
expect_err "pdd: map=$T/m5: 'standard input' is a fifo; a map needs both sides to seek"
echo "maps are ddrescue's, exact, and resume only what is missing"
