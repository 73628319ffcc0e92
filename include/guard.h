/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What guard.c, guard-loop.c and guard-mount.c share: guard.c reads sysfs
 * and checks a device for mounts, swap and holders; guard-mount.c reads
 * the mounts and swap areas in /proc through libmount (guard-proc.c
 * without it, in the static pdd); guard-loop.c knows
 * loop devices, what each is over and which are over the output.
 * Internal to the three; pdd.h has what the rest of pdd calls.
 */
#ifndef PDD_GUARD_H
#define PDD_GUARD_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* What a loop device is over, and from which byte of it. */
struct backing {
	dev_t dev;		/* the backing file's st_dev */
	ino_t ino;		/* and its inode */
	dev_t rdev;		/* the backing device's number; 0 for a file */
	uint64_t offset;	/* losetup -o */
};

/* A chain of loop devices has no cycle (the kernel refuses one), but a
 * made-up or changing sysfs could show one: stop looking this deep. */
#define LOOP_DEPTH 8

/* guard.c */
int guard_read_sys(dev_t dev, const char *rel, char *buf, size_t len);
bool guard_parse_devnum(const char *s, dev_t *dev);
void guard_node_name(dev_t dev, const char *rel, char *buf, size_t len);
int guard_check_block(dev_t dev, const char *who, bool force);

/* guard-mount.c (or guard-proc.c in the static pdd): 1 and the first
 * mount point in where if dev is mounted; 1 if it is active swap; else 0,
 * or -errno */
#if defined(HAVE_LIBMOUNT) || defined(HAVE_PROCMOUNTS)
int guard_mounted_on(dev_t dev, char *where, size_t len);
int guard_is_swap(dev_t dev);
#else
/* built without libmount: nothing can tell, and guard.c says so */
static inline int guard_mounted_on(dev_t dev, char *where, size_t len)
{
	(void)dev;
	(void)where;
	(void)len;
	return -ENOTSUP;
}

static inline int guard_is_swap(dev_t dev)
{
	(void)dev;
	return -ENOTSUP;
}
#endif

/* guard-loop.c */
int guard_loop_backing(dev_t disk, int fd, struct backing *b);
int guard_check_loops(const struct stat *st, const char *name, bool force);

#endif
