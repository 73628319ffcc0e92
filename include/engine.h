/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The engine interface.  Each side of a copy has an engine of its own,
 * chosen from its kind (engine.c): the one engine= names for block
 * devices, files and raw devices, sg for an sg device.  The driver
 * (drive.c) hands an engine one request at a time with submit() and
 * collects finished ones with reap(); it never waits on a particular
 * request, and it waits on both sides' engines at once by polling the
 * descriptors pollfd() gives.  An engine keeps no requests of its own
 * beyond those it has started: when it has no room it answers
 * PDD_BUSY, and the driver offers the request again after the engine's
 * next completion.
 */
#ifndef PDD_ENGINE_H
#define PDD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include "pdd.h"

/* One read or write.  The core fills every field but res and next. */
struct pdd_req {
	enum pdd_op op;			/* PDD_OP_READ, PDD_OP_WRITE, or PDD_OP_ZERO:
					 * make [off, off+len) read as zeros, by
					 * fallocate(zero_mode) on a descriptor;
					 * -EOPNOTSUPP when the engine or the
					 * device cannot (the core then writes) */
	int zero_mode;			/* fallocate's mode for PDD_OP_ZERO */
	int fd;				/* descriptor to use */
	bool positional;		/* pread/pwrite at off; else read/write */
	void *buf;			/* data, aligned for the descriptor */
	size_t len;			/* bytes asked for */
	uint64_t off;			/* byte offset in the file */
	ssize_t res;			/* set by the engine: bytes moved or -errno;
					 * fewer than len is allowed (the core
					 * resubmits the rest), 0 on a read is end
					 * of file */
	uint64_t bad_off;		/* a read that failed on the medium: byte
					 * offset of the first bad block when the
					 * device says (SCSI sense INFO), else
					 * UINT64_MAX; the core sets UINT64_MAX */
	uint64_t idx;			/* transfer number, the core's */
	unsigned int buf_idx;		/* which of engine->bufs buf lies in, so an
					 * engine may use registered buffers */
	struct pdd_req *next;		/* link for the queue of whoever holds it:
					 * the engine, or the driver while the
					 * engine is busy */
};

/* A queue of requests in the order they came, linked through next: what
 * the driver keeps back, and what an engine has finished or not begun. */
struct pdd_reqq {
	struct pdd_req *head, *tail;
};

static inline void pdd_reqq_push(struct pdd_reqq *q, struct pdd_req *rq)
{
	rq->next = NULL;
	if (q->tail)
		q->tail->next = rq;
	else
		q->head = rq;
	q->tail = rq;
}

/* back at the head: it keeps its place */
static inline void pdd_reqq_unpop(struct pdd_reqq *q, struct pdd_req *rq)
{
	rq->next = q->head;
	q->head = rq;
	if (!q->tail)
		q->tail = rq;
}

static inline struct pdd_req *pdd_reqq_pop(struct pdd_reqq *q)
{
	struct pdd_req *rq = q->head;

	if (rq) {
		q->head = rq->next;
		if (!q->head)
			q->tail = NULL;
	}
	return rq;
}

struct pdd_engine;

/* submit()'s answers that are not -errno */
enum {
	PDD_QUEUED = 0,			/* started: the engine owns rq until
					 * reap() hands it back */
	PDD_BUSY = 1,			/* no room now: rq is not taken */
};

struct pdd_engine_ops {
	const char *name;		/* "uring", "aio", "threads", "sg" */
	bool threaded;			/* threads= sets its number of workers */
	bool sg;			/* drives sg devices, and nothing else */
	bool nbd;			/* drives NBD exports, and nothing else */
	/* 0: this engine drives the side d at full speed here; 1: it can,
	 * but no better than a plain system call (engine=auto passes it
	 * over); -errno: it cannot run here.  NULL means always 0. */
	int (*probe)(const struct pdd_dev *d);
	/* transfers in flight when qd= is not given */
	unsigned int (*default_depth)(size_t xfer, unsigned int threads);
	/* set up for e->threads workers and e->depth requests in flight; the
	 * side and every buffer are known by now, for engines that register
	 * files or buffers with the kernel */
	int (*init)(struct pdd_engine *e);
	/* start rq: PDD_QUEUED, PDD_BUSY, or -errno (rq is not taken) */
	int (*submit)(struct pdd_engine *e, struct pdd_req *rq);
	/* hand the device what submit() queued, then store up to max
	 * finished requests in done[]; when none has finished, wait up to
	 * timeout_ms for one (0: do not wait).  Returns how many, 0 when
	 * the time ran out or a signal came, or -errno. */
	int (*reap)(struct pdd_engine *e, struct pdd_req **done, unsigned int max,
		    int timeout_ms);
	/* the descriptors that poll() finds readable once one of the
	 * requests handed to the device has finished: fills up to max of
	 * pfd (fd and events), returns how many */
	unsigned int (*pollfd)(struct pdd_engine *e, struct pollfd *pfd, unsigned int max);
	/* a stop waits on a device that answers nothing: hand back, at the
	 * next reap(), every request not yet started on the device, with
	 * res -ECANCELED; returns how many.  NULL: an engine that starts
	 * each request as it takes it */
	unsigned int (*cancel)(struct pdd_engine *e);
	/* make what was written durable (nothing in flight); NULL: fsync
	 * or fdatasync of the side's descriptors (pdd_dev_flush) */
	int (*flush)(struct pdd_engine *e);
	/* stop and free; every started request has been reaped */
	void (*exit)(struct pdd_engine *e);
	/* with bufs_later, the first n buffers (those the copy plans to
	 * use) are in memory now: an engine that registers them with the
	 * kernel (which faults them in) does it here.  NULL: nothing to do */
	void (*bufs_in)(struct pdd_engine *e, unsigned int n);
};

/* pollfd() fills at most this many descriptors: an sg side opens one
 * for every 16 commands in flight */
#define PDD_ENGINE_MAX_FDS (PDD_MAX_QD / 16)

struct pdd_engine {
	const struct pdd_engine_ops *ops;	/* the engine's hooks */
	const struct pdd_dev *dev;	/* the side it drives */
	unsigned int threads;		/* worker threads to use */
	unsigned int depth;		/* most requests in flight at once */
	void *const *bufs;		/* the core's transfer buffers */
	unsigned int nbufs;		/* how many */
	size_t buf_len;			/* bytes in each */
	bool bufs_later;		/* they come into memory as the copy
					 * starts (pdd_fill_go()) */
	bool reads_alone;		/* merge no reads (pdd_plan.reads_alone) */
	uint64_t recovered;		/* errors the device recovered itself */
	void *priv;			/* the engine's own state */
};

extern const struct pdd_engine_ops pdd_threads_ops;
#ifdef HAVE_SGUTILS
extern const struct pdd_engine_ops pdd_sg_ops;
#endif
#ifdef HAVE_LIBURING
extern const struct pdd_engine_ops pdd_uring_ops;
#endif
#ifdef HAVE_LIBAIO
extern const struct pdd_engine_ops pdd_aio_ops;
#endif
#ifdef HAVE_LIBNBD
extern const struct pdd_engine_ops pdd_nbd_ops;
#endif

int pdd_engine_choose(const char *name, const struct pdd_dev *in,
		      const struct pdd_dev *out, const struct pdd_engine_ops *ops[2]);
int pdd_engine_start(struct pdd_engine *e, const struct pdd_engine_ops *ops,
		     const struct pdd_engine *want);
unsigned int pdd_async_depth(size_t xfer, unsigned int threads);
unsigned int pdd_depth_for(size_t window, size_t xfer);
bool pdd_engine_known(const char *name);
void pdd_engine_names(char *buf, size_t len);

#endif
