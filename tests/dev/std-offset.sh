#!/bin/bash
# A standard input or output that is a regular file or a device starts
# where the shell left it, as in dd: skip= and seek= count from there,
# the report and the resume command count from there, and pdd leaves the
# offset just past what it copied, for the next command.
. "$(dirname "$0")/../lib.sh"
requires_root
lbs=512

head -c 300000 /dev/urandom >"$T/src"

# output: after what the shell wrote first, and before what it writes next
{ printf HEADER; pdd if="$T/src" bs=1000 status=none; printf TRAILER; } >"$T/out" ||
	fail "pdd to a redirected stdout failed"
{ printf HEADER; cat "$T/src"; printf TRAILER; } >"$T/want"
same_bytes "$T/want" "$T/out"

# with seek=: counted from where the shell left it
{ printf HEADER; pdd if="$T/src" bs=100 seek=2 count=5 status=none; } >"$T/out" || fail "seek="
{ printf HEADER; head -c 200 /dev/zero; head -c 500 "$T/src"; } >"$T/want"
same_bytes "$T/want" "$T/out"

# input: after what the shell read first, and the rest for the next one
rm -f "$T/out"
{ dd bs=1000 count=1 of=/dev/null status=none; pdd of="$T/out" status=none; cat >"$T/rest"; } <"$T/src" ||
	fail "pdd from a redirected stdin failed"
tail -c +1001 "$T/src" >"$T/want"
same_bytes "$T/want" "$T/out"
[ ! -s "$T/rest" ] || fail "standard input was not left at the end of what pdd copied"

# skip= and count= from there; the next command goes on after the copy
rm -f "$T/out"
{ dd bs=1000 count=1 of=/dev/null status=none; pdd of="$T/out" bs=100 skip=3 count=4 status=none; cat >"$T/rest"; } <"$T/src" ||
	fail "skip= on a redirected stdin"
tail -c +1301 "$T/src" | head -c 400 >"$T/want"
same_bytes "$T/want" "$T/out"
tail -c +1701 "$T/src" >"$T/want"
same_bytes "$T/want" "$T/rest"

# a device as standard input, read with direct I/O, with a bad sector:
# the report and the resume command count from where the shell left it,
# and the resume command, run the same way, finishes the copy
"$STAMP" fill "$T/back" 0 $((2 * 1048576)) 3
mkfaultfs "$T/back" "$T/mnt" "read=$((100 * lbs))-$((101 * lbs))"
dev=$(mkloop_unmerged "$T/mnt/disk")
rm -f "$T/out"
rc=0
{ dd bs=4096 count=1 of=/dev/null status=none; pdd of="$T/out" bpt=8 2>"$T/err"; } <"$dev" || rc=$?
expect_rc 3
expect_err "pdd: error reading 'standard input' at block 88: Input/output error"
expect_err "pdd: 45056 bytes are copied: input below block 88 is in output below block 88"
resume=$(sed -n 's/^pdd: to resume: pdd //p' "$T/err")
expect_err "pdd: to resume: pdd of=$T/out bpt=8${PDD_ENGINE:+ engine=$PDD_ENGINE} bs=512 skip=88 seek=88 count=4000"
echo "" >"$T/mnt/control"	# the sector reads again
# shellcheck disable=SC2086
{ dd bs=4096 count=1 of=/dev/null status=none; "$PDD" $resume 2>"$T/err"; } <"$dev" ||
	{ cat "$T/err"; fail "the resume command failed"; }
tail -c +4097 "$T/back" >"$T/want"
same_bytes "$T/want" "$T/out"

# the JSON report counts the same way
rm -f "$T/out"
echo "read=$((100 * lbs))-$((101 * lbs))" >"$T/mnt/control"
{ dd bs=4096 count=1 of=/dev/null status=none; pdd of="$T/out" bpt=8 status=json >"$T/json" 2>/dev/null; } <"$dev"
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; assert e["op"]=="read" and e["block"]==88, e' "$T/json" ||
	fail "the JSON error block does not count from where standard input was left"
echo "" >"$T/mnt/control"

# so do verify's block numbers: block 3 after a 1 KiB header
head -c 8192 /dev/urandom >"$T/vs"
{ head -c 1024 /dev/zero; cat "$T/vs"; } >"$T/vout"
printf X | dd of="$T/vout" bs=1 seek=$((1024 + 3 * 512 + 7)) conv=notrunc status=none
rc=0
{ head -c 1024 /dev/zero; pdd if="$T/vs" verify=only 2>"$T/err"; } 1<>"$T/vout" || rc=$?
expect_rc 14
grep -q "differs: block 3 of 'standard output'" "$T/err" || { cat "$T/err"; fail "verify's block does not count from where standard output was left"; }

# a dry run whose output is standard output prints its plan on standard
# error, never into the output
rm -f "$T/out"
rc=0
pdd --dry-run if="$T/src" >"$T/out" 2>"$T/err" || rc=$?
expect_rc 0
[ ! -s "$T/out" ] || fail "the dry run wrote its plan into the output"
expect_err "pdd: dry run, nothing is copied"

# the dry run says where it starts
rc=0
{ dd bs=4096 count=1 of=/dev/null status=none; pdd of="$T/out" --dry-run >"$T/plan" 2>"$T/err"; } <"$dev" || rc=$?
expect_rc 0
grep -qxF "          left at byte 4096 by the shell: blocks count from there" "$T/plan" ||
	{ cat "$T/plan"; fail "the dry run does not say where standard input starts"; }
grep -qxF "          input  from block 0 (byte 4096) to block 4087 (byte 2097151)" "$T/plan" ||
	{ cat "$T/plan"; fail "the dry run's input range"; }

# a direct device left inside a logical block cannot be read from there
rc=0
rm -f "$T/out"
{ dd bs=1000 count=1 of=/dev/null status=none; pdd of="$T/out" 2>"$T/err"; } <"$dev" || rc=$?
expect_rc 31
expect_err "pdd: 'standard input' starts at byte 1000, which is not a multiple of its logical block size 512"
echo "standard input and output start where the shell left them"
