// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fake engine's world (see fake-engine.h): the generator its
 * schedules are drawn from, the clock it moves, and the bookkeeping of
 * one copy.  The engine itself is in fake-engine.c, its checks in
 * fake-engine-check.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake-engine.h"

struct fk_world *fk;
long fk_clock_skew;

/*
 * The copy saves its map every map_interval seconds, by pdd_now(), which
 * reads CLOCK_MONOTONIC; the shortest interval is a second.  This
 * definition takes the place of the C library's for the whole test
 * program, so that the fake can make a second pass in an instant
 * (fk_clock_skew) and the saves in the middle of a copy are tested
 * without sleeping.  The clock still only moves forward.
 */
int clock_gettime(clockid_t id, struct timespec *ts)
{
	long r = syscall(SYS_clock_gettime, id, ts);

	if (!r && id == CLOCK_MONOTONIC)
		ts->tv_sec += fk_clock_skew;
	return (int)r;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void fk_seed(struct fk_rng *r, uint64_t seed)
{
	r->s = splitmix64(&seed);
	if (!r->s)		/* xorshift never leaves 0 */
		r->s = 1;
}

uint64_t fk_next(struct fk_rng *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

uint64_t fk_below(struct fk_rng *r, uint64_t n)
{
	return n ? fk_next(r) % n : 0;
}

bool fk_chance(struct fk_rng *r, unsigned int percent)
{
	return fk_below(r, 100) < percent;
}

int fk_begin(struct fk_world *w, uint64_t total, uint64_t nxf, const bool *earlier)
{
	w->written = calloc(total ? total : 1, 1);
	w->xf = calloc(nxf ? nxf : 1, sizeof(*w->xf));
	if (!w->written || !w->xf) {
		fk_end(w);
		return -ENOMEM;
	}
	w->nxf = nxf;
	for (uint64_t i = 0; earlier && i < total; i++)
		if (earlier[i])
			w->written[i] = FK_EARLIER;
	w->wp = 0;
	while (w->wp < total && w->written[w->wp])
		w->wp++;
	w->fail[0] = 0;
	w->cancel = (struct fk_cancel){ .idx = UINT64_MAX, .rel = UINT64_MAX };
	fk = w;
	return 0;
}

void fk_end(struct fk_world *w)
{
	free(w->written);
	free(w->xf);
	w->written = NULL;
	w->xf = NULL;
	fk = NULL;
}
