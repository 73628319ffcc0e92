// SPDX-License-Identifier: GPL-2.0-or-later
/* src/zero.c: zero runs found exactly, at every length and alignment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "zero.h"

/* the obvious answer, byte by byte */
static bool slow_is_zero(const unsigned char *b, size_t len)
{
	while (len--)
		if (*b++)
			return false;
	return true;
}

/* every length up to 300 at every start up to 70 bytes into a buffer,
 * with one non-zero byte at every place, or none */
static void test_is_zero_exact(void **state)
{
	unsigned char *buf = calloc(1, 512);

	(void)state;
	assert_non_null(buf);
	for (size_t off = 0; off < 70; off++)
		for (size_t len = 0; len <= 300; len++) {
			assert_true(pdd_is_zero(buf + off, len));
			for (size_t at = 0; at < len; at += 1 + at / 8) {
				buf[off + at] = (unsigned char)(1 + at % 255);
				assert_int_equal(pdd_is_zero(buf + off, len),
						 slow_is_zero(buf + off, len));
				assert_false(pdd_is_zero(buf + off, len));
				buf[off + at] = 0;
			}
			/* a non-zero byte just outside is not looked at */
			buf[off + len] = 0xff;
			if (off)
				buf[off - 1] = 0xff;
			assert_true(pdd_is_zero(buf + off, len));
			buf[off + len] = 0;
			if (off)
				buf[off - 1] = 0;
		}
	free(buf);
}

/* runs against a model: random grains of data and zeros, a grain of g
 * bytes being data when any byte of it is not zero */
static void test_zero_runs(void **state)
{
	enum { LEN = 1 << 16 };
	unsigned char *buf = malloc(LEN);
	unsigned int seed = 12345;

	(void)state;
	assert_non_null(buf);
	for (int round = 0; round < 400; round++) {
		size_t g = (size_t)1 << (rand_r(&seed) % 13);	/* 1 .. 4096 */
		size_t len = (size_t)rand_r(&seed) % LEN + 1, pos = 0;

		memset(buf, 0, LEN);
		for (size_t i = 0; i < len; i += g)
			if (rand_r(&seed) % 3 == 0)	/* a byte somewhere in it */
				buf[i + (size_t)rand_r(&seed) % (g < len - i ? g : len - i)] = 0x5a;
		while (pos < len) {
			bool zero, want;
			size_t run = pdd_zero_run(buf + pos, len - pos, g, &zero);

			assert_true(run > 0 && run <= len - pos);
			/* whole grains, but for the end */
			assert_true(run % g == 0 || pos + run == len);
			assert_int_equal(zero, slow_is_zero(buf + pos, run));
			for (size_t i = pos; i < pos + run; i += g) {
				size_t n = g < len - i ? g : len - i;

				want = slow_is_zero(buf + i, n);
				assert_int_equal(want, zero);
			}
			/* and the run is as long as it can be */
			if (pos + run < len) {
				size_t n = g < len - pos - run ? g : len - pos - run;

				assert_int_not_equal(slow_is_zero(buf + pos + run, n), zero);
			}
			pos += run;
		}
	}
	free(buf);
}

/* sparse=0: no look, one run of data */
static void test_no_grain(void **state)
{
	unsigned char buf[64] = { 0 };
	bool zero = true;

	(void)state;
	assert_int_equal(pdd_zero_run(buf, sizeof(buf), 0, &zero), sizeof(buf));
	assert_false(zero);
	assert_int_equal(pdd_zero_run(buf, 0, 512, &zero), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_zero_exact),
		cmocka_unit_test(test_zero_runs),
		cmocka_unit_test(test_no_grain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
