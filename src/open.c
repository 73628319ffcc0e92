// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Opening one side of a copy: the flags each kind is opened with (direct
 * I/O, the exclusive claim, append), a standard input or output taken
 * where the shell left it, and the checks that refuse at open, before
 * the plan and in a dry run too, what could only fail once the copy ran:
 * a read-only output device, a new file that cannot be made, a new
 * regular file under /dev.  A missing output file is created only once
 * the plan has passed and the copy has its memory (pdd_dev_create), so
 * a refused command leaves nothing behind.  Measuring is dev.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pdd.h"
#include "scsi.h"

static bool wants_direct(enum pdd_kind kind, unsigned int flags)
{
	if (kind == PDD_KIND_RAW)
		return true;		/* there is no other way to a raw device */
	if (kind == PDD_KIND_SG)
		return false;		/* the sg driver moves the data; see dio= */
	if (flags & PDD_F_NODIRECT)
		return false;
	if (kind == PDD_KIND_BLOCK)
		return true;
	return kind == PDD_KIND_FILE && (flags & PDD_F_DIRECT);
}

static int open_flags(const struct pdd_dev *d)
{
	int fl = O_CLOEXEC | (d->output ? O_WRONLY : O_RDONLY);

	if (d->kind == PDD_KIND_SG) {
		/* commands are written to the device and their results read
		 * back, on either side; O_EXCL is the driver's exclusive open,
		 * and O_NONBLOCK makes an open that would wait for someone
		 * else's exclusive hold fail with EBUSY instead */
		return O_CLOEXEC | O_RDWR | O_NONBLOCK | ((d->flags & PDD_F_EXCL) ? O_EXCL : 0);
	}

	if (d->flags & PDD_F_DSYNC)
		fl |= O_DSYNC;
	if (d->output && (d->flags & PDD_F_APPEND))
		fl |= O_APPEND;
	/* on a block device O_EXCL is an exclusive claim: it fails when the
	 * device is mounted or held.  A block-device output makes it by
	 * default (guard.c names the holder when it fails); oflag=force
	 * leaves it to oflag=excl */
	if ((d->flags & PDD_F_EXCL) && (d->kind == PDD_KIND_BLOCK || d->kind == PDD_KIND_RAW))
		fl |= O_EXCL;
	if (d->output && d->kind == PDD_KIND_BLOCK && !(d->flags & PDD_F_FORCE))
		fl |= O_EXCL;
	return fl;
}

/* Open path (again) as this side needs it: a direct descriptor and, for
 * pieces direct I/O cannot take, a buffered one. */
static int open_fds(struct pdd_dev *d, const char *path, int extra)
{
	int fl = open_flags(d) | extra;

	d->fd = open(path, fl | (d->direct ? O_DIRECT : 0), 0666);
	if (d->fd < 0)
		return -errno;
	d->own_fd = true;
	d->fd_buf = d->fd;
	if (d->direct) {
		/* no O_EXCL and no O_CREAT: the first open made and claimed it */
		d->fd_buf = open(path, fl & ~(O_EXCL | O_CREAT | O_TRUNC), 0);
		if (d->fd_buf < 0) {
			int err = -errno;

			close(d->fd);
			d->fd = -1;
			return err;
		}
	}
	return 0;
}

/*
 * oflag=append means "at the end of the file".  A device has no end to
 * append at: the kernel ignores O_APPEND on a block device (GNU dd's
 * writes go to seek= there), and a pipe or terminal is written in order
 * anyway.  So the flag is kept for regular files only and dropped for
 * every other output, which is then written like any other copy of its
 * kind; every engine writes it the same way, at its positions.
 */
static void drop_append(struct pdd_dev *d)
{
	if (!d->output || !(d->flags & PDD_F_APPEND) || d->kind == PDD_KIND_FILE)
		return;
	d->flags &= ~PDD_F_APPEND;
	pdd_info(1, "'%s' is a %s: oflag=append applies to regular files only; "
		 "writing from the start of the range", d->name, pdd_kind_name(d->kind));
}

static const char *verb(const struct pdd_dev *d)
{
	return d->output ? "writing" : "reading";
}

/*
 * A standard input or output that can seek starts where the shell left
 * its offset, as in dd: `{ printf HEAD; pdd if=x; } >out` puts the copy
 * after HEAD, and skip= and seek= count from there.  A descriptor the
 * shell opened for appending (>>) is written as oflag=append: a
 * positional write to it would land at the end all the same, in
 * whatever order the writes finish.
 */
static void std_position(struct pdd_dev *d, int fd)
{
	int fl = fcntl(fd, F_GETFL);
	off_t pos;

	if (!d->seekable || d->kind == PDD_KIND_NULL || d->kind == PDD_KIND_ZERO)
		return;
	if (d->output && fl >= 0 && (fl & O_APPEND) && d->kind == PDD_KIND_FILE) {
		d->flags |= PDD_F_APPEND;
		return;
	}
	pos = lseek(fd, 0, SEEK_CUR);
	if (pos > 0)
		d->base = (uint64_t)pos;
	d->std_fd = fd;
}

/* The directory a new output file goes in, and whether it is /dev itself
 * (or under it, on the same file system): a name there that does not
 * exist is nearly always a mistyped device (/dev/sdc3 where the disk has
 * two partitions), and a regular file there lives in memory. */
static bool in_dev(const char *dir)
{
	char real[PATH_MAX];
	struct stat ds, dev;

	if (!realpath(dir, real) || (strcmp(real, "/dev") && strncmp(real, "/dev/", 5)))
		return false;
	return !stat(real, &ds) && !stat("/dev", &dev) && ds.st_dev == dev.st_dev;
}

/* A path whose directory is /dev, or under it on /dev's file system. */
static bool dev_file(const char *path)
{
	char *copy = strdup(path);
	bool yes = copy && in_dev(dirname(copy));

	free(copy);
	return yes;
}

/* An output file to be created: refuse now, before the copy and in a dry
 * run, what pdd_dev_create would fail at, or should not do. */
static int check_new_file(const struct pdd_dev *d)
{
	char *copy = strdup(d->path);
	const char *dir;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	dir = dirname(copy);
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0) {
		err = -errno;
		pdd_error("cannot create '%s': %s", d->name, strerror(errno));
	} else if (!(d->flags & PDD_F_FORCE) && in_dev(dir)) {
		err = -ENOENT;
		pdd_error("'%s' does not exist, and pdd makes no regular file under /dev: "
			  "is the device name right? (oflag=force makes the file)", d->name);
	}
	free(copy);
	return err;
}

/* An output the device itself will not let anyone write (losetup -r, a
 * write-protected disk): the open succeeds, and only the first write
 * would fail. */
static bool read_only(const struct pdd_dev *d)
{
	int ro = 0;

	if (!d->output || (d->kind != PDD_KIND_BLOCK && d->kind != PDD_KIND_RAW))
		return false;
	return ioctl(d->fd, BLKROGET, &ro) == 0 && ro;
}

/* The URI schemes libnbd takes: a side given so is an NBD export. */
bool pdd_nbd_uri(const char *path)
{
	static const char *const scheme[] = { "nbd://", "nbds://", "nbd+unix://", "nbds+unix://",
					      "nbd+vsock://", "nbds+vsock://" };

	for (size_t i = 0; i < sizeof(scheme) / sizeof(scheme[0]); i++)
		if (!strncmp(path, scheme[i], strlen(scheme[i])))
			return true;
	return false;
}

int pdd_dev_open(struct pdd_dev *d, const char *path, bool output,
		 unsigned int flags)
{
	bool std = !path || !strcmp(path, "-");
	struct stat st;
	char procpath[32];
	int err;

	memset(d, 0, sizeof(*d));
	d->fd = d->fd_buf = d->std_fd = -1;
	d->output = output;
	d->flags = flags;
	d->path = std ? "-" : path;
	d->name = std ? (output ? "standard output" : "standard input") : path;

	if (!std && pdd_nbd_uri(path)) {
#ifdef HAVE_LIBNBD
		return pdd_nbd_open(d);
#else
		pdd_error("pdd was built without libnbd: cannot open the NBD URI '%s'", path);
		return -EPROTONOSUPPORT;
#endif
	}
	if (output && !std && !strcmp(path, ".")) {
		d->kind = PDD_KIND_NULL;
		d->lbs = d->pbs = d->io_align = d->mem_align = 1;
		d->seekable = d->size_known = true;
		return 0;
	}

	if (std) {
		int fd = output ? STDOUT_FILENO : STDIN_FILENO;
		int acc = fcntl(fd, F_GETFL);

		if (fstat(fd, &st) < 0)
			goto fail;
		/* open the other way round (1</dev/null, or the descriptor
		 * msg.c holds for a closed one): /dev/null would pass for a
		 * discarding output, and the copy would fail only at its
		 * first write */
		if (acc >= 0 && (acc & O_ACCMODE) == (output ? O_RDONLY : O_WRONLY)) {
			errno = EBADF;
			goto fail;
		}
		d->kind = pdd_dev_classify(&st);
		d->seekable = S_ISREG(st.st_mode) || S_ISBLK(st.st_mode);
		drop_append(d);
		std_position(d, fd);
		d->fd = d->fd_buf = fd;
		d->direct = wants_direct(d->kind, d->flags);
		if (d->direct || (output && (d->flags & PDD_F_APPEND))) {
			/* a fresh open of the same file, so that the flags we
			 * set are ours and not the shell's */
			snprintf(procpath, sizeof(procpath), "/proc/self/fd/%d", fd);
			err = open_fds(d, procpath, 0);
			if (err) {
				errno = -err;
				goto fail;
			}
		}
	} else {
		if (stat(path, &st) < 0) {
			if (errno == ENOENT && output && !(flags & PDD_F_NOCREAT)) {
				/* created after the plan passes */
				d->missing = true;
				d->kind = PDD_KIND_FILE;
				d->direct = wants_direct(d->kind, flags);
				d->stream = (flags & PDD_F_APPEND) != 0;
				pdd_dev_measure_file(d, &(struct stat){ .st_blksize = 4096 });
				d->seekable = true;
				return check_new_file(d);
			}
			goto fail;
		}
		if (output && S_ISREG(st.st_mode) && (flags & PDD_F_EXCL)) {
			errno = EEXIST;
			goto fail;
		}
		if (output && S_ISREG(st.st_mode) && !(flags & PDD_F_FORCE) && dev_file(path)) {
			/* what an earlier typo (dd's, say) left there */
			pdd_error("'%s' is a regular file under /dev, not a device: is the device name right? "
				  "(oflag=force writes it)", path);
			return -ENOTBLK;
		}
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			goto fail;
		}
		d->kind = pdd_dev_classify(&st);
		drop_append(d);
		d->direct = wants_direct(d->kind, flags);
		err = open_fds(d, path, 0);
		if (err) {
			errno = -err;
			goto fail;
		}
	}
	if (fstat(d->fd, &st) < 0)
		goto fail;
	err = pdd_dev_measure(d, &st);
	if (err == -ENOTSUP || pdd_err_is_scsi(err)) {
		pdd_dev_close(d);	/* measure() said why */
		return err;
	}
	if (!err && read_only(d))
		err = -EROFS;
	if (err) {
		errno = -err;
		goto fail;
	}
	if ((flags & PDD_F_DIRECT) && !d->direct)
		pdd_info(1, "'%s' is a %s: direct I/O does not apply", d->name,
			 pdd_kind_name(d->kind));
	if ((flags & PDD_F_NODIRECT) && d->kind == PDD_KIND_RAW)
		pdd_info(1, "'%s' is a raw device, which is always direct", d->name);
	if ((flags & (PDD_F_FUA | PDD_F_DPO)) && d->kind != PDD_KIND_SG)
		pdd_info(1, "'%s' is a %s: fua and dpo apply to sg devices only", d->name,
			 pdd_kind_name(d->kind));
	d->stream = !d->seekable || (output && (d->flags & PDD_F_APPEND));
	return 0;
fail:
	err = -errno;
	pdd_error("cannot open '%s' for %s: %s", d->name, verb(d), strerror(errno));
	pdd_dev_close(d);
	return err;
}

/* Leave a standard input or output's offset after what was copied,
 * as dd does, so that the next command in `{ pdd ...; cat; } <in` or
 * `{ pdd ...; printf TAIL; } >out` goes on from there. */
void pdd_dev_leave(const struct pdd_dev *d, uint64_t off)
{
	if (d->std_fd >= 0 && off <= INT64_MAX)
		lseek(d->std_fd, (off_t)off, SEEK_SET);
}

/* Make the missing output file. */
int pdd_dev_create(struct pdd_dev *d)
{
	int err;

	if (!d->missing)
		return 0;
	err = open_fds(d, d->path, O_CREAT | ((d->flags & PDD_F_EXCL) ? O_EXCL : 0));
	if (err) {
		pdd_error("cannot create '%s': %s", d->name, strerror(-err));
		return err;
	}
	d->missing = false;
	pdd_dev_measure_file(d, &(struct stat){ .st_blksize = 4096 });
	return 0;
}

/* oflag=trunc: cut the output file at trunc_to, the last thing before
 * the copy, once everything it needs is in hand. */
int pdd_dev_truncate(struct pdd_dev *d, uint64_t trunc_to)
{
	int err;

	if ((d->flags & PDD_F_TRUNC) && d->kind == PDD_KIND_FILE &&
	    ftruncate(d->fd, (off_t)trunc_to) < 0) {
		err = -errno;
		pdd_error("cannot truncate '%s': %s", d->name, strerror(errno));
		return err;
	}
	return 0;
}


/* 0, or the first error a close reported: on an output, a write the
 * file system could not make after all (NFS, FUSE), which the copy must
 * not call done. */
int pdd_dev_close(struct pdd_dev *d)
{
	int err = 0;

	if (d->own_fd) {
		if (d->fd_buf >= 0 && d->fd_buf != d->fd && close(d->fd_buf) < 0)
			err = -errno;
		if (d->fd >= 0 && close(d->fd) < 0 && !err)
			err = -errno;
	}
	d->fd = d->fd_buf = -1;
	d->own_fd = false;
#ifdef HAVE_LIBNBD
	pdd_nbd_close(d);
#endif
	return err;
}
