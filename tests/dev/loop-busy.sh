#!/bin/bash
# engines: threads
# A file system on a loop device lives in the loop's backing file (or
# device): pdd does not write that file while the loop device is mounted,
# in use as swap or held by another device, nor one of its partitions is;
# nor a block device a mounted loop device is over.  Anywhere in the file,
# force or not (force passes a holder only), in a dry run too, and every
# refused output keeps its bytes.  A loop device that is only attached
# stops nothing: its file is written, as an unmounted disk would be.
. "$(dirname "$0")/../lib.sh"
requires_root
command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4"

# What this test sets up beyond lib.sh's loops and mounts is undone
# first, while the loop devices are still attached (lib.sh detaches them
# before it unmounts): device-mapper devices removed, file systems
# unmounted (those that will not go are left in .mounts for lib.sh) and
# swap turned off; lib.sh deletes the added partitions.
swaps= dms=
undo() {
	local m left= s d
	for d in $dms; do dmsetup remove "$d"; done
	while read -r m; do
		[ -n "$m" ] || continue
		umount "$m" 2>/dev/null || left="$left$m"$'\n'
	done < <(tac "$T/.mounts")
	printf '%s' "$left" >"$T/.mounts"
	for s in $swaps; do swapoff "$s"; done
}
trap 'undo; cleanup' EXIT

MiB=1048576
"$STAMP" fill "$T/src.img" 0 $((4 * MiB)) 1

mkext4() {
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$1" || fail "mkfs.ext4 $1"
}

mountit() {
	mkdir -p "$2"
	mount "$1" "$2" || fail "cannot mount $1 on $2"
	echo "$2" >>"$T/.mounts"
	sync
}

unmount() {
	umount "$1" || fail "cannot unmount $1"
	grep -vxF -- "$1" "$T/.mounts" >"$T/.mounts.new"
	mv "$T/.mounts.new" "$T/.mounts"
}

# refused OUT RC MESSAGE: if=src of=OUT is refused with RC and MESSAGE,
# as are the dry run and oflag=force, and for a file a seek= far past the
# file system's end; OUT keeps its bytes
refused() {
	local out=$1 want=$2 m=$3 before extra extras
	extras=("" --dry-run oflag=force "oflag=force --dry-run")
	[ -f "$out" ] && extras+=(seek=100000)
	before=$(sha256sum <"$out")
	for extra in "${extras[@]}"; do
		run_pdd if="$T/src.img" of="$out" $extra
		expect_rc "$want"
		expect_err "$m"
	done
	[ "$(sha256sum <"$out")" = "$before" ] || fail "refused copy changed $out (line ${BASH_LINENO[0]})"
}

# --- a mounted image file: refused, by any name
truncate -s $((16 * MiB)) "$T/fs.img"
mkext4 "$T/fs.img"
FS=$(mkloop "$T/fs.img")
mountit "$FS" "$T/mnt"
refused "$T/fs.img" 66 \
	"pdd: '$T/fs.img' is the backing file of '$FS', which is mounted on $T/mnt: pdd does not write to a mounted device"
ln "$T/fs.img" "$T/fs.link"
refused "$T/fs.link" 66 \
	"pdd: '$T/fs.link' is the backing file of '$FS', which is mounted on $T/mnt: pdd does not write to a mounted device"
# on standard output, redirected to the file, too
rc=0
pdd if="$T/src.img" of=- >>"$T/fs.img" 2>"$T/err" || rc=$?
expect_rc 66
expect_err "pdd: 'standard output' is the backing file of '$FS', which is mounted on $T/mnt: pdd does not write to a mounted device"
# unmounted, the loop device alone stops nothing: the file is written
unmount "$T/mnt"
run_pdd if="$T/src.img" of="$T/fs.img" seek=2048
expect_rc 0
"$STAMP" check "$T/fs.img" $MiB $((4 * MiB)) 1 0 || fail "copy onto an unmounted loop's file"

# --- a mounted partition of the loop device over the file
truncate -s $((16 * MiB)) "$T/disk.img"
DISK=$(mkloop "$T/disk.img")
add_partition "$DISK" 1 2048 16384
mkext4 "$part"
mountit "$part" "$T/pmnt"
refused "$T/disk.img" 66 \
	"pdd: '$T/disk.img' is the backing file of '$DISK', which holds '${DISK}p1', mounted on $T/pmnt: pdd does not write to a mounted device"
unmount "$T/pmnt"

# --- a loop device over a loop device: the lower one and its file are
# refused, each saying the way up to the mount
truncate -s $((16 * MiB)) "$T/low.img"
LOW=$(mkloop "$T/low.img")
UP=$(mkloop "$LOW")
mkext4 "$UP"
mountit "$UP" "$T/umnt"
refused "$LOW" 66 \
	"pdd: '$LOW' is the backing device of '$UP', which is mounted on $T/umnt: pdd does not write to a mounted device"
refused "$T/low.img" 66 \
	"pdd: '$T/low.img' is the backing file of '$LOW', which is the backing device of '$UP', which is mounted on $T/umnt: pdd does not write to a mounted device"
unmount "$T/umnt"

# --- a loop device over a partition: the partition and its disk
truncate -s $((16 * MiB)) "$T/pd.img"
PD=$(mkloop "$T/pd.img")
add_partition "$PD" 1 2048 16384
PD1=$part
LP=$(mkloop "$PD1")
mkext4 "$LP"
mountit "$LP" "$T/lpmnt"
refused "$PD1" 66 \
	"pdd: '$PD1' is the backing device of '$LP', which is mounted on $T/lpmnt: pdd does not write to a mounted device"
refused "$PD" 66 \
	"pdd: '$PD' holds '${PD}p1', the backing device of '$LP', which is mounted on $T/lpmnt: pdd does not write to a mounted device"
unmount "$T/lpmnt"
losetup -d "$LP"	# before its partition is deleted

# --- active swap on a loop device over the file
truncate -s $((16 * MiB)) "$T/swap.img"
mkswap "$T/swap.img" >/dev/null || fail "mkswap"
SW=$(mkloop "$T/swap.img")
if swapon "$SW" 2>"$T/swapon.err"; then
	swaps=$SW
	refused "$T/swap.img" 66 \
		"pdd: '$T/swap.img' is the backing file of '$SW', which is in use as swap: pdd does not write to active swap"
	swapoff "$SW" || fail "swapoff $SW"
	swaps=
	run_pdd if="$T/src.img" of="$T/swap.img"
	expect_rc 0
	"$STAMP" check "$T/swap.img" 0 $((4 * MiB)) 1 0 || fail "copy onto former swap's file"
else
	echo "swap part skipped: swapon $SW is not permitted here: $(cat "$T/swapon.err")"
fi

# --- held by device-mapper: refused, but oflag=force lets it pass, as
# for a held block device
truncate -s $((8 * MiB)) "$T/held.img"
HL=$(mkloop "$T/held.img")
dm=pdd-loop-busy-$$
if command -v dmsetup >/dev/null &&
   dmsetup create "$dm" --table "0 $((8 * MiB / 512)) linear $HL 0" 2>"$T/dm.err"; then
	dms=$dm
	holder=$(ls "/sys/block/${HL#/dev/}/holders")
	before=$(sha256sum <"$T/held.img")
	for extra in "" --dry-run; do
		run_pdd if="$T/src.img" of="$T/held.img" $extra
		expect_rc 66
		expect_err "pdd: '$T/held.img' is the backing file of '$HL', which is held by $holder: another device is built on it"
	done
	[ "$(sha256sum <"$T/held.img")" = "$before" ] || fail "refused copy changed held.img"
	run_pdd if="$T/src.img" of="$T/held.img" oflag=force
	expect_rc 0
	"$STAMP" check "$T/held.img" 0 $((4 * MiB)) 1 0 || fail "oflag=force copy onto a held loop's file"
	dmsetup remove "$dm" || fail "dmsetup remove $dm"
	dms=
else
	echo "holder part skipped: no device-mapper here: $(head -1 "$T/dm.err" 2>/dev/null)"
fi
echo "loop devices in use refused through their backing files"
