#!/bin/bash
# The sg engine under ThreadSanitizer: `make tsan` runs this with
# PDD=build/tsan/pdd.  An sg copy with a file on the other side runs the
# threads engine inside the sg engine, its workers ringing an eventfd the
# submitting thread polls; a race there ends the run with TSan's report.
# engines: sg
. "$(dirname "$0")/../lib.sh"
needs_sgdouble
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}"
"$STAMP" fill "$T/in" 0 4096000 3
truncate -s 4096000 "$T/dev"
sgp() { LD_PRELOAD=$SGD SGDOUBLE_DEVS="$T/sg=$T/dev" "$@"; }
for thr in 1 3 8; do
	for bpt in 1 7 128; do
		sgp run_pdd if="$T/in" of="$T/sg" bpt=$bpt threads=$thr qd=33
		expect_rc 0
		rm -f "$T/out"
		sgp run_pdd if="$T/sg" of="$T/out" bpt=$bpt threads=$thr qd=33
		expect_rc 0
		cmp -s "$T/in" "$T/out" || fail "threads=$thr bpt=$bpt: the copy through sg differs"
	done
done
echo "sg copies race-free and exact"
