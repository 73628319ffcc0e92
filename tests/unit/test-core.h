/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-core's schedules: what a seed draws (test-core-sched.c) and what
 * the checks of test-core.c read.
 */
#ifndef PDD_TEST_CORE_H
#define PDD_TEST_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "fake-engine.h"
#include "map.h"
#include "pdd.h"

#define MAX_BAD 12

/* One schedule: what the seed chose, and the images it runs on. */
struct sched {
	unsigned long long seed;
	struct pdd_opts o;
	struct pdd_dev in, out;
	struct pdd_plan p;
	bool eof_early;			/* the input ends inside the range */
	bool resume;			/* an earlier run's map is given */
	bool cancel;			/* a stop on devices that fall silent */
	uint64_t bad[MAX_BAD];
	size_t nbad;
	bool *earlier;			/* per rel byte: the earlier run copied it */
	unsigned char *expect, *pre;	/* what the range must hold; the map's
					 * statuses before the copy, per rel byte */
	uint64_t zeroed;		/* bytes coe=1 must zero-fill */
	bool out_block;			/* the output is a block device */
	struct pdd_map map;
	struct fk_world w;
	struct pdd_result r;
};

/* the map's file, in a directory of the test's own */
extern char map_path[300];

/* Draw the schedule of seed and set everything up; 0 or -errno. */
int sched_setup(struct sched *s, unsigned long long seed);
void sched_teardown(struct sched *s);
/* Does the input byte at pos lie in an unreadable block? */
bool sched_in_bad(const struct sched *s, uint64_t pos);

#endif
