// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sparse=: a write is cut into runs of data and runs of zeros, in grains
 * of the output (src/zero.c finds them).  A run of zeros where the output
 * is known to read as zeros already (oflag=zeroed, or a regular file past
 * the size it had when the copy began) is not written at all; elsewhere
 * it goes to the engine as PDD_OP_ZERO: fallocate PUNCH_HOLE on a file,
 * ZERO_RANGE on a block device (never a discard, whose contents are
 * undefined), WRITE_ZEROES on an NBD export, WRITE SAME(16) without UNMAP
 * on an sg device.  An output that refuses it is written the plain way
 * from then on: the buffer holds the zeros.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "zero.h"

void core_sparse_setup(struct core *c)
{
	const struct pdd_dev *d = c->out;
	struct stat st;

	c->grain = 0;
	c->zero_from = UINT64_MAX;
	c->zero_unit = 1;
	if (!c->p->sparse || d->stream)
		goto plain;
	switch (d->kind) {
	case PDD_KIND_FILE:
		c->zero_mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
		/* past its size now, a file reads as zeros until written */
		if (fstat(d->fd, &st) == 0)
			c->zero_from = (uint64_t)st.st_size;
		break;
	case PDD_KIND_BLOCK:
		/* a device zeroes whole blocks only (EINVAL otherwise) */
		c->zero_mode = FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
		c->zero_unit = d->lbs;
		break;
	case PDD_KIND_NBD:
	case PDD_KIND_SG:	/* WRITE SAME(16); zero_mode means nothing */
		c->zero_mode = 0;
		c->zero_unit = d->lbs;
		/* a server without WRITE_ZEROES is known now: its zero runs
		 * are written plainly from the start (said as a refusal of
		 * the first would be), and skipped with oflag=zeroed */
		if (d->kind == PDD_KIND_NBD && !(d->flags & PDD_F_ZEROED) &&
		    !pdd_nbd_can_zero(d)) {
			pdd_info(1, "'%s' cannot zero a range (%s): zero runs are written",
				 d->name, strerror(EOPNOTSUPP));
			return;
		}
		break;
	default:		/* raw, /dev/null: plain writes */
		goto plain;
	}
	if (d->flags & PDD_F_ZEROED)
		c->zero_from = 0;
	c->grain = c->p->sparse;
	return;
plain:
	if (d->flags & PDD_F_ZEROED)
		pdd_info(0, "oflag=zeroed: no effect, every byte is written to '%s' (%s)",
			 d->name, !c->p->sparse ? "sparse=0" : d->stream ? "a stream" :
			 "it cannot leave a range unwritten");
}

/*
 * Of a run of zeros of len bytes at output offset off: the part that
 * need not be written as data, from off (*zero false: none, the run is
 * data).  What lies past a device's end is written, and fails as it
 * should (fallocate would say nothing of it, and skipping it would claim
 * it copied).  A device zeroes whole blocks only (EINVAL otherwise): the
 * part of a block at either end of a run to be zeroed (a transfer or a
 * hole that starts or ends inside one) is written.
 */
static size_t zero_part(const struct core *c, uint64_t off, size_t len, bool *zero)
{
	const struct pdd_dev *d = c->out;
	size_t head, tail;

	if (d->kind != PDD_KIND_FILE && d->size_known) {
		if (off >= d->size) {
			*zero = false;
			return len;
		}
		if (off + len > d->size)
			len = (size_t)(d->size - off);
	}
	if (off >= c->zero_from)	/* skipped: any length */
		return len;
	head = (size_t)((c->zero_unit - off % c->zero_unit) % c->zero_unit);
	if (head) {
		*zero = false;
		return head < len ? head : len;
	}
	tail = (size_t)((off + len) % c->zero_unit);
	if (tail == len) {
		*zero = false;
		return len;
	}
	return len - tail;
}

/*
 * The write of transfer idx from where it stands (s->put): its next run,
 * submitted, or skipped where the output already holds zeros.  Returns
 * true when it has dealt with the write (submitted a run, or skipped the
 * rest, which the caller then ends); false for a plain write of the rest.
 */
bool core_sparse_write(struct core *c, uint64_t idx, bool *all_done)
{
	struct slot *s = slot_of(c, idx);

	*all_done = false;
	while (c->grain && !c->barrier && s->put < s->got) {
		uint64_t off = c->p->out_off + s->rel + s->put;
		size_t rest = s->got - s->put, run, head = (size_t)(off % c->grain);
		bool zero = false;

		if (s->zeros) {		/* a hole of the input: all zeros */
			run = rest;
			zero = true;
		} else if (head) {	/* up to the next grain: data */
			run = c->grain - head < rest ? c->grain - head : rest;
		} else {
			run = pdd_zero_run(s->buf + s->put, rest, c->grain, &zero);
		}
		if (zero)
			run = zero_part(c, off, run, &zero);
		if (!zero) {
			/* a hole's part written after all (a block's part at
			 * its edge, or past a device's end): zeros, while the
			 * rest of it is still known to be */
			if (s->zeros)
				memset(s->buf + s->put, 0, run);
			core_submit_part(c, idx, PDD_OP_WRITE, run);
			return true;
		}
		if (off >= c->zero_from) {	/* already zeros: nothing to do */
			s->put += run;
			s->skipped += run;
			if (off + run > c->skip_end)
				c->skip_end = off + run;
			continue;
		}
		/* a hole punched past a file's end does not make it longer:
		 * the end does (core_sparse_end) */
		if (off + run > c->zero_from && off + run > c->skip_end)
			c->skip_end = off + run;
		core_submit_part(c, idx, PDD_OP_ZERO, run);
		return true;
	}
	if (c->grain && s->put == s->got) {
		*all_done = true;
		return true;
	}
	return false;
}

/* A PDD_OP_ZERO came back: false when the output cannot zero (the run is
 * then written, and every later one). */
bool core_sparse_zeroed(struct core *c, struct slot *s)
{
	ssize_t res = s->rq.res;

	if (res == -EOPNOTSUPP || res == -EINVAL || res == -ENOTTY || res == -ENODEV) {
		if (c->grain)	/* once, not for each zeroing in flight */
			pdd_info(1, "'%s' cannot zero a range (%s): zero runs are written",
				 c->out->name, strerror((int)-res));
		c->grain = 0;
		return false;
	}
	if (res > 0)
		s->zeroed += (size_t)res;
	return true;
}

static uint64_t lcm(uint64_t a, uint64_t b)
{
	return a / pdd_gcd(a, b) * b;
}

/* The unit a side moves in: its direct I/O multiple, or its block. */
static uint64_t side_unit(const struct pdd_dev *d)
{
	return d->direct && d->io_align > d->lbs ? d->io_align : (d->lbs ? d->lbs : 1);
}

/*
 * Before the first transfer: whether the input's holes can be skipped
 * (a regular file of its own, not the shell's descriptor, which is left
 * where it is; an NBD export's zero extents), and the unit transfers are cut in where data and holes
 * meet: whole grains of the output and whole units of both sides, so
 * that a cut transfer is as aligned as any other.  A unit larger than a
 * transfer cuts nothing; holes that cover whole transfers still count.
 */
void core_holes_setup(struct core *c)
{
	uint64_t cut = lcm(lcm(c->p->sparse ? c->p->sparse : 1, side_unit(c->in)),
			   side_unit(c->out));

	c->holes = c->p->sparse && ((c->in->kind == PDD_KIND_FILE && !c->in->stream &&
				     c->in->std_fd < 0) || c->in->kind == PDD_KIND_NBD);
	c->cut = cut <= c->p->xfer ? cut : 0;
	c->seg_start = c->seg_end = 0;
}

/* What the input holds from off: data or a hole, up to c->seg_end.
 * Returns 0, or -1 when the file system (the server) cannot say. */
static int layout(struct core *c, uint64_t off)
{
	int fd = c->in->fd;
	off_t data, hole;
	uint64_t len;

	c->seg_start = off;
	if (c->in->kind == PDD_KIND_NBD) {
		/* its zero extents, a transfer's worth at a time: the server
		 * is asked again only for a run that may go on past what it
		 * said and is shorter than that */
		if (pdd_nbd_extent(c->in, off, c->p->xfer, &len, &c->seg_hole) || !len)
			return -1;
		c->seg_end = off + len;
		return 0;
	}
	data = lseek(fd, (off_t)off, SEEK_DATA);
	if (data < 0 && errno == ENXIO) {	/* no data from off on */
		c->seg_hole = true;
		c->seg_end = c->in->size > off ? c->in->size : off;
		return 0;
	}
	if (data < 0)
		return -1;
	if ((uint64_t)data > off) {
		c->seg_hole = true;
		c->seg_end = (uint64_t)data;
		return 0;
	}
	hole = lseek(fd, (off_t)off, SEEK_HOLE);
	if (hole < 0)
		return -1;
	c->seg_hole = false;
	c->seg_end = (uint64_t)hole;
	return 0;
}

/*
 * The next transfer starts at rel and is to be *len bytes long: cut it
 * where the input's data and holes meet, so that it is all data (read)
 * or all hole (not read: zeros).  Returns true for a hole.  The layout
 * found is kept, so that a long hole costs one lseek, not one per
 * transfer.
 */
bool core_cut(struct core *c, uint64_t rel, size_t *len)
{
	uint64_t off = c->p->in_off + rel, n;

	if (!c->holes || off >= c->in->size)
		return false;	/* past the end the read finds the end */
	if ((off < c->seg_start || off >= c->seg_end) && layout(c, off)) {
		c->holes = false;
		return false;
	}
	n = c->seg_end - off;
	if (c->seg_hole) {
		if (n >= *len)
			return true;
		if (c->cut)
			n -= n % c->cut;
		if (!c->cut || !n)	/* a hole shorter than a unit is read */
			return false;
		*len = (size_t)n;
		return true;
	}
	if (c->cut) {		/* up to the hole, in whole units */
		n += (c->cut - n % c->cut) % c->cut;
		if (n < *len)
			*len = (size_t)n;
	}
	return false;
}

/*
 * The file could not be made as long as the zeros skipped past its old
 * end (EFBIG, a quota): it holds the copy only up to its size.  At the
 * end the done mark, the counts and what the map is to mark finished
 * come down to there.
 */
static void lower_done(struct core *c, uint64_t size)
{
	struct pdd_result *r = c->r;
	uint64_t done = size > c->p->out_off ? size - c->p->out_off : 0, lost, cut, at;

	if (done >= r->done)
		return;
	lost = r->done - done;
	r->out_bytes -= lost < r->out_bytes ? lost : r->out_bytes;
	/* past the file's size the zeros were skipped, but a run across
	 * its old size was punched */
	cut = lost < r->skip_bytes ? lost : r->skip_bytes;
	r->skip_bytes -= cut;
	lost -= cut;
	r->zero_bytes -= lost < r->zero_bytes ? lost : r->zero_bytes;
	r->done = done;
	at = c->p->in_off + done;
	while (c->nfin && c->fin[c->nfin - 1].pos >= at)
		c->nfin--;
	if (c->nfin && c->fin[c->nfin - 1].pos + c->fin[c->nfin - 1].size > at)
		c->fin[c->nfin - 1].size = at - c->fin[c->nfin - 1].pos;
}

/*
 * A file whose last runs were skipped gets its size: before each map
 * save, and at the end (final), when a failure also lowers the done
 * mark to what the file holds.  A failure is the copy's error, a write
 * at the file's end.
 */
int core_sparse_end(struct core *c, bool final)
{
	uint64_t end = c->skip_end, done = c->p->out_off + c->r->done;
	struct stat st;
	int err;

	if (c->out->kind != PDD_KIND_FILE || !end)
		return 0;
	if (end > done)
		end = done;
	if (fstat(c->out->fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size >= end || ftruncate(c->out->fd, (off_t)end) == 0)
		return 0;
	err = -errno;
	core_fail(c, pdd_seq_next_read(&c->seq), PDD_OP_WRITE, (uint64_t)st.st_size,
		  (size_t)(end - (uint64_t)st.st_size), err);
	if (final)
		lower_done(c, (uint64_t)st.st_size);
	return err;
}
