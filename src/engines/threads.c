// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The threads engine: N worker threads take requests from one queue and do
 * plain positional reads and writes (pread/pwrite), or read/write on a
 * stream, each with the offset the core gave it.  The queue lock is held
 * only to take or return a request, never across the I/O itself, and the
 * workers take requests in the order the core submitted them.  Each
 * side that takes this engine has a pool of its own.
 *
 * The driver waits for this engine alone on the condition variable, and
 * for it and the other side's engine together by polling an eventfd.
 * Only then does a worker ring it (once per poll), so that a copy
 * between two such sides makes no system call beyond the I/O itself.
 *
 * A worker that finds requests waiting which continue the one it takes
 * (the same descriptor and direction, at the next offset) takes them
 * along and moves them all in one preadv/pwritev, as the block layer
 * merges what an asynchronous engine submits in a batch: at 4 KiB a
 * system call and a trip through the device per transfer is what
 * limited this engine.  Each request still gets its own result: when the
 * merged call fails or comes up short, none of it counts; its first
 * request is done again by itself, and the rest go back to the head of
 * the queue, each to be moved alone, where any worker (or a stop) takes
 * them, so that an error names its own block.  Under coe=1 and rescue=1
 * reads are never merged: a failing block is read as often as they plan,
 * not once more inside a merged read.
 *
 * A loop device can report a merged write done that its backing file
 * took only in part: Linux (6.18 here) completes a loop write whose
 * backing write came up short as a success, so over a file system that
 * fills up the tail of such a write is lost without an error, whoever
 * wrote it (dd oflag=direct bs=192k shows it too; tests/dev/flush-error.sh
 * keeps the loop device's requests to one page, which the file system
 * takes whole or not at all).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"

#define MERGE_MAX 64			/* requests in one merged call */
#define MERGE_BYTES (1u << 20)		/* bytes in one merged call */

struct threads_priv {
	pthread_mutex_t lock;		/* guards both queues and stop */
	pthread_cond_t work;		/* todo has a request, or stop */
	pthread_cond_t done_cv;		/* done has a request */
	struct pdd_reqq todo;		/* submitted, not yet taken */
	struct pdd_reqq done;		/* finished, not yet reaped */
	bool stop;			/* workers should exit */
	int efd;			/* eventfd the driver polls */
	bool polled;			/* it is about to: ring efd at the next
					 * completion */
	bool rung;			/* efd has a count to take */
	bool reads_alone;		/* merge no reads (coe=1, rescue=1) */
	struct pdd_req *alone;		/* requests put back after a merged call
					 * failed, at the head of todo: moved by
					 * themselves up to and with this one */
	unsigned int nthreads;		/* workers started */
	pthread_t *tids;		/* their ids */
};

/* One system call; the core resubmits whatever part is left. */
static ssize_t do_io(const struct pdd_req *rq)
{
	ssize_t n;

	do {
		if (rq->op == PDD_OP_ZERO)
			n = fallocate(rq->fd, rq->zero_mode, (off_t)rq->off, (off_t)rq->len) ? -1
											      : (ssize_t)rq->len;
		else if (rq->op == PDD_OP_READ)
			n = rq->positional ? pread(rq->fd, rq->buf, rq->len, (off_t)rq->off)
					   : read(rq->fd, rq->buf, rq->len);
		else
			n = rq->positional ? pwrite(rq->fd, rq->buf, rq->len, (off_t)rq->off)
					   : write(rq->fd, rq->buf, rq->len);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* Wake the driver's poll; the lock is held. */
static void ring(struct threads_priv *t)
{
	uint64_t one = 1;

	t->polled = false;
	t->rung = true;
	/* an eventfd write of 1 cannot fail short of overflow */
	if (write(t->efd, &one, sizeof(one)) < 0)
		abort();
}

/* Take the first request waiting, and those after it that continue it
 * on its descriptor in the same direction, into run[]; the lock is held.
 * How many. */
static unsigned int take_run(struct threads_priv *t, struct pdd_req **run)
{
	struct pdd_req *rq = pdd_reqq_pop(&t->todo), *nx;
	size_t bytes = rq->len;
	unsigned int n = 1;

	run[0] = rq;
	if (t->alone) {		/* put back after a merged call failed */
		if (rq == t->alone)
			t->alone = NULL;
		return 1;
	}
	if (!rq->positional || rq->op == PDD_OP_ZERO || (rq->op == PDD_OP_READ && t->reads_alone))
		return 1;
	while (n < MERGE_MAX && (nx = t->todo.head) && nx->op == rq->op && nx->fd == rq->fd &&
	       nx->positional && nx->off == run[n - 1]->off + run[n - 1]->len &&
	       bytes + nx->len <= MERGE_BYTES) {
		run[n++] = pdd_reqq_pop(&t->todo);
		bytes += nx->len;
	}
	return n;
}

/* Do the n requests of run[], contiguous, in one call where n > 1: how
 * many of them are done, all or the first.  The caller puts the others
 * back. */
static unsigned int do_run(struct pdd_req **run, unsigned int n)
{
	struct iovec iov[MERGE_MAX];
	size_t total = 0;
	ssize_t got;

	if (n > 1) {
		for (unsigned int k = 0; k < n; k++) {
			iov[k] = (struct iovec){ run[k]->buf, run[k]->len };
			total += run[k]->len;
		}
		do {
			got = run[0]->op == PDD_OP_READ ?
			      preadv(run[0]->fd, iov, (int)n, (off_t)run[0]->off) :
			      pwritev(run[0]->fd, iov, (int)n, (off_t)run[0]->off);
		} while (got < 0 && errno == EINTR);
		/* all of it, or none of it counts: a direct call that fails
		 * part way may report the bytes of whichever of its pieces
		 * completed, not the first ones */
		if (got == (ssize_t)total) {
			for (unsigned int i = 0; i < n; i++)
				run[i]->res = (ssize_t)run[i]->len;
			return n;
		}
	}
	/* short or failed: the first, by itself, finds out what its own
	 * result is (a short read's end, its own error) */
	run[0]->res = do_io(run[0]);
	return 1;
}

static void *worker(void *arg)
{
	struct threads_priv *t = arg;
	struct pdd_req *run[MERGE_MAX];
	unsigned int n, done;

	pthread_mutex_lock(&t->lock);
	for (;;) {
		while (!t->stop && !t->todo.head)
			pthread_cond_wait(&t->work, &t->lock);
		if (t->stop)
			break;
		n = take_run(t, run);
		pthread_mutex_unlock(&t->lock);

		done = do_run(run, n);

		pthread_mutex_lock(&t->lock);
		for (unsigned int i = 0; i < done; i++)
			pdd_reqq_push(&t->done, run[i]);
		if (done < n) {
			/* back to the head of the queue, in order, each to be
			 * moved by itself; a stop may cancel them there */
			if (!t->alone)
				t->alone = run[n - 1];
			for (unsigned int i = n; i-- > done;)
				pdd_reqq_unpop(&t->todo, run[i]);
			pthread_cond_broadcast(&t->work);
		}
		pthread_cond_signal(&t->done_cv);
		if (t->polled)
			ring(t);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static void threads_exit(struct pdd_engine *e)
{
	struct threads_priv *t = e->priv;

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_broadcast(&t->work);
	pthread_mutex_unlock(&t->lock);
	for (unsigned int i = 0; i < t->nthreads; i++)
		pthread_join(t->tids[i], NULL);
	pthread_cond_destroy(&t->work);
	pthread_cond_destroy(&t->done_cv);
	pthread_mutex_destroy(&t->lock);
	if (t->efd >= 0)
		close(t->efd);
	free(t->tids);
	free(t);
	e->priv = NULL;
}

static int threads_init(struct pdd_engine *e)
{
	struct threads_priv *t = calloc(1, sizeof(*t));
	pthread_condattr_t ca;
	int err;

	if (!t)
		return -ENOMEM;
	t->tids = calloc(e->threads, sizeof(*t->tids));
	t->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!t->tids || t->efd < 0) {
		err = t->tids ? -errno : -ENOMEM;
		if (t->efd >= 0)
			close(t->efd);
		free(t->tids);
		free(t);
		return err;
	}
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->work, NULL);
	/* timed waits on the clock that does not jump */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->done_cv, &ca);
	pthread_condattr_destroy(&ca);
	t->reads_alone = e->reads_alone;
	e->priv = t;
	for (unsigned int i = 0; i < e->threads; i++) {
		err = pthread_create(&t->tids[i], NULL, worker, t);
		if (err) {
			threads_exit(e);
			return -err;
		}
		t->nthreads++;
	}
	return 0;
}

static int threads_submit(struct pdd_engine *e, struct pdd_req *rq)
{
	struct threads_priv *t = e->priv;

	pthread_mutex_lock(&t->lock);
	pdd_reqq_push(&t->todo, rq);
	pthread_cond_signal(&t->work);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

static int threads_reap(struct pdd_engine *e, struct pdd_req **done,
			unsigned int max, int timeout_ms)
{
	struct threads_priv *t = e->priv;
	unsigned int n = 0;
	bool rung;

	pthread_mutex_lock(&t->lock);
	t->polled = false;
	if (!t->done.head && timeout_ms > 0) {
		struct timespec until;

		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += timeout_ms / 1000;
		until.tv_nsec += timeout_ms % 1000 * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!t->done.head &&
		       pthread_cond_timedwait(&t->done_cv, &t->lock, &until) != ETIMEDOUT)
			;
	}
	while (n < max && t->done.head)
		done[n++] = pdd_reqq_pop(&t->done);
	rung = t->rung;
	t->rung = false;
	pthread_mutex_unlock(&t->lock);
	if (rung) {
		uint64_t cnt;

		/* take the count, or the next poll wakes at once */
		if (read(t->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
			return -errno;
	}
	return (int)n;
}

/* The eventfd, rung by the next completion, or now if one is waiting. */
static unsigned int threads_pollfd(struct pdd_engine *e, struct pollfd *pfd,
				   unsigned int max)
{
	struct threads_priv *t = e->priv;

	if (!max)
		return 0;
	pthread_mutex_lock(&t->lock);
	if (t->done.head)
		ring(t);
	else
		t->polled = true;
	pthread_mutex_unlock(&t->lock);
	pfd->fd = t->efd;
	pfd->events = POLLIN;
	return 1;
}

/* The requests no worker has taken yet come back cancelled. */
static unsigned int threads_cancel(struct pdd_engine *e)
{
	struct threads_priv *t = e->priv;
	struct pdd_req *rq;
	unsigned int n = 0;

	pthread_mutex_lock(&t->lock);
	t->alone = NULL;
	while ((rq = pdd_reqq_pop(&t->todo))) {
		rq->res = -ECANCELED;
		pdd_reqq_push(&t->done, rq);
		n++;
	}
	if (n && t->polled)
		ring(t);
	pthread_mutex_unlock(&t->lock);
	return n;
}

/* as many in flight as the asynchronous engines keep (64, or 16 MiB
 * where transfers are large), and two per worker at least: a window of
 * two per worker kept neither disk busy at 64 KiB when each takes its
 * time (faultfs rate= at 100 MB/s, 1.1-1.3x the slower disk's time,
 * 0.90-0.96x at 64), and small transfers find requests to merge */
static unsigned int threads_depth(size_t xfer, unsigned int threads)
{
	unsigned int window = xfer ? pdd_async_depth(xfer, threads) : 64;

	return 2 * threads > window ? 2 * threads : window;
}

const struct pdd_engine_ops pdd_threads_ops = {
	.name = "threads",
	.threaded = true,
	.sg = false,
	.probe = NULL,			/* plain system calls work on anything */
	.default_depth = threads_depth,
	.init = threads_init,
	.submit = threads_submit,
	.reap = threads_reap,
	.pollfd = threads_pollfd,
	.cancel = threads_cancel,
	.exit = threads_exit,
};
