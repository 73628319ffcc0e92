// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * coe: reading around unreadable blocks.  A read that fails on the
 * medium is read again around its bad blocks (the one the device named,
 * or block by block); with coe=1 each block that still fails is written
 * as zeros, without it the copy stops exactly there.  A zero-filled
 * block is only remembered by its transfer: it is counted for
 * coe_limit= when the transfer's write is issued, and reported and
 * marked bad in the map when the transfer is written, both in ascending
 * order, so nothing past where the copy stops is ever reported.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "core.h"
#include "exitcodes.h"

/* Transfer s is written: its zero-filled blocks are reported (in
 * ascending order, as transfers retire), counted and marked bad in the
 * map.  A block read past where the copy stopped is never reported. */
void core_report_bad(struct core *c, const struct slot *s)
{
	size_t unit = coe_unit(c);
	struct pdd_result *r = c->r;

	for (size_t i = 0; i < s->nbad; i++) {
		uint64_t off = s->bad[i], lba = off / unit, end = in_start(c, s) + s->got, *l;
		size_t n = off + unit <= end ? unit : (size_t)(end - off);

		pdd_error("'%s': LBA %" PRIu64 " (%zu bytes at byte %" PRIu64 ") cannot be read; writing zeros",
			  c->in->name, lba, n, off);
		if (!r->bad_blocks)
			r->bad_first = lba;
		r->bad_last = lba;
		r->bad_blocks++;
		r->bad_unit = (unsigned int)unit;
		/* the list is for the report: without memory, it is cut short */
		l = core_grow(r->bad_lbas, r->nbad_lbas, &c->bad_cap, sizeof(*r->bad_lbas));
		if (l) {
			r->bad_lbas = l;
			r->bad_lbas[r->nbad_lbas++] = lba;
		}
		if (c->map && pdd_map_set(c->map, off, n, PDD_MAP_BAD))
			core_fail(c, pdd_seq_next_read(&c->seq), PDD_OP_MAP, 0, 0, -ENOMEM);
	}
}

/* Where the logical block at got ends in transfer s: blocks count from
 * the transfer's start, and its last one may be short.  got lies on a
 * block boundary unless a short read ended inside a block (an engine may
 * return any count); then this is the end of that block, so that reading
 * one block at a time gets back onto the boundaries. */
static size_t block_end(const struct core *c, const struct slot *s)
{
	size_t unit = coe_unit(c), end = s->got - s->got % unit + unit;

	return end < s->len ? end : s->len;
}

/* coe: the block at got cannot be read; put zeros in its place.  Only
 * the transfer remembers it: what is reported (and marked bad in the
 * map, and counted for coe_limit=) is what is written, in order
 * (limit_bad, report_bad), never a block past where the copy stops. */
static int zero_fill(struct core *c, struct slot *s)
{
	uint64_t *b = core_grow(s->bad, s->nbad, &s->badcap, sizeof(*s->bad));

	if (!b)
		return -ENOMEM;
	s->bad = b;
	/* the block, from its start: a short read may have ended inside
	 * it, and the bytes before are written as read, but the block is
	 * what is unreadable (reported, marked bad, counted) */
	s->bad[s->nbad++] = in_start(c, s) + s->got - s->got % coe_unit(c);
	memset(s->buf + s->got, 0, block_end(c, s) - s->got);
	s->got = block_end(c, s);
	s->known_bad = UINT64_MAX;
	s->tries = 0;
	return 0;
}

/*
 * coe_limit=: transfer s is about to be written.  Transfers are written
 * in ascending order, so counting their zero-filled blocks here counts
 * from the start of the range, whatever order the reads finished in;
 * the copy stops exactly after the limit'th: s is cut there and nothing
 * after it is written.
 */
void core_limit_bad(struct core *c, struct slot *s)
{
	size_t unit = coe_unit(c);

	for (size_t i = 0; c->o->coe_limit && i < s->nbad; i++) {
		uint64_t off = s->bad[i];
		size_t at, n;

		if (++c->nbad_issued < c->o->coe_limit)
			continue;
		at = (size_t)(off - in_start(c, s));
		n = s->len - at < unit ? s->len - at : unit;	/* a short last block */
		s->nbad = i + 1;
		s->got = s->len = at + n;
		pdd_seq_stop_at(&c->seq, s->rq.idx + 1);
		c->limit_idx = s->rq.idx;	/* its error once it is written */
		return;
	}
}

/* The copy stops inside transfer s, after its first got bytes (read, or
 * zero-filled): they are written, nothing after them.  The error is
 * err, at input offset off. */
static void stop_inside(struct core *c, struct slot *s, uint64_t off, int err)
{
	uint64_t idx = s->rq.idx;

	if (!s->got) {
		core_fail(c, idx, PDD_OP_READ, off, coe_unit(c), err);
		return;
	}
	pdd_seq_stop_at(&c->seq, idx + 1);	/* this one is written, in part */
	core_record(c, idx, PDD_OP_READ, off, coe_unit(c), err);
	s->len = s->got;
	pdd_seq_read_done(&c->seq, idx);
}

/* Go on with transfer s's read after a piece of it: zero-fill a bad
 * block that is next (or stop there without coe), read the rest (one
 * block at a time while stepping), or hand the whole transfer to the
 * sequencer. */
void core_read_more(struct core *c, struct slot *s)
{
	while (s->got < s->len && in_start(c, s) + s->got == s->known_bad) {
		uint64_t bad = s->known_bad;

		if (s->tries < c->o->retries) {		/* that block alone, again */
			s->tries++;
			s->known_bad = UINT64_MAX;
			s->cap = block_end(c, s);
			core_submit_io(c, s->rq.idx, PDD_OP_READ);
			return;
		}
		if (!c->o->coe) {
			/* a block the map has finished keeps its mark: the
			 * output holds its data from an earlier run */
			size_t n = block_end(c, s) - s->got;	/* to the block's end */

			if (c->map && !pdd_map_bytes(c->map, bad, bad + n, PDD_MAP_DONE) &&
			    pdd_map_set(c->map, bad, n, PDD_MAP_BAD))
				core_fail(c, s->rq.idx, PDD_OP_MAP, 0, 0, -ENOMEM);
			stop_inside(c, s, bad, s->bad_err);
			return;
		}
		if (c->map && pdd_map_bytes(c->map, bad, bad + (block_end(c, s) - s->got),
					    PDD_MAP_DONE)) {
			/* a map finer than the block: zeros would overwrite
			 * bytes an earlier run copied */
			pdd_error("'%s': LBA %" PRIu64 " cannot be read, and the map marks part of it "
				  "finished: stopping rather than writing zeros over it",
				  c->in->name, bad / coe_unit(c));
			stop_inside(c, s, bad, s->bad_err);
			return;
		}
		if (zero_fill(c, s)) {
			core_fail(c, s->rq.idx, PDD_OP_MAP, 0, 0, -ENOMEM);
			return;
		}
	}
	if (s->got >= s->len) {
		pdd_seq_read_done(&c->seq, s->rq.idx);
		return;
	}
	if (s->got >= s->cap)
		s->cap = s->stepping ? block_end(c, s) : s->len;
	core_submit_io(c, s->rq.idx, PDD_OP_READ);
}

/* An error that means the medium could not give these bytes (EIO, a
 * SCSI medium error), as opposed to a device that is gone or refusing. */
static bool unreadable(int err)
{
	struct pdd_result r = { .err = err };

	return pdd_exit_status(&r) == PDD_EXIT_MEDIUM_HARD;
}

/*
 * The read of [got, cap) of transfer s failed.  When the medium is at
 * fault and the device named the first bad block (sg: the sense INFO
 * field), the blocks before it are read again, as sg_dd does; then coe=1
 * zero-fills the bad block and goes on, and without coe the copy stops
 * exactly there.  With coe and no such word, what is left of the
 * transfer is read one logical block at a time, and each block that
 * still fails is zero-filled.  Any other error stops the copy.
 */
void core_read_failed(struct core *c, struct slot *s)
{
	uint64_t start = in_start(c, s), bad = s->rq.bad_off;
	size_t unit = coe_unit(c);
	int err = (int)s->rq.res;
	bool medium = !c->in->stream && unreadable(err);

	if (medium && bad != UINT64_MAX && bad >= start + s->got && bad < start + s->cap) {
		bad -= (bad - start) % unit;
		s->known_bad = bad;
		s->bad_err = err;
		s->cap = (size_t)(bad - start);
	} else if (!medium || !c->o->coe) {
		core_fail(c, s->rq.idx, PDD_OP_READ, s->rq.off, s->rq.len, err);
		return;
	} else if (block_end(c, s) < s->cap) {	/* more than one block */
		s->stepping = true;
		s->cap = block_end(c, s);
	} else {
		s->known_bad = start + s->got;
		s->bad_err = err;
	}
	core_read_more(c, s);
}
