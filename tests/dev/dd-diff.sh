#!/bin/bash
# pdd against GNU dd conv=notrunc on regular files: for a matrix of input
# sizes (many not a multiple of bs), bs, bpt, skip, seek, count and
# threads 1..16, the output bytes and the "records in/out" lines must be
# identical.  DIFF_RUNS sets how many random combinations run after the
# fixed ones.
. "$(dirname "$0")/../lib.sh"

runs=${DIFF_RUNS:-250}
sizes=(0 1 511 512 513 1000 4095 4096 65536 65537 300000 1048576 1049000)

for s in "${sizes[@]}"; do
	head -c "$s" /dev/urandom >"$T/in.$s"
done
head -c 2000000 /dev/urandom >"$T/old"

# one comparison: SIZE BS BPT SKIP SEEK COUNT THREADS EXTRA-PDD-FLAGS
compare() {
	local size=$1 bs=$2 bpt=$3 skip=$4 seek=$5 count=$6 thr=$7 extra=$8
	local ddargs=(if="$T/in.$size" of="$T/dd.out" bs="$bs" skip="$skip" seek="$seek" conv=notrunc)
	local pargs=(if="$T/in.$size" of="$T/pdd.out" bs="$bs" bpt="$bpt" skip="$skip" seek="$seek" threads="$thr")
	local oldlen=$(( (size * 7 / 5) % 2000000 ))

	if [ "$count" != - ]; then
		ddargs+=(count="$count")
		pargs+=(count="$count")
	fi
	[ -n "$extra" ] && pargs+=($extra)
	# both start from the same old contents, which notrunc must keep
	head -c "$oldlen" "$T/old" >"$T/dd.out"
	cp "$T/dd.out" "$T/pdd.out"
	dd "${ddargs[@]}" 2>"$T/dd.err" || fail "dd ${ddargs[*]} failed"
	run_pdd "${pargs[@]}"
	[ "$rc" = 0 ] || { cat "$T/err"; fail "pdd ${pargs[*]}: exit $rc"; }
	cmp -s "$T/dd.out" "$T/pdd.out" ||
		fail "pdd ${pargs[*]}: output differs from dd: $(cmp "$T/dd.out" "$T/pdd.out" 2>&1)"
	grep " records " "$T/dd.err" >"$T/dd.rec"
	grep " records " "$T/err" >"$T/pdd.rec"
	cmp -s "$T/dd.rec" "$T/pdd.rec" ||
		fail "pdd ${pargs[*]}: records lines '$(tr '\n' '|' <"$T/pdd.rec")' differ from dd's '$(tr '\n' '|' <"$T/dd.rec")'"
	n=$((n + 1))
}

n=0
# the cases the field notes name: a partial last block is not padded
compare 1000 512 128 0 0 - 4 ""
compare 1000 512 1 0 0 - 16 ""
compare 1000 512 128 0 0 - 4 "iflag=direct oflag=direct"
compare 300000 4096 3 1 2 - 16 "oflag=direct"
compare 65537 1 128 100 7 - 8 ""
compare 0 512 128 0 3 - 1 ""
compare 4096 512 128 9 0 - 4 ""
compare 1049000 512 128 0 0 2000 16 "iflag=direct"

for ((i = 0; i < runs; i++)); do
	pick "${sizes[@]}"; size=$picked
	pick 1 7 512 1000 4096 65536; bs=$picked
	pick 1 2 3 8 128 1000; bpt=$picked
	pick 0 0 1 3 17; skip=$picked
	pick 0 0 1 5; seek=$picked
	pick - - 0 1 5 64 3000; count=$picked
	pick 1 2 3 4 8 16; thr=$picked
	pick "" "" "iflag=direct" "oflag=direct" "iflag=direct oflag=direct" "iflag=nodirect"; extra=$picked
	# bs=1 with big sizes is a million tiny transfers: keep it quick
	if [ "$bs" -lt 512 ] && [ "$size" -gt 70000 ]; then size=65537; fi
	compare "$size" "$bs" "$bpt" "$skip" "$seek" "$count" "$thr" "$extra"
done
echo "$n comparisons with dd identical"
