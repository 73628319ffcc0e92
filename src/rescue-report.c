// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rescue=1: what a rescue says (see include/rescue.h).  On a failing disk
 * the useful numbers are not a percentage of a copy: they are the phase
 * and pass, the bytes rescued and still to try, the bad areas and bytes,
 * the rate now and the time since the last good read, as ddrescue shows
 * them.  No time left is given: a bad area's reads take what they take.
 * The progress line (status=progress, -p) once a second, SIGUSR1's report
 * and the closing lines all come from the map's counts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rescue.h"

/* Add [a, b) of status st to r's counts; prev: the status before it. */
static void add(struct pdd_result *r, char st, uint64_t n, char *prev)
{
	switch (st) {
	case PDD_MAP_DONE:	r->rescued += n; break;
	case PDD_MAP_UNTRIED:	r->non_tried += n; break;
	case PDD_MAP_UNTRIMMED:	r->non_trimmed += n; break;
	case PDD_MAP_UNSCRAPED:	r->non_scraped += n; break;
	default:
		r->bad_bytes += n;
		r->bad_areas += *prev != PDD_MAP_BAD;
	}
	*prev = st;
}

/* The map's counts over the domain (the range, without domain=) into r. */
void rescue_count(struct rescuer *x)
{
	struct pdd_result *r = x->r;
	const struct pdd_map *m = x->map;
	char prev = 0;
	uint64_t last = 0;

	r->rescued = r->non_tried = r->non_trimmed = r->non_scraped = r->bad_bytes = 0;
	r->bad_areas = 0;
	for (size_t d = 0; d < x->ndom; d++) {
		uint64_t lo = x->dom[d].pos, hi = lo + x->dom[d].size;

		if (lo != last)
			prev = 0;	/* a gap in the domain parts bad areas */
		last = hi;
		for (size_t i = rescue_at(m->ext, m->n, lo); i < m->n && m->ext[i].pos < hi; i++) {
			const struct pdd_extent *e = &m->ext[i];
			uint64_t a = e->pos > lo ? e->pos : lo;
			uint64_t b = e->pos + e->size < hi ? e->pos + e->size : hi;

			if (a < b)
				add(r, e->status, b - a, &prev);
		}
	}
	r->read_errors = x->read_errors;
	r->rescue_status = rescue_phase_status(x->phase);
	r->rescue_pass = x->phase == RP_COPY || x->phase == RP_RETRY ? x->pass : 1;
	r->gave_up = x->gave_up;
	r->since_good = pdd_now() - x->last_good;
}

/* "copying pass 1 forwards", "trimming", "finished" */
static void where(const struct rescuer *x, char *buf, size_t len)
{
	if (x->phase == RP_COPY || x->phase == RP_RETRY)
		snprintf(buf, len, "%s pass %u %s", rescue_phase_name(x), x->pass,
			 x->forward ? "forwards" : "backwards");
	else
		snprintf(buf, len, "%s", rescue_phase_name(x));
}

/* One line: where it is, what is rescued, what is bad, the rate and the
 * time since the last good read. */
static void line(struct rescuer *x, char *buf, size_t len, double now)
{
	const struct pdd_result *r = x->r;
	char phase[48], res[32], bad[32], rate[40];
	uint64_t all;

	rescue_count(x);
	all = r->rescued + r->non_tried + r->non_trimmed + r->non_scraped + r->bad_bytes;
	where(x, phase, sizeof(phase));
	pdd_fmt_human(res, sizeof(res), (double)r->rescued, false);
	pdd_fmt_human(bad, sizeof(bad), (double)r->bad_bytes, false);
	pdd_fmt_rate(rate, sizeof(rate), x->rate);
	snprintf(buf, len, "rescue: %s, %s rescued (%.2f%%), %" PRIu64 " bad area%s (%s), %s now, "
		 "last good read %.0f s ago", phase, res,
		 all ? 100.0 * (double)r->rescued / (double)all : 100.0, r->bad_areas,
		 r->bad_areas == 1 ? "" : "s", bad, rate, now - x->last_good);
}

/* status=progress: a line at most once a second (force: now). */
void rescue_progress(struct rescuer *x, double now, bool force)
{
	static double last;
	char buf[256];

	if (!x->o->progress || (!force && now - last < 1.0))
		return;
	last = now;
	line(x, buf, sizeof(buf), now);
	pdd_msg_progress(buf, pdd_msg_terminal() != 0);
}

/* SIGUSR1: the same line, and what is left to try. */
void rescue_report_now(struct rescuer *x)
{
	char buf[256];

	pdd_msg_end_line();
	line(x, buf, sizeof(buf), pdd_now());
	pdd_error("%s", buf);
	pdd_error("rescue: %" PRIu64 " bytes not tried, %" PRIu64 " not trimmed, %" PRIu64
		  " not scraped, %" PRIu64 " read errors", x->r->non_tried, x->r->non_trimmed,
		  x->r->non_scraped, x->read_errors);
}

/* The closing lines, after the copy's records lines. */
void pdd_rescue_say(const struct pdd_opts *o, const struct pdd_result *r)
{
	uint64_t all = r->rescued + r->non_tried + r->non_trimmed + r->non_scraped + r->bad_bytes;

	if (o->status == PDD_STATUS_NONE || o->status == PDD_STATUS_JSON)
		return;
	pdd_info(0, "rescue: %" PRIu64 " of %" PRIu64 " bytes rescued (%.2f%%), %" PRIu64
		 " bad in %" PRIu64 " area%s; %" PRIu64 " not tried, %" PRIu64 " not trimmed, %"
		 PRIu64 " not scraped; %" PRIu64 " read error%s", r->rescued, all,
		 all ? 100.0 * (double)r->rescued / (double)all : 100.0, r->bad_bytes,
		 r->bad_areas, r->bad_areas == 1 ? "" : "s", r->non_tried, r->non_trimmed,
		 r->non_scraped, r->read_errors, r->read_errors == 1 ? "" : "s");
}

/* status=json: the rescue object, or null. */
void pdd_rescue_json(FILE *f, const struct pdd_result *r)
{
	if (!r || !r->rescue) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{ \"status\": \"%c\", \"pass\": %u, \"rescued\": %" PRIu64
		", \"non_tried\": %" PRIu64 ", \"non_trimmed\": %" PRIu64 ", \"non_scraped\": %"
		PRIu64 ", \"bad_bytes\": %" PRIu64 ", \"bad_areas\": %" PRIu64
		", \"read_errors\": %" PRIu64 ", \"seconds_since_good_read\": %.3f"
		", \"gave_up\": %s }", r->rescue_status, r->rescue_pass, r->rescued, r->non_tried,
		r->non_trimmed, r->non_scraped, r->bad_bytes, r->bad_areas, r->read_errors,
		r->since_good, r->gave_up ? "true" : "false");
}
