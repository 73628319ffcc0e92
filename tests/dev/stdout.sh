#!/bin/bash
# pdd's own standard output (--help, --version, the dry run's plan,
# status=json) into a full device or a closed descriptor: one exact line,
# status 15 for a run that succeeded, its own status for one that failed,
# the copy still made.  A closed standard output or error is never taken
# by a file pdd opens.  When standard output carries the copy's data, its
# errors are the copy's alone.
. "$(dirname "$0")/../lib.sh"
head -c 5000 /dev/urandom >"$T/a"

# only LINE...: stderr holds exactly these lines
only() {
	local want
	want=$(printf '%s\n' "$@")
	[ "$(cat "$T/err")" = "$want" ] || {
		echo "--- stderr:"; cat "$T/err"; echo "--- expected:"; echo "$want"
		fail "stderr (line ${BASH_LINENO[0]})"
	}
}
full="pdd: error writing standard output: No space left on device"
closed="pdd: error writing standard output: Bad file descriptor"

for args in "--help" "--version" "--dry-run if=$T/a of=$T/b" \
	"--dry-run if=$T/a of=$T/b status=json" "if=$T/a of=$T/b status=json"; do
	for to in full closed; do
		rm -f "$T/b"
		rc=0
		if [ $to = full ]; then
			pdd $args >/dev/full 2>"$T/err" || rc=$?
			want=$full
		else
			pdd $args >&- 2>"$T/err" || rc=$?
			want=$closed
		fi
		expect_rc 15
		only "$want"
		case $args in
		--dry-run*) [ ! -e "$T/b" ] || fail "$args: a dry run created the output" ;;
		if=*) same_bytes "$T/a" "$T/b" ;;
		esac
	done
done

# a run that failed keeps its own status
rc=0
pdd if="$T/none" of="$T/b" status=json >/dev/full 2>"$T/err" || rc=$?
expect_rc 52
only "pdd: cannot open '$T/none' for reading: No such file or directory" "$full"

# into a pipe all is well
rm -f "$T/b"
pdd if="$T/a" of="$T/b" status=json 2>"$T/err" | cat >/dev/null
rc=${PIPESTATUS[0]}
expect_rc 0
only
same_bytes "$T/a" "$T/b"
pdd --help 2>"$T/err" | cat >/dev/null
rc=${PIPESTATUS[0]}
expect_rc 0
only

# a closed standard output or error is not the output file's number:
# neither the JSON nor the report is written into the copy
rm -f "$T/b"
rc=0
pdd if=- of="$T/b" status=json <"$T/a" >&- 2>"$T/err" || rc=$?
expect_rc 15
only "$closed"
same_bytes "$T/a" "$T/b"
rm -f "$T/b"
rc=0
pdd if=- of="$T/b" <"$T/a" 2>&- || rc=$?
expect_rc 0
same_bytes "$T/a" "$T/b"

# the copy's data on standard output: its errors are the copy's
run_pdd if="$T/a" >/dev/full
expect_rc 15
expect_err "pdd: error writing 'standard output' at block 0: No space left on device"
grep -q "error writing standard output" "$T/err" && fail "reported twice"
pdd if="$T/a" 2>"$T/err" | cmp -s - "$T/a" || fail "copy to a pipe differs"
rc=${PIPESTATUS[0]}
expect_rc 0
only "9+1 records in" "9+1 records out" "$(sed -n 3p "$T/err")"
for stdout in '>&-' '1</dev/null'; do
	rc=0
	eval 'pdd if="$T/a" 2>"$T/err"' "$stdout" || rc=$?
	expect_rc 59
	only "pdd: cannot open 'standard output' for writing: Bad file descriptor"
done
echo "errors writing standard output are reported"
