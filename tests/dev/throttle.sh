#!/bin/bash
# engines: uring
# A side throttled by pdd's cgroup (v1 blkio limits on its disk, or on the
# disk of a partition, in its direction) is issued from io_uring's
# workers, said at -v; a side without limits, a limit on another disk, in
# the other direction, removed, or a v1 parent's limit is not.
# The copies are exact either way.  (How much sooner the copy ends is
# measured by scripts/bench-rate.sh, never timed here.)
. "$(dirname "$0")/../lib.sh"
requires_root

B=/sys/fs/cgroup/blkio
[ -e $B/blkio.throttle.read_bps_device ] || skip "no cgroup v1 blkio hierarchy at $B"
G=$B/pdd-test-$$
mkdir "$G" || fail "cannot make the cgroup $G"
# the cgroup goes at exit, after the processes in it have ended
trap 'cleanup; rmdir "$G" 2>/dev/null' EXIT

MiB=1048576
"$STAMP" fill "$T/src.img" 0 $((8 * MiB)) 1
truncate -s $((8 * MiB)) "$T/dst.img"
SRC=$(mkloop "$T/src.img" 512)
DST=$(mkloop "$T/dst.img" 4096)
devno() { lsblk -dno MAJ:MIN "$1" | tr -d ' '; }
# limit FILE DEV BYTES: the cgroup's blkio.throttle.FILE for DEV (0 removes it)
limit() { echo "$(devno "$2") $3" >"$G/blkio.throttle.$1"; }

# in_group ARGS...: pdd run inside the cgroup, stderr in $T/err
in_group() {
	rc=0
	bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$G" \
		"$PDD" "$@" engine=uring -v 2>"$T/err" || rc=$?
}
said() { grep -cxF "pdd: uring: the $1 '$2' is throttled by its cgroup: requests go to the kernel's workers" "$T/err"; }

# no limits: the plain way
in_group if="$SRC" of="$DST" oflag=force
expect_rc 0
[ "$(said input "$SRC")$(said output "$DST")" = 00 ] || fail "a side without limits was called throttled"
same_bytes "$SRC" "$DST"

# a read limit on the input's disk, a write limit on the output's
limit read_bps_device "$SRC" 1073741824
limit write_iops_device "$DST" 1073741824
dd if=/dev/zero of="$DST" bs=1M count=8 oflag=direct status=none
in_group if="$SRC" of="$DST" oflag=force
expect_rc 0
[ "$(said input "$SRC")$(said output "$DST")" = 11 ] || { cat "$T/err"; fail "throttled sides not seen"; }
same_bytes "$SRC" "$DST"

# outside the cgroup the same devices are not throttled for pdd
run_pdd if="$SRC" of="$DST" oflag=force -v
expect_rc 0
[ "$(said input "$SRC")$(said output "$DST")" = 00 ] || fail "limits of another cgroup counted"

# a limit counts in its own direction only: a write limit on the input's
# disk and a read limit on the output's do not throttle this copy
limit read_bps_device "$SRC" 0
limit write_iops_device "$DST" 0
limit write_bps_device "$SRC" 1073741824
limit read_iops_device "$DST" 1073741824
in_group if="$SRC" of="$DST" oflag=force
expect_rc 0
[ "$(said input "$SRC")$(said output "$DST")" = 00 ] || { cat "$T/err"; fail "a limit in the other direction counted"; }
limit write_bps_device "$SRC" 0
limit read_iops_device "$DST" 0
limit read_bps_device "$SRC" 1073741824
limit write_iops_device "$DST" 1073741824

# a limit removed (0) no longer counts; the other stays
limit write_iops_device "$DST" 0
in_group if="$SRC" of="$DST" oflag=force
expect_rc 0
[ "$(said input "$SRC")$(said output "$DST")" = 10 ] || { cat "$T/err"; fail "a removed limit counted"; }

# limits are the whole disk's: a partition of the throttled disk is
# throttled, and a file system image on another disk is not
add_partition "$SRC" 1 2048 8192
in_group if="$part" of="$T/out.img" oflag=direct
expect_rc 0
[ "$(said input "$part")" = 1 ] || { cat "$T/err"; fail "a partition of a throttled disk not seen"; }
[ "$(said output "$T/out.img")" = 0 ] || fail "a file on another disk was called throttled"
cmp -n $((4 * MiB)) -i $((MiB)):0 "$SRC" "$T/out.img" || fail "partition copy differs"

# cgroup v1's limits are flat: a parent's do not reach a child cgroup
# (the kernel reads the child's device at full speed), so pdd there
# issues as usual
mkdir "$G/child" || fail "cannot make a child cgroup"
rc=0
bash -c 'echo $$ >"$1/child/cgroup.procs" && shift && exec "$@"' _ "$G" \
	"$PDD" if="$SRC" of=/dev/null engine=uring -v 2>"$T/err" || rc=$?
rmdir "$G/child" 2>/dev/null	# empty again once that process ended
expect_rc 0
[ "$(said input "$SRC")" = 0 ] || { cat "$T/err"; fail "a v1 parent's limit counted in a child cgroup"; }
exit 0
