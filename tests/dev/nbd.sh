#!/bin/bash
# NBD sides against real servers on Unix sockets in the test's own
# directory: nbdkit's file plugin (an export over a file this test can
# compare) and qemu-nbd.  Copies from and to an export are byte-identical
# with what nbdcopy copies, with skip/seek/count; a read-only export is
# refused as the output before anything is written.  Each server is
# started with a pid file and stopped by that pid.
# engines: uring
. "$(dirname "$0")/../lib.sh"
"$PDD" --version | grep -q '^engines:.* nbd' || skip "this pdd is built without libnbd"
command -v nbdkit >/dev/null || skip "no nbdkit (package nbdkit)"
command -v nbdcopy >/dev/null || skip "no nbdcopy (package libnbd-bin)"

MiB=1048576
"$STAMP" fill "$T/src" 0 $((8 * MiB)) 13
cp "$T/src" "$T/disk"
serve a file "$T/disk"

# the dry run names the export, its block sizes and what it can do
"$PDD" if="$(uri a)" of="$T/out" --dry-run >"$T/plan" 2>"$T/err" || fail "dry run failed: $(cat "$T/err")"
grep -qxF "  input   '$(uri a)': NBD export, $((8 * MiB)) bytes (8.4 MB, 8.0 MiB)" "$T/plan" ||
	fail "dry run: the export's line: $(cat "$T/plan")"
grep -qx "          logical block 512, physical block 4096, largest transfer 33554432, 2 connections" "$T/plan" ||
	fail "dry run: the block sizes: $(cat "$T/plan")"
grep -qx "          export '', multi-conn, flush, FUA, zero, trim, base:allocation" "$T/plan" ||
	fail "dry run: what the export can do: $(cat "$T/plan")"
grep -q "^  using   engine=nbd for the input and uring for the output, " "$T/plan" ||
	fail "dry run: the engines: $(cat "$T/plan")"
[ ! -e "$T/out" ] || fail "the dry run created the output"

# from the export to a file: what nbdcopy copies
run_pdd if="$(uri a)" of="$T/out"
expect_rc 0
expect_err "16384+0 records out"
nbdcopy "$(uri a)" "$T/ref" || fail "nbdcopy failed"
same_bytes "$T/ref" "$T/out"
same_bytes "$T/src" "$T/out"

# to the export, from a file, with skip, seek and count
"$STAMP" fill "$T/src2" 0 $((8 * MiB)) 14
run_pdd if="$T/src2" of="$(uri a)" bs=4096 skip=3 seek=5 count=1000
expect_rc 0
expect_err "1000+0 records out"
cmp -s -i $((3 * 4096)):$((5 * 4096)) -n $((1000 * 4096)) "$T/src2" "$T/disk" ||
	fail "the range written to the export differs"
cmp -s -n $((5 * 4096)) "$T/src" "$T/disk" || fail "bytes before seek= changed"

# over TCP, with an export name in the URI (nbdkit serves any name)
serve_tcp tcp file "$T/disk"
"$PDD" if="nbd://127.0.0.1:$port/sdb" of="$T/out" --dry-run >"$T/plan" 2>"$T/err" ||
	fail "dry run over TCP failed: $(cat "$T/err")"
grep -qx "          export 'sdb', multi-conn, flush, FUA, zero, trim, base:allocation" "$T/plan" ||
	fail "dry run over TCP: the export: $(cat "$T/plan")"
run_pdd if="nbd://127.0.0.1:$port/sdb" of="$T/out3"
expect_rc 0
same_bytes "$T/disk" "$T/out3"

# nbds:// never falls back to plain text: a server without TLS is refused
# before anything is read or written
rm -f "$T/out4"
run_pdd if="nbds+unix:///?socket=$T/a.sock" of="$T/out4"
expect_rc 15
grep -q "^pdd: cannot connect to 'nbds+unix:///?socket=$T/a.sock': .*TLS" "$T/err" ||
	fail "nbds:// to a server without TLS: $(cat "$T/err")"
[ ! -e "$T/out4" ] || fail "nbds:// to a server without TLS created the output"

# a server that takes the connection and says nothing: SIGTERM ends the
# wait (libnbd's own wait would go on through signals), nothing created
serve mute --filter=delay file "$T/src" delay-open=30
rm -f "$T/out5"
"$PDD" if="$(uri mute)" of="$T/out5" 2>"$T/err" &
p=$!
sleep 1
kill -TERM "$p"
wait "$p"
rc=$?
expect_rc 143
expect_err "pdd: stopped while connecting to '$(uri mute)'"
[ ! -e "$T/out5" ] || fail "stopped while connecting, the output was created"
stop_server mute

# a read-only export is refused as the output, and nothing is written
cp "$T/src" "$T/ro"
serve ro file "$T/ro" --readonly
run_pdd if="$T/src2" of="$(uri ro)"
expect_rc 80
expect_err "pdd: '$(uri ro)' is a read-only export: it cannot be the output"
same_bytes "$T/src" "$T/ro"

# timeout=: a server that does not answer within it ends the copy, with
# the request it waits for named, and the status of a timeout
serve slow --filter=delay file "$T/src" rdelay=10
run_pdd if="$(uri slow)" of="$T/out2" bs=4096 bpt=16 qd=4 timeout=1
expect_rc 33
expect_err "pdd: '$(uri slow)': no answer to a read at byte 0 for 1 s (timeout=1)"
expect_err "pdd: copy failed: engine nbd of the input '$(uri slow)': Connection timed out"

# timeout= against a server that is frozen (SIGSTOP) mid-copy, as the
# output and as the input: pdd ends (it does not wait for the server to
# say goodbye), and reports nothing as flushed.  A server of its own for
# each: nbdkit may end when it wakes to find its client gone.
"$STAMP" fill "$T/big" 0 $((64 * MiB)) 15
for dir in out in; do
	cp "$T/big" "$T/bigdisk$dir"
	serve "frozen$dir" --filter=delay file "$T/bigdisk$dir" rdelay=10ms wdelay=10ms
	fp=$(cat "$T/frozen$dir.pid")
	if [ $dir = out ]; then
		set -- if="$T/big" of="$(uri "frozen$dir")"
	else
		set -- if="$(uri "frozen$dir")" of="$T/out6"
	fi
	(sleep 0.5; kill -STOP "$fp") &
	rc=0
	timeout -s KILL 30 "$PDD" "$@" bs=65536 bpt=1 qd=4 timeout=2 "${eng[@]}" 2>"$T/err" || rc=$?
	wait
	kill -CONT "$fp"
	expect_rc 33
	grep -q "^pdd: '$(uri "frozen$dir")': no answer to a $([ $dir = out ] && echo write || echo read) at byte [0-9]* for 2 s (timeout=2)\$" "$T/err" ||
		fail "frozen server ($dir): $(cat "$T/err")"
	if [ $dir = out ]; then
		expect_err "pdd: '$(uri "frozen$dir")' is not flushed: the server failed or stopped answering"
		grep -q "may not be on stable storage" "$T/err" || fail "frozen output: unflushed bytes reported as copied: $(cat "$T/err")"
		grep -q "^pdd: to resume" "$T/err" && fail "frozen output: a resume command past unflushed writes"
	fi
	stop_server "frozen$dir"
done

echo "NBD sides copy exactly"
