#!/bin/bash
# The command line: every kind of bad operand is one exact line, the
# pointer to --help, exit 1, and no output file created or touched; the
# output-file flags (trunc, nocreat, excl, append); status= and time=.
. "$(dirname "$0")/../lib.sh"

head -c 5000 /dev/urandom >"$T/in"
head -c 9000 /dev/urandom >"$T/keep"
cp "$T/keep" "$T/keep.orig"

bad() {	# bad 'message' operands...: exit 1, exact message, nothing written
	local want=$1; shift
	run_pdd if="$T/in" "$@"
	expect_rc 1
	[ "$(wc -l <"$T/err")" = 2 ] || { cat "$T/err"; fail "$*: more than two lines"; }
	expect_err "$want"
	expect_err "Try 'pdd --help' for more information."
	[ ! -e "$T/new" ] || fail "$*: created the output file"
	cmp -s "$T/keep" "$T/keep.orig" || fail "$*: changed the output file"
	n=$((n + 1))
}
n=0
for of in "$T/new" "$T/keep"; do
	bad "pdd: bs=0: must be at least 1" of="$of" bs=0
	bad "pdd: bpt=0: must be at least 1" of="$of" bpt=0
	bad "pdd: threads=0: must be at least 1" of="$of" threads=0
	bad "pdd: thr=1025: must be at most 1024" of="$of" thr=1025
	bad "pdd: bs=-1: invalid number" of="$of" bs=-1
	bad "pdd: bs=1x: invalid number" of="$of" bs=1x
	bad "pdd: skip=12q: invalid number" of="$of" skip=12q
	bad "pdd: count=99999999999999999999: number too large" of="$of" count=99999999999999999999
	bad "pdd: seek=16E: number too large" of="$of" seek=16E
	bad "pdd: unknown operand 'foo=1'" of="$of" foo=1
	bad "pdd: unknown operand 'junk'" of="$of" junk
	bad "pdd: unknown option '--bogus'" of="$of" --bogus
	bad "pdd: bs= given more than once" of="$of" bs=1 bs=2
	bad "pdd: thr= given more than once" of="$of" threads=2 thr=3
	bad "pdd: of= given more than once" of="$of" of="$of"
	bad "pdd: iflag=append: 'append' applies to oflag= only" of="$of" iflag=append
	bad "pdd: oflag=direct,nodirect: 'direct' and 'nodirect' contradict" of="$of" oflag=direct,nodirect
	bad "pdd: oflag=sparse: unknown flag 'sparse'" of="$of" oflag=sparse
	bad "pdd: oflag=append and seek= contradict: appended data goes to the end" of="$of" oflag=append seek=1
	bad "pdd: engine=warp: unknown engine (choose from $("$PDD" --version | sed -n 's/^engines: //p'))" of="$of" engine=warp
	bad "pdd: status=loud: unknown status (choose none, noxfer, progress or json)" of="$of" status=loud
	bad "pdd: sync=2: must be at most 1" of="$of" sync=2
	bad "pdd: of=: missing file name" of=
	bad "pdd: cdbsz=8: must be 6, 10, 12 or 16" of="$of" cdbsz=8
	bad "pdd: fua=4: must be at most 3" of="$of" fua=4
	bad "pdd: timeout=0: must be at least 1" of="$of" timeout=0
	bad "pdd: oflag=fua,fua: 'fua' given twice" of="$of" oflag=fua,fua
done

# --help and --version
pdd --help >"$T/help" || fail "--help exit status"
head -1 "$T/help" | grep -qx "Usage: pdd \[OPERAND\]... \[OPTION\]..." || fail "--help first line"
[ "$(pdd --version | head -1)" = "pdd 0.1.0" ] || fail "--version"
pdd --version | grep -qx "engines: auto, .*threads\(, sg\)\?\(, nbd\)\?" || fail "--version engines line"
# then each library: the version of the one linked, or "not built"
"$PDD" --version >"$T/ver"
[ "$(sed -n '4,$s/:.*//p' "$T/ver" | tr '\n' ' ')" = "liburing libaio libsgutils2 libcrypto libmount libnbd " ] ||
	fail "--version libraries: $(cat "$T/ver")"
lib_line() {	# lib_line NAME ENGINE-OR-EMPTY VERSION-RE
	if [ -n "$2" ] && ! grep -q "^engines: .*\b$2\b" "$T/ver"; then
		grep -qx "$1: not built" "$T/ver" || fail "--version: $1 without its engine: $(grep "^$1:" "$T/ver")"
	elif ! grep -q "^$1: not built" "$T/ver"; then
		grep -qxE "$1: $3" "$T/ver" || fail "--version: $(grep "^$1:" "$T/ver"), expected $1: $3"
	fi
}
pcv() { pkg-config --modversion "$1" 2>/dev/null | sed 's/\./\\./g'; }
lib_line liburing uring "$(pcv liburing)"
lib_line libaio aio "$(dpkg-query -W -f '${source:Upstream-Version}' libaio-dev 2>/dev/null | sed 's/\./\\./g')"
lib_line libsgutils2 sg '[0-9]+\.[0-9]+ [0-9]{8}'
lib_line libcrypto "" "OpenSSL $(pcv libcrypto) .*"
lib_line libmount "" "$(pcv mount)"
lib_line libnbd nbd "$(pcv libnbd)"

# a missing input: 50 + ENOENT
run_pdd if="$T/none" of="$T/new"
expect_rc 52
expect_err "pdd: cannot open '$T/none' for reading: No such file or directory"
[ ! -e "$T/new" ] || fail "failed open created the output"

# nocreat: a missing output is an error
run_pdd if="$T/in" of="$T/new" oflag=nocreat
expect_rc 52
expect_err "pdd: cannot open '$T/new' for writing: No such file or directory"

# excl: an existing output is an error, a missing one is made
run_pdd if="$T/in" of="$T/keep" oflag=excl
expect_rc 67
expect_err "pdd: cannot open '$T/keep' for writing: File exists"
cmp -s "$T/keep" "$T/keep.orig" || fail "excl changed the existing file"
run_pdd if="$T/in" of="$T/new" oflag=excl
expect_rc 0
cmp -s "$T/in" "$T/new" || fail "excl copy"
rm -f "$T/new"

# no trunc: the old tail stays; trunc: cut at seek= first, as dd without notrunc
cp "$T/keep.orig" "$T/o1"; cp "$T/keep.orig" "$T/o2"
run_pdd if="$T/in" of="$T/o1" seek=3 count=2
expect_rc 0
dd if="$T/in" of="$T/o2" seek=3 count=2 conv=notrunc 2>/dev/null
cmp -s "$T/o1" "$T/o2" || fail "default must not truncate"
cp "$T/keep.orig" "$T/o1"; cp "$T/keep.orig" "$T/o2"
run_pdd if="$T/in" of="$T/o1" seek=3 count=2 oflag=trunc
expect_rc 0
dd if="$T/in" of="$T/o2" seek=3 count=2 2>/dev/null
cmp -s "$T/o1" "$T/o2" || fail "oflag=trunc differs from dd's truncation"
[ "$(stat -c %s "$T/o1")" = 2560 ] || fail "oflag=trunc size"

# append: old contents, then the input, in order
cp "$T/keep.orig" "$T/o1"
run_pdd if="$T/in" of="$T/o1" oflag=append threads=8 bpt=1
expect_rc 0
cat "$T/keep.orig" "$T/in" | cmp -s - "$T/o1" || fail "oflag=append"

# status=none: silence; noxfer: the records lines only
run_pdd if="$T/in" of="$T/o1" status=none
expect_rc 0
[ ! -s "$T/err" ] || fail "status=none printed: $(cat "$T/err")"
run_pdd if="$T/in" of="$T/o1" status=noxfer
expect_rc 0
printf '9+1 records in\n9+1 records out\n' | cmp -s - "$T/err" || fail "status=noxfer printed: $(cat "$T/err")"

# the bytes line and time=1: sgp_dd 1.46's line, then the CPU used
run_pdd if="$T/in" of="$T/o1" time=1
expect_rc 0
grep -qE '^5000 bytes \(5\.0 kB, 4\.9 KiB\) copied, [0-9.e-]+ s, [0-9.]+ [kMG]?B/s$' "$T/err" || fail "bytes line: $(cat "$T/err")"
grep -qE '^time to transfer data was [0-9]+\.[0-9]{6} secs, [0-9]+\.[0-9]{2} MB/sec$' "$T/err" || fail "time line: $(cat "$T/err")"
grep -qE '^cpu time: user [0-9]+\.[0-9]{3} secs, sys [0-9]+\.[0-9]{3} secs, [0-9]+\.[0-9]% of elapsed$' "$T/err" || fail "cpu line"

# a dry run prints the plan and creates nothing
run_pdd if="$T/in" of="$T/new" --dry-run >/dev/null
expect_rc 0
[ ! -e "$T/new" ] || fail "--dry-run created the output"
pdd if="$T/in" of="$T/new" --dry-run 2>/dev/null | grep -qF "'$T/new': regular file (to be created)" || fail "--dry-run plan"

# sg and raw nodes with no driver behind them (this machine has neither):
# the open fails, and says so, with 50 + ENXIO
if [ "$(id -u)" = 0 ]; then
	mknod "$T/sg" c 21 0
	run_pdd if="$T/sg" of="$T/new"
	expect_rc 56
	expect_err "pdd: cannot open '$T/sg' for reading: No such device or address"
	[ ! -e "$T/new" ] || fail "a refused copy created its output"
	mknod "$T/raw" c 162 1
	run_pdd if="$T/in" of="$T/raw"
	expect_rc 56
	expect_err "pdd: cannot open '$T/raw' for writing: No such device or address"
fi
echo "$n bad command lines refused exactly"
