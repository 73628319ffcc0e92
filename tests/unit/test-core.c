// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The copy core (copy*.c, coe.c, seq.c, drive.c) against a
 * fake engine (fake-engine.c), without root and without devices.  Each
 * schedule is drawn from a seed: the sizes (bs, bpt, the logical block,
 * skip, seek, count, a partial last block, an input that ends early),
 * the queue depth, how the fake misbehaves (order, lateness, short I/O,
 * busy answers), unreadable blocks with coe=1 or without, a write that
 * fails, map= fresh or resumed with saves in the middle of the copy, a
 * flush that fails, sync=1, a SIGINT at a random moment, the engine of
 * one side failing as a whole, a SIGINT after which the devices fall
 * silent until the driver gives up what they have not started.  The
 * plan is made by pdd_plan_make() for the threads engine, then both
 * sides are given the fake.
 *
 * The fake checks as the copy runs (see fake-engine.h); after it this
 * file checks the outcome: what stopped the copy and why, the done mark
 * against the bytes written, the output against the input (zeros in
 * exactly the unreadable blocks with coe=1), the counts of bad blocks,
 * the saved map against what survived the last flush, after an engine
 * died, the error and the message that name it, and after the driver
 * gave up on silent devices, the message that says what it waits for.
 *
 * Schedule i has seed i, from 1.  PDD_CORE_SEED=N runs schedule N
 * alone, described and with pdd's messages on stderr; PDD_CORE_RUNS=N
 * runs N schedules (10000 by default), from PDD_CORE_SEED if given.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "map.h"
#include "pdd.h"
#include "test-core.h"

/* seconds one schedule may take: a few milliseconds are usual */
#define WATCHDOG_SECS 20

static char map_dir[256];
char map_path[300];
static char map_bak[310], map_new[310];	/* what a save leaves beside it */
static struct fk_stats total_st;
static uint64_t n_coe_runs, n_err_runs[PDD_OP_CLOSE + 1], n_resumed, n_eof, n_stopped, n_limit;
static uint64_t n_died_said[2], n_died_other, n_cancel_sched, n_said_wait;
static const char *const op_name[] = { "none", "read", "write", "flush", "map", "close" };
/* pdd's messages, caught in msgs; with one seed run, shown after */
static char *msgs;
static size_t msgs_len;

static void fail_run(const struct sched *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail_run(const struct sched *s, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fail_msg("seed=%llu: %s (rerun: PDD_CORE_SEED=%llu build/test-core)", s->seed, msg,
		 s->seed);
}

#define CHECK(cond, ...) do { if (!(cond)) fail_run(s, __VA_ARGS__); } while (0)

/* The n-th (from 1) unreadable block the copy has to read, from the
 * range's start: inside what the input has, in a piece the map does not
 * have finished; UINT64_MAX when there are fewer. */
static uint64_t nth_bad_rel(const struct sched *s, uint64_t n)
{
	for (size_t i = 0; i < s->nbad; i++) {
		uint64_t rel = s->bad[i] - s->p.in_off;

		if (s->bad[i] < s->p.in_off || rel >= s->w.data_rel || s->earlier[rel])
			continue;
		if (!--n)
			return rel;
	}
	return UINT64_MAX;
}

/* What the copy stopped at, if anything, and where its done mark is. */
static void check_stop(struct sched *s, bool stopped, bool flush_failed)
{
	const struct fk_world *w = &s->w;
	const struct pdd_result *r = &s->r;
	uint64_t bad_rel = nth_bad_rel(s, 1), wr_rel = UINT64_MAX;
	/* coe_limit=N: the copy stops after the N-th zero-filled block */
	uint64_t lim_rel = s->o.coe && s->o.coe_limit ? nth_bad_rel(s, s->o.coe_limit) : UINT64_MAX;
	uint64_t lim_end = lim_rel + s->in.lbs < w->data_rel ? lim_rel + s->in.lbs : w->data_rel;

	if (w->bad_write != UINT64_MAX && !s->earlier[w->bad_write - w->out_off])
		wr_rel = w->bad_write - w->out_off;
	if (!r->err) {
		if (stopped)
			return;		/* the faults may lie past where it stopped */
		CHECK(s->o.coe || bad_rel == UINT64_MAX,
		      "no error, and without coe the input at %" PRIu64 " cannot be read",
		      s->p.in_off + bad_rel);
		CHECK(lim_rel == UINT64_MAX, "no error, and coe_limit=%" PRIu64 " is reached at %"
		      PRIu64, s->o.coe_limit, s->p.in_off + lim_rel);
		CHECK(wr_rel == UINT64_MAX, "no error, and the write at %" PRIu64 " fails",
		      w->bad_write);
		CHECK(!flush_failed, "no error, and flush %u failed", w->fail_flush);
		CHECK(w->wp == w->data_rel, "no error, and byte %" PRIu64 " of the range "
		      "(of %" PRIu64 ") is not written", w->wp, w->data_rel);
		CHECK(!memcmp(w->out + w->out_off, s->expect, w->data_rel),
		      "no error, and the output is not the input");
		CHECK(s->resume || r->done == w->data_rel, "no error, and the done mark is %"
		      PRIu64 " of %" PRIu64, r->done, w->data_rel);
		return;
	}
	CHECK(r->err == -EIO, "the copy stopped with %s, not the fake's EIO",
	      pdd_strerror(r->err));
	switch (r->err_op) {
	case PDD_OP_READ:
		if (s->o.coe) {	/* only at coe_limit=, once its block is written */
			CHECK(lim_rel != UINT64_MAX && r->err_off == s->p.in_off + lim_rel,
			      "coe=1 stopped at a read error at %" PRIu64, r->err_off);
			CHECK(r->done == lim_end && r->bad_blocks == s->o.coe_limit,
			      "coe_limit=%" PRIu64 " stopped with the done mark at %" PRIu64
			      " and %" PRIu64 " bad blocks", s->o.coe_limit, r->done, r->bad_blocks);
			n_limit++;
			break;
		}
		CHECK(bad_rel != UINT64_MAX && r->done <= bad_rel,
		      "read error, done mark %" PRIu64 ", first bad byte %" PRIu64, r->done, bad_rel);
		CHECK(r->err_off < s->p.in_off + bad_rel + s->in.lbs &&
		      s->p.in_off + bad_rel < r->err_off + r->err_len,
		      "read error reported at %" PRIu64 "+%zu, the bad block is at %" PRIu64,
		      r->err_off, r->err_len, s->p.in_off + bad_rel);
		break;
	case PDD_OP_WRITE:
		CHECK(wr_rel != UINT64_MAX && r->done <= wr_rel,
		      "write error, done mark %" PRIu64 ", failing write byte %" PRIu64, r->done,
		      wr_rel);
		CHECK(r->err_off <= w->bad_write && w->bad_write < r->err_off + r->err_len,
		      "write error reported at %" PRIu64 "+%zu, the fake failed %" PRIu64,
		      r->err_off, r->err_len, w->bad_write);
		break;
	case PDD_OP_FLUSH:
		CHECK(flush_failed, "a flush error, and no flush failed");
		break;
	case PDD_OP_NONE:	/* the run itself failed: only a dead engine */
		CHECK(w->died, "the copy failed as a whole with %s, and no engine died",
		      pdd_strerror(r->err));
		break;
	default:
		fail_run(s, "the copy stopped with %s at operation %d", pdd_strerror(r->err),
			 r->err_op);
	}
}

/*
 * An engine died: the copy fails, and says so, naming the engine and its
 * side, unless an error of its own stops it at a lower transfer (copy.c
 * keeps the lowest).  With none before the death, the only one that can
 * be lower is a write that was in flight when the input's engine died:
 * once the output's engine is dead no write comes back, and every read
 * that does is of a transfer not yet written.
 */
static void check_death(struct sched *s)
{
	const struct fk_world *w = &s->w;
	const struct pdd_result *r = &s->r;
	bool out = w->die_side == PDD_OUT;
	const char *side = out ? "output" : "input";
	char line[256];

	if (!w->died) {
		CHECK(!msgs || !strstr(msgs, "copy failed"), "no engine died, and pdd says:\n%s",
		      msgs);
		return;
	}
	CHECK(r->err, "the %s engine died, and the copy reports no error", side);
	snprintf(line, sizeof(line), "pdd: copy failed: engine fake of the %s '%s': %s\n", side,
		 out ? s->out.name : s->in.name, strerror(EIO));
	if (r->err_op == PDD_OP_NONE) {
		const char *at = strstr(msgs, line);

		CHECK(r->err == -EIO, "the %s engine died with EIO, and the copy reports %s",
		      side, pdd_strerror(r->err));
		CHECK(at && (at == msgs || at[-1] == '\n') &&
		      !strstr(at + strlen(line), "copy failed"), "the %s engine died, and pdd does not say \"%.*s\" once, but:\n%s", side,
		      (int)strlen(line) - 1, line, msgs);
		n_died_said[out]++;
		return;
	}
	n_died_other++;
	CHECK(!strstr(msgs, "copy failed"), "the copy reports a %s error of its own, and pdd "
	      "says the copy failed:\n%s", op_name[r->err_op], msgs);
	CHECK(w->death.err || (!out && r->err_op == PDD_OP_WRITE),
	      "the %s engine died with no error before, and the copy reports a %s error at %"
	      PRIu64 " of its own instead:\n%s", side, op_name[r->err_op], r->err_off, msgs);
}

/*
 * The driver gives up on silent devices at most once, and says so then,
 * once: "stopping: waiting for N requests in flight, nothing back for S
 * s; interrupt again to end at once" (after an engine died with no stop
 * asked for: "ending: ... interrupt twice ..."), N what the engines held on the
 * device, S a second at least.  A schedule drawn for it (no fault of its
 * own) ends stopped and with no error.  The done mark stays at or below
 * the first transfer given up: the fake checks that all along, and what
 * starts after (fake-engine-check.c).
 */
static void check_cancel(struct sched *s)
{
	const struct fk_world *w = &s->w;
	bool ending = !strstr(msgs, "pdd: stopping: waiting for ");
	const char *head = ending ? "pdd: ending: waiting for " : "pdd: stopping: waiting for ";
	const char *at = strstr(msgs, head);
	const char *tail = ending ? " s; interrupt twice to end at once\n" :
				    " s; interrupt again to end at once\n";
	unsigned int n = w->cancel.on_device;
	char want[128];
	char *end = NULL;
	double secs = 0;

	if (!w->cancel.calls) {
		CHECK(!at, "the driver gave up on nothing, and pdd says:\n%s", msgs);
		return;
	}
	snprintf(want, sizeof(want), "%s%u request%s in flight, nothing back for ", head, n,
		 n == 1 ? "" : "s");
	CHECK(at && (at == msgs || at[-1] == '\n') && !strstr(at + 1, head),
	      "the driver gave up on silent devices, and pdd does not say \"%s\" once, but:\n%s",
	      head, msgs);
	CHECK(!ending || !s->r.signal || s->r.err, "a stop was asked for, and pdd says:\n%s", msgs);
	CHECK(!strncmp(at, want, strlen(want)), "the engines held %u requests on the device, "
	      "and pdd says:\n%s", n, msgs);
	secs = strtod(at + strlen(want), &end);
	CHECK(secs >= 1 && !strncmp(end, tail, strlen(tail)),
	      "pdd says it waited less than a second, or not how to end at once:\n%s", msgs);
	CHECK(w->cancel.back >= w->cancel.engine, "the engines gave up %u requests, %" PRIu64
	      " came back cancelled", w->cancel.engine, w->cancel.back);
	CHECK(s->r.done <= w->cancel.rel, "the done mark %" PRIu64 " passes byte %" PRIu64
	      ", where transfer %" PRIu64 " was given up", s->r.done, w->cancel.rel,
	      w->cancel.idx);
	if (s->cancel)
		CHECK(s->r.signal == SIGINT && !s->r.err, "a copy stopped on silent devices "
		      "ends with signal %d and %s", s->r.signal, pdd_strerror(s->r.err));
	n_said_wait++;
}

/* The map saved last: finished only where the last flush made the
 * output hold the input, bad only on unreadable blocks (or where the
 * earlier run had them), and after a copy that finished, finished
 * everywhere but exactly the zero-filled blocks. */
static void check_map(struct sched *s, bool stopped)
{
	struct fk_world *w = &s->w;
	uint64_t in_off = s->p.in_off;
	struct pdd_map disk;
	int err;

	pdd_map_init(&disk, map_path);
	err = pdd_map_load(&disk);
	CHECK(!err, "the saved map cannot be read: %s", strerror(-err));
	fk_check_map_durable(w, &disk, w->durable, "the map saved at the end");
	CHECK(!w->fail[0], "%s", w->fail);
	for (size_t i = 0; i < disk.n; i++) {
		const struct pdd_extent *e = &disk.ext[i];

		for (uint64_t pos = e->pos; e->status == PDD_MAP_BAD && pos < e->pos + e->size; pos++)
			CHECK(sched_in_bad(s, pos) || (pos >= in_off && pos - in_off < w->data_rel &&
						 s->pre[pos - in_off] == PDD_MAP_BAD),
			      "the map marks input byte %" PRIu64 " bad, which reads fine", pos);
	}
	if (!s->r.err && !stopped) {
		uint64_t done = pdd_map_bytes(&disk, in_off, in_off + w->data_rel, PDD_MAP_DONE);
		uint64_t bad = pdd_map_bytes(&disk, in_off, in_off + w->data_rel, PDD_MAP_BAD);

		CHECK(done == w->data_rel - s->zeroed && bad == s->zeroed,
		      "a finished copy's map has %" PRIu64 " bytes finished and %" PRIu64
		      " bad, not %" PRIu64 " and %" PRIu64, done, bad, w->data_rel - s->zeroed,
		      s->zeroed);
		CHECK(disk.cur_status == PDD_MAP_DONE, "a finished copy's map says '%c'",
		      disk.cur_status);
	}
	pdd_map_free(&disk);
}

/* Every counter of st into sum: the struct holds counters only. */
static void add_stats(struct fk_stats *sum, const struct fk_stats *st)
{
	uint64_t *to = (uint64_t *)sum;
	const uint64_t *from = (const uint64_t *)st;

	_Static_assert(sizeof(*st) % sizeof(uint64_t) == 0, "fk_stats holds uint64_t only");
	for (size_t i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		to[i] += from[i];
}

static void check_outcome(struct sched *s, int err)
{
	struct fk_world *w = &s->w;
	const struct pdd_result *r = &s->r;
	bool stopped = w->stop_at && w->reaps >= w->stop_at;
	bool flush_failed = (w->fail_flush && w->flushes >= w->fail_flush) ||
			    w->dead_flush_failed;
	uint64_t mine = 0, nbad = 0;

	CHECK(!err, "pdd_copy() could not start: %s", strerror(-err));
	CHECK(!w->fail[0], "%s", w->fail);
	CHECK(r->signal == (stopped ? SIGINT : 0), "signal %d after a copy %sstopped",
	      r->signal, stopped ? "" : "not ");
	/* the done mark: never past a byte not written; and without a map
	 * that had pieces finished, exactly the written prefix */
	CHECK(r->done <= w->wp, "the done mark %" PRIu64 " passes unwritten byte %" PRIu64,
	      r->done, w->wp);
	CHECK(s->resume || r->done == w->wp, "the done mark %" PRIu64 " stops below %" PRIu64
	      ", and every byte below that is written", r->done, w->wp);
	/* sparse=: counted once under the done mark, never more than zeroed */
	CHECK(r->zero_bytes <= w->st.zeroed && r->zero_bytes <= r->out_bytes,
	      "%" PRIu64 " bytes counted zeroed, %" PRIu64 " were, of %" PRIu64 " out",
	      r->zero_bytes, w->st.zeroed, r->out_bytes);
	CHECK(!memcmp(w->out + w->out_off, s->expect, r->done),
	      "the output below the done mark is not the input");
	for (uint64_t rel = 0; rel < r->done; rel++)
		mine += w->written[rel] == FK_WRITTEN;
	CHECK(r->out_bytes == mine, "%" PRIu64 " bytes out reported, %" PRIu64
	      " written below the done mark", r->out_bytes, mine);
	check_stop(s, stopped, flush_failed);
	check_death(s);
	check_cancel(s);

	/* coe=1: each zero-filled block below the done mark, in order */
	for (size_t i = 0; s->o.coe && i < s->nbad; i++) {
		uint64_t b = s->bad[i], rel = b - s->p.in_off;

		if (b < s->p.in_off || rel >= w->data_rel || s->earlier[rel])
			continue;
		if (rel >= r->done)
			break;
		CHECK(nbad < r->nbad_lbas && r->bad_lbas[nbad] == b / s->in.lbs,
		      "bad block %zu reported as LBA %" PRIu64 ", not %" PRIu64, (size_t)nbad,
		      nbad < r->nbad_lbas ? r->bad_lbas[nbad] : UINT64_MAX, b / s->in.lbs);
		nbad++;
	}
	CHECK(r->bad_blocks == nbad && r->nbad_lbas == nbad,
	      "%" PRIu64 " bad blocks reported, %" PRIu64 " zero-filled", r->bad_blocks, nbad);
	CHECK(!nbad || r->bad_unit == s->in.lbs, "bad blocks of %u bytes", r->bad_unit);

	if (!s->o.map) {	/* sync=1 alone: one flush, at the end */
		CHECK(w->flushes == (s->o.sync && r->out_bytes), "%u flushes", w->flushes);
		CHECK(!w->flushes || flush_failed ||
		      !memcmp(w->durable, w->out, w->out_size),
		      "sync=1, and the output is not durable after the flush");
	} else {
		check_map(s, stopped);
	}

	/* the driver's share of what was given up is the rest of what came
	 * back cancelled */
	w->st.cancelled[1] = w->cancel.back - w->st.cancelled[0];
	add_stats(&total_st, &w->st);
	n_coe_runs += s->o.coe && nbad;
	n_err_runs[r->err_op <= PDD_OP_CLOSE ? r->err_op : PDD_OP_NONE] += r->err != 0;
	n_resumed += s->resume;
	n_eof += s->eof_early;
	n_stopped += stopped;
	n_cancel_sched += s->cancel;
}

/* A copy that never ends would hang make unit without a word: the
 * watchdog names the seed and stops the test.  The message is made
 * before each copy, as a signal handler may not format. */
static char watchdog_msg[128];
static volatile sig_atomic_t watchdog_len;

/* The map's directory and what is in it; safe in a signal handler. */
static int remove_files(void)
{
	unlink(map_path);
	unlink(map_bak);
	unlink(map_new);
	return rmdir(map_dir);
}

static void watchdog(int sig)
{
	(void)sig;
	remove_files();
	if (write(2, watchdog_msg, (size_t)watchdog_len) < 0)
		_exit(2);
	_exit(1);
}

/* ^C or a timeout in the middle of a run leaves nothing behind either. */
static void interrupted(int sig)
{
	remove_files();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The schedule in words, when one seed is run to look into it. */
static void describe(const struct sched *s)
{
	const struct fk_world *w = &s->w;

	fprintf(stderr, "input %s lbs=%u size=%" PRIu64 "; bs=%" PRIu64 " bpt=%" PRIu64
		" skip=%" PRIu64 " seek=%" PRIu64 " count=%s%" PRIu64 " total=%" PRIu64
		" (input has %" PRIu64 ") qd=%u depth=%u coe=%d coe_limit=%" PRIu64
		" retries=%u sync=%d map=%s%s\n",
		s->in.kind == PDD_KIND_BLOCK ? "block device" : "file", s->in.lbs, s->in.size,
		s->o.bs, s->o.bpt, s->o.skip, s->o.seek, s->o.count_given ? "" : "none/",
		s->o.count, s->p.total, w->data_rel, s->o.qd, s->p.depth, s->o.coe, s->o.coe_limit, s->o.retries,
		s->o.sync, s->o.map ? "yes" : "no", s->resume ? " (resumed)" : "");
	fprintf(stderr, "fake: busy %u%% short %u%%%s late %u%% up to %u timeout %u%% "
		"bad_off %u%% tick %u%% stop at reap %" PRIu64 ", flush %u fails; bad write at %"
		PRId64 "; bad blocks at:", w->p_busy, w->p_short, w->short_bytes ? " (bytes)" : "",
		w->p_late, w->max_late, w->p_timeout, w->p_bad_off, w->p_tick, w->stop_at,
		w->fail_flush, w->bad_write == UINT64_MAX ? -1 : (int64_t)w->bad_write);
	for (size_t i = 0; i < s->nbad; i++)
		fprintf(stderr, " %" PRIu64, s->bad[i]);
	fprintf(stderr, "\n");
	if (w->die_side >= 0)
		fprintf(stderr, "fake: the %s engine dies at its reap %" PRIu64 "%s; a flush of "
			"a dead output %s\n", w->die_side == PDD_OUT ? "output" : "input",
			w->die_at, w->die_busy ? " or the first after it with the other busy" : "",
			w->dead_flush_ok ? "succeeds" : "fails");
	if (w->p_silent)
		fprintf(stderr, "fake: from the stop on, the devices fall silent at a reap %u%% of "
			"the time; %u%% of the requests taken wait, not on the device\n",
			w->p_silent, w->p_queued);
	if (s->resume) {
		fprintf(stderr, "earlier map:");
		for (size_t i = 0; i < s->map.n; i++)
			fprintf(stderr, " %" PRIu64 "+%" PRIu64 "%c", s->map.ext[i].pos,
				s->map.ext[i].size, s->map.ext[i].status);
		fprintf(stderr, "\n");
	}
}

static bool verbose;

static void run_one(unsigned long long seed)
{
	struct sched s;
	int err = sched_setup(&s, seed);

	if (err)
		fail_msg("seed=%llu: cannot set up the schedule: %s", seed, strerror(-err));
	if (verbose)
		describe(&s);
	fk_clock_skew = 0;
	watchdog_len = snprintf(watchdog_msg, sizeof(watchdog_msg),
				"\nseed=%llu: the copy did not end within %d s\n", seed,
				WATCHDOG_SECS);
	msgs = NULL;
	pdd_msg_stream = open_memstream(&msgs, &msgs_len);
	if (!pdd_msg_stream)
		fail_msg("seed=%llu: cannot catch pdd's messages", seed);
	alarm(WATCHDOG_SECS);
	err = pdd_copy(&s.p, &s.in, &s.out, &s.o, s.o.map ? &s.map : NULL, &s.r);
	alarm(0);
	pdd_stop_signal = 0;
	fclose(pdd_msg_stream);
	pdd_msg_stream = NULL;
	if (verbose)
		fputs(msgs, stderr);
	check_outcome(&s, err);
	sched_teardown(&s);
	free(msgs);
	msgs = NULL;
}

static double raw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);	/* not the test's skewed clock */
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_core_schedules(void **state)
{
	const char *one = getenv("PDD_CORE_SEED"), *runs_s = getenv("PDD_CORE_RUNS");
	unsigned long long first = 1, runs = runs_s ? strtoull(runs_s, NULL, 0) : 10000;
	double t0 = raw_now();

	(void)state;
	signal(SIGALRM, watchdog);
	if (one) {	/* that seed, and those after it with PDD_CORE_RUNS */
		first = strtoull(one, NULL, 0);
		runs = runs_s ? runs : 1;
	}
	verbose = runs == 1;
	for (unsigned long long i = 0; i < runs; i++)
		run_one(first + i);
	print_message("%llu schedules in %.2f s: %llu with coe and bad blocks, %llu resumed maps, "
		      "%llu inputs ending early, %llu stopped by SIGINT; errors: %llu read "
		      "(%llu at coe_limit), %llu write, %llu flush\n", runs, raw_now() - t0,
		      (unsigned long long)n_coe_runs, (unsigned long long)n_resumed,
		      (unsigned long long)n_eof, (unsigned long long)n_stopped,
		      (unsigned long long)n_err_runs[PDD_OP_READ], (unsigned long long)n_limit,
		      (unsigned long long)n_err_runs[PDD_OP_WRITE],
		      (unsigned long long)n_err_runs[PDD_OP_FLUSH]);
	print_message("fake: %llu busy, %llu short, %llu late, %llu timed out, %llu read EIO, "
		      "%llu write EIO, %llu resumed writes, %llu map flushes before the last, "
		      "%llu failed flushes\n",
		      (unsigned long long)total_st.busy, (unsigned long long)total_st.shorts,
		      (unsigned long long)total_st.late, (unsigned long long)total_st.timeouts,
		      (unsigned long long)total_st.eio_reads,
		      (unsigned long long)total_st.eio_writes,
		      (unsigned long long)total_st.resumed_writes,
		      (unsigned long long)total_st.saves_mid,
		      (unsigned long long)total_st.flush_fails);
	print_message("sparse=: %llu bytes zeroed, %llu zeroings refused\n",
		      (unsigned long long)total_st.zeroed, (unsigned long long)total_st.nozero);
	print_message("engines died: %llu input, %llu output; said so %llu and %llu times, "
		      "%llu times a lower error of the copy's own was said; %llu requests kept "
		      "by a dead engine, %llu handed back by the other after, %llu reaps of a dead "
		      "engine, %llu flushes of a dead output failed\n",
		      (unsigned long long)total_st.deaths[PDD_IN],
		      (unsigned long long)total_st.deaths[PDD_OUT],
		      (unsigned long long)n_died_said[PDD_IN],
		      (unsigned long long)n_died_said[PDD_OUT], (unsigned long long)n_died_other,
		      (unsigned long long)total_st.abandoned, (unsigned long long)total_st.drained,
		      (unsigned long long)total_st.dead_reaps,
		      (unsigned long long)total_st.dead_flush_fails);
	print_message("stops on silent devices: %llu schedules, %llu silent reaps; the driver "
		      "gave up %llu times and said so %llu times, with %llu requests on the "
		      "devices; %llu given up by the engines, %llu by the driver; %llu writes "
		      "started after\n", (unsigned long long)n_cancel_sched,
		      (unsigned long long)total_st.silent_reaps, (unsigned long long)total_st.stalls,
		      (unsigned long long)n_said_wait, (unsigned long long)total_st.on_device,
		      (unsigned long long)total_st.cancelled[0],
		      (unsigned long long)total_st.cancelled[1], (unsigned long long)total_st.after);
	if (runs >= 1000) {	/* the schedules did reach every path they are for */
		assert_true(n_coe_runs && n_resumed && n_eof && n_stopped && n_limit);
		assert_true(n_err_runs[PDD_OP_READ] && n_err_runs[PDD_OP_WRITE] &&
			    n_err_runs[PDD_OP_FLUSH]);
		assert_true(total_st.zeroed && total_st.nozero);
		assert_true(total_st.busy && total_st.shorts && total_st.late &&
			    total_st.timeouts && total_st.resumed_writes && total_st.saves_mid);
		assert_true(n_died_said[PDD_IN] && n_died_said[PDD_OUT] && total_st.abandoned &&
			    total_st.drained && total_st.dead_flush_fails);
		assert_true(total_st.stalls && total_st.on_device && total_st.cancelled[0] &&
			    total_st.cancelled[1] && total_st.after);
	}
}

static int make_dir(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	/* the map is saved with fsync: memory is much faster than a disk */
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(map_dir, sizeof(map_dir), "%s/pdd-core-XXXXXX", tmp);
	if (!mkdtemp(map_dir))
		return -1;
	snprintf(map_path, sizeof(map_path), "%s/map", map_dir);
	snprintf(map_bak, sizeof(map_bak), "%s.bak", map_path);
	snprintf(map_new, sizeof(map_new), "%s.new", map_path);
	signal(SIGINT, interrupted);
	signal(SIGTERM, interrupted);
	return 0;
}

static int remove_dir(void **state)
{
	(void)state;
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	return remove_files();	/* a failed schedule leaves its map behind */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_core_schedules),
	};

	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
