// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Mounts and swap, for guard.c: <root>/proc/self/mountinfo and
 * <root>/proc/swaps as util-linux's libmount reads them, so that pdd
 * parses them the way mount(8) and swapon(8) do, octal escapes (\040 for
 * a space) undone.  Built only with libmount; the static pdd, where
 * libmount has no archive, has guard-proc.c instead, and any other pdd
 * without libmount guard.h's stubs, which answer -ENOTSUP: guard.c
 * refuses what it cannot check.
 *
 * A line libmount cannot parse ends the check with -EBADMSG, which
 * refuses the output: libmount's own default is to skip such a line, but
 * the kernel writes none, so the file is not what pdd takes it for and
 * the line skipped could be the very mount that matters.  (libmount
 * still skips a bad last line with no newline after it, which the kernel
 * never leaves off.)  For the same reason a mountinfo whose first line
 * does not look like mountinfo, which libmount then reads as an fstab, is
 * refused.  libmount's answers are 0 or -errno: a file that cannot be
 * opened gives fopen's errno, but one that cannot be read gives -EINVAL,
 * which pdd_guard()'s caller would take for an overlap; it is told as
 * -EIO.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libmount.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "guard.h"
#include "pdd.h"

/* Is path a block device node for dev? */
static bool is_node_of(const char *path, dev_t dev)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev;
}

/* libmount's parser error callback: a line it cannot parse is fatal. */
static int bad_line(struct libmnt_table *tb, const char *file, int line)
{
	(void)tb;
	(void)file;
	(void)line;
	return -EBADMSG;
}

/*
 * The first entry of <root>rel, as parse reads it, that match says is
 * dev's: 1 and its target (the mount point) in where, 0 if none, or
 * -errno.  match answers 1, 0, or -errno to stop.
 */
static int find(const char *rel, int (*parse)(struct libmnt_table *, const char *),
		int (*match)(struct libmnt_fs *, dev_t), dev_t dev, char *where, size_t len)
{
	struct libmnt_table *tb = mnt_new_table();
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	char path[PATH_MAX];
	int r = -ENOMEM;

	if (!tb || !it)
		goto out;
	mnt_table_set_parser_errcb(tb, bad_line);
	snprintf(path, sizeof(path), "%s%s", pdd_guard_root, rel);
	r = parse(tb, path);
	if (r == -EINVAL)
		r = -EIO;	/* libmount's word for a read that failed */
	while (!r && !mnt_table_next_fs(tb, it, &fs))
		r = match(fs, dev);
	if (r > 0 && where)
		snprintf(where, len, "%s", mnt_fs_get_target(fs));
out:
	mnt_free_iter(it);
	mnt_unref_table(tb);
	return r;
}

/*
 * A mount of dev: the device number is the mounted file system's.  A
 * file system on several devices (btrfs) shows a device number of its
 * own, so the source names the device instead; only sources under /dev
 * are looked at, so that no network file system is ever waited on.
 * libmount puts the root device it finds (by the device number in sysfs,
 * or root= on the kernel's command line) for a source of /dev/root.
 */
static int mount_of(struct libmnt_fs *fs, dev_t dev)
{
	const char *src = mnt_fs_get_source(fs);

	if (!mnt_fs_is_kernel(fs))
		return -EBADMSG;	/* not read as mountinfo */
	if (mnt_fs_get_devno(fs) == dev)
		return 1;
	return src && !strncmp(src, "/dev/", 5) && is_node_of(src, dev);
}

int guard_mounted_on(dev_t dev, char *where, size_t len)
{
	return find("/proc/self/mountinfo", mnt_table_parse_file, mount_of, dev, where, len);
}

/*
 * A swap area on dev: the source is its path, a block device or a file.
 * libmount drops the " (deleted)" the kernel adds to a path since
 * removed, so such a swap device is still known by a node that now
 * stands at that path for the same device number.
 */
static int swap_of(struct libmnt_fs *fs, dev_t dev)
{
	const char *src = mnt_fs_get_source(fs);

	return src && is_node_of(src, dev);
}

int guard_is_swap(dev_t dev)
{
	int r = find("/proc/swaps", mnt_table_parse_swaps, swap_of, dev, NULL, 0);

	return r == -ENOENT ? 0 : r;	/* no /proc/swaps: no swap in this kernel */
}
