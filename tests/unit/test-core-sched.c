// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-core's schedules: from a seed, the two sides and the operands
 * (made into a plan by pdd_plan_make(), then given the fake engine), the
 * images, the unreadable blocks, the failing write, an earlier run's
 * map, how the fake misbehaves, which engine fails as a whole, and a
 * stop on devices that fall silent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "test-core.h"

#define KiB 1024ULL

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static uint64_t pick(struct fk_rng *g, const uint64_t *v, size_t n)
{
	return v[fk_below(g, n)];
}

static uint64_t round_up(uint64_t v, uint64_t m)
{
	return (v + m - 1) / m * m;
}

/* The devices and the operands: sizes the plan accepts, with the range
 * starting on a logical block of the input (as a direct device needs;
 * coe's blocks count from there). */
static void draw_sides(struct sched *s, struct fk_rng *g)
{
	static const uint64_t sizes[] = { 4 * KiB, 32 * KiB, 96 * KiB, 256 * KiB };
	bool block = fk_chance(g, 50);	/* a direct block device, else a file */
	unsigned int lbs = block && fk_chance(g, 50) ? 4096 : 512;
	uint64_t bs = block ? pick(g, (const uint64_t[]){ 512, 1024, 4096, 8192 }, 4)
			    : pick(g, (const uint64_t[]){ 512, 1024, 4096 }, 3);
	/* bpt and skip are multiples of mult, so that transfers and the
	 * range's start fall on the input's logical blocks */
	uint64_t mult = lbs / gcd64(bs, lbs);
	uint64_t bpt = mult * (1 + fk_below(g, (64 * KiB / bs) / mult));
	uint64_t in_off, want, total, in_size;

	s->o.bs = bs;
	s->o.bpt = bpt;
	s->o.skip = mult * fk_below(g, 4);
	s->o.seek = fk_below(g, 4);
	in_off = s->o.skip * bs;
	want = fk_chance(g, 3) ? fk_below(g, 4) : 1 + fk_below(g, pick(g, sizes, 4));
	s->o.count_given = fk_chance(g, 50);
	if (s->o.count_given) {
		s->o.count = (want + bs - 1) / bs;
		total = s->o.count * bs;
		s->eof_early = total && fk_chance(g, 20);
		in_size = in_off + (s->eof_early ? fk_below(g, total) : total + fk_below(g, 3000));
	} else {
		in_size = in_off + want;	/* a file may end anywhere */
		total = want;
	}
	if (block) {	/* a device holds whole logical blocks */
		in_size = round_up(in_size, lbs);
		s->eof_early = in_size < in_off + total;
	}
	s->in = (struct pdd_dev){ .path = "fake-in", .name = "fake-in",
		.kind = block ? PDD_KIND_BLOCK : PDD_KIND_FILE, .fd = -1, .fd_buf = -1,
		.std_fd = -1, .seekable = true, .direct = block, .size_known = true,
		.size = in_size, .lbs = lbs, .pbs = lbs, .io_align = lbs, .mem_align = 512 };
	s->out = (struct pdd_dev){ .path = "fake-out", .name = "fake-out", .output = true,
		.kind = PDD_KIND_FILE, .fd = -1, .fd_buf = -1, .std_fd = -1, .seekable = true,
		.size_known = true, .size = 0, .lbs = 512, .pbs = 512, .io_align = 512,
		.mem_align = 512 };
}

/* The unreadable blocks: inside what the input has (when the input ends
 * early, whole blocks only: a bad block past the end of the data would
 * be zero-filled past it, which no device can ask for), and now and
 * then one just before the range, which must never be read. */
static void draw_bad(struct sched *s, struct fk_rng *g, uint64_t data_rel)
{
	unsigned int lbs = s->in.lbs;
	uint64_t nblk = s->eof_early ? data_rel / lbs : (data_rel + lbs - 1) / lbs;
	size_t want = fk_chance(g, 40) || !nblk ? 0 : 1 + fk_below(g, 8);

	s->nbad = 0;
	if (s->p.in_off >= lbs && fk_chance(g, 30))
		s->bad[s->nbad++] = s->p.in_off - lbs;
	for (size_t i = 0; i < want; i++) {
		uint64_t b = s->p.in_off + fk_below(g, nblk) * lbs;
		size_t j = s->nbad;

		while (j && s->bad[j - 1] > b) {	/* sorted, no twice */
			s->bad[j] = s->bad[j - 1];
			j--;
		}
		if (j && s->bad[j - 1] == b) {
			memmove(&s->bad[j], &s->bad[j + 1], (s->nbad - j) * sizeof(*s->bad));
			continue;
		}
		s->bad[j] = b;
		s->nbad++;
	}
}

bool sched_in_bad(const struct sched *s, uint64_t pos)
{
	for (size_t i = 0; i < s->nbad; i++)
		if (pos >= s->bad[i] && pos < s->bad[i] + s->in.lbs)
			return true;
	return false;
}

/* An earlier run's map: pieces of whole logical blocks finished (its
 * data already in the output, and durable), not tried, or bad. */
static int draw_resume(struct sched *s, struct fk_rng *g, uint64_t data_rel)
{
	uint64_t lbs = s->in.lbs, in_off = s->p.in_off;
	int err = 0;

	for (uint64_t rel = 0, len; rel < data_rel && !err; rel += len) {
		unsigned int roll = (unsigned int)fk_below(g, 100);
		char st = roll < 40 ? PDD_MAP_DONE : roll < 85 ? PDD_MAP_UNTRIED : PDD_MAP_BAD;

		len = lbs * (1 + fk_below(g, 8));
		if (len > data_rel - rel)
			len = data_rel - rel;
		/* a finished piece ends on a block, or where the range does:
		 * the copy widens what is left to whole blocks, and would
		 * write the rest of that block again */
		if (rel + len == data_rel && data_rel % lbs && data_rel < s->p.total)
			st = PDD_MAP_UNTRIED;
		err = pdd_map_set(&s->map, in_off + rel, len, st);
		for (uint64_t j = rel; j < rel + len; j++) {
			s->pre[j] = (unsigned char)st;
			s->earlier[j] = st == PDD_MAP_DONE;
			if (st != PDD_MAP_UNTRIED)	/* what that run wrote */
				s->w.out[s->p.out_off + j] = st == PDD_MAP_DONE ?
							     s->w.in[in_off + j] : 0;
		}
	}
	return err;
}

/* How the fake misbehaves, and where a write fails. */
static void draw_world(struct sched *s, struct fk_rng *g)
{
	struct fk_world *w = &s->w;
	static const uint64_t busy[] = { 0, 5, 30, 70 }, shrt[] = { 0, 10, 40 };
	static const uint64_t late[] = { 0, 30, 80 }, maxl[] = { 1, 3, 8 };

	w->p_busy = (unsigned int)pick(g, busy, 4);
	w->p_short = (unsigned int)pick(g, shrt, 3);
	w->short_bytes = fk_chance(g, 30);
	w->p_late = (unsigned int)pick(g, late, 3);
	w->max_late = (unsigned int)pick(g, maxl, 3);
	w->p_timeout = fk_chance(g, 50) ? 10 : 0;
	w->p_short_bad = 50;
	w->p_bad_off = (unsigned int)pick(g, (const uint64_t[]){ 0, 50, 100 }, 3);
	w->p_tick = s->o.map ? (unsigned int)pick(g, (const uint64_t[]){ 0, 2, 10 }, 3) : 0;
	w->stop_at = fk_chance(g, 5) ? 1 + fk_below(g, 40) : 0;
	w->fail_flush = (s->o.map || s->o.sync) && fk_chance(g, 5) ?
			1 + (unsigned int)fk_below(g, 3) : 0;
	w->bad_write = UINT64_MAX;
	if (w->data_rel && fk_chance(g, 15))
		w->bad_write = s->p.out_off + fk_below(g, w->data_rel);
}

/* One schedule in five: the engine of one side is to fail as a whole at
 * one of its first reaps, or at the first after it where the other
 * side's engine holds requests that the copy must then wait for; about
 * half of those copies end before.  Drawn from a generator of its own,
 * so that the other draws of a seed, and so the schedules without a
 * death, are those they were before deaths were drawn. */
static void draw_death(struct sched *s, unsigned long long seed)
{
	struct fk_world *w = &s->w;
	struct fk_rng g;

	fk_seed(&g, ~(uint64_t)seed);
	w->die_side = -1;
	if (!fk_chance(&g, 20))
		return;
	w->die_side = fk_chance(&g, 50) ? PDD_IN : PDD_OUT;
	/* most copies reap each side a few times only, some once */
	w->die_at = fk_chance(&g, 40) ? 1 : 1 + fk_below(&g, fk_chance(&g, 70) ? 3 : 16);
	w->die_busy = fk_chance(&g, 40);
	w->dead_flush_ok = fk_chance(&g, 50);
}

/*
 * One schedule in seven: a SIGINT at one of the first reaps, after which
 * the devices may fall silent until the driver gives up what they have
 * not started (the fake holds back some of what it takes: p_queued).
 * Such a copy is to end stopped and with no error, so it has no fault
 * that would stop it of its own: no write or flush that fails, no
 * coe_limit=, unreadable blocks only with coe=1, and no engine dies.
 * Drawn from a generator of its own, as the deaths are, so that the
 * other schedules are those they were.
 */
static void draw_cancel(struct sched *s, unsigned long long seed)
{
	struct fk_world *w = &s->w;
	struct fk_rng g;

	fk_seed(&g, seed ^ 0x5ca1ab1e0ddba11ULL);
	if (!fk_chance(&g, 15))
		return;
	s->cancel = true;
	w->stop_at = 1 + fk_below(&g, 10);
	w->p_silent = (unsigned int)pick(&g, (const uint64_t[]){ 20, 50, 100 }, 3);
	w->p_queued = (unsigned int)pick(&g, (const uint64_t[]){ 0, 30, 70, 100 }, 4);
	w->die_side = -1;
	w->bad_write = UINT64_MAX;
	w->fail_flush = 0;
	s->o.coe_limit = 0;
	if (!s->o.coe)
		s->nbad = w->nbad = 0;
}

/*
 * sparse=: the grain (0 now and then: off), and whether the output
 * refuses to zero, always or now and then, and whether it is a block
 * device; drawn from a generator of its own, as the deaths are.  The
 * fake's output has no descriptor, so the core zeroes every run of zeros
 * (PDD_OP_ZERO), none being known to read as zeros, and the input's
 * holes are not looked for (lseek fails).
 */
static void draw_sparse(struct sched *s, unsigned long long seed)
{
	struct fk_rng g;

	fk_seed(&g, seed ^ 0x5ba25e0f11e5ULL);
	s->o.sparse_given = true;
	s->o.sparse = fk_chance(&g, 25) ? 0 : pick(&g, (const uint64_t[]){ 512, 1024, 4096 }, 3);
	s->w.p_nozero = (unsigned int)pick(&g, (const uint64_t[]){ 0, 0, 0, 20, 100 }, 5);
	/* now and then a block device (once planned: its size is drawn
	 * after), zeroed in whole blocks only, the parts at a run's ends
	 * written */
	s->out_block = fk_chance(&g, 30);
}

/* Runs of zeros in the input for sparse= to find: a few, of any length
 * and place (across transfers and blocks); again a generator of its own. */
static void draw_islands(struct sched *s, unsigned long long seed)
{
	struct fk_world *w = &s->w;
	struct fk_rng g;
	unsigned int n;

	fk_seed(&g, seed ^ 0x15a1a4d5ULL);
	n = w->in_size && fk_chance(&g, 70) ? 1 + (unsigned int)fk_below(&g, 6) : 0;
	while (n--) {
		uint64_t at = fk_below(&g, w->in_size), len = 1 + fk_below(&g, 3 * 4096);

		memset(w->in + at, 0, len < w->in_size - at ? len : w->in_size - at);
	}
}

int sched_setup(struct sched *s, unsigned long long seed)
{
	struct fk_world *w = &s->w;
	struct fk_rng g;
	uint64_t data_rel, total, nxf;

	memset(s, 0, sizeof(*s));
	s->seed = seed;
	fk_seed(&g, seed);
	s->o.threads = 1;
	s->o.engine = "threads";	/* its depth is qd=; then the fake takes over */
	s->o.status = PDD_STATUS_NONE;
	draw_sides(s, &g);
	s->o.qd = 1 + (unsigned int)fk_below(&g, 16);
	s->o.coe = fk_chance(&g, 60);
	s->o.retries = fk_chance(&g, 20) ? 1 + (unsigned int)fk_below(&g, 2) : 0;
	s->o.sync = fk_chance(&g, 50);
	s->o.map = fk_chance(&g, 50) ? map_path : NULL;
	s->o.map_interval = 1;
	draw_sparse(s, seed);
	if (pdd_plan_make(&s->o, &s->in, &s->out, &s->p))
		return -EINVAL;
	s->p.ops[0] = s->p.ops[1] = &fk_ops;
	total = s->p.total;
	data_rel = s->in.size - s->p.in_off < total ? s->in.size - s->p.in_off : total;
	s->out.size = s->p.out_off + total + fk_below(&g, 4096);
	if (s->out_block)
		s->out.kind = PDD_KIND_BLOCK;

	w->rng = g;
	w->in_dev = &s->in;
	w->out_dev = &s->out;
	w->in_size = s->in.size;
	w->out_size = s->out.size;
	w->in_off = s->p.in_off;
	w->out_off = s->p.out_off;
	w->total = total;
	w->data_rel = data_rel;
	w->lbs = s->in.lbs;
	w->in = malloc(w->in_size + 1);
	w->out = malloc(w->out_size + 1);
	w->durable = malloc(w->out_size + 1);
	s->expect = malloc(data_rel + 1);
	s->pre = calloc(data_rel + 1, 1);
	s->earlier = calloc(total + 1, sizeof(*s->earlier));
	if (!w->in || !w->out || !w->durable || !s->expect || !s->pre || !s->earlier)
		return -ENOMEM;
	for (uint64_t i = 0; i < w->in_size; i++)
		w->in[i] = (unsigned char)fk_next(&w->rng);
	for (uint64_t i = 0; i < w->out_size; i++)	/* not the input's */
		w->out[i] = (unsigned char)fk_next(&w->rng);
	draw_islands(s, seed);
	draw_world(s, &w->rng);
	draw_death(s, seed);
	draw_bad(s, &w->rng, data_rel);
	w->bad = s->bad;
	w->nbad = s->nbad;

	if (s->o.map) {
		uint64_t end = s->p.in_off + total > s->in.size ? s->p.in_off + total : s->in.size;

		unlink(map_path);
		pdd_map_init(&s->map, map_path);
		s->resume = fk_chance(&w->rng, 35);
		if (s->resume && draw_resume(s, &w->rng, data_rel))
			return -ENOMEM;
		/* the rest not tried, as main's load_map leaves a new map */
		if (pdd_map_set(&s->map, s->resume ? s->p.in_off + data_rel : 0,
				end - (s->resume ? s->p.in_off + data_rel : 0), PDD_MAP_UNTRIED))
			return -ENOMEM;
		if (s->resume && pdd_map_save(&s->map))
			return -EIO;
		w->map = &s->map;
		w->map_path = map_path;
	}
	/* coe_limit=: now and then, at most one more than there are */
	if (s->o.coe && s->nbad && fk_chance(&w->rng, 25))
		s->o.coe_limit = 1 + fk_below(&w->rng, s->nbad + 1);
	draw_cancel(s, seed);
	memcpy(w->durable, w->out, w->out_size);
	for (uint64_t rel = 0; rel < data_rel; rel++) {
		bool zero = s->o.coe && !s->earlier[rel] && sched_in_bad(s, s->p.in_off + rel);

		s->expect[rel] = zero ? 0 : w->in[s->p.in_off + rel];
		s->zeroed += zero;
	}
	w->expect = s->expect;
	w->r = &s->r;
	/* the transfers: each is whole blocks but the last of a piece of the
	 * range, and the pieces a map leaves are at least a block apart, so
	 * there are at most two for each block */
	nxf = 2 * (total / s->in.lbs + 2);
	return fk_begin(w, total, nxf, s->earlier);
}

void sched_teardown(struct sched *s)
{
	fk_end(&s->w);
	free(s->w.in);
	free(s->w.out);
	free(s->w.durable);
	free(s->expect);
	free(s->pre);
	free(s->earlier);
	pdd_result_free(&s->r);
	if (s->o.map) {
		char other[sizeof(map_path) + 4];

		pdd_map_free(&s->map);
		unlink(map_path);
		snprintf(other, sizeof(other), "%s.bak", map_path);
		unlink(other);
		snprintf(other, sizeof(other), "%s.new", map_path);
		unlink(other);
	}
}
