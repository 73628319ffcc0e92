#!/bin/bash
# pdd under valgrind's memcheck: a threaded file copy, one with a map, a
# pipe copy, an error stop, a refused command line and (once) sg copies
# through the double, coe with a map, must show no invalid access and no
# leak.
. "$(dirname "$0")/../lib.sh"
command -v valgrind >/dev/null || skip "valgrind is not installed"

leaks=all
# valgrind's lines in $T/err, but its note that it does not know
# LOOP_GET_STATUS64 (the guard asks it of any loop device on the machine;
# pdd zeroes the structure first, so nothing from it is uninitialised)
reported() {
	grep '^==[0-9]*==' "$T/err" |
		grep -vE '^==[0-9]+== (Warning: noted but unhandled ioctl 0x4c05 with no size/direction hints|   This could cause spurious value errors|   See README_MISSING_SYSCALL_OR_IOCTL)' |
		grep -q .
}
vg() {
	rc=0
	valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=$leaks \
		--errors-for-leak-kinds=$leaks "$PDD" "$@" "${eng[@]}" 2>"$T/err" || rc=$?
	# valgrind does not know LOOP_GET_STATUS64 (the guard asks it of any
	# loop device on the machine) and says so: a note, not an error; pdd
	# zeroes the structure first, so no value from it is uninitialised
	reported && { cat "$T/err"; fail "valgrind reported: pdd $*"; }
	return 0
}

head -c 1000000 /dev/urandom >"$T/in"
vg if="$T/in" of="$T/out" threads=4 bpt=7
expect_rc 0
cmp -s "$T/in" "$T/out" || fail "copy under valgrind differs"
vg if="$T/in" of="$T/out2" iflag=direct oflag=direct threads=3 bpt=16
expect_rc 0
vg if="$T/in" of="$T/out4" verify=1 bpt=5
expect_rc 0
expect_err "pdd: verify: 1954 blocks of 512 bytes compared, all identical"
# a map with every status: only what is not finished is copied
printf '0 ?\n0 4096 +\n4096 512 -\n4608 512 *\n5120 994880 ?\n' >"$T/map"
vg if="$T/in" of="$T/out" threads=4 bpt=7 map="$T/map"
expect_rc 0
expect_err "1945+1 records out"
cmp -s "$T/in" "$T/out" || fail "map copy under valgrind differs"
vg if="$T/in" of=/dev/null bs=4096 --dry-run >/dev/null
expect_rc 0
vg if="$T/in" of="$T/out" bs=0
expect_rc 1
vg if="$T/missing" of="$T/out"
expect_rc 52
rc=0
valgrind -q --error-exitcode=99 --leak-check=full "$PDD" bs=1000 threads=5 "${eng[@]}" <"$T/in" 2>"$T/err" >"$T/out3" || rc=$?
expect_rc 0
reported && { cat "$T/err"; fail "valgrind reported on the pipe copy"; }
cmp -s "$T/in" "$T/out3" || fail "pipe copy under valgrind differs"
# the sg engine, once: through the double, with a file on the other side
# and a medium error that coe reads around.  The file is read by the
# threads engine: valgrind cannot see io_uring fill a buffer, and would
# take the bytes written to the double for uninitialised
if [ "${PDD_ENGINE:-threads}" = threads ] && [ -e "$SGD" ]; then
	truncate -s 1024000 "$T/sgback"
	export LD_PRELOAD=$SGD SGDOUBLE_DEVS="$T/sg=$T/sgback"
	eng=()
	leaks=definite,indirect	# the double keeps its settings to the end
	vg if="$T/in" of="$T/sg" bpt=16 qd=20 engine=threads
	expect_rc 0
	export SGDOUBLE_FAULTS="medium@$T/sg:100-101"
	vg if="$T/sg" of="$T/sgout" bpt=16 coe=1 map="$T/sgmap"
	expect_rc 3
	grep -qx '0x0000C800  0x00000400  -' "$T/sgmap" || fail "the sg map under valgrind"
	unset LD_PRELOAD SGDOUBLE_DEVS SGDOUBLE_FAULTS
	cmp -s -n 51200 "$T/in" "$T/sgout" || fail "sg copy under valgrind differs"
fi
echo "valgrind clean"
