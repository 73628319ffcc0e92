// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The nbd engine: an NBD side's reads and writes through libnbd's
 * asynchronous calls.  submit() queues a command on the handle
 * (nbd_aio_pread/pwrite, with a completion callback that puts the
 * request on the engine's done list); the handle's socket is what the
 * driver polls, for reading or writing as libnbd's state machine wants
 * (nbd_aio_get_direction), and reap() polls the connections and lets
 * libnbd move until something has come back or the time is up.  The server may take any
 * number of commands; depth= bounds them as for the other engines.
 * With conns=N the side has N connections (include/nbd-side.h); a
 * request goes to the one with the fewest in flight.
 */
#include <errno.h>
#include <inttypes.h>
#include <libnbd.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "drive.h"
#include "engine.h"
#include "nbd-side.h"

struct nbd_priv;

/* what a completion callback needs: one per buffer, as a buffer has one
 * request in flight at most */
struct nbd_cb {
	struct nbd_priv *n;
	struct pdd_req *rq;
	double sent;			/* when submitted, for timeout= */
	size_t len;			/* bytes asked of the server */
	unsigned int conn;		/* which connection carries it */
	bool busy;			/* in flight */
};

struct nbd_priv {
	struct pdd_nbd *c;		/* the side's connections */
	bool said;			/* a refused submit was said */
	unsigned int on[PDD_NBD_MAX_CONNS];	/* in flight on each */
	uint32_t wflags;		/* LIBNBD_CMD_FLAG_FUA when asked */
	struct nbd_cb *cbs;		/* per buffer */
	unsigned int inflight;		/* commands queued, not back */
	struct pdd_reqq done;		/* back, not reaped */
};

static int nbd_probe(const struct pdd_dev *d)
{
	return d->kind == PDD_KIND_NBD ? 0 : -EOPNOTSUPP;
}

/* libnbd's error on side e, said: -errno */
static int nbd_failed(struct pdd_engine *e)
{
	struct nbd_priv *n = e->priv;
	int err = pdd_nbd_errno();

	n->c->failed = true;	/* no goodbye at close (nbd-side.c) */
	pdd_error("'%s': %s", e->dev->name, pdd_nbd_error());
	return err;
}

static int nbd_init(struct pdd_engine *e)
{
	struct nbd_priv *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	n->cbs = calloc(e->nbufs, sizeof(*n->cbs));
	if (!n->cbs) {
		free(n);
		return -ENOMEM;
	}
	n->c = e->dev->nbd;
	/* oflag=fua or dsync: each write durable when it is back, if the
	 * server can; the flush at the end covers the rest */
	if ((e->dev->flags & (PDD_F_FUA | PDD_F_DSYNC)) && nbd_can_fua(n->c->h[0]) == 1)
		n->wflags = LIBNBD_CMD_FLAG_FUA;
	e->priv = n;
	return 0;
}

static void nbd_exit(struct pdd_engine *e)
{
	struct nbd_priv *n = e->priv;

	if (n && n->inflight) {
		/* libnbd calls the callbacks of what is still in flight when
		 * the side's handle is closed, after this: they find no engine
		 * and leave the requests alone, and their contexts are kept */
		for (unsigned int i = 0; i < e->nbufs; i++)
			n->cbs[i].n = NULL;
		pdd_drive_keep(n->cbs);
		n->cbs = NULL;
	}
	if (n)
		free(n->cbs);
	free(e->priv);
	e->priv = NULL;
}

static void finish(struct nbd_priv *n, struct pdd_req *rq, ssize_t res)
{
	rq->res = res;
	pdd_reqq_push(&n->done, rq);
}

/* libnbd's completion callback: the command is back (error: an errno) */
static int back(void *data, int *error)
{
	struct nbd_cb *c = data;
	struct nbd_priv *n = c->n;

	c->busy = false;
	if (!n)
		return 1;	/* the engine has ended (nbd_exit) */
	finish(n, c->rq, *error ? -*error : (ssize_t)c->len);
	n->inflight--;
	n->on[c->conn]--;
	return 1;	/* retire the command */
}

static int nbd_submit(struct pdd_engine *e, struct pdd_req *rq)
{
	struct nbd_priv *n = e->priv;
	struct nbd_cb *c = &n->cbs[rq->buf_idx];
	nbd_completion_callback cb = { .callback = back, .user_data = c };
	struct nbd_handle *h;
	int64_t cookie;
	unsigned int k = 0;
	uint64_t size = e->dev->size;
	size_t len = rq->len;

	/* a server without WRITE_ZEROES: the core writes the zeros */
	if (rq->op == PDD_OP_ZERO && nbd_can_zero(n->c->h[0]) != 1) {
		finish(n, rq, -EOPNOTSUPP);
		return PDD_QUEUED;
	}
	/* the server refuses a request past the export's end: there a read
	 * is short and a write fails, as on a block device */
	if (rq->off >= size) {
		finish(n, rq, rq->op == PDD_OP_READ ? 0 : -ENOSPC);
		return PDD_QUEUED;
	}
	if (len > size - rq->off)
		len = size - rq->off;
	if (n->inflight >= e->depth)
		return PDD_BUSY;
	for (unsigned int i = 1; i < n->c->n; i++)
		if (n->on[i] < n->on[k])
			k = i;
	h = n->c->h[k];
	c->n = n;
	c->rq = rq;
	c->sent = pdd_now();
	c->conn = k;
	c->len = len;
	c->busy = true;
	if (rq->op == PDD_OP_ZERO)	/* WRITE_ZEROES: reads back as zeros, unlike a trim */
		cookie = nbd_aio_zero(h, len, rq->off, cb, n->wflags);
	else if (rq->op == PDD_OP_READ)
		cookie = nbd_aio_pread(h, rq->buf, len, rq->off, cb, 0);
	else
		cookie = nbd_aio_pwrite(h, rq->buf, len, rq->off, cb, n->wflags);
	if (cookie == -1) {
		/* refused before it was sent: the copy reports the request,
		 * libnbd's reason is said once */
		c->busy = false;
		if (n->said)
			return pdd_nbd_errno();
		n->said = true;
		return nbd_failed(e);
	}
	n->inflight++;
	n->on[k]++;
	return PDD_QUEUED;
}

/* timeout=: a request older than that ends the side (0: no limit) */
static int too_old(struct pdd_engine *e)
{
	struct nbd_priv *n = e->priv;
	double now = pdd_now(), limit = e->dev->timeout_ms / 1000.0;

	if (!e->dev->timeout_ms)
		return 0;
	for (unsigned int i = 0; i < e->nbufs; i++)
		if (n->cbs[i].busy && now - n->cbs[i].sent > limit) {
			pdd_error("'%s': no answer to a %s at byte %" PRIu64 " for %.0f s (timeout=%u)",
				  e->dev->name, n->cbs[i].rq->op == PDD_OP_READ ? "read" : "write",
				  n->cbs[i].rq->off, now - n->cbs[i].sent, e->dev->timeout_ms / 1000);
			n->c->failed = true;
			return -ETIMEDOUT;
		}
	return 0;
}

/* The connections' sockets, each for what its state machine waits on. */
static unsigned int nbd_pollfd(struct pdd_engine *e, struct pollfd *pfd, unsigned int max)
{
	struct nbd_priv *n = e->priv;
	unsigned int i;

	for (i = 0; i < n->c->n && i < max; i++)
		pdd_nbd_want(n->c->h[i], &pfd[i]);
	return i;
}

/* Let each connection's state machine move as its socket allows, waiting
 * up to timeout_ms for one: 0, or -errno said. */
static int step(struct pdd_engine *e, int timeout_ms)
{
	struct nbd_priv *n = e->priv;
	struct pollfd pfd[PDD_NBD_MAX_CONNS];
	unsigned int k = nbd_pollfd(e, pfd, PDD_NBD_MAX_CONNS);
	int r;

	r = poll(pfd, k, timeout_ms);
	if (r < 0 && errno != EINTR) {
		r = -errno;
		n->c->failed = true;
		pdd_error("'%s': poll: %s", e->dev->name, strerror(-r));
		return r;
	}
	if (r <= 0)
		return 0;
	for (unsigned int i = 0; i < k; i++)
		if (pdd_nbd_notify(n->c->h[i], pfd[i].revents) == -1)
			return nbd_failed(e);
	return 0;
}

static int nbd_reap(struct pdd_engine *e, struct pdd_req **done, unsigned int max,
		    int timeout_ms)
{
	struct nbd_priv *n = e->priv;
	unsigned int got = 0;
	int err = too_old(e);

	if (err)
		return err;
	/* send what is queued and take what has come, without waiting;
	 * then wait for the server if nothing came and there is time */
	if (n->inflight)
		err = step(e, 0);
	if (!err && !n->done.head && n->inflight && timeout_ms > 0)
		err = step(e, timeout_ms);
	if (err)
		return err;
	while (got < max && n->done.head)
		done[got++] = pdd_reqq_pop(&n->done);
	return (int)got;
}

/*
 * NBD FLUSH on every connection, as fsync on a disk (multi-conn makes one
 * cover all; each costs a round trip); a server that has none writes
 * through.  timeout= bounds it as it does a request, and a connection
 * that has closed is said once rather than by libnbd's state name.
 */
static int nbd_flush_side(struct pdd_engine *e)
{
	struct nbd_priv *n = e->priv;
	int64_t cookie[PDD_NBD_MAX_CONNS];
	double t0 = pdd_now(), limit = e->dev->timeout_ms / 1000.0;
	unsigned int left = n->c->n;
	int err = 0;

	/* a connection lost or given up on would fail the flush again, or
	 * keep pdd another timeout= */
	if (n->c->failed) {
		pdd_error("'%s' is not flushed: the server failed or stopped answering",
			  e->dev->name);
		return -EIO;
	}
	if (nbd_can_flush(n->c->h[0]) != 1)
		return 0;
	for (unsigned int i = 0; i < n->c->n; i++) {
		if (!nbd_aio_is_ready(n->c->h[i]) && !nbd_aio_is_processing(n->c->h[i])) {
			pdd_error("'%s': the connection has closed: cannot flush", e->dev->name);
			return -ENOTCONN;
		}
		cookie[i] = nbd_aio_flush(n->c->h[i], NBD_NULL_COMPLETION, 0);
		if (cookie[i] == -1)
			return nbd_failed(e);
	}
	while (left && !err) {
		if (e->dev->timeout_ms && pdd_now() - t0 > limit) {
			pdd_error("'%s': no answer to a flush for %.0f s (timeout=%u)", e->dev->name,
				  pdd_now() - t0, e->dev->timeout_ms / 1000);
			n->c->failed = true;
			return -ETIMEDOUT;
		}
		err = step(e, 100);
		for (unsigned int i = 0; !err && i < n->c->n; i++) {
			int r = cookie[i] < 0 ? 0 : nbd_aio_command_completed(n->c->h[i], cookie[i]);

			if (r == -1)	/* the server's answer: the copy says it */
				err = pdd_nbd_errno();
			if (r) {
				cookie[i] = -1;
				left--;
			}
		}
	}
	return err;
}

/* 8 MiB in flight, 4 to 64 requests: enough for a 10 Gb/s link with a
 * 5 ms round trip, and it keeps the data in the cache between the read
 * and the write; 16 MiB and 4 connections copied 10-15% slower between
 * two nbdkit servers on this 2-core machine (scripts/bench-nbd.sh) */
static unsigned int nbd_depth(size_t xfer, unsigned int threads)
{
	(void)threads;
	return pdd_depth_for(8u << 20, xfer);
}

const struct pdd_engine_ops pdd_nbd_ops = {
	.name = "nbd",
	.threaded = false,
	.nbd = true,
	.probe = nbd_probe,
	.default_depth = nbd_depth,
	.init = nbd_init,
	.submit = nbd_submit,
	.reap = nbd_reap,
	.pollfd = nbd_pollfd,
	.flush = nbd_flush_side,
	.exit = nbd_exit,
};
