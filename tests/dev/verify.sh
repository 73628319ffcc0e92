#!/bin/bash
# verify=1 and verify=only: a clean copy compares identical; blocks
# changed in the destination afterwards are counted and the lowest named,
# in blocks of bs from the start of the output (seek= included), on loop
# devices with 512- and 4096-byte sectors and on regular files (one file
# system that refuses O_DIRECT, ramfs); an output shorter than the range;
# a read error while comparing; a copy that fails is not compared; and
# the refusals (stream input, /dev/null, coe=1, map=, oflag=append, sg),
# with nothing written.
. "$(dirname "$0")/../lib.sh"
requires_root

MiB=1048576
"$STAMP" fill "$T/a.img" 0 $((4 * MiB)) 11
A=$(mkloop "$T/a.img" 512)
"$STAMP" fill "$T/b.img" 0 $((8 * MiB)) 22
B=$(mkloop "$T/b.img" 512)
"$STAMP" fill "$T/c.img" 0 $((8 * MiB)) 33
C=$(mkloop "$T/c.img" 4096)
"$STAMP" fill "$T/d.img" 0 $((8 * MiB)) 44
D=$(mkloop "$T/d.img" 4096)
head -c 4096 /dev/urandom >"$T/junk"

# poke DEV BS BLK: overwrite block BLK of DEV (in blocks of BS) with
# other bytes, past the page cache as a disk fault would be
poke() {
	dd if="$T/junk" of="$1" bs="$2" seek="$3" count=1 conv=notrunc oflag=direct status=none ||
		fail "dd could not change block $3 of $1"
}
ident() { expect_err "pdd: verify: $1 blocks of $2 bytes compared, all identical"; }
no_verify() { grep -q '^pdd: verify' "$T/err" && { cat "$T/err"; fail "a verify line (line ${BASH_LINENO[0]})"; }; return 0; }

# --- 512-byte sectors, whole device onto a larger one
run_pdd if="$A" of="$B" verify=1
expect_rc 0
expect_err "8192+0 records out"
ident 8192 512
# the verify line comes after the copy's report
[ "$(tail -1 "$T/err")" = "pdd: verify: 8192 blocks of 512 bytes compared, all identical" ] ||
	{ cat "$T/err"; fail "verify line not last"; }

b1=$((RANDOM % 8192))
poke "$B" 512 "$b1"
run_pdd if="$A" of="$B" verify=only
expect_rc 14
expect_err "pdd: verify: 1 of 8192 blocks of 512 bytes differs: block $b1 of '$B'"
grep -q 'records' "$T/err" && fail "verify=only printed a records line"
"$STAMP" check "$B" $((8192 * 512)) $((4 * MiB)) 22 $((8192 * 512)) || fail "verify=only wrote"

b2=$(( (b1 + 1 + RANDOM % 8191) % 8192 ))
poke "$B" 512 "$b2"
run_pdd if="$A" of="$B" verify=only threads=3 bpt=7
expect_rc 14
expect_err "pdd: verify: 2 of 8192 blocks of 512 bytes differ, the first at block $((b1 < b2 ? b1 : b2)) of '$B'"

# a block outside the range differs, and no one cares
run_pdd if="$A" of="$B" verify=1
expect_rc 0
ident 8192 512
poke "$B" 512 $((8192 + RANDOM % 8192))
run_pdd if="$A" of="$B" verify=only
expect_rc 0
ident 8192 512

# --- skip=, seek=, count=: block numbers are the output's, seek included
skip=$((RANDOM % 100)) seek=$((RANDOM % 4000)) count=$((1000 + RANDOM % 3000))
run_pdd if="$A" of="$B" skip=$skip seek=$seek count=$count bpt=$((1 + RANDOM % 64)) verify=1
expect_rc 0
ident $count 512
"$STAMP" check "$B" $((seek * 512)) $((count * 512)) 11 $((skip * 512)) || fail "skip/seek copy"
j=$((RANDOM % count))
poke "$B" 512 $((seek + j))
run_pdd if="$A" of="$B" skip=$skip seek=$seek count=$count verify=only
expect_rc 14
expect_err "pdd: verify: 1 of $count blocks of 512 bytes differs: block $((seek + j)) of '$B'"

# --- 4096-byte sectors: bs defaults to 4096
run_pdd if="$C" of="$D" count=1000 verify=1
expect_rc 0
ident 1000 4096
b1=$((RANDOM % 1000))
poke "$D" 4096 "$b1"
run_pdd if="$C" of="$D" count=1000 verify=only
expect_rc 14
expect_err "pdd: verify: 1 of 1000 blocks of 4096 bytes differs: block $b1 of '$D'"
# 512 -> 4Kn with bs=512: the block is counted in bs units
run_pdd if="$A" of="$D" bs=512 seek=16 count=4096 verify=1
expect_rc 0
ident 4096 512
poke "$D" 4096 10	# 512-byte blocks 80..87 of the output, all in the range
run_pdd if="$A" of="$D" bs=512 seek=16 count=4096 verify=only
expect_rc 14
expect_err "pdd: verify: 8 of 4096 blocks of 512 bytes differ, the first at block 80 of '$D'"

# --- regular files
"$STAMP" fill "$T/f" 0 3000000 55
run_pdd if="$T/f" of="$T/g" verify=1
expect_rc 0
expect_err "5859+1 records out"
ident 5860 512
b1=$((RANDOM % 5859))
poke "$T/g" 512 "$b1"
run_pdd if="$T/f" of="$T/g" verify=only
expect_rc 14
expect_err "pdd: verify: 1 of 5860 blocks of 512 bytes differs: block $b1 of '$T/g'"
# the last, partial block
printf 'x' | dd of="$T/g" bs=1 seek=2999999 conv=notrunc status=none
run_pdd if="$T/f" of="$T/g" verify=only
expect_rc 14
expect_err "pdd: verify: 2 of 5860 blocks of 512 bytes differ, the first at block $b1 of '$T/g'"
# from standard input redirected from a file, reopened to read again
pdd of="$T/h" verify=1 <"$T/f" 2>"$T/err" || fail "stdin file copy with verify"
ident 5860 512

# an output shorter than the range: the missing blocks differ
cp "$T/f" "$T/short"
truncate -s $((1000 * 512 + 100)) "$T/short"
run_pdd if="$T/f" of="$T/short" verify=only
expect_rc 14
expect_err "pdd: verify: 4860 of 5860 blocks of 512 bytes differ, the first at block 1000 of '$T/short'"
[ "$(stat -c %s "$T/short")" = $((1000 * 512 + 100)) ] || fail "verify=only changed the short output"

# a file system without O_DIRECT: read through the page cache instead
mkdir "$T/ram"
mount -t ramfs pdd-test "$T/ram" || fail "cannot mount a ramfs"
echo "$T/ram" >>"$T/.mounts"
cp "$T/f" "$T/ram/f"
run_pdd if="$T/ram/f" of="$T/ram/g" verify=1 -v
expect_rc 0
ident 5860 512
expect_err "pdd: verify: reading '$T/ram/g' through the page cache"
dd if="$T/junk" of="$T/ram/g" bs=512 seek=7 count=1 conv=notrunc status=none
run_pdd if="$T/ram/f" of="$T/ram/g" verify=only
expect_rc 14
expect_err "pdd: verify: 1 of 5860 blocks of 512 bytes differs: block 7 of '$T/ram/g'"

# --- a copy that fails is not compared: the copy's status
"$STAMP" fill "$T/small.img" 0 $MiB 66
S=$(mkloop "$T/small.img" 512)
run_pdd if="$A" of="$S" count=4096 verify=1
expect_rc 15
expect_err "pdd: error writing '$S' at block 2048: No space left on device"
no_verify

# --- a read error while comparing: reported as the copy reports one, at
# the start of the read that failed (bpt=1: the bad block itself)
if [ -x "$FAULTFS" ] && [ -c /dev/fuse ] && command -v fusermount3 >/dev/null; then
	"$STAMP" fill "$T/fback" 0 $MiB 55
	mkfaultfs "$T/fback" "$T/fmnt" read=51200-51712
	run_pdd if="$T/f" of="$T/fmnt/disk" count=2048 bpt=1 verify=only
	expect_rc 3
	expect_err "pdd: error reading '$T/fmnt/disk' at block 100: Input/output error"
	grep -qE "^pdd: verify stopped: [0-9]+ of 2048 blocks of 512 bytes compared$" "$T/err" ||
		{ cat "$T/err"; fail "no 'verify stopped' line"; }
fi

# --- refusals: exit 31, one line, nothing written
cat "$T/f" | { pdd of="$T/new" verify=1 2>"$T/err"; echo $? >"$T/rc"; }
rc=$(cat "$T/rc")
expect_rc 31
expect_err "pdd: verify=1: 'standard input' is a fifo, which cannot be read again"
[ -e "$T/new" ] && fail "refused verify created the output"
run_pdd if="$T/f" of=/dev/null verify=1
expect_rc 31
expect_err "pdd: verify=1: '/dev/null' discards what is written: there is nothing to compare"
run_pdd if="$T/f" of="$T/new" coe=1 verify=1
expect_rc 31
expect_err "pdd: verify=1 and coe=1 contradict: blocks written as zeros cannot match"
run_pdd if="$T/f" of="$T/new" map="$T/map" verify=1
expect_rc 31
expect_err "pdd: verify=1 and map= contradict: a run with a map copies only part of the range"
run_pdd if="$T/f" of="$T/new" oflag=append verify=1
expect_rc 31
expect_err "pdd: verify=1 and oflag=append contradict: the range written to '$T/new' is not known"
run_pdd if="$T/f" of="$T/new" coe=1 verify=1 --dry-run
expect_rc 31
[ -e "$T/new" ] || [ -e "$T/map" ] && fail "a refused verify left a file"
before=$(md5sum <"$B")
run_pdd if="$A" of="$B" seek=1 coe=1 verify=1
expect_rc 31
[ "$(md5sum <"$B")" = "$before" ] || fail "a refused verify wrote to the device"
# verify=only needs the output to exist, and makes nothing
run_pdd if="$T/f" of="$T/missing" verify=only
expect_rc 52
expect_err "pdd: cannot open '$T/missing' for reading: No such file or directory"
[ -e "$T/missing" ] && fail "verify=only created the output"
run_pdd if="$T/f" of=x verify=2
expect_rc 1
expect_err "pdd: verify=2: choose 0, 1, only or hash"
# an sg device on either side is read back through the sg engine (the
# double), the other side through the engine under test
if [ -e "$SGD" ]; then
	truncate -s $MiB "$T/sgback"
	sgv() {
		rc=0
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
		LD_PRELOAD=$SGD SGDOUBLE_DEVS="$T/sg=$T/sgback" \
			"$PDD" "$@" ${PDD_ENGINE:+engine=$PDD_ENGINE} 2>"$T/err" || rc=$?
	}
	sgv if="$T/f" of="$T/sg" count=100 verify=1
	expect_rc 0
	expect_err "pdd: verify: 100 blocks of 512 bytes compared, all identical"
	cmp -s -n 51200 "$T/sgback" "$T/f" || fail "the sg device does not hold the copy"
	sgv if="$T/sg" of="$T/sgout" count=100 verify=1
	expect_rc 0
	expect_err "pdd: verify: 100 blocks of 512 bytes compared, all identical"
	# held exclusively (excl), it is read back through the copy's own
	# descriptor: the driver would refuse a second open
	sgv if="$T/sg" of="$T/sgout" count=100 iflag=excl verify=1
	expect_rc 0
	expect_err "pdd: verify: 100 blocks of 512 bytes compared, all identical"
	sgv if="$T/sgout" of="$T/sg" count=100 oflag=excl verify=only
	expect_rc 0
	expect_err "pdd: verify: 100 blocks of 512 bytes compared, all identical"
	# block 42 changed behind the copy's back: found on the sg side
	printf 'Z' | dd of="$T/sgback" bs=1 seek=$((42 * 512 + 7)) conv=notrunc status=none
	sgv if="$T/f" of="$T/sg" count=100 verify=only
	expect_rc 14
	expect_err "pdd: verify: 1 of 100 blocks of 512 bytes differs: block 42 of '$T/sg'"
fi
echo "verify compares exactly"
