// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the map (map-extents.c, map-text.c, mapfile.c): reading
 * maps exactly as ddrescue 1.27 writes them (the examples are files it
 * wrote), refusing what ddrescue refuses with the line named, writing
 * them back to the byte, the extent bookkeeping (set, status, bytes,
 * todo) against a byte-per-byte model, and the safe replacement of the
 * file on disk.  A map pdd writes is also handed to the real ddrescuelog
 * when it is installed.
 */
#define _GNU_SOURCE		/* fopencookie */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "map.h"
#include "pdd.h"
#include "capture.h"

#define T0 ((time_t)1795259887)		/* 2026-11-21 11:18:07 UTC */
#define DDRESCUELOG "/usr/bin/ddrescuelog"

/* Two maps GNU ddrescue 1.27 wrote; the first line is what pdd writes
 * differently, the rest must come back to the byte. */
#define EX1_HEAD "# Mapfile. Created by GNU ddrescue version 1.27\n"
#define EX1_BODY \
	"# Command line: ddrescue -i 64Ki -s 256Ki in out m\n" \
	"# Start time:   2026-11-21 11:18:07\n" \
	"# Current time: 2026-11-21 11:18:07\n" \
	"# Finished\n" \
	"# current_pos  current_status  current_pass\n" \
	"0x00040000     +               1\n" \
	"#      pos        size  status\n" \
	"0x00000000  0x00010000  ?\n" \
	"0x00010000  0x00040000  +\n" \
	"0x00050000  0x000B0000  ?\n"
#define EX2_HEAD EX1_HEAD
#define EX2_BODY \
	"# Command line: ddrescue in out2 m2\n" \
	"# Start time:   2026-11-21 11:18:07\n" \
	"# Current time: 2026-11-21 11:18:07\n" \
	"# Finished\n" \
	"# current_pos  current_status  current_pass\n" \
	"0x000F0000     +               1\n" \
	"#      pos        size  status\n" \
	"0x00000000  0x00100000  +\n"
#define PDD_HEAD "# Mapfile. Created by pdd " PDD_VERSION "\n"

#define E(p, s, c) { (p), (s), (c) }
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* --- helpers ------------------------------------------------------------- */

/* pdd_map_parse() on len bytes of text, under the name "m". */
static int parse_n(struct pdd_map *m, const char *text, size_t len)
{
	FILE *f;
	int ret;

	/* fmemopen() of nothing is not portable: an empty file instead */
	f = len ? fmemopen((void *)text, len, "r") : tmpfile();
	assert_non_null(f);
	ret = pdd_map_parse(m, f, "m");
	fclose(f);
	return ret;
}

static int parse(struct pdd_map *m, const char *text)
{
	return parse_n(m, text, strlen(text));
}

/* pdd_map_write() into a string the caller frees. */
static char *write_str(const struct pdd_map *m, time_t now)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(pdd_map_write(m, f, now), 0);
	fclose(f);
	return buf;
}

/* The extents, one "pos size status" line each, so that a failure shows
 * the whole map. */
static void dump(char *buf, size_t len, const struct pdd_extent *e, size_t n)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%llu %llu %c\n",
					(unsigned long long)e[i].pos,
					(unsigned long long)e[i].size,
					e[i].status);
}

static void check_ext(const struct pdd_extent *got, size_t n,
		      const struct pdd_extent *want, size_t nw)
{
	char g[2048], w[2048];

	dump(g, sizeof(g), got, n);
	dump(w, sizeof(w), want, nw);
	assert_string_equal(g, w);
	assert_int_equal(n, nw);
}

#define CHECK_MAP(m, ...) do { \
	const struct pdd_extent want_[] = { __VA_ARGS__ }; \
	check_ext((m)->ext, (m)->n, want_, N(want_)); \
} while (0)

/* A map holding exactly these extents. */
static void build(struct pdd_map *m, const struct pdd_extent *e, size_t n)
{
	size_t i;

	pdd_map_init(m, "m");
	for (i = 0; i < n; i++)
		assert_int_equal(pdd_map_set(m, e[i].pos, e[i].size,
					     e[i].status), 0);
	check_ext(m->ext, m->n, e, n);
}

#define BUILD(m, ...) do { \
	const struct pdd_extent b_[] = { __VA_ARGS__ }; \
	build((m), b_, N(b_)); \
} while (0)

/* A parse that must fail with exactly this message. */
static void check_refused_n(const char *text, size_t len, const char *msg)
{
	struct pdd_map m;
	char want[256];

	pdd_map_init(&m, "m");
	cap_reset();
	assert_int_equal(parse_n(&m, text, len), -EINVAL);
	snprintf(want, sizeof(want), "pdd: map 'm' %s\n", msg);
	assert_string_equal(captured(), want);
	assert_int_equal(m.n, 0);
	assert_null(m.ext);
	pdd_map_free(&m);
}

static void check_refused(const char *text, const char *msg)
{
	check_refused_n(text, strlen(text), msg);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len >= 0);
	rewind(f);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void join(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* --- reading what ddrescue wrote ------------------------------------------ */

static void test_parse_ddrescue_example1(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "m");
	assert_int_equal(parse(&m, EX1_HEAD EX1_BODY), 0);
	assert_int_equal(m.cur_pos, 0x40000);
	assert_int_equal(m.cur_status, '+');
	assert_int_equal(m.pass, 1);
	CHECK_MAP(&m, E(0, 0x10000, '?'), E(0x10000, 0x40000, '+'),
		  E(0x50000, 0xB0000, '?'));
	assert_string_equal(captured(), "");
	pdd_map_free(&m);
}

static void test_parse_ddrescue_example2(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "m");
	assert_int_equal(parse(&m, EX2_HEAD EX2_BODY), 0);
	assert_int_equal(m.cur_pos, 0xF0000);
	assert_int_equal(m.cur_status, '+');
	assert_int_equal(m.pass, 1);
	CHECK_MAP(&m, E(0, 0x100000, '+'));
	pdd_map_free(&m);
}

/* Written back with the same command line and times, only the program
 * named in the first line differs. */
static void test_write_ddrescue_examples(void **state)
{
	struct pdd_map m;
	char *out;

	(void)state;
	pdd_map_init(&m, "m");
	assert_int_equal(parse(&m, EX1_HEAD EX1_BODY), 0);
	m.cmdline = "ddrescue -i 64Ki -s 256Ki in out m";
	m.started = T0;
	out = write_str(&m, T0);
	assert_string_equal(out, PDD_HEAD EX1_BODY);
	free(out);

	assert_int_equal(parse(&m, EX2_HEAD EX2_BODY), 0);
	m.cmdline = "ddrescue in out2 m2";
	out = write_str(&m, T0);
	assert_string_equal(out, PDD_HEAD EX2_BODY);
	free(out);
	pdd_map_free(&m);
}

static void test_round_trip(void **state)
{
	struct pdd_map a, b;
	char *out1, *out2;

	(void)state;
	BUILD(&a, E(0x1000, 0x200, '+'), E(0x1200, 0x10, '-'),
	      E(0x1210, 0x5, '*'), E(0x1215, 0x100000000ULL, '/'),
	      E(0x100001215ULL, 0x7, '?'), E(0x10000121CULL, 0x1, '+'));
	a.cur_pos = 0x1210;
	a.pass = 3;
	a.started = T0;
	out1 = write_str(&a, T0 + 60);
	pdd_map_init(&b, "m");
	assert_int_equal(parse(&b, out1), 0);
	check_ext(b.ext, b.n, a.ext, a.n);
	assert_int_equal(b.cur_pos, 0x1210);
	assert_int_equal(b.cur_status, '?');
	assert_int_equal(b.pass, 3);
	b.started = T0;
	out2 = write_str(&b, T0 + 60);
	assert_string_equal(out1, out2);
	/* more than 32 bits take more than eight digits */
	assert_non_null(strstr(out1, "0x00001215  0x100000000  /\n"));
	assert_non_null(strstr(out1, "# Copying\n"));
	assert_non_null(strstr(out1, "0x00001210     ?               3\n"));
	free(out1);
	free(out2);
	pdd_map_free(&a);
	pdd_map_free(&b);
}

static void test_write_without_cmdline(void **state)
{
	struct pdd_map m;
	char *out;

	(void)state;
	pdd_map_init(&m, "m");
	m.started = T0;
	out = write_str(&m, T0 + 3600 + 61);
	assert_string_equal(out,
		PDD_HEAD
		"# Start time:   2026-11-21 11:18:07\n"
		"# Current time: 2026-11-21 12:19:08\n"
		"# Copying\n"
		"# current_pos  current_status  current_pass\n"
		"0x00000000     ?               1\n"
		"#      pos        size  status\n");
	free(out);
	pdd_map_free(&m);
}

/* A stream that fails to take the text is an I/O error. */
static void test_write_error(void **state)
{
	struct pdd_map m;
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	BUILD(&m, E(0, 512, '+'));
	assert_int_equal(pdd_map_write(&m, f, T0), -EIO);
	fclose(f);
	f = fopen("/dev/null", "r");
	assert_non_null(f);
	assert_int_equal(pdd_map_write(&m, f, T0), -EIO);
	fclose(f);
	pdd_map_free(&m);
}

static void test_parse_number_bases(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "m");
	assert_int_equal(parse(&m,
		"0x20 - 2\n"
		"0 0x10 +\n"
		"16 020 -\n"		/* octal 16 */
		"32 16 ?\n"
		"0X30 0Xa /\n"
		"072 +6 *\n"), 0);	/* 58, and the '+' strtoull allows */
	assert_int_equal(m.cur_pos, 32);
	assert_int_equal(m.cur_status, '-');
	assert_int_equal(m.pass, 2);
	CHECK_MAP(&m, E(0, 16, '+'), E(16, 16, '-'), E(32, 16, '?'),
		  E(48, 10, '/'), E(58, 6, '*'));
	pdd_map_free(&m);
}

static void test_parse_status_line(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "m");
	/* no pass: 1 */
	assert_int_equal(parse(&m, "0x100 ?\n"), 0);
	assert_int_equal(m.cur_pos, 0x100);
	assert_int_equal(m.cur_status, '?');
	assert_int_equal(m.pass, 1);
	assert_int_equal(m.n, 0);
	/* ddrescue's fill and generate modes, valid only here */
	assert_int_equal(parse(&m, "7 F 4\n"), 0);
	assert_int_equal(m.cur_status, 'F');
	assert_int_equal(m.pass, 4);
	assert_int_equal(parse(&m, "0 G\n"), 0);
	assert_int_equal(m.cur_status, 'G');
	assert_int_equal(m.pass, 1);
	assert_int_equal(parse(&m, "0x7FFFFFFFFFFFFFFF * 2147483647\n"), 0);
	assert_int_equal(m.cur_pos, INT64_MAX);
	assert_int_equal(m.pass, 2147483647u);
	pdd_map_free(&m);
}

static void test_parse_first_block_not_at_zero(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "m");
	assert_int_equal(parse(&m, "0 ?\n0x1000 0x200 +\n0x1200 0x200 -\n"), 0);
	CHECK_MAP(&m, E(0x1000, 0x200, '+'), E(0x1200, 0x200, '-'));
	pdd_map_free(&m);
}

static void test_parse_merges_neighbours(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "m");
	assert_int_equal(parse(&m,
		"0 ?\n"
		"0 16 +\n"
		"16 16 +\n"
		"32 1 +\n"
		"33 15 ?\n"
		"48 16 ?\n"
		"64 16 +\n"), 0);
	CHECK_MAP(&m, E(0, 33, '+'), E(33, 31, '?'), E(64, 16, '+'));
	pdd_map_free(&m);
}

static void test_parse_empty(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "m");
	assert_int_equal(parse(&m, ""), 0);
	assert_int_equal(m.n, 0);
	assert_null(m.ext);
	assert_int_equal(m.cur_pos, 0);
	assert_int_equal(m.cur_status, '?');
	assert_int_equal(m.pass, 1);
	assert_int_equal(parse(&m, "# only\n#comments\n\n   \n"), 0);
	assert_int_equal(m.n, 0);
	assert_int_equal(m.cur_status, '?');
	assert_int_equal(m.pass, 1);
	assert_string_equal(captured(), "");
	pdd_map_free(&m);
}

/* A map parsed over another replaces it. */
static void test_parse_replaces(void **state)
{
	struct pdd_map m;

	(void)state;
	BUILD(&m, E(0, 100, '+'));
	m.cur_pos = 5;
	m.cur_status = '+';
	m.pass = 2;
	assert_int_equal(parse(&m, "# nothing\n"), 0);
	assert_int_equal(m.n, 0);
	assert_int_equal(m.cur_pos, 0);
	assert_int_equal(m.cur_status, '?');
	assert_int_equal(m.pass, 1);
	assert_string_equal(m.path, "m");
	pdd_map_free(&m);
}

/* Blank lines, comments (also indented, as ddrescue allows), tabs, CRLF,
 * leading blanks and a last line without its newline. */
static void test_parse_layout(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "m");
	assert_int_equal(parse(&m,
		"\n"
		"# comment\n"
		"   \t\n"
		"  # indented comment\n"
		"0x10\t+\t1\t\r\n"
		"\n"
		"#      pos        size  status\n"
		"  0x0\t0x10 \t +  \r\n"
		"\r\n"
		"16 16 -"), 0);
	assert_int_equal(m.cur_pos, 16);
	assert_int_equal(m.cur_status, '+');
	CHECK_MAP(&m, E(0, 16, '+'), E(16, 16, '-'));
	pdd_map_free(&m);
}

/* ddrescue writes "0 0 ?" for an empty domain: nothing is stored, but as
 * in ddrescue the next block must then start at 0. */
static void test_parse_empty_domain(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "m");
	assert_int_equal(parse(&m, "0 ?\n0x00000000  0x00000000  ?\n"), 0);
	assert_int_equal(m.n, 0);
	assert_int_equal(parse(&m, "0 ?\n0 0 +\n0 16 -\n"), 0);
	CHECK_MAP(&m, E(0, 16, '-'));
	pdd_map_free(&m);
	check_refused("0 ?\n0 0 ?\n5 3 +\n",
		      "line 3: blocks are not contiguous");
	check_refused("0 ?\n0 5 ?\n0 0 +\n",
		      "line 3: blocks are not contiguous");
}

static void test_parse_largest(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "m");
	assert_int_equal(parse(&m, "0 ?\n0x7FFFFFFFFFFFFFFE 1 +\n"), 0);
	CHECK_MAP(&m, E(0x7FFFFFFFFFFFFFFEULL, 1, '+'));
	assert_int_equal(parse(&m, "0 ?\n0 0x7FFFFFFFFFFFFFFF -\n"), 0);
	CHECK_MAP(&m, E(0, 0x7FFFFFFFFFFFFFFFULL, '-'));
	pdd_map_free(&m);
}

/* --- refusing what ddrescue refuses --------------------------------------- */

static void test_refuse_not_contiguous(void **state)
{
	(void)state;
	/* a gap, the line counted with the comments above it */
	check_refused(
		"# Mapfile\n"
		"# current_pos  current_status  current_pass\n"
		"0 ?\n"
		"#      pos        size  status\n"
		"0 16 +\n"
		"17 16 -\n",
		"line 6: blocks are not contiguous");
	/* an overlap */
	check_refused("0 ?\n0 16 +\n8 16 -\n",
		      "line 3: blocks are not contiguous");
	/* out of order */
	check_refused("0 ?\n16 16 +\n0 16 -\n",
		      "line 3: blocks are not contiguous");
}

static void test_refuse_bad_status(void **state)
{
	(void)state;
	check_refused("0 x\n", "line 1: bad status line");
	check_refused("\n\n0 ?\n0 16 x\n", "line 4: bad block line");
	/* fill and generate exist only on the status line */
	check_refused("0 ?\n0 16 F\n", "line 2: bad block line");
	check_refused("0 ?\n0 16 G\n", "line 2: bad block line");
	/* two characters are not a status */
	check_refused("0 ?+\n", "line 1: bad status line");
	check_refused("0 ?\n0 16 ++\n", "line 2: bad block line");
	check_refused("0 ? 0\n", "line 1: bad status line");
	check_refused("0 ? 0x2\n", "line 1: bad status line");
	check_refused("0 ? -1\n", "line 1: bad status line");
	check_refused("0 ? 2147483648\n", "line 1: bad status line");
}

static void test_refuse_negative(void **state)
{
	(void)state;
	check_refused("-1 ?\n", "line 1: bad status line");
	check_refused("0 ?\n-16 16 +\n", "line 2: bad block line");
	check_refused("0 ?\n0 -16 +\n", "line 2: bad block line");
	check_refused("0 ?\n0 -0 +\n", "line 2: bad block line");
}

static void test_refuse_junk(void **state)
{
	(void)state;
	check_refused("0 ? 1 x\n", "line 1: bad status line");
	check_refused("0 ? x\n", "line 1: bad status line");
	check_refused("0x ?\n", "line 1: bad status line");
	check_refused("0 ?\n0 16 + junk\n", "line 2: bad block line");
	check_refused("0 ?\n0 16 + #\n", "line 2: bad block line");
	check_refused("0 ?\n0 16k +\n", "line 2: bad block line");
	check_refused("0 ?\n08 16 +\n", "line 2: bad block line");
	check_refused("0 ?\n0x10 0xG +\n", "line 2: bad block line");
	check_refused("0 ?\n0,16 +\n", "line 2: bad block line");
	/* a NUL byte does not end the line early */
	check_refused_n("0 ?\n0 16 +\0 junk\n", 17, "line 2: bad block line");
}

static void test_refuse_zero_size(void **state)
{
	(void)state;
	check_refused("0 ?\n16 0 +\n", "line 2: bad block line");
	check_refused("0 ?\n0 16 +\n16 0 +\n", "line 3: bad block line");
}

static void test_refuse_missing_fields(void **state)
{
	(void)state;
	check_refused("?\n", "line 1: bad status line");
	check_refused("0\n", "line 1: bad status line");
	check_refused("0 ?\n0 16\n", "line 2: bad block line");
	check_refused("0 ?\n0\n", "line 2: bad block line");
	check_refused("0 ?\n+\n", "line 2: bad block line");
}

static void test_refuse_too_large(void **state)
{
	(void)state;
	check_refused("0x8000000000000000 ?\n", "line 1: bad status line");
	check_refused("0 ?\n0x7FFFFFFFFFFFFFFF 1 +\n", "line 2: bad block line");
	check_refused("0 ?\n1 0x7FFFFFFFFFFFFFFF +\n", "line 2: bad block line");
	check_refused("0 ?\n0 0x10000000000000000 +\n",
		      "line 2: bad block line");
	check_refused("0 ?\n0 99999999999999999999999 +\n",
		      "line 2: bad block line");
}

/* 1000 characters are fine; one more is refused, comment or not, rather
 * than cut into two lines. */
static void test_refuse_long_line(void **state)
{
	struct pdd_map m;
	char *text = malloc(4096);
	size_t off;

	(void)state;
	assert_non_null(text);
	off = (size_t)sprintf(text, "0 ?\n#");
	memset(text + off, 'x', 999);
	off += 999;
	strcpy(text + off, "\n0 16 +\n");
	pdd_map_init(&m, "m");
	assert_int_equal(parse(&m, text), 0);
	CHECK_MAP(&m, E(0, 16, '+'));
	pdd_map_free(&m);

	off = (size_t)sprintf(text, "0 ?\n0 16 +\n#");
	memset(text + off, 'x', 1000);
	off += 1000;
	strcpy(text + off, "\n16 16 +\n");
	check_refused(text, "line 3: line too long");

	off = (size_t)sprintf(text, "0 ?\n0 16 +");
	memset(text + off, ' ', 995);	/* 1001 with the block */
	off += 995;
	strcpy(text + off, "\n");
	check_refused(text, "line 2: line too long");
	free(text);
}

/* A stream that gives its text, then fails every read with EIO, as a
 * disk with a bad sector under the map would. */
struct failing {
	const char *text;		/* what reads give before failing */
	size_t off;			/* how much of it they have given */
};

static ssize_t failing_read(void *cookie, char *buf, size_t size)
{
	struct failing *c = cookie;
	size_t n = strlen(c->text) - c->off;

	if (!n) {
		errno = EIO;
		return -1;
	}
	if (n > size)
		n = size;
	memcpy(buf, c->text + c->off, n);
	c->off += n;
	return (ssize_t)n;
}

/* pdd_map_parse() on a stream that fails after text: the error, never
 * an empty or partial map. */
static void check_read_error(const char *text)
{
	struct failing c = { text, 0 };
	FILE *f = fopencookie(&c, "r", (cookie_io_functions_t){ .read = failing_read });
	struct pdd_map m;

	assert_non_null(f);
	pdd_map_init(&m, "m");
	cap_reset();
	assert_int_equal(pdd_map_parse(&m, f, "m"), -EIO);
	assert_string_equal(captured(), "pdd: cannot read map 'm': Input/output error\n");
	assert_int_equal(m.n, 0);
	assert_null(m.ext);
	fclose(f);
	pdd_map_free(&m);
}

static void test_refuse_read_error(void **state)
{
	(void)state;
	check_read_error("");			/* the first read */
	check_read_error("# Mapfile\n");	/* before the status line */
	check_read_error("0 ?\n0 16 +\n16 16 -\n");	/* after whole lines */
	check_read_error("0 ?\n0 16 +\n16 1");	/* in a line */
}

/* --- changing the map ----------------------------------------------------- */

static void test_set_empty_map(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "m");
	assert_int_equal(pdd_map_set(&m, 100, 50, '+'), 0);
	CHECK_MAP(&m, E(100, 50, '+'));
	pdd_map_free(&m);
	assert_int_equal(m.n, 0);
	assert_null(m.ext);
}

static void test_set_splits_one_in_three(void **state)
{
	struct pdd_map m;

	(void)state;
	BUILD(&m, E(0, 1000, '?'));
	assert_int_equal(pdd_map_set(&m, 100, 50, '+'), 0);
	CHECK_MAP(&m, E(0, 100, '?'), E(100, 50, '+'), E(150, 850, '?'));
	pdd_map_free(&m);
}

static void test_set_spans_several(void **state)
{
	struct pdd_map m;

	(void)state;
	BUILD(&m, E(0, 100, '?'), E(100, 100, '+'), E(200, 100, '-'),
	      E(300, 100, '/'));
	assert_int_equal(pdd_map_set(&m, 50, 300, '*'), 0);
	CHECK_MAP(&m, E(0, 50, '?'), E(50, 300, '*'), E(350, 50, '/'));
	pdd_map_free(&m);
}

static void test_set_on_boundaries(void **state)
{
	struct pdd_map m;

	(void)state;
	BUILD(&m, E(0, 100, '?'), E(100, 100, '+'), E(200, 100, '*'),
	      E(300, 100, '?'));
	assert_int_equal(pdd_map_set(&m, 100, 200, '/'), 0);
	CHECK_MAP(&m, E(0, 100, '?'), E(100, 200, '/'), E(300, 100, '?'));
	/* the whole map, and the same status again */
	assert_int_equal(pdd_map_set(&m, 0, 400, '-'), 0);
	CHECK_MAP(&m, E(0, 400, '-'));
	assert_int_equal(pdd_map_set(&m, 0, 400, '-'), 0);
	CHECK_MAP(&m, E(0, 400, '-'));
	/* right after the last, right before the first */
	assert_int_equal(pdd_map_set(&m, 400, 10, '+'), 0);
	assert_int_equal(pdd_map_set(&m, 410, 10, '-'), 0);
	CHECK_MAP(&m, E(0, 400, '-'), E(400, 10, '+'), E(410, 10, '-'));
	pdd_map_free(&m);

	BUILD(&m, E(100, 100, '+'));
	assert_int_equal(pdd_map_set(&m, 50, 50, '+'), 0);
	CHECK_MAP(&m, E(50, 150, '+'));
	pdd_map_free(&m);
}

static void test_set_before_first_with_gap(void **state)
{
	struct pdd_map m;

	(void)state;
	BUILD(&m, E(1000, 100, '+'));
	assert_int_equal(pdd_map_set(&m, 0, 100, '-'), 0);
	CHECK_MAP(&m, E(0, 100, '-'), E(100, 900, '?'), E(1000, 100, '+'));
	pdd_map_free(&m);
	/* the '?' filling the gap joins a '?' neighbour */
	BUILD(&m, E(1000, 100, '?'));
	assert_int_equal(pdd_map_set(&m, 10, 100, '+'), 0);
	CHECK_MAP(&m, E(10, 100, '+'), E(110, 990, '?'));
	assert_int_equal(pdd_map_set(&m, 0, 5, '?'), 0);
	CHECK_MAP(&m, E(0, 10, '?'), E(10, 100, '+'), E(110, 990, '?'));
	pdd_map_free(&m);
}

static void test_set_after_last_with_gap(void **state)
{
	struct pdd_map m;

	(void)state;
	BUILD(&m, E(0, 100, '+'));
	assert_int_equal(pdd_map_set(&m, 500, 100, '-'), 0);
	CHECK_MAP(&m, E(0, 100, '+'), E(100, 400, '?'), E(500, 100, '-'));
	assert_int_equal(pdd_map_set(&m, 700, 100, '?'), 0);
	CHECK_MAP(&m, E(0, 100, '+'), E(100, 400, '?'), E(500, 100, '-'),
		  E(600, 200, '?'));
	pdd_map_free(&m);
}

static void test_set_overhanging(void **state)
{
	struct pdd_map m;

	(void)state;
	BUILD(&m, E(100, 100, '+'), E(200, 100, '-'));
	assert_int_equal(pdd_map_set(&m, 50, 100, '*'), 0);
	CHECK_MAP(&m, E(50, 100, '*'), E(150, 50, '+'), E(200, 100, '-'));
	assert_int_equal(pdd_map_set(&m, 250, 100, '/'), 0);
	CHECK_MAP(&m, E(50, 100, '*'), E(150, 50, '+'), E(200, 50, '-'),
		  E(250, 100, '/'));
	assert_int_equal(pdd_map_set(&m, 0, 1000, '?'), 0);
	CHECK_MAP(&m, E(0, 1000, '?'));
	pdd_map_free(&m);
}

static void test_set_merges_both_sides(void **state)
{
	struct pdd_map m;

	(void)state;
	BUILD(&m, E(0, 100, '+'), E(100, 100, '-'), E(200, 100, '+'));
	assert_int_equal(pdd_map_set(&m, 100, 100, '+'), 0);
	CHECK_MAP(&m, E(0, 300, '+'));
	pdd_map_free(&m);
	BUILD(&m, E(0, 100, '+'), E(100, 10, '-'), E(110, 10, '?'),
	      E(120, 100, '+'));
	assert_int_equal(pdd_map_set(&m, 90, 40, '+'), 0);
	CHECK_MAP(&m, E(0, 220, '+'));
	pdd_map_free(&m);
}

static void test_set_size_zero(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "m");
	assert_int_equal(pdd_map_set(&m, 100, 0, '+'), 0);
	assert_int_equal(m.n, 0);
	assert_null(m.ext);
	BUILD(&m, E(0, 100, '?'));
	assert_int_equal(pdd_map_set(&m, 50, 0, '+'), 0);
	assert_int_equal(pdd_map_set(&m, 500, 0, '+'), 0);
	CHECK_MAP(&m, E(0, 100, '?'));
	pdd_map_free(&m);
}

/* --- asking the map ------------------------------------------------------- */

static void test_status(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "m");
	assert_int_equal(pdd_map_status(&m, 0), '?');
	assert_int_equal(pdd_map_status(&m, UINT64_MAX), '?');
	pdd_map_free(&m);
	BUILD(&m, E(100, 100, '+'), E(200, 1, '-'), E(201, 99, '*'),
	      E(300, 50, '/'));
	assert_int_equal(pdd_map_status(&m, 0), '?');
	assert_int_equal(pdd_map_status(&m, 99), '?');
	assert_int_equal(pdd_map_status(&m, 100), '+');
	assert_int_equal(pdd_map_status(&m, 199), '+');
	assert_int_equal(pdd_map_status(&m, 200), '-');
	assert_int_equal(pdd_map_status(&m, 201), '*');
	assert_int_equal(pdd_map_status(&m, 299), '*');
	assert_int_equal(pdd_map_status(&m, 300), '/');
	assert_int_equal(pdd_map_status(&m, 349), '/');
	assert_int_equal(pdd_map_status(&m, 350), '?');
	assert_int_equal(pdd_map_status(&m, UINT64_MAX), '?');
	pdd_map_free(&m);
}

static void test_bytes(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "m");
	assert_int_equal(pdd_map_bytes(&m, 0, 1000, '?'), 1000);
	assert_int_equal(pdd_map_bytes(&m, 0, 1000, '+'), 0);
	pdd_map_free(&m);
	BUILD(&m, E(100, 100, '+'), E(200, 50, '?'), E(250, 50, '-'),
	      E(300, 100, '+'));
	assert_int_equal(pdd_map_bytes(&m, 0, 1000, '+'), 200);
	assert_int_equal(pdd_map_bytes(&m, 0, 1000, '-'), 50);
	/* 100 before, 50 inside, 600 after */
	assert_int_equal(pdd_map_bytes(&m, 0, 1000, '?'), 750);
	assert_int_equal(pdd_map_bytes(&m, 0, 1000, '*'), 0);
	/* cut at both ends */
	assert_int_equal(pdd_map_bytes(&m, 150, 320, '+'), 70);
	assert_int_equal(pdd_map_bytes(&m, 150, 320, '?'), 50);
	assert_int_equal(pdd_map_bytes(&m, 150, 320, '-'), 50);
	assert_int_equal(pdd_map_bytes(&m, 50, 120, '?'), 50);
	assert_int_equal(pdd_map_bytes(&m, 390, 500, '?'), 100);
	/* nothing */
	assert_int_equal(pdd_map_bytes(&m, 300, 300, '+'), 0);
	assert_int_equal(pdd_map_bytes(&m, 300, 200, '?'), 0);
	pdd_map_free(&m);
}

/* pdd_map_todo() must match these extents, each with status '?'. */
static void check_todo(const struct pdd_map *m, uint64_t start, uint64_t end,
		       uint64_t grain, const struct pdd_extent *want, size_t nw)
{
	struct pdd_extent *out = (struct pdd_extent *)&out;	/* not NULL */
	size_t n = 12345;

	assert_int_equal(pdd_map_todo(m, start, end, grain, &out, &n), 0);
	if (!nw) {
		assert_int_equal(n, 0);
		assert_null(out);
		return;
	}
	check_ext(out, n, want, nw);
	free(out);
}

#define CHECK_TODO(m, s, e, g, ...) do { \
	const struct pdd_extent want_[] = { __VA_ARGS__ }; \
	check_todo((m), (s), (e), (g), want_, N(want_)); \
} while (0)

static void test_todo_grain_one(void **state)
{
	struct pdd_map m;

	(void)state;
	BUILD(&m, E(0, 100, '+'), E(100, 50, '-'), E(150, 100, '?'),
	      E(250, 50, '+'), E(300, 10, '*'), E(310, 10, '+'));
	CHECK_TODO(&m, 0, 320, 1, E(100, 150, '?'), E(300, 10, '?'));
	/* uncovered space is work too */
	CHECK_TODO(&m, 0, 400, 1, E(100, 150, '?'), E(300, 10, '?'),
		   E(320, 80, '?'));
	CHECK_TODO(&m, 120, 305, 1, E(120, 130, '?'), E(300, 5, '?'));
	pdd_map_free(&m);

	BUILD(&m, E(100, 100, '+'));
	CHECK_TODO(&m, 0, 300, 1, E(0, 100, '?'), E(200, 100, '?'));
	pdd_map_free(&m);

	pdd_map_init(&m, "m");
	CHECK_TODO(&m, 0, 1000, 512, E(0, 1000, '?'));
	CHECK_TODO(&m, 10, 20, 1, E(10, 10, '?'));
	pdd_map_free(&m);
}

static void test_todo_grain_rounds_out(void **state)
{
	struct pdd_map m;

	(void)state;
	/* 512: a bad spot at 1000..1100 takes 512..1536 */
	BUILD(&m, E(0, 1000, '+'), E(1000, 100, '-'), E(1100, 2996, '+'));
	CHECK_TODO(&m, 0, 4096, 512, E(512, 1024, '?'));
	/* 4096: the whole first block */
	CHECK_TODO(&m, 0, 4096, 4096, E(0, 4096, '?'));
	/* already aligned stays as it is */
	pdd_map_free(&m);
	BUILD(&m, E(0, 4096, '+'), E(4096, 4096, '?'), E(8192, 4096, '+'));
	CHECK_TODO(&m, 0, 12288, 4096, E(4096, 4096, '?'));
	CHECK_TODO(&m, 0, 12288, 512, E(4096, 4096, '?'));
	pdd_map_free(&m);
}

static void test_todo_cut_at_end(void **state)
{
	struct pdd_map m;

	(void)state;
	BUILD(&m, E(0, 9990, '+'), E(9990, 5, '-'), E(9995, 5, '+'));
	CHECK_TODO(&m, 0, 10000, 4096, E(8192, 1808, '?'));
	CHECK_TODO(&m, 0, 9992, 512, E(9728, 264, '?'));
	pdd_map_free(&m);
}

static void test_todo_joins(void **state)
{
	struct pdd_map m;

	(void)state;
	/* both in the same grain: overlapping */
	BUILD(&m, E(0, 100, '+'), E(100, 10, '-'), E(110, 90, '+'),
	      E(200, 10, '?'), E(210, 20000, '+'));
	CHECK_TODO(&m, 0, 20210, 4096, E(0, 4096, '?'));
	CHECK_TODO(&m, 0, 20210, 1, E(100, 10, '?'), E(200, 10, '?'));
	pdd_map_free(&m);
	/* neighbouring grains: touching */
	BUILD(&m, E(0, 100, '+'), E(100, 10, '-'), E(110, 4890, '+'),
	      E(5000, 10, '*'), E(5010, 10000, '+'));
	CHECK_TODO(&m, 0, 15010, 4096, E(0, 8192, '?'));
	pdd_map_free(&m);
	/* a grain apart: two */
	BUILD(&m, E(0, 100, '+'), E(100, 10, '-'), E(110, 8890, '+'),
	      E(9000, 10, '/'), E(9010, 10000, '+'));
	CHECK_TODO(&m, 0, 19010, 4096, E(0, 4096, '?'), E(8192, 4096, '?'));
	pdd_map_free(&m);
}

static void test_todo_start_not_zero(void **state)
{
	struct pdd_map m;

	(void)state;
	/* grains counted from 1000: 1000, 1512, 2024, ... */
	BUILD(&m, E(0, 1600, '+'), E(1600, 10, '-'), E(1610, 5000, '+'));
	CHECK_TODO(&m, 1000, 6610, 512, E(1512, 512, '?'));
	CHECK_TODO(&m, 1000, 1700, 512, E(1512, 188, '?'));
	CHECK_TODO(&m, 1605, 6610, 512, E(1605, 512, '?'));
	pdd_map_free(&m);
	/* a start inside a bad extent */
	BUILD(&m, E(0, 1000, '-'), E(1000, 1000, '+'));
	CHECK_TODO(&m, 500, 2000, 4096, E(500, 1500, '?'));
	CHECK_TODO(&m, 500, 2000, 100, E(500, 500, '?'));
	pdd_map_free(&m);
}

static void test_todo_nothing(void **state)
{
	struct pdd_map m;

	(void)state;
	BUILD(&m, E(0, 10000, '+'));
	CHECK_TODO(&m, 0, 10000, 1);
	CHECK_TODO(&m, 0, 10000, 4096);
	CHECK_TODO(&m, 123, 9000, 512);
	/* an empty range */
	CHECK_TODO(&m, 10000, 10000, 1);
	CHECK_TODO(&m, 20000, 10000, 1);
	pdd_map_free(&m);
}

/* --- against a model: one status per byte --------------------------------- */

#define MODEL 200

static uint32_t rnd_state = 12345;

static uint32_t rnd(uint32_t below)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 16) % below;
}

/* The map's invariants, and every byte's status as the model has it ('\0'
 * for bytes no extent covers). */
static void check_model(const struct pdd_map *m, const char *model)
{
	size_t i;
	uint64_t b;

	for (i = 0; i < m->n; i++) {
		assert_true(m->ext[i].size > 0);
		if (i) {
			assert_int_equal(m->ext[i].pos,
					 m->ext[i - 1].pos + m->ext[i - 1].size);
			assert_true(m->ext[i].status != m->ext[i - 1].status);
		}
	}
	for (b = 0; b < MODEL; b++) {
		bool covered = m->n && b >= m->ext[0].pos &&
			b < m->ext[m->n - 1].pos + m->ext[m->n - 1].size;

		assert_int_equal(covered, model[b] != '\0');
		assert_int_equal(pdd_map_status(m, b),
				 model[b] ? model[b] : '?');
	}
}

static uint64_t model_bytes(const char *model, uint64_t start, uint64_t end,
			    char status)
{
	uint64_t b, sum = 0;

	for (b = start; b < end; b++)
		sum += (model[b] ? model[b] : '?') == status;
	return sum;
}

static void check_model_todo(const struct pdd_map *m, const char *model,
			     uint64_t start, uint64_t end, uint64_t grain)
{
	char want[MODEL];
	struct pdd_extent *out;
	size_t n, i;
	uint64_t b;

	memset(want, 0, sizeof(want));
	for (b = start; b < end; b++) {
		uint64_t lo, hi;

		if (model[b] == '+')
			continue;
		lo = start + (b - start) / grain * grain;
		hi = lo + grain < end ? lo + grain : end;
		memset(want + lo, 1, hi - lo);
	}
	assert_int_equal(pdd_map_todo(m, start, end, grain, &out, &n), 0);
	for (i = 0; i < n; i++) {
		assert_true(out[i].size > 0);
		assert_int_equal(out[i].status, '?');
		/* joined: never touching the one before */
		if (i)
			assert_true(out[i].pos >
				    out[i - 1].pos + out[i - 1].size);
		for (b = out[i].pos; b < out[i].pos + out[i].size; b++) {
			assert_int_equal(want[b], 1);
			want[b] = 0;
		}
	}
	for (b = 0; b < MODEL; b++)
		assert_int_equal(want[b], 0);
	free(out);
}

static void test_against_model(void **state)
{
	static const char st[] = "?*/-+";
	char model[MODEL];
	struct pdd_map m;
	int round, i;

	(void)state;
	for (round = 0; round < 50; round++) {
		pdd_map_init(&m, "m");
		memset(model, 0, sizeof(model));
		for (i = 0; i < 40; i++) {
			uint64_t pos = rnd(MODEL), size = rnd(30), b;
			char s = st[rnd(5)];
			int lo = -1, hi = -1, j;

			if (pos + size > MODEL)
				size = MODEL - pos;
			assert_int_equal(pdd_map_set(&m, pos, size, s), 0);
			for (b = pos; b < pos + size; b++)
				model[b] = s;
			/* the gap between the old and the new is untried */
			for (j = 0; j < MODEL; j++)
				if (model[j]) {
					if (lo < 0)
						lo = j;
					hi = j;
				}
			for (j = lo; lo >= 0 && j <= hi; j++)
				if (!model[j])
					model[j] = '?';
			check_model(&m, model);
			for (j = 0; j < 5; j++) {
				uint64_t a = rnd(MODEL), z = rnd(MODEL + 1);

				assert_int_equal(pdd_map_bytes(&m, a, z, st[j]),
						 model_bytes(model, a, z, st[j]));
			}
			check_model_todo(&m, model, rnd(MODEL / 2),
					 MODEL / 2 + rnd(MODEL / 2 + 1),
					 1 + rnd(40));
		}
		pdd_map_free(&m);
	}
}

/* --- files ---------------------------------------------------------------- */

static void test_load_missing(void **state)
{
	struct pdd_map m;

	(void)state;
	pdd_map_init(&m, "/nonexistent/pdd-test-map");
	assert_int_equal(pdd_map_load(&m), -ENOENT);
	assert_string_equal(captured(), "");
	assert_int_equal(m.n, 0);
	pdd_map_free(&m);
}

static void test_save_and_load(void **state)
{
	char dir[] = "/tmp/pdd-map-XXXXXX";
	char path[256], bak[256], tmp[256], want[512];
	struct pdd_map m, r;
	char *first, *second, *third;

	(void)state;
	assert_non_null(mkdtemp(dir));
	join(path, sizeof(path), dir, "m");
	join(bak, sizeof(bak), dir, "m.bak");
	join(tmp, sizeof(tmp), dir, "m.new");

	/* first save: the map only */
	BUILD(&m, E(0, 4096, '+'), E(4096, 512, '-'), E(4608, 1024, '?'));
	m.path = path;
	m.cmdline = "pdd if=a of=b map=m";
	assert_int_equal(pdd_map_save(&m), 0);
	assert_true(exists(path));
	assert_false(exists(bak));
	assert_false(exists(tmp));
	first = read_file(path);
	assert_non_null(strstr(first, "# Command line: pdd if=a of=b map=m\n"));

	pdd_map_init(&r, path);
	assert_int_equal(pdd_map_load(&r), 0);
	check_ext(r.ext, r.n, m.ext, m.n);

	/* second save: the first kept as .bak */
	assert_int_equal(pdd_map_set(&m, 4608, 1024, '+'), 0);
	m.cur_status = '+';
	assert_int_equal(pdd_map_save(&m), 0);
	assert_false(exists(tmp));
	second = read_file(path);
	third = read_file(bak);
	assert_string_equal(third, first);
	assert_non_null(strstr(second, "# Finished\n"));
	assert_int_equal(pdd_map_load(&r), 0);
	check_ext(r.ext, r.n, m.ext, m.n);
	free(third);

	/* third save: .bak is the second now */
	assert_int_equal(pdd_map_set(&m, 0, 1, '-'), 0);
	assert_int_equal(pdd_map_save(&m), 0);
	third = read_file(bak);
	assert_string_equal(third, second);
	free(third);
	third = read_file(path);
	assert_non_null(strstr(third, "0x00000000  0x00000001  -\n"));
	assert_false(exists(tmp));
	assert_string_equal(captured(), "");

	/* a bad map on disk is reported under its path */
	assert_int_equal(unlink(path), 0);
	{
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs("# x\n0 ?\n0 16 +\n32 16 -\n", f);
		fclose(f);
	}
	assert_int_equal(pdd_map_load(&r), -EINVAL);
	snprintf(want, sizeof(want),
		 "pdd: map '%s' line 4: blocks are not contiguous\n", path);
	assert_string_equal(captured(), want);
	assert_int_equal(r.n, 0);

	/* a directory is not a map */
	cap_reset();
	r.path = dir;
	assert_int_equal(pdd_map_load(&r), -EISDIR);
	snprintf(want, sizeof(want),
		 "pdd: cannot read map '%s': Is a directory\n", dir);
	assert_string_equal(captured(), want);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(bak), 0);
	assert_int_equal(rmdir(dir), 0);
	free(first);
	free(second);
	free(third);
	pdd_map_free(&m);
	pdd_map_free(&r);
}

static void test_save_no_directory(void **state)
{
	char dir[] = "/tmp/pdd-map-XXXXXX";
	char path[256], want[512];
	struct pdd_map m;

	(void)state;
	assert_non_null(mkdtemp(dir));
	join(path, sizeof(path), dir, "nodir/m");
	BUILD(&m, E(0, 1, '+'));
	m.path = path;
	assert_int_equal(pdd_map_save(&m), -ENOENT);
	snprintf(want, sizeof(want),
		 "pdd: cannot save map '%s': No such file or directory\n", path);
	assert_string_equal(captured(), want);
	assert_int_equal(rmdir(dir), 0);
	pdd_map_free(&m);
}

/* A relative path: the directory to sync is ".". */
static void test_save_relative(void **state)
{
	char dir[] = "/tmp/pdd-map-XXXXXX";
	char cwd[4096];
	struct pdd_map m;

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
	BUILD(&m, E(0, 1, '+'));
	m.path = "rel";
	assert_int_equal(pdd_map_save(&m), 0);
	assert_int_equal(pdd_map_save(&m), 0);
	assert_true(exists("rel"));
	assert_true(exists("rel.bak"));
	assert_false(exists("rel.new"));
	assert_int_equal(unlink("rel"), 0);
	assert_int_equal(unlink("rel.bak"), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(rmdir(dir), 0);
	pdd_map_free(&m);
}

/* A map that is a symbolic link is read and saved at its target, with
 * .new and .bak beside the target; the link stays a link. */
static void test_check_link_written_through(void **state)
{
	char dir[] = "/tmp/pdd-map-XXXXXX";
	char real[64], target[128], link_[128], path[128];
	struct pdd_dev in = { .fd = -1 }, out = { .fd = -1, .output = true };
	struct pdd_map m, r;
	struct stat st;
	char *text;

	(void)state;
	assert_non_null(mkdtemp(dir));
	join(real, sizeof(real), dir, "real");
	assert_int_equal(mkdir(real, 0755), 0);
	join(target, sizeof(target), real, "m");
	join(link_, sizeof(link_), dir, "link");
	assert_int_equal(symlink("real/m", link_), 0);

	/* a link to nothing is refused, and its target not made */
	pdd_map_init(&r, link_);
	assert_int_equal(pdd_map_check(&r, &in, &out), -ENOENT);
	assert_false(exists(target));
	pdd_map_free(&r);

	BUILD(&m, E(0, 4096, '?'));
	m.path = target;
	assert_int_equal(pdd_map_save(&m), 0);
	cap_reset();
	pdd_map_init(&r, link_);
	assert_int_equal(pdd_map_check(&r, &in, &out), 0);
	assert_int_equal(pdd_map_load(&r), 0);
	check_ext(r.ext, r.n, m.ext, m.n);
	assert_int_equal(pdd_map_set(&r, 0, 4096, '+'), 0);
	assert_int_equal(pdd_map_save(&r), 0);
	assert_string_equal(captured(), "");

	assert_int_equal(lstat(link_, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	text = read_file(target);
	assert_non_null(strstr(text, "0x00000000  0x00001000  +\n"));
	free(text);
	join(path, sizeof(path), real, "m.bak");
	assert_true(exists(path));
	join(path, sizeof(path), dir, "link.bak");
	assert_false(exists(path));
	join(path, sizeof(path), dir, "link.new");
	assert_false(exists(path));

	pdd_map_free(&r);
	pdd_map_free(&m);
	join(path, sizeof(path), real, "m.bak");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(target), 0);
	assert_int_equal(unlink(link_), 0);
	assert_int_equal(rmdir(real), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* What pdd writes, the real ddrescuelog reads: and the check can fail. */
static void test_ddrescuelog_accepts(void **state)
{
	char dir[] = "/tmp/pdd-map-XXXXXX";
	char path[256], cmd[512];
	struct pdd_map m;
	FILE *f;
	int rc;

	(void)state;
	assert_non_null(mkdtemp(dir));
	join(path, sizeof(path), dir, "m");
	BUILD(&m, E(0x200, 0x10000, '+'), E(0x10200, 0x200, '-'),
	      E(0x10400, 0x400, '*'), E(0x10800, 0x200, '/'),
	      E(0x10A00, 0x100000000ULL, '?'), E(0x100010A00ULL, 0x600, '+'));
	m.cmdline = "pdd if=a of=b map=m";
	m.cur_pos = 0x10400;
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(pdd_map_write(&m, f, time(NULL)), 0);
	fclose(f);
	snprintf(cmd, sizeof(cmd), DDRESCUELOG " -t %s >/dev/null 2>&1", path);
	if (access(DDRESCUELOG, X_OK) == 0) {
		rc = system(cmd);
		assert_true(WIFEXITED(rc));
		assert_int_equal(WEXITSTATUS(rc), 0);

		/* a gap it must refuse, or the check above proves nothing */
		f = fopen(path, "a");
		assert_non_null(f);
		fputs("0x200000000  0x00000200  +\n", f);
		fclose(f);
		rc = system(cmd);
		assert_true(WIFEXITED(rc));
		assert_int_not_equal(WEXITSTATUS(rc), 0);
	}
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	pdd_map_free(&m);
}

#define T(f) cmocka_unit_test_setup_teardown(f, cap_open, cap_close)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_parse_ddrescue_example1),
		T(test_parse_ddrescue_example2),
		T(test_write_ddrescue_examples),
		T(test_round_trip),
		T(test_write_without_cmdline),
		T(test_write_error),
		T(test_parse_number_bases),
		T(test_parse_status_line),
		T(test_parse_first_block_not_at_zero),
		T(test_parse_merges_neighbours),
		T(test_parse_empty),
		T(test_parse_replaces),
		T(test_parse_layout),
		T(test_parse_empty_domain),
		T(test_parse_largest),
		T(test_refuse_not_contiguous),
		T(test_refuse_bad_status),
		T(test_refuse_negative),
		T(test_refuse_junk),
		T(test_refuse_zero_size),
		T(test_refuse_missing_fields),
		T(test_refuse_too_large),
		T(test_refuse_long_line),
		T(test_refuse_read_error),
		T(test_set_empty_map),
		T(test_set_splits_one_in_three),
		T(test_set_spans_several),
		T(test_set_on_boundaries),
		T(test_set_before_first_with_gap),
		T(test_set_after_last_with_gap),
		T(test_set_overhanging),
		T(test_set_merges_both_sides),
		T(test_set_size_zero),
		T(test_status),
		T(test_bytes),
		T(test_todo_grain_one),
		T(test_todo_grain_rounds_out),
		T(test_todo_cut_at_end),
		T(test_todo_joins),
		T(test_todo_start_not_zero),
		T(test_todo_nothing),
		T(test_against_model),
		T(test_load_missing),
		T(test_save_and_load),
		T(test_save_no_directory),
		T(test_save_relative),
		T(test_check_link_written_through),
		T(test_ddrescuelog_accepts),
	};

	/* the header's times in localtime, the same everywhere */
	setenv("TZ", "UTC", 1);
	tzset();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
