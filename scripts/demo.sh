#!/bin/bash
# make demo: build a sample disk image holding a real ext4 file system,
# clone it with pdd (onto a loop device when run as root, else into a
# file), and prove the clone exact: byte comparison and a file system
# check of the copy.
set -euo pipefail
cd "$(dirname "$0")/.."
PDD=./pdd
work=$(mktemp -d /var/tmp/pdd-demo.XXXXXX)
loops=()
cleanup() {
	for d in "${loops[@]}"; do losetup -d "$d" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

echo "== a sample disk: 64 MiB with an ext4 file system and some files"
mkdir "$work/files"
for i in $(seq 1 20); do head -c $((i * 37000)) /dev/urandom >"$work/files/file$i"; done
cp README.md "$work/files/"
truncate -s 64M "$work/sample.img"
mkfs.ext4 -q -F -L pdd-demo -d "$work/files" "$work/sample.img"

if [ "$(id -u)" = 0 ] && [ -e /dev/loop-control ]; then
	truncate -s 64M "$work/target.img"
	src=$(losetup --find --show --direct-io=on "$work/sample.img"); loops+=("$src")
	dst=$(losetup --find --show --direct-io=on "$work/target.img"); loops+=("$dst")
	echo "== source $src, target $dst (loop devices)"
else
	src=$work/sample.img
	dst=$work/clone.img
	echo "== not root: cloning the image into a file"
fi

echo "== the plan"
echo "\$ pdd if=$src of=$dst bs=512 bpt=128 threads=4 --dry-run"
$PDD if="$src" of="$dst" bs=512 bpt=128 threads=4 --dry-run
echo "== the copy"
echo "\$ pdd if=$src of=$dst bs=512 bpt=128 threads=4 time=1"
$PDD if="$src" of="$dst" bs=512 bpt=128 threads=4 time=1

echo "== verify"
cmp "$src" "$dst" && echo "cmp: the clone is byte-identical"
e2fsck -fn "$dst" >"$work/fsck.log" 2>&1 && echo "e2fsck: the clone's file system is clean ($(grep -o '[0-9]*/[0-9]* files' "$work/fsck.log"))"
