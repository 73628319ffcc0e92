#!/bin/bash
# engines: threads
# The Debian package: dpkg-buildpackage -b on a copy of this tree's
# tracked files (never in the checkout, which it would fill with build
# products), lintian with no error and no warning, the files the package
# holds, and dpkg -i: pdd --version, its man page and its completion in
# place.  The package is purged at exit; a system that has pdd installed
# as a package already is left alone (the test skips).  The unit tests
# that dh_auto_test runs are left out (nocheck): make check runs them.
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to install the package (dpkg -i)"
for c in dpkg-buildpackage dh git; do
	command -v "$c" >/dev/null || skip "needs $c (debhelper, dpkg-dev, git)"
done
git -C "$top" rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout: the package is built from the tracked files"
if [ -n "$(dpkg-query -W -f '${db:Status-Status}' pdd 2>/dev/null | grep -vx not-installed)" ]; then
	skip "pdd is installed as a package already: not replacing it"
fi

src=$T/pdd
mkdir "$src"
(cd "$top" && git ls-files -z | xargs -0 cp --parents -t "$src") || fail "cannot copy the tree"
(cd "$src" && dpkg-checkbuilddeps) >"$T/deps" 2>&1 || skip "$(cat "$T/deps")"

# the package's version is pdd's
version=$(cd "$src" && dpkg-parsechangelog -S Version)
[ "pdd $version" = "$("$PDD" --version | head -1)" ] ||
	fail "debian/changelog has $version, pdd --version says $("$PDD" --version | head -1)"

start=$SECONDS
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1 ||
	{ tail -40 "$T/build.log"; fail "dpkg-buildpackage failed"; }
echo "dpkg-buildpackage: $((SECONDS - start)) s"
arch=$(dpkg --print-architecture)
deb=$T/pdd_${version}_$arch.deb
[ -f "$deb" ] || fail "no $deb: $(ls "$T")"

# the hardening flags reached the compiler and the linker
dpkg-deb -x "$deb" "$T/x"
readelf -d "$T/x/usr/bin/pdd" | grep -q 'BIND_NOW' || fail "pdd is not linked with -z now"
readelf -lW "$T/x/usr/bin/pdd" | grep -q GNU_RELRO || fail "pdd is not linked with -z relro"
nm -D "$T/x/usr/bin/pdd" | grep -q '__[a-z]*_chk@' || fail "pdd is not built with _FORTIFY_SOURCE"

dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' | sort >"$T/files"
printf '%s\n' ./usr/bin/pdd ./usr/share/bash-completion/completions/pdd \
	./usr/share/doc/pdd/README.md.gz ./usr/share/doc/pdd/changelog.gz \
	./usr/share/doc/pdd/copyright ./usr/share/man/man1/pdd.1.gz | sort | cmp -s - "$T/files" ||
	fail "the package holds: $(cat "$T/files")"

if command -v lintian >/dev/null; then
	# the informational and pedantic tags are shown, not held against it
	lintian -I --pedantic "$T/pdd_${version}_$arch.changes" >"$T/lintian" 2>&1
	grep -E '^[EW]: ' "$T/lintian" && fail "lintian has errors or warnings"
	echo "lintian: $(grep -cE '^[A-Z]: ' "$T/lintian") tags, none an error or a warning"
	grep -E '^[A-Z]: ' "$T/lintian" | sed 's/^/  /'
else
	echo "lintian: not installed, not run"
fi

# installed, then purged at exit whatever happens
purge() { dpkg -P pdd >/dev/null 2>&1; cleanup; }
trap purge EXIT
dpkg -i "$deb" >"$T/dpkg.log" 2>&1 || { cat "$T/dpkg.log"; fail "dpkg -i failed"; }
[ "$(/usr/bin/pdd --version)" = "$("$PDD" --version)" ] || fail "the installed pdd --version: $(/usr/bin/pdd --version)"
[ "$(man -w pdd 2>/dev/null)" = /usr/share/man/man1/pdd.1.gz ] || fail "man -w pdd: $(man -w pdd 2>&1)"
if [ -r /usr/share/bash-completion/bash_completion ]; then
	got=$(bash -c '. /usr/share/bash-completion/bash_completion
		__load_completion pdd && complete -p pdd' 2>&1)
	[ "$got" = "complete -F _pdd pdd" ] || fail "the completion is not loaded: $got"
fi
dpkg -P pdd >"$T/dpkg.log" 2>&1 || { cat "$T/dpkg.log"; fail "dpkg -P failed"; }
[ ! -e /usr/bin/pdd ] && [ ! -e /usr/share/bash-completion/completions/pdd ] || fail "dpkg -P left files"
echo "installed, checked and purged"
