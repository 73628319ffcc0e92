// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * How a copy that stops is cut: a write that failed (or was given up)
 * after moving some bytes counts them once everything below it is
 * written, and an engine that dies ends the copy at the lowest transfer
 * it loses.  Part of the copy core (copy.c).
 */
#include "core.h"

/* Transfer idx's write stops for good after put bytes of it: when
 * everything below it is written, those count too (core_partial_done). */
void core_cut_write(struct core *c, uint64_t idx, size_t put)
{
	if (put && idx < c->part_idx) {
		c->part_idx = idx;
		c->part_put = put;
	}
}

/* After the loop has drained: the lowest failed write moved some bytes
 * before it failed (a short write that ended at the device's end, or
 * at a bad block).  When everything below it is written, those bytes
 * are copied too, and count in the done mark and the records out. */
void core_partial_done(struct core *c)
{
	struct slot *s = slot_of(c, c->part_idx);

	if (c->part_idx == UINT64_MAX || pdd_seq_done(&c->seq) != c->part_idx)
		return;
	/* the transfer, cut where its write stopped: zero-filled blocks
	 * past that were not written, and those before it were */
	s->got = c->part_put;
	while (s->nbad && s->bad[s->nbad - 1] >= in_start(c, s) + s->got)
		s->nbad--;
	if (c->part_idx == c->limit_idx && s->got < s->len)
		c->limit_idx = UINT64_MAX;	/* the limit's block is not written */
	core_retire_slot(c, c->part_idx);
}

/*
 * An engine died (drive.c): nothing more starts, and the copy stops at
 * the lowest transfer it loses.  Once the output's engine is dead no
 * write comes back, so that is the lowest not yet written; otherwise
 * (the input's engine, or poll() itself failed) the writes already
 * issued may still finish, and it is the lowest whose write was not.
 * Like any error it gives way to one of a lower transfer (core_record),
 * and an error of a higher one gives way to it, even one seen before:
 * the copy stops where the death stopped it.  Noted before the first
 * request the other side hands back after the death, so that an error
 * that request brings, of a transfer the death already lost, does not
 * take its place.
 */
void core_note_death(struct core *c)
{
	const struct pdd_drive *d = &c->drv;

	if (!d->err || c->death_noted)
		return;
	c->death_noted = true;
	core_fail(c, d->dead[PDD_OUT] ? pdd_seq_done(&c->seq) : pdd_seq_to_write(&c->seq),
		  PDD_OP_NONE, 0, 0, d->err);
}

/* An engine died: nothing more starts, so the rest of a write cut short
 * (to be written again from where it stopped) was lost with the output's
 * engine, or never started.  When that is the lowest transfer not yet
 * written, what its write did move counts as a failed write's does
 * (core_partial_done). */
void core_cut_by_death(struct core *c)
{
	uint64_t idx = pdd_seq_done(&c->seq);
	struct slot *s = slot_of(c, idx);

	if (idx < pdd_seq_to_write(&c->seq) && s->put < s->got)
		core_cut_write(c, idx, s->put);
}
