// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for args.c: number parsing with dd's and sgp_dd's suffixes,
 * and the operand table behind pdd_parse_args().  Every refusal is checked
 * to the byte: the return value, the one-line message naming the operand
 * and the pointer to --help, caught from pdd_msg_stream.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "pdd.h"
#include "capture.h"

#define UNSET 0xdeadbeefULL	/* what a refused parse must leave alone */

/* The engines built in, in engine.c's order, as the refusal lists them. */
#ifdef HAVE_SGUTILS
#define ENGINE_SG ", sg"
#else
#define ENGINE_SG ""
#endif
#ifdef HAVE_LIBURING
#define ENGINE_URING ", uring"
#else
#define ENGINE_URING ""
#endif
#ifdef HAVE_LIBAIO
#define ENGINE_AIO ", aio"
#else
#define ENGINE_AIO ""
#endif
#ifdef HAVE_LIBNBD
#define ENGINE_NBD ", nbd"
#else
#define ENGINE_NBD ""
#endif
#define ENGINE_NAMES "auto" ENGINE_URING ENGINE_AIO ", threads" ENGINE_SG ENGINE_NBD

/* One number: "input -> rc value" so a failure names the input. */
static void check_num(const char *s, int want_rc, uint64_t want)
{
	char got[160], exp[160];
	uint64_t v = UNSET;
	int rc = pdd_parse_num(s, &v);

	snprintf(got, sizeof(got), "'%s' -> %d %llu", s, rc, (unsigned long long)v);
	snprintf(exp, sizeof(exp), "'%s' -> %d %llu", s, want_rc,
		 (unsigned long long)(want_rc ? UNSET : want));
	assert_string_equal(got, exp);
}

/* pdd_parse_args() on "pdd" followed by the given words. */
static int parse_words(struct pdd_opts *o, const char **words)
{
	int argc = 0;

	while (words[argc])
		argc++;
	return pdd_parse_args(argc, (char **)words, o);
}

#define PARSE(o, ...) \
	parse_words(o, (const char *[]){ "pdd", __VA_ARGS__, NULL })
#define PARSE_NOTHING(o) parse_words(o, (const char *[]){ "pdd", NULL })

/* A refused command line: rc, then exactly one usage message. */
#define assert_refused(rc, want_rc, msg) do {				\
		assert_int_equal((rc), (want_rc));			\
		assert_string_equal(captured(), "pdd: " msg "\n" TRY_HELP); \
	} while (0)

/* An accepted command line prints nothing. */
#define assert_accepted(rc) do {					\
		assert_int_equal((rc), 0);				\
		assert_string_equal(captured(), "");			\
	} while (0)

/* --- numbers ------------------------------------------------------------ */

static void test_num_plain_decimal(void **state)
{
	(void)state;
	check_num("0", 0, 0);
	check_num("1", 0, 1);
	check_num("512", 0, 512);
	check_num("007", 0, 7);
	check_num("18446744", 0, 18446744);
}

static void test_num_hex(void **state)
{
	(void)state;
	check_num("0x10", 0, 16);
	check_num("0X10", 0, 16);
	check_num("0xff", 0, 255);
	check_num("0xFF", 0, 255);
	check_num("0x7fffffffffffffff", 0, INT64_MAX);
	/* b is a hex digit here, not the 512 suffix */
	check_num("0x1b", 0, 27);
	/* a suffix after hex digits still multiplies */
	check_num("0x10k", 0, 16 * 1024);
	check_num("0x", -EINVAL, 0);
	check_num("0xg", -EINVAL, 0);
}

static void test_num_single_letter_suffixes(void **state)
{
	(void)state;
	check_num("3c", 0, 3);
	check_num("3w", 0, 6);
	check_num("3b", 0, 1536);
	check_num("3k", 0, 3072);
	check_num("3K", 0, 3072);
	check_num("3M", 0, 3ULL << 20);
	check_num("3G", 0, 3ULL << 30);
	check_num("3T", 0, 3ULL << 40);
}

static void test_num_binary_suffixes(void **state)
{
	(void)state;
	check_num("3KiB", 0, 3ULL << 10);
	check_num("3MiB", 0, 3ULL << 20);
	check_num("3GiB", 0, 3ULL << 30);
	check_num("3TiB", 0, 3ULL << 40);
}

static void test_num_decimal_suffixes(void **state)
{
	(void)state;
	check_num("3kB", 0, 3000);
	check_num("3KB", 0, 3000);
	check_num("3MB", 0, 3000000);
	check_num("3GB", 0, 3000000000ULL);
	check_num("3TB", 0, 3000000000000ULL);
}

static void test_num_products(void **state)
{
	(void)state;
	check_num("2x512", 0, 1024);
	check_num("4kx2", 0, 8192);
	check_num("2x3x5", 0, 30);
	check_num("1Mx0", 0, 0);
	check_num("2x", -EINVAL, 0);
	check_num("x2", -EINVAL, 0);
	check_num("2x-1", -EINVAL, 0);
	check_num("2qx2", -EINVAL, 0);
}

static void test_num_overflow(void **state)
{
	(void)state;
	check_num("9223372036854775807", 0, INT64_MAX);
	/* above INT64_MAX: would not fit an off_t */
	check_num("9223372036854775808", -ERANGE, 0);
	check_num("18446744073709551615", -ERANGE, 0);
	/* above UINT64_MAX while reading the digits */
	check_num("18446744073709551616", -ERANGE, 0);
	check_num("99999999999999999999999", -ERANGE, 0);
	check_num("0x8000000000000000", -ERANGE, 0);
	check_num("0x10000000000000000", -ERANGE, 0);
	/* the suffix or the product overflows */
	check_num("8EiB", -ERANGE, 0);
	check_num("16777216T", -ERANGE, 0);
	check_num("8388608T", -ERANGE, 0);
	check_num("8388607T", 0, 8388607ULL << 40);
	check_num("4294967296x4294967296", -ERANGE, 0);
	check_num("2x4611686018427387904", -ERANGE, 0);
}

static void test_num_junk_refused(void **state)
{
	(void)state;
	check_num("", -EINVAL, 0);
	check_num("-1", -EINVAL, 0);
	check_num("-0", -EINVAL, 0);
	check_num("+1", -EINVAL, 0);
	check_num("12q", -EINVAL, 0);
	check_num(" 12", -EINVAL, 0);
	check_num("12 ", -EINVAL, 0);
	check_num("1.5", -EINVAL, 0);
	check_num("k", -EINVAL, 0);
	check_num("1kk", -EINVAL, 0);
	check_num("1KiBB", -EINVAL, 0);
	check_num("1iB", -EINVAL, 0);
}

/* --- defaults and each operand ------------------------------------------ */

static void test_defaults(void **state)
{
	struct pdd_opts o;

	(void)state;
	memset(&o, 0xa5, sizeof(o));
	assert_accepted(PARSE_NOTHING(&o));
	assert_null(o.in_path);
	assert_null(o.out_path);
	assert_int_equal(o.bs, 0);
	assert_int_equal(o.bpt, 0);
	assert_int_equal(o.skip, 0);
	assert_int_equal(o.seek, 0);
	assert_int_equal(o.count, 0);
	assert_false(o.count_given);
	assert_int_equal(o.threads, 4);
	assert_int_equal(o.qd, 0);
	assert_string_equal(o.engine, "auto");
	assert_int_equal(o.iflags, 0);
	assert_int_equal(o.oflags, 0);
	assert_true(o.sync);
	assert_false(o.time);
	assert_int_equal(o.status, PDD_STATUS_DEFAULT);
	assert_int_equal(o.verbose, 0);
	assert_int_equal(o.cdbsz, 10);
	assert_int_equal(o.fua, 0);
	assert_false(o.dio);
	assert_false(o.coe);
	assert_int_equal(o.timeout, 60);
	assert_int_equal(o.timeout, PDD_SG_TIMEOUT);
	assert_false(o.dry_run);
	assert_false(o.help);
	assert_false(o.version);
}

static void test_each_operand_sets_its_field(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "if=/dev/sdb", "of=/dev/sdc", "bs=4k", "bpt=16",
			      "skip=3", "seek=0x10", "count=2x5", "threads=8", "qd=32",
			      "engine=threads", "iflag=direct,dsync",
			      "oflag=excl,nodirect", "sync=0", "time=1",
			      "status=noxfer", "verbose=2"));
	assert_string_equal(o.in_path, "/dev/sdb");
	assert_string_equal(o.out_path, "/dev/sdc");
	assert_int_equal(o.bs, 4096);
	assert_int_equal(o.bpt, 16);
	assert_int_equal(o.skip, 3);
	assert_int_equal(o.seek, 16);
	assert_int_equal(o.count, 10);
	assert_true(o.count_given);
	assert_int_equal(o.threads, 8);
	assert_int_equal(o.qd, 32);
	assert_string_equal(o.engine, "threads");
	assert_int_equal(o.iflags, PDD_F_DIRECT | PDD_F_DSYNC);
	assert_int_equal(o.oflags, PDD_F_EXCL | PDD_F_NODIRECT);
	assert_false(o.sync);
	assert_true(o.time);
	assert_int_equal(o.status, PDD_STATUS_NOXFER);
	assert_int_equal(o.verbose, 2);
}

static void test_operands_in_any_order(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "count=7", "of=out.img", "bs=1k", "if=-"));
	assert_string_equal(o.in_path, "-");
	assert_string_equal(o.out_path, "out.img");
	assert_int_equal(o.bs, 1024);
	assert_int_equal(o.count, 7);
}

/* rescue=1's operands, each found (the table is searched by name) */
static void test_rescue_operands(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "rescue=1", "domain=d.map", "skip_size=64k", "max_skip=1M",
			      "min_rate=1M", "max_rate=2M", "give_up=30", "reverse=1", "trim=0",
			      "scrape=0", "retries=3"));
	assert_true(o.rescue);
	assert_string_equal(o.domain, "d.map");
	assert_int_equal(o.skip_size, 65536);
	assert_true(o.skip_given);
	assert_int_equal(o.skip_max, 1048576);
	assert_int_equal(o.min_rate, 1048576);
	assert_int_equal(o.max_rate, 2097152);
	assert_int_equal(o.give_up, 30);
	assert_true(o.reverse);
	assert_false(o.trim);
	assert_false(o.scrape);
	assert_int_equal(o.retries, 3);
	cap_reset();
	assert_accepted(PARSE(&o, "rescue=1"));
	assert_true(o.trim && o.scrape);
	cap_reset();
	assert_refused(PARSE(&o, "give_up=5"), -EINVAL, "give_up= needs rescue=1");
	cap_reset();
	assert_refused(PARSE(&o, "rescue=1", "oflag=append"), -EINVAL,
		       "rescue=1 and oflag=append contradict: a rescue writes where it reads, in any order");
}

static void test_every_oflag(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "oflag=direct,dsync,excl,append"));
	assert_int_equal(o.oflags, PDD_F_DIRECT | PDD_F_DSYNC | PDD_F_EXCL | PDD_F_APPEND);
	cap_reset();
	assert_accepted(PARSE(&o, "oflag=trunc,nocreat"));
	assert_int_equal(o.oflags, PDD_F_TRUNC | PDD_F_NOCREAT);
	cap_reset();
	assert_accepted(PARSE(&o, "iflag=nodirect,excl"));
	assert_int_equal(o.iflags, PDD_F_NODIRECT | PDD_F_EXCL);
	assert_int_equal(o.oflags, 0);
}

static void test_thr_is_threads(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "thr=12"));
	assert_int_equal(o.threads, 12);
	cap_reset();
	assert_accepted(PARSE(&o, "threads=1024"));
	assert_int_equal(o.threads, 1024);
	cap_reset();
	assert_accepted(PARSE(&o, "threads=1"));
	assert_int_equal(o.threads, 1);
}

static void test_deb_is_verbose(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "deb=3"));
	assert_int_equal(o.verbose, 3);
	cap_reset();
	assert_refused(PARSE(&o, "deb=10"), -EINVAL, "deb=10: must be at most 9");
}

static void test_status_values(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "status=none"));
	assert_int_equal(o.status, PDD_STATUS_NONE);
	cap_reset();
	assert_accepted(PARSE(&o, "status=noxfer"));
	assert_int_equal(o.status, PDD_STATUS_NOXFER);
	cap_reset();
	assert_refused(PARSE(&o, "status=bogus"), -EINVAL,
		       "status=bogus: unknown status (choose none, noxfer, progress or json)");
}

/* status=progress, -p and --progress turn the progress line on and leave
 * the report as it was; with status=none the user asked for both. */
static void test_progress(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "if=a"));
	assert_false(o.progress);
	assert_accepted(PARSE(&o, "status=progress"));
	assert_true(o.progress);
	assert_int_equal(o.status, PDD_STATUS_DEFAULT);
	assert_accepted(PARSE(&o, "-p"));
	assert_true(o.progress);
	assert_int_equal(o.status, PDD_STATUS_DEFAULT);
	assert_accepted(PARSE(&o, "--progress"));
	assert_true(o.progress);
	assert_accepted(PARSE(&o, "status=none", "-p"));
	assert_true(o.progress);
	assert_int_equal(o.status, PDD_STATUS_NONE);
	assert_accepted(PARSE(&o, "--progress", "status=noxfer"));
	assert_true(o.progress);
	assert_int_equal(o.status, PDD_STATUS_NOXFER);
	cap_reset();
	assert_refused(PARSE(&o, "status=progress", "status=none"), -EINVAL,
		       "status= given more than once");
}

static void test_count_zero_allowed(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "count=0"));
	assert_int_equal(o.count, 0);
	assert_true(o.count_given);
}

/* --- options ------------------------------------------------------------- */

static void test_options(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "--dry-run"));
	assert_true(o.dry_run);
	assert_false(o.help);
	cap_reset();
	assert_accepted(PARSE(&o, "--help"));
	assert_true(o.help);
	cap_reset();
	assert_accepted(PARSE(&o, "-h"));
	assert_true(o.help);
	cap_reset();
	assert_accepted(PARSE(&o, "--version"));
	assert_true(o.version);
	cap_reset();
	assert_accepted(PARSE(&o, "-V"));
	assert_true(o.version);
}

static void test_vvv_adds_three(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "-vvv"));
	assert_int_equal(o.verbose, 3);
	cap_reset();
	assert_accepted(PARSE(&o, "verbose=2", "-v", "--verbose", "-vv"));
	assert_int_equal(o.verbose, 6);
}

static void test_unknown_option(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "--foo"), -EINVAL, "unknown option '--foo'");
	cap_reset();
	assert_refused(PARSE(&o, "-vx"), -EINVAL, "unknown option '-vx'");
	cap_reset();
	assert_refused(PARSE(&o, "if=a", "-q"), -EINVAL, "unknown option '-q'");
}

/* --- refusals ------------------------------------------------------------ */

static void test_unknown_operand(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "foo=1"), -EINVAL, "unknown operand 'foo=1'");
	cap_reset();
	assert_refused(PARSE(&o, "=1"), -EINVAL, "unknown operand '=1'");
	cap_reset();
	/* a prefix of a known name is not that name */
	assert_refused(PARSE(&o, "thread=2"), -EINVAL, "unknown operand 'thread=2'");
	cap_reset();
	assert_refused(PARSE(&o, "averyveryverylongname=1"), -EINVAL,
		       "unknown operand 'averyveryverylongname=1'");
}

static void test_operand_without_equals(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "bs"), -EINVAL, "unknown operand 'bs'");
	cap_reset();
	assert_refused(PARSE(&o, "/dev/sdb"), -EINVAL, "unknown operand '/dev/sdb'");
	cap_reset();
	assert_refused(PARSE(&o, "-"), -EINVAL, "unknown operand '-'");
}

static void test_repeats_refused(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "bs=1", "bs=2"), -EINVAL, "bs= given more than once");
	cap_reset();
	assert_refused(PARSE(&o, "threads=2", "thr=3"), -EINVAL,
		       "thr= given more than once");
	cap_reset();
	assert_refused(PARSE(&o, "thr=2", "threads=3"), -EINVAL,
		       "threads= given more than once");
	cap_reset();
	assert_refused(PARSE(&o, "verbose=1", "deb=1"), -EINVAL,
		       "deb= given more than once");
	cap_reset();
	assert_refused(PARSE(&o, "if=a", "if=a"), -EINVAL, "if= given more than once");
	cap_reset();
	assert_refused(PARSE(&o, "count=0", "count=0"), -EINVAL,
		       "count= given more than once");
}

static void test_zero_sizes_refused(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "bs=0"), -EINVAL, "bs=0: must be at least 1");
	cap_reset();
	assert_refused(PARSE(&o, "bpt=0"), -EINVAL, "bpt=0: must be at least 1");
	cap_reset();
	assert_refused(PARSE(&o, "threads=0"), -EINVAL, "threads=0: must be at least 1");
	cap_reset();
	assert_refused(PARSE(&o, "qd=0"), -EINVAL, "qd=0: must be at least 1");
}

static void test_upper_limits_refused(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "threads=1025"), -EINVAL,
		       "threads=1025: must be at most 1024");
	cap_reset();
	assert_refused(PARSE(&o, "thr=1025"), -EINVAL, "thr=1025: must be at most 1024");
	cap_reset();
	assert_refused(PARSE(&o, "qd=4097"), -EINVAL, "qd=4097: must be at most 4096");
	cap_reset();
	assert_refused(PARSE(&o, "bs=2G"), -EINVAL, "bs=2G: must be at most 1073741824");
	cap_reset();
	assert_accepted(PARSE(&o, "bs=1G"));
	assert_int_equal(o.bs, 1ULL << 30);
	cap_reset();
	assert_refused(PARSE(&o, "sync=2"), -EINVAL, "sync=2: must be at most 1");
	cap_reset();
	assert_refused(PARSE(&o, "time=2"), -EINVAL, "time=2: must be at most 1");
}

static void test_bad_numbers_refused(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "bs=12q"), -EINVAL, "bs=12q: invalid number");
	cap_reset();
	assert_refused(PARSE(&o, "skip=-1"), -EINVAL, "skip=-1: invalid number");
	cap_reset();
	assert_refused(PARSE(&o, "count="), -EINVAL, "count=: invalid number");
	cap_reset();
	assert_refused(PARSE(&o, "seek=1.5"), -EINVAL, "seek=1.5: invalid number");
	cap_reset();
	assert_refused(PARSE(&o, "skip=9223372036854775808"), -ERANGE,
		       "skip=9223372036854775808: number too large");
	cap_reset();
	assert_refused(PARSE(&o, "count=99999999999999999999"), -ERANGE,
		       "count=99999999999999999999: number too large");
}

static void test_failed_count_not_given(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "count=x"), -EINVAL, "count=x: invalid number");
	assert_false(o.count_given);
}

static void test_empty_path_refused(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "if="), -EINVAL, "if=: missing file name");
	cap_reset();
	assert_refused(PARSE(&o, "of="), -EINVAL, "of=: missing file name");
}

static void test_engine_bogus_refused(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "engine=bogus"), -EINVAL,
		       "engine=bogus: unknown engine (choose from " ENGINE_NAMES ")");
	cap_reset();
	assert_accepted(PARSE(&o, "engine=auto"));
	assert_string_equal(o.engine, "auto");
}

/* engine=sg is a name only where the sg engine is built */
static void test_engine_sg_name(void **state)
{
	struct pdd_opts o;

	(void)state;
#ifdef HAVE_SGUTILS
	assert_accepted(PARSE(&o, "engine=sg"));
	assert_string_equal(o.engine, "sg");
#else
	assert_refused(PARSE(&o, "engine=sg"), -EINVAL,
		       "engine=sg: unknown engine (choose from " ENGINE_NAMES ")");
#endif
}

static void test_flag_unknown(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "iflag=direct,bogus"), -EINVAL,
		       "iflag=direct,bogus: unknown flag 'bogus'");
	cap_reset();
	assert_refused(PARSE(&o, "oflag=Direct"), -EINVAL,
		       "oflag=Direct: unknown flag 'Direct'");
	cap_reset();
	assert_refused(PARSE(&o, "iflag="), -EINVAL, "iflag=: invalid flag list");
}

static void test_flag_output_only_in_iflag(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "iflag=append"), -EINVAL,
		       "iflag=append: 'append' applies to oflag= only");
	cap_reset();
	assert_refused(PARSE(&o, "iflag=direct,trunc"), -EINVAL,
		       "iflag=direct,trunc: 'trunc' applies to oflag= only");
	cap_reset();
	assert_refused(PARSE(&o, "iflag=nocreat"), -EINVAL,
		       "iflag=nocreat: 'nocreat' applies to oflag= only");
}

static void test_flag_contradictions(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "iflag=direct,nodirect"), -EINVAL,
		       "iflag=direct,nodirect: 'direct' and 'nodirect' contradict");
	cap_reset();
	assert_refused(PARSE(&o, "oflag=nodirect,direct"), -EINVAL,
		       "oflag=nodirect,direct: 'direct' and 'nodirect' contradict");
	cap_reset();
	assert_refused(PARSE(&o, "oflag=append,trunc"), -EINVAL,
		       "oflag=append,trunc: 'append' and 'trunc' contradict");
}

static void test_flag_repeated(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "iflag=direct,direct"), -EINVAL,
		       "iflag=direct,direct: 'direct' given twice");
	cap_reset();
	assert_refused(PARSE(&o, "oflag=dsync,excl,dsync"), -EINVAL,
		       "oflag=dsync,excl,dsync: 'dsync' given twice");
}

static void test_append_with_seek_refused(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "oflag=append", "seek=1"), -EINVAL,
		       "oflag=append and seek= contradict: appended data goes to the end");
	cap_reset();
	assert_refused(PARSE(&o, "seek=4", "oflag=append"), -EINVAL,
		       "oflag=append and seek= contradict: appended data goes to the end");
	cap_reset();
	/* seek=0 asks for nothing append cannot do */
	assert_accepted(PARSE(&o, "oflag=append", "seek=0"));
}

static void test_excl_nocreat_refused(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "oflag=excl,nocreat"), -EINVAL,
		       "oflag=excl,nocreat: 'excl' makes a new file, 'nocreat' forbids it");
	cap_reset();
	/* on the input excl is a device claim and nocreat cannot be given */
	assert_accepted(PARSE(&o, "iflag=excl", "oflag=nocreat"));
}

static void test_first_error_stops_parsing(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "bs=0", "foo=1", "--bar"), -EINVAL,
		       "bs=0: must be at least 1");
}

/* --- the sg operands ------------------------------------------------------ */

static void test_cdbsz_values(void **state)
{
	static const char *const ok[] = { "cdbsz=6", "cdbsz=10", "cdbsz=12", "cdbsz=16" };
	static const unsigned int want[] = { 6, 10, 12, 16 };
	struct pdd_opts o;

	(void)state;
	for (unsigned int i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cap_reset();
		assert_accepted(PARSE(&o, ok[i]));
		assert_int_equal(o.cdbsz, want[i]);
	}
	/* a number is a number, whatever its spelling */
	cap_reset();
	assert_accepted(PARSE(&o, "cdbsz=0x10"));
	assert_int_equal(o.cdbsz, 16);
}

static void test_cdbsz_refused(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "cdbsz=8"), -EINVAL, "cdbsz=8: must be 6, 10, 12 or 16");
	cap_reset();
	assert_refused(PARSE(&o, "cdbsz=7"), -EINVAL, "cdbsz=7: must be 6, 10, 12 or 16");
	cap_reset();
	assert_refused(PARSE(&o, "cdbsz=11"), -EINVAL, "cdbsz=11: must be 6, 10, 12 or 16");
	cap_reset();
	assert_refused(PARSE(&o, "cdbsz=5"), -EINVAL, "cdbsz=5: must be at least 6");
	cap_reset();
	assert_refused(PARSE(&o, "cdbsz=0"), -EINVAL, "cdbsz=0: must be at least 6");
	cap_reset();
	assert_refused(PARSE(&o, "cdbsz=17"), -EINVAL, "cdbsz=17: must be at most 16");
	cap_reset();
	assert_refused(PARSE(&o, "cdbsz=32"), -EINVAL, "cdbsz=32: must be at most 16");
	cap_reset();
	assert_refused(PARSE(&o, "cdbsz=ten"), -EINVAL, "cdbsz=ten: invalid number");
	cap_reset();
	assert_refused(PARSE(&o, "cdbsz="), -EINVAL, "cdbsz=: invalid number");
	cap_reset();
	assert_refused(PARSE(&o, "cdbsz=10", "cdbsz=16"), -EINVAL,
		       "cdbsz= given more than once");
	cap_reset();
	/* a size in range but not a CDB size is found after every operand
	 * is read: an earlier operand's error comes first, a later one's
	 * too */
	assert_refused(PARSE(&o, "cdbsz=8", "bs=0"), -EINVAL, "bs=0: must be at least 1");
	cap_reset();
	assert_refused(PARSE(&o, "if=a", "cdbsz=8", "of=b"), -EINVAL,
		       "cdbsz=8: must be 6, 10, 12 or 16");
}

static void test_fua_values(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "fua=0"));
	assert_int_equal(o.fua, 0);
	assert_int_equal(o.iflags, 0);
	assert_int_equal(o.oflags, 0);
	cap_reset();
	/* sgp_dd: bit 1 is the output, bit 2 the input */
	assert_accepted(PARSE(&o, "fua=1"));
	assert_int_equal(o.fua, 1);
	assert_int_equal(o.iflags, 0);
	assert_int_equal(o.oflags, PDD_F_FUA);
	cap_reset();
	assert_accepted(PARSE(&o, "fua=2"));
	assert_int_equal(o.fua, 2);
	assert_int_equal(o.iflags, PDD_F_FUA);
	assert_int_equal(o.oflags, 0);
	cap_reset();
	assert_accepted(PARSE(&o, "fua=3"));
	assert_int_equal(o.fua, 3);
	assert_int_equal(o.iflags, PDD_F_FUA);
	assert_int_equal(o.oflags, PDD_F_FUA);
	cap_reset();
	/* with the flags it adds to them */
	assert_accepted(PARSE(&o, "oflag=dpo", "fua=1", "iflag=direct"));
	assert_int_equal(o.iflags, PDD_F_DIRECT);
	assert_int_equal(o.oflags, PDD_F_DPO | PDD_F_FUA);
	cap_reset();
	/* and saying it twice is no contradiction */
	assert_accepted(PARSE(&o, "oflag=fua", "fua=1"));
	assert_int_equal(o.iflags, 0);
	assert_int_equal(o.oflags, PDD_F_FUA);
}

static void test_fua_refused(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "fua=4"), -EINVAL, "fua=4: must be at most 3");
	cap_reset();
	assert_refused(PARSE(&o, "fua=0x10"), -EINVAL, "fua=0x10: must be at most 3");
	cap_reset();
	assert_refused(PARSE(&o, "fua=yes"), -EINVAL, "fua=yes: invalid number");
	cap_reset();
	assert_refused(PARSE(&o, "fua=1", "fua=2"), -EINVAL, "fua= given more than once");
}

static void test_timeout_values(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "timeout=1"));
	assert_int_equal(o.timeout, 1);
	cap_reset();
	assert_accepted(PARSE(&o, "timeout=600"));
	assert_int_equal(o.timeout, 600);
	cap_reset();
	assert_accepted(PARSE(&o, "timeout=4000000"));
	assert_int_equal(o.timeout, 4000000);
	cap_reset();
	/* not to be taken for time= */
	assert_accepted(PARSE(&o, "time=1", "timeout=5"));
	assert_true(o.time);
	assert_int_equal(o.timeout, 5);
}

static void test_timeout_refused(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_refused(PARSE(&o, "timeout=0"), -EINVAL, "timeout=0: must be at least 1");
	cap_reset();
	assert_refused(PARSE(&o, "timeout=4000001"), -EINVAL,
		       "timeout=4000001: must be at most 4000000");
	cap_reset();
	assert_refused(PARSE(&o, "timeout=1.5"), -EINVAL, "timeout=1.5: invalid number");
	cap_reset();
	assert_refused(PARSE(&o, "timeout=-1"), -EINVAL, "timeout=-1: invalid number");
	cap_reset();
	assert_refused(PARSE(&o, "timeout=99999999999999999999"), -ERANGE,
		       "timeout=99999999999999999999: number too large");
	cap_reset();
	assert_refused(PARSE(&o, "timeout=60", "timeout=60"), -EINVAL,
		       "timeout= given more than once");
}

static void test_dio_values(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "dio=1"));
	assert_true(o.dio);
	cap_reset();
	assert_accepted(PARSE(&o, "dio=0"));
	assert_false(o.dio);
	cap_reset();
	assert_refused(PARSE(&o, "dio=2"), -EINVAL, "dio=2: must be at most 1");
	cap_reset();
	assert_refused(PARSE(&o, "dio=0", "dio=1"), -EINVAL, "dio= given more than once");
}

static void test_coe_values(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "coe=1"));
	assert_true(o.coe);
	assert_int_equal(o.iflags, PDD_F_COE);
	assert_int_equal(o.oflags, 0);
	cap_reset();
	assert_accepted(PARSE(&o, "coe=0"));
	assert_false(o.coe);
	assert_int_equal(o.iflags, 0);
	assert_int_equal(o.oflags, 0);
	cap_reset();
	assert_refused(PARSE(&o, "coe=2"), -EINVAL, "coe=2: must be at most 1");
	cap_reset();
	assert_refused(PARSE(&o, "coe=on"), -EINVAL, "coe=on: invalid number");
	cap_reset();
	assert_refused(PARSE(&o, "coe=1", "coe=1"), -EINVAL, "coe= given more than once");
}

/* verify=0, 1 or only; nothing else */
static void test_verify_values(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE_NOTHING(&o));
	assert_int_equal(o.verify, PDD_VERIFY_NONE);
	assert_accepted(PARSE(&o, "verify=0"));
	assert_int_equal(o.verify, PDD_VERIFY_NONE);
	assert_accepted(PARSE(&o, "verify=1"));
	assert_int_equal(o.verify, PDD_VERIFY_AFTER);
	assert_accepted(PARSE(&o, "verify=only"));
	assert_int_equal(o.verify, PDD_VERIFY_ONLY);
	cap_reset();
	assert_refused(PARSE(&o, "verify=2"), -EINVAL, "verify=2: choose 0, 1, only or hash");
	cap_reset();
	assert_refused(PARSE(&o, "verify="), -EINVAL, "verify=: choose 0, 1, only or hash");
	cap_reset();
	assert_refused(PARSE(&o, "verify=1", "verify=only"), -EINVAL,
		       "verify= given more than once");
}

/* coe=1, iflag=coe and oflag=coe are one switch: continue past
 * unreadable input blocks */
static void test_coe_aliases(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "iflag=coe"));
	assert_true(o.coe);
	assert_int_equal(o.iflags, PDD_F_COE);
	assert_int_equal(o.oflags, 0);
	cap_reset();
	assert_accepted(PARSE(&o, "oflag=coe"));
	assert_true(o.coe);
	assert_int_equal(o.iflags, PDD_F_COE);
	assert_int_equal(o.oflags, PDD_F_COE);
	cap_reset();
	assert_accepted(PARSE(&o, "oflag=direct,coe", "iflag=dsync"));
	assert_true(o.coe);
	assert_int_equal(o.iflags, PDD_F_DSYNC | PDD_F_COE);
	assert_int_equal(o.oflags, PDD_F_DIRECT | PDD_F_COE);
	cap_reset();
	/* all three at once are no contradiction */
	assert_accepted(PARSE(&o, "coe=1", "iflag=coe", "oflag=coe"));
	assert_true(o.coe);
	assert_int_equal(o.iflags, PDD_F_COE);
	assert_int_equal(o.oflags, PDD_F_COE);
	cap_reset();
	/* coe=0 does not take back a flag that asks for it */
	assert_accepted(PARSE(&o, "coe=0", "iflag=coe"));
	assert_true(o.coe);
	assert_int_equal(o.iflags, PDD_F_COE);
	cap_reset();
	assert_refused(PARSE(&o, "iflag=coe,coe"), -EINVAL, "iflag=coe,coe: 'coe' given twice");
}

/* map= names a file; map_interval= tunes it and means nothing alone */
static void test_map_operands(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "map=disk.map"));
	assert_string_equal(o.map, "disk.map");
	assert_int_equal(o.map_interval, 30);
	cap_reset();
	assert_accepted(PARSE(&o, "map=m", "map_interval=0"));
	assert_int_equal(o.map_interval, 0);
	cap_reset();
	assert_accepted(PARSE(&o, "map=m", "map_interval=86400"));
	assert_int_equal(o.map_interval, 86400);
	cap_reset();
	assert_refused(PARSE(&o, "map=m", "map_interval=86401"), -EINVAL,
		       "map_interval=86401: must be at most 86400");
	cap_reset();
	assert_refused(PARSE(&o, "map="), -EINVAL, "map=: missing file name");
	cap_reset();
	assert_refused(PARSE(&o, "map=a", "map=b"), -EINVAL, "map= given more than once");
	cap_reset();
	assert_refused(PARSE(&o, "map_interval=5"), -EINVAL, "map_interval= needs map=");
	cap_reset();
	assert_refused(PARSE(&o, "map=m", "oflag=append"), -EINVAL,
		       "map= and oflag=append contradict: a map needs the output's positions");
	cap_reset();
	assert_refused(PARSE(&o, "map=m", "oflag=trunc"), -EINVAL,
		       "map= and oflag=trunc contradict: a rerun would cut off what the map marks finished");
}

static void test_sg_flags(void **state)
{
	struct pdd_opts o;

	(void)state;
	assert_accepted(PARSE(&o, "iflag=dpo,fua,coe,null"));
	assert_int_equal(o.iflags, PDD_F_DPO | PDD_F_FUA | PDD_F_COE | PDD_F_NULL);
	assert_int_equal(o.oflags, 0);
	assert_true(o.coe);
	assert_int_equal(o.fua, 0);
	cap_reset();
	assert_accepted(PARSE(&o, "oflag=dpo,fua,null"));
	assert_int_equal(o.iflags, 0);
	assert_int_equal(o.oflags, PDD_F_DPO | PDD_F_FUA | PDD_F_NULL);
	assert_false(o.coe);
	cap_reset();
	/* null alone: accepted, and it asks for nothing else */
	assert_accepted(PARSE(&o, "iflag=null", "oflag=null"));
	assert_int_equal(o.iflags, PDD_F_NULL);
	assert_int_equal(o.oflags, PDD_F_NULL);
	assert_false(o.coe);
	cap_reset();
	assert_refused(PARSE(&o, "oflag=dpo,dpo"), -EINVAL, "oflag=dpo,dpo: 'dpo' given twice");
	cap_reset();
	assert_refused(PARSE(&o, "iflag=FUA"), -EINVAL, "iflag=FUA: unknown flag 'FUA'");
	cap_reset();
	assert_refused(PARSE(&o, "oflag=nulls"), -EINVAL, "oflag=nulls: unknown flag 'nulls'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, cap_open, cap_close)
		T(test_num_plain_decimal),
		T(test_num_hex),
		T(test_num_single_letter_suffixes),
		T(test_num_binary_suffixes),
		T(test_num_decimal_suffixes),
		T(test_num_products),
		T(test_num_overflow),
		T(test_num_junk_refused),
		T(test_defaults),
		T(test_each_operand_sets_its_field),
		T(test_operands_in_any_order),
		T(test_rescue_operands),
		T(test_every_oflag),
		T(test_thr_is_threads),
		T(test_deb_is_verbose),
		T(test_status_values),
		T(test_progress),
		T(test_count_zero_allowed),
		T(test_options),
		T(test_vvv_adds_three),
		T(test_unknown_option),
		T(test_unknown_operand),
		T(test_operand_without_equals),
		T(test_repeats_refused),
		T(test_zero_sizes_refused),
		T(test_upper_limits_refused),
		T(test_bad_numbers_refused),
		T(test_failed_count_not_given),
		T(test_empty_path_refused),
		T(test_engine_bogus_refused),
		T(test_engine_sg_name),
		T(test_flag_unknown),
		T(test_flag_output_only_in_iflag),
		T(test_flag_contradictions),
		T(test_flag_repeated),
		T(test_append_with_seek_refused),
		T(test_excl_nocreat_refused),
		T(test_first_error_stops_parsing),
		T(test_cdbsz_values),
		T(test_cdbsz_refused),
		T(test_fua_values),
		T(test_fua_refused),
		T(test_timeout_values),
		T(test_timeout_refused),
		T(test_dio_values),
		T(test_coe_values),
		T(test_coe_aliases),
		T(test_verify_values),
		T(test_map_operands),
		T(test_sg_flags),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
