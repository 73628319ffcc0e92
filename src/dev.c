// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One side of a copy, once open (open.c): find out what it is (block
 * device, file, FIFO, /dev/null, /dev/zero, sg or raw device) and measure
 * it: logical and physical block size, size in whole logical blocks, the
 * largest request and the alignment direct I/O needs, and who it is.
 * Also the few things done to a side by kind: winding a stream past
 * skip=, flushing, and choosing the descriptor for a piece.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#ifdef HAVE_SGUTILS
#include <scsi/sg.h>
#endif

#include "pdd.h"
#include "scsi.h"

#define SG_MAJOR	21	/* SCSI generic */
#define RAW_MAJOR	162	/* raw devices */
#define MEM_MAJOR	1	/* /dev/null is 1:3, /dev/zero 1:5 */

/* Each kind's name in messages, and its word in the JSON report. */
static const struct {
	const char *name, *word;
} kinds[] = {
	[PDD_KIND_FILE] = { "regular file", "file" },
	[PDD_KIND_BLOCK] = { "block device", "block" },
	[PDD_KIND_FIFO] = { "fifo", "fifo" },
	[PDD_KIND_CHAR] = { "character device", "char" },
	[PDD_KIND_NULL] = { "null", "null" },
	[PDD_KIND_ZERO] = { "zero", "zero" },
	[PDD_KIND_SG] = { "sg device", "sg" },
	[PDD_KIND_RAW] = { "raw device", "raw" },
	[PDD_KIND_NBD] = { "NBD export", "nbd" },
};

const char *pdd_kind_name(enum pdd_kind k)
{
	return kinds[k].name;
}

const char *pdd_kind_word(enum pdd_kind k)
{
	return kinds[k].word;
}

enum pdd_kind pdd_dev_classify(const struct stat *st)
{
	if (S_ISREG(st->st_mode))
		return PDD_KIND_FILE;
	if (S_ISBLK(st->st_mode))
		return PDD_KIND_BLOCK;
	if (S_ISCHR(st->st_mode)) {
		unsigned int maj = major(st->st_rdev), min = minor(st->st_rdev);

		if (maj == SG_MAJOR)
			return PDD_KIND_SG;
		if (maj == RAW_MAJOR)
			return PDD_KIND_RAW;
		if (maj == MEM_MAJOR && min == 3)
			return PDD_KIND_NULL;
		if (maj == MEM_MAJOR && min == 5)
			return PDD_KIND_ZERO;
		return PDD_KIND_CHAR;
	}
	return PDD_KIND_FIFO;	/* FIFO, socket: a stream either way */
}

/* A sysfs attribute of the block device (path relative to its directory,
 * "../" for a partition's disk) as read, NUL-terminated; the number of
 * bytes, 0 when it is not there.  Also for throttle.c. */
size_t pdd_sys_read(dev_t rdev, const char *up, const char *path, char *out,
		       size_t len)
{
	char full[192];
	ssize_t n;
	int fd;

	out[0] = '\0';
	snprintf(full, sizeof(full), "/sys/dev/block/%u:%u/%s%s", major(rdev),
		 minor(rdev), up, path);
	fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, out, len - 1);
	close(fd);
	if (n < 0)
		n = 0;
	out[n] = '\0';
	return (size_t)n;
}

/* A text attribute: its first line, without trailing blanks. */
static void sys_text(dev_t rdev, const char *up, const char *path, char *out,
		     size_t len)
{
	size_t n;

	pdd_sys_read(rdev, up, path, out, len);
	out[strcspn(out, "\n")] = '\0';
	n = strlen(out);
	while (n && out[n - 1] == ' ')
		out[--n] = '\0';
}

/* A number from the block device's queue directory in sysfs; a partition
 * has none of its own, so look beside it in its disk's. */
static uint64_t queue_attr(dev_t rdev, const char *attr)
{
	char path[64], buf[32];

	snprintf(path, sizeof(path), "queue/%s", attr);
	if (!pdd_sys_read(rdev, "", path, buf, sizeof(buf)) &&
	    !pdd_sys_read(rdev, "../", path, buf, sizeof(buf)))
		return 0;
	return strtoull(buf, NULL, 10);
}

/*
 * Who a block device is, as sysfs knows it: vendor and model, the serial
 * number (virtio and NVMe give it as an attribute, SCSI disks as VPD page
 * 0x80, binary), and for a loop device its backing file.  A partition
 * shares its disk's.
 */
static void identify_block(struct pdd_dev *d, dev_t rdev)
{
	char vendor[32], model[48], part[8], vpd[256];
	const char *up;
	size_t n;

	sys_text(rdev, "", "partition", part, sizeof(part));
	up = part[0] ? "../" : "";
	sys_text(rdev, up, "device/vendor", vendor, sizeof(vendor));
	sys_text(rdev, up, "device/model", model, sizeof(model));
	/* the vendor and model fields of SCSI are 8 and 16 bytes; anything
	 * longer is cut */
	snprintf(d->model, sizeof(d->model), "%.24s%s%.38s", vendor,
		 *vendor && *model ? " " : "", model);
	sys_text(rdev, up, "serial", d->serial, sizeof(d->serial));
	if (!d->serial[0])
		sys_text(rdev, up, "device/serial", d->serial, sizeof(d->serial));
	n = pdd_sys_read(rdev, up, "device/vpd_pg80", vpd, sizeof(vpd));
	if (!d->serial[0] && n > 4 && (uint8_t)vpd[1] == 0x80) {
		size_t len = (uint8_t)vpd[3] < n - 4 ? (uint8_t)vpd[3] : n - 4;
		const char *p = vpd + 4;

		while (len && *p == ' ')
			p++, len--;
		snprintf(d->serial, sizeof(d->serial), "%.*s", (int)len, p);
		len = strlen(d->serial);
		while (len && d->serial[len - 1] == ' ')
			d->serial[--len] = '\0';
	}
	sys_text(rdev, up, "loop/backing_file", d->backing, sizeof(d->backing));
}

static int measure_block(struct pdd_dev *d, const struct stat *st)
{
	unsigned int pbs = 0;
	uint64_t size = 0;
	int lbs = 0;

	if (ioctl(d->fd, BLKSSZGET, &lbs) < 0)
		return -errno;
	if (lbs <= 0)
		return -EINVAL;
	if (ioctl(d->fd, BLKPBSZGET, &pbs) < 0 || !pbs)
		pbs = lbs;
	if (ioctl(d->fd, BLKGETSIZE64, &size) < 0)
		return -errno;
	d->lbs = lbs;
	d->pbs = pbs;
	/* a tail shorter than a logical block cannot be addressed */
	d->size = size - size % (unsigned int)lbs;
	d->size_known = true;
	d->io_align = lbs;
	d->mem_align = (unsigned int)queue_attr(st->st_rdev, "dma_alignment") + 1;
	d->max_xfer = queue_attr(st->st_rdev, "max_sectors_kb") * 1024;
	identify_block(d, st->st_rdev);
	return 0;
}

/*
 * An sg device: the driver must speak the v3 interface (version 3.0 or
 * later), and READ CAPACITY gives the size and the logical block size.
 * The largest command is the host's max_sectors, which sg reports in
 * bytes through BLKSECTGET.
 */
static int measure_sg(struct pdd_dev *d)
{
#ifdef HAVE_SGUTILS
	unsigned int lbs, pbs;
	uint64_t blocks;
	int ver = 0, max = 0, err;

	if (ioctl(d->fd, SG_GET_VERSION_NUM, &ver) < 0)
		return -errno;
	if (ver < 30000) {
		pdd_error("'%s' has sg driver version %d.%d.%d; pdd needs 3.0 or later",
			  d->name, ver / 10000, ver / 100 % 100, ver % 100);
		return -ENOTSUP;
	}
	err = pdd_scsi_capacity(d->fd, &blocks, &lbs, &pbs, pdd_verbose);
	if (!err && (!lbs || blocks > UINT64_MAX / lbs))
		err = -EINVAL;
	if (err) {
		pdd_error("cannot read the capacity of '%s': %s", d->name, pdd_strerror(err));
		return pdd_err_is_scsi(err) ? err : -ENOTSUP;
	}
	d->lbs = d->io_align = lbs;
	d->pbs = pbs;
	d->size = blocks * lbs;
	d->size_known = true;
	if (ioctl(d->fd, BLKSECTGET, &max) == 0 && max > 0)
		d->max_xfer = (uint64_t)max;
	if (pdd_scsi_identify(d->fd, d->model, sizeof(d->model), d->serial,
			      sizeof(d->serial), pdd_verbose))
		pdd_info(1, "'%s' did not answer INQUIRY", d->name);
	pdd_info(2, "'%s': sg driver %d.%d.%d, %" PRIu64 " blocks of %u bytes, commands up to %" PRIu64 " bytes",
		 d->name, ver / 10000, ver / 100 % 100, ver % 100, blocks, lbs, d->max_xfer);
	return 0;
#else
	pdd_error("'%s' is a SCSI generic device, and this pdd was built without libsgutils2",
		  d->name);
	return -ENOTSUP;
#endif
}

/* What a file system asks of direct I/O on this file (statx, Linux 6.1);
 * 512 where it does not say, which every common file system accepts. */
void pdd_dev_measure_file(struct pdd_dev *d, const struct stat *st)
{
	struct statx sx;

	d->size = st->st_size;
	d->size_known = true;
	d->lbs = 512;
	d->pbs = st->st_blksize;
	d->io_align = 512;
	d->mem_align = 512;
	if (d->fd >= 0 && statx(d->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
	    (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align) {
		d->io_align = sx.stx_dio_offset_align;
		d->mem_align = sx.stx_dio_mem_align;
	}
}

int pdd_dev_measure(struct pdd_dev *d, const struct stat *st)
{
	int err;

	d->kind = pdd_dev_classify(st);
	d->lbs = d->pbs = d->io_align = d->mem_align = 1;
	d->seekable = true;
	switch (d->kind) {
	case PDD_KIND_BLOCK:
		return measure_block(d, st);
	case PDD_KIND_FILE:
		pdd_dev_measure_file(d, st);
		return 0;
	case PDD_KIND_NULL:
		d->size_known = true;	/* empty to read, bottomless to write */
		return 0;
	case PDD_KIND_ZERO:
		return 0;
	case PDD_KIND_SG:
		return measure_sg(d);
	case PDD_KIND_RAW:
		/* a raw device passes the block ioctls to the disk it is bound
		 * to, and takes only direct I/O: buffers aligned to its
		 * logical block too, as the raw driver demanded */
		err = measure_block(d, st);
		if (!err && d->mem_align < d->lbs)
			d->mem_align = d->lbs;
		return err;
	default:
		d->seekable = false;
		return 0;
	}
}

/* skip= on a stream: read and throw away. */
int pdd_dev_skip_stream(struct pdd_dev *d, uint64_t bytes)
{
	char buf[65536];

	while (bytes) {
		size_t n = bytes < sizeof(buf) ? bytes : sizeof(buf);
		ssize_t got = read(d->fd, buf, n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int err = -errno;

			pdd_error("error skipping in '%s': %s", d->name, strerror(errno));
			return err;
		}
		if (got == 0)
			return -ENODATA;	/* ended before skip=: nothing to copy */
		bytes -= got;
	}
	return 0;
}

/* sync=1: what was written is on stable storage before pdd says so. */
int pdd_dev_flush(struct pdd_dev *d)
{
#ifdef HAVE_SGUTILS
	if (d->kind == PDD_KIND_SG)
		return pdd_scsi_sync(d->fd, pdd_verbose);
#endif
	if (d->kind != PDD_KIND_FILE && d->kind != PDD_KIND_BLOCK &&
	    d->kind != PDD_KIND_RAW)
		return 0;
	if (fdatasync(d->fd) < 0)
		return -errno;
	return 0;
}

/* Direct I/O needs offset, length and buffer aligned; anything else (the
 * tail of a file, a file system that wants more) goes through the page
 * cache on the buffered descriptor. */
int pdd_dev_pick_fd(const struct pdd_dev *d, uint64_t off, size_t len,
		    const void *buf)
{
	if (!d->direct)
		return d->fd;
	if (off % d->io_align || len % d->io_align ||
	    (uintptr_t)buf % d->mem_align)
		return d->fd_buf;
	return d->fd;
}
