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
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "drive.h"
#include "pdd.h"

static const char *const side_name[2] = { "input", "output" };

static void push(struct pdd_req **head, struct pdd_req **tail, struct pdd_req *rq)
{
	rq->next = NULL;
	if (*tail)
		(*tail)->next = rq;
	else
		*head = rq;
	*tail = rq;
}

int pdd_drive_start(struct pdd_drive *d, const struct pdd_plan *p,
		    const struct pdd_dev *side[2], void *const *bufs,
		    unsigned int nbufs, unsigned int depth)
{
	sigset_t old;
	int err = 0;

	for (int k = PDD_IN; k <= PDD_OUT && !err; k++) {
		if (!p->ops[k])
			continue;	/* an output that discards needs none */
		/* the engines' threads leave the copy's signals to this one */
		pdd_signals_block(true, &old);
		err = pdd_engine_start(&d->eng[k], p->ops[k], &(struct pdd_engine){
			.dev = side[k], .threads = p->threads, .depth = depth,
			.bufs = bufs, .nbufs = nbufs, .buf_len = p->buf_len });
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

/* The verbose line saying who moves the bytes. */
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
	if (thr)
		snprintf(threads, sizeof(threads), "%u thread%s, ", thr->threads,
			 thr->threads == 1 ? "" : "s");
	pdd_info(1, "%sengine %s, %s%u transfer%s of %zu bytes in flight", what, names,
		 threads, depth, depth == 1 ? "" : "s", xfer);
}

/* Offer rq to side k's engine.  False when the engine is busy with
 * requests in flight: rq is not taken, and the caller keeps it in its
 * place in the order.  True when the engine took it, or refused it for
 * good (then it is back to the user as failed). */
static bool hand(struct pdd_drive *d, int k, struct pdd_req *rq)
{
	struct pdd_engine *e = &d->eng[k];
	int r = e->ops->submit(e, rq);

	if (r == PDD_BUSY && d->held[k]) {
		d->full[k] = true;
		return false;
	}
	if (r == PDD_BUSY)	/* no room with nothing in flight: never will be */
		r = -EBUSY;
	if (r < 0) {
		/* back to the user from the loop, not from inside its call */
		rq->res = r;
		push(&d->failed, &d->failed_tail, rq);
		return true;
	}
	d->held[k]++;
	return true;
}

/* Hand rq to side k's engine now, or keep it, behind those that wait
 * already, until the engine has room. */
int pdd_drive_submit(struct pdd_drive *d, int k, struct pdd_req *rq)
{
	if (d->wait[k] || d->full[k] || !hand(d, k, rq))
		push(&d->wait[k], &d->wait_tail[k], rq);
	return 0;
}

/* Side k's engine has finished something: offer it what waits, oldest
 * first, until it is busy again.  A request it will not take yet stays
 * first in line: the requests reach the engine in the order they came,
 * which is what keeps the writes in ascending order. */
static void offer(struct pdd_drive *d, int k)
{
	d->full[k] = false;
	while (d->wait[k]) {
		struct pdd_req *rq = d->wait[k];

		/* off the queue first: an engine that takes rq may link it
		 * into a queue of its own */
		d->wait[k] = rq->next;
		if (!d->wait[k])
			d->wait_tail[k] = NULL;
		if (!hand(d, k, rq)) {
			rq->next = d->wait[k];
			d->wait[k] = rq;
			if (!d->wait_tail[k])
				d->wait_tail[k] = rq;
			return;
		}
	}
}

/* Take what side k's engine has finished, waiting up to timeout_ms. */
static int reap(struct pdd_drive *d, int k, int timeout_ms)
{
	struct pdd_engine *e = &d->eng[k];
	struct pdd_req *done[64];
	int n = e->ops->reap(e, done, 64, timeout_ms);

	if (n <= 0)
		return n;
	d->held[k] -= (unsigned int)n;
	d->last_done = pdd_now();
	offer(d, k);
	for (int i = 0; i < n; i++)
		d->ops->done(d->ctx, done[i]);
	return n;
}

/* Both sides have requests in flight: poll both engines. */
static int poll_both(struct pdd_drive *d)
{
	struct pollfd pfd[2 * PDD_ENGINE_MAX_FDS];
	unsigned int n = 0;
	int r;

	for (int k = PDD_IN; k <= PDD_OUT; k++) {
		r = reap(d, k, 0);
		if (r)
			return r < 0 ? r : 0;
	}
	for (int k = PDD_IN; k <= PDD_OUT; k++)
		n += d->eng[k].ops->pollfd(&d->eng[k], pfd + n, PDD_ENGINE_MAX_FDS);
	r = poll(pfd, n, PDD_DRIVE_TICK_MS);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	for (int k = PDD_IN; k <= PDD_OUT && r > 0; k++) {
		int err = reap(d, k, 0);

		if (err < 0)
			return err;
	}
	return 0;
}

static int wait_some(struct pdd_drive *d)
{
	if (d->failed) {
		struct pdd_req *rq = d->failed;

		d->failed = d->failed_tail = NULL;
		while (rq) {
			struct pdd_req *next = rq->next;

			d->ops->done(d->ctx, rq);
			rq = next;
		}
		return 0;
	}
	if (d->held[PDD_IN] && d->held[PDD_OUT])
		return poll_both(d);
	for (int k = PDD_IN; k <= PDD_OUT; k++)
		if (d->held[k]) {
			int r = reap(d, k, PDD_DRIVE_TICK_MS);

			return r < 0 ? r : 0;
		}
	return 0;
}

/*
 * Run until nothing is in flight and the user starts nothing more.
 * Returns 0, or -errno when an engine fails as a whole (then requests
 * may still be in flight: pdd_drive_end() stops the engines all the
 * same).
 */
int pdd_drive_run(struct pdd_drive *d)
{
	bool stopped = false;
	int err;

	for (;;) {
		if (pdd_stop_signal && !stopped) {
			stopped = true;
			d->ops->stop(d->ctx, pdd_stop_signal);
		}
		if (pdd_report_now) {
			pdd_report_now = 0;
			d->ops->report(d->ctx);
		}
		d->ops->turn(d->ctx, pdd_now());
		if (!d->held[PDD_IN] && !d->held[PDD_OUT] && !d->wait[PDD_IN] &&
		    !d->wait[PDD_OUT] && !d->failed)
			return 0;
		err = wait_some(d);
		if (err)
			return err;
	}
}

/* Make what was written to side k (dev) durable; nothing may be in
 * flight.  An engine with a flush of its own (a network side) does it;
 * for the others the descriptors are synced. */
int pdd_drive_flush(struct pdd_drive *d, int k, struct pdd_dev *dev)
{
	struct pdd_engine *e = &d->eng[k];

	if (e->ops && e->ops->flush)
		return e->ops->flush(e);
	return pdd_dev_flush(dev);
}

void pdd_drive_end(struct pdd_drive *d)
{
	for (int k = PDD_IN; k <= PDD_OUT; k++)
		if (d->eng[k].ops) {
			d->eng[k].ops->exit(&d->eng[k]);
			d->eng[k].ops = NULL;
		}
}
