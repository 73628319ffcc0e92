// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Mounts and swap, for guard.c, without libmount: the static pdd's
 * reader of <root>/proc/self/mountinfo and <root>/proc/swaps (make
 * static; Debian has no libmount.a).  It answers as guard-mount.c does
 * through libmount, and tests/unit/test-guard.c runs against both: the
 * kernel's octal escapes (\040 for a space) undone, a line that is not
 * mountinfo's or swaps' refuses with -EBADMSG (the line skipped could be
 * the very mount that matters), a file opened but not read is -EIO, and
 * " (deleted)" after a swap area's path is dropped.  Unlike libmount it
 * does not put the root device for a source of /dev/root; the root file
 * system's device number names it, but for one on several devices.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "guard.h"
#include "pdd.h"

/* Is path a block device node for dev? */
static bool is_node_of(const char *path, dev_t dev)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev;
}

/*
 * One line of mountinfo: "ID PARENT MAJ:MIN ROOT TARGET OPTIONS
 * [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS".  1 and the target in where
 * if it is a mount of dev, 0 if not, -EBADMSG if it is no such line.  The
 * device number is the mounted file system's; a file system on several
 * devices (btrfs) has one of its own, so the source names the device, and
 * only sources under /dev are looked at, so that no network file system
 * is ever waited on.
 */
static int mount_line(char *line, dev_t dev, char *where, size_t len)
{
	unsigned int maj, min;
	char *target, *sep, *src;
	int n = 0;

	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "%*u %*u %u:%u %*s %n", &maj, &min, &n) != 2 || !n)
		return -EBADMSG;
	target = line + n;
	sep = strstr(target, " - ");
	if (!sep)
		return -EBADMSG;
	target[strcspn(target, " ")] = '\0';
	src = sep + 3;
	src += strcspn(src, " ");	/* past the file system type */
	if (*src != ' ' || !src[1] || src[1] == ' ')
		return -EBADMSG;
	src++;
	src[strcspn(src, " ")] = '\0';
	pdd_unescape(src);
	if (makedev(maj, min) != dev && (strncmp(src, "/dev/", 5) || !is_node_of(src, dev)))
		return 0;
	pdd_unescape(target);
	if (where)
		snprintf(where, len, "%s", target);
	return 1;
}

/* One line of /proc/swaps after its heading: "PATH TYPE SIZE USED
 * PRIORITY"; 1 if PATH is dev's node, 0 if not, -EBADMSG */
static int swap_line(char *line, dev_t dev)
{
	char path[PATH_MAX + 32], type[32], *del;
	uintmax_t size, used;
	int prio;

	if (sscanf(line, "%4127s %31s %ju %ju %d", path, type, &size, &used, &prio) != 5)
		return -EBADMSG;
	pdd_unescape(path);
	del = strstr(path, " (deleted)");
	if (del && !del[10])
		*del = '\0';
	return is_node_of(path, dev);
}

/*
 * The first line of <root>rel that is dev's: 1 (and the mount point in
 * where for mountinfo), 0 if none, or -errno.  A last line with no
 * newline after it, which the kernel never leaves, is passed over as
 * libmount passes it over.
 */
static int find(const char *rel, bool swaps, dev_t dev, char *where, size_t len)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int r = 0, nr = 0;

	snprintf(path, sizeof(path), "%s%s", pdd_guard_root, rel);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!r && (n = getline(&line, &cap, f)) > 0) {
		bool ended = line[n - 1] == '\n';

		if (swaps && !nr++ && !strncmp(line, "Filename", 8))
			continue;	/* the heading */
		r = swaps ? swap_line(line, dev) : mount_line(line, dev, where, len);
		if (r == -EBADMSG && !ended)
			r = 0;
	}
	if (!r && ferror(f))
		r = -EIO;
	free(line);
	fclose(f);
	return r;
}

int guard_mounted_on(dev_t dev, char *where, size_t len)
{
	return find("/proc/self/mountinfo", false, dev, where, len);
}

int guard_is_swap(dev_t dev)
{
	int r = find("/proc/swaps", true, dev, NULL, 0);

	return r == -ENOENT ? 0 : r;	/* no /proc/swaps: no swap in this kernel */
}
