// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The copy core.  The range is cut into transfers of bs*bpt bytes,
 * numbered from 0.  Each turn of the driver's loop (drive.c) the core
 * hands reads to the input's engine, passes each finished read to the
 * sequencer, issues writes to the output's engine in ascending transfer
 * order as the sequencer allows, and retires finished writes into the
 * done mark.  The engines only move bytes; every decision is made here,
 * in one thread, so no lock is ever held across a read or a write.
 *
 * A short read or write is resubmitted for the rest; a read that returns
 * nothing is the end of the input.  The first error (lowest transfer)
 * stops new reads; what is below it is still written, then the loop
 * drains and returns.  With coe=1 a read that fails on the medium does
 * not stop the copy: the transfer is read again around its bad blocks,
 * which are written as zeros (coe.c).
 *
 * The range is a list of pieces to do ("todo"): all of it, or with map=
 * what the map does not mark finished.  Transfers are cut from the
 * pieces in order, so a transfer never spans two.  With a map, each
 * written transfer is marked finished in it, but only after the output
 * has been flushed, so that a saved map never claims more than the
 * output really holds (copy-map.c).  What the copy says when it ends is
 * in copy-report.c, and how a copy that stops is cut in copy-end.c.  The
 * state they all share is in core.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "engine.h"
#include "exitcodes.h"
#include "hash.h"
#include "map.h"
#include "pdd.h"
#include "seq.h"
#include "core.h"

/* Keep the error of the lowest transfer: that is where the copy stops. */
void core_record(struct core *c, uint64_t idx, enum pdd_op op, uint64_t off,
		 size_t len, int err)
{
	if (c->r->err && idx >= c->err_idx)
		return;
	c->r->err = err;
	c->r->err_op = op;
	c->r->err_off = off;
	c->r->err_len = len;
	c->err_idx = idx;
}

/* Transfer idx failed: nothing from it on is written. */
void core_fail(struct core *c, uint64_t idx, enum pdd_op op, uint64_t off,
	       size_t len, int err)
{
	pdd_seq_stop_at(&c->seq, idx);
	core_record(c, idx, op, off, len, err);
}

/* Hand the engine what is left of transfer idx's read or write: from
 * the bytes already moved (got or put) to the end of the piece. */
void core_submit_io(struct core *c, uint64_t idx, enum pdd_op op)
{
	core_submit_part(c, idx, op, 0);
}

static void read_done(struct core *c, struct slot *s);

/* The same for len bytes from there (0: the rest): a run of sparse=. */
void core_submit_part(struct core *c, uint64_t idx, enum pdd_op op, size_t len)
{
	struct slot *s = slot_of(c, idx);
	struct pdd_req *rq = &s->rq;
	bool rd = op == PDD_OP_READ;
	struct pdd_dev *d = rd ? c->in : c->out;
	size_t moved = rd ? s->got : s->put;
	uint64_t off = (rd ? c->p->in_off : c->p->out_off) + s->rel + moved;

	if (rd && c->drv.cancelled) {
		/* a stop gave up on silent devices: it waits for what they
		 * hold and nothing more, so no read starts, not even the rest
		 * of one (a read around bad blocks could take a device minutes
		 * a block); the transfer ends the copy as one given up does */
		pdd_seq_stop_at(&c->seq, idx);
		pdd_seq_drop(&c->seq, idx);
		return;
	}
	rq->op = op;
	rq->idx = idx;
	rq->buf = s->buf + moved;
	rq->len = len ? len : (rd ? s->cap : s->got) - moved;
	rq->off = off;
	rq->zero_mode = c->zero_mode;
	rq->bad_off = UINT64_MAX;
	rq->positional = !d->stream;
	rq->fd = pdd_dev_pick_fd(d, off, rq->len, rq->buf);
	/* counted first: a request the engine refuses comes back failed */
	if (rd)
		c->reads++;
	else
		c->writes++;
	pdd_drive_submit(&c->drv, rd ? PDD_IN : PDD_OUT, rq);
}

/* The next transfer: up to xfer bytes of the current piece. */
static void start_read(struct core *c)
{
	uint64_t idx = pdd_seq_start_read(&c->seq);
	struct slot *s = slot_of(c, idx);
	const struct pdd_extent *e = &c->todo[c->cur];

	s->rel = c->cur_pos;
	s->len = c->p->xfer;
	if (e->size != PDD_UNTIL_EOF && e->pos + e->size - s->rel < s->len)
		s->len = (size_t)(e->pos + e->size - s->rel);
	s->zeros = core_cut(c, s->rel, &s->len);
	c->cur_pos += s->len;
	if (e->size != PDD_UNTIL_EOF && c->cur_pos == e->pos + e->size &&
	    ++c->cur < c->ntodo)
		c->cur_pos = c->todo[c->cur].pos;
	if (c->cur == c->ntodo)		/* the last (cut transfers: more than
					 * the plan counted) */
		pdd_seq_stop_at(&c->seq, idx + 1);
	s->got = 0;
	s->put = 0;
	s->zeroed = s->skipped = s->hole = 0;
	s->cap = s->len;
	s->stepping = false;
	s->known_bad = UINT64_MAX;
	s->tries = 0;
	s->nbad = 0;
	if (s->zeros) {		/* a hole of the input: zeros, not read, and
				 * not put in the buffer unless written plainly */
		s->rq.idx = idx;
		s->rq.res = (ssize_t)s->len;
		s->hole = s->len;
		read_done(c, s);
		return;
	}
	core_submit_io(c, idx, PDD_OP_READ);
}

/* Room for one more after the n elements of array (*cap of them fit):
 * the array to use, or NULL when there is no memory (array is as it
 * was). */
void *core_grow(void *array, size_t n, size_t *cap, size_t size)
{
	size_t want = *cap ? 2 * *cap : 16;
	void *q;

	if (n < *cap)
		return array;
	q = realloc(array, want * size);
	if (q)
		*cap = want;
	return q;
}

/* Transfer idx is written, and everything below it: count it in the
 * done mark and the report, and (after the next flush) in the map.  The
 * transfer that reached coe_limit= is where the copy stops, now that it
 * is written: that is its error, a write error of its own being the
 * truer one. */
void core_retire_slot(struct core *c, uint64_t idx)
{
	struct slot *s = slot_of(c, idx);

	core_report_bad(c, s);
	c->r->out_bytes += s->got;
	c->r->zero_bytes += s->zeroed;	/* sparse=, below the done mark only */
	c->r->skip_bytes += s->skipped;
	c->r->hole_bytes += s->hole < s->got ? s->hole : s->got;
	c->r->done = s->rel + s->got;
	if (c->map && !c->flush_failed && core_note_slot(c, s))
		core_fail(c, pdd_seq_next_read(&c->seq), PDD_OP_MAP, 0, 0, -ENOMEM);
	if (idx == c->limit_idx) {
		uint64_t off = s->bad[s->nbad - 1];

		c->limit_lba = off / coe_unit(c);
		core_record(c, idx, PDD_OP_READ, off, (size_t)(in_start(c, s) + s->got - off), s->bad_err);
	}
}

/*
 * Through the page cache, what is written to a file waits in memory for
 * the flush at the end (sync=1) or before a map save: writing back what
 * the done mark passed, every 8 MiB, while the copy reads on, leaves that
 * flush little to wait for.  It only starts the write-back (a hint: an
 * error shows at the flush).
 */
static void write_back(struct core *c)
{
	uint64_t done = c->p->out_off + c->r->done;

	if (!c->wb || done < c->wb_from + PDD_WRITE_BACK)
		return;
	sync_file_range(c->out->fd_buf, (off64_t)c->wb_from, (off64_t)(done - c->wb_from),
			SYNC_FILE_RANGE_WRITE);
	c->wb_from = done;
}

static void retire(struct core *c, uint64_t idx)
{
	pdd_seq_write_done(&c->seq, idx);
	/* the sequencer frees slots behind the done mark, but nothing reuses
	 * them before the next read starts, so their lengths are still here */
	while (c->retired < pdd_seq_done(&c->seq))
		core_retire_slot(c, c->retired++);
	write_back(c);
}

/*
 * A piece that direct I/O cannot take (the tail of a count= that ends
 * inside a logical block) goes through the page cache.  Mixed with direct
 * writes to the same page it can read-modify-write stale data, or leave a
 * dirty page that a direct write cannot invalidate (the kernel then fails
 * the flush with EIO).  So it waits until no other write is in flight,
 * runs alone, and its pages are written back before anything else goes.
 */
static bool is_barrier(struct core *c, uint64_t idx)
{
	struct slot *s = slot_of(c, idx);
	uint64_t off = c->p->out_off + s->rel + s->put;

	return c->out->direct &&
	       pdd_dev_pick_fd(c->out, off, s->got - s->put, s->buf + s->put) != c->out->fd;
}

static int barrier_done(struct core *c, const struct slot *s)
{
	uint64_t off = c->p->out_off + s->rel;

	c->barrier = false;
	if (sync_file_range(c->out->fd_buf, (off64_t)off, (off64_t)s->got,
			    SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
			    SYNC_FILE_RANGE_WAIT_AFTER) < 0)
		return -errno;
	return 0;
}

static void wrote(struct core *c, uint64_t idx);

static void submit_write(struct core *c, uint64_t idx)
{
	struct slot *s = slot_of(c, idx);
	bool all_done;

	if (c->out->kind == PDD_KIND_NULL) {	/* nothing to do to discard */
		s->put = s->got;
		retire(c, idx);
		return;
	}
	if (core_sparse_write(c, idx, &all_done)) {
		if (all_done)		/* zeros the output holds already */
			wrote(c, idx);
		return;
	}
	if (s->zeros) {		/* a hole, written the plain way after all */
		memset(s->buf, 0, s->got);
		s->zeros = false;
	}
	core_submit_io(c, idx, PDD_OP_WRITE);
}

static void read_done(struct core *c, struct slot *s)
{
	uint64_t idx = s->rq.idx;

	if (idx >= pdd_seq_end(&c->seq)) {		/* past an error or the end */
		pdd_seq_drop(&c->seq, idx);
		return;
	}
	if (s->rq.res == -ECANCELED) {	/* a stop gave it up: it ends here */
		pdd_seq_stop_at(&c->seq, idx);
		pdd_seq_drop(&c->seq, idx);
		return;
	}
	if (s->rq.res < 0) {
		core_read_failed(c, s);
		return;
	}
	s->got += (size_t)s->rq.res;
	if (s->rq.res > 0)
		s->tries = 0;
	if (s->rq.res == 0) {			/* end of the input */
		pdd_seq_stop_at(&c->seq, s->got ? idx + 1 : idx);
		if (s->got)
			pdd_seq_read_done(&c->seq, idx);
		else
			pdd_seq_drop(&c->seq, idx);
		return;
	}
	core_read_more(c, s);
}

static void write_done(struct core *c, struct slot *s)
{
	uint64_t idx = s->rq.idx;

	if (s->rq.res == -ECANCELED) {
		/* a stop gave it up: it ends here, and what the transfer
		 * wrote before (the rest of a short write was given up) is
		 * written, as after a write error */
		pdd_seq_stop_at(&c->seq, idx);
		core_cut_write(c, idx, s->put);
		return;
	}
	if (s->rq.op == PDD_OP_ZERO && !core_sparse_zeroed(c, s)) {
		/* refused: the zeros are written, unless past a stop or an
		 * error, as the rest of a short write */
		if (idx < pdd_seq_end(&c->seq))
			submit_write(c, idx);
		return;
	}
	if (s->rq.res <= 0) {
		/* a write that moves nothing would move nothing again; the
		 * device may have named the block that failed.  What this
		 * transfer wrote before is written (core_partial_done). */
		core_cut_write(c, idx, s->put);
		core_fail(c, idx, PDD_OP_WRITE,
			  s->rq.bad_off != UINT64_MAX ? s->rq.bad_off : s->rq.off, s->rq.len,
			  s->rq.res ? (int)s->rq.res : -ENOSPC);
		return;
	}
	s->put += (size_t)s->rq.res;
	if (s->put < s->got) {
		if (idx < pdd_seq_end(&c->seq))
			submit_write(c, idx);
		return;
	}
	wrote(c, idx);
}

/* Transfer idx is all in the output. */
static void wrote(struct core *c, uint64_t idx)
{
	struct slot *s = slot_of(c, idx);

	if (c->barrier) {
		int err = barrier_done(c, s);

		if (err) {
			core_fail(c, idx, PDD_OP_WRITE, c->p->out_off + s->rel, s->got, err);
			return;
		}
	}
	retire(c, idx);
}

/* Start what may start: reads while slots are free, then every write the
 * sequencer releases.  A stream takes one request at a time, in order. */
static void issue(struct core *c)
{
	bool more;
	uint64_t idx;

	do {
		more = false;
		while (pdd_seq_can_read(&c->seq) && !(c->in->stream && c->reads) &&
		       core_hash_room(c) && core_buf_in(c)) {
			start_read(c);
			more = true;
		}
		while (!(c->out->stream && c->writes) && !c->barrier && !c->save_due &&
		       pdd_seq_peek_write(&c->seq, &idx)) {
			bool barrier = is_barrier(c, idx);

			if (barrier && c->writes)
				break;	/* wait for the others to finish */
			if (!core_hash_feed(c, idx))
				break;	/* the hash is full: it wakes the loop */
			c->hash_fed++;
			c->barrier = barrier;
			pdd_seq_next_write(&c->seq, &idx);
			core_limit_bad(c, slot_of(c, idx));
			c->r->in_bytes += slot_of(c, idx)->got;
			submit_write(c, idx);
			more = true;
		}
	} while (more);
}

/* SIGINT or SIGTERM: no new reads; what is in flight is finished and
 * written below them. */
static void on_stop(void *ctx, int sig)
{
	struct core *c = ctx;

	c->r->signal = sig;
	pdd_seq_stop_at(&c->seq, pdd_seq_next_read(&c->seq));
}

/* SIGUSR1: the report so far. */
static void on_report(void *ctx)
{
	struct core *c = ctx;

	c->r->secs = pdd_now() - c->t0;
	if (c->r->hash) {	/* what reached the output in order */
		c->r->hashed = pdd_hash_bytes(c->r->hash);
		if (c->r->hashed > c->r->done)
			c->r->hashed = c->r->done;
	}
	pdd_msg_end_line();	/* under the progress line */
	pdd_report(c->o, c->p, c->r);
}

/* Each turn of the loop: what the clock makes due (a progress line, a
 * save of the map), then whatever may start. */
static void on_turn(void *ctx, double now)
{
	struct core *c = ctx;

	if (c->o->progress)
		pdd_progress_tick(c->r->out_bytes, now, now - c->drv.last_done);
	if (c->map && c->o->map_interval && now - c->last_save >= c->o->map_interval)
		c->save_due = true;
	if (c->save_due && !c->writes) {
		core_save_map(c, false);
		c->save_due = false;
	}
	core_hash_turn(c, now);
	issue(c);
}

/* A request is back from an engine. */
static void on_done(void *ctx, struct pdd_req *rq)
{
	struct core *c = ctx;
	struct slot *s = (struct slot *)rq;	/* rq is first */

	core_note_death(c);
	if (rq->op == PDD_OP_READ) {
		c->reads--;
		read_done(c, s);
	} else {
		c->writes--;
		write_done(c, s);
	}
}

static const struct pdd_drive_ops copy_ops = {
	.turn = on_turn,
	.done = on_done,
	.stop = on_stop,
	.report = on_report,
	.pending_fd = core_hash_fd,
};

static int setup(struct core *c)
{
	uint64_t ntrans;
	const struct pdd_plan *p = c->p;
	int err;

	err = core_plan_todo(c, &ntrans);
	if (err) {
		pdd_error("cannot plan the copy: %s", strerror(-err));
		return err;
	}
	core_holes_setup(c);
	/* cut at holes, transfers may be more than planned: the last one
	 * read ends the copy (start_read) */
	err = pdd_seq_init(&c->seq, p->depth, c->holes && ntrans ? PDD_UNTIL_EOF : ntrans);
	c->slots = calloc(p->depth, sizeof(*c->slots));
	c->bufs = calloc(p->depth, sizeof(*c->bufs));
	if (!err && c->slots && c->bufs)
		err = pdd_bufs_alloc(c->bufs, p->depth, p->buf_align, p->buf_len);
	for (unsigned int i = 0; !err && c->slots && c->bufs && i < p->depth; i++) {
		c->slots[i].buf = c->bufs[i];
		c->slots[i].rq.buf_idx = i;
	}
	if (err || !c->slots || !c->bufs) {
		pdd_error("cannot allocate %u buffers of %zu bytes: %s", p->depth,
			  p->buf_len, strerror(ENOMEM));
		return -ENOMEM;
	}
	c->drv.bufs_later = (c->fill = pdd_fill_new(c->bufs, p->depth, p->buf_len, ntrans)) != NULL;
	/* only now, with the memory in hand, is the output made (the
	 * engine may register its descriptor), and it is cut (oflag=trunc)
	 * once the engine has started: a copy that cannot start leaves it
	 * as it was */
	err = pdd_dev_create(c->out);
	if (err)
		return err;
	c->drv.ops = &copy_ops;
	c->drv.ctx = c;
	err = pdd_drive_start(&c->drv, p, (const struct pdd_dev *[2]){ c->in, c->out },
			      c->bufs, p->depth, p->depth);
	if (err)
		return err;
	err = pdd_dev_truncate(c->out, p->out_off);
	if (err)
		return err;
	err = core_hash_setup(c);
	if (err)
		return err;
	core_sparse_setup(c);	/* after the truncation: the size it leaves */
	/* read in ascending order: the kernel may read further ahead (an
	 * image's data extents, cold, came in 10-20% sooner) */
	if (c->in->kind == PDD_KIND_FILE && !c->in->direct && !c->in->stream)
		(void)posix_fadvise(c->in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (!c->out->direct && !c->out->stream && (c->o->sync || c->map) &&
	    c->out->kind == PDD_KIND_FILE)
		c->wb = true;
	c->wb_from = p->out_off;
	pdd_drive_describe(&c->drv, "", p->depth, p->xfer);
	return 0;
}

static void teardown(struct core *c)
{
	pdd_fill_end(c->fill);
	/* buffers a dead engine may still fill are kept to the exit */
	if (pdd_drive_end(&c->drv)) {
		pdd_drive_keep(c->bufs);
		c->bufs = NULL;
	}
	if (c->bufs)
		pdd_bufs_free(c->bufs, c->p->depth, c->p->buf_align, c->p->buf_len);
	if (c->slots)
		for (unsigned int i = 0; i < c->p->depth; i++)
			free(c->slots[i].bad);
	free(c->bufs);
	free(c->slots);
	free(c->todo);
	free(c->fin);
	pdd_seq_free(&c->seq);
}

static double tv_secs(struct timeval tv)
{
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

/* Copy the planned range from in to out; fills r.  Returns 0 when the
 * copy ran (r->err says whether it finished), or -errno when it could not
 * start. */
int pdd_copy(const struct pdd_plan *p, struct pdd_dev *in,
	     struct pdd_dev *out, const struct pdd_opts *o,
	     struct pdd_map *map, struct pdd_result *r)
{
	struct core c = { .p = p, .o = o, .in = in, .out = out, .r = r, .map = map,
			  .part_idx = UINT64_MAX, .limit_idx = UINT64_MAX,
			  .limit_lba = UINT64_MAX };
	struct rusage ru0, ru1;
	int err;

	memset(r, 0, sizeof(*r));
	err = setup(&c);
	if (err) {
		teardown(&c);
		return err;
	}
	getrusage(RUSAGE_SELF, &ru0);
	c.t0 = c.last_save = pdd_now();
	pdd_progress_start(o->progress, c.todo, c.ntodo, c.t0);
	pdd_fill_go(c.fill);	/* set up: the buffers come in from here */
	err = pdd_drive_run(&c.drv);
	pdd_progress_end();
	r->recovered = c.drv.eng[PDD_IN].recovered + c.drv.eng[PDD_OUT].recovered;
	if (err) {
		core_note_death(&c);
		core_cut_by_death(&c);
	}
	core_partial_done(&c);
	core_sparse_end(&c, true);	/* a failure is recorded in r */
	if (map)		/* flushes the output first */
		core_save_map(&c, !r->err && !r->signal);
	else if (o->sync && r->out_bytes) {
		err = pdd_drive_flush(&c.drv, PDD_OUT, out);
		if (err && !r->err) {
			r->err = err;
			r->err_op = PDD_OP_FLUSH;
		}
		r->unflushed = err && r->err_op != PDD_OP_FLUSH;
	}

	r->secs = pdd_now() - c.t0;
	getrusage(RUSAGE_SELF, &ru1);
	r->user_secs = tv_secs(ru1.ru_utime) - tv_secs(ru0.ru_utime);
	r->sys_secs = tv_secs(ru1.ru_stime) - tv_secs(ru0.ru_stime);
	core_hash_end(&c);	/* after the flushes, before its buffers go */
	teardown(&c);
	/* a file system may report a failed write-back only at close (NFS,
	 * FUSE): the output's descriptors are closed here, and checked.  An
	 * NBD export's connections stay for verify=: a server may serve one
	 * client and end with it (qemu-nbd without --persistent) */
	err = out->kind == PDD_KIND_NBD ? 0 : pdd_dev_close(out);
	if (err && !r->err) {
		r->err = err;
		r->err_op = PDD_OP_CLOSE;
	}
	core_say_end(&c);
	return 0;
}
