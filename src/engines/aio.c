// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The libaio engine: Linux native AIO, one context, one submitting
 * thread.  submit() queues an iocb; reap() hands the kernel what is
 * queued (io_submit) and waits for completions (io_getevents).  Native
 * AIO is only asynchronous with O_DIRECT: on a buffered file the kernel
 * completes the request inside io_submit, and it cannot read or write a
 * stream at its position at all.  So stream requests are done here with
 * plain read/write, engine=auto passes aio over where a side is not
 * direct, and verbose= says so when aio is asked for by name.
 */
#include <errno.h>
#include <libaio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine.h"

struct aio_priv {
	io_context_t ctx;		/* the kernel's AIO context */
	struct iocb *iocbs;		/* one per buffer: a buffer has at most
					 * one request in flight */
	struct iocb **queued;		/* iocbs waiting for io_submit */
	unsigned int nqueued;		/* how many */
	struct pdd_req *sync_done;	/* stream requests done in submit() */
	struct io_event *events;	/* for io_getevents */
	unsigned int inflight;		/* submitted to the kernel, not reaped */
};

static bool is_async(const struct pdd_dev *d)
{
	return d->kind == PDD_KIND_NULL || (d->direct && !d->stream);
}

static int aio_probe(const struct pdd_dev *in, const struct pdd_dev *out)
{
	io_context_t ctx = 0;
	/* a size of 0 is refused with EINVAL where AIO exists, and with
	 * ENOSYS or EPERM where it does not or is blocked; a real context
	 * would cost a slow io_destroy */
	int err = io_setup(0, &ctx);

	if (err != -EINVAL)
		return err ? err : -EINVAL;
	if (!is_async(in) || !is_async(out)) {
		pdd_info(1, "aio: '%s' is not read or written with direct I/O at an offset: "
			 "the kernel does its requests synchronously",
			 !is_async(in) ? in->name : out->name);
		return 1;
	}
	return 0;
}

static void aio_exit(struct pdd_engine *e)
{
	struct aio_priv *a = e->priv;

	if (!a)
		return;
	if (a->ctx)
		io_destroy(a->ctx);
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
	a->iocbs = calloc(e->nbufs, sizeof(*a->iocbs));
	a->queued = calloc(e->nbufs, sizeof(*a->queued));
	a->events = calloc(e->nbufs, sizeof(*a->events));
	if (!a->iocbs || !a->queued || !a->events) {
		aio_exit(e);
		return -ENOMEM;
	}
	err = io_setup((int)e->nbufs, &a->ctx);
	if (err) {
		a->ctx = 0;
		aio_exit(e);
		return err;
	}
	return 0;
}

/* A stream has no offset for AIO: do it now, hand it back from reap(). */
static void do_sync(struct aio_priv *a, struct pdd_req *rq)
{
	ssize_t n;

	do
		n = rq->op == PDD_OP_READ ? read(rq->fd, rq->buf, rq->len)
					  : write(rq->fd, rq->buf, rq->len);
	while (n < 0 && errno == EINTR);
	rq->res = n < 0 ? -errno : n;
	rq->next = a->sync_done;
	a->sync_done = rq;
}

static int aio_submit(struct pdd_engine *e, struct pdd_req *rq)
{
	struct aio_priv *a = e->priv;
	struct iocb *cb = &a->iocbs[rq->buf_idx];

	if (!rq->positional) {
		do_sync(a, rq);
		return 0;
	}
	if (rq->op == PDD_OP_READ)
		io_prep_pread(cb, rq->fd, rq->buf, rq->len, (long long)rq->off);
	else
		io_prep_pwrite(cb, rq->fd, rq->buf, rq->len, (long long)rq->off);
	cb->data = rq;
	a->queued[a->nqueued++] = cb;
	return 0;
}

/* io_submit may take fewer than asked (EAGAIN when the context is full):
 * keep the rest queued for the next round. */
static int flush_queue(struct aio_priv *a)
{
	int n;

	if (!a->nqueued)
		return 0;
	n = io_submit(a->ctx, (long)a->nqueued, a->queued);
	if (n == -EAGAIN && a->inflight)
		return 0;
	if (n < 0)
		return n;
	a->inflight += (unsigned int)n;
	a->nqueued -= (unsigned int)n;
	for (unsigned int i = 0; i < a->nqueued; i++)
		a->queued[i] = a->queued[i + n];
	return 0;
}

static int aio_reap(struct pdd_engine *e, struct pdd_req **done, unsigned int max)
{
	struct aio_priv *a = e->priv;
	unsigned int n = 0;
	int err, got;

	while (n < max && a->sync_done) {
		done[n] = a->sync_done;
		a->sync_done = done[n++]->next;
	}
	err = flush_queue(a);
	if (err)
		return err;
	if (n == max || !a->inflight)
		return (int)n;
	if (max - n > e->nbufs)
		max = n + e->nbufs;	/* events[] holds nbufs */
	do
		got = io_getevents(a->ctx, n ? 0 : 1, (long)(max - n), a->events, NULL);
	while (got == -EINTR);
	if (got < 0)
		return got;
	for (int i = 0; i < got; i++) {
		struct pdd_req *rq = a->events[i].data;

		/* res holds bytes or a negative errno, split in two halves */
		rq->res = (ssize_t)(long)a->events[i].res;
		done[n++] = rq;
	}
	a->inflight -= (unsigned int)got;
	return (int)n;
}

const struct pdd_engine_ops pdd_aio_ops = {
	.name = "aio",
	.threaded = false,
	.probe = aio_probe,
	.default_depth = pdd_async_depth,
	.init = aio_init,
	.submit = aio_submit,
	.reap = aio_reap,
	.exit = aio_exit,
};
