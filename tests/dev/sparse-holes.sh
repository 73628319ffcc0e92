#!/bin/bash
# sparse= makes file outputs really sparse: after a copy of stamped data
# with zero islands, the output's data extents as SEEK_DATA and SEEK_HOLE
# see them are exactly the input's runs of data in 4096-byte grains (this
# file system's block), and its allocated blocks are that data (and a
# little of the file system's own): for a new file, for a file of the
# same size that held other data (its old blocks punched where the input
# is zero), for a shorter one that grows (zeros past its old end are
# holes, not written) and for a longer one (trunc: cut to the copy).
. "$(dirname "$0")/../lib.sh"
requires_root
command -v python3 >/dev/null || skip "no python3 for SEEK_DATA and SEEK_HOLE"

MiB=1048576
size=$((16 * MiB))
zero_islands "$T/src" "$size" 71
# a file of the input's size that is all zeros, and its last 3 MiB zeros
# too: the copy ends in a run of zeros
dd if=/dev/zero of="$T/src" bs=1M seek=13 count=3 conv=notrunc status=none
grain_runs "$T/src" | grep '^data' >"$T/want"
data=$(awk '{ n += $3 - $2 } END { print n }' "$T/want")
[ $((size - data)) -ge $((5 * MiB)) ] || fail "the input has only $((size - data)) bytes of zero grains"
[ "$(stat -f -c %S "$T")" = 4096 ] || skip "$T's file system has blocks of $(stat -f -c %S "$T") bytes, not 4096"
# this file system must tell holes (tmpfs, ext4, xfs, btrfs do)
truncate -s 1M "$T/probe"
[ -z "$(data_extents "$T/probe")" ] || skip "$T's file system does not report holes"

# sparse_as_input FILE WHAT: FILE is the input, its data extents are the
# input's data grains, and its allocation is that data
sparse_as_input() {
	local alloc
	same_bytes "$T/src" "$1"
	data_extents "$1" >"$T/got"
	diff "$T/want" "$T/got" >"$T/diff" || { cat "$T/diff"; fail "$2: the data extents (>) are not the input's data grains (<)"; }
	alloc=$(($(stat -c %b "$1") * 512))
	[ "$alloc" -ge "$data" ] && [ "$alloc" -le $((data + 65536)) ] ||
		fail "$2: $alloc bytes allocated for $data bytes of data"
	echo "$2: $(wc -l <"$T/got") data extents, $alloc bytes allocated for $data of data" >&2
}

# --- a new file ---------------------------------------------------------------
pdd if="$T/src" of="$T/new" 2>"$T/err" || { cat "$T/err"; fail "copy to a new file"; }
sparse_as_input "$T/new" "a new file"

# --- a file of the same size full of other data: punched ---------------------
"$STAMP" fill "$T/old" 0 "$size" 72
pdd if="$T/src" of="$T/old" 2>"$T/err" || { cat "$T/err"; fail "copy over a file of data"; }
sparse_as_input "$T/old" "a file of data"

# --- a shorter file that grows: punched below its old end, holes past it -----
"$STAMP" fill "$T/short" 0 $((3 * MiB + 1000)) 73
pdd if="$T/src" of="$T/short" 2>"$T/err" || { cat "$T/err"; fail "copy over a shorter file"; }
sparse_as_input "$T/short" "a shorter file"

# --- a longer file, cut to the copy (oflag=trunc): no data left past it -------
"$STAMP" fill "$T/long" 0 $((size + 4 * MiB)) 74
pdd if="$T/src" of="$T/long" oflag=trunc 2>"$T/err" || { cat "$T/err"; fail "copy over a longer file"; }
sparse_as_input "$T/long" "a longer file cut"

echo "file outputs sparse exactly where the input is zero under engine ${PDD_ENGINE:-auto}"
