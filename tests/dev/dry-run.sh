#!/bin/bash
# --dry-run describes each kind of side exactly (block devices with 512-
# and 4096-byte sectors and their backing file, a regular file to be
# created, a pipe, /dev/null, /dev/zero, an sg device with its INQUIRY
# model and serial, a raw device), the ranges in blocks and bytes and how
# the copy would run, and copies nothing; a refusal happens in a dry run
# as it would in the copy.
# engines: threads
. "$(dirname "$0")/../lib.sh"
requires_root
needs_sgdouble

head -c 1048576 /dev/urandom >"$T/back512"
head -c 2097152 /dev/urandom >"$T/back4k"
L512=$(mkloop "$T/back512")
L4K=$(mkloop "$T/back4k" 4096)
sum=$(md5sum <"$L4K")

# plan ARGS...: the dry run's output in $T/plan, checked against stdin
plan() {
	pdd "$@" --dry-run >"$T/plan" 2>"$T/err" || { cat "$T/err"; fail "dry run failed: $*"; }
	diff - "$T/plan" || fail "dry run of: $*"
}

plan if="$L512" of="$L4K" bs=4096 skip=1 seek=2 count=100 bpt=16 qd=4 threads=2 <<EOF
pdd: dry run, nothing is copied
  input   '$L512': block device, 1048576 bytes (1.0 MB, 1.0 MiB)
          logical block 512, physical block 512, direct I/O
          loop device over '$T/back512'
  output  '$L4K': block device, 2097152 bytes (2.1 MB, 2.0 MiB)
          logical block 4096, physical block 4096, direct I/O
          loop device over '$T/back4k'
  copy    409600 bytes, 100+0 blocks of bs=4096
          input  from block 1 (byte 4096) to block 100 (byte 413695)
          output from block 2 (byte 8192) to block 101 (byte 417791)
  using   engine=threads, 65536 bytes per transfer (bpt=16), qd=4, 2 threads
EOF
[ "$(md5sum <"$L4K")" = "$sum" ] || fail "a dry run wrote to the device"

plan if="$L4K" of="$T/new.img" count=3 bs=1000 iflag=nodirect <<EOF
pdd: dry run, nothing is copied
  input   '$L4K': block device, 2097152 bytes (2.1 MB, 2.0 MiB)
          logical block 4096, physical block 4096, buffered
          loop device over '$T/back4k'
  output  '$T/new.img': regular file (to be created)
          buffered
  copy    3000 bytes, 3+0 blocks of bs=1000
          input  from block 0 (byte 0) to block 2 (byte 2999)
          output from block 0 (byte 0) to block 2 (byte 2999)
  using   engine=threads, 128000 bytes per transfer (bpt=128), qd=1, 1 thread
EOF
[ ! -e "$T/new.img" ] || fail "a dry run created the output"

head -c 5000 /dev/zero >"$T/f"
mkfifo "$T/fifo"
{ cat "$T/f" >"$T/fifo" 2>/dev/null & } 2>/dev/null
plan if="$T/fifo" of=/dev/null <<EOF
pdd: dry run, nothing is copied
  input   '$T/fifo': fifo
          in order
  output  '/dev/null': null
          discards what is written to it
  copy    to the end of the input, in blocks of bs=512
          input  from block 0 (byte 0) to the end of the input
          output from block 0 (byte 0) to the end of the input
  using   engine=threads, 65536 bytes per transfer (bpt=128), qd=64, 4 threads
EOF

plan if=/dev/zero of="$T/f" count=2 oflag=direct <<EOF
pdd: dry run, nothing is copied
  input   '/dev/zero': zero
          reads as endless zeros
  output  '$T/f': regular file, 5000 bytes (5.0 kB, 4.9 KiB)
          direct I/O
  copy    1024 bytes, 2+0 blocks of bs=512
          input  from block 0 (byte 0) to block 1 (byte 1023)
          output from block 0 (byte 0) to block 1 (byte 1023)
  using   engine=threads, 65536 bytes per transfer (bpt=128), qd=1, 1 thread
EOF

# an sg device: INQUIRY's vendor, product and revision, VPD 0x80's serial
truncate -s 4M "$T/sgback"
export LD_PRELOAD=$SGD SGDOUBLE_DEVS="$T/sg=$T/sgback:4096" ASAN_OPTIONS=verify_asan_link_order=0
serial=$(sg_inq -p 0x80 "$T/sg" 2>/dev/null | sed -n 's/^ *Unit serial number: *//p')
[ -n "$serial" ] || fail "sg_inq gives no serial for the double"
eng=(engine=sg)
plan if="$T/sg" of=/dev/null <<EOF
pdd: dry run, nothing is copied
  input   '$T/sg': sg device, 4194304 bytes (4.2 MB, 4.0 MiB)
          logical block 4096, physical block 4096, 10-byte CDBs or larger
          model 'PDD SGDOUBLE 1.0', serial '$serial'
  output  '/dev/null': null
          discards what is written to it
  copy    4194304 bytes, 1024+0 blocks of bs=4096
          input  from block 0 (byte 0) to block 1023 (byte 4194303)
          output from block 0 (byte 0) to block 1023 (byte 4194303)
  using   engine=sg, 131072 bytes per transfer (bpt=32), qd=32, 1 thread
EOF
unset SGDOUBLE_DEVS
eng=(engine=threads)

# a refusal is the same in a dry run: a device too small, an unaligned skip
run_pdd if="$L4K" of="$L512" --dry-run
expect_rc 31
expect_err "pdd: '$L512' is too small: the copy needs 2097152 bytes from byte 0 on, and the device holds 1048576; give count= to copy less"
run_pdd if="$L4K" of="$T/x" bs=512 skip=1 --dry-run
expect_rc 31
[ ! -e "$T/x" ] || fail "a refused dry run created the output"
echo "dry runs describe every kind of side and copy nothing"
