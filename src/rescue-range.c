// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rescue=1: what a rescue works on (see include/rescue.h): the range,
 * cut where the input ends; the domain (domain=, or all of the range);
 * the map, covering the range, cut at the input's end; and pass 1's skip
 * sizes, as ddrescue computes them.  And what rescue=1 refuses before
 * anything is written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rescue.h"

/* The input ends at end (a read met its end, or its size says so):
 * the range, the domain and the map end there too. */
void rescue_input_ends(struct rescuer *x, uint64_t end)
{
	if (end >= x->end)
		return;
	x->end = end;
	while (x->ndom && x->dom[x->ndom - 1].pos >= end)
		x->ndom--;
	if (x->ndom && x->dom[x->ndom - 1].pos + x->dom[x->ndom - 1].size > end)
		x->dom[x->ndom - 1].size = end - x->dom[x->ndom - 1].pos;
	pdd_map_truncate(x->map, end);
	if (x->front > end)
		x->front = end;
}

/* The map covers the whole range: '?' where it said nothing.  One walk,
 * building the extents anew (a map of a failing disk can hold millions). */
static int fill_gaps(struct rescuer *x)
{
	struct pdd_map *m = x->map;
	struct pdd_extent *ext = NULL;
	size_t n = 0, cap = 0;
	uint64_t pos = x->start;
	int err = 0;

	for (size_t i = 0; !err && i <= m->n; i++) {
		uint64_t next = i < m->n ? m->ext[i].pos : UINT64_MAX;

		if (pos < x->end && next > pos)	/* a gap in the range */
			err = pdd_extent_push(&ext, &n, &cap, pos, (next < x->end ? next : x->end) - pos,
					      PDD_MAP_UNTRIED);
		if (!err && i < m->n) {
			err = pdd_extent_push(&ext, &n, &cap, m->ext[i].pos, m->ext[i].size,
					      m->ext[i].status);
			if (m->ext[i].pos + m->ext[i].size > pos)
				pos = m->ext[i].pos + m->ext[i].size;
		}
	}
	if (err) {
		free(ext);
		return err;
	}
	free(m->ext);
	m->ext = ext;
	m->n = n;
	m->cap = cap;
	return 0;
}

/* domain=MAP: the '+' extents of that map, within the range; else all
 * of the range. */
static int load_domain(struct rescuer *x)
{
	struct pdd_map d;
	int err = 0;

	if (!x->o->domain) {
		x->dom = malloc(sizeof(*x->dom));
		if (!x->dom)
			return -ENOMEM;
		x->dom[0] = (struct pdd_extent){ .pos = x->start, .size = x->end - x->start,
						 .status = PDD_MAP_DONE };
		x->ndom = 1;
		return 0;
	}
	pdd_map_init(&d, x->o->domain);
	err = pdd_map_load(&d);
	if (err == -ENOENT)
		pdd_error("domain=%s: %s", x->o->domain, strerror(ENOENT));
	for (size_t i = 0, cap = 0; !err && i < d.n; i++) {
		uint64_t a = d.ext[i].pos, b = a + d.ext[i].size;

		a = a > x->start ? a : x->start;
		b = b < x->end ? b : x->end;
		if (d.ext[i].status == PDD_MAP_DONE && a < b)
			err = pdd_extent_push(&x->dom, &x->ndom, &cap, a, b - a, PDD_MAP_DONE);
	}
	pdd_map_free(&d);
	if (!err && !x->ndom)
		pdd_info(0, "domain=%s marks nothing finished in the range: nothing to rescue",
			 x->o->domain);
	return err;
}

/* The block size, the skips, the range, the domain and the map. */
int rescue_range_setup(struct rescuer *x)
{
	uint64_t size = x->end - x->start;
	int err;

	x->unit = x->in->lbs ? x->in->lbs : 512;
	x->cluster = x->p->xfer;
	/* ddrescue's skip: 1/100000 of the input, at least 64 KiB, growing
	 * to 1/100 of it; in whole blocks, as ddrescue rounds them */
	if (x->in->size_known)
		size = x->in->size;
	x->skip_init = x->o->skip_size ? x->o->skip_size :
		       ((size / 100000 > 65536 ? size / 100000 : 65536) + 65535) / 65536 * 65536;
	x->skip_max = x->o->skip_max ? x->o->skip_max :
		      size / 100 > x->skip_init ? size / 100 : x->skip_init;
	x->skip_init = (x->skip_init + x->unit - 1) / x->unit * x->unit;
	x->skip_max = (x->skip_max + x->unit - 1) / x->unit * x->unit;
	if (x->skip_init > x->skip_max)
		x->skip_init = x->skip_max;	/* a max_skip= below the default */
	if (x->o->skip_given && !x->o->skip_size)
		x->skip_init = x->skip_max = 0;	/* skip_size=0: never skip */
	/* a range past the input's end: as if a read had met it */
	if (x->in->size_known && x->in->kind != PDD_KIND_ZERO && x->in->size < x->end)
		x->end = x->in->size > x->start ? x->in->size : x->start;
	err = load_domain(x);
	if (!err)
		err = fill_gaps(x);
	if (x->in->size_known && x->in->kind != PDD_KIND_ZERO)
		pdd_map_truncate(x->map, x->in->size);
	return err;
}

/* What rescue=1 cannot do, refused before anything is written (and in
 * --dry-run) with exit status 31: a stream on either side, which cannot
 * be read or written at any place, and an input of unknown size. */
int pdd_rescue_check(const struct pdd_opts *o, const struct pdd_dev *in,
		     const struct pdd_dev *out, const struct pdd_plan *p)
{
	const struct pdd_dev *d = in->stream ? in : out->stream ? out : NULL;

	if (!o->rescue)
		return 0;
	if (o->domain) {	/* before anything is written: it can be read */
		struct pdd_map dm;
		int err;

		pdd_map_init(&dm, o->domain);
		err = pdd_map_load(&dm);
		pdd_map_free(&dm);
		if (err == -ENOENT)
			pdd_error("domain=%s: %s", o->domain, strerror(ENOENT));
		if (err)
			return -EINVAL;
	}
	if (d) {
		pdd_error("rescue=1: '%s' is a %s, which cannot be %s at any place", d->name,
			  pdd_kind_name(d->kind), d == in ? "read" : "written");
		return -EINVAL;
	}
	if (p->total == PDD_UNTIL_EOF) {
		pdd_error("rescue=1: the size of '%s' is not known: give count=", in->name);
		return -EINVAL;
	}
	return 0;
}
