#!/bin/bash
# hash=: the digests pdd takes while it copies equal md5sum, sha1sum,
# sha256sum, sha512sum and b2sum of the output's range, for files and
# 512/4096-byte loop devices, with skip/seek/count, a partial last block,
# holes of the input (hashed as zeros, never read) and several algorithms
# at once; hashwindow= digests equal those of dd | sha256sum per window;
# hashlog= is accepted by sha256sum -c; a copy with coe=1 hashes its
# zero-filled block as zeros; a failed copy gives no digest; a copy
# resumed from a map reads the output back to hash it, and says so.
. "$(dirname "$0")/../lib.sh"
requires_root
"$PDD" --version | grep -q "(libcrypto)" || skip "this pdd is built without libcrypto"

MiB=1048576
"$STAMP" fill "$T/src" 0 $((6 * MiB + 1000)) 61
# digest ALG FILE [SKIP COUNT]: ALG's digest of bytes [SKIP, SKIP+COUNT)
digest() {
	local tool=${1}sum
	[ "$1" = blake2b512 ] && tool=b2sum
	if [ $# -gt 2 ]; then
		tail -c +$(($3 + 1)) "$2" | head -c "$4" | $tool | cut -d' ' -f1
	else
		$tool <"$2" | cut -d' ' -f1
	fi
}
# said ALG: the digest pdd printed
said() { sed -n "s/^pdd: $1 \\([0-9a-f]*\\)\$/\\1/p" "$T/err"; }

# --- a file, every algorithm at once
rm -f "$T/out"
run_pdd if="$T/src" of="$T/out" hash=md5,sha1,sha256,sha512,blake2b512
expect_rc 0
same_bytes "$T/src" "$T/out"
for a in md5 sha1 sha256 sha512 blake2b512; do
	[ "$(said $a)" = "$(digest $a "$T/out")" ] || fail "$a: pdd says '$(said $a)', ${a}sum '$(digest $a "$T/out")'"
done
# sha3-256 against openssl
want=$(openssl dgst -sha3-256 -r "$T/out" | cut -d' ' -f1)
run_pdd if="$T/src" of="$T/out" hash=sha3-256
expect_rc 0
[ "$(said sha3-256)" = "$want" ] || fail "sha3-256: pdd says '$(said sha3-256)', openssl '$want'"

# --- loop devices, skip/seek/count: the digest is of the output's range
for sec in 512 4096; do
	"$STAMP" fill "$T/d$sec" 0 $((8 * MiB)) 62
	D=$(mkloop "$T/d$sec" "$sec")
	run_pdd if="$T/src" of="$D" bs=4096 skip=3 seek=5 count=1000 hash=sha256
	expect_rc 0
	[ "$(said sha256)" = "$(digest sha256 "$D" $((5 * 4096)) $((1000 * 4096)))" ] ||
		fail "$sec-byte device: the digest is not that of the range written"
done

# --- an input with holes (not read: hashed as zeros) and a partial end
truncate -s 0 "$T/holes"
truncate -s $((9 * MiB + 77)) "$T/holes"
dd if="$T/src" of="$T/holes" bs=1M count=1 seek=4 conv=notrunc status=none
rm -f "$T/hout"
run_pdd if="$T/holes" of="$T/hout" hash=sha256,md5 status=json >"$T/json"
expect_rc 0
same_bytes "$T/holes" "$T/hout"
python3 - "$T/json" "$(digest sha256 "$T/holes")" "$(digest md5 "$T/holes")" <<'PY' || fail "holes: JSON digests"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["hashes"] == {"md5": sys.argv[3], "sha256": sys.argv[2]}, j["hashes"]
assert j["bytes_hashed"] == j["bytes_out"] and j["bytes_in_holes"] > 0, j
PY

# --- hashwindow=: one digest a window, as dd | sha256sum gives it
rm -f "$T/out"
run_pdd if="$T/src" of="$T/out" hash=sha256 hashwindow=1M hashlog="$T/log" status=json >"$T/json"
expect_rc 0
python3 - "$T/json" "$T/out" <<'PY' || fail "hashwindow: the windows' digests"
import hashlib, json, sys
j = json.load(open(sys.argv[1]))
data = open(sys.argv[2], "rb").read()
w = j["hash_windows"]
assert len(w) == 7, len(w)
for i, x in enumerate(w):
    assert x["offset"] == i << 20 and x["length"] == len(data[i << 20:(i + 1) << 20]), x
    assert x["sha256"] == hashlib.sha256(data[i << 20:(i + 1) << 20]).hexdigest(), i
PY
for i in 0 3 6; do
	grep -q "$(dd if="$T/out" bs=1M skip=$i count=1 status=none | sha256sum | cut -d' ' -f1)" "$T/log" ||
		fail "hashwindow: window $i's digest is not in the hashlog"
done
# the hashlog checks the image with sha256sum -c
(cd "$(dirname "$T/out")" && sha256sum -c "$T/log") >"$T/check" 2>&1 ||
	{ cat "$T/log" "$T/check"; fail "sha256sum -c does not accept the hashlog"; }
grep -qx "$T/out: OK" "$T/check" || { cat "$T/check"; fail "sha256sum -c: $(cat "$T/check")"; }

# --- coe=1: the unreadable block is hashed as the zeros written
mkfaultfs "$T/src" "$T/ff" "read=$((2 * MiB + 100))-$((2 * MiB + 101))"
F=$(mkloop_unmerged "$T/ff/disk" 512)
rm -f "$T/cout"
run_pdd if="$F" of="$T/cout" coe=1 hash=sha256
expect_rc 3
[ "$(said sha256)" = "$(digest sha256 "$T/cout")" ] || fail "coe=1: the digest is not that of the output"
cmp -s -n $((512 * 4096)) "$T/src" "$T/cout" || fail "coe=1: the copy before the bad block differs"

# --- a copy that fails gives no digest, only how far the hash got
# (a file that cannot grow past 1 MiB: ulimit -f)
rm -f "$T/small"
rc=0
(ulimit -f 1024; trap '' XFSZ; exec "$PDD" if="$T/src" of="$T/small" hash=sha256 "${eng[@]}") 2>"$T/err" || rc=$?
expect_rc 15
grep -q '^pdd: sha256 ' "$T/err" && fail "a failed copy printed a digest"
grep -qE '^pdd: hashed [0-9]+ bytes so far; no digest of the whole range$' "$T/err" ||
	{ cat "$T/err"; fail "no 'hashed so far' line"; }

# --- a copy resumed from a map: the output is read back to hash it
rm -f "$T/rout" "$T/rmap"
run_pdd if="$T/src" of="$T/rout" count=4096 map="$T/rmap"
expect_rc 0
run_pdd if="$T/src" of="$T/rout" map="$T/rmap" hash=sha256
expect_rc 0
expect_err "pdd: hash=: this run wrote part of the range: hashing '$T/rout' by reading it"
[ "$(said sha256)" = "$(digest sha256 "$T/rout")" ] || fail "resumed: the digest is not that of the output"

# --- a map whose finished parts are at the end, and in the middle: the
# whole range is read back (the output already holds those parts)
for m in "0 1M ? / 1M 5M +" "0 1M + / 1M 1M ? / 2M 2M + / 4M 2M ?"; do
	cp "$T/src" "$T/rout"
	dd if=/dev/zero of="$T/rout" bs=1M count=1 conv=notrunc status=none
	{ echo "# Mapfile"; echo "0x0 +"
	  echo "$m" | tr '/' '\n' | while read -r a b st; do
		[ -n "$a" ] && printf '0x%X 0x%X %s\n' $(($(numfmt --from=iec "$a"))) $(($(numfmt --from=iec "$b"))) "$st"
	  done; } >"$T/rmap"
	run_pdd if="$T/src" of="$T/rout" count=$((6 * 2048)) map="$T/rmap" hash=sha256
	expect_rc 0
	expect_err "pdd: hash=: this run wrote part of the range: hashing '$T/rout' by reading it"
	[ "$(said sha256)" = "$(digest sha256 "$T/rout" 0 $((6 * MiB)))" ] ||
		fail "map '$m': the digest is not that of the range"
done

# --- of=- resumed: the output pdd holds is read back, not a file named '-'
cp "$T/src" "$T/sout"
printf '# Mapfile\n0x0 +\n0x0 0x100000 +\n' >"$T/smap"
echo "not the output" >"$T/-"
(cd "$T" && rc=0 && "$PDD" if="$T/src" of=- map="$T/smap" hash=sha256 "${eng[@]}" 1<>"$T/sout" 2>"$T/err") ||
	{ cat "$T/err"; fail "of=- resumed: the copy failed"; }
[ "$(said sha256)" = "$(digest sha256 "$T/sout")" ] || fail "of=- resumed: the digest is not that of the output"

# --- a copy whose flush fails gives no digest and no hashlog
"$STAMP" fill "$T/fsback" 0 $((6 * MiB + 1000)) 63
mkfaultfs "$T/fsback" "$T/fs" fsync=1
rm -f "$T/flog"
run_pdd if="$T/src" of="$T/fs/disk" hash=sha256 hashlog="$T/flog"
expect_rc 3
grep -q '^pdd: sha256 ' "$T/err" && { cat "$T/err"; fail "a copy whose flush failed printed a digest"; }
[ ! -e "$T/flog" ] || fail "a copy whose flush failed wrote a hashlog"

# --- refusals
run_pdd if="$T/src" of="$T/x" hash=sha256,crc32
expect_rc 1
expect_err "pdd: hash=sha256,crc32: unknown or repeated algorithm 'crc32' (choose from md5, sha1, sha256, sha512, sha3-256, blake2b512)"
run_pdd if="$T/src" of="$T/x" hashlog="$T/l2"
expect_rc 1
expect_err "pdd: hashlog= needs hash=: which digests?"
[ ! -e "$T/x" ] || fail "a refused hash= created the output"

echo "digests equal the coreutils' under engine ${PDD_ENGINE:-auto}"
