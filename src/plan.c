// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The plan: the operands checked against both devices before a byte
 * moves.  It fills in the defaults that depend on the devices (bs, count,
 * queue depth), and refuses what could only fail later: a skip, seek or
 * transfer size that direct I/O can never align, a destination too small
 * for the range, a seek on an output that cannot seek.  Everything here
 * is arithmetic on struct pdd_dev, so the unit tests drive it with made-up
 * devices.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "pdd.h"

static bool is_device(const struct pdd_dev *d)
{
	return d->kind == PDD_KIND_BLOCK || d->kind == PDD_KIND_RAW ||
	       d->kind == PDD_KIND_SG || d->kind == PDD_KIND_NBD;
}

/* Must every request to d be aligned to d->io_align?  Direct I/O on a
 * device; and always on an NBD export whose server gives a minimum block
 * size, as libnbd refuses a request that is not a multiple of it (there
 * is no page cache to take the rest). */
static bool aligned_direct(const struct pdd_dev *d)
{
	return (d->direct || d->kind == PDD_KIND_NBD) && is_device(d) && d->io_align > 1;
}

/* SCSI addresses whole logical blocks, so on an sg device bs= is the
 * logical block size (as in sg_dd and sgp_dd) and a transfer must fit in
 * one command the host accepts. */
/* The largest request sg device or NBD export d takes: one block at
 * least, and a transfer fits in one. */
static int check_max(const struct pdd_dev *d, const struct pdd_plan *p)
{
	const char *one = d->kind == PDD_KIND_SG ? "command" : "request";

	if ((d->kind != PDD_KIND_SG && d->kind != PDD_KIND_NBD) || !d->max_xfer)
		return 0;
	if (p->bs > d->max_xfer) {
		pdd_error("'%s' takes at most %" PRIu64 " bytes in one %s, less than one block of %" PRIu64,
			  d->name, d->max_xfer, one, p->bs);
		return -EINVAL;
	}
	if (p->xfer > d->max_xfer) {
		pdd_error("bpt=%" PRIu64 ": a transfer of %zu bytes is more than one %s to '%s' may move (%" PRIu64
			  " bytes); give bpt=%" PRIu64 " or less",
			  p->bpt, p->xfer, one, d->name, d->max_xfer, d->max_xfer / p->bs);
		return -EINVAL;
	}
	return 0;
}

static int check_sg(const struct pdd_dev *d, const struct pdd_plan *p)
{
	if (d->kind != PDD_KIND_SG)
		return check_max(d, p);
	if (p->bs != d->lbs) {
		pdd_error("bs=%" PRIu64 ": '%s' is an sg device with %u-byte logical blocks; give bs=%u",
			  p->bs, d->name, d->lbs, d->lbs);
		return -EINVAL;
	}
	if ((d->flags & (PDD_F_FUA | PDD_F_DPO)) && d->cdbsz == 6) {
		pdd_error("cdbsz=6: a 6-byte CDB has no FUA or DPO bit, which '%s' is to get; give cdbsz=10 or more",
			  d->name);
		return -EINVAL;
	}
	return check_max(d, p);
}

/* The default bpt, lowered to what one command to sg device d may move
 * (but at least 1: a block larger than that is refused in check_sg). */
static uint64_t fit_sg(const struct pdd_dev *d, uint64_t bpt, uint64_t bs)
{
	if ((d->kind != PDD_KIND_SG && d->kind != PDD_KIND_NBD) || !d->max_xfer ||
	    bpt * bs <= d->max_xfer)
		return bpt;
	return d->max_xfer >= bs ? d->max_xfer / bs : 1;
}

/* bs= by default: the logical block size of a device input, else of an
 * sg output (which takes nothing else), else 512 as dd. */
static uint64_t default_bs(const struct pdd_dev *in, const struct pdd_dev *out)
{
	if (is_device(in))
		return in->lbs;
	if (out->kind == PDD_KIND_SG)
		return out->lbs;
	return 512;
}

/* For a direct device side: the block offset given by operand op (skip= or
 * seek=) and the transfer size must both be multiples of its logical block
 * size.  The last, shorter piece of a count= that does not fill a logical
 * block is not refused: it goes through the buffered descriptor. */
static int check_alignment(const struct pdd_dev *d, const char *op,
			   uint64_t blocks, const struct pdd_plan *p)
{
	uint64_t lbs = d->io_align;
	uint64_t mult = lbs / pdd_gcd(p->bs, lbs);	/* blocks of bs per logical block */

	if (!aligned_direct(d))
		return 0;
	if (d->base % lbs) {	/* standard input or output left mid-block */
		pdd_error("'%s' starts at byte %" PRIu64 ", which is not a multiple of its logical block size %" PRIu64,
			  d->name, d->base, lbs);
		return -EINVAL;
	}
	if ((blocks * p->bs) % lbs) {
		pdd_error("%s=%" PRIu64 ": offset %" PRIu64 " of '%s' is not a multiple of its logical block size %" PRIu64
			  "; with bs=%" PRIu64 " %s= must be a multiple of %" PRIu64,
			  op, blocks, blocks * p->bs, d->name, lbs, p->bs, op, mult);
		return -EINVAL;
	}
	if ((d->kind == PDD_KIND_RAW || d->kind == PDD_KIND_NBD) && p->total != PDD_UNTIL_EOF &&
	    p->total % lbs) {
		/* a block device takes a last, partial block through the page
		 * cache; a raw device and an NBD export have none */
		pdd_error("'%s' is a%s, which moves whole %" PRIu64 "-byte blocks only, and the copy is %" PRIu64
			  " bytes; give a count= of whole blocks",
			  d->name, d->kind == PDD_KIND_RAW ? " raw device" : "n NBD export", lbs, p->total);
		return -EINVAL;
	}
	if (p->xfer % lbs) {
		pdd_error("bs=%" PRIu64 " bpt=%" PRIu64 ": a transfer of %zu bytes is not a multiple of the logical block size %" PRIu64
			  " of '%s'; with bs=%" PRIu64 " bpt= must be a multiple of %" PRIu64,
			  p->bs, p->bpt, p->xfer, lbs, d->name, p->bs, mult);
		return -EINVAL;
	}
	return 0;
}

static int derive_total(const struct pdd_opts *o, const struct pdd_dev *in,
			struct pdd_plan *p)
{
	if (o->count_given) {
		if (__builtin_mul_overflow(o->count, p->bs, &p->total) ||
		    p->total > INT64_MAX - p->in_off) {
			pdd_error("count=%" PRIu64 " bs=%" PRIu64 ": the range is too large",
				  o->count, p->bs);
			return -EINVAL;
		}
		return 0;
	}
	if (in->kind == PDD_KIND_ZERO) {
		pdd_error("'%s' never ends: give count=", in->name);
		return -EINVAL;
	}
	if (!in->size_known) {
		p->total = PDD_UNTIL_EOF;
		return 0;
	}
	if (p->in_off > in->size) {
		pdd_info(0, "skip=%" PRIu64 " is past the end of '%s' (%" PRIu64 " bytes): nothing to copy",
			 o->skip, in->name, in->size);
		p->total = 0;
		return 0;
	}
	p->total = in->size - p->in_off;
	return 0;
}

/* Refuse, before anything is written, a device that cannot hold what the
 * input has; with count= the user chose the range, so it goes ahead and
 * a write past the end fails there. */
static int check_room(const struct pdd_opts *o, const struct pdd_dev *out,
		      const struct pdd_plan *p)
{
	if (o->count_given || p->total == PDD_UNTIL_EOF || !out->size_known ||
	    !is_device(out))
		return 0;
	if (p->out_off > out->size || p->total > out->size - p->out_off) {
		pdd_error("'%s' is too small: the copy needs %" PRIu64 " bytes from byte %" PRIu64
			  " on, and the device holds %" PRIu64 "; give count= to copy less",
			  out->name, p->total, p->out_off, out->size);
		return -EINVAL;
	}
	return 0;
}

/* A map names input positions and is resumed by seeking to them. */
static int check_map(const struct pdd_opts *o, const struct pdd_dev *in,
		     const struct pdd_dev *out, const struct pdd_plan *p)
{
	const struct pdd_dev *d = in->stream ? in : out->stream ? out : NULL;

	if (!o->map)
		return 0;
	if (d) {
		pdd_error("map=%s: '%s' is a %s; a map needs both sides to seek",
			  o->map, d->name, pdd_kind_name(d->kind));
		return -EINVAL;
	}
	if (p->total == PDD_UNTIL_EOF) {
		pdd_error("map=%s: the size of '%s' is not known; give count=", o->map,
			  in->name);
		return -EINVAL;
	}
	return 0;
}

/* Does a side run on worker threads (threads= counts them)? */
static bool threaded(const struct pdd_plan *p)
{
	return (p->ops[0] && p->ops[0]->threaded) || (p->ops[1] && p->ops[1]->threaded);
}

/*
 * sparse=: the grain zero runs are looked for in.  By default the output's
 * logical block or 4096 bytes, whichever is larger (rounded up to whole
 * blocks where they do not divide 4096); a grain given must be
 * whole blocks of the output (and of its direct I/O alignment), which it
 * zeroes or leaves alone.
 */
static int pick_sparse(const struct pdd_opts *o, const struct pdd_dev *out,
		       struct pdd_plan *p)
{
	uint64_t unit = out->lbs > 1 ? out->lbs : 1;

	if (out->direct && out->io_align > unit)
		unit = out->io_align;
	if (!o->sparse_given) {
		/* whole blocks even of a 520-byte sg disk */
		p->sparse = (size_t)((4096 + unit - 1) / unit * unit);
		return 0;
	}
	if (o->sparse % unit) {
		pdd_error("sparse=%" PRIu64 ": not a multiple of the %" PRIu64
			  "-byte blocks of '%s'", o->sparse, unit, out->name);
		return -EINVAL;
	}
	p->sparse = (size_t)o->sparse;
	return 0;
}

static bool nbd_side(const struct pdd_plan *p)
{
	return (p->ops[0] && p->ops[0]->nbd) || (p->ops[1] && p->ops[1]->nbd);
}

/* A file of pdd's own (not the shell's descriptor) with a hole from off
 * on: what copy-sparse.c cuts transfers at. */
static bool has_holes(const struct pdd_dev *in, uint64_t off)
{
	off_t hole;

	if (in->kind != PDD_KIND_FILE || in->stream || in->std_fd >= 0 || in->fd < 0 ||
	    off >= in->size)
		return false;
	hole = lseek(in->fd, (off_t)off, SEEK_HOLE);
	return hole >= 0 && (uint64_t)hole < in->size;
}

static unsigned int pick_depth(const struct pdd_opts *o, const struct pdd_plan *p,
			       const struct pdd_dev *in)
{
	uint64_t depth = o->qd;
	uint64_t by_mem = PDD_MAX_INFLIGHT_BYTES / p->xfer;
	uint64_t ntrans;

	/* the deeper of the two sides', but an NBD side's where there is
	 * one: its window is what keeps a server busy across a link, and a
	 * larger one only pushes the data out of the cache between the read
	 * and the write (scripts/bench-nbd.sh) */
	for (int k = 0; !o->qd && k < 2; k++)
		if (p->ops[k] && p->ops[k]->default_depth(p->xfer, o->threads) > depth)
			depth = p->ops[k]->default_depth(p->xfer, o->threads);
	for (int k = 0; !o->qd && k < 2; k++)
		if (p->ops[k] && p->ops[k]->nbd)
			depth = p->ops[k]->default_depth(p->xfer, o->threads);
	/* an input file's holes cut transfers down to its data extents
	 * (copy-sparse.c): it is the number of reads in flight that keeps
	 * the disk busy then, not their bytes (scripts/bench-sparse.sh);
	 * threads keep as many as they are */
	if (!o->qd && p->sparse && !threaded(p) && !nbd_side(p) && depth < PDD_HOLES_DEPTH &&
	    has_holes(in, p->in_off))
		depth = PDD_HOLES_DEPTH;
	if (depth > by_mem)
		depth = by_mem;
	if (p->total != PDD_UNTIL_EOF) {
		ntrans = p->total / p->xfer + (p->total % p->xfer != 0);
		if (depth > ntrans)
			depth = ntrans;
	}
	return depth ? (unsigned int)depth : 1;
}

int pdd_plan_make(const struct pdd_opts *o, const struct pdd_dev *in,
		  const struct pdd_dev *out, struct pdd_plan *p)
{
	long page = sysconf(_SC_PAGESIZE);
	int err;

	p->bs = o->bs ? o->bs : default_bs(in, out);
	/* sgp_dd's default, shortened so that a large bs alone still fits,
	 * and so that one transfer is one command to an sg device */
	p->bpt = o->bpt ? o->bpt : (p->bs < 2048 ? 128 : 32);
	if (!o->bpt && p->bs <= PDD_MAX_XFER && p->bpt > PDD_MAX_XFER / p->bs)
		p->bpt = PDD_MAX_XFER / p->bs;
	if (!o->bpt)
		p->bpt = fit_sg(in, fit_sg(out, p->bpt, p->bs), p->bs);
	if (__builtin_mul_overflow(p->bs, p->bpt, &p->xfer) ||
	    p->xfer > PDD_MAX_XFER) {
		pdd_error("bs=%" PRIu64 " bpt=%" PRIu64 ": a transfer may be at most %llu bytes",
			  p->bs, p->bpt, PDD_MAX_XFER);
		return -EINVAL;
	}
	/* a standard input or output counts from where it was left */
	p->in_base = in->base;
	p->out_base = out->base;
	if (__builtin_mul_overflow(o->skip, p->bs, &p->in_off) ||
	    __builtin_add_overflow(p->in_off, p->in_base, &p->in_off) || p->in_off > INT64_MAX) {
		pdd_error("skip=%" PRIu64 ": offset too large", o->skip);
		return -EINVAL;
	}
	if (__builtin_mul_overflow(o->seek, p->bs, &p->out_off) ||
	    __builtin_add_overflow(p->out_off, p->out_base, &p->out_off) || p->out_off > INT64_MAX) {
		pdd_error("seek=%" PRIu64 ": offset too large", o->seek);
		return -EINVAL;
	}
	/* a standard output the shell opened for appending (>>): the
	 * operands oflag=append refuses are refused with it */
	if ((out->flags & PDD_F_APPEND) && o->seek) {
		pdd_error("seek=%" PRIu64 ": '%s' is opened for appending, and appended data goes to the end",
			  o->seek, out->name);
		return -EINVAL;
	}
	if ((out->flags & PDD_F_APPEND) && (out->flags & PDD_F_TRUNC)) {
		pdd_error("oflag=trunc: '%s' is opened for appending, which keeps what it holds",
			  out->name);
		return -EINVAL;
	}
	if (o->seek && !out->seekable) {
		pdd_error("seek=%" PRIu64 ": '%s' is a %s and cannot seek", o->seek,
			  out->name, pdd_kind_name(out->kind));
		return -EINVAL;
	}
	err = derive_total(o, in, p);
	if (!err)
		err = check_sg(in, p);
	if (!err)
		err = check_sg(out, p);
	if (!err)
		err = check_alignment(in, "skip", o->skip, p);
	if (!err)
		err = check_alignment(out, "seek", o->seek, p);
	if (!err)
		err = check_room(o, out, p);
	if (!err)
		err = check_map(o, in, out, p);
	if (!err)
		err = pick_sparse(o, out, p);
	if (err)
		return err;
	if (p->total != PDD_UNTIL_EOF && p->out_off > INT64_MAX - p->total) {
		pdd_error("seek=%" PRIu64 ": the output range is too large", o->seek);
		return -EINVAL;
	}

	err = pdd_engine_choose(o->engine, in, out, p->ops);
	if (err)
		return err;	/* engine.c said why */
	p->depth = pick_depth(o, p, in);
	p->reads_alone = o->coe || o->rescue;
	p->threads = 1;
	if (threaded(p))
		p->threads = o->threads < p->depth ? o->threads : p->depth;
	p->buf_align = page > 0 ? (size_t)page : 4096;
	if (in->mem_align > p->buf_align)
		p->buf_align = in->mem_align;
	if (out->mem_align > p->buf_align)
		p->buf_align = out->mem_align;
	/* never more memory than the copy has bytes (a 1 MB file with
	 * bs=1G needs 1 MB), whole aligned units for direct I/O */
	p->buf_len = p->xfer;
	if (p->total != PDD_UNTIL_EOF && p->total < p->xfer)
		p->buf_len = p->total ? (size_t)((p->total + p->buf_align - 1) /
						  p->buf_align * p->buf_align) : p->buf_align;
	if (p->buf_len > p->xfer)
		p->buf_len = p->xfer;
	return 0;
}

static void print_side(FILE *f, const char *label, const struct pdd_dev *d)
{
	char si[32], iec[32];

	fprintf(f, "  %-7s '%s': %s%s", label, d->name, pdd_kind_name(d->kind),
		d->missing ? " (to be created)" : "");
	if (d->size_known && d->kind != PDD_KIND_NULL && !d->missing) {
		pdd_fmt_human(si, sizeof(si), (double)d->size, false);
		pdd_fmt_human(iec, sizeof(iec), (double)d->size, true);
		fprintf(f, ", %" PRIu64 " bytes (%s, %s)", d->size, si, iec);
	}
	fputc('\n', f);
	if (is_device(d))
		fprintf(f, "          logical block %u, physical block %u, ", d->lbs, d->pbs);
	else
		fputs("          ", f);
	if (d->kind == PDD_KIND_SG)
		fprintf(f, "%u-byte CDBs or larger%s\n", d->cdbsz,
			d->dio ? ", driver direct I/O" : "");
#ifdef HAVE_LIBNBD
	else if (d->kind == PDD_KIND_NBD)
		pdd_nbd_describe(f, d);
#endif
	else if (d->kind == PDD_KIND_NULL)
		fputs("discards what is written to it\n", f);
	else if (d->kind == PDD_KIND_ZERO)
		fputs("reads as endless zeros\n", f);
	else
		fprintf(f, "%s\n", d->direct ? "direct I/O" : d->stream ? "in order" : "buffered");
	if (d->model[0] || d->serial[0])
		fprintf(f, "          model '%s', serial '%s'\n", d->model[0] ? d->model : "unknown",
			d->serial[0] ? d->serial : "unknown");
	if (d->backing[0])
		fprintf(f, "          loop device over '%s'\n", d->backing);
	if (d->base)
		fprintf(f, "          left at byte %" PRIu64 " by the shell: blocks count from there\n",
			d->base);
}

/* One side's part of the range: blocks of bs and bytes, both inclusive. */
static void print_range(FILE *f, const char *label, uint64_t off, uint64_t base,
			const struct pdd_plan *p)
{
	fprintf(f, "          %-6s from block %" PRIu64 " (byte %" PRIu64 ")", label,
		(off - base) / p->bs, off);
	if (p->total == PDD_UNTIL_EOF)
		fputs(" to the end of the input\n", f);
	else
		fprintf(f, " to block %" PRIu64 " (byte %" PRIu64 ")\n",
			(off - base + p->total - 1) / p->bs, off + p->total - 1);
}

/* The engine's name when both sides that take one take the same, else
 * the input's and the output's joined by a comma, for the report. */
const char *pdd_plan_engine(const struct pdd_plan *p)
{
	static char both[64];

	if (!p->ops[1] || p->ops[0] == p->ops[1])
		return p->ops[0]->name;
	snprintf(both, sizeof(both), "%s,%s", p->ops[0]->name, p->ops[1]->name);
	return both;
}

void pdd_plan_print(FILE *f, const struct pdd_plan *p,
		    const struct pdd_dev *in, const struct pdd_dev *out)
{
	fputs("pdd: dry run, nothing is copied\n", f);
	print_side(f, "input", in);
	print_side(f, "output", out);
	if (p->total == PDD_UNTIL_EOF)
		fprintf(f, "  copy    to the end of the input, in blocks of bs=%" PRIu64 "\n", p->bs);
	else if (!p->total)
		fprintf(f, "  copy    nothing (0 blocks of bs=%" PRIu64 ")\n", p->bs);
	else
		fprintf(f, "  copy    %" PRIu64 " bytes, %" PRIu64 "+%d blocks of bs=%" PRIu64 "\n",
			p->total, p->total / p->bs, p->total % p->bs != 0, p->bs);
	if (p->total) {
		print_range(f, "input", p->in_off, p->in_base, p);
		print_range(f, "output", p->out_off, p->out_base, p);
	}
	fputs("  using   engine=", f);
	if (p->ops[0] && p->ops[1] && p->ops[0] != p->ops[1])
		fprintf(f, "%s for the input and %s for the output", p->ops[0]->name,
			p->ops[1]->name);
	else
		fputs(pdd_plan_engine(p), f);
	fprintf(f, ", %zu bytes per transfer (bpt=%" PRIu64 "), qd=%u, %u thread%s\n",
		p->xfer, p->bpt, p->depth, p->threads, p->threads == 1 ? "" : "s");
}
