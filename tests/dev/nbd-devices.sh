#!/bin/bash
# NBD exports against real block devices, under every local engine: loop
# devices with 512- and 4096-byte sectors copied to an nbdkit export and
# back, and export to export, over exports whose smallest block is 512
# and 4096 bytes (nbdkit's blocksize-policy filter, which fails a request
# that is not a multiple of it: a misaligned request would show).  Every
# result is address-stamped data checked byte by byte, and the export's
# bytes equal what nbdcopy writes from the same device.
. "$(dirname "$0")/../lib.sh"
requires_root
"$PDD" --version | grep -q '^engines:.* nbd' || skip "this pdd is built without libnbd"
command -v nbdkit >/dev/null || skip "no nbdkit (package nbdkit)"
command -v nbdcopy >/dev/null || skip "no nbdcopy (package libnbd-bin)"

MiB=1048576
size=$((6 * MiB + 3 * 4096))	# no power of two: the last transfer is short

for sec in 512 4096; do
	"$STAMP" fill "$T/src$sec" 0 "$size" "$sec"
	truncate -s "$size" "$T/dst$sec" "$T/e$sec" "$T/f$sec" "$T/ref$sec"
	A=$(mkloop "$T/src$sec" "$sec")
	B=$(mkloop "$T/dst$sec" "$sec")
	policy=(--filter=blocksize-policy file)
	limits=(blocksize-minimum="$sec" blocksize-preferred=65536
		blocksize-maximum=$((4 * MiB)) blocksize-error-policy=error)
	serve "e$sec" "${policy[@]}" "$T/e$sec" "${limits[@]}"
	serve "f$sec" "${policy[@]}" "$T/f$sec" "${limits[@]}"
	serve "r$sec" "${policy[@]}" "$T/ref$sec" "${limits[@]}"

	# device -> export, and nbdcopy's copy of the same device beside it
	run_pdd if="$A" of="$(uri "e$sec")"
	expect_rc 0
	expect_err "$((size / sec))+0 records out"
	"$STAMP" check "$T/e$sec" 0 "$size" "$sec" 0 || fail "$sec-byte device -> export"
	nbdcopy "$A" "$(uri "r$sec")" || fail "nbdcopy $A failed"
	same_bytes "$T/ref$sec" "$T/e$sec"

	# export -> device
	run_pdd if="$(uri "e$sec")" of="$B"
	expect_rc 0
	expect_err "$((size / sec))+0 records in"
	"$STAMP" check "$T/dst$sec" 0 "$size" "$sec" 0 || fail "export -> $sec-byte device"

	# export -> export, in transfers of the export's smallest block, with
	# skip, seek and count in it
	run_pdd if="$(uri "e$sec")" of="$(uri "f$sec")" bs="$sec" bpt=3 skip=5 seek=7 count=1000
	expect_rc 0
	expect_err "1000+0 records out"
	cmp -s -i $((5 * sec)):$((7 * sec)) -n $((1000 * sec)) "$T/src$sec" "$T/f$sec" ||
		fail "$sec-byte export -> export: the range differs"
	cmp -s -n $((7 * sec)) /dev/zero "$T/f$sec" || fail "bytes before seek= were written"
	cmp -s -i $(((7 + 1000) * sec)) -n $((size - (7 + 1000) * sec)) /dev/zero "$T/f$sec" ||
		fail "bytes after count= were written"
	run_pdd if="$(uri "e$sec")" of="$(uri "f$sec")"
	expect_rc 0
	same_bytes "$T/src$sec" "$T/f$sec"
done

echo "NBD exports and block devices copy exactly under engine ${PDD_ENGINE:-auto}"
