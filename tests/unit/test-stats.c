// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for stats.c: sizes and rates as dd shows them, the records
 * lines, dd's bytes line, sgp_dd's timing line, the whole report as each
 * status= prints it, and the exit status for each kind of error.  Every
 * line is compared to the byte.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exitcodes.h"
#include "pdd.h"
#include "scsi.h"

/* pdd_fmt_human() into a buffer: "value iec -> text" so a failure names
 * the input. */
static void check_human(double v, bool iec, const char *want)
{
	char buf[32], got[80], exp[80];
	size_t n = pdd_fmt_human(buf, sizeof(buf), v, iec);

	assert_int_equal(n, strlen(buf));
	snprintf(got, sizeof(got), "%.0f %s -> %s", v, iec ? "iec" : "si", buf);
	snprintf(exp, sizeof(exp), "%.0f %s -> %s", v, iec ? "iec" : "si", want);
	assert_string_equal(got, exp);
}

static void check_bytes_line(uint64_t bytes, double secs, const char *want)
{
	char buf[160];
	size_t n = pdd_fmt_bytes_line(buf, sizeof(buf), bytes, secs);

	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
}

static void check_time_line(uint64_t bytes, double secs, const char *want)
{
	char buf[160];
	size_t n = pdd_fmt_time_line(buf, sizeof(buf), bytes, secs);

	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
}

static void check_records(const char *dir, uint64_t bytes, uint64_t bs,
			  const char *want)
{
	char buf[80];
	size_t n = pdd_fmt_records(buf, sizeof(buf), dir, bytes, bs);

	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
}

static int exit_for(int err)
{
	struct pdd_result r = { .err = err };

	return pdd_exit_status(&r);
}

/* pdd_report() prints to stderr: catch it in a temporary file. */
static void check_report(const struct pdd_opts *o, const struct pdd_plan *p,
			 const struct pdd_result *r, const char *want)
{
	char got[1024];
	FILE *tmp = tmpfile();
	int saved;
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	pdd_report(o, p, r);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(tmp);
	n = fread(got, 1, sizeof(got) - 1, tmp);
	got[n] = '\0';
	fclose(tmp);
	assert_string_equal(got, want);
}

/* --- sizes and rates ------------------------------------------------------ */

static void test_human_bytes(void **state)
{
	(void)state;
	check_human(0, false, "0 B");
	check_human(0, true, "0 B");
	check_human(1, false, "1 B");
	check_human(512, false, "512 B");
	check_human(999, false, "999 B");
	check_human(1023, true, "1023 B");
}

static void test_human_one_decimal_below_ten(void **state)
{
	(void)state;
	check_human(1000, false, "1.0 kB");
	check_human(1024, true, "1.0 KiB");
	check_human(1536, false, "1.5 kB");
	check_human(1536, true, "1.5 KiB");
	check_human(2147483648.0, false, "2.1 GB");
	check_human(2147483648.0, true, "2.0 GiB");
	check_human(1048576, true, "1.0 MiB");
	check_human(1048576, false, "1.0 MB");
	check_human(9940, false, "9.9 kB");
}

static void test_human_rounds_to_nearest(void **state)
{
	(void)state;
	/* 9.96 kB rounds to 10.0: shown without a decimal */
	check_human(9960, false, "10 kB");
	check_human(10240, true, "10 KiB");
	check_human(999499, false, "999 kB");
	/* 999.999 kB rounds to 1000 kB: the next unit up */
	check_human(999999, false, "1.0 MB");
	check_human(999500, false, "1.0 MB");
	check_human(1048575, true, "1.0 MiB");
	check_human(123456789, false, "123 MB");
}

static void test_human_largest_units(void **state)
{
	(void)state;
	check_human(1e12, false, "1.0 TB");
	check_human(1e15, false, "1.0 PB");
	check_human(1e18, false, "1.0 EB");
	check_human(1e19, false, "10 EB");
	check_human(1e21, false, "1000 EB");
}

static void test_human_truncates_like_snprintf(void **state)
{
	char buf[4];

	(void)state;
	assert_int_equal(pdd_fmt_human(buf, sizeof(buf), 1000, false), 6);
	assert_string_equal(buf, "1.0");
}

/* --- records --------------------------------------------------------------- */

static void test_records(void **state)
{
	(void)state;
	check_records("in", 1000, 512, "1+1 records in");
	check_records("out", 1000, 512, "1+1 records out");
	check_records("in", 0, 512, "0+0 records in");
	check_records("out", 0, 4096, "0+0 records out");
	check_records("in", 1536, 512, "3+0 records in");
	check_records("in", 100, 512, "0+1 records in");
	check_records("out", 2147483648ULL, 512, "4194304+0 records out");
	check_records("out", 2147483649ULL, 4096, "524288+1 records out");
}

/* --- the bytes line -------------------------------------------------------- */

static void test_bytes_line_small(void **state)
{
	(void)state;
	check_bytes_line(0, 0, "0 bytes copied, 0 s, Infinity B/s");
	check_bytes_line(1, 0.5, "1 byte copied, 0.5 s, 2.0 B/s");
	check_bytes_line(512, 0.25, "512 bytes copied, 0.25 s, 2.0 kB/s");
	check_bytes_line(999, 1, "999 bytes copied, 1 s, 999 B/s");
}

static void test_bytes_line_si_only_below_1024(void **state)
{
	(void)state;
	/* "1000 B" would only repeat the number */
	check_bytes_line(1000, 0.5, "1000 bytes (1.0 kB) copied, 0.5 s, 2.0 kB/s");
	check_bytes_line(1023, 1, "1023 bytes (1.0 kB) copied, 1 s, 1.0 kB/s");
	check_bytes_line(1024, 1, "1024 bytes (1.0 kB, 1.0 KiB) copied, 1 s, 1.0 kB/s");
}

static void test_bytes_line_large(void **state)
{
	(void)state;
	check_bytes_line(2147483648ULL, 1.02,
			 "2147483648 bytes (2.1 GB, 2.0 GiB) copied, 1.02 s, 2.1 GB/s");
	check_bytes_line(2147483648ULL, 1.018321,
			 "2147483648 bytes (2.1 GB, 2.0 GiB) copied, 1.01832 s, 2.1 GB/s");
	check_bytes_line(2147483648ULL, 40,
			 "2147483648 bytes (2.1 GB, 2.0 GiB) copied, 40 s, 53.7 MB/s");
}

static void test_bytes_line_infinity_at_zero_seconds(void **state)
{
	(void)state;
	check_bytes_line(1, 0, "1 byte copied, 0 s, Infinity B/s");
	check_bytes_line(1000, 0, "1000 bytes (1.0 kB) copied, 0 s, Infinity B/s");
	check_bytes_line(2147483648ULL, 0,
			 "2147483648 bytes (2.1 GB, 2.0 GiB) copied, 0 s, Infinity B/s");
}

static void test_bytes_line_zero_bytes_zero_rate(void **state)
{
	(void)state;
	/* nothing copied in a measurable time is a rate of 0, as dd says,
	 * not an infinite one */
	check_bytes_line(0, 0.5, "0 bytes copied, 0.5 s, 0.0 kB/s");
}

/* --- the timing line ------------------------------------------------------- */

static void test_time_line(void **state)
{
	(void)state;
	check_time_line(2147483648ULL, 1.018321,
			"time to transfer data was 1.018321 secs, 2108.85 MB/sec");
	check_time_line(512, 1, "time to transfer data was 1.000000 secs, 0.00 MB/sec");
	check_time_line(1000000, 0.5, "time to transfer data was 0.500000 secs, 2.00 MB/sec");
	check_time_line(3000000000ULL, 125.25,
			"time to transfer data was 125.250000 secs, 23.95 MB/sec");
	/* microseconds are rounded, not cut */
	check_time_line(1000000, 0.0000996, "time to transfer data was 0.000100 secs, 10040.16 MB/sec");
}

static void test_time_line_no_rate_for_tiny_copies(void **state)
{
	(void)state;
	check_time_line(511, 1, "time to transfer data was 1.000000 secs");
	check_time_line(0, 1, "time to transfer data was 1.000000 secs");
	check_time_line(1048576, 0.00001, "time to transfer data was 0.000010 secs");
	check_time_line(1048576, 0, "time to transfer data was 0.000000 secs");
	check_time_line(0, 0, "time to transfer data was 0.000000 secs");
}

/* --- the report ------------------------------------------------------------ */

static void test_report_default(void **state)
{
	struct pdd_opts o = { .status = PDD_STATUS_DEFAULT };
	struct pdd_plan p = { .bs = 512 };
	struct pdd_result r = { .in_bytes = 1000, .out_bytes = 1000, .secs = 0.5 };

	(void)state;
	check_report(&o, &p, &r,
		     "1+1 records in\n"
		     "1+1 records out\n"
		     "1000 bytes (1.0 kB) copied, 0.5 s, 2.0 kB/s\n");
}

static void test_report_in_and_out_differ(void **state)
{
	struct pdd_opts o = { .status = PDD_STATUS_DEFAULT };
	struct pdd_plan p = { .bs = 4096 };
	struct pdd_result r = { .in_bytes = 16384, .out_bytes = 8192, .secs = 2,
				.err = -EIO };

	(void)state;
	check_report(&o, &p, &r,
		     "4+0 records in\n"
		     "2+0 records out\n"
		     "8192 bytes (8.2 kB, 8.0 KiB) copied, 2 s, 4.1 kB/s\n");
}

static void test_report_noxfer(void **state)
{
	struct pdd_opts o = { .status = PDD_STATUS_NOXFER };
	struct pdd_plan p = { .bs = 512 };
	struct pdd_result r = { .in_bytes = 1536, .out_bytes = 1536, .secs = 1 };

	(void)state;
	check_report(&o, &p, &r, "3+0 records in\n3+0 records out\n");
}

static void test_report_none(void **state)
{
	struct pdd_opts o = { .status = PDD_STATUS_NONE, .time = true };
	struct pdd_plan p = { .bs = 512 };
	struct pdd_result r = { .in_bytes = 1536, .out_bytes = 1536, .secs = 1 };

	(void)state;
	check_report(&o, &p, &r, "");
}

static void test_report_time(void **state)
{
	struct pdd_opts o = { .status = PDD_STATUS_NOXFER, .time = true };
	struct pdd_plan p = { .bs = 512 };
	struct pdd_result r = { .in_bytes = 1000000, .out_bytes = 1000000, .secs = 0.5,
				.user_secs = 0.25, .sys_secs = 0.125 };

	(void)state;
	check_report(&o, &p, &r,
		     "1953+1 records in\n"
		     "1953+1 records out\n"
		     "time to transfer data was 0.500000 secs, 2.00 MB/sec\n"
		     "cpu time: user 0.250 secs, sys 0.125 secs, 75.0% of elapsed\n");
}

/* --- exit status ----------------------------------------------------------- */

static void test_exit_status_mapping(void **state)
{
	(void)state;
	assert_int_equal(exit_for(0), 0);
	assert_int_equal(exit_for(-EIO), 3);
	assert_int_equal(exit_for(-EREMOTEIO), 3);
	assert_int_equal(exit_for(-EBADMSG), 3);
	assert_int_equal(exit_for(-ENODATA), 3);
	assert_int_equal(exit_for(-ETIMEDOUT), 33);
	assert_int_equal(exit_for(-ENOMEDIUM), 2);
	assert_int_equal(exit_for(-ENOSPC), 15);
	assert_int_equal(exit_for(-EPIPE), 15);
	assert_int_equal(exit_for(-EBADF), 15);
}

/* coe=1 read past unreadable blocks and zero-filled them: the copy is
 * whole but not faithful, and the status says so */
static void test_exit_status_bad_blocks(void **state)
{
	struct pdd_result r = { .bad_blocks = 1, .bad_first = 7, .bad_last = 7,
				.bad_unit = 512 };

	(void)state;
	assert_int_equal(pdd_exit_status(&r), 3);
	assert_int_equal(pdd_exit_status(&r), PDD_EXIT_MEDIUM_HARD);
	r.bad_blocks = 1000;
	r.bad_last = 2000;
	assert_int_equal(pdd_exit_status(&r), 3);
	/* errors the device recovered are no bad blocks */
	r = (struct pdd_result){ .recovered = 5 };
	assert_int_equal(pdd_exit_status(&r), 0);
}

/* an error that stopped the copy decides, bad blocks before it or not */
static void test_exit_status_error_beats_bad_blocks(void **state)
{
	struct pdd_result r = { .bad_blocks = 4, .bad_first = 0, .bad_last = 3,
				.bad_unit = 4096 };

	(void)state;
	r.err = -ENOSPC;
	assert_int_equal(pdd_exit_status(&r), 15);
	r.err = -ETIMEDOUT;
	assert_int_equal(pdd_exit_status(&r), 33);
	r.err = -ENOMEDIUM;
	assert_int_equal(pdd_exit_status(&r), 2);
	r.err = -EIO;
	assert_int_equal(pdd_exit_status(&r), 3);
	r.err = PDD_ERR_SCSI(6);
	assert_int_equal(pdd_exit_status(&r), 6);
	r.err = PDD_ERR_SCSI(5);
	assert_int_equal(pdd_exit_status(&r), 5);
	r.err = PDD_ERR_SCSI(2);
	assert_int_equal(pdd_exit_status(&r), 2);
}

/* verify= found differences: 14, unless the copy's own error decides */
/* resume_of ARGS...: the resume command for a file-to-file copy of 1000
 * blocks of 512 that stopped on an error after 300 of them */
static char *resume_of(enum pdd_kind out_kind, char **argv, int argc)
{
	struct pdd_plan p = { .bs = 512, .total = 512000 };
	struct pdd_dev in = { .kind = PDD_KIND_FILE }, out = { .kind = out_kind };
	struct pdd_result r = { .err = -EIO, .err_op = PDD_OP_READ, .done = 153600 };
	const char *stream;

	return pdd_resume_command(argc, argv, &p, &in, &out, &r, &stream);
}

/* The command that resumes: skip/seek/count moved to the done mark; on a
 * regular file oflag=excl is dropped (it asked for a new file, and the
 * file is there now); with map= the command as given. */
static void test_resume_command(void **state)
{
	char *a1[] = { "pdd", "if=in", "of=out", "oflag=excl,dsync", "count=1000" };
	char *a2[] = { "pdd", "if=in", "of=out", "oflag=excl" };
	char *a3[] = { "pdd", "if=in", "of=/dev/sdc", "oflag=excl" };
	char *a4[] = { "pdd", "if=in", "of=out", "oflag=excl", "map=m", "skip=0" };
	char *c;

	(void)state;
	c = resume_of(PDD_KIND_FILE, a1, 5);
	assert_string_equal(c, "pdd if=in of=out oflag=dsync bs=512 skip=300 seek=300 count=700");
	free(c);
	c = resume_of(PDD_KIND_FILE, a2, 4);
	assert_string_equal(c, "pdd if=in of=out bs=512 skip=300 seek=300 count=700");
	free(c);
	c = resume_of(PDD_KIND_BLOCK, a3, 4);
	assert_string_equal(c, "pdd if=in of=/dev/sdc oflag=excl bs=512 skip=300 seek=300 count=700");
	free(c);
	c = resume_of(PDD_KIND_FILE, a4, 6);
	assert_string_equal(c, "pdd if=in of=out map=m skip=0");
	free(c);
}

static void test_exit_status_verify(void **state)
{
	struct pdd_result r = { .verify_blocks = 8192, .verify_diff = 3,
				.verify_first = 100 };

	(void)state;
	assert_int_equal(pdd_exit_status(&r), PDD_EXIT_MISCOMPARE);
	assert_int_equal(pdd_exit_status(&r), 14);
	r.err = -EIO;
	assert_int_equal(pdd_exit_status(&r), 3);
	r.err = -ENOSPC;
	assert_int_equal(pdd_exit_status(&r), 15);
	r.err = 0;
	r.signal = 2;
	assert_int_equal(pdd_exit_status(&r), 130);
	r = (struct pdd_result){ .verify_blocks = 8192 };
	assert_int_equal(pdd_exit_status(&r), 0);
}

static void test_exit_os_mapping(void **state)
{
	(void)state;
	assert_int_equal(pdd_exit_os(-ENOENT), 52);
	assert_int_equal(pdd_exit_os(ENOENT), 52);
	assert_int_equal(pdd_exit_os(-EACCES), 63);
	assert_int_equal(pdd_exit_os(-46), 96);
	/* too large to add to 50: plain 50 */
	assert_int_equal(pdd_exit_os(-47), 50);
	assert_int_equal(pdd_exit_os(-EOPNOTSUPP), 50);
	assert_int_equal(pdd_exit_os(0), 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_human_bytes),
		cmocka_unit_test(test_human_one_decimal_below_ten),
		cmocka_unit_test(test_human_rounds_to_nearest),
		cmocka_unit_test(test_human_largest_units),
		cmocka_unit_test(test_human_truncates_like_snprintf),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_bytes_line_small),
		cmocka_unit_test(test_bytes_line_si_only_below_1024),
		cmocka_unit_test(test_bytes_line_large),
		cmocka_unit_test(test_bytes_line_infinity_at_zero_seconds),
		cmocka_unit_test(test_bytes_line_zero_bytes_zero_rate),
		cmocka_unit_test(test_time_line),
		cmocka_unit_test(test_time_line_no_rate_for_tiny_copies),
		cmocka_unit_test(test_report_default),
		cmocka_unit_test(test_report_in_and_out_differ),
		cmocka_unit_test(test_report_noxfer),
		cmocka_unit_test(test_report_none),
		cmocka_unit_test(test_report_time),
		cmocka_unit_test(test_exit_status_mapping),
		cmocka_unit_test(test_resume_command),
		cmocka_unit_test(test_exit_status_bad_blocks),
		cmocka_unit_test(test_exit_status_error_beats_bad_blocks),
		cmocka_unit_test(test_exit_status_verify),
		cmocka_unit_test(test_exit_os_mapping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
