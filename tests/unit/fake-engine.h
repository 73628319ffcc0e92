/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test helper for test-core.c: a fake engine that lets the copy core
 * (copy*.c, coe.c, seq.c, drive.c) run without devices.  It
 * reads from an in-memory input image and writes into an in-memory
 * output image, and misbehaves as a seeded PRNG tells it: completions
 * in random order and late, short reads and writes, busy answers,
 * unreadable blocks, a write that fails, a flush that fails, an engine
 * that fails as a whole, devices that fall silent after a stop until the
 * driver gives up what they have not started.  As it runs it checks what
 * only it can see (fake-engine-check.c): that writes start in ascending
 * order, that the done mark never passes a byte not yet written, that a
 * flush finds nothing in flight and everything the map calls finished
 * already durable, that nothing starts after an engine died and the
 * other one is left holding nothing, and that after the driver gave up
 * on silent devices only writes of transfers below the first one given
 * up start.  The first violation is kept as a message, not asserted on
 * the spot: a longjmp out of the middle of pdd_copy() would leave the
 * core's memory behind and hide the seed.
 */
#ifndef PDD_TEST_FAKE_ENGINE_H
#define PDD_TEST_FAKE_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "drive.h"
#include "engine.h"
#include "map.h"
#include "pdd.h"

/* xorshift64*, seeded through splitmix64: the same seed gives the same
 * schedule on every machine, which rand() does not promise */
struct fk_rng {
	uint64_t s;
};

void fk_seed(struct fk_rng *r, uint64_t seed);
uint64_t fk_next(struct fk_rng *r);
uint64_t fk_below(struct fk_rng *r, uint64_t n);	/* 0 .. n-1; 0 when n is 0 */
bool fk_chance(struct fk_rng *r, unsigned int percent);

/* what written[] says of a byte of the output range */
enum { FK_UNWRITTEN, FK_EARLIER, FK_WRITTEN };

/* one transfer's write, as the fake has seen it */
struct fk_xfer {
	bool seen;			/* its first write was started */
	bool busy;			/* a write of it is in flight */
	uint64_t next;			/* where its next write must start */
	uint64_t end;			/* where its writes end */
	bool read;			/* a read of it was handed to the fake */
	uint64_t start;			/* where the first one started, rel: the
					 * transfer's start */
};

/* Everything one copy runs against.  The test fills the first part,
 * fk_begin() the rest; offsets are byte offsets in the images, "rel"
 * ones count from the start of the range. */
struct fk_world {
	struct fk_rng rng;
	const struct pdd_dev *in_dev, *out_dev;	/* which side an engine drives */
	unsigned char *in;		/* the input image */
	uint64_t in_size;		/* where the input ends (reads past: 0) */
	unsigned char *out;		/* the output image, as the device has it */
	unsigned char *durable;		/* what survives a power cut: the output
					 * at the last flush that succeeded */
	uint64_t out_size;
	const unsigned char *expect;	/* what the output range must hold, rel */
	uint64_t in_off, out_off;	/* the range's start in each image */
	uint64_t total;			/* bytes in the range */
	uint64_t data_rel;		/* of them, bytes the input has */
	unsigned int lbs;		/* the input's logical block */
	const uint64_t *bad;		/* input offsets of unreadable blocks */
	size_t nbad;
	uint64_t bad_write;		/* output byte a write fails at, or
					 * UINT64_MAX */
	struct pdd_result *r;		/* the copy's, watched as it runs */
	struct pdd_map *map;		/* the copy's map, or NULL */
	const char *map_path;
	/* behaviour: percentages, and how late a completion may be */
	unsigned int p_busy;		/* busy although there is room */
	unsigned int p_short;		/* a short read or write */
	bool short_bytes;		/* short reads end anywhere, not only
					 * on a logical block */
	unsigned int p_late;		/* a request is kept across reaps */
	unsigned int max_late;		/* for up to this many reaps */
	unsigned int p_timeout;		/* a reap that may wait returns 0 */
	unsigned int p_short_bad;	/* a read (write) meeting a bad block
					 * (bad_write) moves what is before it */
	unsigned int p_bad_off;		/* a failed read names its bad block */
	unsigned int p_tick;		/* per reap: the clock jumps a second */
	uint64_t stop_at;		/* SIGINT at this reap (1-based), 0 never */
	unsigned int fail_flush;	/* this flush fails (1-based), 0 never */
	/* an engine that fails as a whole: its reap() returns -EIO from
	 * then on, and what it holds never comes back */
	int die_side;			/* PDD_IN or PDD_OUT, or -1: none */
	uint64_t die_at;		/* at this reap of that side (1-based) */
	bool die_busy;			/* or the first after it when the other
					 * side's engine holds requests */
	bool dead_flush_ok;		/* a flush of a dead output succeeds, as
					 * an fsync of its descriptor would;
					 * else it fails with EIO */
	/* a stop on devices that answer nothing (drive.c then gives up what
	 * no device has started): from the stop on, a reap may find the
	 * devices silent, and then nothing comes back and each reap moves
	 * the clock on a second, until the driver calls cancel() */
	unsigned int p_silent;		/* per reap from stop_at on */
	unsigned int p_nozero;		/* a zeroing (sparse=) is refused */
	unsigned int p_queued;		/* a request taken waits in the engine,
					 * not yet on the device: cancel() hands
					 * it back */

	/* kept by the fake */
	unsigned char *written;		/* FK_* per byte of the range */
	uint64_t wp;			/* written prefix: every byte below it
					 * is written (or was, earlier) */
	struct fk_xfer *xf;		/* per transfer number */
	uint64_t nxf;
	uint64_t last_idx;		/* transfer whose write started last */
	uint64_t last_end;		/* and where it ends */
	bool any_write;
	uint64_t reaps;			/* reap calls, for stop_at */
	unsigned int flushes;		/* flush calls */
	uint64_t side_reaps[2];		/* reap calls per side, for die_at */
	unsigned int held[2];		/* requests each side's engine holds */
	uint64_t calls;			/* submit and reap calls, both sides */
	bool died;			/* die_side's engine has failed */
	bool dead_flush_failed;		/* and a flush of it failed for that */
	/* when it died: the call, and the copy's error then */
	struct fk_death {
		uint64_t call;
		int err;
	} death;
	bool silent;			/* the devices answer nothing */
	/* the driver's cancel: the one stall a copy can have, which calls
	 * cancel() once on each live engine */
	struct fk_cancel {
		unsigned int calls;	/* cancel() calls */
		uint64_t call;		/* the call into the fake of the first */
		unsigned int on_device;	/* what the engines held then and had
					 * started on the device: what the stall
					 * message must count */
		unsigned int engine;	/* what they hand back cancelled */
		uint64_t back;		/* cancelled requests back at the core,
					 * the driver's own too */
		uint64_t idx;		/* the lowest transfer given up, or
					 * UINT64_MAX */
		uint64_t rel;		/* the done mark stays at or below this:
					 * its start, or for the rest of a short
					 * write, where the rest starts */
		bool wrote;		/* a write started after the cancel */
		uint64_t top;		/* of the highest transfer */
	} cancel;
	/* the copy's hooks into the driver's loop, and the fake's copy of
	 * them, which sees every request come back (fk_check_back) */
	const struct pdd_drive_ops *core_ops;
	struct pdd_drive_ops drive_ops;
	uint64_t log[16];		/* output offsets of the last writes
					 * started, for the failure message */
	uint64_t nlog;
	/* what happened, summed over runs to show the test is not vacuous */
	struct fk_stats {
		uint64_t busy, shorts, late, timeouts, eio_reads, eio_writes;
		uint64_t saves_mid, flush_fails, resumed_writes;
		uint64_t zeroed, nozero;	/* bytes zeroed (sparse=), refusals */
		uint64_t deaths[2];	/* engines failed as a whole, per side */
		uint64_t abandoned;	/* requests a dead engine kept */
		uint64_t drained;	/* requests the live side handed back
					 * after the other died */
		uint64_t dead_reaps;	/* reaps of a dead engine, after */
		uint64_t dead_flush_fails;
		uint64_t silent_reaps;	/* reaps while the devices were silent */
		uint64_t stalls;	/* copies whose driver gave up */
		uint64_t on_device;	/* requests the engines held then */
		uint64_t cancelled[2];	/* by the engines, by the driver */
		uint64_t after;		/* writes started after a cancel */
	} st;
	/* the first violation seen, empty while none */
	char fail[768];
};

/* the world of the copy running now: the engine finds it from init() */
extern struct fk_world *fk;
/* seconds added to CLOCK_MONOTONIC, so that map_interval=1 comes round
 * without sleeping (see clock_gettime in fake-engine.c) */
extern long fk_clock_skew;

extern const struct pdd_engine_ops fk_ops;

/* Make w the world of the next copy: its bookkeeping for a range of
 * total bytes in at most nxf transfers; earlier[rel] says which bytes
 * an earlier run copied (NULL: none).  fk_end() frees it. */
int fk_begin(struct fk_world *w, uint64_t total, uint64_t nxf, const bool *earlier);
void fk_end(struct fk_world *w);

/* fake-engine-check.c: keep the first violation (with the last writes
 * started), and the checks the engine makes as the copy runs */
void fk_violation(struct fk_world *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void fk_check_done_mark(struct fk_world *w);
bool fk_check_request(struct fk_world *w, const struct pdd_engine *e, bool output,
		      const struct pdd_req *rq);
void fk_check_write_order(struct fk_world *w, const struct pdd_req *rq);
void fk_check_started(struct fk_world *w, bool output, const struct pdd_req *rq);
void fk_note_cancelled(struct fk_world *w, const struct pdd_req *rq);
void fk_check_back(struct fk_world *w, const struct pdd_req *rq);
void fk_check_maps_durable(struct fk_world *w);
/* Everything the map m marks finished (+) equals the input in img, the
 * durable or the live output; a violation names what */
void fk_check_map_durable(struct fk_world *w, const struct pdd_map *m,
			  const unsigned char *img, const char *what);

#endif
