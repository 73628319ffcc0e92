// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the copy core does for map=: the pieces of the range still to
 * copy, the written bytes that become finished once the output is
 * flushed, and the saves.  A saved map never claims more than the output
 * holds after a flush.
 */
#include <errno.h>
#include <stdlib.h>

#include "core.h"

/* Input [pos, pos+len) is written: finished once the output is flushed.
 * Transfers retire in order, so this mostly grows the last entry. */
static int note_written(struct core *c, uint64_t pos, uint64_t len)
{
	struct pdd_extent *last = c->nfin ? &c->fin[c->nfin - 1] : NULL, *f;

	if (!len)
		return 0;
	if (last && last->pos + last->size == pos) {
		last->size += len;
		return 0;
	}
	f = core_grow(c->fin, c->nfin, &c->fincap, sizeof(*c->fin));
	if (!f)
		return -ENOMEM;
	c->fin = f;
	c->fin[c->nfin++] = (struct pdd_extent){ .pos = pos, .size = len,
						 .status = PDD_MAP_DONE };
	return 0;
}

/* Transfer s is written: all of it but its zero-filled blocks. */
int core_note_slot(struct core *c, const struct slot *s)
{
	uint64_t pos = c->p->in_off + s->rel, end = pos + s->got;
	int err = 0;

	for (size_t i = 0; !err && i < s->nbad; i++) {
		err = note_written(c, pos, s->bad[i] - pos);
		pos = s->bad[i] + c->in->lbs < end ? s->bad[i] + c->in->lbs : end;
	}
	return err ? err : note_written(c, pos, end - pos);
}

/*
 * map=: mark what was written since the last save finished and save the
 * map.  The output is flushed first, so a map on disk never claims bytes
 * the output might still lose; once a flush has failed, nothing written
 * is marked any more (a later flush could succeed without the lost
 * pages).  A save that fails stops the copy.
 */
void core_save_map(struct core *c, bool finished)
{
	struct pdd_map *m = c->map;
	int err = 0;

	if (c->nfin && !c->flush_failed) {
		/* zeros not written past a file's end are in it only once it
		 * is that long (sparse=); a file that cannot be, like one that
		 * cannot be flushed, gets nothing more marked */
		int ferr = core_sparse_end(c, false);

		if (ferr) {
			c->flush_failed = true;
		} else {
			ferr = pdd_drive_flush(&c->drv, PDD_OUT, c->out);
			if (ferr) {
				c->flush_failed = true;
				core_fail(c, pdd_seq_next_read(&c->seq), PDD_OP_FLUSH, 0, 0, ferr);
			}
		}
	}
	for (size_t i = 0; !c->flush_failed && !err && i < c->nfin; i++)
		err = pdd_map_set(m, c->fin[i].pos, c->fin[i].size, PDD_MAP_DONE);
	c->nfin = 0;
	m->cur_pos = c->p->in_off + c->r->done;
	/* after the flush: one that failed is not the end of the work */
	m->cur_status = finished && !c->r->err ? PDD_MAP_DONE : PDD_MAP_UNTRIED;
	if (!err)
		err = pdd_map_save(m);	/* says why it failed */
	if (err && !c->flush_failed)
		core_fail(c, pdd_seq_next_read(&c->seq), PDD_OP_MAP, 0, 0, err);
	c->last_save = pdd_now();
}

/* The smallest piece both sides can take at any multiple of it from the
 * range's start: the input's logical block, and what direct I/O needs. */
static uint64_t grain(const struct core *c)
{
	uint64_t g = c->in->lbs ? c->in->lbs : 1;
	bool out_blocks = c->out->kind == PDD_KIND_SG || c->out->kind == PDD_KIND_RAW ||
			  c->out->kind == PDD_KIND_BLOCK || c->out->kind == PDD_KIND_NBD;

	/* an sg output writes whole blocks whether direct or not, and an
	 * NBD server may refuse less than its smallest block */
	if (out_blocks && c->out->lbs > g)
		g = c->out->lbs;
	if (c->in->direct && c->in->io_align > g)
		g = c->in->io_align;
	if (c->out->direct && c->out->io_align > g)
		g = c->out->io_align;
	return g;
}

/* What to copy, relative to the range's start: all of it, or with a map
 * what it does not mark finished; and how many transfers that makes. */
int core_plan_todo(struct core *c, uint64_t *ntrans)
{
	const struct pdd_plan *p = c->p;
	int err;

	*ntrans = 0;
	if (!c->map) {
		c->todo = malloc(sizeof(*c->todo));
		if (!c->todo)
			return -ENOMEM;
		c->todo[0] = (struct pdd_extent){ .pos = 0, .size = p->total };
		c->ntodo = 1;
		*ntrans = PDD_UNTIL_EOF;
		if (p->total != PDD_UNTIL_EOF)
			*ntrans = p->total / p->xfer + (p->total % p->xfer != 0);
		return 0;
	}
	err = pdd_map_todo(c->map, p->in_off, p->in_off + p->total, grain(c),
			   &c->todo, &c->ntodo);
	if (err)
		return err;
	for (size_t i = 0; i < c->ntodo; i++) {
		c->todo[i].pos -= p->in_off;
		*ntrans += c->todo[i].size / p->xfer + (c->todo[i].size % p->xfer != 0);
	}
	c->cur_pos = c->ntodo ? c->todo[0].pos : 0;
	/* the done mark starts where the first unfinished byte is */
	c->r->done = c->ntodo ? c->todo[0].pos : p->total;
	return 0;
}
