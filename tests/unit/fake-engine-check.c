// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fake engine's checks (see fake-engine.h): what it verifies as the
 * copy runs, at every call the core makes into it.  Kept apart from the
 * engine itself (fake-engine.c), which only moves bytes and misbehaves.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fake-engine.h"

void fk_violation(struct fk_world *w, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (w->fail[0])
		return;		/* the first one is the one that matters */
	va_start(ap, fmt);
	vsnprintf(w->fail, sizeof(w->fail), fmt, ap);
	va_end(ap);
	n = strlen(w->fail);
	snprintf(w->fail + n, sizeof(w->fail) - n, " (writes started at:");
	for (uint64_t i = w->nlog > 16 ? w->nlog - 16 : 0; i < w->nlog; i++) {
		n = strlen(w->fail);
		snprintf(w->fail + n, sizeof(w->fail) - n, " %" PRIu64, w->log[i % 16]);
	}
	n = strlen(w->fail);
	snprintf(w->fail + n, sizeof(w->fail) - n, ")");
}

/* The done mark (r->done, bytes from the range's start) never passes a
 * byte that is not written.  Called on every entry into the fake: the
 * written prefix only grows inside the fake, and the done mark only
 * moves between two calls into it (or after the last, which the test
 * checks), so every value the mark takes is compared. */
void fk_check_done_mark(struct fk_world *w)
{
	if (w->r->done > w->wp)
		fk_violation(w, "done mark %" PRIu64 " passes byte %" PRIu64
			     " of the range, which is not written", w->r->done, w->wp);
	if (w->r->done > w->cancel.rel)
		fk_violation(w, "done mark %" PRIu64 " passes byte %" PRIu64 " of the range, "
			     "where transfer %" PRIu64 " was given up", w->r->done, w->cancel.rel,
			     w->cancel.idx);
}

void fk_check_map_durable(struct fk_world *w, const struct pdd_map *m,
			  const unsigned char *img, const char *what)
{
	uint64_t range_end = w->in_off + w->data_rel;

	for (size_t i = 0; i < m->n; i++) {
		const struct pdd_extent *e = &m->ext[i];

		if (e->status != PDD_MAP_DONE)
			continue;
		if (e->pos < w->in_off || e->pos + e->size > range_end) {
			fk_violation(w, "%s: the map marks input bytes %" PRIu64 "..%" PRIu64
				     " finished, outside the range copied", what, e->pos,
				     e->pos + e->size);
			return;
		}
		/* at or above where the copy was given up, only what an
		 * earlier run copied is finished */
		for (uint64_t rel = e->pos - w->in_off > w->cancel.rel ? e->pos - w->in_off :
				    w->cancel.rel; rel < e->pos + e->size - w->in_off; rel++)
			if (w->written[rel] != FK_EARLIER) {
				fk_violation(w, "%s: the map marks input byte %" PRIu64 " finished, "
					     "past byte %" PRIu64 " of the range, where transfer %"
					     PRIu64 " was given up", what, w->in_off + rel,
					     w->cancel.rel, w->cancel.idx);
				return;
			}
		if (memcmp(img + w->out_off + (e->pos - w->in_off), w->in + e->pos, e->size)) {
			uint64_t j = 0;

			while (img[w->out_off + (e->pos - w->in_off) + j] == w->in[e->pos + j])
				j++;
			fk_violation(w, "%s: the map marks input byte %" PRIu64 " finished, and "
				     "the output there does not hold it", what, e->pos + j);
			return;
		}
	}
}

/* Writes start in ascending order (seq.h: a transfer's write is issued
 * only after every lower transfer's was).  At the device that means:
 * the first write of each transfer is for the transfer one above the
 * last one started, and starts at or past where that one ends; any
 * later write of a transfer (the rest after a short write, or its next
 * run of data or zeros under sparse=) starts exactly where its previous
 * write ended, and only once that one is back. */
void fk_check_write_order(struct fk_world *w, const struct pdd_req *rq)
{
	struct fk_xfer *t = &w->xf[rq->idx];

	w->log[w->nlog++ % 16] = rq->off;
	if (!t->seen) {
		if (w->any_write ? rq->idx != w->last_idx + 1 : rq->idx != 0)
			fk_violation(w, "the first write of transfer %" PRIu64 " starts after "
				     "transfer %" PRIu64 "'s", rq->idx, w->last_idx);
		else if (w->any_write && rq->off < w->last_end)
			fk_violation(w, "write of transfer %" PRIu64 " at %" PRIu64 " starts "
				     "below the end %" PRIu64 " of the one before it",
				     rq->idx, rq->off, w->last_end);
		t->seen = true;
		t->next = rq->off;
		t->end = rq->off + rq->len;
		w->any_write = true;
		w->last_idx = rq->idx;
		w->last_end = t->end;
	} else {
		w->st.resumed_writes++;
		if (t->busy)
			fk_violation(w, "two writes of transfer %" PRIu64 " in flight", rq->idx);
		else if (rq->off != t->next)
			fk_violation(w, "write of transfer %" PRIu64 " resumes at %" PRIu64 "+%zu; "
				     "its earlier writes reached %" PRIu64 " of %" PRIu64,
				     rq->idx, rq->off, rq->len, t->next, t->end);
		/* sparse= writes a transfer in runs, each a request */
		if (rq->off + rq->len > t->end)
			t->end = rq->off + rq->len;
		if (rq->idx == w->last_idx && t->end > w->last_end)
			w->last_end = t->end;
	}
	t->busy = true;
}

/* Is rq a request the core may make of this side: the right direction,
 * inside the range and inside one of the core's buffers? */
bool fk_check_request(struct fk_world *w, const struct pdd_engine *e, bool output,
		      const struct pdd_req *rq)
{
	/* a read may look past the input's end (it finds 0 there), never
	 * past the range; a write never past what the input has */
	uint64_t lo = output ? w->out_off : w->in_off;
	uint64_t hi = lo + (output ? w->data_rel : w->total);
	const char *b = rq->buf, *base;

	if ((rq->op != PDD_OP_READ) != output) {
		fk_violation(w, "a %s handed to the %s engine", rq->op != PDD_OP_READ ?
			     "write" : "read", output ? "output" : "input");
		return false;
	}
	if (!rq->len || rq->off < lo || rq->off + rq->len > hi) {
		fk_violation(w, "%s of %zu bytes at %" PRIu64 ", outside %" PRIu64 "..%" PRIu64,
			     output ? "write" : "read", rq->len, rq->off, lo, hi);
		return false;
	}
	if (rq->buf_idx >= e->nbufs) {
		fk_violation(w, "request names buffer %u of %u", rq->buf_idx, e->nbufs);
		return false;
	}
	if (output && rq->idx >= w->nxf) {
		fk_violation(w, "write of transfer %" PRIu64 ", past the %" PRIu64
			     " the range can have", rq->idx, w->nxf);
		return false;
	}
	base = e->bufs[rq->buf_idx];
	if (b < base || b + rq->len > base + e->buf_len) {
		fk_violation(w, "request of %zu bytes leaves its buffer", rq->len);
		return false;
	}
	return true;
}

/* After the driver gave up on silent devices, no write starts of the
 * lowest transfer given up or above it: the copy ends there. */
static void check_cut(struct fk_world *w)
{
	if (w->cancel.wrote && w->cancel.top >= w->cancel.idx)
		fk_violation(w, "the write of transfer %" PRIu64 " started after the driver "
			     "gave up on silent devices at call %" PRIu64 ", and gave up "
			     "transfer %" PRIu64, w->cancel.top, w->cancel.call, w->cancel.idx);
}

/*
 * Nothing starts after an engine died (drive.c): not on its side, whose
 * engine is gone, and not on the other, whose requests are only waited
 * for, so that the buffers can be freed once it holds nothing.  Every
 * call to submit() is a start, even one answered busy.
 *
 * After the driver gave up on silent devices (a stop, and nothing back
 * for a while), nothing starts before all the engines gave up is back
 * (the core learns from it where the copy ends), and then only what
 * copy.c still owes the data it has read: the writes of transfers read
 * below the first one given up, or the rest of such a write cut short.
 * No read starts, not even the rest of one cut short: the stop waits
 * only for what the devices hold.
 */
void fk_check_started(struct fk_world *w, bool output, const struct pdd_req *rq)
{
	if (w->died)
		fk_violation(w, "%s of transfer %" PRIu64 " at %" PRIu64 " started on the %s "
			     "engine at call %" PRIu64 ", after the %s engine died at call %"
			     PRIu64, output ? "write" : "read", rq->idx, rq->off,
			     output ? "output" : "input", w->calls,
			     w->die_side == PDD_OUT ? "output" : "input", w->death.call);
	if (!w->cancel.calls)
		return;
	if (w->cancel.back < w->cancel.engine)
		fk_violation(w, "%s of transfer %" PRIu64 " started with %" PRIu64 " of the %u "
			     "requests the engines gave up back", output ? "write" : "read",
			     rq->idx, w->cancel.back, w->cancel.engine);
	if (!output) {
		fk_violation(w, "read of transfer %" PRIu64 " at %" PRIu64 " started at call %"
			     PRIu64 ", after the driver gave up on silent devices at call %"
			     PRIu64, rq->idx, rq->off, w->calls, w->cancel.call);
		return;
	}
	w->st.after++;
	if (!w->cancel.wrote || rq->idx > w->cancel.top)
		w->cancel.top = rq->idx;
	w->cancel.wrote = true;
	check_cut(w);
}

/* rq was given up: the lowest transfer given up is where the copy ends,
 * and the done mark may not pass where it starts (or, for the rest of a
 * write cut short, where that rest starts: what the write did write
 * counts, as after a write error). */
void fk_note_cancelled(struct fk_world *w, const struct pdd_req *rq)
{
	bool wr = rq->op != PDD_OP_READ;	/* a write, or a zeroing */
	uint64_t rel = rq->off - (wr ? w->out_off : w->in_off);

	if (!wr && rq->idx < w->nxf && w->xf[rq->idx].read)
		rel = w->xf[rq->idx].start;
	if (rq->idx < w->cancel.idx) {
		w->cancel.idx = rq->idx;
		w->cancel.rel = rel;
	}
	check_cut(w);
	fk_check_done_mark(w);
}

/* rq is on its way back to the core.  One that comes back cancelled was
 * given up by an engine's cancel(), or by the driver, which kept it
 * while the engine was busy; only ever after cancel() was called. */
void fk_check_back(struct fk_world *w, const struct pdd_req *rq)
{
	fk_check_done_mark(w);
	if (rq->res != -ECANCELED)
		return;
	w->cancel.back++;
	if (!w->cancel.calls)
		fk_violation(w, "the %s of transfer %" PRIu64 " came back cancelled, and no "
			     "engine was asked to cancel", rq->op != PDD_OP_READ ? "write" : "read",
			     rq->idx);
	fk_note_cancelled(w, rq);
}

/* The power-cut check, made before each flush: the map on disk (the
 * last save) and the map in memory (what the core has marked so far: it
 * marks only after a flush) may call finished only bytes that the
 * durable image, as it was before this flush, holds. */
void fk_check_maps_durable(struct fk_world *w)
{
	struct pdd_map disk;
	int err;

	pdd_map_init(&disk, w->map_path);
	err = pdd_map_load(&disk);
	if (err && err != -ENOENT)
		fk_violation(w, "the map saved before flush %u cannot be read: %s",
			     w->flushes, strerror(-err));
	else if (!err)
		fk_check_map_durable(w, &disk, w->durable, "the map saved last");
	pdd_map_free(&disk);
	fk_check_map_durable(w, w->map, w->durable, "the map in memory");
}
