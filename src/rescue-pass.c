// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rescue=1: what each phase reads next, what a read's result makes of
 * the map, and the order of the passes (see include/rescue.h).  The read
 * sizes, alignments, skips and marks are GNU ddrescue 1.27's, so that a
 * rescue ends with the same map whichever tool ran it and either can
 * continue the other's: a failed read of more than one block is '*' in
 * the copying phase, one of a block or less is '-'; reads of the copying
 * passes end on multiples of the transfer counted from byte 0, those of
 * the later phases on multiples of the block.  What differs is that the
 * reads of a pass are many at once: a pass hands out reads in its
 * direction from its front, and a failure moves the front on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rescue.h"

static uint64_t ext_end(const struct pdd_extent *e)
{
	return e->pos + e->size;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* The first extent of v (n, ascending, contiguous or not) that ends past
 * pos: the one holding pos, or the next. */
size_t rescue_at(const struct pdd_extent *v, size_t n, uint64_t pos)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ext_end(&v[mid]) <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Pass 3 reads only '?' areas just after a '+' one, pass 4 just before
 * one (ddrescue: what skipping for slow reads left). */
static bool eligible(const struct rescuer *x, size_t i, bool all)
{
	const struct pdd_map *m = x->map;

	if (all || x->phase != RP_COPY || (x->pass != 3 && x->pass != 4))
		return true;
	if (x->pass == 3)
		return i == 0 || m->ext[i - 1].status == PDD_MAP_DONE;
	return i + 1 == m->n || m->ext[i + 1].status == PDD_MAP_DONE;
}

/* The first piece of status st at or after pos, in the domain: [*a, *b). */
static bool find_in(const struct rescuer *x, char st, uint64_t pos, uint64_t *a, uint64_t *b,
		    bool all)
{
	const struct pdd_map *m = x->map;

	for (size_t i = rescue_at(m->ext, m->n, pos); i < m->n && m->ext[i].pos < x->end; i++) {
		const struct pdd_extent *e = &m->ext[i];
		uint64_t lo = max64(e->pos, pos), hi = min64(ext_end(e), x->end);
		size_t d;

		if (e->status != st || !eligible(x, i, all) || lo >= hi)
			continue;
		d = rescue_at(x->dom, x->ndom, lo);
		if (d == x->ndom || x->dom[d].pos >= hi)
			continue;
		*a = max64(lo, x->dom[d].pos);
		*b = min64(hi, ext_end(&x->dom[d]));
		return true;
	}
	return false;
}

static bool find_fwd(const struct rescuer *x, char st, uint64_t pos, uint64_t *a, uint64_t *b)
{
	return find_in(x, st, pos, a, b, false);
}

/* The last piece of status st that ends at or before pos. */
static bool find_bwd(const struct rescuer *x, char st, uint64_t pos, uint64_t *a, uint64_t *b)
{
	const struct pdd_map *m = x->map;

	if (pos > x->end)
		pos = x->end;
	if (pos <= x->start)
		return false;
	for (size_t i = min64(rescue_at(m->ext, m->n, pos - 1) + 1, m->n); i-- > 0;) {
		const struct pdd_extent *e = &m->ext[i];
		uint64_t lo = max64(e->pos, x->start), hi = min64(ext_end(e), pos);
		size_t d;

		if (ext_end(e) <= x->start)
			break;
		if (e->status != st || !eligible(x, i, false) || lo >= hi)
			continue;
		d = rescue_at(x->dom, x->ndom, hi - 1);
		if (d == x->ndom || x->dom[d].pos >= hi) {
			/* no domain piece holds hi - 1: the one before it */
			if (d == 0)
				continue;
			d--;
		}
		if (ext_end(&x->dom[d]) <= lo)
			continue;
		*a = max64(lo, x->dom[d].pos);
		*b = min64(hi, ext_end(&x->dom[d]));
		return true;
	}
	return false;
}

/* Mark [pos, pos+n) st: without memory for it, the rescue ends. */
static void mark(struct rescuer *x, uint64_t pos, uint64_t n, char st)
{
	int err = n ? pdd_map_set(x->map, pos, n, st) : 0;

	if (err)
		rescue_fail(x, PDD_OP_MAP, 0, 0, err);
}

/* The status a phase reads. */
static char reads(const struct rescuer *x)
{
	static const char st[] = { PDD_MAP_UNTRIED, PDD_MAP_UNTRIMMED, PDD_MAP_UNSCRAPED,
				   PDD_MAP_BAD, 0 };

	return st[x->phase];
}

/* The map's status line says the phase it is in, as ddrescue's does. */
char rescue_phase_status(enum rescue_phase ph)
{
	static const char st[] = { '?', '*', '/', '-', '+' };

	return st[ph];
}

const char *rescue_phase_name(const struct rescuer *x)
{
	static const char *const name[] = { "copying", "trimming", "scraping", "retrying",
					    "finished" };

	return name[x->phase];
}

/*
 * The next read of a sweep (copying, scraping, retrying) from the front:
 * at most size bytes, cut so that it ends (forward) or starts (backward)
 * on a multiple of size from byte 0 unless the piece ends first.
 */
static bool sweep(struct rescuer *x, struct rslot *s, uint64_t size)
{
	uint64_t a, b, lo, hi;

	if (x->forward) {
		if (!find_fwd(x, reads(x), x->front, &a, &b))
			return false;
		if (a != x->front)
			x->skip = x->skip_init;	/* a new area */
		lo = a;
		hi = min64(a + size, b);
		if (hi != b && hi / size * size > lo)
			hi = hi / size * size;
		x->front = hi;
	} else {
		if (!find_bwd(x, reads(x), x->front, &a, &b))
			return false;
		if (b != x->front)
			x->skip = x->skip_init;
		hi = b;
		lo = b - a > size ? b - size : a;
		if (lo != a && (lo + size - 1) / size * size < hi)
			lo = (lo + size - 1) / size * size;
		x->front = lo;
	}
	s->pos = lo;
	s->len = (size_t)(hi - lo);
	s->job = -1;
	return true;
}

/* Scraping with reverse=1: the '/' areas from the last to the first,
 * each read forward a block at a time, as ddrescue does. */
static bool scrape_back(struct rescuer *x, struct rslot *s)
{
	uint64_t a, b, hi;

	if (x->front >= x->area_end) {	/* this area is all started */
		if (!find_bwd(x, PDD_MAP_UNSCRAPED, x->area_start, &a, &b))
			return false;
		x->area_start = x->front = a;
		x->area_end = b;
	}
	hi = min64(x->front + x->unit, x->area_end);
	if (hi != x->area_end && hi / x->unit * x->unit > x->front)
		hi = hi / x->unit * x->unit;
	s->pos = x->front;
	s->len = (size_t)(hi - x->front);
	s->job = -1;
	x->front = hi;
	return true;
}

/* Trimming: start jobs on the next '*' areas while there is room. */
static void start_jobs(struct rescuer *x)
{
	const struct pdd_map *m = x->map;
	unsigned int max = x->nslots / 2 ? x->nslots / 2 : 1;
	uint64_t a, b;

	for (unsigned int j = 0; j < max; j++) {
		struct trim_job *t = &x->jobs[j];
		bool lbad, rbad;
		size_t i;

		if (t->used)
			continue;
		if (x->trim_none || (x->forward ?
				     !find_fwd(x, PDD_MAP_UNTRIMMED, x->trim_from, &a, &b) :
				     !find_bwd(x, PDD_MAP_UNTRIMMED, x->trim_from, &a, &b))) {
			x->trim_none = true;	/* no need to look again */
			return;
		}
		x->trim_from = x->forward ? b : a;
		x->found = true;
		/* an edge next to a bad block is not read again (ddrescue) */
		i = rescue_at(m->ext, m->n, a);
		lbad = i > 0 && m->ext[i - 1].pos + m->ext[i - 1].size == a &&
		       m->ext[i - 1].status == PDD_MAP_BAD;
		i = rescue_at(m->ext, m->n, b);
		rbad = i < m->n && m->ext[i].pos == b && m->ext[i].status == PDD_MAP_BAD;
		if (lbad && rbad) {
			mark(x, a, b - a, PDD_MAP_UNSCRAPED);
			j--;	/* this job is still free */
			continue;
		}
		*t = (struct trim_job){ .lead = a, .trail = b, .lead_done = lbad,
					.trail_done = rbad, .used = true };
		x->njobs++;
	}
}

/* A trimming read from a job's edge, if one may start. */
static bool trim_read(struct rescuer *x, struct rslot *s)
{
	uint64_t u = x->unit;

	for (unsigned int j = 0; j < x->nslots / 2 + (x->nslots < 2); j++) {
		struct trim_job *t = &x->jobs[j];
		uint64_t lo, hi, limit;

		if (!t->used)
			continue;
		/* the leading edge, forward, a block at a time */
		limit = t->trail_busy ? t->trail_pos : t->trail;
		if (!t->lead_busy && !t->lead_done && t->lead < limit) {
			hi = min64(t->lead + u, limit);
			if (hi != limit && hi / u * u > t->lead)
				hi = hi / u * u;
			if (hi <= limit) {
				t->lead_busy = true;
				t->lead_end = hi;
				s->pos = t->lead;
				s->len = (size_t)(hi - t->lead);
				s->job = (int)(2 * j);
				return true;
			}
		}
		/* the trailing edge, backward */
		limit = t->lead_busy ? t->lead_end : t->lead;
		if (!t->trail_busy && !t->trail_done && t->trail > limit) {
			lo = t->trail - min64(u, t->trail - limit);
			if (lo != limit && (lo + u - 1) / u * u < t->trail)
				lo = (lo + u - 1) / u * u;
			t->trail_busy = true;
			t->trail_pos = lo;
			s->pos = lo;
			s->len = (size_t)(t->trail - lo);
			s->job = (int)(2 * j + 1);
			return true;
		}
	}
	return false;
}

/* A job with both edges done and nothing in flight: its inside is '/'. */
static void end_jobs(struct rescuer *x)
{
	for (unsigned int j = 0; j < x->nslots / 2 + (x->nslots < 2); j++) {
		struct trim_job *t = &x->jobs[j];
		bool met = t->lead >= t->trail;

		if (!t->used || t->lead_busy || t->trail_busy || (!met && !(t->lead_done && t->trail_done)))
			continue;
		if (!met)
			mark(x, t->lead, t->trail - t->lead, PDD_MAP_UNSCRAPED);
		t->used = false;
		x->njobs--;
	}
}

bool rescue_busy_jobs(const struct rescuer *x)
{
	return x->njobs > 0;
}

/* The next read of the phase into s (pos, len, job); false when none
 * may start now (the pass may still have reads in flight). */
bool rescue_next(struct rescuer *x, struct rslot *s)
{
	bool got;

	switch (x->phase) {
	case RP_COPY:
		got = sweep(x, s, x->cluster);
		break;
	case RP_TRIM:
		end_jobs(x);
		start_jobs(x);
		got = trim_read(x, s);
		break;
	case RP_SCRAPE:
		got = x->forward ? sweep(x, s, x->unit) : scrape_back(x, s);
		break;
	case RP_RETRY:
		got = sweep(x, s, x->unit);
		break;
	default:
		return false;
	}
	if (got && !x->started) {	/* the map's status line: this pass */
		x->started = x->found = true;
		x->map->cur_status = rescue_phase_status(x->phase);
		x->map->pass = x->phase == RP_COPY || x->phase == RP_RETRY ? x->pass : 1;
	}
	/* where a read starts going forward, where it ends going back */
	if (got)
		x->map->cur_pos = (s->job >= 0 ? !(s->job & 1) : x->forward) ? s->pos :
				  s->pos + s->len;
	return got;
}

/*
 * Skip ahead after the read of [pos, pos+n) failed (or a slow second, n
 * 0) in the copying phase: pass 1 by the skip, doubling to its cap;
 * passes 2 to 4 past the rest of the area; pass 5 not at all.  The skip
 * goes from the front, since the reads between the failure and it are
 * already started; never past the '?' area the front is in, and in
 * passes 2 to 4 only when that area reaches back to the failure (the
 * reads in between are still in flight), not into an area of its own.
 */
static void skip_ahead(struct rescuer *x, uint64_t pos, uint64_t n)
{
	uint64_t a, b, c, d, to;

	if (x->phase != RP_COPY || x->pass > 4 || !x->skip_init)
		return;
	if (x->forward) {
		if (!find_fwd(x, PDD_MAP_UNTRIED, x->front, &a, &b) || a != x->front)
			return;
		if (x->pass > 1 && n && x->front != pos + n &&
		    (!find_bwd(x, PDD_MAP_UNTRIED, x->front, &c, &d) || d != x->front || c > pos + n))
			return;	/* the front's area is not the failure's */
		to = x->pass == 1 ? min64(x->front + x->skip, b) : b;
		if (to != b)
			to = max64(to / x->unit * x->unit, x->front);
		x->front = to;
	} else {
		if (!find_bwd(x, PDD_MAP_UNTRIED, x->front, &a, &b) || b != x->front)
			return;
		if (x->pass > 1 && n && x->front != pos &&
		    (!find_fwd(x, PDD_MAP_UNTRIED, x->front, &c, &d) || c != x->front || d < pos))
			return;
		to = x->pass == 1 && x->front - a > x->skip ? x->front - x->skip : a;
		if (to != a)
			to = min64((to + x->unit - 1) / x->unit * x->unit, x->front);
		x->front = to;
	}
	if (x->pass == 1)
		x->skip = x->skip <= x->skip_max / 2 ? 2 * x->skip : x->skip_max;
}

/* The read in s is back: err 0 with s->got bytes (all of it, or to the
 * end of the input), or a failure after s->got good bytes.  The good
 * bytes are marked when written (rescue.c); the rest here. */
void rescue_read_done(struct rescuer *x, struct rslot *s, int err)
{
	uint64_t bad = s->pos + s->got, n = s->len - s->got;
	struct trim_job *t = s->job >= 0 ? &x->jobs[s->job / 2] : NULL;
	bool trailing = s->job >= 0 && (s->job & 1);
	char st;

	if (t && !trailing) {
		t->lead_busy = false;
		if (err)
			t->lead_done = true;
		t->lead = t->lead_end;
	} else if (t) {
		t->trail_busy = false;
		if (err)
			t->trail_done = true;
		t->trail = t->trail_pos;
	}
	if (!err) {
		if (x->phase == RP_COPY && s->got)
			x->skip = x->skip_init;
		return;
	}
	x->read_errors++;
	st = x->phase == RP_COPY && n > x->unit ? PDD_MAP_UNTRIMMED : PDD_MAP_BAD;
	mark(x, bad, n, st);
	skip_ahead(x, bad, n);
}

/* The read in s failed and the device named bad, its first bad block:
 * that block is bad, the rest of the read as after a failure; the reader
 * reads the blocks before it again. */
void rescue_read_bad(struct rescuer *x, struct rslot *s, uint64_t bad)
{
	uint64_t end = s->pos + s->len, rest = bad + x->unit < end ? end - bad - x->unit : 0;

	x->read_errors++;
	mark(x, bad, end - bad < x->unit ? end - bad : x->unit, PDD_MAP_BAD);
	/* the device stopped at the bad block: the rest was never read, not
	 * trimmed whatever its size (not tried in the later phases, whose
	 * reads are of one block) */
	mark(x, bad + x->unit, rest, x->phase == RP_COPY ? PDD_MAP_UNTRIMMED : PDD_MAP_UNTRIED);
	skip_ahead(x, s->pos, end - s->pos);
}

/* Once a second: a copying pass 1 or 2 that read slower than min_rate=
 * skips as after a failure (ddrescue's slow reads). */
void rescue_second(struct rescuer *x)
{
	if (x->slow && x->phase == RP_COPY && x->pass <= 2)
		skip_ahead(x, x->front, 0);
}

/* The map's comment above its status line, as ddrescue writes it. */
void rescue_map_msg(const struct rescuer *x, char *buf, size_t len)
{
	const char *dir = x->forward ? "forwards" : "backwards";

	switch (x->phase) {
	case RP_COPY:
		snprintf(buf, len, "Copying non-tried blocks... Pass %u (%s)", x->pass, dir);
		break;
	case RP_TRIM:
		snprintf(buf, len, "Trimming failed blocks... (%s)", dir);
		break;
	case RP_SCRAPE:
		snprintf(buf, len, "Scraping failed blocks... (%s)", dir);
		break;
	case RP_RETRY:
		snprintf(buf, len, "Retrying bad sectors... Retry %u (%s)",
			 x->pass - x->retry_first + 1, dir);
		break;
	default:
		snprintf(buf, len, "Finished");
	}
}

/* Is there anything of status st in the domain? */
static bool any(const struct rescuer *x, char st)
{
	uint64_t a, b;

	return find_in(x, st, x->start, &a, &b, true);
}

/* Pass n of the copying or retrying phase goes forward when odd (the
 * first), backward when even; reverse=1 the other way round. */
static void begin_pass(struct rescuer *x, unsigned int n)
{
	x->pass = n;
	x->forward = (n % 2 == 1) != (bool)x->o->reverse;
	x->front = x->forward ? x->start : x->end;
}

/* The pass has nothing left and nothing in flight: the next one, or the
 * next phase that has something to do.  False when the rescue is done.
 * The copying phase ends when nothing is left untried, or after the
 * fifth pass (a pass that finds nothing it may read, as the third and
 * fourth often do, is not the end); retrying when a pass found nothing,
 * or after retries= passes. */
bool rescue_advance(struct rescuer *x)
{
	bool was_found = x->found;

	x->started = x->found = false;
	x->skip = x->skip_init;
	if (x->phase == RP_COPY && x->pass < RESCUE_COPY_PASSES && any(x, PDD_MAP_UNTRIED)) {
		begin_pass(x, x->pass + 1);
		return true;
	}
	if (x->phase == RP_RETRY && was_found && x->pass - x->retry_first + 1 < x->o->retries &&
	    any(x, PDD_MAP_BAD)) {
		begin_pass(x, x->pass + 1);
		return true;
	}
	while (x->phase < RP_END) {
		x->phase++;
		x->forward = !x->o->reverse;
		x->front = x->forward ? x->start : x->end;
		x->trim_from = x->front;
		x->trim_none = false;
		if (x->phase == RP_TRIM && x->o->trim && any(x, PDD_MAP_UNTRIMMED))
			return true;
		if (x->phase == RP_SCRAPE && x->o->scrape && any(x, PDD_MAP_UNSCRAPED)) {
			x->area_start = x->area_end = x->end;	/* reverse=1 */
			return true;
		}
		if (x->phase == RP_RETRY && x->o->retries && any(x, PDD_MAP_BAD)) {
			begin_pass(x, 1);
			x->retry_first = 1;
			return true;
		}
	}
	return false;
}

/*
 * Where the rescue begins: the copying phase if anything is '?', at the
 * pass and position a map's status line names when it says copying
 * (ddrescue's resume), else the first phase with work.  A map that says
 * retrying resumes its retry pass's direction.
 */
int rescue_pass_setup(struct rescuer *x)
{
	struct pdd_map *m = x->map;
	unsigned int n = x->nslots / 2 + (x->nslots < 2);

	x->jobs = calloc(n, sizeof(*x->jobs));
	if (!x->jobs)
		return -ENOMEM;
	x->skip = x->skip_init;
	x->phase = RP_COPY;
	begin_pass(x, 1);
	/* the pass the map was saved in goes on from where it was, if there
	 * is anything that way (else from its start, as ddrescue does) */
	if (m->cur_status == PDD_MAP_UNTRIED && m->pass >= 1 && m->pass <= RESCUE_COPY_PASSES &&
	    m->cur_pos >= x->start && m->cur_pos <= x->end) {
		uint64_t a, b;

		begin_pass(x, m->pass);
		if (x->forward ? find_fwd(x, PDD_MAP_UNTRIED, m->cur_pos, &a, &b) :
				 find_bwd(x, PDD_MAP_UNTRIED, m->cur_pos, &a, &b))
			x->front = m->cur_pos;
	}
	if (any(x, PDD_MAP_UNTRIED))
		return 0;
	x->found = false;
	x->phase = RP_COPY;
	x->pass = RESCUE_COPY_PASSES;
	if (!rescue_advance(x)) {
		x->phase = RP_END;
		return 0;
	}
	/* a retry pass that went backward goes on backward (ddrescue) */
	if (x->phase == RP_RETRY && m->cur_status == PDD_MAP_BAD && m->cur_pos >= x->start &&
	    m->cur_pos <= x->end) {
		if (m->pass % 2 == 0) {
			begin_pass(x, 2);
			x->retry_first = 2;
		}
		x->front = m->cur_pos;
	}
	return 0;
}
