#!/bin/bash
# verify=hash and the digests taken after the copy: verify=hash reads the
# output's range back and compares its digests with the copy's, never
# reading the input again (a pipe input works); a disk that loses a write
# (tests/faultfs lose=) fails it with exit 14, one line per digest and the
# first window that differs; a stop while copying gives no digest and no
# hashlog, SIGUSR1 shows the bytes hashed; the closing report says
# whether the copy or the hash limited the speed; the digests name the
# zero-filled blocks of coe=1; a hashlog of a range that is not the whole
# output holds comments, and says so; a copy resumed to an sg device (the
# double) and to an NBD export reads them back to hash them; verify=hash
# refuses a map that marks part of the range finished (an earlier run's
# bytes were not hashed as written); a SIGINT while reading back stops
# it; one transfer in flight (qd=1) copies and reads back everything.
. "$(dirname "$0")/../lib.sh"
requires_root
"$PDD" --version | grep -q "(libcrypto)" || skip "this pdd is built without libcrypto"

MiB=1048576
"$STAMP" fill "$T/src" 0 $((4 * MiB + 512)) 71
said() { sed -n "s/^pdd: $1 \\([0-9a-f]*\\)\$/\\1/p" "$T/err"; }
sum() { sha256sum | cut -d' ' -f1; }
pace_re='^pdd: the copy limited the speed, not the hash: reads waited [0-9]+\.[0-9]{2} s for it$'
pace_re+='|^pdd: the (sha256|md5) hash limited the speed: reads waited [0-9]+\.[0-9]{2} s of [0-9]+\.[0-9]{2} s for it$'

# --- a clean copy: the digests read back match; verify=hash alone is sha256
for sec in 512 4096; do
	"$STAMP" fill "$T/d$sec" 0 $((6 * MiB)) 72
	D=$(mkloop "$T/d$sec" "$sec")
	run_pdd if="$T/src" of="$D" bs=4096 seek=3 verify=hash -v
	expect_rc 0
	expect_err "pdd: sha256 $(sum <"$T/src")"
	expect_err "pdd: verify: the sha256 of '$D' read back matches the copy's"
	grep -q "^pdd: reading back: engine " "$T/err" || { cat "$T/err"; fail "no reading back line at -v"; }
	grep -qE "$pace_re" "$T/err" || { cat "$T/err"; fail "no line saying what limited the speed"; }
	[ "$(tail -1 "$T/err")" = "pdd: verify: the sha256 of '$D' read back matches the copy's" ] ||
		fail "the verify line is not last"
done
# two digests, and an input that cannot be read again (a pipe)
rm -f "$T/out"
run_pdd of="$T/out" hash=md5,sha256 verify=hash bs=64K < <(cat "$T/src")
expect_rc 0
expect_err "pdd: verify: the md5 of '$T/out' read back matches the copy's"
expect_err "pdd: verify: the sha256 of '$T/out' read back matches the copy's"
expect_err "pdd: md5 $(md5sum <"$T/src" | cut -d' ' -f1)"

# --- one transfer in flight: nothing is left out, copying or reading back
for i in 1 2 3; do
	rm -f "$T/q1"
	run_pdd if="$T/src" of="$T/q1" bs=512 bpt=1 qd=1 hash=sha256 verify=hash
	expect_rc 0
	expect_err "8193+0 records out"
	expect_err "pdd: verify: the sha256 of '$T/q1' read back matches the copy's"
	same_bytes "$T/src" "$T/q1"
done

# --- a disk that loses a write: block 1000 keeps what it held
"$STAMP" fill "$T/lback" 0 $((6 * MiB)) 73
mkfaultfs "$T/lback" "$T/lf" "lose=$((1000 * 512))-$((1001 * 512))"
L=$(mkloop "$T/lf/disk" 512)
run_pdd if="$T/src" of="$L" hash=sha256 hashwindow=1M verify=hash
expect_rc 14
want=$(sum <"$T/src")
got=$(head -c $((4 * MiB + 512)) "$L" | sum)
[ "$want" != "$got" ] || fail "faultfs lose= lost nothing"
expect_err "pdd: sha256 $want"
expect_err "pdd: verify: the sha256 of '$L' read back is $got, not $want as copied"
expect_err "pdd: verify: 1 of 5 windows differ, the first bytes 0 to 1048576"
# seek=: the window's place in the output (block 1000 lies in the range's
# first window, which starts at the output's byte 262144)
run_pdd if="$T/src" of="$L" hash=sha256 hashwindow=1M seek=512 count=4096 verify=hash
expect_rc 14
expect_err "pdd: verify: 1 of 2 windows differ, the first bytes 262144 to 1310720"
# JSON: the digests differ
run_pdd if="$T/src" of="$L" verify=hash status=json >"$T/json"
expect_rc 14
python3 - "$T/json" <<'PY' || fail "verify=hash JSON"
import json, sys
v = json.load(open(sys.argv[1]))["verify"]
assert v["mode"] == "hash" and v["digests_differ"] == 1 and v["blocks"] == 8193, v
PY
# verify=1 would read the input again and see the same
run_pdd if="$T/src" of="$L" verify=1
expect_rc 14
expect_err "pdd: verify: 1 of 8193 blocks of 512 bytes differs: block 1000 of '$L'"

# --- coe=1: the digests name the zero-filled blocks
mkfaultfs "$T/src" "$T/bad" "read=$((2 * MiB + 100))-$((2 * MiB + 101))"
B=$(mkloop_unmerged "$T/bad/disk" 512)
rm -f "$T/cout"
run_pdd if="$B" of="$T/cout" coe=1 hash=sha256 verify=hash
expect_rc 3
expect_err "pdd: sha256 $(sum <"$T/cout")"
expect_err "pdd: the digests include 1 unreadable block of 512 bytes, hashed as the zeros written for them"
expect_err "pdd: verify: the sha256 of '$T/cout' read back matches the copy's"

# --- a hashlog of part of the output: comments, and a note
cp "$T/d512" "$T/part"
run_pdd if="$T/src" of="$T/part" bs=512 seek=8 hash=sha256 hashlog="$T/plog"
expect_rc 0
end=$((4096 + 4 * MiB + 512))
expect_err "pdd: hashlog '$T/plog': a checker given '$T/part' would not read exactly bytes 4096 to $end of it: written as comments, which checkers skip"
[ "$(cat "$T/plog")" = "# sha256 $(sum <"$T/src")  $T/part:4096-$end" ] ||
	{ cat "$T/plog"; fail "the hashlog of a part"; }
sha256sum -c "$T/plog" >/dev/null 2>&1 && fail "sha256sum -c accepted a log with no line to check"
# the whole file: a plain line, no note
rm -f "$T/whole"
run_pdd if="$T/src" of="$T/whole" hash=sha256 hashlog="$T/wlog"
expect_rc 0
grep -q "hashlog" "$T/err" && { cat "$T/err"; fail "a note for a log of the whole output"; }
[ "$(cat "$T/wlog")" = "$(sum <"$T/src")  $T/whole" ] || { cat "$T/wlog"; fail "the hashlog of a file"; }

# --- SIGINT while reading back (a slow output): stopped, status 130
"$STAMP" fill "$T/rback" 0 $((2 * MiB)) 75
mkfaultfs "$T/rback" "$T/rslow" delay_us=100000
R=$(mkloop "$T/rslow/disk" 512)
"$PDD" if="$T/src" of="$R" bs=64K count=16 qd=1 verify=hash "${eng[@]}" 2>"$T/err" &
pid=$!
wait_for '^16\+0 records out$' 20
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
expect_rc 130
grep -qE "^pdd: verify stopped by SIGINT: [0-9]+ of 1048576 bytes read back$" "$T/err" ||
	{ cat "$T/err"; fail "no 'verify stopped by SIGINT' line"; }
grep -q "matches\|read back is" "$T/err" && { cat "$T/err"; fail "a stopped verify compared"; }

# --- the pace: md5 is faster than sha3-256, so the hash that limits is sha3-256
"$STAMP" fill "$T/big" 0 $((64 * MiB)) 76
rm -f "$T/bout"
run_pdd if="$T/big" of="$T/bout" bs=1M hash=md5,sha3-256
expect_rc 0
if grep -q "hash limited the speed" "$T/err"; then
	grep -qE "^pdd: the sha3-256 hash limited the speed: " "$T/err" ||
		{ cat "$T/err"; fail "the pace line names the wrong hash"; }
fi
rm -f "$T/big" "$T/bout"

# --- a stop: no digest and no hashlog; SIGUSR1 shows the bytes hashed
"$STAMP" fill "$T/sback" 0 $((6 * MiB)) 74
mkfaultfs "$T/sback" "$T/slow" delay_us=200000
S=$(mkloop "$T/slow/disk" 512)
rm -f "$T/slog" "$T/sout"
"$PDD" if="$S" of="$T/sout" bs=64K qd=1 hash=sha256 hashlog="$T/slog" "${eng[@]}" 2>"$T/err" &
pid=$!
sleep 0.5
kill -USR1 "$pid"
wait_for '^pdd: hashed [0-9]+ bytes so far; no digest of the whole range$' 10
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
expect_rc 130
n=$(sed -n 's/^pdd: hashed \([0-9]*\) bytes so far; no digest of the whole range$/\1/p' "$T/err" | tail -1)
out=$(stat -c %s "$T/sout")
[ -n "$n" ] && [ "$n" -gt 0 ] && [ "$n" -le "$out" ] || { cat "$T/err"; fail "after SIGINT: hashed '$n' of $out bytes written"; }
grep -q '^pdd: sha256 ' "$T/err" && fail "a stopped copy printed a digest"
[ ! -e "$T/slog" ] || fail "a stopped copy wrote a hashlog"

# --- a copy resumed to an sg device (the double): read back with SCSI READs
if [ -f "$SGD" ]; then
	mkdir -p "$T/nodes"
	truncate -s $((5 * MiB)) "$T/sg.img"
	sgenv=(env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
	       LD_PRELOAD="$SGD" SGDOUBLE_DEVS="$T/nodes/sg0=$T/sg.img:512")
	rm -f "$T/sgmap"
	"${sgenv[@]}" "$PDD" if="$T/src" of="$T/nodes/sg0" count=2048 map="$T/sgmap" 2>"$T/err" ||
		{ cat "$T/err"; fail "sg: the first part"; }
	"${sgenv[@]}" "$PDD" if="$T/src" of="$T/nodes/sg0" map="$T/sgmap" hash=sha256 2>"$T/err" ||
		{ cat "$T/err"; fail "sg: the resumed copy"; }
	expect_err "pdd: hash=: this run wrote part of the range: hashing '$T/nodes/sg0' by reading it"
	expect_err "pdd: sha256 $(head -c $((4 * MiB + 512)) "$T/sg.img" | sum)"
	expect_err "pdd: sha256 $(sum <"$T/src")"
else
	echo "the sg double is not built: no sg case"
fi

# --- a copy resumed to an NBD export: read back over the connections
if command -v nbdkit >/dev/null && "$PDD" --version | grep -q '^engines:.* nbd'; then
	truncate -s $((5 * MiB)) "$T/nbd.img"
	serve n file "$T/nbd.img"
	rm -f "$T/nmap"
	"$PDD" if="$T/src" of="$(uri n)" skip=1000 seek=1000 count=4000 map="$T/nmap" 2>"$T/err" ||
		{ cat "$T/err"; fail "NBD: the first part"; }
	"$PDD" if="$T/src" of="$(uri n)" map="$T/nmap" hash=sha256,md5 2>"$T/err" ||
		{ cat "$T/err"; fail "NBD: the resumed copy"; }
	expect_err "pdd: sha256 $(head -c $((4 * MiB + 512)) "$T/nbd.img" | sum)"
	expect_err "pdd: md5 $(md5sum <"$T/src" | cut -d' ' -f1)"
else
	echo "no nbdkit or pdd without NBD: no NBD case"
fi

# --- refusals
# verify=hash with a map that marks part of the range finished
printf '# Mapfile\n0x0 +\n0x0 0x100000 +\n' >"$T/vmap"
rm -f "$T/vout"
run_pdd if="$T/src" of="$T/vout" map="$T/vmap" verify=hash
expect_rc 31
expect_err "pdd: verify=hash and map= contradict: '$T/vmap' marks part of the range finished, which this run cannot hash as it writes"
[ ! -e "$T/vout" ] || fail "a refused verify=hash created the output"
run_pdd if="$T/src" of=/dev/null verify=hash
expect_rc 31
expect_err "pdd: verify=hash: '/dev/null' discards what is written: there is nothing to compare"
run_pdd if="$T/src" of="$T/x" verify=hash2
expect_rc 1
expect_err "pdd: verify=hash2: choose 0, 1, only or hash"
[ ! -e "$T/x" ] || fail "a refused verify= created the output"

echo "verify=hash and the digests after the copy hold under engine ${PDD_ENGINE:-auto}"
