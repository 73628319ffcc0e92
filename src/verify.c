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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "drive.h"
#include "engine.h"
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
};

static const char *mode(const struct pdd_opts *o)
{
	return o->verify == PDD_VERIFY_ONLY ? "only" : "1";
}

/* What verify= cannot do, refused before anything is written (and in
 * --dry-run) with exit status 31. */
int pdd_verify_check(const struct pdd_opts *o, const struct pdd_dev *in,
		     const struct pdd_dev *out, const struct pdd_plan *p)
{
	const char *m = mode(o);

	if (o->verify == PDD_VERIFY_NONE)
		return 0;
	if (in->stream || p->total == PDD_UNTIL_EOF) {
		pdd_error("verify=%s: '%s' is a %s, which cannot be read again", m,
			  in->name, pdd_kind_name(in->kind));
		return -EINVAL;
	}
	if (out->kind == PDD_KIND_NULL || out->kind == PDD_KIND_ZERO) {
		pdd_error("verify=%s: '%s' discards what is written: there is nothing to compare",
			  m, out->name);
		return -EINVAL;
	}
	if (out->stream && (out->flags & PDD_F_APPEND) && out->seekable) {
		pdd_error("verify=%s and oflag=append contradict: the range written to '%s' is not known",
			  m, out->name);
		return -EINVAL;
	}
	if (out->stream) {
		pdd_error("verify=%s: '%s' is a %s, which cannot be read back", m,
			  out->name, pdd_kind_name(out->kind));
		return -EINVAL;
	}
	if (o->verify == PDD_VERIFY_AFTER && o->coe) {
		pdd_error("verify=1 and coe=1 contradict: blocks written as zeros cannot match");
		return -EINVAL;
	}
	if (o->map) {
		pdd_error("verify=%s and map= contradict: a run with a map copies only part of the range",
			  m);
		return -EINVAL;
	}
	return 0;
}

/*
 * Open d's file again for reading into v: with O_DIRECT on a device, and
 * on a regular file when its file system takes it; otherwise buffered,
 * after asking the kernel to drop the file's clean cached pages so that
 * what is read comes from the storage where it can.  A buffered
 * descriptor is kept beside a direct one for pieces direct I/O cannot
 * take, as the copy does.  An sg device is opened for reading and
 * writing, as the driver's asynchronous interface needs (or its open
 * descriptor shared), and read with SCSI READ commands as in the copy.
 * An NBD side is read over the copy's connections while they are open,
 * or connected to again.
 */
static int open_side(struct pdd_dev *v, const struct pdd_dev *d, int std_fd,
		     unsigned int conns)
{
	bool want = d->kind == PDD_KIND_BLOCK || d->kind == PDD_KIND_RAW ||
		    d->kind == PDD_KIND_FILE;
	const char *path = d->path;
	char proc[32];
	int err;

	*v = *d;		/* its name, kind, sizes and alignment */
	v->output = false;
	v->stream = false;
	v->direct = false;
	v->own_fd = true;
	v->fd = v->fd_buf = -1;
	v->nbd = NULL;		/* the copy's connections are d's to close */
	if (d->kind == PDD_KIND_NBD && d->nbd) {
		/* the copy's connections, still open (the input's, and both
		 * with verify=only): a server may take one client at a time
		 * (qemu-nbd's default), and an NBD client keeps no cache to
		 * read past.  teardown() gives them back. */
		v->nbd = d->nbd;
		pdd_info(1, "verify: reading '%s' over the copy's connections", v->name);
		return 0;
	}
	if (d->kind == PDD_KIND_NBD) {
		/* not kept open by the copy (it keeps them all for this): new
		 * connections, as a file is opened again */
		err = pdd_dev_open(v, d->path, false, d->flags);
		v->timeout_ms = d->timeout_ms;
		if (!err)
			err = pdd_nbd_connect(v, conns);
		if (!err)
			pdd_info(1, "verify: reading '%s' over a new connection", v->name);
		return err;
	}
	if (!strcmp(path, "-")) {
		/* standard input or output redirected from or to a file (the
		 * shell's descriptor: the copy has closed its own by now) */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", std_fd);
		path = proc;
	}
	if (d->kind == PDD_KIND_SG) {
		/* the sg driver lets no one else open a device held with
		 * O_EXCL (excl), pdd included: share the copy's descriptor
		 * while it is open, and claim the device again if not */
		if (d->fd >= 0)
			v->fd = fcntl(d->fd, F_DUPFD_CLOEXEC, 0);
		else
			v->fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK |
				     ((d->flags & PDD_F_EXCL) ? O_EXCL : 0));
		v->fd_buf = v->fd;
		if (v->fd < 0)
			goto fail;
		pdd_info(1, "verify: reading '%s' with SCSI commands", v->name);
		return 0;
	}
	if (want) {
		v->fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
		v->direct = v->fd >= 0;
		if (v->fd < 0 && !(errno == EINVAL && d->kind == PDD_KIND_FILE))
			goto fail;
	}
	v->fd_buf = open(path, O_RDONLY | O_CLOEXEC);
	if (v->fd_buf < 0)
		goto fail;
	if (!v->direct)
		v->fd = v->fd_buf;
	(void)posix_fadvise(v->fd_buf, 0, 0, POSIX_FADV_DONTNEED);
	pdd_info(1, "verify: reading '%s' %s", v->name,
		 v->direct ? "with direct I/O" : "through the page cache");
	return 0;
fail:
	err = -errno;
	pdd_error("cannot open '%s' for verifying: %s", d->name, strerror(errno));
	pdd_dev_close(v);
	return err;
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
	submit(v, s, PDD_IN);
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

static void on_done(void *ctx, struct pdd_req *rq)
{
	struct verifier *v = ctx;
	int k = (int)(rq->buf_idx % 2);
	struct vslot *s = &v->slots[rq->buf_idx / 2];
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
	    !(v->r->err && rq->idx >= v->err_idx))
		compare(v, s);
	v->idle[v->nidle++] = (unsigned int)(s - v->slots);
}

/* Start transfers while slots are idle, until an error or a signal. */
static void on_turn(void *ctx, double now)
{
	struct verifier *v = ctx;

	(void)now;
	while (!v->stop && v->next < v->ntrans && v->nidle)
		start(v);
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
};

/* Transfers in flight: the copy's, each now two buffers, within the same
 * cap on buffer memory. */
static unsigned int pairs(const struct pdd_plan *p, uint64_t ntrans)
{
	uint64_t n = p->depth, cap = PDD_MAX_INFLIGHT_BYTES / (2 * p->xfer);

	if (n > cap)
		n = cap;
	if (n > ntrans)
		n = ntrans;
	return n ? (unsigned int)n : 1;
}

static int setup(struct verifier *v)
{
	const struct pdd_plan *p = v->p;
	unsigned int nbufs;
	int err = 0;

	v->nslots = pairs(p, v->ntrans);
	nbufs = 2 * v->nslots;
	v->slots = calloc(v->nslots, sizeof(*v->slots));
	v->idle = calloc(v->nslots, sizeof(*v->idle));
	v->bufs = calloc(nbufs, sizeof(*v->bufs));
	for (unsigned int i = 0; !err && v->bufs && i < nbufs; i++) {
		err = -posix_memalign(&v->bufs[i], p->buf_align, p->buf_len);
		/* io_uring fills them behind valgrind's back; zeros once keep
		 * memcmp() on them clean under memcheck */
		if (!err)
			memset(v->bufs[i], 0, p->buf_len);
	}
	if (err || !v->slots || !v->idle || !v->bufs) {
		pdd_error("cannot allocate %u buffers of %zu bytes: %s", nbufs, p->buf_len,
			  strerror(ENOMEM));
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < v->nslots; i++) {
		for (int k = PDD_IN; k <= PDD_OUT; k++) {
			v->slots[i].buf[k] = v->bufs[2 * i + k];
			v->slots[i].rq[k].buf_idx = 2 * i + k;
		}
		v->idle[v->nidle++] = v->nslots - 1 - i;
	}
	v->drv.ops = &verify_ops;
	v->drv.ctx = v;
	err = pdd_drive_start(&v->drv, p, (const struct pdd_dev *[2]){ &v->side[PDD_IN], &v->side[PDD_OUT] },
			      v->bufs, nbufs, v->nslots);
	if (err)
		return err;
	pdd_drive_describe(&v->drv, "verify: ", v->nslots, p->xfer);
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
		for (unsigned int i = 0; i < 2 * v->nslots; i++)
			free(v->bufs[i]);
	free(v->bufs);
	free(v->slots);
	free(v->idle);
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
		pdd_error("verify stopped: %" PRIu64 " of %" PRIu64 " blocks of %" PRIu64
			  " bytes compared", r->verify_blocks, all, bs);
		return;
	}
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
	double t0 = pdd_now();
	int err;

	v.side[PDD_IN].fd = v.side[PDD_OUT].fd = -1;
	if (o->verify == PDD_VERIFY_AFTER) {
		v.total = r->done;
	} else {
		v.total = p->total;
		if (in->size_known && in->kind != PDD_KIND_ZERO)
			v.total = in->size <= p->in_off ? 0 :
				  in->size - p->in_off < v.total ? in->size - p->in_off : v.total;
	}
	v.ntrans = v.total / p->xfer + (v.total % p->xfer != 0);
	r->verified = false;
	r->verify_blocks = r->verify_diff = r->verify_first = 0;

	v.lent[PDD_IN] = in->nbd;
	v.lent[PDD_OUT] = out->nbd;
	err = open_side(&v.side[PDD_IN], in, STDIN_FILENO, o->conns);
	if (!err)
		err = open_side(&v.side[PDD_OUT], out, STDOUT_FILENO, o->conns);
	if (!err)
		err = setup(&v);
	if (err) {
		teardown(&v);
		return err;
	}
	err = pdd_drive_run(&v.drv);
	if (err && !r->err) {
		r->err = err;
		r->err_op = PDD_OP_NONE;
		pdd_drive_say_failed(&v.drv, "verify", pdd_strerror(err));
	}
	teardown(&v);
	r->verify_secs = pdd_now() - t0;
	r->verified = !r->err && !r->signal;
	if (r->err_op == PDD_OP_READ || !r->err)
		report(&v);
	return 0;
}
