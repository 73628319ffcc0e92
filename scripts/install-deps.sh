#!/bin/sh
# Install from the distribution's packages whatever pdd's build, tests and
# demo need and this machine lacks.  Libraries are looked up with
# pkg-config (or, for the two without a .pc file, their headers); tools by
# name.  Only apt-get is used: nothing is downloaded from anywhere else.
set -eu

missing=""
need_pkg() {	# need_pkg PACKAGE TEST...
	pkg=$1; shift
	if ! "$@" >/dev/null 2>&1; then
		missing="$missing $pkg"
	fi
}
have_cmd() { command -v "$1"; }
have_pc() { pkg-config --exists "$1"; }
have_hdr() { test -e "/usr/include/$1"; }

need_pkg pkg-config	have_cmd pkg-config
need_pkg gcc		have_cmd gcc
need_pkg make		have_cmd make
need_pkg liburing-dev	have_pc liburing
need_pkg libaio-dev	have_hdr libaio.h
need_pkg libsgutils2-dev have_hdr scsi/sg_lib.h
need_pkg libcmocka-dev	have_pc cmocka
need_pkg libmount-dev	have_pc mount
need_pkg libnbd-dev	have_pc libnbd
need_pkg libssl-dev	have_pc libcrypto
need_pkg libnbd-bin	have_cmd nbdcopy
need_pkg nbdkit		have_cmd nbdkit
need_pkg qemu-utils	have_cmd qemu-nbd
need_pkg gnutls-bin	have_cmd psktool
need_pkg clang		have_cmd clang
need_pkg valgrind	have_cmd valgrind
need_pkg sg3-utils	have_cmd sgp_dd
need_pkg fio		have_cmd fio
need_pkg fuse3		have_cmd fusermount3
need_pkg libfuse3-dev	have_pc fuse3
need_pkg util-linux	have_cmd losetup
need_pkg e2fsprogs	have_cmd mkfs.ext4
need_pkg gnuplot-nox	have_cmd gnuplot
need_pkg gddrescue	have_cmd ddrescue
need_pkg dc3dd		have_cmd dc3dd
need_pkg time		test -x /usr/bin/time
need_pkg tmux		have_cmd tmux
need_pkg bash-completion	test -r /usr/share/bash-completion/bash_completion
need_pkg dpkg-dev	have_cmd dpkg-buildpackage
need_pkg debhelper	have_cmd dh
need_pkg lintian		have_cmd lintian
need_pkg python3		have_cmd python3

if [ -z "$missing" ]; then
	exit 0
fi
echo "install-deps: missing:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: run as root (or: apt-get install$missing)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
