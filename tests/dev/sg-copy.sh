#!/bin/bash
# pdd drives sg devices (through tests/sgdouble, LD_PRELOADed into pdd
# only): every pairing (sg->sg, sg->file, file->sg, sg->/dev/null, and with
# root sg->block device and block device->sg) with 512- and 4096-byte
# logical blocks, random bpt, qd, threads and cdbsz, skip/seek/count in sg
# blocks; the same bytes and records lines as sg_dd for the same operands,
# including the blocks coe zero-fills around an injected medium error;
# exact refusals; SCSI statuses to exit statuses; retries; SYNCHRONIZE
# CACHE; FUA/DPO bits; several descriptors past 16 in flight; 16-byte CDBs
# past 2^32 blocks.  SG_RUNS (default 8) random copies per block size.
# engines: sg
. "$(dirname "$0")/../lib.sh"
command -v sg_dd >/dev/null || skip "needs sg3_utils (sg_dd)"
needs_sgdouble
RUNS=${SG_RUNS:-8}
NB=5000			# blocks per device
faults=

# sgp PROG ARGS...: PROG (pdd, run_pdd or an sg3_utils tool) with the
# double's devices ($devs) and faults ($faults); the double logs to $T/log
# (an ASan build of pdd is told not to mind the double coming first)
sgp() {
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	LD_PRELOAD=$SGD SGDOUBLE_DEVS=$devs SGDOUBLE_FAULTS=$faults SGDOUBLE_LOG=$T/log "$@"
}

# sgdd ARGS...: sg_dd under the double; its stderr in $T/sgdd.err
sgdd() {
	sgrc=0
	sgp sg_dd "$@" 2>"$T/sgdd.err" || sgrc=$?
}

# records: the records lines of the last run ($T/err), as sg_dd prints them
records() { grep -E '^[0-9]+\+[0-9]+ records (in|out)$' "$1"; }

same_records() {
	[ "$(records "$T/err")" = "$(records "$T/sgdd.err")" ] || {
		echo "pdd:"; cat "$T/err"; echo "sg_dd:"; cat "$T/sgdd.err"
		fail "records lines differ from sg_dd's (line ${BASH_LINENO[0]})"
	}
}

logged() { grep -qF -- "$1" "$T/log" || fail "the double's log has no $1 (line ${BASH_LINENO[0]})"; }

loops=false
[ "$(id -u)" = 0 ] && [ -e /dev/loop-control ] && loops=true
$loops || echo "not root: the pairings with block devices are left out"

for lbs in 512 4096; do
	echo "--- $lbs-byte logical blocks"
	bytes=$((NB * lbs))
	a=$T/a$lbs.img b=$T/b$lbs.img src=$T/src$lbs.img
	A=$T/nodes/sga$lbs B=$T/nodes/sgb$lbs
	"$STAMP" fill "$a" 0 "$bytes" 1
	"$STAMP" fill "$src" 0 "$bytes" 3
	truncate -s $((bytes + 100)) "$a"
	devs="$A=$a:$lbs,$B=$b:$lbs"
	faults=

	for run in $(seq "$RUNS"); do
		pick 1 7 64 128; bpt=$picked
		pick 1 4 16 17 64; qd=$picked
		pick 1 2 4 8; thr=$picked
		pick 6 10 12 16; cdbsz=$picked
		skip=$((RANDOM % 200)) seek=$((RANDOM % 200)) count=$((1 + RANDOM % 4000))
		ops=(bpt="$bpt" qd="$qd" threads="$thr" cdbsz="$cdbsz")
		echo "run $run: ${ops[*]} skip=$skip seek=$seek count=$count"
		"$STAMP" fill "$b" 0 "$bytes" 2

		# sg -> sg
		sgp run_pdd if="$A" of="$B" skip="$skip" seek="$seek" count="$count" "${ops[@]}"
		expect_rc 0
		expect_err "$count+0 records out"
		stamped "$b" 0 "$seek" 2 0
		stamped "$b" "$seek" "$count" 1 "$skip"
		stamped "$b" $((seek + count)) $((NB - seek - count)) 2 $((seek + count))

		# sg -> file, against sg_dd with the same operands
		rm -f "$T/p.img" "$T/s.img"
		sgp run_pdd if="$A" of="$T/p.img" skip="$skip" count="$count" "${ops[@]}"
		expect_rc 0
		sgdd if="$A" of="$T/s.img" bs="$lbs" skip="$skip" count="$count" bpt="$bpt" cdbsz="$cdbsz"
		[ "$sgrc" = 0 ] || { cat "$T/sgdd.err"; fail "sg_dd failed"; }
		cmp -s "$T/p.img" "$T/s.img" || fail "pdd and sg_dd wrote different files"
		same_records
		stamped "$T/p.img" 0 "$count" 1 "$skip"

		# file -> sg
		sgp run_pdd if="$src" of="$A" skip="$skip" seek="$seek" count="$count" "${ops[@]}"
		expect_rc 0
		stamped "$a" "$seek" "$count" 3 "$skip"
		"$STAMP" fill "$a" 0 "$bytes" 1

		# sg -> /dev/null
		sgp run_pdd if="$A" of=/dev/null skip="$skip" "${ops[@]}"
		expect_rc 0
		expect_err "$((NB - skip))+0 records in"

		if $loops; then
			# a loop device with the same logical block size, both ways
			"$STAMP" fill "$T/loop$lbs.img" 0 "$bytes" 4
			dev=$(mkloop "$T/loop$lbs.img" "$lbs")
			sgp run_pdd if="$A" of="$dev" skip="$skip" seek="$seek" count="$count" "${ops[@]}"
			expect_rc 0
			stamped "$dev" "$seek" "$count" 1 "$skip"
			stamped "$dev" 0 "$seek" 4 0
			sgp run_pdd if="$dev" of="$B" skip="$seek" seek="$skip" count="$count" "${ops[@]}"
			expect_rc 0
			stamped "$b" "$skip" "$count" 1 "$skip"
			losetup -d "$dev"
			sed -i "\\|^$dev\$|d" "$T/.loops"
		fi
	done

	# --- whole device: the size from READ CAPACITY, flushed at the end
	: >"$T/log"
	"$STAMP" fill "$b" 0 "$bytes" 2
	sgp run_pdd if="$A" of="$B"
	expect_rc 0
	expect_err "$NB+0 records out"
	cmp -s -n "$bytes" "$a" "$b" || fail "whole-device copy differs"
	logged "SYNCHRONIZE CACHE(10)"
	: >"$T/log"
	sgp run_pdd if="$A" of="$B" sync=0 count=10
	expect_rc 0
	! grep -qF "SYNCHRONIZE CACHE" "$T/log" || fail "sync=0 still synchronized the cache"

	# --- a file that ends inside a block: the block's rest goes as zeros
	head -c $((3 * lbs + 100)) "$src" >"$T/tail.img"
	"$STAMP" fill "$b" 0 "$bytes" 2
	sgp run_pdd if="$T/tail.img" of="$B" seek=5
	expect_rc 0
	expect_err "3+1 records in"
	expect_err "3+1 records out"
	cmp -s -n $((3 * lbs + 100)) -i 0:$((5 * lbs)) "$T/tail.img" "$b" || fail "partial block copy"
	cmp -s -n $((lbs - 100)) -i 0:$((8 * lbs + 100)) /dev/zero "$b" || fail "the partial block is not padded with zeros"
	stamped "$b" 9 10 2 9

	# --- medium error: coe zero-fills exactly the bad blocks, as sg_dd
	faults="medium@$A:1000-1003"
	for bpt in 7 128; do
		rm -f "$T/p.img" "$T/s.img"
		sgp run_pdd if="$A" of="$T/p.img" bpt=$bpt coe=1
		expect_rc 3
		for l in 1000 1001 1002 1003; do
			expect_err "pdd: '$A': LBA $l ($lbs bytes at byte $((l * lbs))) cannot be read; writing zeros"
		done
		expect_err "pdd: 4 unreadable blocks of $lbs bytes written as zeros, LBA 1000 to 1003"
		expect_err "$NB+0 records out"
		sgdd if="$A" of="$T/s.img" bs="$lbs" bpt=$bpt coe=1
		cmp -s "$T/p.img" "$T/s.img" || fail "pdd coe=1 and sg_dd coe=1 differ (bpt=$bpt)"
		same_records
		stamped "$T/p.img" 0 1000 1 0
		zeros "$T/p.img" 1000 4
		stamped "$T/p.img" 1004 $((NB - 1004)) 1 1004
	done
	# retries=2: each bad block is read twice more, alone, before zeros
	: >"$T/log"
	rm -f "$T/p.img"
	sgp run_pdd if="$A" of="$T/p.img" bpt=128 coe=1 retries=2
	expect_rc 3
	for l in 1000 1001 1002 1003; do
		[ "$(grep -c "lba $l blocks 1 " "$T/log")" = 2 ] || fail "LBA $l was not retried twice alone"
	done
	stamped "$T/p.img" 1004 $((NB - 1004)) 1 1004
	# coe_limit=2: the second bad block is the last, and the rest can resume
	rm -f "$T/p.img"
	sgp run_pdd if="$A" of="$T/p.img" bpt=128 coe=1 coe_limit=2
	expect_rc 3
	expect_err "pdd: coe_limit=2 reached: stopping after LBA 1001"
	expect_err "pdd: 2 unreadable blocks of $lbs bytes written as zeros, LBA 1000 to 1001"
	expect_err "pdd: to resume: pdd if=$A of=$T/p.img bpt=128 coe=1 coe_limit=2${PDD_ENGINE:+ engine=$PDD_ENGINE} bs=$lbs skip=1002 seek=1002 count=$((NB - 1002))"
	[ "$(stat -c %s "$T/p.img")" = $((1002 * lbs)) ] || fail "coe_limit did not stop after block 1001"
	# map=: the sense INFO field names the bad blocks; the map lists
	# exactly them, and a rerun once they read again reads only them
	rm -f "$T/p.img" "$T/p.map"
	sgp run_pdd if="$A" of="$T/p.img" bpt=128 coe=1 map="$T/p.map"
	expect_rc 3
	[ "$(ddrescuelog -b "$lbs" -l- "$T/p.map" | tr '\n' ' ')" = "1000 1001 1002 1003 " ] ||
		fail "the sg map's bad blocks: $(ddrescuelog -b "$lbs" -l- "$T/p.map" | tr '\n' ' ')"
	faults=""
	: >"$T/log"
	sgp run_pdd if="$A" of="$T/p.img" bpt=128 coe=1 map="$T/p.map"
	expect_rc 0
	expect_err "4+0 records out"
	[ "$(grep -c " $A READ(" "$T/log")" = 1 ] && grep -q " $A READ(.* lba 1000 blocks 4 " "$T/log" ||
		{ grep " $A READ(" "$T/log"; fail "the rerun read more than the 4 bad blocks"; }
	stamped "$T/p.img" 0 "$NB" 1 0
	faults="medium@$A:1000-1003"
	# without coe the copy stops exactly at the first bad block
	rm -f "$T/p.img"
	sgp run_pdd if="$A" of="$T/p.img" bpt=128
	expect_rc 3
	expect_err "pdd: error reading '$A' at block 1000: Medium or hardware error"
	expect_err "pdd: $((1000 * lbs)) bytes are copied: input below block 1000 is in output below block 1000"
	[ "$(stat -c %s "$T/p.img")" = $((1000 * lbs)) ] || fail "the blocks before the bad one were not all written"
	stamped "$T/p.img" 0 1000 1 0
	# a write error: the copy stops, naming the block the device named
	faults="wmedium@$B:300"
	sgp run_pdd if="$a" of="$B" count="$NB" bpt=64
	expect_rc 3
	expect_err "pdd: error writing '$B' at block 300: Medium or hardware error"
	expect_err "pdd: $((256 * lbs)) bytes are copied: input below block 256 is in output below block 256"

	# --- statuses: each SCSI condition has its exit status
	faults="ua@$A:always"
	sgp run_pdd if="$A" of=/dev/null
	expect_rc 6
	expect_err "pdd: cannot read the capacity of '$A': Unit attention"
	faults="notready@$A:always"
	sgp run_pdd if="$A" of=/dev/null
	expect_rc 2
	expect_err "pdd: cannot read the capacity of '$A': Device not ready"
	faults="illegal@$B:always"
	sgp run_pdd if="$A" of="$B"
	expect_rc 5
	expect_err "pdd: cannot read the capacity of '$B': Illegal request"
	faults="timeout@$A:1"
	sgp run_pdd if="$A" of=/dev/null
	expect_rc 33
	expect_err "pdd: cannot read the capacity of '$A': SCSI command timeout"
	faults="aborted@$A:always"
	sgp run_pdd if="$A" of=/dev/null
	expect_rc 11
	expect_err "pdd: cannot read the capacity of '$A': Aborted command"
	# the same in the middle of the copy (io- faults spare READ CAPACITY):
	# ten unit attentions are retried, the eleventh is the end
	faults="io-ua@$A:10"
	sgp run_pdd if="$A" of="$T/u.img" qd=1
	expect_rc 0
	cmp -s -n "$bytes" "$a" "$T/u.img" || fail "copy after 10 unit attentions differs"
	faults="io-ua@$A:always"
	sgp run_pdd if="$A" of=/dev/null
	expect_rc 6
	expect_err "pdd: error reading '$A' at block 0: Unit attention"
	faults="io-aborted@$B:always"
	sgp run_pdd if="$A" of="$B" count=10
	expect_rc 11
	expect_err "pdd: error writing '$B' at block 0: Aborted command"
	faults="io-timeout@$A:1"
	sgp run_pdd if="$A" of=/dev/null timeout=5
	expect_rc 33
	expect_err "pdd: error reading '$A' at block 0: SCSI command timeout"
	faults="io-notready@$A:1"
	sgp run_pdd if="$A" of=/dev/null
	expect_rc 2
	expect_err "pdd: error reading '$A' at block 0: Device not ready"
	# errors the device recovered: reported by LBA, counted, no harm done
	faults="recovered@$A:100-101,recovered@$A:3000"
	rm -f "$T/u.img"
	sgp run_pdd if="$A" of="$T/u.img" bpt=128
	expect_rc 0
	expect_err "pdd: '$A': the device recovered an error at LBA 100"
	expect_err "pdd: '$A': the device recovered an error at LBA 3000"
	expect_err "pdd: 2 errors recovered by the device"
	cmp -s -n "$bytes" "$a" "$T/u.img" || fail "copy with recovered errors differs"
	# a few unit attentions and aborts are retried, and the copy is exact
	faults="ua@$A:4,aborted@$A:3"
	sgp run_pdd if="$A" of="$T/u.img"
	expect_rc 0
	cmp -s -n "$bytes" "$a" "$T/u.img" || fail "copy after retries differs"
	faults=

	# a map rerun to an sg output: a piece the map leaves is widened to the
	# output's whole blocks, not written at a rounded-down LBA
	if [ "$lbs" = 4096 ]; then
		sgp run_pdd if="$src" of="$B" bs=4096 count=64
		expect_rc 0
		printf '0 ?\n0 0x1200 +\n0x1200 0x200 ?\n0x1400 %d +\n' $((64 * 4096 - 0x1400)) >"$T/wm"
		dd if=/dev/zero of="$b" bs=4096 seek=1 count=1 conv=notrunc status=none
		sgp run_pdd if="$src" of="$B" bs=4096 count=64 map="$T/wm"
		expect_rc 0
		expect_err "1+0 records out"
		cmp -s -n $((64 * 4096)) "$src" "$b" || fail "a map rerun to a 4096-byte sg device wrote the wrong bytes"
	fi
done

# the map's periodic save flushes an sg output whose one descriptor
# (oflag=excl) is full of WRITEs: the writes pause, the save goes through
devs="$T/nodes/sgw=$T/w.img:512"
faults=
"$STAMP" fill "$T/w.src" 0 $((2 * 1048576)) 8
truncate -s $((2 * 1048576)) "$T/w.img"
rm -f "$T/wm"
SGDOUBLE_LATENCY_US=50000 sgp run_pdd if="$T/w.src" of="$T/nodes/sgw" oflag=excl bs=512 bpt=8 qd=64 \
	map="$T/wm" map_interval=1
expect_rc 0
cmp -s "$T/w.src" "$T/w.img" || fail "the copy with map saves to an sg device differs"
[ -e "$T/wm.bak" ] || fail "no periodic map save during the sg copy"

# --- refusals, before anything is written
lbs=512
devs="$T/nodes/sga=$T/a512.img:512,$T/nodes/sgk=$T/a4096.img:4096"
A=$T/nodes/sga K=$T/nodes/sgk
sgp run_pdd if="$K" of="$T/r.img" bs=512
expect_rc 31
expect_err "pdd: bs=512: '$K' is an sg device with 4096-byte logical blocks; give bs=4096"
[ ! -e "$T/r.img" ] || fail "a refused copy created its output"
sgp run_pdd if="$A" of="$T/r.img" bpt=4096
expect_rc 31
expect_err "pdd: bpt=4096: a transfer of 2097152 bytes is more than one command to '$A' may move (1310720 bytes); give bpt=2560 or less"
sgp run_pdd if="$T/a512.img" of="$A"
expect_rc 31
expect_err "pdd: '$A' is too small: the copy needs $((5000 * 512 + 100)) bytes from byte 0 on, and the device holds $((5000 * 512)); give count= to copy less"
sgp run_pdd if="$A" of="$T/r.img" cdbsz=6 iflag=fua
expect_rc 31
expect_err "pdd: cdbsz=6: a 6-byte CDB has no FUA or DPO bit, which '$A' is to get; give cdbsz=10 or more"
# engine= names the engine of the side that is not sg; the sg side keeps sg
for e in uring aio threads; do
	rm -f "$T/e.img"
	rc=0
	sgp "$PDD" if="$A" of="$T/e.img" engine=$e bpt=16 count=1000 2>"$T/err" || rc=$?
	expect_rc 0
	cmp -s -n $((1000 * 512)) "$T/a512.img" "$T/e.img" || fail "sg to a file with engine=$e differs"
	sgp "$PDD" if="$A" of="$T/e.img" engine=$e count=8 --dry-run >"$T/plan" 2>"$T/err" ||
		fail "the dry run of sg to a file with engine=$e failed: $(cat "$T/err")"
	grep -q "^  using   engine=sg for the input and $e for the output, " "$T/plan" ||
		fail "the dry run of sg to a file with engine=$e does not name both engines: $(cat "$T/plan")"
	rc=0
	sgp "$PDD" if="$A" of="$T/e.img" engine=$e count=8 status=json >"$T/json" 2>"$T/err" || rc=$?
	expect_rc 0
	python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
assert (j['engine'], j['input']['engine'], j['output']['engine']) == ('sg,$e', 'sg', '$e'), j
" "$T/json" || fail "status=json of sg to a file with engine=$e does not name each side's engine"
done
# a discarding output needs no engine
rc=0
sgp "$PDD" if="$A" of=/dev/null count=8 status=json >"$T/json" 2>"$T/err" || rc=$?
expect_rc 0
python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
assert (j['engine'], j['input']['engine'], j['output']['engine']) == ('sg', 'sg', None), j
" "$T/json" || fail "status=json of sg to /dev/null: engines"
rc=0
"$PDD" if="$T/a512.img" of=/dev/null engine=sg 2>"$T/err" || rc=$?
expect_rc 31
expect_err "pdd: engine=sg: neither side is an sg device"
# an exclusive open of a device already open fails at once, not waits
sgp run_pdd if="$A" of="$A" oflag=excl count=1
expect_rc 66
expect_err "pdd: cannot open '$A' for writing: Device or resource busy"
# bs defaults to the logical block size of the sg side
rm -f "$T/k.img"
sgp run_pdd if="$K" of="$T/k.img" count=3
expect_rc 0
[ "$(stat -c %s "$T/k.img")" = 12288 ] || fail "bs did not default to the sg input's 4096"
sgp run_pdd if="$T/k.img" of="$K" seek=1
expect_rc 0
expect_err "3+0 records out"

# --- commands: FUA and DPO bits, CDB sizes, descriptors past 16 in flight
: >"$T/log"
sgp run_pdd if="$A" of="$A" skip=100 seek=2000 count=64 bpt=64 cdbsz=10 fua=1 iflag=dpo
expect_rc 0
logged "READ(10) [28 10 00 00 00 64 00 00 40 00]"
logged "WRITE(10) [2a 08 00 00 07 d0 00 00 40 00]"
: >"$T/log"
sgp run_pdd if="$A" of=/dev/null count=64 bpt=64 cdbsz=16 fua=2
expect_rc 0
logged "READ(16) [88 08 00 00 00 00 00 00 00 00 00 00 00 40 00 00]"
: >"$T/log"
sgp run_pdd if="$A" of=/dev/null bpt=8 qd=40 count=320
expect_rc 0
[ "$(grep -c "open $A as fd" "$T/log")" = 3 ] || fail "qd=40 should open 3 descriptors: $(grep -c "open $A" "$T/log")"
: >"$T/log"
rm -f "$T/x.img"
sgp run_pdd if="$A" of="$T/x.img" bpt=8 qd=40 iflag=excl
expect_rc 0
cmp -s -n $((5000 * 512)) "$T/a512.img" "$T/x.img" || fail "exclusive copy differs"
[ "$(grep -c "open $A as fd" "$T/log")" = 1 ] || fail "iflag=excl opened more than one descriptor"
# cdbsz=6 reaches LBA 2^21 - 1; beyond, pdd says it moves to 10 bytes
big=$T/mid.img
truncate -s $(((1 << 21) * 512 + 64 * 512)) "$big"
devs="$T/nodes/sgm=$big"
: >"$T/log"
sgp run_pdd of="$T/nodes/sgm" if="$T/a512.img" seek=$(((1 << 21) - 64)) count=128 bpt=64 cdbsz=6 verbose=1
expect_rc 0
expect_err "pdd: '$T/nodes/sgm': cdbsz=6 cannot address LBA 2097152 + 64 blocks; using 10-byte CDBs"
logged "WRITE(6)"
logged "WRITE(10)"
rm -f "$big"

# --- past 2^32 blocks: READ CAPACITY(16), 16-byte CDBs, 64-bit INFO
big=$T/big.img
high=$((4294967296 - 500))
if truncate -s $(((high + 1500) * 512)) "$big" 2>/dev/null; then
	devs="$T/nodes/sgbig=$big" faults=
	"$STAMP" fill "$T/bigsrc.img" 0 $((1500 * 512)) 6
	# sparse=0: the first write is the whole first transfer, not cut
	# where the output's grains begin (seek= is not on one)
	sgp run_pdd if="$T/bigsrc.img" of="$T/nodes/sgbig" seek="$high" bpt=128 sparse=0 verbose=1
	expect_rc 0
	expect_err "pdd: '$T/nodes/sgbig': cdbsz=10 cannot address LBA 4294967180 + 128 blocks; using 16-byte CDBs"
	stamped "$big" "$high" 1500 6 0
	faults="medium:4294967300"
	rm -f "$T/p.img" "$T/s.img"
	sgp run_pdd if="$T/nodes/sgbig" of="$T/p.img" skip="$high" coe=1
	expect_rc 3
	expect_err "pdd: '$T/nodes/sgbig': LBA 4294967300 (512 bytes at byte $((4294967300 * 512))) cannot be read; writing zeros"
	sgdd if="$T/nodes/sgbig" of="$T/s.img" bs=512 skip="$high" coe=1
	cmp -s "$T/p.img" "$T/s.img" || fail "past 2^32: pdd and sg_dd differ"
	rm -f "$big"
else
	echo "no 2 TiB sparse file here: the checks past 2^32 blocks are left out"
fi
echo "pdd copies sg devices exactly, as sg_dd does"
