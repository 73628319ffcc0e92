// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fake engine (see fake-engine.h).  Each side's engine holds the
 * requests it took in an array, each with how many more reaps it stays
 * late.  A request is "due" once it is no longer late; reap() hands back
 * a random nonempty subset of the due ones and does their I/O only then,
 * as a device finishes a request, so completions come in any order.
 *
 * The driver (drive.c) waits in reap() with a timeout when one side has
 * requests in flight, and in poll() on both engines' descriptors when
 * both have.  Neither may sleep here: a fake that holds requests and
 * has none due when asked to wait makes one due at once (time passing),
 * and so does pollfd(), whose eventfd is readable exactly while
 * something is due.  So poll() returns at once, and the reap after it
 * always hands something back: no 100 ms ticks, and no spinning on a
 * descriptor that promises what reap() will not give.
 *
 * An engine that fails as a whole (die_side, die_at) returns -EIO from
 * that reap on and keeps what it holds: as a ring that broke, it never
 * says what became of those requests.
 *
 * Devices that fall silent after a stop (p_silent) hand nothing back,
 * and each reap then moves the clock on a second, as a wait on them
 * would, until the driver gives up (cancel()).  Some requests the fake
 * takes wait in it, not yet on the device (p_queued): cancel() hands
 * those back at the next reap, all of them, with -ECANCELED; the others
 * come back as they finish.  The driver's own hooks into the copy are
 * wrapped, so that the fake sees every request come back, those the
 * driver kept and gave up too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fake-engine.h"

struct fk_held {
	struct pdd_req *rq;
	unsigned int late;		/* reaps it stays; 0: due */
	bool queued;			/* not yet on the device */
	bool cancelled;			/* given up: back at the next reap */
};

struct fk_side {
	struct fk_world *w;
	bool output;
	int efd;			/* readable exactly while something is due */
	bool rung;
	struct fk_held *held;		/* e->depth of them */
	unsigned int n;
	bool cancelled;			/* cancel() was called */
};

/* The driver whose engine e is: the core starts its engines in place,
 * in drv.eng[side]. */
static struct pdd_drive *drive_of(struct pdd_engine *e, bool output)
{
	return (struct pdd_drive *)(void *)((char *)(e - output) - offsetof(struct pdd_drive, eng));
}

/* Every request on its way back to the core, through the driver. */
static void fk_done(void *ctx, struct pdd_req *rq)
{
	fk_check_back(fk, rq);
	fk->core_ops->done(ctx, rq);
}

static int fk_init(struct pdd_engine *e)
{
	struct fk_side *sd;
	struct pdd_drive *d;

	if (!fk || (e->dev != fk->in_dev && e->dev != fk->out_dev))
		return -EINVAL;
	sd = calloc(1, sizeof(*sd));
	if (!sd)
		return -ENOMEM;
	sd->w = fk;
	sd->output = e->dev == fk->out_dev;
	d = drive_of(e, sd->output);
	if (d->ops != &fk->drive_ops) {	/* the first side started */
		fk->core_ops = d->ops;
		fk->drive_ops = *d->ops;
		fk->drive_ops.done = fk_done;
		d->ops = &fk->drive_ops;
	}
	sd->held = calloc(e->depth, sizeof(*sd->held));
	sd->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!sd->held || sd->efd < 0) {
		if (sd->efd >= 0)
			close(sd->efd);
		free(sd->held);
		free(sd);
		return -ENOMEM;
	}
	e->priv = sd;
	return 0;
}

/* Is this side's engine the one that failed? */
static bool dead(const struct fk_side *sd)
{
	return sd->w->died && sd->w->die_side == (sd->output ? PDD_OUT : PDD_IN);
}

/* A dead engine is ended with what it kept (the copy may not wait for
 * it); the live one must have handed everything back first, or the
 * copy would free buffers that the kernel may still be filling. */
static void fk_exit(struct pdd_engine *e)
{
	struct fk_side *sd = e->priv;

	if (dead(sd))
		sd->w->st.abandoned += sd->n;
	else if (sd->n)
		fk_violation(sd->w, "the %s engine stopped with %u requests in flight%s",
			     sd->output ? "output" : "input", sd->n,
			     sd->w->died ? ", after the other engine died" : "");
	close(sd->efd);
	free(sd->held);
	free(sd);
	e->priv = NULL;
}

static bool any_due(const struct fk_side *sd)
{
	for (unsigned int i = 0; i < sd->n; i++)
		if (!sd->held[i].late)
			return true;
	return false;
}

/* The eventfd is readable exactly while due. */
static void set_rung(struct fk_side *sd, bool due)
{
	uint64_t v = 1;

	if (due && !sd->rung && write(sd->efd, &v, sizeof(v)) != sizeof(v))
		fk_violation(sd->w, "eventfd write: %s", strerror(errno));
	if (!due && sd->rung && read(sd->efd, &v, sizeof(v)) != sizeof(v))
		fk_violation(sd->w, "eventfd read: %s", strerror(errno));
	sd->rung = due;
}

/* The eventfd is readable exactly while a request is due. */
static void set_ready(struct fk_side *sd)
{
	set_rung(sd, any_due(sd));
}

/* From the stop on, the devices may fall silent: and they stay silent
 * until the driver gives up on them. */
static bool silent(struct fk_world *w)
{
	if (!w->silent && w->p_silent && !w->cancel.calls && w->stop_at &&
	    w->reaps >= w->stop_at && fk_chance(&w->rng, w->p_silent))
		w->silent = true;
	return w->silent;
}

static int fk_submit(struct pdd_engine *e, struct pdd_req *rq)
{
	struct fk_side *sd = e->priv;
	struct fk_world *w = sd->w;

	fk_check_done_mark(w);
	w->calls++;
	fk_check_started(w, sd->output, rq);
	if (!fk_check_request(w, e, sd->output, rq))
		return -EINVAL;
	/* a transfer's first read starts where it does */
	if (!sd->output && rq->idx < w->nxf && !w->xf[rq->idx].read) {
		w->xf[rq->idx].read = true;
		w->xf[rq->idx].start = rq->off - w->in_off;
	}
	/* busy when full, and at random; never with nothing held, which
	 * the driver takes as an engine that will never have room */
	if (sd->n == e->depth || (sd->n && fk_chance(&w->rng, w->p_busy))) {
		w->st.busy++;
		return PDD_BUSY;
	}
	if (sd->output)
		fk_check_write_order(w, rq);
	sd->held[sd->n].rq = rq;
	sd->held[sd->n].late = 0;
	if (w->max_late && fk_chance(&w->rng, w->p_late)) {
		sd->held[sd->n].late = 1 + (unsigned int)fk_below(&w->rng, w->max_late);
		w->st.late++;
	}
	sd->held[sd->n].queued = w->p_queued && fk_chance(&w->rng, w->p_queued);
	sd->held[sd->n].cancelled = false;
	sd->n++;
	w->held[sd->output]++;
	set_ready(sd);
	return PDD_QUEUED;
}

/* A short transfer: 1 .. len-1 bytes, whole logical blocks unless
 * short_bytes (a read from direct I/O or the page cache stops on a
 * block; a write may stop anywhere). */
static size_t short_len(struct fk_world *w, size_t len, bool rd)
{
	size_t unit = rd && !w->short_bytes ? w->lbs : 1;

	if (len <= unit)
		return len;
	return unit * (1 + (size_t)fk_below(&w->rng, (len - 1) / unit));
}

/* The first unreadable block that overlaps [off, off+len), or UINT64_MAX. */
static uint64_t first_bad(const struct fk_world *w, uint64_t off, uint64_t len)
{
	for (size_t i = 0; i < w->nbad; i++)
		if (w->bad[i] < off + len && w->bad[i] + w->lbs > off)
			return w->bad[i];
	return UINT64_MAX;
}

static void do_read(struct fk_world *w, struct pdd_req *rq)
{
	uint64_t avail, bad;

	if (rq->off >= w->in_size) {
		rq->res = 0;		/* end of the input */
		return;
	}
	avail = w->in_size - rq->off < rq->len ? w->in_size - rq->off : rq->len;
	bad = first_bad(w, rq->off, avail);
	if (bad != UINT64_MAX) {
		if (bad > rq->off && fk_chance(&w->rng, w->p_short_bad)) {
			avail = bad - rq->off;	/* what is before the bad block, */
			if (fk_chance(&w->rng, w->p_short))	/* or some of it */
				avail = short_len(w, avail, true);
		} else {
			if (fk_chance(&w->rng, w->p_bad_off))
				rq->bad_off = bad;	/* as sg's sense INFO does */
			rq->res = -EIO;
			w->st.eio_reads++;
			return;
		}
	} else if (avail == rq->len && fk_chance(&w->rng, w->p_short)) {
		avail = short_len(w, rq->len, true);
		w->st.shorts += avail < rq->len;
	}
	memcpy(rq->buf, w->in + rq->off, avail);
	rq->res = (ssize_t)avail;
}

static void do_write(struct fk_world *w, struct pdd_req *rq)
{
	uint64_t rel = rq->off - w->out_off, n = rq->len;
	struct fk_xfer *t = &w->xf[rq->idx];
	bool zero = rq->op == PDD_OP_ZERO;	/* no buffer: zeros */

	t->busy = false;
	if (w->bad_write >= rq->off && w->bad_write < rq->off + rq->len) {
		if (w->bad_write > rq->off && fk_chance(&w->rng, w->p_short_bad)) {
			n = w->bad_write - rq->off;
		} else {
			rq->res = -EIO;
			w->st.eio_writes++;
			return;
		}
	} else if (fk_chance(&w->rng, w->p_short)) {
		n = short_len(w, rq->len, false);
		w->st.shorts += n < rq->len;
	}
	/* what the core writes is what the input holds, or zeros for a
	 * block coe=1 could not read; each byte once, and never a byte an
	 * earlier run copied (the map's pieces leave those out).  A range
	 * zeroed (sparse=) must be zeros in the input too; an output that
	 * cannot zero (p_nozero) refuses before doing anything. */
	if (zero && fk_chance(&w->rng, w->p_nozero)) {
		rq->res = -EOPNOTSUPP;
		w->st.nozero++;
		return;
	}
	/* a device zeroes whole blocks, and none past its end */
	if (zero && w->out_dev->kind == PDD_KIND_BLOCK &&
	    ((rq->off | rq->len) % w->out_dev->lbs || rq->off + rq->len > w->out_size))
		fk_violation(w, "a zeroing of %zu bytes at %" PRIu64 " on a device of %u-byte "
			     "blocks and %" PRIu64 " bytes", rq->len, rq->off, w->out_dev->lbs,
			     w->out_size);
	for (uint64_t j = 0; j < n; j++) {
		unsigned char b = zero ? 0 : ((const unsigned char *)rq->buf)[j];

		if (b != w->expect[rel + j]) {
			fk_violation(w, "output byte %" PRIu64 " is %s with data that is "
				     "neither the input's nor coe's zeros", rq->off + j,
				     zero ? "zeroed" : "written");
			break;
		}
	}
	w->st.zeroed += zero ? n : 0;
	for (uint64_t j = 0; j < n; j++) {
		if (w->written[rel + j] != FK_UNWRITTEN) {
			fk_violation(w, "output byte %" PRIu64 " written again (%s)", rq->off + j,
				     w->written[rel + j] == FK_EARLIER ?
				     "the map had it finished" : "by this copy");
			break;
		}
		w->written[rel + j] = FK_WRITTEN;
	}
	if (zero)
		memset(w->out + rq->off, 0, n);
	else
		memcpy(w->out + rq->off, rq->buf, n);
	while (w->wp < w->data_rel && w->written[w->wp])
		w->wp++;
	t->next = rq->off + n;
	rq->res = (ssize_t)n;
}

static int fk_reap(struct pdd_engine *e, struct pdd_req **done, unsigned int max,
		   int timeout_ms)
{
	struct fk_side *sd = e->priv;
	struct fk_world *w = sd->w;
	unsigned int due[PDD_MAX_QD], ndue = 0, nc = 0, want, k = 0;

	fk_check_done_mark(w);
	w->reaps++;
	if (w->stop_at && w->reaps == w->stop_at)
		pdd_stop_signal = SIGINT;	/* as the handler would */
	if (w->p_tick && fk_chance(&w->rng, w->p_tick))
		fk_clock_skew++;
	w->calls++;
	if (dead(sd)) {
		w->st.dead_reaps++;
		return -EIO;	/* and ever after */
	}
	if (w->die_side == (sd->output ? PDD_OUT : PDD_IN) &&
	    ++w->side_reaps[w->die_side] >= w->die_at &&
	    (!w->die_busy || w->held[!sd->output])) {
		w->died = true;
		w->death = (struct fk_death){ .call = w->calls, .err = w->r->err };
		w->st.deaths[w->die_side]++;
		return -EIO;
	}
	if (silent(w)) {
		w->st.silent_reaps++;
		fk_clock_skew++;	/* a second spent waiting for nothing */
		return 0;
	}
	if (sd->n && !any_due(sd)) {
		/* nothing due: late requests age.  Asked to wait, time passes
		 * until one is done, but now and then the wait times out */
		if (!timeout_ms || fk_chance(&w->rng, w->p_timeout)) {
			for (unsigned int i = 0; i < sd->n; i++)
				sd->held[i].late--;
			w->st.timeouts += timeout_ms > 0;
			set_ready(sd);
			return 0;
		}
		sd->held[fk_below(&w->rng, sd->n)].late = 0;
	}
	/* a random nonempty subset of the due ones, in random order, with
	 * every one cancelled among them */
	for (unsigned int i = 0; i < sd->n; i++)
		if (sd->held[i].cancelled)
			due[ndue++] = i;
	nc = ndue;
	for (unsigned int i = 0; i < sd->n; i++)
		if (!sd->held[i].late && !sd->held[i].cancelled)
			due[ndue++] = i;
	want = nc ? nc + (unsigned int)fk_below(&w->rng, ndue - nc + 1) :
		    1 + (unsigned int)fk_below(&w->rng, ndue);
	for (; k < nc && k < max; k++) {
		done[k] = sd->held[due[k]].rq;
		sd->held[due[k]].rq = NULL;
	}
	while (k < want && k < max) {
		unsigned int j = k + (unsigned int)fk_below(&w->rng, ndue - k), t = due[j];

		due[j] = due[k];
		due[k] = t;
		done[k++] = sd->held[t].rq;
		sd->held[t].rq = NULL;
	}
	if (w->died)
		w->st.drained += k;
	for (unsigned int i = 0; i < k; i++) {
		if (i < nc) {		/* given up: no I/O */
			done[i]->res = -ECANCELED;
			if (sd->output)
				w->xf[done[i]->idx].busy = false;
		} else if (sd->output) {
			do_write(w, done[i]);
		} else {
			do_read(w, done[i]);
		}
	}
	for (unsigned int i = k; nc && i > 1; i--) {	/* the cancelled not first */
		unsigned int j = (unsigned int)fk_below(&w->rng, i);
		struct pdd_req *t = done[i - 1];

		done[i - 1] = done[j];
		done[j] = t;
	}
	/* those handed back leave the array; the others age */
	for (unsigned int i = 0; i < sd->n; i++)
		if (!sd->held[i].rq)
			sd->held[i--] = sd->held[--sd->n];
	w->held[sd->output] = sd->n;
	for (unsigned int i = 0; i < sd->n; i++)
		if (sd->held[i].late)
			sd->held[i].late--;
	set_ready(sd);
	return (int)k;
}

/* Called just before the driver polls: with requests held and none due,
 * one becomes due now, so the poll never sleeps. */
static unsigned int fk_pollfd(struct pdd_engine *e, struct pollfd *pfd, unsigned int max)
{
	struct fk_side *sd = e->priv;
	struct pollfd self = { .fd = sd->efd, .events = POLLIN };

	fk_check_done_mark(sd->w);
	if (!max)
		return 0;
	if (sd->w->silent) {
		/* readable all the same, so that poll() does not sleep: the
		 * reaps after it find nothing, and the clock moves on */
		set_rung(sd, sd->n);
	} else {
		if (sd->n && !any_due(sd))
			sd->held[fk_below(&sd->w->rng, sd->n)].late = 0;
		set_ready(sd);
	}
	if (poll(&self, 1, 0) != (sd->n ? 1 : 0))
		fk_violation(sd->w, "the fake's eventfd is %sreadable with %u requests held",
			     sd->n ? "not " : "", sd->n);
	pfd->fd = sd->efd;
	pfd->events = POLLIN;
	return 1;
}

/*
 * Make the output durable, after the power-cut check of the maps.  The
 * writes a dead output kept are lost, not in flight: a flush of it then
 * fails, or (dead_flush_ok) makes durable what did reach the output.
 */
static int fk_flush(struct pdd_engine *e)
{
	struct fk_side *sd = e->priv;
	struct fk_world *w = sd->w;

	fk_check_done_mark(w);
	w->flushes++;
	if (!sd->output)
		fk_violation(w, "the input was flushed");
	if (sd->n && !dead(sd))
		fk_violation(w, "flush with %u writes in flight", sd->n);
	if (w->map) {
		fk_check_maps_durable(w);
		if (w->flushes > 1)
			w->st.saves_mid++;
	}
	if (w->flushes == w->fail_flush) {
		w->st.flush_fails++;
		return -EIO;	/* and nothing new is durable */
	}
	if (dead(sd) && !w->dead_flush_ok) {
		w->st.dead_flush_fails++;
		w->dead_flush_failed = true;
		return -EIO;
	}
	memcpy(w->durable, w->out, w->out_size);
	return 0;
}

/*
 * The driver gives up on silent devices: what the engine took and has
 * not yet given the device comes back cancelled at the next reap, all
 * of it; what the device has comes back as it finishes, some of it late.
 * The devices answer again from here on.
 */
static unsigned int fk_cancel(struct pdd_engine *e)
{
	struct fk_side *sd = e->priv;
	struct fk_world *w = sd->w;
	unsigned int n = 0;

	fk_check_done_mark(w);
	w->calls++;
	if (!w->cancel.calls++) {
		w->cancel.call = w->calls;
		w->st.stalls++;
	}
	if (sd->cancelled || dead(sd) || !((w->stop_at && w->reaps >= w->stop_at) || w->died))
		fk_violation(w, "cancel() of the %s engine %s", sd->output ? "output" : "input",
			     sd->cancelled ? "again" : dead(sd) ? "after it died" :
			     "with no stop and no engine dead");
	sd->cancelled = true;
	for (unsigned int i = 0; i < sd->n; i++) {
		struct fk_held *h = &sd->held[i];

		if (h->queued) {
			h->cancelled = true;
			h->late = 0;
			fk_note_cancelled(w, h->rq);
			n++;
		} else if (w->max_late) {
			h->late = (unsigned int)fk_below(&w->rng, w->max_late + 1);
		}
	}
	w->cancel.on_device += sd->n - n;
	w->cancel.engine += n;
	w->st.on_device += sd->n - n;
	w->st.cancelled[0] += n;
	w->silent = false;
	set_ready(sd);
	return n;
}

const struct pdd_engine_ops fk_ops = {
	.name = "fake",
	.threaded = false,
	.sg = false,
	.probe = NULL,
	.default_depth = NULL,		/* the plan is made for threads, then patched */
	.init = fk_init,
	.submit = fk_submit,
	.reap = fk_reap,
	.pollfd = fk_pollfd,
	.cancel = fk_cancel,
	.flush = fk_flush,
	.exit = fk_exit,
};
