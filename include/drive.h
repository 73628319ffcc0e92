/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The driver: the loop that the copy (copy.c) and the comparison
 * (verify.c) share.  It owns the two sides' engines, starts requests on
 * them, takes back what the engine of a side cannot take yet (busy) and
 * offers it again after that engine's next completion, waits on both
 * engines at once with a timeout, and hands every finished request back.
 * Its user decides what to start (turn) and what a finished request
 * means (done); a stop signal makes the user start nothing more, and the
 * loop drains what is in flight before it returns.
 */
#ifndef PDD_DRIVE_H
#define PDD_DRIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"

enum { PDD_IN, PDD_OUT };

/* what the user of the loop does, with its own state in ctx */
struct pdd_drive_ops {
	/* start what may start now (each turn of the loop, and at least
	 * every PDD_DRIVE_TICK_MS) */
	void (*turn)(void *ctx, double now);
	/* a request is back from its engine */
	void (*done)(void *ctx, struct pdd_req *rq);
	/* SIGINT or SIGTERM: start no more */
	void (*stop)(void *ctx, int sig);
	/* SIGUSR1: say how far it is */
	void (*report)(void *ctx);
	/* optional: a descriptor the user waits on besides the engines
	 * (a hash thread), or -1 when it waits on nothing else; the loop
	 * does not end while it gives one, and wakes when it is readable */
	int (*pending_fd)(void *ctx);
};

/* the longest the loop sleeps without a look at signals and the clock */
#define PDD_DRIVE_TICK_MS 100
/* a stop that has waited this long for a request to come back says so */
#define PDD_DRIVE_STALL_SECS 1.0

struct pdd_drive {
	struct pdd_engine eng[2];	/* input's and output's; ops NULL for
					 * a side that needs none */
	unsigned int held[2];		/* requests each engine holds */
	struct pdd_reqq wait[2];	/* answered busy: offered again, in order,
					 * after the engine's next completion */
	bool full[2];			/* the engine last answered busy */
	struct pdd_reqq failed;		/* refused by an engine: back to the
					 * user as failed on the next turn */
	bool dead[2];			/* the engine failed as a whole */
	int err;			/* the first such failure, -errno */
	const char *dead_name[2];	/* a dead engine's name */
	int err_side;			/* whose death err is (PDD_IN, PDD_OUT) */
	double last_done;		/* when a request last came back */
	bool cancelled;			/* a stop on silent devices gave up what
					 * they had not started (once only) */
	bool quit;			/* set by the user: it starts nothing more
					 * for a reason of its own (give_up=), and
					 * what silent devices hold is given up as
					 * on a stop */
	bool bufs_later;		/* set before pdd_drive_start(): the
					 * buffers come into memory as the
					 * copy starts, pdd_drive_bufs_in()
					 * says when those it will use are */
	const struct pdd_drive_ops *ops;
	void *ctx;
};

int pdd_drive_start(struct pdd_drive *d, const struct pdd_plan *p,
		    const struct pdd_dev *side[2], void *const *bufs,
		    unsigned int nbufs, unsigned int depth);
int pdd_drive_submit(struct pdd_drive *d, int k, struct pdd_req *rq);
void pdd_drive_bufs_in(struct pdd_drive *d, unsigned int n);
int pdd_drive_run(struct pdd_drive *d);
int pdd_drive_flush(struct pdd_drive *d, int k, struct pdd_dev *dev);
void pdd_drive_say_failed(const struct pdd_drive *d, const char *what, const char *why);
bool pdd_drive_end(struct pdd_drive *d);
void pdd_drive_keep(void *bufs);
void pdd_drive_describe(const struct pdd_drive *d, const char *what, unsigned int depth,
			size_t xfer);

#endif
