/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The copy core's own state, shared by the files it is cut into:
 * copy.c (the loop: reads, the write order, retiring, setup and the
 * end), copy-end.c (how a copy that stops is cut), coe.c (reading
 * around unreadable blocks, and reporting them as they are written),
 * copy-map.c (what the copy does for map=) and
 * copy-report.c (what it says when it ends).  Not for anything outside
 * the core.
 */
#ifndef PDD_CORE_H
#define PDD_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drive.h"
#include "engine.h"
#include "map.h"
#include "pdd.h"
#include "seq.h"

struct slot {
	struct pdd_req rq;		/* the request in flight for this slot */
	char *buf;			/* one transfer's data */
	uint64_t rel;			/* where it starts, from the range's start */
	size_t len;			/* bytes this transfer should move */
	size_t got;			/* bytes read so far */
	size_t put;			/* bytes written so far */
	bool zeros;			/* all of it came from a hole of the input:
					 * zeros, not yet in buf (sparse=) */
	size_t zeroed, skipped;		/* of put: zeroed by the output, and not
					 * written; counted when it retires */
	size_t hole;			/* of got: not read (a hole); likewise */
	/* coe: reading around bad blocks */
	size_t cap;			/* the read in hand ends here (len unless
					 * recovering) */
	bool stepping;			/* one logical block per read */
	uint64_t known_bad;		/* input offset of a block known bad, to
					 * zero-fill (or stop at) when reached;
					 * UINT64_MAX */
	int bad_err;			/* the error that block gave */
	unsigned int tries;		/* retries= spent on the block at got */
	uint64_t *bad;			/* input offsets of its zero-filled blocks,
					 * ascending; reported when it is written */
	size_t nbad, badcap;
};

struct core {
	const struct pdd_plan *p;	/* what to copy */
	const struct pdd_opts *o;	/* what was asked */
	struct pdd_dev *in, *out;	/* the two sides */
	struct pdd_drive drv;		/* the two sides' engines, and the loop */
	struct pdd_seq seq;		/* write order and done mark */
	struct slot *slots;		/* seq.win of them; transfer i uses i % win */
	void **bufs;			/* each slot's buffer, for the engine */
	struct pdd_fill *fill;		/* bringing them into memory (bufs.c);
					 * NULL once all are in, or where no
					 * helper is needed */
	unsigned int reads;		/* reads handed to the driver, not back */
	unsigned int writes;		/* writes likewise */
	uint64_t retired;		/* transfers counted into out_bytes */
	uint64_t err_idx;		/* transfer of the error in r */
	bool barrier;			/* a buffered write to a direct output is
					 * in flight: nothing else may be */
	double t0;			/* when the copy started */
	struct pdd_result *r;		/* what happened */
	/* the pieces of the range to copy, relative to its start */
	struct pdd_extent *todo;
	size_t ntodo;
	size_t cur;			/* the piece the next transfer comes from */
	uint64_t cur_pos;		/* and where in it */
	/* map= */
	struct pdd_map *map;		/* NULL without map= */
	struct pdd_extent *fin;		/* written since the last save, input */
	size_t nfin, fincap;		/* offsets; finished once flushed */
	bool flush_failed;		/* nothing written may be marked any more */
	double last_save;		/* when the map was saved */
	bool save_due;			/* the map is to be saved: no new writes
					 * until those in flight are done, so
					 * that the flush before the save has
					 * the output to itself (an sg device's
					 * descriptor may be full of them) */
	size_t bad_cap;			/* room in r->bad_lbas */
	uint64_t nbad_issued;		/* zero-filled blocks in the writes
					 * issued so far, for coe_limit= */
	uint64_t limit_idx;		/* the transfer cut at coe_limit=, or
					 * UINT64_MAX */
	uint64_t limit_lba;		/* its last block, once written; or
					 * UINT64_MAX */
	uint64_t part_idx;		/* the lowest failed write that moved
					 * some bytes first (UINT64_MAX: none) */
	size_t part_put;		/* and how many: written all the same */
	bool death_noted;		/* an engine's death is recorded in r */
	uint64_t hash_fed;		/* transfers fed to hash= (copy-hash.c) */
	bool hash_blocked;		/* reads wait for the hash alone */
	double hash_turn_t;		/* when the loop's last turn began */
	bool wb;			/* the output is written back through the
					 * page cache as the copy goes (write_back) */
	uint64_t wb_from;		/* up to here */
	/* sparse= (copy-sparse.c) */
	size_t grain;			/* zero runs are looked for in these; 0:
					 * not (sparse=0, or the output cannot) */
	int zero_mode;			/* fallocate's mode for PDD_OP_ZERO */
	unsigned int zero_unit;		/* and the unit it zeroes in */
	uint64_t zero_from;		/* output bytes from here read as zeros
					 * until written: not written (UINT64_MAX:
					 * none known) */
	uint64_t skip_end;		/* end of the last run so skipped */
	bool holes;			/* the input is a file whose holes are
					 * not read (SEEK_DATA), or an NBD export
					 * whose zero extents are not */
	uint64_t cut;			/* transfers are cut in these where data
					 * and holes meet (0: not cut) */
	uint64_t seg_start, seg_end;	/* what the input holds there: */
	bool seg_hole;			/* a hole, or data */
};

static inline struct slot *slot_of(struct core *c, uint64_t idx)
{
	return &c->slots[idx % pdd_seq_win(&c->seq)];
}

/* May the next read start, as far as its buffer goes?  Once every buffer
 * is in memory the engines are told (they may register them).  With no
 * read in flight (whose end wakes the loop to look again) the buffer is
 * brought in now: the input would otherwise sit idle. */
static inline bool core_buf_in(struct core *c)
{
	if (!c->fill)
		return true;
	if (!pdd_fill_ready(c->fill, pdd_seq_next_read(&c->seq) % pdd_seq_win(&c->seq), !c->reads))
		return false;
	unsigned int n = pdd_fill_all(c->fill);

	if (n) {
		pdd_fill_end(c->fill);
		c->fill = NULL;
		pdd_drive_bufs_in(&c->drv, n);
	}
	return true;
}

static inline uint64_t in_start(const struct core *c, const struct slot *s)
{
	return c->p->in_off + s->rel;
}

/* The unit of recovery: the input's logical block (a sector, an sg LBA). */
static inline size_t coe_unit(const struct core *c)
{
	return c->in->lbs;
}

/* copy.c */
void core_record(struct core *c, uint64_t idx, enum pdd_op op, uint64_t off,
		 size_t len, int err);
void core_fail(struct core *c, uint64_t idx, enum pdd_op op, uint64_t off,
	       size_t len, int err);
void core_submit_io(struct core *c, uint64_t idx, enum pdd_op op);
void core_submit_part(struct core *c, uint64_t idx, enum pdd_op op, size_t len);
void core_retire_slot(struct core *c, uint64_t idx);

/* copy-end.c */
void core_cut_write(struct core *c, uint64_t idx, size_t put);
void core_partial_done(struct core *c);
void core_note_death(struct core *c);
void core_cut_by_death(struct core *c);

/* copy-sparse.c */
void core_sparse_setup(struct core *c);
bool core_sparse_write(struct core *c, uint64_t idx, bool *all_done);
bool core_sparse_zeroed(struct core *c, struct slot *s);
int core_sparse_end(struct core *c, bool final);
void core_holes_setup(struct core *c);
bool core_cut(struct core *c, uint64_t rel, size_t *len);
void *core_grow(void *array, size_t n, size_t *cap, size_t size);

/* coe.c */
void core_read_failed(struct core *c, struct slot *s);
void core_read_more(struct core *c, struct slot *s);
void core_limit_bad(struct core *c, struct slot *s);
void core_report_bad(struct core *c, const struct slot *s);

/* copy-hash.c */
int core_hash_setup(struct core *c);
bool core_hash_feed(struct core *c, uint64_t idx);
bool core_hash_room(struct core *c);
void core_hash_turn(struct core *c, double now);
int core_hash_fd(void *ctx);
void core_hash_end(struct core *c);

/* copy-report.c */
void core_say_end(const struct core *c);

/* copy-map.c */
int core_note_slot(struct core *c, const struct slot *s);
void core_save_map(struct core *c, bool finished);
int core_plan_todo(struct core *c, uint64_t *ntrans);

#endif
