#!/bin/bash
# status=progress, -p, --progress on a device slow enough to show it (a
# loop device over tests/faultfs with a delay on every request, about
# 3 MB/s, so an 8 MiB copy lasts about 2.6 s).  Not on a terminal: one
# line a second in the exact format, bytes and percent rising, no
# carriage returns, then the report.  On a terminal (a tmux pane): the
# line is rewritten in place on one row, and the report, a read error
# and SIGUSR1's report each start on the next row, never appended to it.
# The progress line is the copy loop's, whatever the engine, so two
# engines do: uring (one loop) and threads (worker threads).
# engines: uring threads
. "$(dirname "$0")/../lib.sh"
requires_root
command -v tmux >/dev/null || skip "needs tmux (scripts/install-deps.sh installs it)"
MiB=1048576
SIZE=$((8 * MiB))
lbs=512

"$STAMP" fill "$T/back" 0 "$SIZE" 5
mkfaultfs "$T/back" "$T/mnt" delay_us=10000
ctl=$T/mnt/control
dev=$(mkloop_unmerged "$T/mnt/disk")
slow=(bpt=8 qd=8 threads=8)

P=$PROGRESS_RE		# the progress line with a known total (lib.sh)

# --- not a terminal: one line per update, then the report -----------------
run_pdd if="$dev" of="$T/out" "${slow[@]}" status=progress
expect_rc 0
cmp -s "$T/back" "$T/out" || fail "the copy differs"
! grep -q $'\r' "$T/err" || { cat -A "$T/err"; fail "a carriage return in a file"; }
n=$(progress_lines "$T/err" "$SIZE") || fail "status=progress: progress lines"
[ "$n" -ge 2 ] || { cat "$T/err"; fail "$n progress lines in a copy of 2.6 s"; }
[ "$(wc -l <"$T/err")" = $((n + 3)) ] || { cat "$T/err"; fail "lines other than progress and report"; }
head -n "$n" "$T/err" | grep -vqE "$P" && { cat "$T/err"; fail "the report is not after the progress lines"; }
tail -3 "$T/err" | head -2 | cmp -s - <(printf '16384+0 records in\n16384+0 records out\n') ||
	{ cat "$T/err"; fail "no report after the progress lines"; }
tail -1 "$T/err" | grep -q "^$SIZE bytes (8.4 MB, 8.0 MiB) copied, [0-9.]* s, " ||
	{ cat "$T/err"; fail "no bytes line at the end"; }

# -p and --progress are status=progress; with status=none the progress
# lines are all there is
count=$((4 * MiB / lbs))
run_pdd if="$dev" of="$T/out" "${slow[@]}" count=$count -p
expect_rc 0
n=$(progress_lines "$T/err" $((4 * MiB))) || fail "-p: progress lines"
[ "$(wc -l <"$T/err")" = $((n + 3)) ] || { cat "$T/err"; fail "-p: lines other than progress and report"; }
expect_err "8192+0 records out"
run_pdd if="$dev" of="$T/out" "${slow[@]}" count=$count --progress status=none
expect_rc 0
n=$(progress_lines "$T/err" $((4 * MiB))) || fail "--progress: progress lines"
[ "$(wc -l <"$T/err")" = "$n" ] || { cat "$T/err"; fail "--progress status=none printed more than progress"; }

# --- on a terminal: a tmux pane of 200 x 20 ---------------------------------
# each session on a tmux server of its own, its socket in $T (no one's
# configuration, no one's sessions, and none that is just ending as the
# next one starts), named after $T; each is killed by its name, and its
# server ends with it
sock=$(basename "$T" | tr -c 'A-Za-z0-9_-' _)
tm() { local ses=$1; shift; tmux -S "$T/$ses.sock" -f /dev/null "$@"; }
sessions=()
trap 'for s in "${sessions[@]}"; do tm "$s" kill-session -t "$s" 2>/dev/null; done; cleanup' EXIT

# term.sh PIDFILE RCFILE ARGS...: runs in the pane, pdd's pid and status
# into the files, then keeps the pane for capture-pane
cat >"$T/term.sh" <<'EOF'
pidf=$1 rcf=$2
shift 2
sh -c 'echo $$ >"$0"; exec "$@"' "$pidf" "$@"
echo $? >"$rcf"
sleep 60
EOF

# on_terminal NAME ARGS...: pdd ARGS... in a new session NAME
on_terminal() {
	local ses=$1 cmd
	shift
	printf -v cmd '%q ' bash "$T/term.sh" "$T/$ses.pid" "$T/$ses.rc" "$PDD" "$@" "${eng[@]}"
	tm "$ses" new-session -d -s "$ses" -x 200 -y 20 "$cmd" || fail "tmux cannot start a session"
	sessions+=("$ses")
}
screen() { tm "$1" capture-pane -p -t "$1"; }
end_session() { tm "$1" kill-session -t "$1"; }
# wait_line NAME: until the pane shows a progress line (5 s at most)
wait_line() {
	for _ in $(seq 50); do
		screen "$1" | grep -qE "$P" && return
		sleep 0.1
	done
	screen "$1"; fail "no progress line on the terminal (line ${BASH_LINENO[0]})"
}
# wait_end NAME: until pdd has ended (10 s at most); its status in $rc
wait_end() {
	for _ in $(seq 100); do
		[ -s "$T/$1.rc" ] && { rc=$(cat "$T/$1.rc"); return; }
		sleep 0.1
	done
	screen "$1"; fail "pdd did not end on the terminal (line ${BASH_LINENO[0]})"
}
# row SCREEN: the row of the progress line, which must be the only one
row() {
	local rows
	rows=$(grep -nE "$P" <<<"$1" | cut -d: -f1)
	[ "$(wc -w <<<"$rows")" = 1 ] || { echo "$1" >&2; return 1; }
	echo "$rows"
}
# line SCREEN N: row N of SCREEN
line() { sed -n "$2p" <<<"$1"; }

# the copy: one line, on one row, rewritten in place; the report under it
ses=$sock-copy
rm -f "$T/out"
on_terminal "$ses" if="$dev" of="$T/out" "${slow[@]}" status=progress
wait_line "$ses"
s1=$(screen "$ses")
r=$(row "$s1") || fail "not one progress line on the screen"
# the next update, a second later: the same row, other contents
for _ in $(seq 25); do
	sleep 0.1
	s2=$(screen "$ses")
	[ "$s2" != "$s1" ] && break
done
[ "$(grep -c . <<<"$s2")" = 1 ] || { echo "$s2"; fail "more on the screen than the progress line"; }
[ "$(row "$s2")" = "$r" ] || { echo "$s1"; echo "$s2"; fail "the progress line moved"; }
[ "$(line "$s1" "$r")" != "$(line "$s2" "$r")" ] || { echo "$s2"; fail "the progress line was not updated"; }
wait_end "$ses"
expect_rc 0
s=$(screen "$ses")
r=$(row "$s") || fail "not one progress line on the screen after the copy"
[ "$(line "$s" $((r + 1)))" = "16384+0 records in" ] &&
	[ "$(line "$s" $((r + 2)))" = "16384+0 records out" ] &&
	line "$s" $((r + 3)) | grep -q "^$SIZE bytes (8.4 MB, 8.0 MiB) copied, " ||
	{ echo "$s"; fail "the report is not on the rows under the progress line"; }
cmp -s "$T/back" "$T/out" || fail "the copy on a terminal differs"
end_session "$ses"

# an unreadable block while the line is shown: with coe=1 the message
# comes in the middle of the copy, and starts a row of its own under the
# line, and the line goes on under it
ses=$sock-error
on_terminal "$ses" if="$dev" of="$T/out" "${slow[@]}" count=$((6 * MiB / lbs)) status=progress coe=1
wait_line "$ses"
echo "read=$((5 * MiB))-$((5 * MiB + 1)) delay_us=10000" >"$ctl" || fail "control refused the fault"
wait_end "$ses"
echo "delay_us=10000" >"$ctl"
expect_rc 3
s=$(screen "$ses")
msg="pdd: '$dev': LBA 10240 (512 bytes at byte $((5 * MiB))) cannot be read; writing zeros"
e=$(grep -nxF "$msg" <<<"$s" | cut -d: -f1)
[ -n "$e" ] && [ "$e" -gt 1 ] && line "$s" $((e - 1)) | grep -qE "$P" ||
	{ echo "$s"; fail "the message is not on the row under the progress line"; }
grep -q 'copied, .*pdd:' <<<"$s" && { echo "$s"; fail "a message appended to the progress line"; }
line "$s" $((e + 1)) | grep -qE "$P|^pdd: 1 unreadable block of 512 bytes written as zeros, LBA 10240 to 10240$" ||
	{ echo "$s"; fail "neither the line nor the end of the copy under the message"; }
end_session "$ses"

# SIGUSR1: the report so far under the line, and the copy goes on
ses=$sock-usr1
on_terminal "$ses" if="$dev" of="$T/out" "${slow[@]}" count=$((5 * MiB / lbs)) status=progress
wait_line "$ses"
kill -USR1 "$(cat "$T/$ses.pid")"
wait_end "$ses"
expect_rc 0
s=$(screen "$ses")
r=$(grep -nE "$P" <<<"$s" | head -1 | cut -d: -f1)
line "$s" $((r + 1)) | grep -qE '^[0-9]+\+[01] records in$' ||
	{ echo "$s"; fail "SIGUSR1's report is not on the row under the progress line"; }
[ "$(grep -v '^$' <<<"$s" | tail -3 | head -2)" = $'10240+0 records in\n10240+0 records out' ] ||
	{ echo "$s"; fail "no report at the end after SIGUSR1"; }
end_session "$ses"
echo "progress lines once a second, in place on a terminal, apart from messages"
