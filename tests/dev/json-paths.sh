#!/bin/bash
# status=json with file names that are not UTF-8: for every byte a name
# can hold (1..255 but '/'), for valid multi-byte UTF-8 and for each kind
# of invalid sequence, the report is strict UTF-8 JSON, valid sequences
# are kept as they are, and each other byte reads back through Python's
# surrogateescape, so that os.fsencode() gives the name's bytes for the
# input, the output, the operands, the map and an error message.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "needs python3"
mkdir "$T/in" "$T/out" "$T/json"
head -c 1000 /dev/urandom >"$T/data"

# name N HEX...: file names in/aN... and out/oN... holding the bytes HEX
# between ASCII letters; the test list gets "N HEX..."
: >"$T/list"
name() {
	local n=$1 mid=
	shift
	for h in "$@"; do mid+="\\x$h"; done
	printf -v mid "$mid"
	cp "$T/data" "$T/in/a$n${mid}z"
	rc=0
	pdd if="$T/in/a$n${mid}z" of="$T/out/o$n${mid}z" status=json \
		>"$T/json/$n" 2>"$T/err" || rc=$?
	expect_rc 0
	echo "$n $*" >>"$T/list"
}
# every byte, 16 to a name, each between two 'z' so that none is part of
# a sequence with the next
n=0
group=()
for b in $(seq 1 255); do
	[ "$b" = 47 ] && continue	# '/'
	group+=("$(printf %02x "$b")" 7a)
	[ ${#group[@]} = 32 ] || [ "$b" = 255 ] || continue
	name $((n++)) "${group[@]}"
	group=()
done
name $((n++)) c3 a9			# é
name $((n++)) e2 82 ac			# €
name $((n++)) f0 9f 98 80		# U+1F600
name $((n++)) f4 8f bf bf		# U+10FFFF, the last
name $((n++)) ed 9f bf			# U+D7FF, below the surrogates
name $((n++)) ee 80 80			# U+E000, above them
name $((n++)) c0 af			# overlong '/'
name $((n++)) e0 80 af			# overlong, three bytes
name $((n++)) f0 80 80 af		# overlong, four bytes
name $((n++)) ed a0 80			# the surrogate U+D800
name $((n++)) ed bf bf			# the surrogate U+DFFF
name $((n++)) f4 90 80 80		# U+110000
name $((n++)) e2 82			# cut short
name $((n++)) f0 9f 98			# cut short
name $((n++)) 80 bf			# continuation bytes alone
name $((n++)) c3 a9 e2 82 e2 82 ac ff	# valid, cut, valid, invalid

python3 - "$T" <<'PY' || fail "the JSON does not give the names back"
import json, os, sys
t = os.fsencode(sys.argv[1])
enc = lambda s: s.encode("utf-8", "surrogateescape")
for line in open(os.path.join(t, b"list"), "rb"):
    n, *hexes = line.split()
    mid = bytes(int(h, 16) for h in hexes)
    src = t + b"/in/a" + n + mid + b"z"
    dst = t + b"/out/o" + n + mid + b"z"
    raw = open(os.path.join(t, b"json", n), "rb").read()
    text = raw.decode("utf-8")	# strict: no raw invalid byte, no surrogate
    j = json.loads(text)		# strict: no raw control character
    name = mid.hex(" ")
    assert enc(j["input"]["path"]) == src, (name, j["input"]["path"])
    assert enc(j["output"]["path"]) == dst, (name, j["output"]["path"])
    assert [enc(o) for o in j["operands"][:3]] == [b"if=" + src, b"of=" + dst, b"status=json"], (name, j["operands"])
    if sys.getfilesystemencoding() == "utf-8":
        assert os.fsencode(j["input"]["path"]) == src, name
    # valid UTF-8 is kept as it is, and only that
    dec = mid.decode("utf-8", "surrogateescape")
    assert j["input"]["path"].endswith(dec + "z"), (name, j["input"]["path"])
    if all(not 0xdc80 <= ord(c) <= 0xdcff for c in dec) and mid[0] >= 0x80:
        assert mid in raw, (name, "valid UTF-8 escaped")
    assert open(dst, "rb").read() == open(src, "rb").read(), (name, "copy differs")
PY

# the other strings: an error message, the map's path
bad=$'\xff\xed\xa0\x80\xc0'
rc=0
pdd if="$T/in/none$bad" of="$T/out/x" status=json >"$T/json/err" 2>"$T/err" || rc=$?
expect_rc 52
rc=0
pdd if="$T/data" of="$T/out/m" map="$T/map$bad" status=json >"$T/json/map" 2>"$T/err" || rc=$?
expect_rc 0
python3 - "$T" "$bad" <<'PY' || fail "the JSON does not give the message or the map back"
import json, os, sys
t, bad = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
enc = lambda s: s.encode("utf-8", "surrogateescape")
load = lambda f: json.loads(open(os.path.join(t, b"json", f), "rb").read().decode("utf-8"))
j = load(b"err")
assert enc(j["error"]["message"]) == b"cannot open '" + t + b"/in/none" + bad + b"' for reading: No such file or directory", j["error"]
j = load(b"map")
assert enc(j["map"]["path"]) == t + b"/map" + bad, j["map"]
PY
echo "status=json gives back every byte of $n file names"
