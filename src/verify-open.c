// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What verify= can check, and the output (or input) opened again for
 * reading it back: with direct I/O where the file takes it, through the
 * engine the copy gave the side.  Shared by the comparison of verify=1
 * and verify=only (verify.c) and the digests read back for verify=hash
 * and a resumed hash= (verify-hash.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pdd.h"

static const char *mode(const struct pdd_opts *o)
{
	return o->verify == PDD_VERIFY_ONLY ? "only" : o->verify == PDD_VERIFY_HASH ? "hash" : "1";
}

/* What verify= cannot do, refused before anything is written (and in
 * --dry-run) with exit status 31.  verify=hash never reads the input
 * again: it takes any input, coe=1 and map=. */
int pdd_verify_check(const struct pdd_opts *o, const struct pdd_dev *in,
		     const struct pdd_dev *out, const struct pdd_plan *p)
{
	const char *m = mode(o);

	if (o->verify == PDD_VERIFY_NONE)
		return 0;
	if (o->verify != PDD_VERIFY_HASH && (in->stream || p->total == PDD_UNTIL_EOF)) {
		pdd_error("verify=%s: '%s' is a %s, which cannot be read again", m,
			  in->name, pdd_kind_name(in->kind));
		return -EINVAL;
	}
	if (out->kind == PDD_KIND_NULL || out->kind == PDD_KIND_ZERO) {
		pdd_error("verify=%s: '%s' discards what is written: there is nothing to compare",
			  m, out->name);
		return -EINVAL;
	}
	if (out->stream && (out->flags & PDD_F_APPEND) && out->seekable) {
		pdd_error("verify=%s and oflag=append contradict: the range written to '%s' is not known",
			  m, out->name);
		return -EINVAL;
	}
	if (out->stream) {
		pdd_error("verify=%s: '%s' is a %s, which cannot be read back", m,
			  out->name, pdd_kind_name(out->kind));
		return -EINVAL;
	}
	if (o->verify == PDD_VERIFY_AFTER && o->coe) {
		pdd_error("verify=1 and coe=1 contradict: blocks written as zeros cannot match");
		return -EINVAL;
	}
	if (o->map && o->verify != PDD_VERIFY_HASH) {
		pdd_error("verify=%s and map= contradict: a run with a map copies only part of the range",
			  m);
		return -EINVAL;
	}
	return 0;
}

/*
 * Open d's file again for reading into v: with O_DIRECT on a device, and
 * on a regular file when its file system takes it; otherwise buffered,
 * after asking the kernel to drop the file's clean cached pages so that
 * what is read comes from the storage where it can.  A buffered
 * descriptor is kept beside a direct one for pieces direct I/O cannot
 * take, as the copy does.  An sg device is opened for reading and
 * writing, as the driver's asynchronous interface needs (or its open
 * descriptor shared), and read with SCSI READ commands as in the copy.
 * An NBD side is read over the copy's connections while they are open,
 * or connected to again.
 */
int pdd_verify_open(struct pdd_dev *v, const struct pdd_dev *d, int std_fd,
		    unsigned int conns)
{
	bool want = d->kind == PDD_KIND_BLOCK || d->kind == PDD_KIND_RAW ||
		    d->kind == PDD_KIND_FILE;
	const char *path = d->path;
	char proc[32];
	int err;

	*v = *d;		/* its name, kind, sizes and alignment */
	v->output = false;
	v->stream = false;
	v->direct = false;
	v->own_fd = true;
	v->fd = v->fd_buf = -1;
	v->nbd = NULL;		/* the copy's connections are d's to close */
	if (d->kind == PDD_KIND_NBD && d->nbd) {
		/* the copy's connections, still open (the input's, and both
		 * with verify=only): a server may take one client at a time
		 * (qemu-nbd's default), and an NBD client keeps no cache to
		 * read past.  teardown() gives them back. */
		v->nbd = d->nbd;
		pdd_info(1, "verify: reading '%s' over the copy's connections", v->name);
		return 0;
	}
	if (d->kind == PDD_KIND_NBD) {
		/* not kept open by the copy (it keeps them all for this): new
		 * connections, as a file is opened again */
		err = pdd_dev_open(v, d->path, false, d->flags);
		v->timeout_ms = d->timeout_ms;
		if (!err)
			err = pdd_nbd_connect(v, conns);
		if (!err)
			pdd_info(1, "verify: reading '%s' over a new connection", v->name);
		return err;
	}
	if (!strcmp(path, "-")) {
		/* standard input or output redirected from or to a file (the
		 * shell's descriptor: the copy has closed its own by now) */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", std_fd);
		path = proc;
	}
	if (d->kind == PDD_KIND_SG) {
		/* the sg driver lets no one else open a device held with
		 * O_EXCL (excl), pdd included: share the copy's descriptor
		 * while it is open, and claim the device again if not */
		if (d->fd >= 0)
			v->fd = fcntl(d->fd, F_DUPFD_CLOEXEC, 0);
		else
			v->fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK |
				     ((d->flags & PDD_F_EXCL) ? O_EXCL : 0));
		v->fd_buf = v->fd;
		if (v->fd < 0)
			goto fail;
		pdd_info(1, "verify: reading '%s' with SCSI commands", v->name);
		return 0;
	}
	if (want) {
		v->fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
		v->direct = v->fd >= 0;
		if (v->fd < 0 && !(errno == EINVAL && d->kind == PDD_KIND_FILE))
			goto fail;
	}
	v->fd_buf = open(path, O_RDONLY | O_CLOEXEC);
	if (v->fd_buf < 0)
		goto fail;
	if (!v->direct)
		v->fd = v->fd_buf;
	(void)posix_fadvise(v->fd_buf, 0, 0, POSIX_FADV_DONTNEED);
	pdd_info(1, "verify: reading '%s' %s", v->name,
		 v->direct ? "with direct I/O" : "through the page cache");
	return 0;
fail:
	err = -errno;
	pdd_error("cannot open '%s' for verifying: %s", d->name, strerror(errno));
	pdd_dev_close(v);
	return err;
}
