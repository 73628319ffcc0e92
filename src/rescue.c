// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rescue=1: the loop of a rescue (the passes are rescue-pass.c's; see
 * include/rescue.h).  It runs in the driver's loop as the copy does
 * (drive.c): each slot reads what the pass hands out, on the input's
 * engine, and writes what it read to the same place of the output (the
 * range's offset added), on the output's engine; the written bytes become
 * finished ('+') in the map.  Unlike the copy, writes go in any order:
 * a rescue writes where it reads, and a bad area leaves the output as it
 * was.  A pass ends when nothing of it is in flight, reads or writes, so
 * the next never reads what is being written.
 *
 * The map is saved every map_interval= seconds and at the end: reads
 * stop being started, what is in flight finishes, the output is flushed,
 * then the map written, so that it never claims more than the output
 * holds.  A signal stops new reads, lets those in flight finish and
 * saves the map with the phase it was in, so that a rerun goes on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exitcodes.h"
#include "hash.h"
#include "rescue.h"

/* The first error ends the rescue: no more reads start. */
void rescue_fail(struct rescuer *x, enum pdd_op op, uint64_t off, size_t len, int err)
{
	struct pdd_result *r = x->r;

	x->stop = true;
	if (r->err)
		return;
	r->err = err;
	r->err_op = op;
	r->err_off = off;
	r->err_len = len;
}

/* An error that means the medium could not give these bytes, as opposed
 * to a device that is gone or refusing (those end the rescue). */
static bool unreadable(int err)
{
	struct pdd_result r = { .err = err };

	return pdd_exit_status(&r) == PDD_EXIT_MEDIUM_HARD;
}

static uint64_t out_off(const struct rescuer *x, uint64_t pos)
{
	return x->p->out_off + (pos - x->p->in_off);
}

/* Hand the engine what is left of s's read or write. */
static void submit(struct rescuer *x, struct rslot *s)
{
	struct pdd_req *rq = &s->rq;
	const struct pdd_dev *d = s->writing ? x->out : x->in;
	size_t done = s->writing ? (size_t)rq->idx : s->got;

	rq->op = s->writing ? PDD_OP_WRITE : PDD_OP_READ;
	rq->positional = true;
	rq->buf = s->buf + done;
	rq->len = (s->writing ? s->got : s->len) - done;
	rq->off = (s->writing ? out_off(x, s->pos) : s->pos) + done;
	rq->bad_off = UINT64_MAX;
	rq->fd = pdd_dev_pick_fd(d, rq->off, rq->len, rq->buf);
	if (s->writing)
		x->writes++;
	else
		x->reads++;
	pdd_drive_submit(&x->drv, s->writing ? PDD_OUT : PDD_IN, rq);
}

static void release(struct rescuer *x, struct rslot *s)
{
	x->idle[x->nidle++] = (unsigned int)(s - x->slots);
}

/* The good bytes of s are where they belong: finished. */
static void finished(struct rescuer *x, struct rslot *s)
{
	if (pdd_map_set(x->map, s->pos, s->got, PDD_MAP_DONE))
		rescue_fail(x, PDD_OP_MAP, 0, 0, -ENOMEM);
	x->r->out_bytes += s->got;
	release(x, s);
}

/* s's read is over with s->got good bytes: write them (an output that
 * discards, /dev/null, has them at once: a scan of the input), or give s
 * back. */
static void write_good(struct rescuer *x, struct rslot *s)
{
	if (!s->got) {
		release(x, s);
		return;
	}
	if (!x->p->ops[PDD_OUT]) {
		finished(x, s);
		return;
	}
	s->writing = true;
	s->rq.idx = 0;		/* bytes of the write done so far */
	submit(x, s);
}

static void read_back(struct rescuer *x, struct rslot *s, ssize_t res)
{
	x->reads--;
	if (res == -ECANCELED) {	/* a stop gave it up: still to read */
		release(x, s);
		return;
	}
	if (res > 0) {
		s->got += (size_t)res;
		x->sec_bytes += (uint64_t)res;
		x->r->in_bytes += (uint64_t)res;
		x->last_good = pdd_now();
		if (s->got < s->len && !x->stop) {
			submit(x, s);	/* the rest of a short read */
			return;
		}
	} else if (res == 0 && s->got < s->len) {
		/* the input ends here: nothing past it is to be read */
		rescue_input_ends(x, s->pos + s->got);
		s->len = s->got;
	} else if (res < 0 && unreadable((int)res) && s->rq.bad_off != UINT64_MAX &&
		   s->rq.bad_off > s->pos + s->got && s->rq.bad_off < s->pos + s->len &&
		   !x->stop) {
		/* the device named the first bad block (sg: the sense INFO
		 * field): it and the rest are marked as a failed read's, and
		 * the blocks before it are read again now */
		rescue_read_bad(x, s, s->rq.bad_off);
		s->len = (size_t)(s->rq.bad_off - s->pos);
		submit(x, s);
		return;
	} else if (res < 0 && !unreadable((int)res)) {
		rescue_fail(x, PDD_OP_READ, s->rq.off, s->rq.len, (int)res);
		rescue_read_done(x, s, 0);
		release(x, s);
		return;
	}
	rescue_read_done(x, s, res < 0 ? (int)res : 0);
	write_good(x, s);
}

static void write_back(struct rescuer *x, struct rslot *s, ssize_t res)
{
	x->writes--;
	if (res == -ECANCELED) {	/* a stop gave it up: not finished */
		release(x, s);
		return;
	}
	if (res < 0) {
		rescue_fail(x, PDD_OP_WRITE, s->rq.off, s->rq.len, (int)res);
		release(x, s);
		return;
	}
	s->rq.idx += (uint64_t)res;
	if (res > 0 && s->rq.idx < s->got) {
		submit(x, s);
		return;
	}
	if (res == 0) {
		rescue_fail(x, PDD_OP_WRITE, s->rq.off, s->rq.len, -ENOSPC);
		release(x, s);
		return;
	}
	finished(x, s);	/* a save flushes before it says so */
}

static void on_done(void *ctx, struct pdd_req *rq)
{
	struct rescuer *x = ctx;
	struct rslot *s = &x->slots[rq->buf_idx];

	if (s->writing)
		write_back(x, s, rq->res);
	else
		read_back(x, s, rq->res);
}

/* Flush the output and save the map (the phase, the pass and where it
 * is on the status line); nothing may be in flight. */
static void save(struct rescuer *x, bool end)
{
	int err = 0;

	x->last_save = pdd_now();
	x->save_due = false;
	if (x->unflushable)
		return;	/* the map saved last stays the record */
	if (x->r->out_bytes && x->p->ops[PDD_OUT]) {
		/* after an error too: what was written is finished once the
		 * output holds it; an output that cannot say so marks nothing */
		err = x->drv.dead[PDD_OUT] ? -EIO : pdd_drive_flush(&x->drv, PDD_OUT, x->out);
		if (err) {
			x->unflushable = true;
			rescue_fail(x, PDD_OP_FLUSH, 0, 0, err);
			return;
		}
	}
	if (end && x->phase == RP_END && !x->r->err)
		x->map->cur_status = PDD_MAP_DONE;
	if (!x->save)
		return;
	rescue_map_msg(x, x->msg, sizeof(x->msg));
	x->map->msg = x->msg;
	err = pdd_map_save(x->map);
	if (err)
		rescue_fail(x, PDD_OP_MAP, 0, 0, err);
}

/* The clock: the rate of the last whole second, min_rate=, give_up= and
 * the map's timer. */
static void tick(struct rescuer *x, double now)
{
	const struct pdd_opts *o = x->o;

	if (now - x->sec_t >= 1.0) {
		x->rate = x->sec_bytes / (now - x->sec_t);
		x->slow = o->min_rate && x->rate < (double)o->min_rate && now - x->t0 >= 1.0;
		x->sec_t = now;
		x->sec_bytes = x->sec_issued = 0;
		if (x->slow)
			rescue_second(x);
	}
	if (o->give_up && now - x->last_good > o->give_up && !x->stop) {
		x->stop = x->gave_up = x->drv.quit = true;
		pdd_info(0, "rescue: nothing read for %u s (give_up=%u): stopping", o->give_up,
			 o->give_up);
	}
	if (x->save && o->map_interval && now - x->last_save >= o->map_interval)
		x->save_due = true;
	rescue_progress(x, now, false);
}

/* max_rate=: the reads started this second are enough.  With reads in
 * flight their completions wake the loop; with none, wait here for the
 * next second (the loop would end with nothing to wait for). */
static bool rate_capped(struct rescuer *x)
{
	struct timespec ts;

	if (!x->o->max_rate || x->sec_issued < x->o->max_rate)
		return false;
	if (x->reads || x->writes)
		return true;
	while (!pdd_stop_signal && pdd_now() - x->sec_t < 1.0) {
		double left = 1.0 - (pdd_now() - x->sec_t);

		ts.tv_sec = 0;
		ts.tv_nsec = (long)(left * 1e9);
		nanosleep(&ts, NULL);
	}
	tick(x, pdd_now());
	return x->sec_issued >= x->o->max_rate;
}

/* Start what may start: reads while slots are idle; at a pass's end the
 * next pass; the map's saves when nothing is in flight. */
static void on_turn(void *ctx, double now)
{
	struct rescuer *x = ctx;
	bool issued = false;

	tick(x, now);
	if (x->save_due && !x->reads && !x->writes && !x->stop)
		save(x, false);
	while (!x->stop && !x->save_due && x->nidle && !rate_capped(x)) {
		struct rslot *s = &x->slots[x->idle[x->nidle - 1]];

		if (!rescue_next(x, s)) {
			if (x->reads || x->writes || rescue_busy_jobs(x) || issued)
				break;
			if (!rescue_advance(x)) {
				x->phase = RP_END;
				break;
			}
			continue;
		}
		x->nidle--;
		x->sec_issued += s->len;
		s->got = 0;
		s->writing = false;
		s->rq.idx = 0;
		submit(x, s);
		issued = true;
	}
}

static void on_stop(void *ctx, int sig)
{
	struct rescuer *x = ctx;

	x->r->signal = sig;
	x->stop = true;
}

static void on_report(void *ctx)
{
	rescue_report_now(ctx);
}

static const struct pdd_drive_ops rescue_ops = {
	.turn = on_turn,
	.done = on_done,
	.stop = on_stop,
	.report = on_report,
};

static int setup(struct rescuer *x)
{
	const struct pdd_plan *p = x->p;
	int err = rescue_range_setup(x);

	x->nslots = p->depth;
	x->slots = calloc(x->nslots, sizeof(*x->slots));
	x->idle = calloc(x->nslots, sizeof(*x->idle));
	x->bufs = calloc(x->nslots, sizeof(*x->bufs));
	if (!err && x->bufs)
		err = pdd_bufs_alloc(x->bufs, x->nslots, p->buf_align, p->buf_len);
	for (unsigned int i = 0; !err && x->slots && x->idle && x->bufs && i < x->nslots; i++) {
		x->slots[i].buf = x->bufs[i];
		x->slots[i].rq.buf_idx = i;
		x->idle[x->nidle++] = x->nslots - 1 - i;
	}
	if (!err && (!x->slots || !x->idle || !x->bufs))
		err = -ENOMEM;
	if (!err)
		err = rescue_pass_setup(x);
	if (err) {
		pdd_error("cannot set up the rescue: %s", strerror(-err));
		return err;
	}
	err = pdd_dev_create(x->out);
	if (err)
		return err;
	x->drv.ops = &rescue_ops;
	x->drv.ctx = x;
	err = pdd_drive_start(&x->drv, p, (const struct pdd_dev *[2]){ x->in, x->out },
			      x->bufs, x->nslots, x->nslots);
	if (!err)
		err = pdd_dev_truncate(x->out, p->out_off);
	if (!err)
		pdd_drive_describe(&x->drv, "rescue: ", x->nslots, p->xfer);
	return err;
}

static void teardown(struct rescuer *x)
{
	if (pdd_drive_end(&x->drv)) {
		pdd_drive_keep(x->bufs);
		x->bufs = NULL;
	}
	if (x->bufs)
		pdd_bufs_free(x->bufs, x->nslots, x->p->buf_align, x->p->buf_len);
	free(x->bufs);
	free(x->slots);
	free(x->idle);
	free(x->dom);
	free(x->jobs);
}

/* A regular file output is as long as the range at the end, bad areas
 * and all, as an image of the input should be. */
static void full_size(struct rescuer *x)
{
	struct stat st;
	uint64_t want = out_off(x, x->end);

	if (x->out->kind != PDD_KIND_FILE || fstat(x->out->fd_buf, &st) || (uint64_t)st.st_size >= want)
		return;
	if (ftruncate(x->out->fd_buf, (off_t)want))
		rescue_fail(x, PDD_OP_WRITE, want, 0, -errno);
}

/* hash=: the digests come from the output read back after the rescue,
 * which wrote it in no order (verify-hash.c). */
static void hash_after(struct rescuer *x)
{
	struct pdd_result *r = x->r;

	if (!x->o->hash_algs || r->err || r->signal)
		return;
	if (pdd_hash_start(&r->hash, x->o->hash_algs, x->o->hashwindow, 1)) {
		r->hash_failed = true;
		return;
	}
	r->hash_reread = true;
	r->hash_len = out_off(x, x->end) - x->p->out_off;
	r->hash_file = pdd_hash_whole_file(x->out, x->p, r->hash_len);
}

/*
 * Rescue the planned range of in onto out, with map (NULL: one kept in
 * memory only).  Fills r; 0 when the rescue ran (r says how it ended),
 * -errno when it could not start.
 */
int pdd_rescue(const struct pdd_plan *p, struct pdd_dev *in, struct pdd_dev *out,
	       const struct pdd_opts *o, struct pdd_map *map, struct pdd_result *r)
{
	struct pdd_map mem;
	struct rescuer x = { .p = p, .o = o, .r = r, .in = in, .out = out, .map = map,
			     .save = map != NULL, .start = p->in_off,
			     .end = p->in_off + p->total };
	int err;

	memset(r, 0, sizeof(*r));
	r->rescue = true;
	if (!map) {
		pdd_map_init(&mem, NULL);
		x.map = &mem;
	}
	err = setup(&x);
	if (!err) {
		x.t0 = x.last_good = x.last_save = x.sec_t = pdd_now();
		save(&x, false);	/* a map from the start, as ddrescue's */
		err = pdd_drive_run(&x.drv);
		pdd_msg_end_line();
		if (err && !r->err) {
			rescue_fail(&x, PDD_OP_NONE, 0, 0, err);
			pdd_drive_say_failed(&x.drv, "rescue", pdd_strerror(err));
		}
		if (!r->err)
			full_size(&x);
		save(&x, true);
		r->secs = pdd_now() - x.t0;
		rescue_count(&x);
		hash_after(&x);
		err = 0;
	}
	teardown(&x);
	if (out->kind != PDD_KIND_NBD) {
		int cerr = pdd_dev_close(out);

		if (cerr && !r->err)
			rescue_fail(&x, PDD_OP_CLOSE, 0, 0, cerr);
	}
	if (!map)
		pdd_map_free(&mem);
	return err;
}
