#!/bin/bash
# The threaded copy under ThreadSanitizer: `make tsan` runs this with
# PDD=build/tsan/pdd, so any data race in the copy core or the threads
# engine ends the run with TSan's report and a failing status.  (Run with
# the ordinary build it is one more set of threaded copies.)
. "$(dirname "$0")/../lib.sh"
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}"

head -c 4000000 /dev/urandom >"$T/in"
for thr in 2 3 8 16; do
	for bpt in 1 7 128; do
		run_pdd if="$T/in" of="$T/out.$thr.$bpt" bs=512 bpt=$bpt threads=$thr
		expect_rc 0
		cmp -s "$T/in" "$T/out.$thr.$bpt" || fail "threads=$thr bpt=$bpt copy differs"
	done
done
# large transfers: the buffers' helper brings them in while the copy
# runs, and the engines hear when all are in (3 buffers of 1 MiB for 4
# transfers), or it is stopped before it is done (from a pipe the copy
# plans 64 transfers of 256 KiB, 16 MiB of buffers, and reads its 4 MB
# in 16)
run_pdd if="$T/in" of="$T/big" bs=512 bpt=2048 qd=3 oflag=direct
expect_rc 0
cmp -s "$T/in" "$T/big" || fail "bpt=2048 qd=3 copy differs"
cat "$T/in" | pdd bs=512 bpt=512 count=32768 2>"$T/err" >"$T/big.pipe"
[ "${PIPESTATUS[1]}" = 0 ] || fail "pipe copy at bpt=512: $(cat "$T/err")"
cmp -s "$T/in" "$T/big.pipe" || fail "pipe copy at bpt=512 differs"
# streams on both sides, and a direct file output with a buffered tail
pdd bs=1000 bpt=3 threads=8 <"$T/in" 2>"$T/err" | cat >"$T/pipe.out"
[ "${PIPESTATUS[0]}" = 0 ] || fail "pipe copy: $(cat "$T/err")"
cmp -s "$T/in" "$T/pipe.out" || fail "pipe copy differs"
run_pdd if="$T/in" of="$T/direct.out" oflag=direct iflag=direct threads=6 bpt=16 count=7811
expect_rc 0
cmp -s <(head -c $((7811 * 512)) "$T/in") "$T/direct.out" || fail "direct copy differs"
echo "threaded copies race-free and exact"
