// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sparse=: a write is cut into runs of data and runs of zeros, in grains
 * of the output (src/zero.c finds them).  A run of zeros where the output
 * is known to read as zeros already (oflag=zeroed, or a regular file past
 * the size it had when the copy began) is not written at all; elsewhere
 * it goes to the engine as PDD_OP_ZERO: fallocate PUNCH_HOLE on a file,
 * ZERO_RANGE on a block device (never a discard, whose contents are
 * undefined), WRITE_ZEROES on an NBD export.  An output that refuses it is
 * written the plain way from then on: the buffer holds the zeros.
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
	/* an input file's holes are not read: its own descriptor only (the
	 * shell's is left where it is); nor an NBD export's zero extents */
	c->holes = c->p->sparse && ((c->in->kind == PDD_KIND_FILE && !c->in->stream &&
				     c->in->std_fd < 0) || c->in->kind == PDD_KIND_NBD);
	if (!c->p->sparse || d->stream)
		return;
	switch (d->kind) {
	case PDD_KIND_FILE:
		c->zero_mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
		/* past its size now, a file reads as zeros until written */
		if (fstat(d->fd, &st) == 0)
			c->zero_from = (uint64_t)st.st_size;
		break;
	case PDD_KIND_BLOCK:
		c->zero_mode = FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
		break;
	case PDD_KIND_NBD:
		c->zero_mode = 0;
		/* a server without WRITE_ZEROES is known now: its zero runs
		 * are written plainly from the start (said as a refusal of
		 * the first would be), and skipped with oflag=zeroed */
		if (!(d->flags & PDD_F_ZEROED) && !pdd_nbd_can_zero(d)) {
			pdd_info(1, "'%s' cannot zero a range (%s): zero runs are written",
				 d->name, strerror(EOPNOTSUPP));
			return;
		}
		break;
	default:		/* sg, raw, /dev/null: plain writes */
		return;
	}
	if (d->flags & PDD_F_ZEROED)
		c->zero_from = 0;
	c->grain = c->p->sparse;
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
		if (!zero) {
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

/* core_hole on an NBD input: from the server's zero extents.  Past the
 * export's end the engine's short read ends the input; a server that
 * cannot say is read in full from then on. */
static ssize_t nbd_hole(struct core *c, uint64_t off, size_t len)
{
	uint64_t size = c->in->size, want, zero;

	if (off >= size)
		return -1;
	want = len < size - off ? len : size - off;
	if (pdd_nbd_zero_extent(c->in, off, want, &zero)) {
		c->holes = false;
		return -1;
	}
	return zero >= want ? (ssize_t)want : -1;
}

/*
 * A read of len bytes at input offset off that lies wholly in a hole of
 * the input file (or a zero extent of an NBD input): how many bytes it
 * would give (len, or to the end of the file), which read as zeros; -1
 * when it holds data, or when the file system cannot say.
 */
ssize_t core_hole(struct core *c, uint64_t off, size_t len)
{
	uint64_t size = c->in->size;
	off_t data;

	if (!c->holes)
		return -1;
	if (c->in->kind == PDD_KIND_NBD)
		return nbd_hole(c, off, len);
	data = lseek(c->in->fd, (off_t)off, SEEK_DATA);
	if (data < 0 && errno == ENXIO)		/* no data from off on */
		return off >= size ? 0 : (ssize_t)(len < size - off ? len : size - off);
	if (data < 0) {
		c->holes = false;
		return -1;
	}
	return (uint64_t)data >= off + len ? (ssize_t)len : -1;
}

/* The end: a file whose last runs were skipped gets its size. */
int core_sparse_end(struct core *c)
{
	uint64_t end = c->skip_end, done = c->p->out_off + c->r->done;
	struct stat st;

	if (c->out->kind != PDD_KIND_FILE || !end)
		return 0;
	if (end > done)
		end = done;
	if (fstat(c->out->fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size < end && ftruncate(c->out->fd, (off_t)end) < 0)
		return -errno;
	return 0;
}
