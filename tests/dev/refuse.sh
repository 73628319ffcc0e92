#!/bin/bash
# engines: threads
# The wrong disk is refused before anything is written, in a dry run too:
# a mounted device, a disk whose partition is mounted, active swap, a
# device another program holds exclusively, and a copy whose output range
# overlaps its input on one device, disk or file.  oflag=force gets past
# the exclusive hold only.  Every refused device keeps its contents.
. "$(dirname "$0")/../lib.sh"
requires_root

# What this test sets up beyond lib.sh's loops and mounts is undone first,
# while the loop devices are still attached: the holder is killed, the
# file systems unmounted (those that will not go are left in .mounts for
# lib.sh) and swap turned off; lib.sh deletes the added partitions.
holder= swaps=
undo() {
	local m left= s
	if [ -n "$holder" ]; then
		kill "$holder" 2>/dev/null
		wait "$holder" 2>/dev/null
	fi
	while read -r m; do
		[ -n "$m" ] || continue
		umount "$m" 2>/dev/null || left="$left$m"$'\n'
	done <"$T/.mounts"
	printf '%s' "$left" >"$T/.mounts"
	for s in $swaps; do swapoff "$s"; done
}
trap 'undo; cleanup' EXIT

MiB=1048576
"$STAMP" fill "$T/src.img" 0 $((4 * MiB)) 1

# unchanged DEV SUM: DEV still has the sha256 SUM it had before
unchanged() {
	[ "$(sha256sum <"$1")" = "$2" ] || fail "refused copy changed $1 (line ${BASH_LINENO[0]})"
}

mkext4() {
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$1" || fail "mkfs.ext4 $1"
}

mountit() {
	mkdir -p "$2"
	mount "$1" "$2" || fail "cannot mount $1 on $2"
	echo "$2" >>"$T/.mounts"
	sync
}

# --- a mounted device: refused by name, with or without force, dry or not
truncate -s $((16 * MiB)) "$T/fs.img"
FS=$(mkloop "$T/fs.img")
mkext4 "$FS"
mountit "$FS" "$T/mnt"
before=$(sha256sum <"$FS")
run_pdd if="$T/src.img" of="$FS"
expect_rc 66
expect_err "pdd: '$FS' is mounted on $T/mnt: pdd does not write to a mounted device"
run_pdd if="$T/src.img" of="$FS" --dry-run
expect_rc 66
expect_err "pdd: '$FS' is mounted on $T/mnt: pdd does not write to a mounted device"
run_pdd if="$T/src.img" of="$FS" oflag=force
expect_rc 66
expect_err "pdd: '$FS' is mounted on $T/mnt: pdd does not write to a mounted device"
run_pdd if="$T/src.img" of="$FS" oflag=force --dry-run
expect_rc 66
expect_err "pdd: '$FS' is mounted on $T/mnt: pdd does not write to a mounted device"
unchanged "$FS" "$before"

# --- a disk whose partition is mounted: the disk is refused, naming both
truncate -s $((16 * MiB)) "$T/disk.img"
DISK=$(mkloop "$T/disk.img")
add_partition "$DISK" 2 2048 16384
PART=$part
mkext4 "$PART"
mountit "$PART" "$T/pmnt"
before=$(sha256sum <"$DISK")
for extra in "" --dry-run oflag=force "oflag=force --dry-run"; do
	run_pdd if="$T/src.img" of="$DISK" $extra
	expect_rc 66
	expect_err "pdd: '$DISK' holds '${DISK}p2', mounted on $T/pmnt: pdd does not write to a mounted device"
done
# and the partition itself, through whatever node it was mounted by
run_pdd if="$T/src.img" of="$PART" oflag=force
expect_rc 66
expect_err "pdd: '$PART' is mounted on $T/pmnt: pdd does not write to a mounted device"
unchanged "$DISK" "$before"

# --- active swap
truncate -s $((16 * MiB)) "$T/swap.img"
SW=$(mkloop "$T/swap.img")
mkswap "$SW" >/dev/null || fail "mkswap $SW"
if swapon "$SW" 2>"$T/swapon.err"; then
	swaps=$SW
	before=$(sha256sum <"$SW")
	for extra in "" --dry-run oflag=force "oflag=force --dry-run"; do
			run_pdd if="$T/src.img" of="$SW" $extra
		expect_rc 66
		expect_err "pdd: '$SW' is in use as swap: pdd does not write to active swap"
	done
	unchanged "$SW" "$before"
	swapoff "$SW" || fail "swapoff $SW"
	swaps=
	# no longer swap: written
	run_pdd if="$T/src.img" of="$SW"
	expect_rc 0
	"$STAMP" check "$SW" 0 $((4 * MiB)) 1 0 || fail "copy onto former swap"
else
	echo "swap part skipped: swapon $SW is not permitted here: $(cat "$T/swapon.err")"
fi

# --- held: a holder needs device-mapper or md, which test machines may
# lack, so holders/ is checked in tests/unit/test-guard.c; here the
# kernel's exclusive claim is held from another process instead
"$STAMP" fill "$T/held.img" 0 $((8 * MiB)) 3
HELD=$(mkloop "$T/held.img")
if command -v python3 >/dev/null; then
	python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
open(sys.argv[2], "w").close()
time.sleep(120)' "$HELD" "$T/held.ready" &
	holder=$!
	for _ in $(seq 50); do
		[ -e "$T/held.ready" ] && break
		sleep 0.1
	done
	[ -e "$T/held.ready" ] || fail "the helper could not hold $HELD exclusively"
	before=$(sha256sum <"$HELD")
	for extra in "" --dry-run; do
			run_pdd if="$T/src.img" of="$HELD" $extra
		expect_rc 66
		expect_err "pdd: cannot open '$HELD' for writing: Device or resource busy"
		expect_err "pdd: '$HELD' is busy: another program holds it exclusively"
	done
	unchanged "$HELD" "$before"
	# force writes all the same
	run_pdd if="$T/src.img" of="$HELD" oflag=force
	expect_rc 0
	"$STAMP" check "$HELD" 0 $((4 * MiB)) 1 0 || fail "oflag=force copy under a holder"
	"$STAMP" check "$HELD" $((4 * MiB)) $((4 * MiB)) 3 $((4 * MiB)) || fail "oflag=force wrote past the range"
	kill "$holder"
	wait "$holder" 2>/dev/null
	holder=
else
	echo "exclusive-hold part skipped: no python3 to hold the device with"
fi

# iflag=excl on the same device holds it against pdd's own output
run_pdd if="$HELD" of="$HELD" iflag=excl skip=0 seek=8192 count=1024
expect_rc 66
expect_err "pdd: '$HELD' is busy: the input '$HELD' holds it exclusively (iflag=excl)"

# --- overlap on one device: refused, whatever the flags
"$STAMP" fill "$T/ov.img" 0 $((16 * MiB)) 4
OV=$(mkloop "$T/ov.img")
before=$(sha256sum <"$OV")
for extra in "" --dry-run oflag=force; do
	run_pdd if="$OV" of="$OV" skip=0 seek=2048 count=3072 $extra
	expect_rc 31
	expect_err "pdd: '$OV' bytes 1048576 to 2621439 overlap the input's bytes 0 to 1572863 on the same device"
done
# backwards too, and onto itself
run_pdd if="$OV" of="$OV" skip=2048 seek=0
expect_rc 31
expect_err "pdd: '$OV' bytes 0 to 15728639 overlap the input's bytes 1048576 to 16777215 on the same device"
run_pdd if="$OV" of="$OV"
expect_rc 31
expect_err "pdd: '$OV' bytes 0 to 16777215 overlap the input's bytes 0 to 16777215 on the same device"
unchanged "$OV" "$before"
# ranges that only touch are copied
run_pdd if="$OV" of="$OV" skip=0 seek=2048 count=2048
expect_rc 0
"$STAMP" check "$OV" $((1 * MiB)) $((1 * MiB)) 4 0 || fail "copy within one device"
"$STAMP" check "$OV" 0 $((1 * MiB)) 4 0 || fail "the input range changed"
"$STAMP" check "$OV" $((2 * MiB)) $((14 * MiB)) 4 $((2 * MiB)) || fail "past the output range changed"

# --- a partition and its own disk: compared where they lie on the disk
"$STAMP" fill "$T/pd.img" 0 $((16 * MiB)) 5
PD=$(mkloop "$T/pd.img")
add_partition "$PD" 1 2048 4096	# bytes 1 MiB to 3 MiB of the disk
PD1=$part
before=$(sha256sum <"$PD")
run_pdd if="$PD1" of="$PD"
expect_rc 31
expect_err "pdd: '$PD' and the input '$PD1' are on the disk '$PD', where the output's bytes 0 to 2097151 overlap the input's bytes 1048576 to 3145727"
run_pdd if="$PD" of="$PD1" skip=3072 count=2048 --dry-run
expect_rc 31
expect_err "pdd: '$PD1' and the input '$PD' are on the disk '$PD', where the output's bytes 1048576 to 2097151 overlap the input's bytes 1572864 to 2621439"
unchanged "$PD" "$before"
# the partition copied to the disk's end does not overlap
run_pdd if="$PD1" of="$PD" seek=$((16384 + 4096))
expect_rc 0
"$STAMP" check "$PD" $((10 * MiB)) $((2 * MiB)) 5 $((1 * MiB)) || fail "partition -> its disk"
"$STAMP" check "$PD" 0 $((10 * MiB)) 5 0 || fail "partition -> its disk: before the range"

# --- one regular file as input and output
"$STAMP" fill "$T/f.img" 0 $((1 * MiB)) 6
cp "$T/f.img" "$T/f.orig"
run_pdd if="$T/f.img" of="$T/f.img" bs=4096 skip=0 seek=1 count=4
expect_rc 31
expect_err "pdd: '$T/f.img' bytes 4096 to 20479 overlap the input's bytes 0 to 16383 in the same file"
run_pdd if="$T/f.img" of="$T/f.img" bs=4096 seek=1 oflag=force --dry-run
expect_rc 31
expect_err "pdd: '$T/f.img' bytes 4096 to 1052671 overlap the input's bytes 0 to 1048575 in the same file"
same_bytes "$T/f.img" "$T/f.orig"
# by another name (a hard link) it is the same file
ln "$T/f.img" "$T/f.link"
run_pdd if="$T/f.link" of="$T/f.img" bs=4096 skip=2 seek=1 count=4
expect_rc 31
expect_err "pdd: '$T/f.img' bytes 4096 to 20479 overlap the input's bytes 8192 to 24575 in the same file"
run_pdd if="$T/f.link" of="$T/f.img" bs=4096 skip=0 seek=4 count=4
expect_rc 0
"$STAMP" check "$T/f.img" 16384 16384 6 0 || fail "copy within one file"

# --- the plain case: an unmounted, unheld device is written
"$STAMP" fill "$T/plain.img" 0 $((8 * MiB)) 7
PLAIN=$(mkloop "$T/plain.img")
run_pdd if="$T/src.img" of="$PLAIN" seek=100
expect_rc 0
"$STAMP" check "$PLAIN" $((100 * 512)) $((4 * MiB)) 1 0 || fail "plain copy onto a loop device"
"$STAMP" check "$PLAIN" 0 $((100 * 512)) 7 0 || fail "plain copy: before seek"
echo "wrong disks refused"
