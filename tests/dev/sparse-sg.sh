#!/bin/bash
# sparse= on an sg output (tests/sgdouble, LD_PRELOADed into pdd only),
# with 512- and 4096-byte logical blocks: address-stamped data with zero
# islands of random sizes (some across transfers and blocks, some shorter
# than a grain) and a hole of the input file, copied over a device that
# held other data, with random bpt, qd and seek: the device holds the
# input byte for byte and its other data around it; the zero runs went as
# WRITE SAME(16) without UNMAP or ANCHOR and with one block of data out,
# none longer than the Block Limits' maximum, and they add up to what the
# report says was zeroed.  A device without WRITE SAME (20h), and one
# refusing the CDB (24h): the message once, the zeros written, the copy
# exact.  oflag=zeroed over a device of zeros: no WRITE SAME and no
# WRITE over the zero runs.  sparse=0: no WRITE SAME.
# engines: sg
. "$(dirname "$0")/../lib.sh"
needs_sgdouble
command -v fallocate >/dev/null || skip "needs fallocate (util-linux)"

MiB=1048576
size=$((6 * MiB))
faults= wsmax=

# sgp ARGS...: run_pdd with the double's devices ($devs), faults and
# limit; the double logs to $T/log, emptied first
sgp() {
	: >"$T/log"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	LD_PRELOAD=$SGD SGDOUBLE_DEVS=$devs SGDOUBLE_FAULTS=$faults \
	SGDOUBLE_WRITE_SAME_MAX=$wsmax SGDOUBLE_LOG=$T/log run_pdd "$@"
}

# jsn KEY: a number from the last run's status=json (lib.sh's json)
jsn() { json "$1" "$T/json"; }

# blocks OP: the blocks the double's log shows OP (the name as logged,
# e.g. "WRITE SAME(16)") to have done, summed; n_OP: how many commands
blocks() {
	grep -F " $1 [" "$T/log" | grep -F -- '-> GOOD' |
		sed -n 's/.* blocks \([0-9]*\) len .*/\1/p' | awk '{ n += $1 } END { print n + 0 }'
}
count() { grep -cF " $1 [" "$T/log"; }

# the input: stamps, zero islands, and a hole of 1 MiB and a bit
"$STAMP" fill "$T/src" 0 "$size" 51
zero() { dd if=/dev/zero of="$T/src" bs=1 seek="$1" count="$2" conv=notrunc status=none; }
zero 0 65536			# first: the first command to the output zeroes
zero $((MiB - 5000)) 70000	# across a transfer's end
zero 100000 3000		# inside a grain: written
zero $((3 * MiB + 7)) 9000	# off the blocks
for _ in 1 2 3 4 5 6 7 8; do
	zero $((RANDOM * 150 % (size - 300000))) $((RANDOM * 8 % 250000 + 1))
done
fallocate -p -o $((4 * MiB)) -l $((MiB + 12288)) "$T/src"
# zeros in whole 4096-byte grains from the start of the input
whole=$(od -An -v -w4096 -tx8 "$T/src" |
	awk '{ for (i = 1; i <= NF; i++) if ($i != "0000000000000000") next; n++ } END { print n * 4096 }')
echo "$whole bytes of the input in whole grains of zeros"
[ "$whole" -ge $((MiB + 65536)) ] || fail "the input has only $whole bytes of zero grains"

for lbs in 512 4096; do
	echo "--- $lbs-byte logical blocks"
	NB=$(((size + 65536) / lbs + 16))	# room for seek
	dev=$T/dev$lbs.img D=$T/nodes/sg$lbs
	devs="$D=$dev:$lbs"

	for run in 1 2 3; do
		pick 7 8 64 128 256; bpt=$picked
		pick 1 4 16 40; qd=$picked
		pick 0 8 16 3; seek=$((picked * 4096 / lbs))
		pick 0 8 64 1000; wsmax=$picked
		# whole grains at the same places as in the input, when the
		# transfers are whole grains where the output's grains are
		aligned=false
		[ $((bpt * lbs % 4096)) = 0 ] && [ $((seek * lbs % 4096)) = 0 ] && aligned=true
		echo "run $run: bpt=$bpt qd=$qd seek=$seek, at most $wsmax blocks a WRITE SAME"
		"$STAMP" fill "$dev" 0 $((NB * lbs)) 52
		sgp if="$T/src" of="$D" bpt="$bpt" qd="$qd" seek="$seek" status=json >"$T/json"
		expect_rc 0
		stamped "$dev" 0 "$seek" 52 0
		cmp -s -n "$size" -i 0:$((seek * lbs)) -- "$T/src" "$dev" ||
			fail "the copy differs: $(cmp -n "$size" -i 0:$((seek * lbs)) -- "$T/src" "$dev" 2>&1)"
		stamped "$dev" $((seek + size / lbs)) $((NB - seek - size / lbs)) 52 $((seek + size / lbs))
		n=$(count "WRITE SAME(16)")
		[ "$n" -gt 0 ] || fail "no WRITE SAME"
		# never UNMAP, ANCHOR, NDOB: byte 1 is 0; one block out; all good
		[ "$(grep -cF " WRITE SAME(16) [93 00 " "$T/log")" = "$n" ] || fail "WRITE SAME with bits in byte 1"
		[ "$(grep -F " WRITE SAME(16) [" "$T/log" | grep -cF " len $lbs pack_id ")" = "$n" ] ||
			fail "WRITE SAME without one block of data out"
		[ "$(grep -F " WRITE SAME(16) [" "$T/log" | grep -cF -- "-> GOOD resid 0")" = "$n" ] ||
			fail "a WRITE SAME failed: $(grep -F " WRITE SAME(16) [" "$T/log" | grep -vF -- "-> GOOD" | head -1)"
		if [ "$wsmax" != 0 ]; then
			most=$(grep -F " WRITE SAME(16) [" "$T/log" | sed -n 's/.* blocks \([0-9]*\) len .*/\1/p' | sort -n | tail -1)
			[ "$most" -le "$wsmax" ] || fail "a WRITE SAME of $most blocks, the device takes $wsmax"
		fi
		zeroed=$(jsn bytes_zeroed) written=$(jsn bytes_written)
		[ $(($(blocks "WRITE SAME(16)") * lbs)) = "$zeroed" ] ||
			fail "WRITE SAME covered $(($(blocks "WRITE SAME(16)") * lbs)) bytes, the report says $zeroed zeroed"
		[ $((zeroed + written)) = "$size" ] || fail "zeroed $zeroed + written $written is not $size"
		wrote=$(($(blocks "WRITE(6)") + $(blocks "WRITE(10)") + $(blocks "WRITE(12)") + $(blocks "WRITE(16)")))
		[ $((wrote * lbs)) = "$written" ] || fail "WRITE moved $((wrote * lbs)) bytes, the report says $written"
		if $aligned; then
			[ "$zeroed" = "$whole" ] || fail "zeroed $zeroed, the input has $whole in whole grains"
		fi
	done
	wsmax=

	# a device without WRITE SAME: said once, the zeros written
	"$STAMP" fill "$dev" 0 $((NB * lbs)) 53
	faults="nowritesame@$D:always"
	sgp if="$T/src" of="$D" qd=16 verbose=1 status=json >"$T/json"
	expect_rc 0
	expect_err "pdd: '$D' cannot zero a range (Operation not supported): zero runs are written"
	[ "$(grep -c "cannot zero" "$T/err")" = 1 ] || fail "the refusal was said $(grep -c "cannot zero" "$T/err") times"
	cmp -s -n "$size" -- "$T/src" "$dev" || fail "without WRITE SAME the copy differs"
	stamped "$dev" $((size / lbs)) $((NB - size / lbs)) 53 $((size / lbs))
	[ "$(jsn bytes_zeroed)" = 0 ] || fail "without WRITE SAME $(jsn bytes_zeroed) bytes were zeroed"
	[ "$(jsn bytes_written)" = "$size" ] || fail "without WRITE SAME $(jsn bytes_written) bytes written"
	[ "$(grep -F " WRITE SAME(16) [" "$T/log" | grep -cvF "asc 0x20/0x00")" = 0 ] ||
		fail "a WRITE SAME was not refused"

	# a device refusing the CDB (invalid field, 24h): the first command to
	# the output is the WRITE SAME of the input's first zeros
	"$STAMP" fill "$dev" 0 $((NB * lbs)) 54
	faults="io-illegal@$D:1"
	sgp if="$T/src" of="$D" qd=1 verbose=1
	expect_rc 0
	expect_err "pdd: '$D' cannot zero a range (Operation not supported): zero runs are written"
	grep -F " WRITE SAME(16) [" "$T/log" | head -1 | grep -qF "asc 0x24/0x00" ||
		fail "the first WRITE SAME was not the one refused"
	[ "$(count "WRITE SAME(16)")" = 1 ] || fail "WRITE SAME sent again after a refusal"
	cmp -s -n "$size" -- "$T/src" "$dev" || fail "after a refused CDB the copy differs"
	faults=

	# oflag=zeroed over a device of zeros: the zero runs are not written
	truncate -s 0 "$dev"
	truncate -s $((NB * lbs)) "$dev"
	sgp if="$T/src" of="$D" bpt=64 oflag=zeroed status=json >"$T/json"
	expect_rc 0
	cmp -s -n "$size" -- "$T/src" "$dev" || fail "oflag=zeroed: the copy differs"
	[ "$(count "WRITE SAME(16)")" = 0 ] || fail "oflag=zeroed sent WRITE SAME"
	[ "$(jsn bytes_skipped)" = "$whole" ] || fail "oflag=zeroed skipped $(jsn bytes_skipped), not $whole"
	wrote=$(($(blocks "WRITE(10)") + $(blocks "WRITE(16)")))
	[ $((wrote * lbs)) = $((size - whole)) ] || fail "oflag=zeroed wrote $((wrote * lbs)) bytes, not $((size - whole))"

	# odd transfers over few buffers (each used again): exact
	"$STAMP" fill "$dev" 0 $((NB * lbs)) 56
	sgp if="$T/src" of="$D" bpt=3 qd=2
	expect_rc 0
	cmp -s -n "$size" -- "$T/src" "$dev" || fail "bpt=3 qd=2: the copy differs"

	# sparse=0: every byte written
	"$STAMP" fill "$dev" 0 $((NB * lbs)) 55
	sgp if="$T/src" of="$D" sparse=0
	expect_rc 0
	cmp -s -n "$size" -- "$T/src" "$dev" || fail "sparse=0: the copy differs"
	[ "$(count "WRITE SAME(16)")" = 0 ] || fail "sparse=0 sent WRITE SAME"
done

echo "sparse copies to sg exact, by WRITE SAME(16) or by writes"
