#!/bin/bash
# engine=auto falls back for real: io_uring refused by a seccomp filter
# (EPERM, as in a container; ENOSYS, as on a kernel without it) or by
# kernel.io_uring_disabled hands the copy to aio where both sides use
# direct I/O, else to threads; verbose=1 says which and why.  An engine
# named on the command line that cannot run is refused (exit 31).
. "$(dirname "$0")/../lib.sh"
[ "${PDD_ENGINE:-auto}" = auto ] || [ "$PDD_ENGINE" = uring ] || skip "tests the choice, not engine $PDD_ENGINE"
eng=()	# this test chooses the engine itself
NORING=$top/tests/tools/noring
"$PDD" --version | grep -q '^engines:.* uring' || skip "this pdd is built without io_uring"

head -c 8000000 /dev/urandom >"$T/in"	# 123 transfers: more than qd
for e in EPERM ENOSYS; do
	msg=$([ $e = EPERM ] && echo "Operation not permitted" || echo "Function not implemented")
	rc=0
	"$NORING" $e "$PDD" if="$T/in" of="$T/out.$e" iflag=direct oflag=direct verbose=1 2>"$T/err" || rc=$?
	expect_rc 0
	expect_err "pdd: engine uring cannot run here: $msg"
	expect_err "pdd: engine aio, 64 transfers of 65536 bytes in flight"
	cmp -s "$T/in" "$T/out.$e" || fail "$e: copy after falling back to aio differs"

	# buffered sides: aio would be synchronous, so threads takes it
	rc=0
	"$NORING" $e "$PDD" if="$T/in" of="$T/buf.$e" verbose=1 2>"$T/err" || rc=$?
	expect_rc 0
	expect_err "pdd: engine aio passed over: it would run synchronously here"
	expect_err "pdd: engine threads, 4 threads, 64 transfers of 65536 bytes in flight"
	cmp -s "$T/in" "$T/buf.$e" || fail "$e: copy after falling back to threads differs"

	# a stream still works, in order
	rc=0
	"$NORING" $e "$PDD" bs=1000 <"$T/in" 2>"$T/err" >"$T/pipe.$e" || rc=$?
	expect_rc 0
	cmp -s "$T/in" "$T/pipe.$e" || fail "$e: pipe copy differs"

	# asked for by name, it is refused before anything is created
	rc=0
	"$NORING" $e "$PDD" if="$T/in" of="$T/never" engine=uring 2>"$T/err" || rc=$?
	expect_rc 31
	expect_err "pdd: engine=uring cannot run here: $msg"
	[ ! -e "$T/never" ] || fail "a refused engine created the output"
done

# without the filter, auto takes io_uring
run_pdd if="$T/in" of="$T/out" verbose=1
expect_rc 0
expect_err "pdd: engine uring, 64 transfers of 65536 bytes in flight"

# an ordinary user's RLIMIT_MEMLOCK: a small one leaves the ring but not
# the registered buffers (plain ones are used), none at all leaves no ring
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && command -v prlimit >/dev/null; then
	chmod 755 "$T"
	mkdir -m 777 "$T/user"
	cp "$T/in" "$T/user/in"
	chmod 644 "$T/user/in"
	as_nobody() {	# as_nobody MEMLOCK ARGS...: pdd as user 65534
		local lim=$1; shift
		rc=0
		prlimit --memlock="$lim:$lim" setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$PDD" "$@" 2>"$T/err" || rc=$?
	}
	# (registered for direct I/O only: through the page cache they
	# would save nothing)
	as_nobody 65536 if="$T/user/in" of="$T/user/out" engine=uring iflag=direct oflag=direct verbose=1
	expect_rc 0
	expect_err "pdd: uring: buffers not registered (Cannot allocate memory): using plain ones"
	expect_err "pdd: engine uring, 64 transfers of 65536 bytes in flight"
	cmp -s "$T/in" "$T/user/out" || fail "copy with plain buffers differs"
	as_nobody 0 if="$T/user/in" of="$T/user/out2" iflag=direct oflag=direct verbose=1
	expect_rc 0
	expect_err "pdd: engine uring cannot run here: Cannot allocate memory"
	expect_err "pdd: engine aio, 64 transfers of 65536 bytes in flight"
	cmp -s "$T/in" "$T/user/out2" || fail "copy without io_uring memory differs"
fi

# the system-wide switch, where this kernel has it (restored at exit)
knob=/proc/sys/kernel/io_uring_disabled
if [ "$(id -u)" = 0 ] && [ -w "$knob" ]; then
	old=$(cat "$knob")
	trap 'echo "$old" >"$knob"; cleanup' EXIT
	echo 2 >"$knob"
	run_pdd if="$T/in" of="$T/off" iflag=direct oflag=direct verbose=1
	echo "$old" >"$knob"
	expect_rc 0
	expect_err "pdd: engine uring cannot run here: Operation not permitted"
	expect_err "pdd: engine aio, 64 transfers of 65536 bytes in flight"
	cmp -s "$T/in" "$T/off" || fail "copy with io_uring disabled differs"
fi
echo "engine fallback works"
