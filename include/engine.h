/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The engine interface.  The copy core (copy.c) decides what to read and
 * write and in which order; an engine only moves bytes.  The core hands an
 * engine one request at a time with submit() and collects finished ones
 * with reap(); it never waits on a particular request.  A synchronous
 * engine may complete a request inside submit() and hand it back from the
 * next reap().  Engines are listed in one table in engine.c.
 */
#ifndef PDD_ENGINE_H
#define PDD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pdd.h"

/* One read or write.  The core fills every field but res and next. */
struct pdd_req {
	enum pdd_op op;			/* PDD_OP_READ or PDD_OP_WRITE */
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
	struct pdd_req *next;		/* link for the engine's queues */
};

struct pdd_engine;

struct pdd_engine_ops {
	const char *name;		/* "uring", "aio", "threads" */
	bool threaded;			/* threads= sets its number of workers;
					 * otherwise one thread submits */
	bool sg;			/* drives sg devices; a copy with an sg
					 * side takes such an engine, and only
					 * such an engine needs one */
	/* 0: this engine drives these two sides at full speed here; 1: it
	 * can, but no better than a plain system call (engine=auto passes it
	 * over); -errno: it cannot run here.  NULL means always 0. */
	int (*probe)(const struct pdd_dev *in, const struct pdd_dev *out);
	/* transfers in flight when qd= is not given */
	unsigned int (*default_depth)(size_t xfer, unsigned int threads);
	/* set up for e->threads workers and e->depth requests in flight; the
	 * sides and every buffer are known by now, for engines that register
	 * files or buffers with the kernel */
	int (*init)(struct pdd_engine *e);
	/* start rq; 0 or -errno (then rq is not owned by the engine) */
	int (*submit)(struct pdd_engine *e, struct pdd_req *rq);
	/* wait until at least one request is done and store up to max of them
	 * in done[]; returns how many, or -errno */
	int (*reap)(struct pdd_engine *e, struct pdd_req **done, unsigned int max);
	/* stop and free; every submitted request has been reaped */
	void (*exit)(struct pdd_engine *e);
};

struct pdd_engine {
	const struct pdd_engine_ops *ops;	/* the engine's hooks */
	unsigned int threads;		/* worker threads to use */
	unsigned int depth;		/* most requests in flight at once */
	const struct pdd_dev *in;	/* the input side */
	const struct pdd_dev *out;	/* the output side */
	void *const *bufs;		/* the core's transfer buffers */
	unsigned int nbufs;		/* how many */
	size_t buf_len;			/* bytes in each */
	/* An engine run inside another (the sg engine hands the other side
	 * to threads) does not block in reap(), which returns 0 when
	 * nothing is done, and adds 1 to the eventfd notify_fd for each
	 * request it finishes, so the outer engine can poll for both. */
	bool notify;
	int notify_fd;
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

const struct pdd_engine_ops *pdd_engine_choose(const char *name,
					       const struct pdd_dev *in,
					       const struct pdd_dev *out, int *err);
int pdd_engine_start(struct pdd_engine *e, const struct pdd_engine_ops *ops,
		     const struct pdd_engine *want);
unsigned int pdd_async_depth(size_t xfer, unsigned int threads);
bool pdd_engine_known(const char *name);
void pdd_engine_names(char *buf, size_t len);

#endif
