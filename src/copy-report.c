// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the copy core says when it ends: the block that coe_limit=
 * stopped it at, the blocks written as zeros, the errors the device
 * recovered, and what stopped the copy with where a rerun would pick
 * up.  The copy itself is in copy.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

/* The done mark: where a rerun would pick up; why says what stopped. */
static void say_done_mark(const struct core *c, const char *why)
{
	const struct pdd_plan *p = c->p;
	uint64_t done = c->r->done;

	if (c->map) {
		pdd_error("%s%" PRIu64 " bytes are copied; the map '%s' records what is done",
			  why, c->r->out_bytes, c->map->path);
		return;
	}
	pdd_error("%s%" PRIu64 " bytes are copied: input below block %" PRIu64
		  " is in output below block %" PRIu64, why, c->r->out_bytes,
		  (p->in_off - p->in_base + done) / p->bs,
		  (p->out_off - p->out_base + done) / p->bs);
}

/*
 * A read, write, flush or close that failed, as one line naming the side
 * and the block, and a device that refused direct I/O it said it takes:
 * what a copy and a rescue (rescue.c) say alike.  False for the other
 * errors.
 */
bool pdd_say_io_error(const struct pdd_result *r, const struct pdd_plan *p,
		      const struct pdd_dev *in, const struct pdd_dev *out)
{
	switch (r->err_op) {
	case PDD_OP_READ:
		pdd_error("error reading '%s' at block %" PRIu64 ": %s", in->name,
			  (r->err_off - p->in_base) / p->bs, pdd_strerror(r->err));
		break;
	case PDD_OP_WRITE:
		pdd_error("error writing '%s' at block %" PRIu64 ": %s", out->name,
			  (r->err_off - p->out_base) / p->bs, pdd_strerror(r->err));
		break;
	case PDD_OP_FLUSH:
		pdd_error("error flushing '%s': %s", out->name, pdd_strerror(r->err));
		return true;
	case PDD_OP_CLOSE:
		pdd_error("error closing '%s': %s", out->name, pdd_strerror(r->err));
		return true;
	default:
		return false;
	}
	/* the plan checked alignment against what the device reports; a
	 * device or file system that wants more says only EINVAL */
	if (r->err == -EINVAL) {
		const struct pdd_dev *d = r->err_op == PDD_OP_READ ? in : out;

		if (d->direct && d->kind != PDD_KIND_RAW)
			pdd_error("'%s' refused direct I/O of %zu bytes at byte %" PRIu64
				  " although it reports a %u-byte alignment; "
				  "%s=nodirect copies through the page cache",
				  d->name, r->err_len, r->err_off, d->io_align,
				  d->output ? "oflag" : "iflag");
	}
	return true;
}

/* What stopped the copy, and what it leaves behind. */
static void report_error(const struct core *c)
{
	const struct pdd_result *r = c->r;

	if (r->err_op == PDD_OP_MAP) {
		/* a failed save said why; memory is the only other cause */
		if (r->err == -ENOMEM)
			pdd_error("cannot keep the map '%s': %s", c->map->path,
				  strerror(ENOMEM));
		return;		/* and the map is not the record it was */
	}
	if (!pdd_say_io_error(r, c->p, c->in, c->out))
		pdd_drive_say_failed(&c->drv, "copy", pdd_strerror(r->err));
	if (r->err_op == PDD_OP_FLUSH && c->map) {
		pdd_error("the map '%s' marks nothing finished that was written "
			  "since it was last saved", c->map->path);
		return;
	}
	if (r->err_op == PDD_OP_FLUSH || r->err_op == PDD_OP_CLOSE || r->unflushed) {
		pdd_error("the %" PRIu64 " bytes written may not be on stable storage",
			  r->out_bytes);
		return;
	}
	say_done_mark(c, "");
}

/* Everything said at the end of a copy, once its result is complete. */
void core_say_end(const struct core *c)
{
	const struct pdd_result *r = c->r;

	if (c->limit_lba != UINT64_MAX)
		pdd_error("coe_limit=%" PRIu64 " reached: stopping after LBA %" PRIu64,
			  c->o->coe_limit, c->limit_lba);
	if (r->bad_blocks)
		pdd_error("%" PRIu64 " unreadable block%s of %u bytes written as zeros, LBA %" PRIu64
			  " to %" PRIu64, r->bad_blocks, r->bad_blocks == 1 ? "" : "s",
			  r->bad_unit, r->bad_first, r->bad_last);
	if (r->recovered)
		pdd_info(0, "%" PRIu64 " error%s recovered by the device", r->recovered,
			 r->recovered == 1 ? "" : "s");
	if (r->err)
		report_error(c);
	else if (r->signal) {
		char why[32];

		snprintf(why, sizeof(why), "stopped by SIG%s: ", sigabbrev_np(r->signal));
		say_done_mark(c, why);
	}
}
