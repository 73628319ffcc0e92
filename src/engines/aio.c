// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The libaio engine: Linux native AIO, one context per side, submitted
 * to from the copy loop's thread.  submit() prepares an iocb, and reap()
 * hands the kernel all those prepared since the last one in one
 * io_submit (a system call per request cost half the speed at 4 KiB),
 * then takes completions (io_getevents) when there are any to take.  A buffer has one iocb and the context room for every
 * buffer, so the kernel refuses a batch (EAGAIN) only when short of
 * memory: what it did not take is offered again on the next reap while
 * anything is in flight.  Every iocb rings an eventfd when it completes:
 * that is what the driver polls when both sides are busy, and its count
 * says whether io_getevents has anything to give without asking.  (The
 * context's ring could be read without a system call, as fio does, but
 * memory checkers do not know that mapping, and the count costs one
 * read of the eventfd.)
 *
 * Native AIO is only asynchronous with O_DIRECT: on a buffered file the
 * kernel completes the request inside io_submit, so engine=auto passes
 * aio over for a side that is not direct and verbose= says so when aio
 * is asked for by name; a stream, which has no offset for it, is given
 * the threads engine (engine.c).
 */
#define _GNU_SOURCE		/* fallocate */
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "engine.h"

struct aio_priv {
	io_context_t ctx;		/* the kernel's AIO context */
	struct iocb *iocbs;		/* one per buffer: a buffer has at most
					 * one request in flight */
	struct iocb **queued;		/* prepared, for the next io_submit */
	unsigned int nqueued;		/* how many */
	struct io_event *events;	/* for io_getevents */
	unsigned int inflight;		/* submitted to the kernel, not reaped */
	int efd;			/* rung by each completion */
	int64_t rung;			/* completions efd has counted, less
					 * those reaped: above 0, io_getevents
					 * has that many to give */
	struct pdd_reqq now;		/* done in submit (PDD_OP_ZERO: AIO has
					 * no fallocate); the driver reaps before
					 * it polls, so nothing need ring */
};

/* Add what efd has counted since it was last read. */
static int count_rings(struct aio_priv *a)
{
	uint64_t cnt;

	if (read(a->efd, &cnt, sizeof(cnt)) == sizeof(cnt))
		a->rung += (int64_t)cnt;
	else if (errno != EAGAIN)
		return -errno;
	return 0;
}

static bool is_async(const struct pdd_dev *d)
{
	return d->direct && !d->stream;
}

static int aio_probe(const struct pdd_dev *d)
{
	io_context_t ctx = 0;
	/* a size of 0 is refused with EINVAL where AIO exists, and with
	 * ENOSYS or EPERM where it does not or is blocked; a real context
	 * would cost a slow io_destroy */
	int err = io_setup(0, &ctx);

	if (err != -EINVAL)
		return err ? err : -EINVAL;
	if (!is_async(d)) {
		pdd_info(1, "aio: '%s' is not read or written with direct I/O at an offset: "
			 "the kernel does its requests synchronously", d->name);
		return 1;
	}
	return 0;
}

static void aio_exit(struct pdd_engine *e)
{
	struct aio_priv *a = e->priv;

	if (!a)
		return;
	/* No io_destroy: it waits for an RCU grace period, 30-35 ms here for
	 * each context (a third of the time of a 64 MiB copy at 4 KiB, and
	 * there is one per side); the process's exit tears the context down
	 * without waiting, and pdd starts at most four (copy and verify). */
	if (a->efd >= 0)
		close(a->efd);
	free(a->iocbs);
	free(a->queued);
	free(a->events);
	free(a);
	e->priv = NULL;
}

static int aio_init(struct pdd_engine *e)
{
	struct aio_priv *a = calloc(1, sizeof(*a));
	int err;

	if (!a)
		return -ENOMEM;
	e->priv = a;
	a->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	a->iocbs = calloc(e->nbufs, sizeof(*a->iocbs));
	a->queued = calloc(e->nbufs, sizeof(*a->queued));
	a->events = calloc(e->nbufs, sizeof(*a->events));
	if (a->efd < 0 || !a->iocbs || !a->queued || !a->events) {
		err = a->efd < 0 ? -errno : -ENOMEM;
		aio_exit(e);
		return err;
	}
	err = io_setup((int)e->nbufs, &a->ctx);
	if (err) {
		a->ctx = 0;
		aio_exit(e);
		return err;
	}
	return 0;
}

static int aio_submit(struct pdd_engine *e, struct pdd_req *rq)
{
	struct aio_priv *a = e->priv;
	struct iocb *cb = &a->iocbs[rq->buf_idx];

	if (!rq->positional)
		return -EINVAL;	/* a stream has the threads engine */
	if (a->nqueued + a->inflight >= e->nbufs)
		return PDD_BUSY;	/* not with one iocb per buffer */
	if (rq->op == PDD_OP_ZERO) {
		/* at once: zeroing a range is quick beside writing it */
		rq->res = fallocate(rq->fd, rq->zero_mode, (off_t)rq->off, (off_t)rq->len) ?
			  -errno : (ssize_t)rq->len;
		pdd_reqq_push(&a->now, rq);
		return PDD_QUEUED;
	}
	if (rq->op == PDD_OP_READ)
		io_prep_pread(cb, rq->fd, rq->buf, rq->len, (long long)rq->off);
	else
		io_prep_pwrite(cb, rq->fd, rq->buf, rq->len, (long long)rq->off);
	io_set_eventfd(cb, a->efd);
	cb->data = rq;
	a->queued[a->nqueued++] = cb;
	return PDD_QUEUED;
}

/* Hand the kernel what submit() prepared, in order. */
static int hand_over(struct aio_priv *a)
{
	int n;

	if (!a->nqueued)
		return 0;
	n = io_submit(a->ctx, (long)a->nqueued, a->queued);
	if (n == -EAGAIN && a->inflight)
		return 0;	/* again after a completion */
	if (n < 0)
		return n;
	a->inflight += (unsigned int)n;
	a->nqueued -= (unsigned int)n;
	for (unsigned int i = 0; i < a->nqueued; i++)
		a->queued[i] = a->queued[i + n];
	return 0;
}

static int aio_reap(struct pdd_engine *e, struct pdd_req **done, unsigned int max,
		    int timeout_ms)
{
	struct aio_priv *a = e->priv;
	struct timespec ts = { timeout_ms / 1000, timeout_ms % 1000 * 1000000L };
	int err, got = 0;

	while (max && a->now.head) {
		done[got++] = pdd_reqq_pop(&a->now);
		max--;
	}
	if (got)
		return got;
	err = hand_over(a);
	if (err)
		return err;
	if (!a->inflight)
		return 0;
	if (max > e->nbufs)
		max = e->nbufs;		/* events[] holds nbufs */
	err = count_rings(a);
	if (err)
		return err;
	/* nothing counted and no time to wait: nothing to ask for (the
	 * kernel counts a completion only once its event is there) */
	if (a->rung <= 0 && timeout_ms <= 0)
		return 0;
	got = io_getevents(a->ctx, a->rung > 0 ? 0 : 1, (long)max, a->events, &ts);
	if (got == -EINTR)
		got = 0;
	if (got < 0)
		return got;
	for (int i = 0; i < got; i++) {
		struct pdd_req *rq = a->events[i].data;

		/* res holds bytes or a negative errno, split in two halves */
		rq->res = (ssize_t)(long)a->events[i].res;
		done[i] = rq;
	}
	a->inflight -= (unsigned int)got;
	a->rung -= got;
	return got;
}

/* The eventfd; rung now if it was read for completions not taken yet
 * (more than one reap could hold), so that poll() does not sleep on
 * them. */
static unsigned int aio_pollfd(struct pdd_engine *e, struct pollfd *pfd, unsigned int max)
{
	struct aio_priv *a = e->priv;
	uint64_t one = 1;

	if (!max)
		return 0;
	if (a->rung > 0) {
		if (write(a->efd, &one, sizeof(one)) < 0)
			abort();	/* an eventfd write of 1 fails only on overflow */
		a->rung--;	/* counted again at the next read */
	}
	pfd->fd = a->efd;
	pfd->events = POLLIN;
	return 1;
}

const struct pdd_engine_ops pdd_aio_ops = {
	.name = "aio",
	.threaded = false,
	.probe = aio_probe,
	.default_depth = pdd_async_depth,
	.init = aio_init,
	.submit = aio_submit,
	.reap = aio_reap,
	.pollfd = aio_pollfd,
	.exit = aio_exit,
};
