#!/bin/bash
# A loop device's bytes are its backing file's: a copy between a loop
# device and its own backing file, between two loop devices over one file,
# or from a partition of such a loop device, is refused where the ranges
# overlap in the file (the loop's offset and the partition's start
# counted), in a dry run too, and copied where they do not.  Every refused
# copy leaves the file as it was.
. "$(dirname "$0")/../lib.sh"
requires_root

MiB=1048576

# mkloop_at FILE OFFSET: a loop device over FILE from byte OFFSET on
mkloop_at() {
	local dev
	dev=$(losetup --find --show --direct-io=on --offset "$2" "$1") ||
		fail "losetup --offset $2 on $1 failed"
	echo "$dev" >>"$T/.loops"
	echo "$dev"
}

# refused ARGS... -- MESSAGE: pdd ARGS exits 31 with MESSAGE, and the same
# with --dry-run; $A keeps its bytes
refused() {
	local args=() m
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	m=$2
	for dry in "" --dry-run; do
		run_pdd "${args[@]}" $dry
		expect_rc 31
		expect_err "$m"
		same_bytes "$A" "$T/a.orig"
	done
}

A=$T/a.img
"$STAMP" fill "$A" 0 $((4 * MiB)) 1
cp "$A" "$T/a.orig"
L=$(mkloop "$A")

# --- the loop device to its own file, and the file to the loop device
refused if="$L" of="$A" count=2048 -- \
	"pdd: '$A' and the input '$L' are in the file '$A' (the input is a loop device over it), where the output's bytes 0 to 1048575 overlap the input's bytes 0 to 1048575"
refused if="$L" of="$A" skip=2048 seek=2560 count=2048 -- \
	"pdd: '$A' and the input '$L' are in the file '$A' (the input is a loop device over it), where the output's bytes 1310720 to 2359295 overlap the input's bytes 1048576 to 2097151"
refused if="$A" of="$L" skip=1 count=8 -- \
	"pdd: '$L' and the input '$A' are in the file '$A' (the output is a loop device over it), where the output's bytes 0 to 4095 overlap the input's bytes 512 to 4607"
# the copy of the file onto its whole loop device, the plain mistake
refused if="$A" of="$L" -- \
	"pdd: '$L' and the input '$A' are in the file '$A' (the output is a loop device over it), where the output's bytes 0 to 4194303 overlap the input's bytes 0 to 4194303"

# --- a partition of the loop device: bytes 1 MiB to 2 MiB of the file
add_partition "$L" 2 2048 2048
P=$part
refused if="$P" of="$A" seek=2560 count=1024 -- \
	"pdd: '$A' and the input '$P' are in the file '$A' (the input is a partition of the loop device '$L' over it), where the output's bytes 1310720 to 1835007 overlap the input's bytes 1048576 to 1572863"
refused if="$A" of="$P" skip=2100 count=100 -- \
	"pdd: '$P' and the input '$A' are in the file '$A' (the output is a partition of the loop device '$L' over it), where the output's bytes 1048576 to 1099775 overlap the input's bytes 1075200 to 1126399"

# --- a loop device 1 MiB into the file (losetup -o)
LO=$(mkloop_at "$A" $MiB)
refused if="$LO" of="$A" seek=3072 count=2048 -- \
	"pdd: '$A' and the input '$LO' are in the file '$A' (the input is a loop device over it), where the output's bytes 1572864 to 2621439 overlap the input's bytes 1048576 to 2097151"
# two loop devices over one file, named as the kernel has it
refused if="$L" of="$LO" skip=2560 count=2048 -- \
	"pdd: '$LO' and the input '$L' are in the file '$(realpath "$A")' (the input is a loop device over it; the output is a loop device over it), where the output's bytes 1048576 to 2097151 overlap the input's bytes 1310720 to 2359295"

# --- a loop device with 4096-byte sectors (bs is 4096 by default)
L4=$(mkloop "$A" 4096)
refused if="$L4" of="$A" count=256 -- \
	"pdd: '$A' and the input '$L4' are in the file '$A' (the input is a loop device over it), where the output's bytes 0 to 1048575 overlap the input's bytes 0 to 1048575"
refused if="$A" of="$L4" bs=4096 skip=1 count=4 -- \
	"pdd: '$L4' and the input '$A' are in the file '$A' (the output is a loop device over it), where the output's bytes 0 to 16383 overlap the input's bytes 4096 to 20479"

# --- a loop device over a loop device over the file
LL=$(mkloop "$LO")
refused if="$LL" of="$A" seek=2048 count=8 -- \
	"pdd: '$A' and the input '$LL' are in the file '$A' (the input is a loop device over it), where the output's bytes 1048576 to 1052671 overlap the input's bytes 1048576 to 1052671"

# --- the kernel names the file by device and inode: a loop device whose
# file is reached only by another name (sysfs says "(deleted)") still is
"$STAMP" fill "$T/c.img" 0 $((2 * MiB)) 2
LC=$(mkloop "$T/c.img")
ln "$T/c.img" "$T/c.link"
rm "$T/c.img"
cp "$T/c.link" "$T/c.orig"
run_pdd if="$LC" of="$T/c.link" seek=1 count=8
expect_rc 31
expect_err "pdd: '$T/c.link' and the input '$LC' are in the file '$T/c.link' (the input is a loop device over it), where the output's bytes 512 to 4607 overlap the input's bytes 0 to 4095"
same_bytes "$T/c.link" "$T/c.orig"

# --- ranges that do not overlap in the file are copied
"$STAMP" fill "$T/b.img" 0 $((4 * MiB)) 3
LB=$(mkloop_at "$T/b.img" $MiB)		# bytes 1 MiB to 4 MiB of b.img
# the loop's first MiB (1 to 2 MiB of the file) after it, 2 to 3 MiB
run_pdd if="$LB" of="$T/b.img" seek=4096 count=2048
expect_rc 0
"$STAMP" check "$T/b.img" $((2 * MiB)) $MiB 3 $MiB || fail "loop -> file past its range"
"$STAMP" check "$T/b.img" 0 $((2 * MiB)) 3 0 || fail "loop -> file: before the range"
"$STAMP" check "$T/b.img" $((3 * MiB)) $MiB 3 $((3 * MiB)) || fail "loop -> file: after the range"
# the file's first MiB, which the loop does not see, onto the loop's last
run_pdd if="$T/b.img" of="$LB" seek=4096 count=2048
expect_rc 0
"$STAMP" check "$T/b.img" $((3 * MiB)) $MiB 3 0 || fail "file -> loop past its range"
# oflag=trunc would cut off what the loop reads: refused; the file's size
# stays, the bytes too
cp "$T/b.img" "$T/b.orig"
run_pdd if="$LB" of="$T/b.img" seek=2048 skip=2048 count=1024 oflag=trunc
expect_rc 31
expect_err "pdd: '$T/b.img' and the input '$LB' are in the file '$T/b.img' (the input is a loop device over it), where the output's bytes 1048576 to the end overlap the input's bytes 2097152 to 2621439"
same_bytes "$T/b.img" "$T/b.orig"
echo "loop devices seen through"
