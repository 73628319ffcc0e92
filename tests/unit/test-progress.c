// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for progress.c: the progress line to the byte (known and
 * unknown totals, nothing written yet, hours left, a narrow terminal),
 * one line a second at most from pdd_progress_tick(), and how msg.c
 * keeps it apart from messages: in place on a terminal, a message or the
 * end of the copy ends it first; elsewhere a line per update.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "map.h"
#include "pdd.h"
#include "capture.h"

#define MB 1000000ULL

static void check_line(uint64_t bytes, uint64_t total, double secs, double rate,
		       unsigned int width, const char *want)
{
	char buf[256];
	size_t n = pdd_fmt_progress(buf, sizeof(buf), bytes, total, secs, rate, width);

	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
}

/* --- the line ------------------------------------------------------------- */

static void test_line_known_total(void **state)
{
	(void)state;
	/* 138412032 bytes left at 10998397 B/s: 12.58 s, rounded up */
	check_line(123731968, 262144000, 11.25, 12.3e6, 0,
		   "123731968 bytes (124 MB, 118 MiB) copied, 47%, 12.3 MB/s now, "
		   "11.0 MB/s average, 0:00:13 left");
	check_line(5 * MB, 10 * MB, 5, 2.5e6, 0,
		   "5000000 bytes (5.0 MB, 4.8 MiB) copied, 50%, 2.5 MB/s now, "
		   "1.0 MB/s average, 0:00:05 left");
}

static void test_line_unknown_total(void **state)
{
	(void)state;
	/* a stream: no percent, no time left */
	check_line(123731968, PDD_UNTIL_EOF, 11.25, 12.3e6, 0,
		   "123731968 bytes (124 MB, 118 MiB) copied, 12.3 MB/s now, "
		   "11.0 MB/s average");
	check_line(0, PDD_UNTIL_EOF, 1, 0, 0,
		   "0 bytes copied, 0.0 kB/s now, 0.0 kB/s average");
}

static void test_line_zero_rate(void **state)
{
	(void)state;
	/* nothing written yet: no time left can be estimated */
	check_line(0, 10 * MB, 1.0, 0, 0,
		   "0 bytes copied, 0%, 0.0 kB/s now, 0.0 kB/s average");
	/* a stall: nothing since the last line; the time left comes from
	 * the average */
	check_line(5 * MB, 10 * MB, 5, 0, 0,
		   "5000000 bytes (5.0 MB, 4.8 MiB) copied, 50%, 0.0 kB/s now, "
		   "1.0 MB/s average, 0:00:05 left");
}

static void test_line_hours_left(void **state)
{
	(void)state;
	/* 9e11 bytes at 1e8 B/s: 9000 s */
	check_line(100000 * MB, 1000000 * MB, 1000, 1e8, 0,
		   "100000000000 bytes (100 GB, 93 GiB) copied, 10%, 100 MB/s now, "
		   "100 MB/s average, 2:30:00 left");
	/* 445506 s: hours are not wrapped into days */
	check_line(MB, 445507 * MB, 1, 1e6, 0,
		   "1000000 bytes (1.0 MB, 977 KiB) copied, 0%, 1.0 MB/s now, "
		   "1.0 MB/s average, 123:45:06 left");
	/* 59.2 s rounds up to a whole minute */
	check_line(MB, 60200000, 1, 1e6, 0,
		   "1000000 bytes (1.0 MB, 977 KiB) copied, 1%, 1.0 MB/s now, "
		   "1.0 MB/s average, 0:01:00 left");
}

static void test_line_percent_rounds_down(void **state)
{
	(void)state;
	/* 99.99%: 100% means finished; and a second left, not none, while
	 * a byte is */
	check_line(9999, 10000, 1, 9999, 0,
		   "9999 bytes (10 kB, 9.8 KiB) copied, 99%, 10.0 kB/s now, "
		   "10.0 kB/s average, 0:00:01 left");
	check_line(10000, 10000, 1, 10000, 0,
		   "10000 bytes (10 kB, 9.8 KiB) copied, 100%, 10.0 kB/s now, "
		   "10.0 kB/s average, 0:00:00 left");
	check_line(0, 0, 1, 0, 0,
		   "0 bytes copied, 100%, 0.0 kB/s now, 0.0 kB/s average");
}

static void test_line_small_counts(void **state)
{
	(void)state;
	/* the sizes as dd's bytes line has them */
	check_line(1, PDD_UNTIL_EOF, 1, 1, 0, "1 byte copied, 1.0 B/s now, 1.0 B/s average");
	check_line(999, PDD_UNTIL_EOF, 1, 999, 0,
		   "999 bytes copied, 999 B/s now, 999 B/s average");
	check_line(1000, PDD_UNTIL_EOF, 1, 1000, 0,
		   "1000 bytes (1.0 kB) copied, 1.0 kB/s now, 1.0 kB/s average");
}

static void test_line_narrow_terminal(void **state)
{
	const char *full = "123731968 bytes (124 MB, 118 MiB) copied, 47%, 12.3 MB/s now, "
			   "11.0 MB/s average, 0:00:13 left";

	(void)state;
	assert_int_equal(strlen(full), 93);
	/* it fits when shorter than the width: the cursor never reaches
	 * the last column */
	check_line(123731968, 262144000, 11.25, 12.3e6, 94, full);
	/* then the sizes in parentheses go */
	check_line(123731968, 262144000, 11.25, 12.3e6, 93,
		   "123731968 bytes copied, 47%, 12.3 MB/s now, 11.0 MB/s average, "
		   "0:00:13 left");
	check_line(123731968, 262144000, 11.25, 12.3e6, 80,
		   "123731968 bytes copied, 47%, 12.3 MB/s now, 11.0 MB/s average, "
		   "0:00:13 left");
	/* then the average */
	check_line(123731968, 262144000, 11.25, 12.3e6, 70,
		   "123731968 bytes copied, 47%, 12.3 MB/s now, 0:00:13 left");
	/* then the end is cut off */
	check_line(123731968, 262144000, 11.25, 12.3e6, 41,
		   "123731968 bytes copied, 47%, 12.3 MB/s n");
	check_line(123731968, 262144000, 11.25, 12.3e6, 1, "");
}

static void test_line_short_buffer(void **state)
{
	char buf[10];
	size_t n;

	(void)state;
	/* as snprintf: cut to the buffer, the whole length returned */
	n = pdd_fmt_progress(buf, sizeof(buf), 5 * MB, 10 * MB, 5, 2.5e6, 0);
	assert_string_equal(buf, "5000000 b");
	assert_int_equal(n, 89);
}

/* --- updates ---------------------------------------------------------------- */

static struct pdd_extent whole(uint64_t size)
{
	return (struct pdd_extent){ .pos = 0, .size = size };
}

static void test_tick_once_a_second(void **state)
{
	struct pdd_extent all = whole(10 * MB);

	(void)state;
	pdd_msg_columns = 0;		/* not a terminal */
	pdd_progress_start(true, &all, 1, 100.0);
	/* nothing in the first second */
	pdd_progress_tick(0, 100.0, 0);
	pdd_progress_tick(500000, 100.5, 0);
	pdd_progress_tick(900000, 100.99, 0);
	assert_string_equal(captured(), "");
	pdd_progress_tick(MB, 101.0, 0);
	assert_string_equal(captured(),
			    "1000000 bytes (1.0 MB, 977 KiB) copied, 10%, 1.0 MB/s now, "
			    "1.0 MB/s average, 0:00:09 left\n");
	cap_reset();
	/* a second from the last line, not from the start */
	pdd_progress_tick(1500000, 101.9, 0);
	assert_string_equal(captured(), "");
	/* now: 2 MB in the last second; average 1.5 MB/s, 7 MB left */
	pdd_progress_tick(3 * MB, 102.0, 0);
	assert_string_equal(captured(),
			    "3000000 bytes (3.0 MB, 2.9 MiB) copied, 30%, 2.0 MB/s now, "
			    "1.5 MB/s average, 0:00:05 left\n");
	cap_reset();
	/* no line open: the end adds nothing, and a message comes as it is */
	pdd_progress_end();
	pdd_error("boom");
	assert_string_equal(captured(), "pdd: boom\n");
	pdd_msg_columns = -1;
}

/* No request back for 5 s or more: the line says for how long, in whole
 * seconds; on a narrow terminal the rest is cut, not that. */
static void test_tick_stalled(void **state)
{
	struct pdd_extent all = whole(10 * MB);

	(void)state;
	pdd_msg_columns = 0;
	pdd_progress_start(true, &all, 1, 100.0);
	pdd_progress_tick(MB, 101.0, 4.9);
	assert_string_equal(captured(),
			    "1000000 bytes (1.0 MB, 977 KiB) copied, 10%, 1.0 MB/s now, "
			    "1.0 MB/s average, 0:00:09 left\n");
	cap_reset();
	pdd_progress_tick(MB, 112.0, 12.7);
	assert_string_equal(captured(),
			    "1000000 bytes (1.0 MB, 977 KiB) copied, 10%, 0.0 kB/s now, "
			    "83.3 kB/s average, 0:01:48 left, no data for 12 s\n");
	cap_reset();
	pdd_progress_end();
	pdd_msg_columns = 50;
	pdd_progress_start(true, &all, 1, 100.0);
	pdd_progress_tick(MB, 106.0, 5.0);
	/* the first line's rate is since the start: 1 MB in 6 s */
	assert_string_equal(captured(), "\r1000000 bytes copied, 10%, 167 k, no data for 5 s\033[K");
	cap_reset();
	pdd_progress_end();
	assert_string_equal(captured(), "\n");
	cap_reset();
	pdd_msg_columns = -1;
}

static void test_tick_off(void **state)
{
	struct pdd_extent all = whole(10 * MB);

	(void)state;
	pdd_msg_columns = 200;
	pdd_progress_start(false, &all, 1, 100.0);
	pdd_progress_tick(MB, 101.0, 0);
	pdd_progress_tick(2 * MB, 105.0, 0);
	pdd_progress_end();
	pdd_error("boom");
	assert_string_equal(captured(), "pdd: boom\n");
	pdd_msg_columns = -1;
}

static void test_tick_in_place_on_a_terminal(void **state)
{
	struct pdd_extent all = whole(10 * MB);

	(void)state;
	pdd_msg_columns = 200;
	pdd_progress_start(true, &all, 1, 100.0);
	pdd_progress_tick(MB, 101.0, 0);
	pdd_progress_tick(2 * MB, 102.0, 0);
	assert_string_equal(captured(),
			    "\r1000000 bytes (1.0 MB, 977 KiB) copied, 10%, 1.0 MB/s now, "
			    "1.0 MB/s average, 0:00:09 left\033[K"
			    "\r2000000 bytes (2.0 MB, 1.9 MiB) copied, 20%, 1.0 MB/s now, "
			    "1.0 MB/s average, 0:00:08 left\033[K");
	cap_reset();
	/* a message not shown leaves the line open */
	pdd_verbose = 0;
	pdd_info(1, "not shown");
	assert_string_equal(captured(), "");
	/* a message ends the line first */
	pdd_error("error reading 'x' at block 7: Input/output error");
	pdd_info(0, "and more");
	assert_string_equal(captured(),
			    "\npdd: error reading 'x' at block 7: Input/output error\n"
			    "pdd: and more\n");
	cap_reset();
	/* the next update starts a line again; the end closes it, once */
	pdd_progress_tick(3 * MB, 103.0, 0);
	pdd_progress_end();
	pdd_progress_end();
	pdd_msg_end_line();
	assert_string_equal(captured(),
			    "\r3000000 bytes (3.0 MB, 2.9 MiB) copied, 30%, 1.0 MB/s now, "
			    "1.0 MB/s average, 0:00:07 left\033[K\n");
	pdd_msg_columns = -1;
}

static void test_tick_usage_error_ends_the_line(void **state)
{
	struct pdd_extent all = whole(10 * MB);

	(void)state;
	pdd_msg_columns = 200;
	pdd_progress_start(true, &all, 1, 100.0);
	pdd_progress_tick(MB, 101.0, 0);
	cap_reset();
	pdd_usage_error("bad");
	assert_string_equal(captured(), "\npdd: bad\n" TRY_HELP);
	pdd_progress_end();
	pdd_msg_columns = -1;
}

static void test_tick_narrow_terminal(void **state)
{
	struct pdd_extent all = whole(10 * MB);

	(void)state;
	pdd_msg_columns = 60;
	pdd_progress_start(true, &all, 1, 100.0);
	pdd_progress_tick(MB, 101.0, 0);
	assert_string_equal(captured(),
			    "\r1000000 bytes copied, 10%, 1.0 MB/s now, 0:00:09 left\033[K");
	pdd_progress_end();
	pdd_msg_columns = -1;
}

static void test_total_from_the_pieces_to_do(void **state)
{
	/* a map left two pieces: percent and time left count only them */
	struct pdd_extent todo[] = {
		{ .pos = 0, .size = 4 * MB }, { .pos = 8 * MB, .size = 6 * MB },
	};
	struct pdd_extent stream = whole(PDD_UNTIL_EOF);

	(void)state;
	pdd_msg_columns = 0;
	pdd_progress_start(true, todo, 2, 0.0);
	pdd_progress_tick(5 * MB, 1.0, 0);
	assert_string_equal(captured(),
			    "5000000 bytes (5.0 MB, 4.8 MiB) copied, 50%, 5.0 MB/s now, "
			    "5.0 MB/s average, 0:00:01 left\n");
	pdd_progress_end();
	cap_reset();
	pdd_progress_start(true, &stream, 1, 0.0);
	pdd_progress_tick(5 * MB, 1.0, 0);
	assert_string_equal(captured(),
			    "5000000 bytes (5.0 MB, 4.8 MiB) copied, 5.0 MB/s now, "
			    "5.0 MB/s average\n");
	pdd_progress_end();
	pdd_msg_columns = -1;
}

#define T(f) cmocka_unit_test_setup_teardown(f, cap_open, cap_close)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_line_known_total),
		T(test_line_unknown_total),
		T(test_line_zero_rate),
		T(test_line_hours_left),
		T(test_line_percent_rounds_down),
		T(test_line_small_counts),
		T(test_line_narrow_terminal),
		T(test_line_short_buffer),
		T(test_tick_once_a_second),
		T(test_tick_stalled),
		T(test_tick_off),
		T(test_tick_in_place_on_a_terminal),
		T(test_tick_usage_error_ends_the_line),
		T(test_tick_narrow_terminal),
		T(test_total_from_the_pieces_to_do),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
