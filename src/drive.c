// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The driver: one loop for the copy and for verify=, over an engine per
 * side.  Each turn it acts on signals, lets its user start what may
 * start, and waits for something to finish.  When only one side has
 * requests in flight it waits in that engine's reap() (one system call
 * with io_uring); when both have, it polls both engines' descriptors.
 * Either way it wakes at least every PDD_DRIVE_TICK_MS, so that a
 * progress line is printed on time and a signal is acted on even when
 * no device answers.
 *
 * Back-pressure lives here and nowhere else: a request an engine
 * answers busy waits in the driver, in the order it came, and is offered
 * again after that engine's next completion.  A request an engine
 * refuses comes back to the user as a failed request, as if the device
 * had failed it, so that every request handed to pdd_drive_submit()
 * comes back through done() exactly once.
 *
 * An engine that fails as a whole (its reap() errs) is dead: nothing more
 * is started anywhere, and the loop waits for what the other side's
 * engine holds before it returns the error, since the kernel may still
 * be filling or reading those buffers.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drive.h"
#include "pdd.h"

static const char *const side_name[2] = { "input", "output" };

int pdd_drive_start(struct pdd_drive *d, const struct pdd_plan *p,
		    const struct pdd_dev *side[2], void *const *bufs,
		    unsigned int nbufs, unsigned int depth)
{
	sigset_t old;
	int err = 0;
	/* threads= is the workers of the copy: two threaded sides share
	 * them (the first gets the odd one), each having one at least */
	bool both = p->ops[PDD_IN] && p->ops[PDD_OUT] && p->ops[PDD_IN]->threaded &&
		    p->ops[PDD_OUT]->threaded;
	unsigned int threads[2] = { both ? (p->threads + 1) / 2 : p->threads,
				    both && p->threads > 1 ? p->threads / 2 : p->threads };

	for (int k = PDD_IN; k <= PDD_OUT && !err; k++) {
		if (!p->ops[k])
			continue;	/* an output that discards needs none */
		/* the engines' threads leave the copy's signals to this one */
		pdd_signals_block(true, &old);
		err = pdd_engine_start(&d->eng[k], p->ops[k], &(struct pdd_engine){
			.dev = side[k], .threads = threads[k], .depth = depth,
			.bufs = bufs, .nbufs = nbufs, .buf_len = p->buf_len,
			.bufs_later = d->bufs_later, .reads_alone = p->reads_alone });
		pdd_signals_block(false, &old);
		if (err) {
			d->eng[k].ops = NULL;
			pdd_error("cannot start engine %s for the %s '%s': %s", p->ops[k]->name,
				  side_name[k], side[k]->name, strerror(-err));
		}
	}
	d->last_done = pdd_now();
	return err;
}

/* The first n buffers are in memory now (pdd_drive.bufs_later). */
void pdd_drive_bufs_in(struct pdd_drive *d, unsigned int n)
{
	for (int k = PDD_IN; k <= PDD_OUT; k++)
		if (d->eng[k].ops && d->eng[k].ops->bufs_in)
			d->eng[k].ops->bufs_in(&d->eng[k], n);
}

/* The verbose line saying who moves the bytes, and how many worker
 * threads in all. */
void pdd_drive_describe(const struct pdd_drive *d, const char *what, unsigned int depth,
			size_t xfer)
{
	const struct pdd_engine *in = &d->eng[PDD_IN], *out = &d->eng[PDD_OUT];
	const struct pdd_engine *thr = in->ops && in->ops->threaded ? in :
				       out->ops && out->ops->threaded ? out : NULL;
	char names[64], threads[32] = "";

	if (!in->ops || !out->ops || in->ops == out->ops)
		snprintf(names, sizeof(names), "%s", in->ops ? in->ops->name :
			 out->ops ? out->ops->name : "none");
	else
		snprintf(names, sizeof(names), "%s for the input, %s for the output",
			 in->ops->name, out->ops->name);
	unsigned int nthr = (in->ops && in->ops->threaded ? in->threads : 0) +
			    (out->ops && out->ops->threaded ? out->threads : 0);

	if (thr)
		snprintf(threads, sizeof(threads), "%u thread%s, ", nthr, nthr == 1 ? "" : "s");
	pdd_info(1, "%sengine %s, %s%u transfer%s of %zu bytes in flight", what, names,
		 threads, depth, depth == 1 ? "" : "s", xfer);
}

/* Offer rq to side k's engine: 0 when taken (or failed, to be handed
 * back on the next turn), 1 when the engine has no room for it now. */
static int start(struct pdd_drive *d, int k, struct pdd_req *rq)
{
	struct pdd_engine *e = &d->eng[k];
	int r = e->ops->submit(e, rq);

	if (r == PDD_BUSY && d->held[k])
		return 1;
	if (r == PDD_BUSY)	/* no room with nothing in flight: never will be */
		r = -EBUSY;
	if (r < 0) {
		/* back to the user from the loop, not from inside its call */
		rq->res = r;
		pdd_reqq_push(&d->failed, rq);
		return 0;
	}
	d->held[k]++;
	return 0;
}

/* Hand rq to side k's engine now, or keep it, behind those already
 * kept, until the engine has room. */
int pdd_drive_submit(struct pdd_drive *d, int k, struct pdd_req *rq)
{
	if (d->err)
		return d->err;	/* an engine died: nothing more starts */
	if (d->wait[k].head || d->full[k] || start(d, k, rq)) {
		d->full[k] = true;
		pdd_reqq_push(&d->wait[k], rq);
	}
	return 0;
}

/* Side k's engine has finished something: offer it what waits, in the
 * order it came, until it is full again. */
static void offer(struct pdd_drive *d, int k)
{
	struct pdd_req *rq;

	d->full[k] = false;
	/* off the queue first: start() and the engine reuse rq->next */
	while ((rq = pdd_reqq_pop(&d->wait[k])))
		if (start(d, k, rq)) {
			pdd_reqq_unpop(&d->wait[k], rq);
			d->full[k] = true;
			return;
		}
}

/* Take up to 64 requests side k's engine has finished into done[],
 * waiting up to timeout_ms: how many, or -errno (the engine is dead). */
static int take(struct pdd_drive *d, int k, struct pdd_req **done, int timeout_ms)
{
	struct pdd_engine *e = &d->eng[k];
	int n = e->ops->reap(e, done, 64, timeout_ms);

	if (n < 0) {
		d->dead[k] = true;
		d->dead_name[k] = e->ops->name;	/* for the message, after the end */
		if (!d->err) {
			d->err = n;
			d->err_side = k;
		}
	}
	if (n <= 0)
		return n;
	d->held[k] -= (unsigned int)n;
	d->last_done = pdd_now();
	return n;
}

/* Take what side k's engine has finished, waiting up to timeout_ms, and
 * hand it to the user. */
static int reap(struct pdd_drive *d, int k, int timeout_ms)
{
	struct pdd_req *done[64];
	int n = take(d, k, done, timeout_ms);

	if (n <= 0)
		return n;
	if (!d->err)		/* after an engine died nothing more starts */
		offer(d, k);
	for (int i = 0; i < n; i++)
		d->ops->done(d->ctx, done[i]);
	return n;
}

/* What the user waits on besides the engines, or -1. */
static int pending(const struct pdd_drive *d)
{
	return d->ops->pending_fd ? d->ops->pending_fd(d->ctx) : -1;
}

/* Both sides have requests in flight: poll both engines. */
static int poll_both(struct pdd_drive *d)
{
	struct pollfd pfd[2 * PDD_ENGINE_MAX_FDS + 1];
	unsigned int n = 0;
	int r, got = 0;

	/* both, even when the input has something: reaping is also what
	 * hands an engine what was submitted to it since (io_uring, AIO) */
	for (int k = PDD_IN; k <= PDD_OUT; k++) {
		r = reap(d, k, 0);
		if (r < 0)
			return r;
		got += r;
	}
	if (got)
		return 0;
	for (int k = PDD_IN; k <= PDD_OUT; k++)
		n += d->eng[k].ops->pollfd(&d->eng[k], pfd + n, PDD_ENGINE_MAX_FDS);
	pfd[n] = (struct pollfd){ .fd = pending(d), .events = POLLIN };
	r = poll(pfd, n + (pfd[n].fd >= 0), PDD_DRIVE_TICK_MS);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	for (int k = PDD_IN; k <= PDD_OUT && r > 0; k++) {
		int err = reap(d, k, 0);

		if (err < 0)
			return err;
	}
	return 0;
}

/* Requests held by engines that can still hand them back. */
static unsigned int live(const struct pdd_drive *d)
{
	return (d->dead[PDD_IN] ? 0 : d->held[PDD_IN]) + (d->dead[PDD_OUT] ? 0 : d->held[PDD_OUT]);
}

/* Hand the user what this loop took back without it (refused, given
 * up, or taken back with them); not once an engine has died. */
static void deliver(struct pdd_drive *d, struct pdd_reqq *q)
{
	struct pdd_req *rq;

	while ((rq = pdd_reqq_pop(q)))
		d->ops->done(d->ctx, rq);
}

static bool hand_back(struct pdd_drive *d)
{
	struct pdd_reqq q = d->failed;

	if (!q.head || d->err)
		return false;
	d->failed = (struct pdd_reqq){ NULL, NULL };
	deliver(d, &q);
	return true;
}

/* Wait for something to come back (or the tick); errors are kept in
 * d->err. */
static void wait_some(struct pdd_drive *d)
{
	int err = 0;

	if (hand_back(d))
		return;
	if (d->held[PDD_IN] && d->held[PDD_OUT] && !d->err) {
		err = poll_both(d);
	} else {
		for (int k = PDD_IN; k <= PDD_OUT; k++)
			if (d->held[k] && !d->dead[k]) {
				reap(d, k, PDD_DRIVE_TICK_MS);
				break;
			}
	}
	if (err < 0 && !d->err) {
		d->err = err;
		d->err_side = -1;	/* poll() itself failed */
	}
}

/*
 * A stop on a silent device: what was never started (kept by this loop
 * or queued in an engine) comes back cancelled, so that the stop waits
 * only for what a device holds.  The engines hand theirs back at their
 * next reap, among whatever else has finished by then: it is all taken
 * now, what was given up into d->failed, the rest into *back, for the
 * caller to hand to the user in that order before its next turn.  So
 * the user learns where the copy now ends before it acts on anything
 * else (the rest of a short write above that end is not to start).
 * Returns how many requests the devices still hold.
 */
static unsigned int cancel_waiting(struct pdd_drive *d, struct pdd_reqq *back)
{
	struct pdd_req *done[64], *rq;
	unsigned int held = live(d), given = 0;

	d->cancelled = true;
	for (int k = PDD_IN; k <= PDD_OUT; k++) {
		struct pdd_engine *e = &d->eng[k];
		unsigned int n;

		while ((rq = pdd_reqq_pop(&d->wait[k]))) {
			rq->res = -ECANCELED;
			pdd_reqq_push(&d->failed, rq);
		}
		d->full[k] = false;
		if (!e->ops || !e->ops->cancel || d->dead[k])
			continue;
		n = e->ops->cancel(e);
		given += n;
		while (n) {
			int got = take(d, k, done, 0);

			for (int i = 0; i < got; i++) {
				bool gone = done[i]->res == -ECANCELED && n;

				n -= gone;
				pdd_reqq_push(gone ? &d->failed : back, done[i]);
			}
			if (got <= 0)
				break;	/* an engine that broke its word, or died */
		}
	}
	return held - given;
}

/*
 * Run until nothing is in flight and the user starts nothing more.
 * Returns 0, or -errno when an engine fails as a whole: then nothing
 * more starts, what the other engine holds is waited for, and what was
 * never started is dropped; the dead engine may still hold requests,
 * which pdd_drive_end() abandons with it.
 */
int pdd_drive_run(struct pdd_drive *d)
{
	bool stopped = false;

	d->last_done = pdd_now();	/* idle from here on, not from setup */
	for (;;) {
		if (pdd_stop_signal && !stopped) {
			stopped = true;
			d->ops->stop(d->ctx, pdd_stop_signal);
		}
		/* a stop that waits on a device answering nothing gives up
		 * what has not started, and says so at once, and how to end
		 * without waiting; what it gave up goes back to the user
		 * before its next turn */
		if ((stopped || d->err || d->quit) && !d->cancelled && live(d) &&
		    pdd_now() - d->last_done >= PDD_DRIVE_STALL_SECS) {
			double quiet = pdd_now() - d->last_done;
			struct pdd_reqq back = { NULL, NULL };
			unsigned int n = cancel_waiting(d, &back);

			/* after an engine died no one asked to stop: a first
			 * SIGINT is a stop, the second ends pdd */
			pdd_info(0, "%s: waiting for %u request%s in flight, nothing back for %.0f s;"
				 " interrupt %s to end at once",
				 stopped || d->quit ? "stopping" : "ending",
				 n, n == 1 ? "" : "s", quiet, stopped ? "again" : "twice");
			/* what was given up (dropped, as what never started is,
			 * once an engine died), then what came back with it */
			hand_back(d);
			deliver(d, &back);
		}
		if (pdd_report_now) {
			pdd_report_now = 0;
			d->ops->report(d->ctx);
		}
		if (!d->err)
			d->ops->turn(d->ctx, pdd_now());
		if (d->err && !live(d)) {
			/* never started: dropped */
			d->wait[PDD_IN] = d->wait[PDD_OUT] = d->failed = (struct pdd_reqq){ NULL, NULL };
			return d->err;
		}
		if (!d->held[PDD_IN] && !d->held[PDD_OUT] && !d->wait[PDD_IN].head &&
		    !d->wait[PDD_OUT].head && !d->failed.head) {
			struct pollfd pfd = { .fd = d->err ? -1 : pending(d), .events = POLLIN };

			if (pfd.fd < 0)
				return 0;
			(void)poll(&pfd, 1, PDD_DRIVE_TICK_MS);	/* EINTR: a signal, seen above */
			continue;
		}
		wait_some(d);
	}
}

/* Make what was written to side k (dev) durable; nothing may be in
 * flight.  An engine with a flush of its own does it (nbd: a side that is
 * not a local descriptor); for the others the descriptors are synced. */
int pdd_drive_flush(struct pdd_drive *d, int k, struct pdd_dev *dev)
{
	struct pdd_engine *e = &d->eng[k];

	if (e->ops && e->ops->flush)
		return e->ops->flush(e);
	return pdd_dev_flush(dev);
}

/* "copy failed: ...", naming the engine and side where one failed. */
void pdd_drive_say_failed(const struct pdd_drive *d, const char *what, const char *why)
{
	int k = d->err_side;	/* the first to die: its error is d->err */

	if (k >= 0 && d->dead_name[k]) {
		pdd_error("%s failed: engine %s of the %s '%s': %s", what,
			  d->dead_name[k], side_name[k], d->eng[k].dev->name, why);
		return;
	}
	pdd_error("%s failed: %s", what, why);
}

/* Buffers a dead engine may still fill: kept, reachable, to the end (a
 * leak checker would report them otherwise; there are few). */
static struct kept {
	void *bufs;
	struct kept *next;
} *kept;

void pdd_drive_keep(void *bufs)
{
	struct kept *k = malloc(sizeof(*k));

	if (!k)
		return;		/* then lost, which is no worse */
	k->bufs = bufs;
	k->next = kept;
	kept = k;
}

/* Stop both engines.  True when a dead engine was left holding requests:
 * the kernel may still fill or read their buffers (an io_uring ring is
 * torn down after it is closed), so the caller must not free them; the
 * process is about to end. */
bool pdd_drive_end(struct pdd_drive *d)
{
	bool abandoned = false;

	for (int k = PDD_IN; k <= PDD_OUT; k++)
		if (d->eng[k].ops) {
			abandoned |= d->dead[k] && d->held[k];
			d->eng[k].ops->exit(&d->eng[k]);
			d->eng[k].ops = NULL;
		}
	return abandoned;
}
