/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rescue=1: GNU ddrescue's passes over a failing input, with many reads in
 * flight where ddrescue has one.  Shared by the files it is cut into:
 * rescue.c (the loop: slots, reads and writes through the driver, the
 * map's saves, setup and the end), rescue-range.c (the range, domain and
 * map it works on, the skip sizes, what it refuses), rescue-pass.c (what
 * each phase reads next, and what a read's result makes of the map) and
 * rescue-report.c (the progress line, SIGUSR1 and the closing report).  Not for anything
 * outside them.
 *
 * The map (include/map.h) is the state: every byte of the range is '?'
 * (not tried), '*' (failed in a large read), '/' (trimmed, its inside not
 * yet read block by block), '-' (failed as one block) or '+' (read and
 * written).  The phases, in ddrescue's order:
 *   copying    up to 5 passes over '?', alternating direction: the first
 *              skips ahead after a failure (the skip doubling), the
 *              second to fourth skip the rest of the area, the fifth
 *              reads all that is left; transfers of the plan's size,
 *              ending on multiples of it counted from byte 0, many in
 *              flight
 *   trimming   each '*' area read block by block from both edges until a
 *              block fails; the inside becomes '/'; several areas at once
 *   scraping   every block of '/' read once, many in flight
 *   retrying   retries= passes over the '-' blocks, alternating direction
 * A pass ends when it has nothing left to read and nothing in flight:
 * reads never overlap, since a pass moves one way and the next waits.
 */
#ifndef PDD_RESCUE_H
#define PDD_RESCUE_H

#include <stdbool.h>
#include <stdint.h>

#include "drive.h"
#include "engine.h"
#include "map.h"
#include "pdd.h"

enum rescue_phase { RP_COPY, RP_TRIM, RP_SCRAPE, RP_RETRY, RP_END };

#define RESCUE_COPY_PASSES 5

/* a trimming job: one '*' area, read a block at a time from each edge */
struct trim_job {
	uint64_t lead;			/* the leading edge: next block's start */
	uint64_t trail;			/* the trailing edge: next block's end */
	uint64_t lead_end, trail_pos;	/* the read in flight at each edge */
	bool lead_busy, trail_busy;
	bool lead_done, trail_done;	/* met a bad block, or the other edge */
	bool used;
};

struct rslot {
	struct pdd_req rq;		/* its read, then its write */
	char *buf;
	uint64_t pos;			/* the input offset of the read */
	size_t len;			/* bytes asked */
	size_t got;			/* bytes read so far */
	int job;			/* trimming: 2 * job + (trailing edge), or -1 */
	bool writing;
};

struct rescuer {
	const struct pdd_plan *p;
	const struct pdd_opts *o;
	struct pdd_result *r;
	struct pdd_dev *in, *out;
	struct pdd_map *map;		/* the state, saved when map= is given */
	bool save;			/* map= was given: save it */
	struct pdd_extent *dom;		/* the domain: what may be read, input */
	size_t ndom;			/* offsets, ascending */
	uint64_t start, end;		/* the range, input offsets */
	uint64_t unit;			/* a block: the input's logical block */
	uint64_t cluster;		/* a large read: the plan's transfer */
	struct pdd_drive drv;
	struct rslot *slots;
	void **bufs;
	unsigned int nslots;
	unsigned int *idle, nidle;	/* idle slots, a stack */
	unsigned int reads, writes;	/* in flight */
	/* the pass (rescue-pass.c) */
	enum rescue_phase phase;
	unsigned int pass;		/* copying 1..5; retrying 1.. */
	bool forward;
	bool started;			/* the pass has issued a read */
	bool found;			/* ... or found something to read */
	uint64_t front;			/* forward: the next read starts here;
					 * backward: the next read ends here */
	uint64_t skip, skip_init, skip_max;	/* copying pass 1's skip */
	struct trim_job *jobs;		/* trimming: areas being trimmed */
	unsigned int njobs;
	uint64_t trim_from;		/* where the next '*' area is looked for */
	uint64_t area_start, area_end;	/* scraping with reverse=1: the area
					 * being read (forward), last first */
	unsigned int retry_first;	/* the retry pass this run began at */
	/* the run */
	bool stop;			/* a signal, an error or give_up=: start no
					 * more reads */
	bool gave_up;			/* give_up= expired */
	bool save_due;			/* the map is to be saved when nothing is
					 * in flight */
	bool unflushable;		/* a flush failed: no map is saved again */
	uint64_t sec_issued;		/* bytes of the reads started this second
					 * (max_rate=) */
	bool trim_none;			/* no '*' area left to start trimming */
	double t0, last_good, last_save;
	double sec_t;			/* the second being counted, from */
	uint64_t sec_bytes;		/* bytes read well in it */
	double rate;			/* bytes a second, the last whole second */
	bool slow;			/* that second was below min_rate= */
	uint64_t read_errors;		/* reads that failed */
	char msg[64];			/* the map's comment: what is being done */
};

/* rescue.c */
void rescue_fail(struct rescuer *x, enum pdd_op op, uint64_t off, size_t len, int err);

/* rescue-range.c */
int rescue_range_setup(struct rescuer *x);
void rescue_input_ends(struct rescuer *x, uint64_t end);

/* rescue-pass.c */
size_t rescue_at(const struct pdd_extent *v, size_t n, uint64_t pos);
int rescue_pass_setup(struct rescuer *x);
bool rescue_next(struct rescuer *x, struct rslot *s);
void rescue_read_done(struct rescuer *x, struct rslot *s, int err);
void rescue_read_bad(struct rescuer *x, struct rslot *s, uint64_t bad);
void rescue_second(struct rescuer *x);
bool rescue_advance(struct rescuer *x);
bool rescue_busy_jobs(const struct rescuer *x);
const char *rescue_phase_name(const struct rescuer *x);
void rescue_map_msg(const struct rescuer *x, char *buf, size_t len);
char rescue_phase_status(enum rescue_phase ph);

/* rescue-report.c */
void rescue_count(struct rescuer *x);
void rescue_progress(struct rescuer *x, double now, bool force);
void rescue_report_now(struct rescuer *x);

#endif
