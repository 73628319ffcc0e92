#!/bin/bash
# Signals at random moments, on a device slow enough to be caught in the
# middle (a loop device over tests/faultfs with a delay on every request):
# SIGINT or SIGTERM stops the copy with 130 or 143, the report, the done
# mark and the command that resumes; everything below the done mark is
# the source's; rerunning the printed command (again interrupted, now and
# then) ends with an output byte-identical to the source.  SIG_RUNS
# (default 20) interrupted copies per engine; then SIG_MAP_RUNS (default
# 8) more with map=, resumed from the map (below).  Also: SIGUSR1 reports
# and the copy goes on; a second SIGINT ends pdd at once.
. "$(dirname "$0")/../lib.sh"
requires_root
RUNS=${SIG_RUNS:-20}
MiB=1048576
SIZE=$((4 * MiB))
lbs=512

"$STAMP" fill "$T/back" 0 "$SIZE" 5
mkfaultfs "$T/back" "$T/mnt" delay_us=5000
dev=$(mkloop_unmerged "$T/mnt/disk")
slow=(bpt=8 qd=8 threads=8)

# interrupt SIG SECS ARGS...: pdd ARGS... in the background (the binary
# itself, so that the signal is pdd's), SIG after SECS; status in $rc,
# stderr in $T/err
interrupt() {
	local sig=$1 secs=$2 pid
	shift 2
	"$PDD" "$@" 2>"$T/err" &
	pid=$!
	# with WAIT_FOR set, the moment counts from when that file exists
	# (pdd writes its map before the first read): a signal before pdd
	# has even set its handlers would leave no map, rightly
	if [ -n "${WAIT_FOR:-}" ]; then
		for _ in $(seq 250); do
			[ -e "$WAIT_FOR" ] || ! kill -0 "$pid" 2>/dev/null && break
			sleep 0.02
		done
	fi
	sleep "$secs"
	kill -"$sig" "$pid" 2>/dev/null
	rc=0
	wait "$pid" || rc=$?
}

# the done mark of the last run, in blocks of the output
done_mark() { sed -n 's/.* is in output below block \([0-9]*\)$/\1/p' "$T/err" | tail -1; }

stopped=0
for run in $(seq "$RUNS"); do
	pick INT TERM; sig=$picked
	secs=0.$(printf '%03d' $((20 + RANDOM % 580)))
	rm -f "$T/out"
	interrupt "$sig" "$secs" if="$dev" of="$T/out" "${slow[@]}" "${eng[@]}"
	case $sig in INT) want=130 ;; TERM) want=143 ;; esac
	if [ "$rc" = 0 ]; then
		cmp -s "$T/back" "$T/out" || fail "run $run finished before SIG$sig but differs"
		continue
	fi
	[ "$rc" = "$want" ] || { cat "$T/err"; fail "run $run: SIG$sig gave status $rc, not $want"; }
	stopped=$((stopped + 1))
	grep -q "^pdd: stopped by SIG$sig: " "$T/err" || { cat "$T/err"; fail "run $run: no stop line (rc $rc)"; }
	mark=$(done_mark)
	[ -n "$mark" ] || { cat "$T/err"; fail "run $run: no done mark"; }
	cmp -s -n $((mark * 512)) "$T/back" "$T/out" || fail "run $run: output below block $mark differs"
	# resume with the printed command, perhaps interrupted again
	for again in 1 2 3; do
		cmd=$(sed -n 's/^pdd: to resume: pdd //p' "$T/err")
		# a resumed copy interrupted just after its last write has
		# nothing left to resume: its done mark is the end
		if [ -z "$cmd" ] && [ "$again" -gt 1 ] && [ "$(done_mark)" = $((SIZE / lbs)) ]; then
			rc=0
			break
		fi
		[ -n "$cmd" ] || { cat "$T/err"; fail "run $run: no resume command"; }
		eval "set -- $cmd"
		if [ "$again" = 1 ] && [ $((RANDOM % 3)) = 0 ]; then
			interrupt INT 0.1 "$@"	# the command names the engine
			[ "$rc" = 130 ] && continue
		else
			rc=0
			"$PDD" "$@" 2>"$T/err" || rc=$?
		fi
		break
	done
	[ "$rc" = 0 ] || { cat "$T/err"; fail "run $run: the resumed copy failed ($rc)"; }
	cmp -s "$T/back" "$T/out" || fail "run $run: stopped at block $mark, resumed, and differs"
done
echo "$stopped of $RUNS copies stopped by a signal and resumed exactly"
[ "$stopped" -ge $((RUNS / 2)) ] || fail "too few copies were caught in flight ($stopped)"

# With map=: SIGINT, SIGTERM or even SIGKILL at a random moment; the map
# on disk (saved every second, and at a clean stop) never claims a byte
# the output does not hold, and rerunning the same command copies exactly
# what the map does not mark finished, to a byte-identical output.
# SIG_MAP_RUNS (default 8) per engine, on a copy of about 2.5 seconds.
map_slow=(bpt=8 qd=2 threads=2 map_interval=1)
plus_lines() { grep -v '^#' "$1" | tail -n +2 | while read -r pos size st; do
	[ "$st" = + ] && echo "$((pos)) $((size))"; done; }
mapped=0
for run in $(seq "${SIG_MAP_RUNS:-8}"); do
	pick INT TERM KILL; sig=$picked
	secs=$((RANDOM % 3)).$(printf '%03d' $((RANDOM % 1000)))
	rm -f "$T/out" "$T/map" "$T/map.bak"
	WAIT_FOR=$T/map interrupt "$sig" "$secs" if="$dev" of="$T/out" map="$T/map" "${map_slow[@]}" "${eng[@]}"
	case $sig in INT) want=130 ;; TERM) want=143 ;; KILL) want=137 ;; esac
	if [ "$rc" = 0 ]; then
		cmp -s "$T/back" "$T/out" || fail "map run $run finished before SIG$sig but differs"
		continue
	fi
	[ "$rc" = "$want" ] || { cat "$T/err"; fail "map run $run: SIG$sig gave status $rc, not $want"; }
	mapped=$((mapped + 1))
	done_bytes=0
	if [ -e "$T/map" ]; then
		ddrescuelog -t "$T/map" >/dev/null 2>&1 || fail "map run $run: ddrescuelog refuses the map"
		while read -r pos size; do
			cmp -s -n "$size" -i "$pos:$pos" "$T/back" "$T/out" ||
				fail "map run $run: the map marks $size bytes at $pos finished, but the output differs"
			done_bytes=$((done_bytes + size))
		done < <(plus_lines "$T/map")
	elif [ "$sig" != KILL ]; then
		fail "map run $run: SIG$sig and no map saved"
	fi
	if [ "$sig" != KILL ]; then
		expect_err "pdd: to resume: pdd if=$dev of=$T/out map=$T/map ${map_slow[*]} ${eng[*]}"
	fi
	rc=0
	"$PDD" if="$dev" of="$T/out" map="$T/map" "${map_slow[@]}" "${eng[@]}" 2>"$T/err" || rc=$?
	expect_rc 0
	expect_err "$(((SIZE - done_bytes) / 512))+0 records out"
	cmp -s "$T/back" "$T/out" || fail "map run $run: stopped by SIG$sig, resumed, and differs"
done
echo "$mapped of ${SIG_MAP_RUNS:-8} copies with a map stopped by a signal and resumed exactly"

# SIGUSR1: the report so far, and the copy goes on
rm -f "$T/out"
interrupt USR1 0.2 if="$dev" of="$T/out" "${slow[@]}" "${eng[@]}"
expect_rc 0
[ "$(grep -c ' records out$' "$T/err")" = 2 ] || { cat "$T/err"; fail "SIGUSR1 printed no report"; }
cmp -s "$T/back" "$T/out" || fail "the copy after SIGUSR1 differs"

# two SIGINTs: the second does not wait for the transfers in flight
rm -f "$T/out"
"$PDD" if="$dev" of="$T/out" "${slow[@]}" "${eng[@]}" 2>"$T/err" &
pid=$!
sleep 0.2
kill -INT "$pid"
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
expect_rc 130
echo "signals stop, report and resume exactly"
