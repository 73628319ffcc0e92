// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Refusing the wrong disk.  Before anything is created or written (and in
 * a dry run), a block-device output is checked against what the system is
 * doing with it: pdd does not write to a device that is mounted or in use
 * as swap, or that another device (device-mapper, md) is built on, nor to
 * a disk one of whose partitions is; and a copy whose output range
 * overlaps its input range on one device or file is refused, since the
 * writes would overwrite input not read yet.
 *
 * dev.c opens a block-device output exclusively (O_EXCL), and the kernel
 * refuses that open while a file system, swap or another device holds it;
 * but its answer is a bare EBUSY, and oflag=force drops the exclusive open.
 * So the same ground is checked here by name, from /sys and from /proc
 * (as libmount reads it, guard-mount.c), and pdd_guard_busy() says which
 * of these made the open fail.  oflag=force lets only the holders pass: a
 * mounted device, swap and an overlap are refused always.  A pdd built
 * without libmount cannot tell whether a device is mounted or swap, so it
 * refuses every block-device output, but for oflag=force.
 *
 * A loop device's bytes are its backing file's (or device's), so the
 * overlap check sees through loop devices: a loop over the input file
 * as the output, or two loops over one file, overlap like the file does.
 * For the same reason an output that a loop device is over is checked
 * through that loop device too (guard-loop.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "guard.h"
#include "pdd.h"

/* Where /proc and /sys are: the unit tests point this at made-up trees.
 * A variable and not an environment variable, so that no one can switch
 * the checks off from outside. */
const char *pdd_guard_root = "";

/* One file of the device's directory in sysfs, without its newline. */
int guard_read_sys(dev_t dev, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "%s/sys/dev/block/%u:%u/%s", pdd_guard_root,
		 major(dev), minor(dev), rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* "MAJ:MIN", as sysfs writes device numbers. */
bool guard_parse_devnum(const char *s, dev_t *dev)
{
	unsigned int maj, min;
	char end;

	if (sscanf(s, "%u:%u%c", &maj, &min, &end) != 2)
		return false;
	*dev = makedev(maj, min);
	return true;
}

/* The node under /dev the kernel names the device by (DEVNAME in its
 * uevent), for messages. */
void guard_node_name(dev_t dev, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX], line[256];
	FILE *f;

	snprintf(buf, len, "/dev/block/%u:%u", major(dev), minor(dev));
	snprintf(path, sizeof(path), "%s/sys/dev/block/%u:%u/%suevent", pdd_guard_root,
		 major(dev), minor(dev), rel);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "DEVNAME=", 8))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, len, "/dev/%s", line + 8);
		break;
	}
	fclose(f);
}

/* The first device built on dev (holders/ in sysfs): 1 and its kernel
 * name in who. */
static int held_by(dev_t dev, char *who, size_t len)
{
	char path[PATH_MAX];
	struct dirent *e;
	int found = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/sys/dev/block/%u:%u/holders", pdd_guard_root,
		 major(dev), minor(dev));
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while (!found && (e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(who, len, "%s", e->d_name);
		found = 1;
	}
	closedir(dir);
	return found;
}

/*
 * Check one device: the output itself (subject "'/dev/sdb' is") or one of
 * its partitions (subject "'/dev/sdb' holds '/dev/sdb1',").  Prints each
 * reason to refuse; returns how many, or -errno when /proc could not be
 * read, which refuses too: a check that cannot be made is no check.  So
 * does a pdd built without libmount, which cannot read it, unless force.
 */
static int check_dev(dev_t dev, const char *subject, bool force)
{
	char what[PATH_MAX];
	int n = 0, r;

	r = guard_mounted_on(dev, what, sizeof(what));
	if (r == -ENOTSUP) {	/* built without libmount: it cannot be checked */
		if (!force)
			pdd_error("pdd was built without libmount: cannot see whether %s mounted or in use as swap; oflag=force writes anyway",
				  subject);
		return force ? 0 : r;	/* force passes the holders too */
	}
	if (r < 0) {
		pdd_error("cannot read '%s/proc/self/mountinfo' to see whether %s mounted: %s",
			  pdd_guard_root, subject, strerror(-r));
		return r;
	}
	if (r > 0) {
		pdd_error("%s mounted on %s: pdd does not write to a mounted device",
			  subject, what);
		n++;
	}
	r = guard_is_swap(dev);
	if (r < 0) {
		pdd_error("cannot read '%s/proc/swaps' to see whether %s swap: %s",
			  pdd_guard_root, subject, strerror(-r));
		return r;
	}
	if (r > 0) {
		pdd_error("%s in use as swap: pdd does not write to active swap", subject);
		n++;
	}
	if (!force && held_by(dev, what, sizeof(what)) > 0) {
		pdd_error("%s held by %s: another device is built on it", subject, what);
		n++;
	}
	return n;
}

/* The device and each of its partitions: the subdirectories of its sysfs
 * directory that hold a file "partition" (a partition has none of its
 * own).  who names the device in messages ("'/dev/sdb'", quoted), or
 * says how the output leads to it.  Returns how many reasons to refuse
 * were printed, or -errno. */
int guard_check_block(dev_t dev, const char *who, bool force)
{
	char path[PATH_MAX], subject[3 * PATH_MAX], part[PATH_MAX], rel[300];
	char num[32];
	struct dirent *e;
	int n, r;
	dev_t pdev;
	DIR *dir;

	snprintf(subject, sizeof(subject), "%s is", who);
	n = check_dev(dev, subject, force);
	if (n < 0)
		return n;
	snprintf(path, sizeof(path), "%s/sys/dev/block/%u:%u", pdd_guard_root,
		 major(dev), minor(dev));
	dir = opendir(path);
	if (!dir)
		return n;	/* no sysfs: the exclusive open still guards */
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.' || strlen(e->d_name) > 200)
			continue;
		snprintf(rel, sizeof(rel), "%s/partition", e->d_name);
		if (guard_read_sys(dev, rel, num, sizeof(num)))
			continue;
		snprintf(rel, sizeof(rel), "%s/dev", e->d_name);
		if (guard_read_sys(dev, rel, num, sizeof(num)) || !guard_parse_devnum(num, &pdev))
			continue;
		snprintf(rel, sizeof(rel), "%s/", e->d_name);
		guard_node_name(dev, rel, part, sizeof(part));
		snprintf(subject, sizeof(subject), "%s holds '%s',", who, part);
		r = check_dev(pdev, subject, force);
		if (r < 0) {
			n = r;
			break;
		}
		n += r;
	}
	closedir(dir);
	return n;
}

/* The status of a side's file: its open descriptor, else its path. */
static int stat_side(const struct pdd_dev *d, struct stat *st)
{
	if (d->fd >= 0)
		return fstat(d->fd, st) ? -errno : 0;
	if (!strcmp(d->path, "-"))
		return fstat(d->output ? STDOUT_FILENO : STDIN_FILENO, st) ? -errno : 0;
	return stat(d->path, st) ? -errno : 0;
}

/* Where a side's bytes lie: a regular file, or a block device as a range
 * of its whole disk (a partition starts "start" 512-byte sectors in).
 * Seen through loop devices, the file or disk is the one under the last
 * loop, and base counts the loops' offsets and partition starts too. */
struct where {
	bool file;		/* a regular file, else a block device */
	dev_t node;		/* the file's st_dev, or the device's own number */
	ino_t ino;		/* the file's inode */
	dev_t disk;		/* the whole disk a device is part of */
	uint64_t base;		/* first byte of the side in that file or disk */
	int loops;		/* loop devices seen through on the way */
	dev_t loop;		/* the first of them: the side's own disk */
	bool part;		/* the side is a partition of that loop device */
	dev_t last;		/* the last of them, right over the file or disk */
};

/* The block device dev as a range of its whole disk, base bytes further
 * in than w->base already says. */
static void locate_block(dev_t dev, struct where *w)
{
	char buf[64];
	uint64_t start;

	w->node = w->disk = dev;
	if (guard_read_sys(w->node, "partition", buf, sizeof(buf)))
		return;		/* a whole disk, or no sysfs to say otherwise */
	if (guard_read_sys(w->node, "start", buf, sizeof(buf)) ||
	    sscanf(buf, "%" SCNu64, &start) != 1 || start > UINT64_MAX / 512 ||
	    start * 512 > UINT64_MAX - w->base ||
	    guard_read_sys(w->node, "../dev", buf, sizeof(buf)) || !guard_parse_devnum(buf, &w->disk)) {
		w->disk = w->node;	/* cannot tell its disk: compare it alone */
		return;
	}
	w->base += start * 512;
}

/* Where d's bytes lie; through loop devices to what is under them when
 * through is set.  false when it is neither a file nor a block device. */
static bool locate(const struct pdd_dev *d, bool through, struct where *w)
{
	struct backing b;
	struct stat st;
	int fd = d->fd;
	dev_t dev;

	memset(w, 0, sizeof(*w));
	if (d->missing || (d->kind != PDD_KIND_FILE && d->kind != PDD_KIND_BLOCK) ||
	    stat_side(d, &st))
		return false;
	if (S_ISREG(st.st_mode)) {
		w->file = true;
		w->node = st.st_dev;
		w->ino = st.st_ino;
		return true;
	}
	if (!S_ISBLK(st.st_mode))
		return false;
	for (dev = st.st_rdev; ; dev = b.rdev, fd = -1) {
		locate_block(dev, w);
		if (!through || w->loops == LOOP_DEPTH || guard_loop_backing(w->disk, fd, &b) ||
		    b.offset > UINT64_MAX - w->base)
			return true;	/* where it lies, as far as can be told */
		if (!w->loops++) {
			w->loop = w->disk;
			w->part = w->node != w->disk;
		}
		w->last = w->disk;
		w->base += b.offset;
		if (!b.rdev) {
			w->file = true;
			w->node = b.dev;
			w->ino = b.ino;
			w->disk = 0;
			return true;
		}
	}
}

/* Do both lie in one file or on one disk? */
static bool same_place(const struct where *a, const struct where *b)
{
	return a->file == b->file &&
	       (a->file ? a->node == b->node && a->ino == b->ino : a->disk == b->disk);
}

/* [s, e) of a copy's side; e is UINT64_MAX when it runs to the end. */
static void side_range(uint64_t base, uint64_t off, uint64_t total,
		       uint64_t *s, uint64_t *e)
{
	*s = base > UINT64_MAX - off ? UINT64_MAX : base + off;
	*e = total == PDD_UNTIL_EOF || *s > UINT64_MAX - total ? UINT64_MAX : *s + total;
}

static void fmt_range(char *buf, size_t len, uint64_t s, uint64_t e)
{
	if (e == UINT64_MAX)
		snprintf(buf, len, "%" PRIu64 " to the end", s);
	else
		snprintf(buf, len, "%" PRIu64 " to %" PRIu64, s, e - 1);
}

/* How a side reaches the file or disk under it, for the message:
 * "the input is a loop device over it" and the like; "" when directly. */
static void through_phrase(char *buf, size_t len, const char *role, const struct where *w)
{
	char loop[PATH_MAX];

	buf[0] = '\0';
	if (!w->loops)
		return;
	guard_node_name(w->loop, "", loop, sizeof(loop));
	if (w->part)
		snprintf(buf, len, "the %s is a partition of the loop device '%s' %s it", role,
			 loop, w->file ? "over" : "on");
	else
		snprintf(buf, len, "the %s is a loop device %s it", role, w->file ? "over" : "on");
}

/* Output and input seen through loop devices to one file or disk. */
static void say_through(const struct pdd_dev *in, const struct pdd_dev *out,
			const struct where *wi, const struct where *wo,
			const char *ob, const char *ib)
{
	char under[PATH_MAX + 64], ip[PATH_MAX + 96], op[PATH_MAX + 96];
	const struct where *l = wo->loops ? wo : wi;

	if (!wo->file)
		guard_node_name(wo->disk, "", under, sizeof(under));
	else if (!wo->loops)
		snprintf(under, sizeof(under), "%s", out->name);
	else if (!wi->loops)
		snprintf(under, sizeof(under), "%s", in->name);
	else if (guard_read_sys(l->last, "loop/backing_file", under, sizeof(under)))
		snprintf(under, sizeof(under), "inode %ju on device %u:%u", (uintmax_t)l->ino,
			 major(l->node), minor(l->node));
	through_phrase(ip, sizeof(ip), "input", wi);
	through_phrase(op, sizeof(op), "output", wo);
	pdd_error("'%s' and the input '%s' are %s '%s' (%s%s%s), where the output's bytes %s overlap the input's bytes %s",
		  out->name, in->name, wo->file ? "in the file" : "on the disk", under, ip,
		  *ip && *op ? "; " : "", op, ob, ib);
}

/* Output and input on one file or disk may not overlap: the writes would
 * overwrite input not read yet (or, onto itself, gain nothing).  First
 * they are compared as they are, then through loop devices, whose bytes
 * are their backing file's or device's. */
static int check_overlap(const struct pdd_plan *p, const struct pdd_dev *in,
			 const struct pdd_dev *out)
{
	char ob[64], ib[64], disk[PATH_MAX];
	uint64_t is, ie, os, oe, out_off = p->out_off;
	struct where wi, wo;
	bool same, file_out;

	if (!p->total || !locate(in, false, &wi) || !locate(out, false, &wo))
		return 0;
	if (!same_place(&wi, &wo) &&
	    (!locate(in, true, &wi) || !locate(out, true, &wo) ||
	     !(wi.loops || wo.loops) || !same_place(&wi, &wo)))
		return 0;
	same = !wi.loops && !wo.loops && (wi.file || wi.node == wo.node);
	if (same)		/* say the offsets on the device itself */
		wi.base = wo.base = 0;
	file_out = wo.file && !wo.loops;	/* a regular file is the output */
	if (file_out && (out->flags & PDD_F_APPEND))
		out_off = out->size;	/* appended after what the file holds */
	side_range(wi.base, p->in_off, p->total, &is, &ie);
	side_range(wo.base, out_off, p->total, &os, &oe);
	if (file_out && (out->flags & PDD_F_TRUNC))
		oe = UINT64_MAX;	/* oflag=trunc cuts the rest off first */
	if (os >= ie || is >= oe)
		return 0;
	fmt_range(ob, sizeof(ob), os, oe);
	fmt_range(ib, sizeof(ib), is, ie);
	if (same) {
		pdd_error("'%s' bytes %s overlap the input's bytes %s %s", out->name, ob, ib,
			  wi.file ? "in the same file" : "on the same device");
	} else if (wi.loops || wo.loops) {
		say_through(in, out, &wi, &wo, ob, ib);
	} else {
		guard_node_name(wo.disk, "", disk, sizeof(disk));
		pdd_error("'%s' and the input '%s' are on the disk '%s', where the output's bytes %s overlap the input's bytes %s",
			  out->name, in->name, disk, ob, ib);
	}
	return -EINVAL;
}

int pdd_guard(const struct pdd_plan *p, const struct pdd_dev *in,
	      const struct pdd_dev *out)
{
	bool force = (out->flags & PDD_F_FORCE) != 0, blk, reg;
	char who[PATH_MAX + 2];
	struct stat st;
	int n = 0, r;

	if (!out->output)
		return 0;	/* verify=only: nothing is written */
	if ((out->kind == PDD_KIND_BLOCK || out->kind == PDD_KIND_FILE) && !out->missing &&
	    !stat_side(out, &st)) {
		blk = out->kind == PDD_KIND_BLOCK && S_ISBLK(st.st_mode);
		reg = out->kind == PDD_KIND_FILE && S_ISREG(st.st_mode);
		snprintf(who, sizeof(who), "'%s'", out->name);
		if (blk)
			n = guard_check_block(st.st_rdev, who, force);
		/* a loop device over the output is written through it: its
		 * mounts are the output's (every reason is told, so both) */
		if (n >= 0 && (blk || reg)) {
			r = guard_check_loops(&st, out->name, force);
			n = r < 0 ? r : n + r;
		}
		if (n)
			return n < 0 ? n : -EBUSY;
	}
	return check_overlap(p, in, out);
}

void pdd_guard_busy(const struct pdd_dev *in, const struct pdd_dev *out)
{
	char who[PATH_MAX + 2];
	struct where wi, wo;
	struct stat st;

	if (out->kind != PDD_KIND_BLOCK || stat_side(out, &st) || !S_ISBLK(st.st_mode))
		return;
	snprintf(who, sizeof(who), "'%s'", out->name);
	if (guard_check_block(st.st_rdev, who, false))
		return;		/* it said why */
	/* iflag=excl on the same disk claims it against pdd's own output */
	if (in->kind == PDD_KIND_BLOCK && (in->flags & PDD_F_EXCL) && locate(in, false, &wi) &&
	    locate(out, false, &wo) && wi.disk == wo.disk) {
		pdd_error("'%s' is busy: the input '%s' holds it exclusively (iflag=excl)",
			  out->name, in->name);
		return;
	}
	pdd_error("'%s' is busy: another program holds it exclusively", out->name);
}
