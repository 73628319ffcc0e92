// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * status=progress, -p: while the copy runs, a line at most once a second
 * with the bytes written, as GNU dd's status=progress shows them, and
 * what dd leaves to the reader: the percent of the total, the rate since
 * the last line and on average, and the time left.  The copy loop calls
 * pdd_progress_tick() on every turn and this decides whether a second
 * has passed, so only the copy loop's thread ever prints the line and it
 * cannot interleave with a message.  msg.c prints it: on a terminal
 * rewritten in place and left open (the next message ends it), elsewhere
 * one line per update, so that a log file holds no carriage returns.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "map.h"
#include "pdd.h"

#define PROGRESS_INTERVAL 1.0	/* seconds between lines, as dd */
#define STALL_SECS 5.0	/* no request back for this long: the line says so */
#define MAX_LEFT 3.6e9		/* a million hours: beyond it no estimate
				 * means anything, and it still fits */

static struct {
	bool on;			/* asked for, and the copy is running */
	bool in_place;			/* on a terminal */
	uint64_t total;			/* bytes to write; PDD_UNTIL_EOF if unknown */
	double t0;			/* when the copy started */
	double last;			/* when the last line was printed */
	uint64_t last_bytes;		/* bytes written then */
} pr;

/* The line with or without the sizes in parentheses and the average. */
static size_t compose(char *buf, size_t len, uint64_t bytes, uint64_t total,
		      double secs, double rate, bool sizes, bool average)
{
	char si[32], iec[32], now[40], avg[40];
	double avg_rate = secs > 0 ? bytes / secs : 0;
	size_t n;

	pdd_fmt_human(si, sizeof(si), (double)bytes, false);
	pdd_fmt_human(iec, sizeof(iec), (double)bytes, true);
	pdd_fmt_rate(now, sizeof(now), rate);
	pdd_fmt_rate(avg, sizeof(avg), avg_rate);
	/* the sizes as dd's bytes line has them (stats.c) */
	if (bytes < 1000 || !sizes)
		n = (size_t)snprintf(buf, len, "%" PRIu64 " byte%s copied", bytes,
				     bytes == 1 ? "" : "s");
	else if (bytes < 1024)
		n = (size_t)snprintf(buf, len, "%" PRIu64 " bytes (%s) copied", bytes, si);
	else
		n = (size_t)snprintf(buf, len, "%" PRIu64 " bytes (%s, %s) copied",
				     bytes, si, iec);
	if (total != PDD_UNTIL_EOF && n < len) {
		/* rounded down, so that 100% means finished */
		double pct = bytes >= total ? 100 : floor(100.0 * bytes / total);

		if (bytes < total && pct > 99)
			pct = 99;
		n += (size_t)snprintf(buf + n, len - n, ", %.0f%%", pct);
	}
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, ", %s now", now);
	if (average && n < len)
		n += (size_t)snprintf(buf + n, len - n, ", %s average", avg);
	/* from the average, as the current rate swings with every stall;
	 * rounded up, so that no time left means finished */
	if (total != PDD_UNTIL_EOF && avg_rate > 0 && n < len) {
		double left = bytes >= total ? 0 : ceil((total - bytes) / avg_rate);
		uint64_t s;

		if (left > MAX_LEFT)
			left = MAX_LEFT;
		s = (uint64_t)left;
		n += (size_t)snprintf(buf + n, len - n, ", %" PRIu64 ":%02u:%02u left",
				      s / 3600, (unsigned int)(s / 60 % 60),
				      (unsigned int)(s % 60));
	}
	return n;
}

/*
 * "123731968 bytes (124 MB, 118 MiB) copied, 47%, 12.3 MB/s now,
 * 11.0 MB/s average, 0:00:12 left": bytes written; the percent of total
 * and the time left only when the total is known, the time left only
 * once something is written; rate is the current rate, secs the time
 * since the copy started.  With a width (a terminal's columns; 0 for
 * none) the line is kept shorter than it, so that the terminal never
 * wraps it and a carriage return can go back to its start: the sizes in
 * parentheses go first, then the average, then the end is cut off.
 * Returns the length of the line, as snprintf.
 */
size_t pdd_fmt_progress(char *buf, size_t len, uint64_t bytes, uint64_t total,
			double secs, double rate, unsigned int width)
{
	char line[256];
	size_t n = compose(line, sizeof(line), bytes, total, secs, rate, true, true);

	if (width && n >= width)
		n = compose(line, sizeof(line), bytes, total, secs, rate, false, true);
	if (width && n >= width)
		n = compose(line, sizeof(line), bytes, total, secs, rate, false, false);
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	if (width && n >= width) {
		n = width - 1;
		line[n] = '\0';
	}
	return (size_t)snprintf(buf, len, "%s", line);
}

/* The copy starts at t0; todo is what it will write (all of the range,
 * or what a map leaves to do), so that percent and time left count only
 * that. */
void pdd_progress_start(bool on, const struct pdd_extent *todo, size_t n,
			double t0)
{
	memset(&pr, 0, sizeof(pr));
	if (!on)
		return;
	pr.on = true;
	pr.in_place = pdd_msg_terminal() != 0;
	pr.t0 = pr.last = t0;
	for (size_t i = 0; i < n && pr.total != PDD_UNTIL_EOF; i++)
		pr.total = todo[i].size == PDD_UNTIL_EOF ||
			   todo[i].size > PDD_UNTIL_EOF - 1 - pr.total ?
			   PDD_UNTIL_EOF : pr.total + todo[i].size;
}

/* bytes are written by now, and no request has come back for idle
 * seconds: a line if a second has passed since the last one (or since
 * the start, so a copy shorter than that shows none).  A copy that has
 * heard nothing from its devices for STALL_SECS says so at the end of
 * the line ("no data for 12 s"), which is kept whatever the width cuts. */
void pdd_progress_tick(uint64_t bytes, double now, double idle)
{
	char line[256], stall[48] = "";
	unsigned int width = pr.in_place ? pdd_msg_terminal() : 0;
	size_t n;

	if (!pr.on || now - pr.last < PROGRESS_INTERVAL)
		return;
	if (idle >= STALL_SECS)
		snprintf(stall, sizeof(stall), ", no data for %.0f s", floor(idle));
	n = strlen(stall);
	if (width && width <= n + 20)
		stall[0] = '\0', n = 0;	/* too narrow for both */
	pdd_fmt_progress(line, sizeof(line) - n, bytes, pr.total, now - pr.t0,
			 bytes > pr.last_bytes ? (bytes - pr.last_bytes) / (now - pr.last) : 0,
			 width ? width - (unsigned int)n : 0);
	strcat(line, stall);
	pdd_msg_progress(line, pr.in_place);
	pr.last = now;
	pr.last_bytes = bytes;
}

/* The copy is over: the report starts on a line of its own, under the
 * last progress line left as it was. */
void pdd_progress_end(void)
{
	if (pr.on)
		pdd_msg_end_line();
	pr.on = false;
}
