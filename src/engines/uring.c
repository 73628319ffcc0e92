// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The io_uring engine: one ring per side, one submitting thread, as many
 * requests in flight as the core allows.  submit() only fills a
 * submission entry; reap() hands the kernel everything queued and, when
 * asked to wait, waits for completions in the same system call.  The
 * ring's own descriptor is what the driver polls when both sides are
 * busy: it is readable while completions wait.  The core's buffers and
 * the side's descriptors are registered with the ring when the kernel
 * lets us (registered buffers count against RLIMIT_MEMLOCK; without
 * them, plain ones work; a buffered side does without).  A stream is read or written at its current
 * position (offset -1).
 */
#include <errno.h>
#include <liburing.h>
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#else
#define VALGRIND_MAKE_MEM_DEFINED(p, n) ((void)(p), (void)(n))
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "engine.h"

#define NFILES 2	/* dev->fd, dev->fd_buf */
#define PDD_URING_FIXED_MAX (1u << 20)	/* larger buffers are not registered */

struct uring_priv {
	struct io_uring ring;		/* the ring */
	unsigned int nfixed;		/* e->bufs[0..nfixed) are registered */
	bool fixed_files;		/* fds[] are registered */
	bool async;			/* issue from the kernel's workers (throttle.c) */
	int fds[NFILES];		/* registered descriptors, by slot */
};

/* io_uring may be missing, disabled (kernel.io_uring_disabled) or
 * blocked by a seccomp filter: find out with a real, tiny ring. */
static int uring_probe(const struct pdd_dev *d)
{
	struct io_uring_probe *probe;
	struct io_uring ring;
	bool ok;
	int err;

	(void)d;
	err = io_uring_queue_init(2, &ring, 0);
	if (err)
		return err;
	probe = io_uring_get_probe_ring(&ring);
	ok = probe && io_uring_opcode_supported(probe, IORING_OP_READ) &&
	     io_uring_opcode_supported(probe, IORING_OP_WRITE);
	io_uring_free_probe(probe);
	io_uring_queue_exit(&ring);
	return ok ? 0 : -EOPNOTSUPP;
}

static void register_files(struct pdd_engine *e, struct uring_priv *u)
{
	const int want[NFILES] = { e->dev->fd, e->dev->fd_buf };
	int err;

	for (int i = 0; i < NFILES; i++)
		u->fds[i] = want[i];	/* -1 (a discarding side) is a sparse slot */
	err = io_uring_register_files(&u->ring, u->fds, NFILES);
	u->fixed_files = !err;
	if (err)
		pdd_info(1, "uring: descriptors not registered: %s", strerror(-err));
}

/* the first n of e->bufs */
static void register_buffers(struct pdd_engine *e, struct uring_priv *u, unsigned int n)
{
	struct iovec *iov = calloc(n, sizeof(*iov));
	int err = -ENOMEM;

	if (iov) {
		for (unsigned int i = 0; i < n; i++) {
			iov[i].iov_base = e->bufs[i];
			iov[i].iov_len = e->buf_len;
		}
		/* during the copy, with IORING_REGISTER_BUFFERS2 (Linux 5.13):
		 * on older kernels the plain kind waits for every request in
		 * flight, and a kernel without it refuses (plain buffers then) */
		err = e->bufs_later ? io_uring_register_buffers_tags(&u->ring, iov, NULL, n) :
				      io_uring_register_buffers(&u->ring, iov, n);
		free(iov);
	}
	u->nfixed = err ? 0 : n;
	if (err)
		pdd_info(1, "uring: buffers not registered (%s): using plain ones",
			 strerror(-err));
}

/* those the copy plans to use, brought in: the rest (transfers cut at
 * holes may reach them) go with plain buffers rather than be pinned, and
 * so faulted in, for nothing */
static void uring_bufs_in(struct pdd_engine *e, unsigned int n)
{
	if (e->dev->direct && e->buf_len <= PDD_URING_FIXED_MAX)
		register_buffers(e, e->priv, n);
}

static int uring_init(struct pdd_engine *e)
{
	struct uring_priv *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		return -ENOMEM;
	/* every request in flight fits in the submission queue at once */
	err = io_uring_queue_init(e->depth, &u->ring, 0);
	if (err) {
		free(u);
		return err;
	}
	e->priv = u;
	register_files(e, u);
	/* fixed buffers spare direct I/O the pinning of its pages on every
	 * request, which counts for small transfers only; through the page
	 * cache they save nothing.  Pinning them faults them all in: where
	 * that is still to come, once they are in (uring_bufs_in) */
	if (!e->bufs_later)
		uring_bufs_in(e, e->nbufs);
	/* a direct request that the cgroup throttles would be charged twice
	 * when issued without waiting first (throttle.c) */
	u->async = e->dev->direct && pdd_throttled(e->dev->fd, e->dev->output);
	if (u->async)
		pdd_info(1, "uring: the %s '%s' is throttled by its cgroup: requests go to the kernel's workers",
			 e->dev->output ? "output" : "input", e->dev->name);
	return 0;
}

static int file_index(const struct uring_priv *u, int fd)
{
	for (int i = 0; i < NFILES; i++)
		if (u->fds[i] == fd)
			return i;
	return -1;
}

static int uring_submit(struct pdd_engine *e, struct pdd_req *rq)
{
	struct uring_priv *u = e->priv;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	__u64 off = rq->positional ? rq->off : (__u64)-1;
	int fd = rq->fd, idx;
	bool rd = rq->op == PDD_OP_READ;

	if (!sqe)	/* not with depth entries; the driver offers it again */
		return PDD_BUSY;
	idx = u->fixed_files ? file_index(u, fd) : -1;
	if (idx >= 0)
		fd = idx;
	if (rq->op == PDD_OP_ZERO) {
		io_uring_prep_fallocate(sqe, fd, rq->zero_mode, off, rq->len);
	} else if (rq->buf_idx < u->nfixed && rq->positional) {
		if (rd)
			io_uring_prep_read_fixed(sqe, fd, rq->buf, rq->len, off, rq->buf_idx);
		else
			io_uring_prep_write_fixed(sqe, fd, rq->buf, rq->len, off, rq->buf_idx);
	} else if (rd) {
		io_uring_prep_read(sqe, fd, rq->buf, rq->len, off);
	} else {
		io_uring_prep_write(sqe, fd, rq->buf, rq->len, off);
	}
	if (idx >= 0)
		sqe->flags |= IOSQE_FIXED_FILE;
	if (u->async)
		sqe->flags |= IOSQE_ASYNC;
	io_uring_sqe_set_data(sqe, rq);
	return 0;
}

static int uring_reap(struct pdd_engine *e, struct pdd_req **done, unsigned int max,
		      int timeout_ms)
{
	struct uring_priv *u = e->priv;
	struct io_uring_cqe *cqe;
	unsigned int n = 0;
	int err = 0;

	if (timeout_ms > 0 && !io_uring_cq_ready(&u->ring)) {
		struct __kernel_timespec ts = { .tv_sec = timeout_ms / 1000,
						.tv_nsec = timeout_ms % 1000 * 1000000L };

		err = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, &ts, NULL);
	} else if (io_uring_sq_ready(&u->ring)) {
		err = io_uring_submit(&u->ring);
	}
	/* out of time, a signal, or completions to take first: what is
	 * there is taken, and the next turn submits again */
	if (err < 0 && err != -ETIME && err != -EINTR && err != -EAGAIN && err != -EBUSY)
		return err;
	while (n < max && io_uring_peek_cqe(&u->ring, &cqe) == 0) {
		struct pdd_req *rq = io_uring_cqe_get_data(cqe);

		rq->res = cqe->res;
		if (rq->op == PDD_OP_ZERO && !cqe->res)	/* fallocate says 0 */
			rq->res = (ssize_t)rq->len;
		/* the kernel filled it, which valgrind cannot see; sparse=
		 * reads it (a no-op outside valgrind) */
		if (rq->op == PDD_OP_READ && cqe->res > 0)
			VALGRIND_MAKE_MEM_DEFINED(rq->buf, (size_t)cqe->res);
		done[n++] = rq;
		io_uring_cqe_seen(&u->ring, cqe);
	}
	return (int)n;
}

static unsigned int uring_pollfd(struct pdd_engine *e, struct pollfd *pfd, unsigned int max)
{
	struct uring_priv *u = e->priv;

	if (!max)
		return 0;
	pfd->fd = u->ring.ring_fd;
	pfd->events = POLLIN;
	return 1;
}

static void uring_exit(struct pdd_engine *e)
{
	struct uring_priv *u = e->priv;

	if (!u)
		return;
	/* the ring is freed by a kernel worker after pdd has exited, and the
	 * registered descriptors with it: the output's exclusive claim
	 * (O_EXCL) would outlive pdd and refuse the next open.  Unregistering
	 * drops them now. */
	if (u->fixed_files)
		io_uring_unregister_files(&u->ring);
	io_uring_queue_exit(&u->ring);	/* also drops the registrations */
	free(u);
	e->priv = NULL;
}

const struct pdd_engine_ops pdd_uring_ops = {
	.name = "uring",
	.threaded = false,
	.probe = uring_probe,
	.default_depth = pdd_async_depth,
	.init = uring_init,
	.submit = uring_submit,
	.reap = uring_reap,
	.pollfd = uring_pollfd,
	.exit = uring_exit,
	.bufs_in = uring_bufs_in,
};
