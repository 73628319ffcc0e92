// SPDX-License-Identifier: GPL-2.0-or-later
/* faultfs's fault set: see faults.h, and faultfs.c for the syntax */
#define _GNU_SOURCE
#include "faults.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXR 256
#define MAX_US 60000000		/* a minute, for every delay */
#define MAX_FLAKY 1000000000
#define MAX_RATE 100000000000ull	/* bytes per second, for rate= */

/* [lo, hi) and, for slow= and flaky=, its value: microseconds, failures left */
struct range { uint64_t lo, hi, v; };

struct faults {
	struct range rd[MAXR], wr[MAXR], lose[MAXR], slow[MAXR], flaky[MAXR], srate[MAXR];
	int nrd, nwr, nlose, nslow, nflaky, nsrate, fsync, fallocate;
	uint64_t delay_us, bad_delay_us, jitter_us;
	uint64_t rate, write_rate;	/* bytes per second, 0: as fast as it goes */
};

static struct faults cur;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* While rate= is set one request is served at a time, in the order the
 * requests came (a ticket each): a disk serves its queue in order, where
 * a plain mutex would let whichever thread the host woke first go next.
 * Each ticket waits on its own condition (tickets modulo NWAKE), so that
 * the end of a turn wakes the next in line alone, not every thread that
 * waits: on two cores shared with the copy, waking them all cost turns
 * their time. */
#define NWAKE 64
static pthread_mutex_t serve_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t serve_cond[NWAKE] = { [0 ... NWAKE - 1] = PTHREAD_COND_INITIALIZER };
static uint64_t next_ticket, now_serving;	/* under serve_lock */
static uint64_t busy_until;	/* the last turn's end, in the disk's time */
static uint64_t late_turns, late_ns;	/* turns that ran over, and by how much */
static unsigned int jitter_seed = 1;	/* under lock */

static int number(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

/* "A-B,C-D" (or ""), or with max "A-B:V,C-D:V" (V <= max), into r; -1
 * when malformed */
static int ranges(char *s, struct range *r, int *n, uint64_t max)
{
	char *save = NULL, *tok, *dash, *colon;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		dash = strchr(tok, '-');
		colon = strchr(tok, ':');
		if (!dash || *n >= MAXR || !colon != !max)
			return -1;
		*dash = 0;
		if (colon) {
			*colon = 0;
			if (number(colon + 1, &r[*n].v) || r[*n].v > max)
				return -1;
		}
		if (number(tok, &r[*n].lo) || number(dash + 1, &r[*n].hi) ||
		    r[*n].lo >= r[*n].hi)
			return -1;
		(*n)++;
	}
	return 0;
}

/* -1 when a range's value is 0 (slow_rate= of 0 bytes per second) */
static int no_zero(const struct range *r, int n)
{
	for (int i = 0; i < n; i++)
		if (!r[i].v)
			return -1;
	return 0;
}

/* NAME=V with V <= max into *v; 1 when tok is not NAME=, -1 when bad */
static int value(const char *tok, const char *name, uint64_t max, uint64_t *v)
{
	size_t n = strlen(name);

	if (strncmp(tok, name, n) || tok[n] != '=')
		return 1;
	return number(tok + n + 1, v) || *v > max ? -1 : 0;
}

/* a line of FAULTs into f; *reset set when it says "reset" */
static int parse(char *line, struct faults *f, int *reset)
{
	char *save = NULL, *tok;
	uint64_t v = 0;
	int r;

	memset(f, 0, sizeof(*f));
	*reset = 0;
	for (tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		if (!strncmp(tok, "read=", 5))
			r = ranges(tok + 5, f->rd, &f->nrd, 0);
		else if (!strncmp(tok, "write=", 6))
			r = ranges(tok + 6, f->wr, &f->nwr, 0);
		else if (!strncmp(tok, "lose=", 5))
			r = ranges(tok + 5, f->lose, &f->nlose, 0);
		else if (!strncmp(tok, "slow=", 5))
			r = ranges(tok + 5, f->slow, &f->nslow, MAX_US);
		else if (!strncmp(tok, "flaky=", 6))
			r = ranges(tok + 6, f->flaky, &f->nflaky, MAX_FLAKY);
		else if (!strncmp(tok, "slow_rate=", 10))
			r = ranges(tok + 10, f->srate, &f->nsrate, MAX_RATE) || no_zero(f->srate, f->nsrate);
		else if ((r = value(tok, "fsync", 1, &v)) <= 0)
			f->fsync = (int)v;
		else if ((r = value(tok, "fallocate", 1, &v)) <= 0)
			f->fallocate = (int)v;
		else if ((r = value(tok, "delay_us", MAX_US, &v)) <= 0)
			f->delay_us = v;
		else if ((r = value(tok, "bad_delay_us", MAX_US, &v)) <= 0)
			f->bad_delay_us = v;
		else if ((r = value(tok, "jitter_us", MAX_US, &v)) <= 0)
			f->jitter_us = v;
		else if ((r = value(tok, "rate", MAX_RATE, &v)) <= 0)
			f->rate = v;
		else if ((r = value(tok, "write_rate", MAX_RATE, &v)) <= 0)
			f->write_rate = v;
		else
			r = strcmp(tok, "reset") ? -1 : (*reset = 1, 0);
		if (r)
			return -1;
	}
	return 0;
}

int faults_set(const char *line, size_t len, int *reset)
{
	struct faults *f = malloc(sizeof(*f));
	char *s = strndup(line, len);
	int r = -ENOMEM;

	if (f && s) {
		r = parse(s, f, reset) ? -EINVAL : 0;
		if (!r) {
			pthread_mutex_lock(&lock);
			cur = *f;
			pthread_mutex_unlock(&lock);
		}
		if (!r && *reset) {
			pthread_mutex_lock(&serve_lock);
			late_turns = late_ns = 0;
			pthread_mutex_unlock(&serve_lock);
		}
	}
	free(s);
	free(f);
	return r;
}

static void put_ranges(FILE *o, const char *name, const struct range *r, int n, int valued)
{
	fprintf(o, "%s=", name);
	for (int i = 0; i < n; i++) {
		fprintf(o, "%s%" PRIu64 "-%" PRIu64, i ? "," : "", r[i].lo, r[i].hi);
		if (valued)
			fprintf(o, ":%" PRIu64, r[i].v);
	}
}

void faults_show(FILE *o)
{
	pthread_mutex_lock(&lock);
	put_ranges(o, "read", cur.rd, cur.nrd, 0);
	put_ranges(o, " write", cur.wr, cur.nwr, 0);
	fprintf(o, " fsync=%d delay_us=%" PRIu64 "%s", cur.fsync, cur.delay_us,
		cur.fallocate ? " fallocate=1" : "");
	/* the keys added since: only when set, so that the line reads as it
	 * did before them */
	if (cur.nlose)
		put_ranges(o, " lose", cur.lose, cur.nlose, 0);
	if (cur.nslow)
		put_ranges(o, " slow", cur.slow, cur.nslow, 1);
	if (cur.nflaky)
		put_ranges(o, " flaky", cur.flaky, cur.nflaky, 1);
	if (cur.bad_delay_us)
		fprintf(o, " bad_delay_us=%" PRIu64, cur.bad_delay_us);
	if (cur.jitter_us)
		fprintf(o, " jitter_us=%" PRIu64, cur.jitter_us);
	if (cur.rate)
		fprintf(o, " rate=%" PRIu64, cur.rate);
	if (cur.write_rate)
		fprintf(o, " write_rate=%" PRIu64, cur.write_rate);
	if (cur.nsrate)
		put_ranges(o, " slow_rate", cur.srate, cur.nsrate, 1);
	fputc('\n', o);
	pthread_mutex_unlock(&lock);
}

static int overlaps(const struct range *r, uint64_t lo, uint64_t hi)
{
	return lo < r->hi && r->lo < hi;
}

static int any(const struct range *r, int n, uint64_t lo, uint64_t hi)
{
	for (int i = 0; i < n; i++)
		if (overlaps(&r[i], lo, hi))
			return 1;
	return 0;
}

int faults_request(int write, off_t off, size_t size)
{
	uint64_t lo = (uint64_t)off, hi = lo + size, slowest = 0, delay;
	int bad;

	pthread_mutex_lock(&lock);
	bad = write ? any(cur.wr, cur.nwr, lo, hi) : any(cur.rd, cur.nrd, lo, hi);
	for (int i = 0; !write && i < cur.nflaky; i++)
		if (overlaps(&cur.flaky[i], lo, hi) && cur.flaky[i].v) {
			cur.flaky[i].v--;
			bad = 1;
		}
	for (int i = 0; i < cur.nslow; i++)
		if (overlaps(&cur.slow[i], lo, hi) && cur.slow[i].v > slowest)
			slowest = cur.slow[i].v;
	delay = cur.delay_us + slowest + (bad && !write ? cur.bad_delay_us : 0);
	if (cur.jitter_us)
		delay += (uint64_t)rand_r(&jitter_seed) % (cur.jitter_us + 1);
	pthread_mutex_unlock(&lock);
	if (delay) {
		struct timespec ts = { (time_t)(delay / 1000000), (long)(delay % 1000000) * 1000 };

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	return bad;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void faults_turn_begin(struct faults_turn *t, int write, off_t off, size_t size)
{
	uint64_t rate, lo = (uint64_t)off, hi = lo + size;

	pthread_mutex_lock(&lock);
	rate = write && cur.write_rate ? cur.write_rate : cur.rate;
	/* the slowest slow_rate= area the request meets, where slower */
	for (int i = 0; i < cur.nsrate; i++)
		if (overlaps(&cur.srate[i], lo, hi) && cur.srate[i].v &&
		    (!rate || cur.srate[i].v < rate))
			rate = cur.srate[i].v;
	pthread_mutex_unlock(&lock);
	t->held = rate != 0;
	if (!t->held)
		return;
	/* a turn lasts a minute at most, as every delay: rate=1 would hold
	 * the disk for days */
	double ns = (double)size * 1e9 / (double)rate;
	uint64_t arrived = now_ns();

	if (ns > (double)MAX_US * 1000)
		ns = (double)MAX_US * 1000;
	pthread_mutex_lock(&serve_lock);
	uint64_t ticket = next_ticket++;

	while (ticket != now_serving)
		pthread_cond_wait(&serve_cond[ticket % NWAKE], &serve_lock);
	/* The disk keeps its own time: a request that was waiting when the
	 * one before it ended starts at that end, not when this thread got
	 * the lock, so that the host's wake-up latency (tens to hundreds of
	 * microseconds on a busy machine, against 655 us for 64 KiB at
	 * 100 MB/s) is not added to every request; one that came to an idle
	 * disk starts when it came, with no credit for the idle time. */
	t->end_ns = (arrived > busy_until ? arrived : busy_until) + (uint64_t)ns;
	busy_until = t->end_ns;
	pthread_mutex_unlock(&serve_lock);
}

void faults_turn_end(struct faults_turn *t)
{
	if (!t->held)
		return;
	/* the rest of the request's time at the rate, after the real I/O
	 * and any delay: the next request starts when this one would end */
	struct timespec ts = { (time_t)(t->end_ns / 1000000000u), (long)(t->end_ns % 1000000000u) };
	uint64_t now = now_ns();

	pthread_mutex_lock(&serve_lock);
	/* a turn that ran over (its thread was woken late, or its delays or
	 * real I/O took longer than the rate allows) ends now: the next does
	 * not start in the past.  That time is the disk's, lost: counted. */
	if (now > busy_until) {
		late_turns++;
		late_ns += now - busy_until;
		busy_until = now;
	}
	pthread_mutex_unlock(&serve_lock);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	pthread_mutex_lock(&serve_lock);
	now_serving++;
	pthread_cond_broadcast(&serve_cond[now_serving % NWAKE]);
	pthread_mutex_unlock(&serve_lock);
}

void faults_late(uint64_t *turns, uint64_t *us)
{
	pthread_mutex_lock(&serve_lock);
	*turns = late_turns;
	*us = late_ns / 1000;
	pthread_mutex_unlock(&serve_lock);
}

static int flag(const int *f)
{
	int v;

	pthread_mutex_lock(&lock);
	v = *f;
	pthread_mutex_unlock(&lock);
	return v;
}

int faults_fsync(void)
{
	return flag(&cur.fsync);
}

int faults_fallocate(void)
{
	return flag(&cur.fallocate);
}

int faults_lost(int fd, const char **buf, char **copy, off_t off, size_t size)
{
	uint64_t lo = (uint64_t)off, hi = lo + size;

	*copy = NULL;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < cur.nlose; i++) {
		uint64_t a = cur.lose[i].lo > lo ? cur.lose[i].lo : lo;
		uint64_t b = cur.lose[i].hi < hi ? cur.lose[i].hi : hi;

		if (a >= b)
			continue;
		if (!*copy && !(*copy = malloc(size))) {
			pthread_mutex_unlock(&lock);
			return -1;
		}
		if (*buf != *copy) {
			memcpy(*copy, *buf, size);
			*buf = *copy;
		}
		/* past the end of fd there is nothing to keep: zeros */
		memset(*copy + (a - lo), 0, b - a);
		(void)!pread(fd, *copy + (a - lo), b - a, (off_t)a);
	}
	pthread_mutex_unlock(&lock);
	return 0;
}
