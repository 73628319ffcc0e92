#!/bin/bash
# pdd under valgrind's memcheck: a threaded file copy, a pipe copy, an
# error stop and a refused command line must show no invalid access and
# no leak.
. "$(dirname "$0")/../lib.sh"
command -v valgrind >/dev/null || skip "valgrind is not installed"

vg() {
	rc=0
	valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=all \
		--errors-for-leak-kinds=all "$PDD" "$@" "${eng[@]}" 2>"$T/err" || rc=$?
	grep -q '^==[0-9]*==' "$T/err" && { cat "$T/err"; fail "valgrind reported: pdd $*"; }
	return 0
}

head -c 1000000 /dev/urandom >"$T/in"
vg if="$T/in" of="$T/out" threads=4 bpt=7
expect_rc 0
cmp -s "$T/in" "$T/out" || fail "copy under valgrind differs"
vg if="$T/in" of="$T/out2" iflag=direct oflag=direct threads=3 bpt=16
expect_rc 0
vg if="$T/in" of=/dev/null bs=4096 --dry-run >/dev/null
expect_rc 0
vg if="$T/in" of="$T/out" bs=0
expect_rc 1
vg if="$T/missing" of="$T/out"
expect_rc 52
rc=0
valgrind -q --error-exitcode=99 --leak-check=full "$PDD" bs=1000 threads=5 "${eng[@]}" <"$T/in" 2>"$T/err" >"$T/out3" || rc=$?
expect_rc 0
grep -q '^==[0-9]*==' "$T/err" && fail "valgrind reported on the pipe copy"
cmp -s "$T/in" "$T/out3" || fail "pipe copy under valgrind differs"
echo "valgrind clean"
