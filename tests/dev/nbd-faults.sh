#!/bin/bash
# NBD sides that fail, against nbdkit servers on Unix sockets in the
# test's own directory: a server that dies in the middle of a copy (as the
# input and as the output, with map=), error replies to reads (EIO), to
# writes (EIO, ENOSPC, EPERM) and to flushes, coe=1 on an export with
# unreadable blocks, SIGINT in the middle of a copy, and servers that
# stop answering, with and without timeout=.  pdd's lines and statuses
# are asserted exactly; what it reports done is checked against what the
# export or output holds; reruns and printed resume commands end
# byte-identical without copying again what was done.  Where a local
# file can fail with the same errno (tests/faultfs for EIO, a full tmpfs
# for ENOSPC, a sealed memfd for EPERM; root only), it must give the same
# lines and status.
# engines: uring
. "$(dirname "$0")/../lib.sh"
"$PDD" --version | grep -q '^engines:.* nbd' || skip "this pdd is built without libnbd"
command -v nbdkit >/dev/null || skip "no nbdkit (package nbdkit)"
for f in delay error ddrescue; do
	nbdkit --filter="$f" null --version >/dev/null 2>&1 || skip "no nbdkit $f filter"
done
nbdkit eval --version >/dev/null 2>&1 || skip "no nbdkit eval plugin"

MiB=1048576
SIZE=$((8 * MiB))
lbs=512
"$STAMP" fill "$T/src" 0 "$SIZE" 21

# the local comparisons mount things
local_ok=
if [ "$(id -u)" = 0 ] && [ -x "$FAULTFS" ] && [ -e /dev/fuse ]; then
	local_ok=1
else
	echo "note: not root, or no tests/faultfs: no comparisons with local files"
fi

pid=

# err_num PREFIX SUFFIX: the line "PREFIX<N>SUFFIX" must be in $T/err,
# exactly so (no regular expression: URIs hold ? and .); N in $num
err_num() {
	local line
	while IFS= read -r line; do
		case $line in
		"$1"*"$2")
			num=${line#"$1"}
			num=${num%"$2"}
			[[ $num =~ ^[0-9]+$ ]] && return 0 ;;
		esac
	done <"$T/err"
	echo "--- stderr:"
	cat "$T/err"
	fail "no line '$1N$2' (line ${BASH_LINENO[0]})"
}

# map_done MAP DST: every range the map marks finished holds the source's
# bytes in DST; the number of finished bytes in $done_bytes
map_done() {
	local pos size st
	done_bytes=0
	while read -r pos size st; do
		[ "$st" = + ] || continue
		cmp -s -n $((size)) -i $((pos)):$((pos)) "$T/src" "$2" ||
			fail "the map marks $((size)) bytes at $((pos)) finished, but $2 differs there (line ${BASH_LINENO[0]})"
		done_bytes=$((done_bytes + size))
	done < <(grep -v '^#' "$1" | tail -n +2)
}

# restart NAME ARGS...: the server NAME again, on the same socket (nbdkit
# leaves its socket behind when it is stopped)
restart() {
	local name=$1
	shift
	rm -f "$T/$name.sock"
	serve "$name" "$@"
}

# --- 1. A server that dies in the middle of a copy with map=.  Each
# request waits 20 ms in the server, two at a time, so that the copy takes
# about 5 s; the server is stopped once the map (saved every second)
# marks something finished, and the pending requests fail with the
# server's ESHUTDOWN: a file error (15), not a medium error.  What the map
# marks finished is in the output; the same command against the server
# started again copies only the rest, to a byte-identical output.
slow=(bs=4096 bpt=4 qd=2 conns=1 map_interval=1)
truncate -s "$SIZE" "$T/disk"
for side in input output; do
	rm -f "$T/out" "$T/map" "$T/map.bak"
	if [ "$side" = input ]; then
		srv=(file "$T/src")
		restart die --filter=delay "${srv[@]}" rdelay=20ms
		args=(if="$(uri die)" of="$T/out")
		dst=$T/out
		what=reading
	else
		srv=(file "$T/disk")
		restart die --filter=delay "${srv[@]}" wdelay=20ms
		args=(if="$T/src" of="$(uri die)")
		dst=$T/disk
		what=writing
	fi
	args+=(map="$T/map" "${slow[@]}" "${eng[@]}")
	"$PDD" "${args[@]}" 2>"$T/err" &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		grep -q '^0x[0-9A-F]*  0x[0-9A-F]*  +$' "$T/map" 2>/dev/null && break
		sleep 0.05
	done
	[ "$i" -lt 100 ] || fail "$side: the map marked nothing finished within 5 s"
	stop_server die
	rc=0
	wait "$pid" || rc=$?
	expect_rc 15
	err_num "pdd: error $what '$(uri die)' at block " ": Cannot send after transport endpoint shutdown"
	n=$num
	expect_err "pdd: $((n * 4096)) bytes are copied; the map '$T/map' records what is done"
	expect_err "$n+0 records out"
	cmp -s -n $((n * 4096)) "$T/src" "$dst" || fail "$side: the $((n * 4096)) bytes reported copied are not the source's"
	map_done "$T/map" "$dst"
	[ "$done_bytes" -gt 0 ] || fail "$side: the map marks nothing finished"
	# what the last save flushed is marked; the output's flush failed
	# with its server, so there what came after the last save is not
	if [ "$side" = input ]; then
		[ "$done_bytes" = $((n * 4096)) ] || fail "input: the map marks $done_bytes bytes finished, not the $((n * 4096)) copied"
	else
		[ "$done_bytes" -le $((n * 4096)) ] || fail "output: the map marks $done_bytes bytes finished, more than the $((n * 4096)) copied"
	fi
	# the same command, the server back (without its delay)
	restart die "${srv[@]}"
	rc=0
	"$PDD" "${args[@]}" 2>"$T/err" || rc=$?
	expect_rc 0
	expect_err "$(((SIZE - done_bytes) / 4096))+0 records out"
	same_bytes "$T/src" "$dst"
	stop_server die
done

# --- 2. Error replies.  Reads: every read fails (the error filter), or
# those that touch 5 unreadable blocks, 2046 to 2050, across the boundary
# of the 16th and 17th transfers (the ddrescue filter: a request that
# touches a block its map does not mark finished fails with EIO, as
# tests/faultfs does locally).  Without coe the copy stops at the failing
# transfer with everything below it written, status 3.
serve rerr --filter=error file "$T/src" error-pread=EIO error-pread-rate=1
rm -f "$T/out"
run_pdd if="$(uri rerr)" of="$T/out"
expect_rc 3
expect_err "pdd: error reading '$(uri rerr)' at block 0: Input/output error"
expect_err "pdd: 0 bytes are copied: input below block 0 is in output below block 0"
expect_err "0+0 records out"
[ "$(stat -c %s "$T/out")" = 0 ] || fail "the output holds bytes no read gave"

BAD_POS=$((2046 * 512))
BAD_LEN=$((5 * 512))
printf '# Mapfile\n0x0 +\n0x0 0x%X +\n0x%X 0x%X -\n0x%X 0x%X +\n' "$BAD_POS" \
	"$BAD_POS" "$BAD_LEN" $((BAD_POS + BAD_LEN)) $((SIZE - BAD_POS - BAD_LEN)) >"$T/bad.map"
serve bad --filter=ddrescue file "$T/src" ddrescue-mapfile="$T/bad.map"
if [ -n "$local_ok" ]; then
	cp "$T/src" "$T/rback"
	mkfaultfs "$T/rback" "$T/fr" "read=$BAD_POS-$((BAD_POS + BAD_LEN))"
fi

# read_stops NAME: without coe, the copy from NAME stops at block 1920
read_stops() {
	rm -f "$T/out"
	run_pdd if="$1" of="$T/out"
	expect_rc 3
	expect_err "pdd: error reading '$1' at block 1920: Input/output error"
	expect_err "pdd: 983040 bytes are copied: input below block 1920 is in output below block 1920"
	expect_err "1920+0 records out"
	[ "$(stat -c %s "$T/out")" = 983040 ] || fail "$1: the output is not the 1920 blocks reported"
	stamped "$T/out" 0 1920 21 0
}
read_stops "$(uri bad)"
[ -n "$local_ok" ] && read_stops "$T/fr/disk"

# Writes: an export whose writes fail at and above 3 MiB (a write that
# reaches past it fails whole, as an NBD write does) with the errno named
# in $T/werr (none when it is empty), and whose flush fails with EIO
# while $T/ferr exists (and answers only after 10 s while $T/fstall
# does).  EIO is status 3, ENOSPC and EPERM are file errors (15); the
# export holds the source below the block named, and nothing above it.
LIM=$((3 * MiB))
truncate -s "$SIZE" "$T/wdisk"
: >"$T/werr"
serve w eval \
	get_size="stat -Lc %s $T/wdisk" \
	pread="dd if=$T/wdisk skip=\$4 count=\$3 iflag=count_bytes,skip_bytes status=none" \
	pwrite="e=\$(cat $T/werr); if [ -n \"\$e\" ] && [ \$((\$4 + \$3)) -gt $LIM ]; then cat >/dev/null; echo \"\$e injected\" >&2; exit 1; fi; exec dd of=$T/wdisk seek=\$4 conv=notrunc oflag=seek_bytes status=none" \
	flush="if [ -e $T/ferr ]; then echo 'EIO injected' >&2; exit 1; fi; if [ -e $T/fstall ]; then sleep 10; fi"

# write_stops NAME MESSAGE STATUS: the copy to NAME stopped at block 6144
write_stops() {
	expect_rc "$3"
	expect_err "pdd: error writing '$1' at block 6144: $2"
	expect_err "pdd: 3145728 bytes are copied: input below block 6144 is in output below block 6144"
	expect_err "6144+0 records out"
}
for e in EIO:"Input/output error":3 ENOSPC:"No space left on device":15 EPERM:"Operation not permitted":15; do
	IFS=: read -r errno msg status <<<"$e"
	echo "$errno" >"$T/werr"
	truncate -s 0 "$T/wdisk"
	truncate -s "$SIZE" "$T/wdisk"
	run_pdd if="$T/src" of="$(uri w)"
	write_stops "$(uri w)" "$msg" "$status"
	stamped "$T/wdisk" 0 6144 21 0
	zeros "$T/wdisk" 6144 $((SIZE / lbs - 6144))
done

# with map=: the map marks finished what was written and nothing more,
# and once the export takes writes again the same command copies the
# rest
echo ENOSPC >"$T/werr"
truncate -s 0 "$T/wdisk"
truncate -s "$SIZE" "$T/wdisk"
rm -f "$T/map" "$T/map.bak"
run_pdd if="$T/src" of="$(uri w)" map="$T/map"
expect_rc 15
expect_err "pdd: error writing '$(uri w)' at block 6144: No space left on device"
expect_err "pdd: 3145728 bytes are copied; the map '$T/map' records what is done"
map_done "$T/map" "$T/wdisk"
[ "$done_bytes" = "$LIM" ] || fail "after ENOSPC the map marks $done_bytes bytes finished, not $LIM"
: >"$T/werr"
run_pdd if="$T/src" of="$(uri w)" map="$T/map"
expect_rc 0
expect_err "10240+0 records out"
same_bytes "$T/src" "$T/wdisk"

# a flush that fails: everything was written, nothing is durable, and a
# map marks nothing finished; said once, as for a local output
touch "$T/ferr"
run_pdd if="$T/src" of="$(uri w)"
expect_rc 3
expect_err "pdd: error flushing '$(uri w)': Input/output error"
expect_err "pdd: the 8388608 bytes written may not be on stable storage"
expect_err "16384+0 records out"
[ "$(grep -c "$(uri w)" "$T/err")" = 1 ] || { cat "$T/err"; fail "the failed flush is said more than once"; }
rm -f "$T/map" "$T/map.bak"
run_pdd if="$T/src" of="$(uri w)" map="$T/map"
expect_rc 3
expect_err "pdd: error flushing '$(uri w)': Input/output error"
expect_err "pdd: the map '$T/map' marks nothing finished that was written since it was last saved"
map_done "$T/map" "$T/wdisk"
[ "$done_bytes" = 0 ] || fail "after a failed flush the map marks $done_bytes bytes finished"
rm -f "$T/ferr"

# the same errnos from local files, at the same place: EIO from faultfs,
# ENOSPC from a 3 MiB tmpfs (one write at a time, so that none above the
# limit takes the last pages first), EPERM from a memfd sealed against
# growing past 3 MiB
if [ -n "$local_ok" ]; then
	truncate -s "$SIZE" "$T/wback"
	mkfaultfs "$T/wback" "$T/fw" "write=$LIM-$SIZE"
	run_pdd if="$T/src" of="$T/fw/disk"
	write_stops "$T/fw/disk" "Input/output error" 3
	stamped "$T/wback" 0 6144 21 0
	mktmpfs "$T/tm" 3m
	run_pdd if="$T/src" of="$T/tm/out" qd=1
	write_stops "$T/tm/out" "No space left on device" 15
	stamped "$T/tm/out" 0 6144 21 0
	if command -v python3 >/dev/null; then
		rc=0
		python3 - "$T/memfd" "$PDD" if="$T/src" "${eng[@]}" 2>"$T/err" <<-EOF || rc=$?
		import fcntl, os, subprocess, sys
		fd = os.memfd_create("sealed", os.MFD_ALLOW_SEALING)
		os.ftruncate(fd, $LIM)
		fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_GROW)
		os.dup2(fd, 9)
		rc = subprocess.run(sys.argv[2:] + ["of=/dev/fd/9"], pass_fds=(9,)).returncode
		with open(sys.argv[1], "wb") as f:
		    f.write(os.pread(9, $LIM, 0))
		sys.exit(rc)
		EOF
		write_stops /dev/fd/9 "Operation not permitted" 15
		stamped "$T/memfd" 0 6144 21 0
	else
		echo "note: no python3: no local EPERM"
	fi
fi

# --- 3. coe=1 on the export with the 5 unreadable blocks: each failed
# transfer is read again block by block, the good blocks arrive, the bad
# ones are zero-filled and named, status 3; the same as from a local file
# with the same bad blocks, to the byte.  With map= the bad blocks are
# marked bad, and a rerun against the healthy export copies just those.
coe_fills() {
	local b
	rm -f "$T/out" "$T/map" "$T/map.bak"
	run_pdd if="$1" of="$T/out" coe=1 "${@:2}"
	expect_rc 3
	for b in 2046 2047 2048 2049 2050; do
		expect_err "pdd: '$1': LBA $b (512 bytes at byte $((b * 512))) cannot be read; writing zeros"
	done
	[ "$(grep -c 'cannot be read; writing zeros$' "$T/err")" = 5 ] || { cat "$T/err"; fail "$1: more blocks than the bad ones were zero-filled"; }
	expect_err "pdd: 5 unreadable blocks of 512 bytes written as zeros, LBA 2046 to 2050"
	expect_err "16384+0 records out"
	stamped "$T/out" 0 2046 21 0
	zeros "$T/out" 2046 5
	stamped "$T/out" 2051 $((16384 - 2051)) 21 2051
}
if [ -n "$local_ok" ]; then
	coe_fills "$T/fr/disk"
	mv "$T/out" "$T/out.local"
fi
coe_fills "$(uri bad)" map="$T/map"
[ -n "$local_ok" ] && same_bytes "$T/out.local" "$T/out"
[ "$(grep -v '^#' "$T/map" | tail -n +2 | grep -c -- '-$')" = 1 ] &&
	grep -qx "$(printf '0x%08X  0x%08X  -' "$BAD_POS" "$BAD_LEN")" "$T/map" ||
	{ cat "$T/map"; fail "the map does not mark exactly the 5 bad blocks bad"; }
stop_server bad
restart bad file "$T/src"
run_pdd if="$(uri bad)" of="$T/out" coe=1 map="$T/map"
expect_rc 0
expect_err "5+0 records out"
same_bytes "$T/src" "$T/out"

# --- 4. SIGINT in the middle of a copy to and from an export: status
# 130, the done mark, and the command that resumes; everything below the
# mark is the source's, and the printed command (against the server
# started again without its delay) copies the rest, and only the rest.
slow=(bs=4096 bpt=4 qd=2 conns=1)
for side in input output; do
	rm -f "$T/out"
	truncate -s 0 "$T/disk"
	truncate -s "$SIZE" "$T/disk"
	if [ "$side" = input ]; then
		srv=(file "$T/src")
		restart int --filter=delay "${srv[@]}" rdelay=20ms
		args=(if="$(uri int)" of="$T/out")
		dst=$T/out
	else
		srv=(file "$T/disk")
		restart int --filter=delay "${srv[@]}" wdelay=20ms
		args=(if="$T/src" of="$(uri int)")
		dst=$T/disk
	fi
	"$PDD" "${args[@]}" "${slow[@]}" "${eng[@]}" 2>"$T/err" &
	pid=$!
	sleep 0.5
	kill -INT "$pid"
	rc=0
	wait "$pid" || rc=$?
	expect_rc 130
	mark=$(sed -n 's/^pdd: stopped by SIGINT: [0-9]* bytes are copied: input below block \([0-9]*\) is in output below block \1$/\1/p' "$T/err")
	[ -n "$mark" ] && [ "$mark" -gt 0 ] || { cat "$T/err"; fail "$side: no done mark, or nothing copied"; }
	expect_err "pdd: stopped by SIGINT: $((mark * 4096)) bytes are copied: input below block $mark is in output below block $mark"
	expect_err "$mark+0 records out"
	cmp -s -n $((mark * 4096)) "$T/src" "$dst" || fail "$side: the output below the done mark is not the source's"
	cmd=$(sed -n 's/^pdd: to resume: pdd //p' "$T/err")
	[ -n "$cmd" ] || { cat "$T/err"; fail "$side: no resume command"; }
	stop_server int
	restart int "${srv[@]}"
	eval "set -- $cmd"
	rc=0
	"$PDD" "$@" 2>"$T/err" || rc=$?
	expect_rc 0
	expect_err "$((SIZE / 4096 - mark))+0 records out"
	same_bytes "$T/src" "$dst"
	stop_server int
done

# --- 5. A server that stops answering (each request waits 30 s), and no
# timeout=: a SIGINT stops, and says after a second that it waits for the
# requests the server holds; a second SIGINT ends pdd at once, with
# nothing more said.  The servers are left holding their requests: they
# are stopped at the exit.
for side in input output; do
	rm -f "$T/out"
	if [ "$side" = input ]; then
		serve mute-in --filter=delay file "$T/src" rdelay=30
		args=(if="$(uri mute-in)" of="$T/out")
	else
		serve mute-out --filter=delay file "$T/disk" wdelay=30
		args=(if="$T/src" of="$(uri mute-out)")
	fi
	"$PDD" "${args[@]}" qd=8 conns=1 "${eng[@]}" 2>"$T/err" &
	pid=$!
	sleep 0.3
	kill -INT "$pid"
	wait_for "^pdd: stopping: waiting for 8 requests in flight, nothing back for [0-9]+ s; interrupt again to end at once$" 3
	kill -INT "$pid"
	for ((i = 0; i < 20; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$pid" 2>/dev/null && fail "$side: a second SIGINT did not end pdd while the server was silent"
	rc=0
	wait "$pid" || rc=$?
	expect_rc 130
	[ "$(grep -c . "$T/err")" = 1 ] || { cat "$T/err"; fail "$side: pdd said more after the second SIGINT"; }
	if [ "$side" = input ]; then
		[ "$(stat -c %s "$T/out")" = 0 ] || fail "input: the output holds bytes the silent server never gave"
	fi
done

# --- 6. timeout= against servers that stop answering altogether: pdd
# gives up on what they hold after the time given and ends at once,
# without waiting for them to answer its flush or its goodbye.  A flush
# the export leaves unanswered for 10 s: status 33, in well under 10 s.
touch "$T/fstall"
t0=${EPOCHREALTIME/./}
run_pdd if="$T/src" of="$(uri w)" timeout=1
ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
expect_rc 33
expect_err "pdd: '$(uri w)': no answer to a flush for 1 s (timeout=1)"
expect_err "pdd: error flushing '$(uri w)': Connection timed out"
expect_err "pdd: the 8388608 bytes written may not be on stable storage"
[ "$ms" -lt 6000 ] || fail "timeout=1 on a flush that is not answered: pdd ended after $ms ms"

# A server stopped (SIGSTOP) in the middle of a copy, as the input and as
# the output: the request it holds ends the side after a second, an
# output is flushed before the report (no answer either), the done mark
# is right, and pdd ends within seconds, while the server is still
# stopped.  It is continued before anything else can happen to it.
trap 'kill -CONT "$(cat "$T/frozen.pid" 2>/dev/null)" 2>/dev/null; cleanup' EXIT
for side in input output; do
	rm -f "$T/out"
	truncate -s 0 "$T/disk"
	truncate -s "$SIZE" "$T/disk"
	if [ "$side" = input ]; then
		restart frozen --filter=delay file "$T/src" rdelay=20ms
		args=(if="$(uri frozen)" of="$T/out")
		dst=$T/out
	else
		restart frozen --filter=delay file "$T/disk" wdelay=20ms
		args=(if="$T/src" of="$(uri frozen)")
		dst=$T/disk
	fi
	"$PDD" "${args[@]}" bs=4096 bpt=4 qd=2 conns=1 timeout=1 "${eng[@]}" 2>"$T/err" &
	pid=$!
	sleep 0.5
	kill -STOP "$(cat "$T/frozen.pid")"
	for ((i = 0; i < 160; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	ended=1
	kill -0 "$pid" 2>/dev/null && ended=
	kill -CONT "$(cat "$T/frozen.pid")"
	[ -n "$ended" ] || fail "$side: pdd did not end within 8 s of its server stopping, with timeout=1"
	rc=0
	wait "$pid" || rc=$?
	expect_rc 33
	if [ "$side" = input ]; then
		err_num "pdd: '$(uri frozen)': no answer to a read at byte " " for 1 s (timeout=1)"
	else
		err_num "pdd: '$(uri frozen)': no answer to a write at byte " " for 1 s (timeout=1)"
		# the server holds what it was sent unflushed: nothing of it is
		# claimed, and no resume command starts past it
		expect_err "pdd: '$(uri frozen)' is not flushed: the server failed or stopped answering"
		grep -q "^pdd: the [0-9]* bytes written may not be on stable storage\$" "$T/err" ||
			{ cat "$T/err"; fail "$side: unflushed writes claimed"; }
		grep -q "^pdd: to resume" "$T/err" && fail "$side: a resume command past unflushed writes"
		expect_err "pdd: copy failed: engine nbd of the $side '$(uri frozen)': Connection timed out"
		stop_server frozen
		continue
	fi
	expect_err "pdd: copy failed: engine nbd of the $side '$(uri frozen)': Connection timed out"
	mark=$(sed -n 's/^pdd: \([0-9]*\) bytes are copied: input below block \([0-9]*\) is in output below block \2$/\2/p' "$T/err")
	[ -n "$mark" ] && [ "$mark" -gt 0 ] || { cat "$T/err"; fail "$side: no done mark, or nothing copied"; }
	expect_err "pdd: $((mark * 4096)) bytes are copied: input below block $mark is in output below block $mark"
	cmp -s -n $((mark * 4096)) "$T/src" "$dst" || fail "$side: the output below the done mark is not the source's"
	stop_server frozen
done

echo "NBD servers that fail, refuse or fall silent are reported exactly"
