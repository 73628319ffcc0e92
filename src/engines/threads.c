// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The threads engine: N worker threads take requests from one queue and do
 * plain positional reads and writes (pread/pwrite), or read/write on a
 * stream, each with the offset the core gave it.  The queue lock is held
 * only to take or return a request, never across the I/O itself, and the
 * workers take requests in the order the core submitted them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine.h"

struct tq {
	struct pdd_req *head;		/* oldest first */
	struct pdd_req *tail;		/* where new ones go */
};

struct threads_priv {
	pthread_mutex_t lock;		/* guards both queues and stop */
	pthread_cond_t work;		/* todo has a request, or stop */
	pthread_cond_t done_cv;		/* done has a request */
	struct tq todo;			/* submitted, not yet taken */
	struct tq done;			/* finished, not yet reaped */
	bool stop;			/* workers should exit */
	int notify_fd;			/* eventfd to ring per completion, or -1 */
	unsigned int nthreads;		/* workers started */
	pthread_t *tids;		/* their ids */
};

static void tq_push(struct tq *q, struct pdd_req *rq)
{
	rq->next = NULL;
	if (q->tail)
		q->tail->next = rq;
	else
		q->head = rq;
	q->tail = rq;
}

static struct pdd_req *tq_pop(struct tq *q)
{
	struct pdd_req *rq = q->head;

	if (rq) {
		q->head = rq->next;
		if (!q->head)
			q->tail = NULL;
	}
	return rq;
}

/* One system call; the core resubmits whatever part is left. */
static ssize_t do_io(const struct pdd_req *rq)
{
	ssize_t n;

	do {
		if (rq->op == PDD_OP_READ)
			n = rq->positional ? pread(rq->fd, rq->buf, rq->len, (off_t)rq->off)
					   : read(rq->fd, rq->buf, rq->len);
		else
			n = rq->positional ? pwrite(rq->fd, rq->buf, rq->len, (off_t)rq->off)
					   : write(rq->fd, rq->buf, rq->len);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static void *worker(void *arg)
{
	struct threads_priv *t = arg;
	struct pdd_req *rq;

	pthread_mutex_lock(&t->lock);
	for (;;) {
		while (!t->stop && !t->todo.head)
			pthread_cond_wait(&t->work, &t->lock);
		if (t->stop)
			break;
		rq = tq_pop(&t->todo);
		pthread_mutex_unlock(&t->lock);

		rq->res = do_io(rq);

		pthread_mutex_lock(&t->lock);
		tq_push(&t->done, rq);
		pthread_cond_signal(&t->done_cv);
		if (t->notify_fd >= 0) {
			uint64_t one = 1;

			/* an eventfd write of 1 cannot fail short of overflow */
			if (write(t->notify_fd, &one, sizeof(one)) < 0)
				abort();
		}
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
	free(t->tids);
	free(t);
	e->priv = NULL;
}

static int threads_init(struct pdd_engine *e)
{
	struct threads_priv *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	t->tids = calloc(e->threads, sizeof(*t->tids));
	if (!t->tids) {
		free(t);
		return -ENOMEM;
	}
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->work, NULL);
	pthread_cond_init(&t->done_cv, NULL);
	t->notify_fd = e->notify ? e->notify_fd : -1;
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
	tq_push(&t->todo, rq);
	pthread_cond_signal(&t->work);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

static int threads_reap(struct pdd_engine *e, struct pdd_req **done,
			unsigned int max)
{
	struct threads_priv *t = e->priv;
	unsigned int n = 0;

	pthread_mutex_lock(&t->lock);
	while (!t->done.head && t->notify_fd < 0)
		pthread_cond_wait(&t->done_cv, &t->lock);
	while (n < max && t->done.head)
		done[n++] = tq_pop(&t->done);
	pthread_mutex_unlock(&t->lock);
	return (int)n;
}

/* two transfers per worker: while one is written, the next is read */
static unsigned int threads_depth(size_t xfer, unsigned int threads)
{
	(void)xfer;
	return 2 * threads;
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
	.exit = threads_exit,
};
