#!/bin/bash
# engines: threads
# libnbd and libcrypto are loaded when a copy needs them, not at start
# (src/libs.c): a plain copy maps neither, hash= maps libcrypto alone and
# an NBD URI libnbd.  And a system without them still copies: in a root
# holding the shared pdd with every library it links but those two (a
# mount namespace of its own, as static.sh), a copy is byte-identical,
# --version names what cannot be loaded and why, and hash= and an NBD
# URI are refused with the loader's reason and nothing written.
. "$(dirname "$0")/../lib.sh"
requires_root
command -v chroot >/dev/null && command -v unshare >/dev/null || skip "needs chroot and unshare"
"$PDD" --version >"$T/ver"
grep -q '(libcrypto)' "$T/ver" && grep -q '^engines:.* nbd' "$T/ver" ||
	skip "this pdd is built without libcrypto or libnbd"
readelf -d "$PDD" | grep -q 'NEEDED.*\(libnbd\|libcrypto\)' &&
	skip "this pdd links libnbd or libcrypto (a static build?)"

lbs=512
"$STAMP" fill "$T/a" 0 $((4 << 20)) 3
truncate -s $((4 << 20)) "$T/z"

# loaded LIB ARGS...: does pdd ARGS load LIB (the dynamic loader's own
# account of the files it opened)?
loaded() {
	local lib=$1
	shift
	LD_DEBUG=files LD_DEBUG_OUTPUT=$T/ld "$PDD" "$@" 2>"$T/err" || { cat "$T/err"; fail "pdd $*"; }
	grep -q "file=$lib.* \[0\];  needed by\|file=$lib.*dynamically loaded by" "$T"/ld.* &&
		{ rm -f "$T"/ld.*; return 0; }
	rm -f "$T"/ld.*
	return 1
}
loaded libnbd if="$T/a" of="$T/z" && fail "a plain copy loaded libnbd"
loaded libcrypto if="$T/a" of="$T/z" && fail "a plain copy loaded libcrypto"
loaded libcrypto if="$T/a" of="$T/z" hash=sha256 || fail "hash=sha256 did not load libcrypto"
loaded libnbd if="$T/a" of="$T/z" hash=sha256 && fail "hash=sha256 loaded libnbd"
command -v nbdkit >/dev/null && {
	serve m memory 4M
	loaded libnbd if="$T/a" of="$(uri m)" || fail "an NBD output did not load libnbd"
	stop_server m
}
echo "a plain copy loads neither library; hash= loads libcrypto, an NBD side libnbd"

# the root: pdd and the libraries it links, as ldd finds them
root=$T/root
mkdir -p "$root/proc" "$root/sys" "$root/dev" "$root/data"
cp "$PDD" "$root/pdd"
ldd "$PDD" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' >"$T/libs"
grep -q 'libnbd\|libcrypto' "$T/libs" && fail "ldd lists libnbd or libcrypto: $(cat "$T/libs")"
while read -r l; do
	mkdir -p "$root$(dirname "$l")"
	cp -L "$l" "$root$l"
done <"$T/libs"
cp "$T/a" "$root/data/a"
truncate -s $((4 << 20)) "$root/data/z"

inroot() {
	rc=0
	unshare --mount --propagation private sh -c '
		mount -t proc proc "$0/proc" && mount -t sysfs sysfs "$0/sys" && exec chroot "$0" "$@"' \
		"$root" "$@" 2>"$T/err" || rc=$?
}

soname() { objdump -p "$(pkg-config --variable=libdir "$1")/$1.so" | awk '$1 == "SONAME" { print $2 }'; }
crypto_so=$(soname libcrypto) nbd_so=$(soname libnbd)
inroot /pdd --version >"$T/ver.root"
expect_rc 0
grep -qx "libcrypto: cannot be loaded (libcrypto.so.[0-9]*: cannot open shared object file: No such file or directory)" "$T/ver.root" ||
	fail "--version without libcrypto: $(cat "$T/ver.root")"
grep -qx "hashes: none (libcrypto.so.[0-9]*: cannot open shared object file: No such file or directory)" "$T/ver.root" ||
	fail "--version without libcrypto: $(cat "$T/ver.root")"
grep -qx "libnbd: cannot be loaded (libnbd.so.[0-9]*: cannot open shared object file: No such file or directory)" "$T/ver.root" ||
	fail "--version without libnbd: $(cat "$T/ver.root")"
diff <(grep -v '^\(libcrypto\|libnbd\|hashes\):' "$T/ver") <(grep -v '^\(libcrypto\|libnbd\|hashes\):' "$T/ver.root") >&2 ||
	fail "--version differs in more than the two libraries"
echo "--version in the root names both libraries as not loadable, and why"

inroot /pdd if=/data/a of=/data/z engine=threads
expect_rc 0
expect_err "8192+0 records out"
same_bytes "$T/a" "$root/data/z"
grep -q '^engines:.* uring' "$T/ver" && {
	truncate -s 0 "$root/data/z"
	inroot /pdd if=/data/a of=/data/z engine=uring bs=4096
	expect_rc 0
	same_bytes "$T/a" "$root/data/z"
}
echo "copies in the root are byte-identical"

truncate -s 0 "$root/data/z"
inroot /pdd if=/data/a of=/data/z hash=sha256
expect_rc 1
expect_err "pdd: hash=sha256: $crypto_so: cannot open shared object file: No such file or directory"
[ -s "$root/data/z" ] && fail "hash= refused, and yet the output was written"
inroot /pdd if=/data/a of=/data/z verify=hash
expect_rc 1
expect_err "pdd: verify=hash: $crypto_so: cannot open shared object file: No such file or directory"
inroot /pdd if=/data/a of="nbd+unix:///?socket=/data/s.sock"
expect_rc 50
expect_err "pdd: cannot open the NBD URI 'nbd+unix:///?socket=/data/s.sock': $nbd_so: cannot open shared object file: No such file or directory"
echo "hash=, verify=hash and an NBD URI are refused with the loader's reason"
