#!/usr/bin/env bash
# scripts/bench-zero.sh - how fast pdd's zero check (src/zero.c) reads a
# buffer of zeros, its worst case, in the cache (1 MiB) and from memory
# (256 MiB), beside memcpy of the same buffer: the check runs on every
# byte copied with sparse=, so it must be well above any disk's rate (the
# target is 10 GB/s).  RUNS rounds (default 5), medians in GB/s.
#
#   scripts/bench-zero.sh
#   RUNS=9 scripts/bench-zero.sh
set -euo pipefail
RUNS=${RUNS:-5}
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
make -s build/zerospeed
out=$(for _ in $(seq "$RUNS"); do build/zerospeed; done)
printf '%-12s %8s %8s\n' case 1MiB 256MiB
for c in zero-check memcpy; do
	printf '%-12s' "$c"
	for s in 1MiB 256MiB; do
		echo "$out" | awk -v c="$c" -v s="$s" '$1 == c && $2 == s { print $3 }' | sort -n |
			awk '{ v[NR] = $1 } END { printf " %8.1f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
	done
	echo
done
