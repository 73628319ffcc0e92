#!/bin/bash
# The sg test double (tests/sgdouble/libsgdouble.so) is faithful: with 512-
# and 4096-byte logical blocks, sg3_utils' own sg_readcap, sg_inq and
# sg_turs see the device the double describes; sg_dd and sgp_dd (thr=4)
# copy file->sg, sg->file and sg->sg byte for byte, with skip, seek, count
# and every CDB size; injected medium errors, unit attentions, aborted
# commands and a not-ready unit give the exit statuses and recoveries the
# tools give on real disks; and a probe checks the async v3 interface
# (the queue of 16, pack ids, EAGAIN, poll, sense fields, iovecs, mmap).
# No root needed: nothing here is a real device.
. "$(dirname "$0")/../lib.sh"
[ "${PDD_ENGINE:-threads}" = threads ] || skip "the double is engine-independent"
for tool in sg_readcap sg_inq sg_turs sg_dd sgp_dd; do
	command -v "$tool" >/dev/null || skip "needs sg3_utils ($tool)"
done
SGD=$top/tests/sgdouble/libsgdouble.so
[ -e "$SGD" ] || fail "build the double first: make tests/sgdouble/libsgdouble.so"

NB=5000			# blocks per device
faults= state=

# sg TOOL ARGS...: run an sg3_utils tool on the double's devices ($devs),
# with $faults and $state; output in $T/out, status in $rc
sg() {
	rc=0
	LD_PRELOAD=$SGD SGDOUBLE_DEVS=$devs SGDOUBLE_FAULTS=$faults \
		SGDOUBLE_STATE=$state SGDOUBLE_LOG=$T/log "$@" >"$T/out" 2>&1 || rc=$?
}

expect() {
	[ "$rc" = "$1" ] || {
		cat "$T/out"
		fail "exit status $rc, expected $1 (line ${BASH_LINENO[0]})"
	}
}

# has TEXT: the tool's output holds TEXT
has() {
	grep -qF -- "$1" "$T/out" || {
		echo "--- output:"; cat "$T/out"
		fail "missing: $1 (line ${BASH_LINENO[0]})"
	}
}

# stamped FILE BLK N SALT SRCBLK: blocks BLK.. of FILE hold the stamps of
# source blocks SRCBLK..
stamped() {
	"$STAMP" check "$1" $(($2 * lbs)) $(($3 * lbs)) "$4" $(($5 * lbs)) "$lbs" ||
		fail "$1 blocks $2+$3 are not salt $4 from block $5 (line ${BASH_LINENO[0]})"
}

# same FILE1 FILE2 BLK N: both hold the same blocks BLK..BLK+N-1
same() {
	cmp -s -n $(($4 * lbs)) -i $(($3 * lbs)):$(($3 * lbs)) -- "$1" "$2" ||
		fail "$1 and $2 differ in blocks $3+$4 (line ${BASH_LINENO[0]})"
}

# zeros FILE BLK N
zeros() {
	cmp -s -n $(($3 * lbs)) -i $(($2 * lbs)):0 -- "$1" /dev/zero ||
		fail "$1 blocks $2+$3 are not zero (line ${BASH_LINENO[0]})"
}

logged() {
	grep -qF -- "$1" "$T/log" || fail "the double's log has no $1 (line ${BASH_LINENO[0]})"
}

for lbs in 512 4096; do
	echo "--- $lbs-byte logical blocks"
	bytes=$((NB * lbs))
	a=$T/a$lbs.img b=$T/b$lbs.img src=$T/src$lbs.img
	# the nodes' directory does not exist: the double needs no node
	A=$T/nodes/sga$lbs B=$T/nodes/sgb$lbs
	"$STAMP" fill "$a" 0 "$bytes" 1
	"$STAMP" fill "$b" 0 "$bytes" 2
	"$STAMP" fill "$src" 0 "$bytes" 3
	# a tail shorter than a block is not part of the device
	truncate -s $((bytes + 100)) "$a" "$b"
	devs="$A=$a:$lbs,$B=$b:$lbs"
	faults= state=
	pick 1 7 64 128; bpt=$picked
	pick 6 10 12 16; cdbsz=$picked
	echo "bpt=$bpt cdbsz=$cdbsz"
	: >"$T/log"

	# --- what the device says of itself
	sg sg_readcap "$A"
	expect 0
	has "Last LBA=4999 (0x1387), Number of logical blocks=5000"
	has "Logical block length=$lbs bytes"
	sg sg_readcap --16 "$A"
	expect 0
	has "Last LBA=4999 (0x1387), Number of logical blocks=5000"
	has "Logical block length=$lbs bytes"
	has "Device size: $bytes bytes"
	sg sg_inq "$A"
	expect 0
	has "Peripheral device type: disk"
	has "Vendor identification: PDD"
	has "Product identification: SGDOUBLE"
	sg sg_turs "$A"
	expect 0

	# --- sg_dd: file->sg, sg->file, sg->sg with skip, seek and count
	sg sg_dd if="$src" of="$A" bs="$lbs" bpt="$bpt" cdbsz="$cdbsz" sync=1
	expect 0
	has "$NB+0 records out"
	stamped "$a" 0 "$NB" 3 0
	cmp -s -n 100 -i "$bytes":0 -- "$a" /dev/zero || fail "the tail past the last block changed"
	logged "SYNCHRONIZE CACHE(10)"
	sg sg_dd if="$A" of="$T/out$lbs.img" bs="$lbs" bpt="$bpt" cdbsz="$cdbsz" skip=11 count=4000
	expect 0
	[ "$(stat -c %s "$T/out$lbs.img")" = $((4000 * lbs)) ] || fail "sg->file copy has the wrong size"
	stamped "$T/out$lbs.img" 0 4000 3 11
	sg sg_dd if="$A" of="$B" bs="$lbs" bpt="$bpt" cdbsz="$cdbsz" skip=17 seek=33 count=3000
	expect 0
	stamped "$b" 0 33 2 0
	stamped "$b" 33 3000 3 17
	stamped "$b" 3033 $((NB - 3033)) 2 3033
	for op in READ WRITE; do
		logged "$op($cdbsz)"
	done

	# --- sgp_dd, four threads on each sg fd
	"$STAMP" fill "$src" 0 "$bytes" 4
	sg sgp_dd if="$src" of="$B" bs="$lbs" bpt="$bpt" cdbsz="$cdbsz" thr=4 count="$NB"
	expect 0
	stamped "$b" 0 "$NB" 4 0
	sg sgp_dd if="$B" of="$T/out$lbs.img" bs="$lbs" bpt="$bpt" thr=4 skip=5 count=4990
	expect 0
	stamped "$T/out$lbs.img" 0 4990 4 5
	sg sgp_dd if="$B" of="$A" bs="$lbs" bpt="$bpt" cdbsz="$cdbsz" thr=4 skip=100 seek=7 count=4000
	expect 0
	stamped "$a" 0 7 3 0
	stamped "$a" 7 4000 4 100
	stamped "$a" 4007 $((NB - 4007)) 3 4007
	# no count: both tools size the copy with READ CAPACITY
	sg sgp_dd if="$A" of="$B" bs="$lbs" thr=4
	expect 0
	same "$a" "$b" 0 "$NB"
	"$STAMP" fill "$b" 0 "$bytes" 2
	sg sg_dd if="$A" of="$B" bs="$lbs"
	expect 0
	has "$NB+0 records out"
	same "$a" "$b" 0 "$NB"

	# --- VERIFY(BYTCHK=1): equal, then one byte off in block 2222
	sg sg_dd --verify if="$a" of="$B" bs="$lbs" count="$NB"
	expect 0
	has "$NB+0 records verified"
	printf 'X' | dd of="$b" bs=1 seek=$((2222 * lbs + 5)) conv=notrunc status=none
	sg sg_dd --verify if="$a" of="$B" bs="$lbs" count="$NB"
	expect 14
	has "1 miscompare error(s)"

	# --- medium errors: sg_dd coe=1 zero-fills exactly the bad blocks
	faults="medium@$A:1000-1003"
	sg sg_dd if="$A" of="$T/rescued$lbs.img" bs="$lbs" bpt="$bpt" coe=1
	expect 0
	has ">> unrecovered read error at blk=1000, pdt=0, use zeros"
	has ">> unrecovered read error at blk=1003, pdt=0, use zeros"
	has "4 unrecovered error(s)"
	has "$NB+0 records out"
	same "$a" "$T/rescued$lbs.img" 0 1000
	zeros "$T/rescued$lbs.img" 1000 4
	same "$a" "$T/rescued$lbs.img" 1004 $((NB - 1004))
	# without coe sg_dd stops with the medium error's status
	sg sg_dd if="$A" of="$T/x.img" bs="$lbs" bpt="$bpt"
	expect 3
	has "sg_read failed"
	# sgp_dd's coe zeros the whole transfer holding the bad block
	faults="medium@$A:1000"
	sg sgp_dd if="$A" of="$T/rescued$lbs.img" bs="$lbs" bpt=16 thr=4 coe=1
	expect 0
	has ">> substituted zeros for in blk=992 for $((16 * lbs)) bytes"
	same "$a" "$T/rescued$lbs.img" 0 992
	zeros "$T/rescued$lbs.img" 992 16
	same "$a" "$T/rescued$lbs.img" 1008 $((NB - 1008))
	# a write error
	faults="wmedium@$B:300"
	sg sg_dd if="$a" of="$B" bs="$lbs" count="$NB"
	expect 3
	has "1 unrecovered error(s)"

	# --- unit attention: reported once, then gone, across processes
	faults="ua@$A:1" state=$T/ua$lbs.state
	sg sg_turs "$A"
	expect 6
	has "Unit attention"
	sg sg_turs "$A"
	expect 0
	state=
	# sg_dd retries a unit attention, up to ten times
	faults="ua@$A:3"
	sg sg_dd if="$A" of="$T/u.img" bs="$lbs" bpt="$bpt" count="$NB"
	expect 0
	has "Unit attention, continuing (r)"
	same "$a" "$T/u.img" 0 "$NB"
	faults="ua@$A:always"
	sg sg_dd if="$A" of="$T/u.img" bs="$lbs" count="$NB"
	expect 6
	has "Unit attention, too many (r)"
	# sgp_dd retries them through the asynchronous interface
	faults="ua@$A:5"
	sg sgp_dd if="$A" of="$T/u2.img" bs="$lbs" bpt="$bpt" thr=4 count="$NB"
	expect 0
	same "$a" "$T/u2.img" 0 "$NB"
	faults="aborted@$A:2"
	sg sg_dd if="$A" of="$T/u.img" bs="$lbs" bpt="$bpt" count="$NB"
	expect 0
	has "Aborted command, continuing (r)"
	same "$a" "$T/u.img" 0 "$NB"

	# --- not ready: TEST UNIT READY and READ CAPACITY fail, INQUIRY works
	faults="notready@$A:always"
	sg sg_turs "$A"
	expect 2
	has "device not ready"
	sg sg_readcap "$A"
	expect 2
	sg sg_inq "$A"
	expect 0
	has "Vendor identification: PDD"
	sg sg_turs "$B"		# the fault is on one device only
	expect 0
done

# --- past 2^32 blocks: READ CAPACITY(10) says 0xffffffff, the tools move
# to 16-byte CDBs, and a medium error's INFO needs descriptor-format sense
lbs=512
big=$T/big.img
high=$((4294967296 - 500))		# 1500 blocks up to the end, across 2^32
if truncate -s $(((high + 1500) * lbs)) "$big" 2>/dev/null; then
	devs="$T/nodes/sgbig=$big" faults= state=
	: >"$T/log"
	sg sg_readcap "$T/nodes/sgbig"
	expect 0
	has "READ CAPACITY (10) indicates device capacity too large"
	has "Last LBA=4294968295 (0x1000003e7), Number of logical blocks=4294968296"
	"$STAMP" fill "$T/bigsrc.img" 0 $((1500 * lbs)) 6
	sg sg_dd if="$T/bigsrc.img" of="$T/nodes/sgbig" bs="$lbs" seek="$high"
	expect 0
	stamped "$big" "$high" 1500 6 0
	logged "WRITE(16)"
	faults="medium:4294967300"
	sg sg_dd if="$T/nodes/sgbig" of="$T/bigout.img" bs="$lbs" skip="$high" coe=1
	expect 0
	has ">> unrecovered read error at blk=4294967300, pdt=0, use zeros"
	stamped "$T/bigout.img" 0 504 6 0
	zeros "$T/bigout.img" 504 1
	stamped "$T/bigout.img" 505 995 6 505
	logged "asc 0x11/0x00 info 4294967300"
	rm -f "$big"
else
	echo "no 2 TiB sparse file here: the checks past 2^32 blocks are left out"
fi

# --- the asynchronous interface, beyond what the tools reach
cc=${CC:-cc}
"$cc" -std=gnu11 -Wall -Wextra -Werror -O2 -o "$T/sgprobe" "$top/tests/sgdouble/sgprobe.c" \
	-lpthread || fail "cannot build tests/sgdouble/sgprobe.c"
for lbs in 512 4096; do
	devs="$T/nodes/probe=$T/a$lbs.img:$lbs" faults="medium:100" state=
	sg "$T/sgprobe" "$T/nodes/probe" "$T/a$lbs.img" "$lbs" 100
	grep FAILED "$T/out"
	expect 0
	has "0 failed"
done
echo "the sg double is faithful to sg3_utils and the v3 interface"
