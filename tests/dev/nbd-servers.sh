#!/bin/bash
# NBD sides against real servers on Unix sockets in the test's own
# directory, on address-stamped data:
#  - qemu-nbd (a raw file, and a qcow2 image made by qemu-img) as input
#    and as output: pdd's copy is nbdcopy's byte for byte, and the
#    source's; qemu-nbd is stopped by its pid, at the end and by lib.sh's
#    cleanup;
#  - TLS: nbds+unix with a PSK and with X.509 certificates, copies both
#    ways exact; a wrong key or a missing client certificate is refused
#    with the URI named, status 55 (EIO), nothing created or written;
#  - a server's block-size constraints (nbdkit's blocksize-policy filter):
#    the dry run shows them, skip=, seek=, bpt= and count= that cannot
#    align are refused before any request (the log filter sees none), a
#    transfer larger than the server's maximum is refused and the default
#    fitted to it, and what is allowed copies exactly;
#  - conns=: a multi-conn export takes 2 connections by default, conns=N
#    as asked (the server sees them), copies exact with 1, 2 and 8; one
#    without multi-conn takes 1, with a note for conns=4;
#  - verify=1 and verify=only with an NBD side at either end (also on
#    qemu-nbd, which takes one client at a time), a changed block found
#    (status 14); status=json on an NBD copy; progress lines on a slow one;
#  - oflag=fua: every Write the server sees carries FUA, and each
#    connection's last command is a Flush after the last write;
#  - a pdd built without libnbd (in $T, from this tree's sources) refuses
#    a URI with status 50 and does not list nbd in --version.
# engines: uring
. "$(dirname "$0")/../lib.sh"
"$PDD" --version | grep -q '^engines:.* nbd' || skip "this pdd is built without libnbd"
for t in nbdkit nbdcopy nbdinfo qemu-nbd qemu-img psktool certtool python3; do
	command -v $t >/dev/null || skip "no $t (scripts/install-deps.sh installs it)"
done

MiB=1048576
SIZE=$((8 * MiB))
"$STAMP" fill "$T/src" 0 $SIZE 21

# copy_in NAME FILE [OPERAND]...: pdd (with the operands) and nbdcopy copy
# export NAME to files; both equal FILE
copy_in() {
	rm -f "$T/out" "$T/ref"
	run_pdd if="$(uri "$1")" of="$T/out" "${@:3}"
	expect_rc 0
	nbdcopy "$(uri "$1")" "$T/ref" || fail "nbdcopy from $1 failed (line ${BASH_LINENO[0]})"
	same_bytes "$T/ref" "$T/out"
	same_bytes "$2" "$T/out"
}

# read_back NAME FILE: what export NAME holds, through the server
read_back() {
	rm -f "$2"
	nbdcopy "$(uri "$1")" "$2" || fail "nbdcopy from $1 failed (line ${BASH_LINENO[0]})"
}

# --- qemu-nbd: a raw file and a qcow2 image ----------------------------------
# --persistent: qemu-nbd ends when its first client leaves otherwise; it
# takes one client at a time (shared=1), which verify= must live with
"$STAMP" fill "$T/qraw" 0 $SIZE 22
cp "$T/qraw" "$T/qraw.orig"
serve_qemu qraw --persistent -f raw "$T/qraw"
copy_in qraw "$T/qraw.orig"
expect_err "16384+0 records out"
# qemu-nbd's minimum block size of 1 is not a 1-byte block: bs=512
"$PDD" if="$(uri qraw)" of="$T/out" --dry-run >"$T/plan" 2>&1 || fail "dry run on qemu-nbd: $(cat "$T/plan")"
grep -qx "          logical block 512, physical block 4096, largest transfer 33554432, 1 connection" "$T/plan" ||
	fail "dry run on qemu-nbd: $(cat "$T/plan")"
# any byte range, as the server takes it
run_pdd if="$(uri qraw)" of="$T/out2" bs=1 skip=1000 count=5000 bpt=333
expect_rc 0
cmp -s -i 1000:0 -n 5000 "$T/qraw.orig" "$T/out2" && [ "$(stat -c %s "$T/out2")" = 5000 ] ||
	fail "bs=1 skip=1000 from qemu-nbd"

# as the output: pdd into one raw export, nbdcopy into another
cp "$T/qraw.orig" "$T/qraw2"
serve_qemu qraw2 --persistent -f raw "$T/qraw2"
run_pdd if="$T/src" of="$(uri qraw)"
expect_rc 0
nbdcopy "$T/src" "$(uri qraw2)" || fail "nbdcopy to qemu-nbd failed"
same_bytes "$T/qraw2" "$T/qraw"
same_bytes "$T/src" "$T/qraw"

# qcow2 images made by qemu-img, through qemu-nbd -f qcow2
qemu-img create -q -f qcow2 "$T/a.qcow2" $SIZE || fail "qemu-img create"
qemu-img create -q -f qcow2 "$T/b.qcow2" $SIZE || fail "qemu-img create"
serve_qemu qa --persistent -f qcow2 "$T/a.qcow2"
serve_qemu qb --persistent -f qcow2 "$T/b.qcow2"
run_pdd if="$T/src" of="$(uri qa)" bs=4096 seek=3 count=1000
expect_rc 0
expect_err "1000+0 records out"
nbdcopy "$T/src" "$(uri qb)" || fail "nbdcopy to qcow2 failed"
read_back qa "$T/qa.img"
cmp -s -n $((1000 * 4096)) -i 0:$((3 * 4096)) "$T/src" "$T/qa.img" || fail "the range pdd wrote to qcow2 differs"
cmp -s -n $((3 * 4096)) "$T/qa.img" /dev/zero || fail "qcow2: blocks before seek= are not zeros"
cmp -s -n $((SIZE - 1003 * 4096)) -i $((1003 * 4096)):0 "$T/qa.img" /dev/zero ||
	fail "qcow2: blocks after the range are not zeros"
run_pdd if="$T/src" of="$(uri qa)"
expect_rc 0
read_back qa "$T/qa.img"
read_back qb "$T/qb.img"
same_bytes "$T/qb.img" "$T/qa.img"
same_bytes "$T/src" "$T/qa.img"
# as the input, and from one server to another (qcow2 to raw)
copy_in qa "$T/src"
run_pdd if="$(uri qb)" of="$(uri qraw2)" bs=65536
expect_rc 0
same_bytes "$T/src" "$T/qraw2"

# verify= with qemu-nbd at either end: the copy's connections are reused
# where they are open (a second client would wait for the first, and pdd
# with it: killed after 20 s, status 137)
run_pdd_20() {
	rc=0
	timeout -s KILL 20 "$PDD" "$@" "${eng[@]}" 2>"$T/err" || rc=$?
}
run_pdd_20 if="$(uri qa)" of="$T/out" verify=1
expect_rc 0
expect_err "pdd: verify: 16384 blocks of 512 bytes compared, all identical"
run_pdd_20 if="$T/qraw.orig" of="$(uri qraw)" verify=1
expect_rc 0
expect_err "pdd: verify: 16384 blocks of 512 bytes compared, all identical"
run_pdd_20 if="$(uri qa)" of="$(uri qraw)" verify=only
expect_rc 14
expect_err "pdd: verify: 16384 of 16384 blocks of 512 bytes differ, the first at block 0 of '$(uri qraw)'"
run_pdd_20 if="$T/qraw.orig" of="$(uri qraw)" verify=only
expect_rc 0
# a qemu-nbd without --persistent ends with its first client: the copy
# keeps its connections to the output for verify=
cp "$T/qraw.orig" "$T/once"
: >"$T/once.img"
truncate -s "$(stat -c %s "$T/once")" "$T/once.img"
serve_qemu once -f raw "$T/once.img"
run_pdd_20 if="$T/once" of="$(uri once)" verify=1
expect_rc 0
expect_err "pdd: verify: 16384 blocks of 512 bytes compared, all identical"
same_bytes "$T/once" "$T/once.img"

# each qemu-nbd is stopped by its pid
for s in qraw qraw2 qa qb; do
	p=$(cat "$T/$s.pid")
	kill -0 "$p" 2>/dev/null || fail "qemu-nbd $s ($p) ended by itself"
	stop_server $s
	kill -0 "$p" 2>/dev/null && fail "qemu-nbd $s ($p) still runs"
done
# and lib.sh's cleanup stops one left running when a test ends
PDD_TEST_DIR=$T bash -c '. "$1/tests/lib.sh" >/dev/null; serve_qemu left --persistent -f raw "$2"; cat "$T/left.pid"' \
	_ "$top" "$T/src" >"$T/left" || fail "a test with qemu-nbd left running failed"
p=$(cat "$T/left")
for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
kill -0 "$p" 2>/dev/null && fail "qemu-nbd $p outlived the test that started it"

# --- TLS -------------------------------------------------------------------
psktool -u alice -p "$T/keys.psk" >/dev/null 2>&1 || fail "psktool failed"
psktool -u alice -p "$T/wrong.psk" >/dev/null 2>&1 || fail "psktool failed"
cp "$T/src" "$T/tdisk"
serve psk --tls=require --tls-psk="$T/keys.psk" file "$T/tdisk"
psk="nbds+unix://alice@/?socket=$T/psk.sock&tls-psk-file=$T/keys.psk"
rm -f "$T/out"
run_pdd if="$psk" of="$T/out"
expect_rc 0
same_bytes "$T/src" "$T/out"
"$STAMP" fill "$T/src2" 0 $SIZE 23
run_pdd if="$T/src2" of="$psk" bs=4096 verify=1
expect_rc 0
same_bytes "$T/src2" "$T/tdisk"
# a wrong key: refused at the connection, the URI named, nothing made
bad="nbds+unix://alice@/?socket=$T/psk.sock&tls-psk-file=$T/wrong.psk"
rm -f "$T/out"
run_pdd if="$bad" of="$T/out"
expect_rc 55
grep -q "^pdd: cannot connect to '$bad': " "$T/err" || { cat "$T/err"; fail "wrong PSK: the message"; }
[ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err"; fail "wrong PSK: more than the refusal"; }
[ ! -e "$T/out" ] || fail "wrong PSK: the output was created"
run_pdd if="$T/src" of="$bad"
expect_rc 55
grep -q "^pdd: cannot connect to '$bad': " "$T/err" || { cat "$T/err"; fail "wrong PSK: the message"; }
same_bytes "$T/src2" "$T/tdisk"

# X.509: a CA, the server's certificate, the client's
mkdir -p "$T/pki" "$T/cli" "$T/ca-only"
(
	cd "$T/pki" || exit 1
	certtool --generate-privkey --outfile ca-key.pem
	printf 'cn = pdd test CA\nca\ncert_signing_key\nexpiration_days = 2\n' >ca.info
	certtool --generate-self-signed --load-privkey ca-key.pem --template ca.info --outfile ca-cert.pem
	certtool --generate-privkey --outfile server-key.pem
	printf 'cn = localhost\ndns_name = localhost\ntls_www_server\nencryption_key\nsigning_key\nexpiration_days = 2\n' >server.info
	certtool --generate-certificate --load-ca-certificate ca-cert.pem --load-ca-privkey ca-key.pem \
		--load-privkey server-key.pem --template server.info --outfile server-cert.pem
	certtool --generate-privkey --outfile ../cli/client-key.pem
	printf 'cn = pdd client\ntls_www_client\nencryption_key\nsigning_key\nexpiration_days = 2\n' >client.info
	certtool --generate-certificate --load-ca-certificate ca-cert.pem --load-ca-privkey ca-key.pem \
		--load-privkey ../cli/client-key.pem --template client.info --outfile ../cli/client-cert.pem
	cp ca-cert.pem ../cli/ && cp ca-cert.pem ../ca-only/
) >/dev/null 2>&1 || fail "certtool could not make the certificates"
serve x509 --tls=require --tls-certificates="$T/pki" --tls-verify-peer file "$T/tdisk"
x509="nbds+unix:///?socket=$T/x509.sock&tls-certificates=$T/cli"
rm -f "$T/out"
run_pdd if="$x509" of="$T/out"
expect_rc 0
same_bytes "$T/src2" "$T/out"
run_pdd if="$T/src" of="$x509" bs=65536 verify=1
expect_rc 0
same_bytes "$T/src" "$T/tdisk"
# the server wants the client's certificate
noclient="nbds+unix:///?socket=$T/x509.sock&tls-certificates=$T/ca-only"
run_pdd if="$T/src2" of="$noclient"
expect_rc 55
grep -q "^pdd: cannot connect to '$noclient': " "$T/err" || { cat "$T/err"; fail "no client certificate: the message"; }
same_bytes "$T/src" "$T/tdisk"

# --- block-size constraints ---------------------------------------------------
cp "$T/src" "$T/bdisk"
serve bp --filter=log --filter=blocksize-policy file "$T/bdisk" logfile="$T/bp.log" \
	blocksize-minimum=4096 blocksize-preferred=65536 blocksize-maximum=1048576 \
	blocksize-error-policy=error
bp=$(uri bp)
"$PDD" if="$bp" of="$T/new" --dry-run >"$T/plan" 2>&1 || fail "dry run: $(cat "$T/plan")"
grep -qx "          logical block 4096, physical block 65536, largest transfer 1048576, 2 connections" "$T/plan" ||
	fail "dry run: the block sizes: $(cat "$T/plan")"
grep -q "^  copy    $SIZE bytes, 2048+0 blocks of bs=4096$" "$T/plan" || fail "dry run: bs=: $(cat "$T/plan")"

# requests_seen: Read or Write requests the server has seen so far
requests_seen() { grep -cE 'connection=[0-9]+ (Read|Write) id=' "$T/bp.log"; }
# refused MESSAGE: exit 31, exact message, no request, nothing made or written
refused() {
	expect_rc 31
	expect_err "$1"
	[ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err"; fail "more than the refusal (line ${BASH_LINENO[0]})"; }
	[ "$(requests_seen)" = 0 ] || fail "a request went out before the refusal (line ${BASH_LINENO[0]})"
	[ ! -e "$T/new" ] || fail "a refused copy created its output (line ${BASH_LINENO[0]})"
	same_bytes "$T/src" "$T/bdisk"
}
run_pdd if="$bp" of="$T/new" bs=512 skip=1
refused "pdd: skip=1: offset 512 of '$bp' is not a multiple of its logical block size 4096; with bs=512 skip= must be a multiple of 8"
run_pdd if="$T/src2" of="$bp" bs=512 seek=12
refused "pdd: seek=12: offset 6144 of '$bp' is not a multiple of its logical block size 4096; with bs=512 seek= must be a multiple of 8"
run_pdd if="$bp" of="$T/new" bs=512 bpt=4
refused "pdd: bs=512 bpt=4: a transfer of 2048 bytes is not a multiple of the logical block size 4096 of '$bp'; with bs=512 bpt= must be a multiple of 8"
run_pdd if="$bp" of="$T/new" bs=512 count=9
refused "pdd: '$bp' is an NBD export, which moves whole 4096-byte blocks only, and the copy is 4608 bytes; give a count= of whole blocks"
head -c 1000 "$T/src2" >"$T/odd"
run_pdd if="$T/odd" of="$bp"
refused "pdd: '$bp' is an NBD export, which moves whole 4096-byte blocks only, and the copy is 1000 bytes; give a count= of whole blocks"
run_pdd if="$bp" of="$T/new" bs=4096 bpt=257
refused "pdd: bpt=257: a transfer of 1052672 bytes is more than one request to '$bp' may move (1048576 bytes); give bpt=256 or less"
run_pdd if="$T/src2" of="$bp" bs=512 bpt=2049
refused "pdd: bpt=2049: a transfer of 1049088 bytes is more than one request to '$bp' may move (1048576 bytes); give bpt=2048 or less"
run_pdd if="$bp" of="$T/new" bs=2M
refused "pdd: '$bp' takes at most 1048576 bytes in one request, less than one block of 2097152"
# the default bpt is fitted to the largest request
"$PDD" if="$bp" of="$T/new" bs=65536 --dry-run >"$T/plan" 2>&1 || fail "dry run: $(cat "$T/plan")"
grep -q "^  using   engine=nbd for the input and uring for the output, 1048576 bytes per transfer (bpt=16), " "$T/plan" ||
	fail "dry run: the fitted transfer: $(cat "$T/plan")"
# what is allowed copies exactly, in requests the server takes
run_pdd if="$bp" of="$T/new" bs=65536
expect_rc 0
expect_err "128+0 records out"
same_bytes "$T/src" "$T/new"
run_pdd if="$bp" of="$T/new2" bs=512 skip=8 count=4096 bpt=2048
expect_rc 0
cmp -s -i 4096:0 -n $((4096 * 512)) "$T/src" "$T/new2" || fail "bs=512 skip=8 from the 4096-byte export"
run_pdd if="$T/src2" of="$bp" bs=512 seek=16 skip=16 count=8192 bpt=24
expect_rc 0
cmp -s -n 8192 "$T/src" "$T/bdisk" || fail "blocks before seek= changed"
cmp -s -i 8192:8192 -n $((8192 * 512)) "$T/src2" "$T/bdisk" || fail "bs=512 seek=16 to the 4096-byte export"
run_pdd if="$T/src2" of="$bp" bpt=256 bs=4096 verify=1
expect_rc 0
same_bytes "$T/src2" "$T/bdisk"
# every request the server saw fits its block sizes, and none failed
python3 - "$T/bp.log" <<'EOF' || fail "a request the server's block sizes do not allow"
import re, sys
n = 0
for line in open(sys.argv[1]):
    m = re.search(r'connection=\d+ (Read|Write) id=\d+ offset=(0x[0-9a-f]+) count=(0x[0-9a-f]+)', line)
    if m:
        off, cnt = int(m.group(2), 16), int(m.group(3), 16)
        assert off % 4096 == 0 and cnt % 4096 == 0 and cnt <= 1048576, line
        n += 1
    assert 'return=-1' not in line and 'error=' not in line, line
assert n > 0
EOF

# --- conns= -------------------------------------------------------------------
cp "$T/src" "$T/mdisk"
serve mc --filter=log file "$T/mdisk" logfile="$T/mc.log"
mc=$(uri mc)
for n in "" 1 2 8; do
	"$PDD" if="$mc" of="$T/new" ${n:+conns=$n} --dry-run >"$T/plan" 2>&1 || fail "dry run: $(cat "$T/plan")"
	want=${n:-2}
	grep -qx "          logical block 512, physical block 4096, largest transfer 33554432, $want connection$([ "$want" = 1 ] || echo s)" "$T/plan" ||
		fail "dry run with conns=$n: $(cat "$T/plan")"
done
for n in 1 2 8; do
	"$STAMP" fill "$T/c$n" 0 $SIZE $((30 + n))
	before=$(grep -c ' Connect ' "$T/mc.log")
	run_pdd if="$T/c$n" of="$mc" conns=$n bs=4096 bpt=8
	expect_rc 0
	same_bytes "$T/c$n" "$T/mdisk"
	# (nbdkit logs a connection when it is made, before pdd goes on)
	[ "$(grep -c ' Connect ' "$T/mc.log")" = $((before + n)) ] || fail "conns=$n: not $n connections: $(grep ' Connect ' "$T/mc.log")"
	rm -f "$T/out"
	run_pdd if="$mc" of="$T/out" conns=$n bs=4096 bpt=8
	expect_rc 0
	same_bytes "$T/c$n" "$T/out"
done

# a server without multi-conn: one connection, and a note for more
serve one --filter=multi-conn file "$T/mdisk" multi-conn-mode=disable
nbdinfo "$(uri one)" | grep -qx $'\tcan_multi_conn: false' || fail "the multi-conn filter did not turn it off"
"$PDD" if="$(uri one)" of="$T/new" --dry-run >"$T/plan" 2>&1 || fail "dry run: $(cat "$T/plan")"
grep -qx "          logical block 512, physical block 4096, largest transfer 33554432, 1 connection" "$T/plan" &&
	grep -qx "          export '', flush, FUA, zero, trim, base:allocation" "$T/plan" || fail "dry run without multi-conn: $(cat "$T/plan")"
rm -f "$T/out"
run_pdd if="$(uri one)" of="$T/out" conns=4
expect_rc 0
expect_err "pdd: '$(uri one)' does not advertise multi-conn: conns=4 becomes 1"
same_bytes "$T/c8" "$T/out"

# --- verify=, status=json, progress --------------------------------------------
cp "$T/src" "$T/vdisk"
serve v file "$T/vdisk"
v=$(uri v)
rm -f "$T/out"
run_pdd if="$v" of="$T/out" verify=1
expect_rc 0
expect_err "pdd: verify: 16384 blocks of 512 bytes compared, all identical"
run_pdd if="$T/src2" of="$v" verify=1 bs=4096 conns=2
expect_rc 0
expect_err "pdd: verify: 2048 blocks of 4096 bytes compared, all identical"
same_bytes "$T/src2" "$T/vdisk"
run_pdd if="$T/src2" of="$v" verify=only
expect_rc 0
expect_err "pdd: verify: 16384 blocks of 512 bytes compared, all identical"
run_pdd if="$v" of="$T/src2" verify=only
expect_rc 0
# a changed block in the export (its file, under the server)
blk=$((RANDOM % 16384))
printf 'pdd' | dd of="$T/vdisk" bs=1 seek=$((blk * 512 + RANDOM % 500)) conv=notrunc status=none
run_pdd if="$T/src2" of="$v" verify=only
expect_rc 14
expect_err "pdd: verify: 1 of 16384 blocks of 512 bytes differs: block $blk of '$v'"
run_pdd if="$v" of="$T/src2" verify=only
expect_rc 14
expect_err "pdd: verify: 1 of 16384 blocks of 512 bytes differs: block $blk of '$T/src2'"

# status=json
check() {
	python3 - "$1" "$2" <<'EOF' || fail "JSON check failed (line ${BASH_LINENO[0]}): $2"
import json, sys
j = json.loads(open(sys.argv[1]).read())
exec(sys.argv[2], {"j": j})
EOF
}
rc=0
pdd if="$v" of="$T/json-out" status=json >"$T/json" 2>"$T/err" || rc=$?
expect_rc 0
[ ! -s "$T/err" ] || { cat "$T/err"; fail "status=json printed text on stderr"; }
check "$T/json" "
i, o = j['input'], j['output']
assert i['path'] == '$v' and i['kind'] == 'nbd' and i['engine'] == 'nbd' and i['size'] == $SIZE, i
assert i['logical_block'] == 512 and i['physical_block'] == 4096 and i['direct'] is False, i
assert o['kind'] == 'file' and o['engine'] == 'uring', o
assert j['engine'] == 'nbd,uring', j['engine']
assert j['bytes_in'] == j['bytes_out'] == $SIZE, j
assert j['records_out'] == {'full': 16384, 'partial': 0}, j['records_out']
assert j['error'] is None and j['exit_status'] == 0, j
"
rc=0
pdd if="$T/src" of="$v" bs=4096 verify=1 status=json >"$T/json" 2>"$T/err" || rc=$?
expect_rc 0
check "$T/json" "
i, o = j['input'], j['output']
assert o['path'] == '$v' and o['kind'] == 'nbd' and o['engine'] == 'nbd', o
assert j['engine'] == 'uring,nbd' and j['bytes_out'] == $SIZE, j
assert j['verify']['blocks'] == 2048 and j['verify']['differ'] == 0, j['verify']
assert j['exit_status'] == 0, j
"
same_bytes "$T/src" "$T/vdisk"

# progress on a slow export (the delay filter: 80 ms a request, 4 in
# flight, 128 requests: about 2.6 s), as tests/dev/progress.sh checks it
cp "$T/src" "$T/sdisk"
serve slow --filter=delay file "$T/sdisk" rdelay=80ms wdelay=80ms
slow=(bs=4096 bpt=16 qd=4)
rm -f "$T/out"
run_pdd if="$(uri slow)" of="$T/out" "${slow[@]}" status=progress
expect_rc 0
same_bytes "$T/src" "$T/out"
n=$(progress_lines "$T/err" $SIZE) || fail "status=progress from an export: progress lines"
[ "$n" -ge 2 ] || { cat "$T/err"; fail "$n progress lines in a copy of 2.6 s"; }
[ "$(wc -l <"$T/err")" = $((n + 3)) ] || { cat "$T/err"; fail "lines other than progress and report"; }
tail -3 "$T/err" | head -2 | cmp -s - <(printf '2048+0 records in\n2048+0 records out\n') ||
	{ cat "$T/err"; fail "no report after the progress lines"; }
run_pdd if="$T/src2" of="$(uri slow)" "${slow[@]}" -p
expect_rc 0
same_bytes "$T/src2" "$T/sdisk"
n=$(progress_lines "$T/err" $SIZE) || fail "-p to an export: progress lines"
[ "$n" -ge 2 ] || { cat "$T/err"; fail "$n progress lines in a copy of 2.6 s"; }
[ "$(wc -l <"$T/err")" = $((n + 3)) ] || { cat "$T/err"; fail "lines other than progress and report"; }

# --- oflag=fua ------------------------------------------------------------------
cp "$T/src" "$T/fdisk"
serve fua --filter=log file "$T/fdisk" logfile="$T/fua.log"
run_pdd if="$T/src2" of="$(uri fua)" bs=4096 bpt=32 conns=2 oflag=fua
expect_rc 0
same_bytes "$T/src2" "$T/fdisk"
w=$(grep -acE 'connection=[0-9]+ Write id=' "$T/fua.log")
[ "$w" = 64 ] || fail "oflag=fua: $w writes, not 64"
[ "$(grep -aE 'connection=[0-9]+ Write id=' "$T/fua.log" | grep -c ' fua=1 ')" = 64 ] ||
	fail "oflag=fua: writes without FUA: $(grep -aE 'Write id=' "$T/fua.log" | grep -v ' fua=1 ' | head -3)"
# each connection's last command is a Flush, sent after the last write came back
awk '/connection=[0-9]+ [A-Z][a-z]+ id=/ { for (i = 1; i <= NF; i++) if ($i ~ /^connection=/) c = $i
		last[c] = $0; if ($0 ~ / Flush id=/ && !first) first = NR }
     / \.\.\.Write id=/ { lastw = NR }
     END { for (c in last) if (last[c] !~ / Flush id=/) { print "last of " c ": " last[c]; exit 1 }
	   if (!first || first < lastw) { print "a flush before the last write"; exit 1 } }' "$T/fua.log" >"$T/bad" ||
	fail "oflag=fua: $(cat "$T/bad")"
# without it, no FUA
: >"$T/fua.log"
run_pdd if="$T/src" of="$(uri fua)" bs=4096 bpt=32 conns=1
expect_rc 0
[ "$(grep -acE 'connection=[0-9]+ Write id=' "$T/fua.log")" -gt 0 ] || fail "no writes logged without oflag=fua"
grep -aE 'connection=[0-9]+ Write id=' "$T/fua.log" | grep -q ' fua=1 ' && fail "FUA without oflag=fua"

# --- a pdd built without libnbd ---------------------------------------------------
# this tree's sources, built in $T (the tree's own build is not touched)
mkdir "$T/nolib"
ln -s "$top/src" "$T/nolib/src"
ln -s "$top/include" "$T/nolib/include"
make -s -C "$T/nolib" -f "$top/Makefile" -j2 HAVE_LIBNBD= CFLAGS=-O0 pdd >"$T/make.log" 2>&1 ||
	{ cat "$T/make.log"; fail "pdd does not build without libnbd"; }
grep -qx "pdd: libnbd-dev not found: NBD sides are built without it" "$T/make.log" ||
	{ cat "$T/make.log"; fail "the build without libnbd did not say so"; }
nolib=$T/nolib/pdd
"$nolib" --version >"$T/ver" || fail "pdd --version without libnbd"
grep -q '^engines: ' "$T/ver" && ! grep -q '^engines:.*nbd' "$T/ver" || fail "pdd without libnbd lists nbd: $(cat "$T/ver")"
grep -qx 'libnbd: not built' "$T/ver" || fail "pdd without libnbd does not say so: $(cat "$T/ver")"
rm -f "$T/out"
rc=0
"$nolib" if="$v" of="$T/out" 2>"$T/err" || rc=$?
expect_rc 50
expect_err "pdd: pdd was built without libnbd: cannot open the NBD URI '$v'"
[ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err"; fail "without libnbd: more than the refusal"; }
[ ! -e "$T/out" ] || fail "without libnbd: the output was created"
cp "$T/vdisk" "$T/vdisk.before"
rc=0
"$nolib" if="$T/src2" of="$psk" 2>"$T/err" || rc=$?
expect_rc 50
expect_err "pdd: pdd was built without libnbd: cannot open the NBD URI '$psk'"
same_bytes "$T/vdisk.before" "$T/vdisk"

echo "NBD servers: qemu-nbd, TLS, block sizes, conns=, verify=, JSON, progress and FUA exact"
