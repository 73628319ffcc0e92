#!/bin/bash
# status=json: one JSON object on standard output at the end, parsed with
# Python's json module and checked field by field, for a clean copy from
# a loop device, coe over real bad sectors (faultfs), a read error that
# stops the copy (with the resume command), a refusal before the copy, a
# map and verify=1; the text report is not printed.
. "$(dirname "$0")/../lib.sh"
requires_root
command -v python3 >/dev/null || skip "needs python3"
lbs=512
MiB=1048576

# check FILE PYTHON: the JSON in FILE as j, and asserts about it
check() {
	python3 - "$1" "$2" <<'EOF' || fail "JSON check failed (line ${BASH_LINENO[0]}): $2"
import json, sys
text = open(sys.argv[1]).read()
j = json.loads(text)
exec(sys.argv[2], {"j": j})
EOF
}
engine=${PDD_ENGINE:-uring}

"$STAMP" fill "$T/back" 0 $((4 * MiB)) 3
bad="read=$((100 * lbs))-$((101 * lbs)),$((3000 * lbs + 7))-$((3000 * lbs + 8))"
mkfaultfs "$T/back" "$T/mnt"
dev=$(mkloop_unmerged "$T/mnt/disk")

# a clean copy
rc=0
pdd if="$dev" of="$T/out" bpt=64 status=json >"$T/json" 2>"$T/err" || rc=$?
expect_rc 0
[ ! -s "$T/err" ] || { cat "$T/err"; fail "status=json printed text on stderr"; }
check "$T/json" "
assert j['pdd'] and j['dry_run'] is False
assert j['operands'] == ['if=$dev', 'of=$T/out', 'bpt=64', 'status=json'] + (['engine=$engine'] if '${PDD_ENGINE:-}' else []), j['operands']
i, o = j['input'], j['output']
assert i['path'] == '$dev' and i['kind'] == 'block' and i['size'] == $((4 * MiB)), i
assert i['logical_block'] == 512 and i['physical_block'] == 512 and i['direct'] is True, i
assert i['backing_file'] == '$T/mnt/disk', i
assert o['path'] == '$T/out' and o['kind'] == 'file' and o['direct'] is False, o
assert j['bs'] == 512 and j['engine'] == '$engine', (j['bs'], j['engine'])
assert i['engine'] == o['engine'] == '$engine', (i['engine'], o['engine'])
assert j['bytes_in'] == j['bytes_out'] == $((4 * MiB))
assert j['records_in'] == j['records_out'] == {'full': 8192, 'partial': 0}
assert j['seconds'] > 0 and j['bytes_per_second'] > 0
assert j['cpu_user_seconds'] >= 0 and j['cpu_sys_seconds'] >= 0
assert j['error'] is None and j['signal'] is None and j['resume'] is None
assert j['unreadable_blocks'] == {'count': 0, 'block_size': 0, 'lbas': []}
assert j['map'] is None and j['verify'] is None
assert j['exit_status'] == 0
"
cmp -s "$T/back" "$T/out" || fail "the copy differs"

# coe over two bad sectors: their LBAs, in order of the device
echo "$bad" >"$T/mnt/control"
rc=0
pdd if="$dev" of="$T/out" bpt=64 coe=1 status=json >"$T/json" 2>"$T/err" || rc=$?
expect_rc 3
check "$T/json" "
u = j['unreadable_blocks']
assert u['count'] == 2 and u['block_size'] == 512 and sorted(u['lbas']) == [100, 3000], u
assert j['error'] is None and j['exit_status'] == 3
assert j['records_out'] == {'full': 8192, 'partial': 0}
"

# without coe the copy stops at the failing transfer: the error, the resume
rc=0
pdd if="$dev" of="$T/out" bpt=64 status=json >"$T/json" 2>"$T/err" || rc=$?
expect_rc 3
resume=$(sed -n 's/^pdd: to resume: //p' "$T/err")
[ -n "$resume" ] || { cat "$T/err"; fail "no resume line on stderr"; }
check "$T/json" "
e = j['error']
assert e == {'op': 'read', 'block': 64, 'offset': 32768, 'message': 'Input/output error'}, e
assert j['bytes_out'] == 32768 and j['records_out'] == {'full': 64, 'partial': 0}
assert j['resume'] == '''$resume''', j['resume']
assert j['exit_status'] == 3
"

# a map; verify=1
echo "" >"$T/mnt/control"
rm -f "$T/out"
rc=0
pdd if="$dev" of="$T/out" map="$T/map" status=json >"$T/json" 2>"$T/err" || rc=$?
expect_rc 0
check "$T/json" "
assert j['map'] == {'path': '$T/map', 'finished': $((4 * MiB)), 'bad': 0, 'to_try': 0}, j['map']
assert j['verify'] is None and j['exit_status'] == 0
"
rc=0
pdd if="$dev" of="$T/out" verify=1 status=json >"$T/json" 2>"$T/err" || rc=$?
expect_rc 0
[ ! -s "$T/err" ] || { cat "$T/err"; fail "status=json with verify=1 printed text"; }
check "$T/json" "
assert j['map'] is None
v = j['verify']
assert v['blocks'] == 8192 and v['differ'] == 0 and v['first'] is None and v['seconds'] >= 0, v
assert j['exit_status'] == 0
"

# refused before the copy: the reason, both sides, nothing copied
truncate -s $MiB "$T/small"
small=$(mkloop "$T/small")
rc=0
pdd if="$dev" of="$small" status=json >"$T/json" 2>"$T/err" || rc=$?
expect_rc 31
check "$T/json" "
e = j['error']
assert e['op'] == 'start' and e['block'] is None, e
assert e['message'] == \"'$small' is too small: the copy needs $((4 * MiB)) bytes from byte 0 on, and the device holds $MiB; give count= to copy less\", e
assert j['output']['kind'] == 'block' and j['output']['size'] == $MiB
assert j['bytes_out'] == 0 and j['exit_status'] == 31
"

# a dry run: the JSON alone on stdout, nothing created
rc=0
pdd if="$dev" of="$T/dry.img" --dry-run status=json >"$T/json" 2>"$T/err" || rc=$?
expect_rc 0
check "$T/json" "
assert j['dry_run'] is True and j['output']['path'] == '$T/dry.img'
assert j['bytes_out'] == 0 and j['error'] is None and j['exit_status'] == 0
"
[ ! -e "$T/dry.img" ] || fail "a dry run created the output"

# a file that cannot be opened: no devices yet
rc=0
pdd if="$T/missing" of="$T/out" status=json >"$T/json" 2>"$T/err" || rc=$?
expect_rc 52
check "$T/json" "
assert j['input'] is None and j['output'] is None and j['bs'] is None
assert j['error']['message'] == \"cannot open '$T/missing' for reading: No such file or directory\", j['error']
assert j['exit_status'] == 52
"

# the JSON goes to standard output: not when that is the copy's output
run_pdd if="$T/back" status=json
expect_rc 1
expect_err "pdd: status=json prints on standard output, which is the output here: give of="
echo "status=json reports every field"
