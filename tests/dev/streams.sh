#!/bin/bash
# Streams: pipes, FIFOs, stdin and stdout, /dev/null and /dev/zero.  A
# stream is read and written strictly in order whatever the thread count;
# a transfer is filled from a pipe until the input ends, so short reads
# neither lose nor reorder bytes.
. "$(dirname "$0")/../lib.sh"

head -c 3000000 /dev/urandom >"$T/in"

# file -> stdout pipe with many threads and tiny transfers: order kept
pdd if="$T/in" bs=512 bpt=1 threads=16 2>"$T/err" | cmp - "$T/in" >/dev/null ||
	fail "file -> pipe out of order"
expect_err "5859+1 records out"

# stdin pipe -> file, bytes arriving in dribs and drabs
{ head -c 1000 "$T/in"; sleep 0.2; tail -c +1001 "$T/in"; } |
	pdd of="$T/out" bs=1000 bpt=3 threads=8 2>"$T/err" || fail "pipe -> file"
cmp -s "$T/out" "$T/in" || fail "pipe -> file bytes"
expect_err "3000+0 records in"

# skip= on a pipe reads and drops, seek= on a pipe is refused
cat "$T/in" | pdd of="$T/out2" skip=7 count=20 2>"$T/err" || fail "skip on a pipe"
cmp -s "$T/out2" <(head -c $((27 * 512)) "$T/in" | tail -c $((20 * 512))) || fail "skip on a pipe bytes"
pdd if="$T/in" seek=1 2>"$T/err" | cat >/dev/null; rc=${PIPESTATUS[0]}
expect_rc 31
expect_err "pdd: seek=1: 'standard output' is a fifo and cannot seek"
rc=0; head -c 1000 "$T/in" | pdd of="$T/out3" skip=5 2>"$T/err" || rc=$?
expect_rc 0
expect_err "pdd: 'standard input' ended before skip=5: nothing to copy"
expect_err "0+0 records in"

# named FIFOs on both sides
mkfifo "$T/fin" "$T/fout"
cat "$T/in" >"$T/fin" &
cat "$T/fout" >"$T/out4" &
run_pdd if="$T/fin" of="$T/fout" threads=4 bs=4096 bpt=2
wait
expect_rc 0
cmp -s "$T/out4" "$T/in" || fail "fifo -> fifo"
expect_err "732+1 records in"

# /dev/zero needs count=; /dev/null and '.' swallow everything
run_pdd if=/dev/zero of="$T/z" bs=4096 count=300 threads=3
expect_rc 0
cmp -s "$T/z" <(head -c $((300 * 4096)) /dev/zero) || fail "/dev/zero copy"
run_pdd if=/dev/zero of="$T/z"
expect_rc 31
expect_err "pdd: '/dev/zero' never ends: give count="
for sink in /dev/null .; do
	run_pdd if="$T/in" of="$sink" bs=4096
	expect_rc 0
	expect_err "732+1 records out"
done
run_pdd if=/dev/null of="$T/empty"
expect_rc 0
expect_err "0+0 records in"
[ -e "$T/empty" ] && [ ! -s "$T/empty" ] || fail "empty copy"
echo "streams in order"
