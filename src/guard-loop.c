// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Loop devices, for guard.c: what a loop device is over, which the
 * overlap check follows down to the file or disk under it; and which loop
 * devices are over the output.
 *
 * A file system on /dev/loop5 over fs.img lives in fs.img: writing the
 * file corrupts it as surely as writing /dev/loop5 would, and the kernel
 * claims nothing on fs.img (nor on a block device a loop is over) that
 * would stop the write.  So each loop device over the output, a regular
 * file or a block device or one of its partitions, is checked as a
 * block-device output is (mounted, swap, held, and each of its
 * partitions), and so is each loop device over those.  The copy's range
 * is not compared with the loop's: a file system keeps its metadata
 * anywhere, so no byte of a mounted image is safe to write.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <linux/loop.h>
#include <linux/major.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "guard.h"
#include "pdd.h"

/* A device number as the kernel hands it out in struct loop_info64
 * (new_encode_dev: minor bits 0-7 and 20-31, major bits 8-19). */
static dev_t kernel_dev(uint64_t v)
{
	return makedev((unsigned int)(v >> 8) & 0xfff,
		       (unsigned int)((v & 0xff) | ((v >> 12) & 0xfff00)));
}

/*
 * What the loop device disk is over.  The kernel's answer to
 * LOOP_GET_STATUS64 on the side's descriptor (a partition's descriptor
 * answers for its loop) names the file the loop holds open, whatever has
 * been renamed or mounted over since; without a descriptor (a loop further
 * down a chain) or a loop major, sysfs gives the path the loop was set up
 * with.  -errno when disk is no loop device or cannot be asked.
 */
int guard_loop_backing(dev_t disk, int fd, struct backing *b)
{
	char buf[PATH_MAX];
	/* zeroed: memory checkers do not know the kernel fills it */
	struct loop_info64 li = { 0 };
	struct stat st;

	if (fd >= 0 && major(disk) == LOOP_MAJOR && !ioctl(fd, LOOP_GET_STATUS64, &li)) {
		b->dev = kernel_dev(li.lo_device);
		b->ino = (ino_t)li.lo_inode;
		b->rdev = kernel_dev(li.lo_rdevice);
		b->offset = li.lo_offset;
		return 0;
	}
	if (guard_read_sys(disk, "loop/backing_file", buf, sizeof(buf)))
		return -ENOENT;
	if (stat(buf, &st))		/* gone: "(deleted)" ends the path */
		return -errno;
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return -EINVAL;
	b->dev = st.st_dev;
	b->ino = st.st_ino;
	b->rdev = S_ISBLK(st.st_mode) ? st.st_rdev : 0;
	if (guard_read_sys(disk, "loop/offset", buf, sizeof(buf)) ||
	    sscanf(buf, "%" SCNu64, &b->offset) != 1)
		return -EINVAL;
	return 0;
}

/* What the loop devices sought are over. */
struct target {
	bool file;		/* a regular file, else a block device */
	dev_t dev;		/* the file's st_dev */
	ino_t ino;		/* and its inode */
	dev_t rdev;		/* the block device's number */
};

/* How a loop device is over a target. */
enum over {
	OVER_NOT,		/* it is not */
	OVER_IT,		/* over the file or the device itself */
	OVER_PART,		/* over a partition of the device */
};

/*
 * Is the loop device loop over t?  The kernel's answer on a descriptor
 * names the file by device and inode, which a renamed or deleted file
 * keeps; the descriptor is opened read-only and not exclusively, so that
 * it disturbs no one who holds the loop device.  Without a node that is
 * that device (a made-up sysfs, a /dev of its own), sysfs's path is
 * stat'ed instead.  For OVER_PART, the partition's node in part.
 */
static enum over loop_over(dev_t loop, const struct target *t, char *part, size_t len)
{
	char node[PATH_MAX], buf[64];
	struct backing b;
	struct stat st;
	dev_t disk;
	int fd, r;

	guard_node_name(loop, "", node, sizeof(node));
	fd = open(node, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISBLK(st.st_mode) || st.st_rdev != loop)) {
		close(fd);	/* another device by that name */
		fd = -1;
	}
	r = guard_loop_backing(loop, fd, &b);
	if (fd >= 0)
		close(fd);
	if (r)
		return OVER_NOT;
	if (t->file)
		return !b.rdev && b.dev == t->dev && b.ino == t->ino ? OVER_IT : OVER_NOT;
	if (!b.rdev)
		return OVER_NOT;
	if (b.rdev == t->rdev)
		return OVER_IT;
	if (guard_read_sys(b.rdev, "partition", buf, sizeof(buf)) ||
	    guard_read_sys(b.rdev, "../dev", buf, sizeof(buf)) ||
	    !guard_parse_devnum(buf, &disk) || disk != t->rdev)
		return OVER_NOT;
	guard_node_name(b.rdev, "", part, len);
	return OVER_PART;
}

/* The device number of /sys/block/name, from its "dev" file. */
static int block_devnum(const char *name, dev_t *dev)
{
	char path[PATH_MAX], buf[64];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/sys/block/%s/dev", pdd_guard_root, name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		err = -EIO;
	fclose(f);
	if (err)
		return err;
	buf[strcspn(buf, "\n")] = '\0';
	return guard_parse_devnum(buf, dev) ? 0 : -EINVAL;
}

/*
 * Check each loop device over t, and depth further levels of loop
 * devices over those.  lead says how the output reaches t: "'fs.img'",
 * or "'fs.img' is the backing file of '/dev/loop5', which".  Every loop
 * device, attached or not, is in /sys/block; an attached one has
 * loop/backing_file.  Returns how many reasons to refuse were printed,
 * or -errno.
 */
static int check_over(const struct target *t, const char *lead, bool force, int depth)
{
	char path[PATH_MAX], buf[PATH_MAX], loop[256], part[256], sub[3 * PATH_MAX];
	struct target next = { .file = false };
	enum over how;
	struct dirent *e;
	int n = 0, r;
	dev_t dev;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/sys/block", pdd_guard_root);
	dir = opendir(path);
	if (!dir)
		return 0;	/* no sysfs: nothing to go by */
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.' || block_devnum(e->d_name, &dev) ||
		    guard_read_sys(dev, "loop/backing_file", buf, sizeof(buf)))
			continue;	/* not an attached loop device */
		how = loop_over(dev, t, part, sizeof(part));
		if (how == OVER_NOT)
			continue;
		guard_node_name(dev, "", loop, sizeof(loop));
		if (how == OVER_PART)
			snprintf(sub, sizeof(sub), "%s holds '%s', the backing device of '%s', which",
				 lead, part, loop);
		else
			snprintf(sub, sizeof(sub), "%s is the backing %s of '%s', which", lead,
				 t->file ? "file" : "device", loop);
		r = guard_check_block(dev, sub, force);
		if (r >= 0 && depth < LOOP_DEPTH) {
			int deeper;

			next.rdev = dev;
			deeper = check_over(&next, sub, force, depth + 1);
			r = deeper < 0 ? deeper : r + deeper;
		}
		if (r < 0) {
			n = r;
			break;
		}
		n += r;
	}
	closedir(dir);
	return n;
}

/* The loop devices over the output st (named name), a regular file or a
 * block device: how many reasons to refuse were printed, or -errno. */
int guard_check_loops(const struct stat *st, const char *name, bool force)
{
	struct target t = { .file = S_ISREG(st->st_mode) };
	char lead[PATH_MAX + 2];

	if (t.file) {
		t.dev = st->st_dev;
		t.ino = st->st_ino;
	} else if (S_ISBLK(st->st_mode)) {
		t.rdev = st->st_rdev;
	} else {
		return 0;
	}
	snprintf(lead, sizeof(lead), "'%s'", name);
	return check_over(&t, lead, force, 1);
}
