#!/bin/bash
# The sg test double (tests/sgdouble/libsgdouble.so) is faithful: with 512-
# and 4096-byte logical blocks, sg3_utils' own sg_readcap, sg_inq and
# sg_turs see the device the double describes; sg_dd and sgp_dd (thr=4)
# copy file->sg, sg->file and sg->sg byte for byte, with skip, seek, count
# and every CDB size; injected medium errors, recovered errors, unit
# attentions, aborted commands, timeouts and a not-ready unit give the
# exit statuses and recoveries the tools give on real disks; sg_write_same
# and sg_vpd see WRITE SAME(16) and its limits as SBC has them, and a
# device without the command; a latency
# per command makes sgp_dd's threads pay off against sg_dd's one command
# at a time; a probe checks the async v3 interface (the queue of 16, pack
# ids, EAGAIN, poll, sense fields, iovecs, mmap, timeouts, latency); and
# raw devices bound to a file look like char 162:N to coreutils' stat and
# dd, read and write the file byte for byte, and are direct.
# No root needed: nothing here is a real device.  It runs once, with the
# sg tests.
# engines: sg
. "$(dirname "$0")/../lib.sh"
for tool in sg_readcap sg_inq sg_turs sg_dd sgp_dd sg_write_same sg_vpd; do
	command -v "$tool" >/dev/null || skip "needs sg3_utils ($tool)"
done
needs_sgdouble

NB=5000			# blocks per device
faults= state= latency= wsmax=

# sg TOOL ARGS...: run an sg3_utils tool on the double's devices ($devs),
# with $faults, $state, $latency and $wsmax; output in $T/out, status in $rc
sg() {
	rc=0
	LD_PRELOAD=$SGD SGDOUBLE_DEVS=$devs SGDOUBLE_FAULTS=$faults \
		SGDOUBLE_STATE=$state SGDOUBLE_LATENCY_US=$latency \
		SGDOUBLE_WRITE_SAME_MAX=$wsmax \
		SGDOUBLE_LOG=$T/log "$@" >"$T/out" 2>&1 || rc=$?
}

# now_us: the wall clock in microseconds
now_us() { echo "${EPOCHREALTIME//[.,]/}"; }

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

	# --- recovered errors: the data comes all the same, with CHECK
	# CONDITION and RECOVERED ERROR, which sg_dd counts and reports, once
	# per command touching the range, and then goes on: status 0
	faults="recovered@$A:1000-1003"
	nrec=$((1003 / bpt - 1000 / bpt + 1))
	: >"$T/log"
	sg sg_dd if="$A" of="$T/rec$lbs.img" bs="$lbs" bpt="$bpt" count="$NB"
	expect 0
	has "lba of last recovered error in this READ=0x3e8"
	has "$nrec recovered errors"
	has "$NB+0 records out"
	same "$a" "$T/rec$lbs.img" 0 "$NB"
	logged "CHECK CONDITION key 0x1 asc 0x17/0x01 info 1000"
	"$STAMP" fill "$b" 0 "$bytes" 2
	faults="recovered@$B:1000-1003"
	sg sg_dd if="$a" of="$B" bs="$lbs" bpt="$bpt" count="$NB"
	expect 0
	has "lba of last recovered error in this WRITE=0x3e8"
	has "$nrec recovered errors"
	same "$a" "$b" 0 "$NB"

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

	# --- a timeout: host_status DID_TIME_OUT, no sense; sg3_utils files it
	# as SG_LIB_CAT_TIMEOUT, sg_dd's and sgp_dd's exit status 33.  count=
	# keeps READ CAPACITY out of it: the READ is what times out.
	faults="timeout@$A:1"
	: >"$T/log"
	sg sg_dd if="$A" of="$T/t.img" bs="$lbs" bpt="$bpt" count=100
	expect 33
	has "sg_read failed"
	logged "host_status 0x3 (timed out)"
	sg sgp_dd if="$A" of="$T/t.img" bs="$lbs" bpt="$bpt" thr=4 count=100
	expect 33
	has "Host_status=0x03 [DID_TIME_OUT]"
	# sg_turs reports it too; its status is 0 in sg3_utils 1.46 (a
	# transport error became sg_convert_errno(0)), 35 in later ones
	faults="timeout@$A:1" state=$T/to$lbs.state
	sg sg_turs "$A"
	has "Host_status=0x03 [DID_TIME_OUT]"
	# counted: the next command is served
	sg sg_dd if="$A" of="$T/t.img" bs="$lbs" bpt="$bpt" count=100
	expect 0
	same "$a" "$T/t.img" 0 100
	state=

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

	# --- WRITE SAME(16) as sg_write_same sends it: its one block of data
	# out (zeros, or a block of a file with --in) on every block of the
	# range and nowhere else; NDOB=1 writes zeros with no data out; UNMAP=1
	# writes too (no thin provisioning); ANCHOR, 0 blocks (Block Limits
	# says WSNZ), more than Block Limits' maximum and a range past the
	# capacity are refused; nowritesame is a device without the command
	faults=
	"$STAMP" fill "$a" 0 "$bytes" 1
	: >"$T/log"
	sg sg_write_same --16 --lba=100 --num=50 "$A"
	expect 0
	stamped "$a" 0 100 1 0
	zeros "$a" 100 50
	stamped "$a" 150 $((NB - 150)) 1 150
	logged "WRITE SAME(16) [93 00 00 00 00 00 00 00 00 64 00 00 00 32 00 00] lba 100 blocks 50 len $lbs"
	dd if="$src" of="$T/blk" bs="$lbs" skip=7 count=1 status=none
	sg sg_write_same --16 --in="$T/blk" --lba=200 --num=3 "$A"
	expect 0
	for k in 200 201 202; do
		cmp -s -n "$lbs" -i $((k * lbs)):0 -- "$a" "$T/blk" || fail "block $k is not the block sent"
	done
	stamped "$a" 150 50 1 150
	stamped "$a" 203 $((NB - 203)) 1 203
	sg sg_write_same --16 --ndob --lba=300 --num=4 "$A"
	expect 0
	zeros "$a" 300 4
	logged "lba 300 blocks 4 len 0 pack_id 0 -> GOOD resid 0"
	sg sg_write_same --16 --unmap --lba=400 --num=2 "$A"
	expect 0
	zeros "$a" 400 2
	stamped "$a" 203 97 1 203
	stamped "$a" 304 96 1 304
	stamped "$a" 402 $((NB - 402)) 1 402
	sg sg_write_same --16 --unmap --anchor --lba=500 --num=2 "$A"
	expect 5
	has "Illegal request"
	sg sg_write_same --16 --lba=500 --num=0 "$A"
	expect 5
	sg sg_write_same --16 --lba=$((NB - 1)) --num=2 "$A"
	expect 22
	has "LBA out of range"
	stamped "$a" 402 $((NB - 402)) 1 402
	sg sg_vpd --page=bl "$A"
	expect 0
	has "Write same non-zero (WSNZ): 1"
	has "Maximum write same length: 0 blocks [not reported]"
	wsmax=8
	sg sg_vpd --page=bl "$A"
	expect 0
	has "Maximum write same length: 0x8 blocks"
	sg sg_write_same --16 --lba=500 --num=9 "$A"
	expect 5
	has "Illegal request"
	stamped "$a" 402 $((NB - 402)) 1 402
	sg sg_write_same --16 --lba=500 --num=8 "$A"
	expect 0
	zeros "$a" 500 8
	wsmax=
	faults="wmedium@$A:601"
	sg sg_write_same --16 --lba=600 --num=4 "$A"
	expect 3
	logged "asc 0x0c/0x00 info 601"
	stamped "$a" 508 $((NB - 508)) 1 508
	faults="nowritesame@$A:always"
	sg sg_write_same --16 --lba=700 --num=4 "$A"
	expect 9
	has "Invalid opcode"
	sg sg_write_same --16 --lba=700 --num=4 "$B"	# on one device only
	expect 0
	# a count, across processes: once, then it is served
	faults="nowritesame@$A" state=$T/ws$lbs.state
	sg sg_write_same --16 --lba=700 --num=4 "$A"
	expect 9
	sg sg_write_same --16 --lba=700 --num=4 "$A"
	expect 0
	state=
	zeros "$a" 700 4
	stamped "$a" 508 192 1 508
	stamped "$a" 704 $((NB - 704)) 1 704
	faults=
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

# --- latency: every READ and WRITE takes SGDOUBLE_LATENCY_US, without
# holding up the caller of write().  sg_dd has one SG_IO in flight, so 20
# READs take 20 latencies; sgp_dd's four threads overlap theirs.
lbs=512
devs="$T/nodes/lat=$T/a512.img" faults= state= latency=20000
: >"$T/log"
t0=$(now_us)
sg sg_dd if="$T/nodes/lat" of="$T/lat1.img" bs=512 bpt=128 count=2560
t_sg=$(($(now_us) - t0))
expect 0
same "$T/a512.img" "$T/lat1.img" 0 2560
logged "READ and WRITE take 20000 us"
t0=$(now_us)
sg sgp_dd if="$T/nodes/lat" of="$T/lat2.img" bs=512 bpt=128 count=2560 thr=4
t_sgp=$(($(now_us) - t0))
expect 0
same "$T/a512.img" "$T/lat2.img" 0 2560
echo "20 READs of 20 ms: sg_dd ${t_sg} us, sgp_dd thr=4 ${t_sgp} us"
((t_sg >= 400000)) || fail "sg_dd's 20 READs took ${t_sg} us, less than 20 latencies"
((t_sgp * 10 <= t_sg * 7)) || fail "sgp_dd (${t_sgp} us) is not faster than sg_dd (${t_sg} us)"
latency=

# --- the asynchronous interface, beyond what the tools reach
cc=${CC:-cc}
"$cc" -std=gnu11 -Wall -Wextra -Werror -O2 -o "$T/sgprobe" "$top/tests/sgdouble/sgprobe.c" \
	-lpthread || fail "cannot build tests/sgdouble/sgprobe.c"
probe() {
	sg "$T/sgprobe" "$@"
	grep FAILED "$T/out"
	expect 0
	has "0 failed"
}
for lbs in 512 4096; do
	devs="$T/nodes/probe=$T/a$lbs.img:$lbs" faults="medium:100" state=
	probe "$T/nodes/probe" "$T/a$lbs.img" "$lbs" 100
done
# each probe check that needs the double set up for it
lbs=512 devs="$T/nodes/probe=$T/a512.img"
faults="recovered:100"
probe "$T/nodes/probe" "$T/a512.img" 512 100 recovered
faults="timeout:2"
probe "$T/nodes/probe" "$T/a512.img" 512 100 timeout
# 16 commands written at once come back in about one latency, not 16
faults= latency=100000
probe "$T/nodes/probe" "$T/a512.img" 512 100 latency:100000
has "16 written at once on one fd"
latency=

# --- raw devices: char 162:N, each bound to a regular file here, opened
# with O_DIRECT forced.  The file system under $T must take 512-byte
# direct I/O and refuse a misaligned one, as a disk with 512-byte blocks
# would (tmpfs takes any: its O_DIRECT is buffered).
raw=$T/raw.img
R1=$T/nodes/raw1 R2=$T/nodes/raw2
# rawdo CMD ARGS...: as sg, with the raw devices instead
rawdo() {
	rc=0
	LD_PRELOAD=$SGD SGDOUBLE_RAW="$R1=$raw,$R2=$T/a512.img" SGDOUBLE_LOG=$T/log \
		"$@" >"$T/out" 2>&1 || rc=$?
}
if dd if=/dev/zero of="$T/dio.img" bs=512 count=1 oflag=direct status=none 2>/dev/null &&
	! dd if="$T/dio.img" of=/dev/null bs=100 count=1 iflag=direct status=none 2>/dev/null; then
	"$STAMP" fill "$raw" 0 $((256 * 1024)) 7
	cp "$raw" "$T/raw.orig"
	: >"$T/log"
	rawdo stat -c '%n: %F %t:%T size %s mode %a' "$R1" "$R2"
	expect 0
	has "$R1: character special file a2:1 size 0 mode 660"
	has "$R2: character special file a2:2 size 0 mode 660"
	# dd's buffers are page aligned, so whole blocks pass, with
	# iflag=direct or without: it is direct all the same
	rawdo dd if="$R1" of="$T/rawout.img" bs=4096 count=2 iflag=direct status=none
	expect 0
	[ "$(stat -c %s "$T/rawout.img")" = 8192 ] || fail "dd read the wrong size from the raw device"
	cmp -s -n 8192 -- "$T/rawout.img" "$raw" || fail "dd read other bytes than the file's"
	rawdo dd if="$R1" of="$T/rawout.img" bs=4096 skip=3 count=2 status=none
	expect 0
	cmp -s -n 8192 -i 12288:0 -- "$raw" "$T/rawout.img" || fail "dd skip=3 read other bytes"
	logged "open raw $R1"
	# ... and a read of 100 bytes does not
	rawdo dd if="$R1" of="$T/rawout.img" bs=100 count=1 status=none
	expect 1
	has "Invalid argument"
	# a 512-aligned write, without conv=notrunc: neither dd's O_TRUNC nor
	# its ftruncate to seek= may cut the disk
	"$STAMP" fill "$T/w.img" 0 1536 8
	rawdo dd if="$T/w.img" of="$R1" bs=512 seek=5 status=none
	expect 0
	[ "$(stat -c %s "$raw")" = $((256 * 1024)) ] || fail "writing to the raw device cut the file"
	cmp -s -n 2560 -- "$raw" "$T/raw.orig" || fail "the raw write touched blocks 0-4"
	cmp -s -n 1536 -i 2560:0 -- "$raw" "$T/w.img" || fail "the raw write is not in blocks 5-7"
	cmp -s -i 4096:4096 -- "$raw" "$T/raw.orig" || fail "the raw write touched blocks past 7"
	# fstat, dup, fcntl, the block ioctls, lseek and what raw refuses
	rawdo "$T/sgprobe" "$R1" "$raw" 512 0 raw:1
	grep FAILED "$T/out"
	expect 0
	has "0 failed"
else
	echo "no 512-byte direct I/O, or no misaligned one refused, under $T: the raw device checks are left out"
fi
echo "the sg double is faithful to sg3_utils and the v3 interface"
