#!/bin/bash
# A device that answers nothing: a file on tests/faultfs whose every read
# sleeps 10 s.  While all reads are out and none has come back, the
# progress line says "no data for N s", SIGUSR1's report comes, and
# SIGINT is acted on at once: the stop gives up what no device holds yet,
# says what it waits for and how to end without waiting, and the
# transfers in flight are then written and the copy resumes exactly.  A second SIGINT ends pdd at once (see below
# for what "at once" can mean to a device that holds a read).  "Before
# any request came back" is checked by the output still being empty, not
# by a clock.  Every engine: each waits on its requests with a timeout.
. "$(dirname "$0")/../lib.sh"
requires_root
KiB=1024
SIZE=$((512 * KiB))
XFER=$((64 * KiB))
QD=4

"$STAMP" fill "$T/back" 0 "$SIZE" 7
mkfaultfs "$T/back" "$T/mnt" delay_us=10000000
src=$T/mnt/disk
pid=
# a pdd left running by a failed check would keep the mount busy
# and a read still sleeping in faultfs keeps it busy for up to 10 s
unstall() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	wait
	for _ in $(seq 120); do
		umount "$T/mnt" 2>/dev/null && { : >"$T/.mounts"; break; }
		sleep 0.1
	done
	cleanup
}
trap unstall EXIT
slow=(bs=$XFER bpt=1 qd=$QD threads=$QD)
# the reads the device holds: all of qd, but with the threads engine on
# both sides the input has half the workers, and the stop gives up the
# reads no worker has started; a worker that found the next reads
# waiting took them along in one call, so it holds QD / 2 to QD of them:
# the stop's line says which, and the rest is checked against that
held=$QD
[ "${PDD_ENGINE:-}" = threads ] && held='[0-9]+'

# nothing has come back from the input while the output is empty
nothing_back() {
	[ "$(stat -c %s "$T/out")" = 0 ] || fail "a request came back already; the device was to be silent ($1)"
}
start() {
	rm -f "$T/out"
	: >"$T/out"
	# pdd itself, not a subshell running the function, is to get the signals
	"$PDD" if="$src" of="$T/out" "${slow[@]}" "$@" "${eng[@]}" 2>"$T/err" &
	pid=$!
}
finish() {
	rc=0
	wait "$pid" || rc=$?
}

# --- the stall line, SIGUSR1 and a SIGINT that waits for what is in flight
start status=progress
wait_for ', no data for [0-9]+ s$' 8
nothing_back "at the stall line"
grep -E ', no data for [0-9]+ s$' "$T/err" | head -1 | grep -qE '^0 bytes copied, 0%, 0.0 kB/s now, ' ||
	{ cat "$T/err"; fail "the stall line is not the progress line"; }
kill -USR1 "$pid"
wait_for '^0\+0 records in$' 2
nothing_back "at SIGUSR1's report"
kill -INT "$pid"
wait_for "^pdd: stopping: waiting for $held requests in flight, nothing back for [0-9]+ s; interrupt again to end at once$" 2
if [ "${PDD_ENGINE:-}" = threads ]; then
	held=$(sed -n 's/^pdd: stopping: waiting for \([0-9]*\) requests in flight.*/\1/p' "$T/err" | head -1)
	[ "$held" -ge $((QD / 2)) ] && [ "$held" -le "$QD" ] || fail "threads: $held reads held at the stop"
fi
nothing_back "at the stop"
finish
expect_rc 130
n=$((held * XFER))
expect_err "pdd: stopped by SIGINT: $n bytes are copied: input below block $held is in output below block $held"
expect_err "$held+0 records out"
cmp -s -n "$n" "$T/back" "$T/out" || fail "the transfers in flight at the stop were not written exactly"
[ "$(stat -c %s "$T/out")" = "$n" ] || fail "the output holds more than the transfers in flight"
resume=$(sed -n 's/^pdd: to resume: //p' "$T/err")
[ -n "$resume" ] || { cat "$T/err"; fail "no resume command"; }
echo "delay_us=0" >"$T/mnt/control"
rc=0
# as printed: it names the engine already
eval "\"\$PDD\" ${resume#pdd }" 2>"$T/err" || rc=$?
expect_rc 0
same_bytes "$T/back" "$T/out"

# --- a second SIGINT ends pdd at once: nothing more is written.  With
# io_uring the reads are the kernel's and pdd is gone while the device is
# still silent.  A worker thread (threads) or a process (aio, whose
# context the kernel tears down at exit) inside a read that the device
# has taken cannot be ended before the device answers: the kernel waits
# out a request that faultfs holds, as it does a disk's.
echo "delay_us=10000000" >"$T/mnt/control"
start
sleep 1.2
kill -INT "$pid"
wait_for '^pdd: stopping: waiting for ' 2
kill -INT "$pid"
if [ "${PDD_ENGINE:-}" = uring ]; then
	for ((i = 0; i < 40; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$pid" 2>/dev/null && fail "a second SIGINT did not end pdd while the device was silent"
	nothing_back "at the second SIGINT"
fi
finish
expect_rc 130
nothing_back "after the second SIGINT"
[ "$(grep -c . "$T/err")" = 1 ] || { cat "$T/err"; fail "pdd said more after the second SIGINT"; }
echo "delay_us=0" >"$T/mnt/control"
