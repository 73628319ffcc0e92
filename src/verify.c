// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verify=1 and verify=only: read the input range and the output range
 * again and compare them, block by block of bs.
 *
 * Both paths are opened afresh for reading, with O_DIRECT where the file
 * takes it, so that what is compared comes from the devices and not from
 * pages the copy left in the cache.  Each side is read through the
 * engine the copy gave it (an sg device through the sg engine), in the
 * driver's loop the copy runs in (drive.c), with as many transfers in
 * flight as the copy had: each transfer is a pair of reads, one of each
 * side, both submitted at once, and the pair is compared when both are
 * back.  Transfers finish in any order; each one only adds to the
 * counts, and the first differing block is the lowest seen.
 *
 * An NBD export is read over the copy's connections where they are
 * still open, else over a new one.
 *
 * A side that ends inside the range (an output file shorter than the
 * range) leaves its missing blocks unmatched: they count as differing.
 * A read error stops the comparison as it stops a copy.
 *
 * With a hash (verify=hash, and the digests of a resumed hash=) only the
 * output is read, the same way, and each transfer is fed to the hash
 * in order as soon as it and those before it are back; its buffer is
 * reused once the hash threads are done with it (src/hash.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drive.h"
#include "engine.h"
#include "hash.h"
#include "pdd.h"

struct vslot {
	struct pdd_req rq[2];		/* the read of each side in flight */
	char *buf[2];			/* each side's data */
	uint64_t rel;			/* where the transfer starts in the range */
	size_t len;			/* its bytes */
	size_t got[2];			/* bytes read of each side so far */
	bool ended[2];			/* the side ended at got[] */
	bool buffered[2];		/* the direct descriptor refused it */
	unsigned int pending;		/* reads in flight: 0, 1 or 2 */
	bool cut;			/* a stop gave up one of the reads */
	bool ready;			/* with a hash: read, waiting its turn */
	uint64_t entries;		/* with a hash: entries fed up to it */
};

struct verifier {
	const struct pdd_plan *p;
	const struct pdd_opts *o;
	struct pdd_result *r;
	struct pdd_dev side[2];		/* both opened again for reading */
	uint64_t off[2];		/* the range's first byte in each */
	uint64_t total;			/* bytes to compare */
	uint64_t ntrans, next;		/* transfers, and the next to start */
	struct vslot *slots;
	unsigned int nslots;
	unsigned int *idle;		/* indexes of idle slots, a stack */
	unsigned int nidle;
	void **bufs;			/* 2 per slot: input, output */
	struct pdd_drive drv;		/* each side's engine, and the loop */
	const void *lent[2];		/* NBD connections the copy lent a side */
	bool stop;			/* an error or a signal: start nothing */
	uint64_t err_idx;		/* transfer of the error in r */
	int err_side;
	/* with a hash: the output alone is read and fed to h in order */
	struct pdd_hash *h;
	uint64_t fed, freed;		/* transfers below are fed, and back */
	struct vslot **byidx;		/* transfer i's slot, at i % nslots */
};

/* Buffers per slot: both sides' to compare, the output's to hash. */
static unsigned int per_slot(const struct verifier *v)
{
	return v->h ? 1 : 2;
}

/* Keep the error of the lowest transfer, as the copy does. */
static void record(struct verifier *v, uint64_t idx, int k, uint64_t off, size_t len,
		   int err)
{
	struct pdd_result *r = v->r;

	v->stop = true;
	if (r->err && idx >= v->err_idx)
		return;
	r->err = err;
	r->err_op = PDD_OP_READ;
	r->err_off = off;
	r->err_len = len;
	v->err_idx = idx;
	v->err_side = k;
}

/* Hand the engine what is left of side k's read of transfer s. */
static void submit(struct verifier *v, struct vslot *s, int k)
{
	struct pdd_req *rq = &s->rq[k];
	const struct pdd_dev *d = &v->side[k];

	rq->op = PDD_OP_READ;
	rq->positional = true;
	rq->buf = s->buf[k] + s->got[k];
	rq->len = s->len - s->got[k];
	rq->off = v->off[k] + s->rel + s->got[k];
	rq->bad_off = UINT64_MAX;
	rq->fd = s->buffered[k] ? d->fd_buf : pdd_dev_pick_fd(d, rq->off, rq->len, rq->buf);
	s->pending++;		/* one the engine refuses comes back failed */
	pdd_drive_submit(&v->drv, k, rq);
}

static void start(struct verifier *v)
{
	unsigned int i = v->idle[--v->nidle];
	struct vslot *s = &v->slots[i];
	uint64_t idx = v->next++;

	s->rel = idx * v->p->xfer;
	s->len = v->total - s->rel < v->p->xfer ? (size_t)(v->total - s->rel) : v->p->xfer;
	s->cut = false;
	for (int k = PDD_IN; k <= PDD_OUT; k++) {
		s->got[k] = 0;
		s->ended[k] = false;
		s->buffered[k] = false;
		s->rq[k].idx = idx;
	}
	s->ready = false;
	if (v->h) {		/* the input is not read */
		s->ended[PDD_IN] = true;
		v->byidx[idx % v->nslots] = s;
	} else {
		submit(v, s, PDD_IN);
	}
	submit(v, s, PDD_OUT);
}

/* Both reads of s are back: count its differing blocks.  A block either
 * side could not fill (it ended first) differs. */
static void compare(struct verifier *v, struct vslot *s)
{
	struct pdd_result *r = v->r;
	uint64_t bs = v->p->bs;
	/* of the output, from where a standard output was left */
	uint64_t blk = (v->off[PDD_OUT] - v->p->out_base + s->rel) / bs;

	for (size_t pos = 0; pos < s->len; pos += bs, blk++) {
		size_t n = s->len - pos < bs ? s->len - pos : bs;

		r->verify_blocks++;
		if (pos + n <= s->got[PDD_IN] && pos + n <= s->got[PDD_OUT] &&
		    !memcmp(s->buf[PDD_IN] + pos, s->buf[PDD_OUT] + pos, n))
			continue;
		if (!r->verify_diff || blk < r->verify_first)
			r->verify_first = blk;
		r->verify_diff++;
	}
}

/* Side k of s has all its bytes, or all the side has. */
static bool side_done(const struct vslot *s, int k)
{
	return s->got[k] == s->len || s->ended[k];
}

/* With a hash: feed the transfers that are back, in order, and give back
 * the slots the hash is done with.  A transfer the output ended in feeds
 * what it has; one cut by a stop or an error ends the feeding (the
 * digests are not used then). */
static void feed(struct verifier *v)
{
	uint64_t done = pdd_hash_consumed(v->h);

	while (v->fed < v->next) {
		struct vslot *s = v->byidx[v->fed % v->nslots];

		if (!s->ready || (s->got[PDD_OUT] &&
				  pdd_hash_feed(v->h, s->buf[PDD_OUT], s->got[PDD_OUT])))
			break;
		s->entries = pdd_hash_fed(v->h);
		v->r->verify_blocks += (s->got[PDD_OUT] + v->p->bs - 1) / v->p->bs;
		v->fed++;
	}
	while (v->freed < v->fed && v->byidx[v->freed % v->nslots]->entries <= done) {
		struct vslot *s = v->byidx[v->freed++ % v->nslots];

		v->idle[v->nidle++] = (unsigned int)(s - v->slots);
	}
}

static void on_done(void *ctx, struct pdd_req *rq)
{
	struct verifier *v = ctx;
	int k = v->h ? PDD_OUT : (int)(rq->buf_idx % 2);
	struct vslot *s = &v->slots[rq->buf_idx / per_slot(v)];
	const struct pdd_dev *d = &v->side[k];

	s->pending--;
	if (rq->res == -EINVAL && rq->fd == d->fd && d->fd != d->fd_buf && !v->stop) {
		/* the file system wants more alignment than it reports: read
		 * this piece through the page cache instead */
		pdd_info(1, "verify: '%s' refused direct I/O at byte %" PRIu64 ", reading it buffered",
			 d->name, rq->off);
		s->buffered[k] = true;
		submit(v, s, k);
	} else if (rq->res == -ECANCELED) {
		s->cut = true;		/* a stop gave it up on a silent device */
	} else if (rq->res < 0) {
		record(v, rq->idx, k, rq->off, rq->len, (int)rq->res);
	} else if (rq->res == 0) {
		s->ended[k] = true;
	} else {
		s->got[k] += (size_t)rq->res;
		if (!side_done(s, k) && !v->stop)
			submit(v, s, k);	/* the rest of a short read */
	}
	if (s->pending)
		return;
	/* a transfer cut short by a stop is not compared, nor one past the
	 * error that ends the comparison */
	if (side_done(s, PDD_IN) && side_done(s, PDD_OUT) && !s->cut &&
	    !(v->r->err && rq->idx >= v->err_idx)) {
		if (v->h) {	/* fed in its turn, and its slot kept till then */
			s->ready = true;
			feed(v);
			return;
		}
		compare(v, s);
	}
	v->idle[v->nidle++] = (unsigned int)(s - v->slots);
}

/* Start transfers while slots are idle, until an error or a signal. */
static void on_turn(void *ctx, double now)
{
	struct verifier *v = ctx;

	(void)now;
	if (v->h) {
		/* before its counts are read: what it finishes later rings */
		pdd_hash_ack(v->h);
		feed(v);
	}
	while (!v->stop && v->next < v->ntrans && v->nidle)
		start(v);
}

/* With a hash: its descriptor while it holds slots (fed, not given
 * back); acknowledged at the turn's start. */
static int on_pending(void *ctx)
{
	struct verifier *v = ctx;

	return v->h && v->freed < v->fed ? pdd_hash_fd(v->h) : -1;
}

static void on_stop(void *ctx, int sig)
{
	struct verifier *v = ctx;

	v->r->signal = sig;
	v->stop = true;
}

/* SIGUSR1: how far the comparison is. */
static void on_report(void *ctx)
{
	const struct verifier *v = ctx;
	const struct pdd_result *r = v->r;

	if (v->h) {
		pdd_error("reading back: %" PRIu64 " of %" PRIu64 " bytes so far",
			  v->fed * v->p->xfer < v->total ? v->fed * v->p->xfer : v->total,
			  v->total);
		return;
	}
	pdd_error("verify: %" PRIu64 " of %" PRIu64 " blocks of %" PRIu64
		  " bytes compared so far, %" PRIu64 " differ%s", r->verify_blocks,
		  v->ntrans ? (v->total + v->p->bs - 1) / v->p->bs : 0, v->p->bs,
		  r->verify_diff, r->verify_diff == 1 ? "s" : "");
}

static const struct pdd_drive_ops verify_ops = {
	.turn = on_turn,
	.done = on_done,
	.stop = on_stop,
	.report = on_report,
	.pending_fd = on_pending,
};

/* Transfers in flight: the copy's, each now per buffers (two to compare,
 * one to hash), within the same cap on buffer memory. */
static unsigned int pairs(const struct pdd_plan *p, uint64_t ntrans, unsigned int per)
{
	uint64_t n = p->depth, cap = PDD_MAX_INFLIGHT_BYTES / (per * p->xfer);

	if (n > cap)
		n = cap;
	if (n > ntrans)
		n = ntrans;
	return n ? (unsigned int)n : 1;
}

static int setup(struct verifier *v)
{
	const struct pdd_plan *p = v->p;
	struct pdd_plan one = *p;	/* with a hash: no input engine */
	unsigned int nbufs, per = per_slot(v);
	int err = 0;

	v->nslots = pairs(p, v->ntrans, per);
	nbufs = per * v->nslots;
	v->slots = calloc(v->nslots, sizeof(*v->slots));
	v->idle = calloc(v->nslots, sizeof(*v->idle));
	v->byidx = calloc(v->nslots, sizeof(*v->byidx));
	v->bufs = calloc(nbufs, sizeof(*v->bufs));
	/* a new mapping reads as zeros, which valgrind knows: memcmp() on
	 * buffers io_uring filled behind its back stays clean */
	if (!err && v->bufs)
		err = pdd_bufs_alloc(v->bufs, nbufs, p->buf_align, p->buf_len);
	if (err || !v->slots || !v->idle || !v->byidx || !v->bufs) {
		pdd_error("cannot allocate %u buffers of %zu bytes: %s", nbufs, p->buf_len,
			  strerror(ENOMEM));
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < v->nslots; i++) {
		for (int k = 2 - per; k <= PDD_OUT; k++) {
			unsigned int b = per * i + (per == 2 ? (unsigned int)k : 0);

			v->slots[i].buf[k] = v->bufs[b];
			v->slots[i].rq[k].buf_idx = b;
		}
		v->idle[v->nidle++] = v->nslots - 1 - i;
	}
	v->drv.ops = &verify_ops;
	v->drv.ctx = v;
	if (v->h)
		one.ops[PDD_IN] = NULL;
	err = pdd_drive_start(&v->drv, &one, (const struct pdd_dev *[2]){ &v->side[PDD_IN], &v->side[PDD_OUT] },
			      v->bufs, nbufs, v->nslots);
	if (err)
		return err;
	pdd_drive_describe(&v->drv, v->h ? "reading back: " : "verify: ", v->nslots, p->xfer);
	return 0;
}

static void teardown(struct verifier *v)
{
	/* buffers a dead engine may still fill are kept to the exit */
	if (pdd_drive_end(&v->drv)) {
		pdd_drive_keep(v->bufs);
		v->bufs = NULL;
	}
	if (v->bufs)
		pdd_bufs_free(v->bufs, per_slot(v) * v->nslots, v->p->buf_align, v->p->buf_len);
	free(v->bufs);
	free(v->slots);
	free(v->idle);
	free(v->byidx);
	for (int k = PDD_IN; k <= PDD_OUT; k++)
		if (v->lent[k] && v->side[k].nbd == v->lent[k])
			v->side[k].nbd = NULL;	/* the copy's, closed with its side */
	pdd_dev_close(&v->side[PDD_IN]);
	pdd_dev_close(&v->side[PDD_OUT]);
}

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

static void report(const struct verifier *v)
{
	const struct pdd_result *r = v->r;
	uint64_t bs = v->p->bs, all = v->ntrans ? (v->total + bs - 1) / bs : 0;

	if (r->err) {
		const struct pdd_dev *d = &v->side[v->err_side];

		pdd_error("error reading '%s' at block %" PRIu64 ": %s", d->name,
			  (r->err_off - (v->err_side == PDD_IN ? v->p->in_base : v->p->out_base)) / bs,
			  pdd_strerror(r->err));
		if (v->h)
			return;	/* the caller says what it means */
		pdd_error("verify stopped: %" PRIu64 " of %" PRIu64 " blocks of %" PRIu64
			  " bytes compared", r->verify_blocks, all, bs);
		return;
	}
	if (v->h)
		return;
	if (r->signal) {
		pdd_error("verify stopped by SIG%s: %" PRIu64 " of %" PRIu64 " blocks of %" PRIu64
			  " bytes compared, %" PRIu64 " differ%s", sigabbrev_np(r->signal),
			  r->verify_blocks, all, bs, r->verify_diff,
			  r->verify_diff == 1 ? "s" : "");
		return;
	}
	if (r->verify_diff == 1)
		pdd_error("verify: 1 of %" PRIu64 " block%s of %" PRIu64
			  " bytes differs: block %" PRIu64 " of '%s'",
			  r->verify_blocks, plural(r->verify_blocks), bs, r->verify_first,
			  v->side[PDD_OUT].name);
	else if (r->verify_diff)
		pdd_error("verify: %" PRIu64 " of %" PRIu64 " blocks of %" PRIu64
			  " bytes differ, the first at block %" PRIu64 " of '%s'",
			  r->verify_diff, r->verify_blocks, bs, r->verify_first,
			  v->side[PDD_OUT].name);
	else if (v->o->status != PDD_STATUS_NONE && v->o->status != PDD_STATUS_JSON)
		pdd_info(0, "verify: %" PRIu64 " block%s of %" PRIu64 " bytes compared, all identical",
			 r->verify_blocks, plural(r->verify_blocks), bs);
}

/* Open the sides, read and compare or hash, close; then the report. */
static int run(struct verifier *v, const struct pdd_dev *in, const struct pdd_dev *out)
{
	struct pdd_result *r = v->r;
	double t0 = pdd_now();
	int err = 0;

	v->side[PDD_IN].fd = v->side[PDD_IN].fd_buf = -1;
	v->side[PDD_OUT].fd = v->side[PDD_OUT].fd_buf = -1;
	v->ntrans = v->total / v->p->xfer + (v->total % v->p->xfer != 0);
	r->verified = false;
	r->verify_blocks = r->verify_diff = r->verify_first = 0;
	v->lent[PDD_IN] = in ? in->nbd : NULL;
	v->lent[PDD_OUT] = out->nbd;
	if (in)
		err = pdd_verify_open(&v->side[PDD_IN], in, STDIN_FILENO, v->o->conns);
	if (!err)
		err = pdd_verify_open(&v->side[PDD_OUT], out, STDOUT_FILENO, v->o->conns);
	if (!err)
		err = setup(v);
	if (err) {
		teardown(v);
		return err;
	}
	err = pdd_drive_run(&v->drv);
	if (err && !r->err) {
		r->err = err;
		r->err_op = PDD_OP_NONE;
		pdd_drive_say_failed(&v->drv, v->h ? "reading back" : "verify", pdd_strerror(err));
	}
	/* every transfer fed, or the loop ended for nothing it was told */
	if (!err && v->h && !r->err && !r->signal && v->fed != v->ntrans) {
		r->err = -EIO;
		r->err_op = PDD_OP_NONE;
		pdd_error("reading back: %" PRIu64 " of %" PRIu64 " transfers hashed", v->fed,
			  v->ntrans);
	}
	teardown(v);
	r->verify_secs = pdd_now() - t0;
	r->verified = !r->err && !r->signal;
	if (r->err_op == PDD_OP_READ || !r->err)
		report(v);
	return 0;
}

/*
 * Compare the input range with the output range.  After a copy (verify=1)
 * the range is what the copy wrote; with verify=only it is the plan's,
 * ending where the input ends, as a copy would.  Fills the verify fields
 * of r, and r->err or r->signal when the comparison could not finish.
 * Returns 0 when it ran, -errno when it could not start.
 */
int pdd_verify(const struct pdd_plan *p, const struct pdd_dev *in,
	       const struct pdd_dev *out, const struct pdd_opts *o,
	       struct pdd_result *r)
{
	struct verifier v = { .p = p, .o = o, .r = r,
			      .off = { p->in_off, p->out_off } };

	if (o->verify == PDD_VERIFY_AFTER) {
		v.total = r->done;
	} else {
		v.total = p->total;
		if (in->size_known && in->kind != PDD_KIND_ZERO)
			v.total = in->size <= p->in_off ? 0 :
				  in->size - p->in_off < v.total ? in->size - p->in_off : v.total;
	}
	return run(&v, in, out);
}

/*
 * Read the output's bytes [p->out_off, +len) back and feed them to h in
 * order (verify=hash, and the digests of a resumed hash=).  A read error
 * or a stop is in r (err, signal), the error said; an output that ends
 * inside the range feeds what it has.  0 when it ran, -errno when it
 * could not start.
 */
int pdd_verify_read(const struct pdd_plan *p, const struct pdd_dev *out,
		    const struct pdd_opts *o, struct pdd_result *r,
		    struct pdd_hash *h, uint64_t len)
{
	struct verifier v = { .p = p, .o = o, .r = r, .h = h, .total = len,
			      .off = { p->in_off, p->out_off } };

	return run(&v, NULL, out);
}
