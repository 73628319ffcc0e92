// SPDX-License-Identifier: GPL-2.0-or-later
/* src/bufs.c: every buffer aligned and writable end to end, in one
 * mapping of whole pages; an alignment that is not a power of two is
 * refused, not honoured halfway. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "pdd.h"

/* n buffers of len at align: aligned, apart, and each byte ours */
static void check(unsigned int n, size_t align, size_t len)
{
	void **bufs = calloc(n, sizeof(*bufs));

	assert_non_null(bufs);
	assert_int_equal(pdd_bufs_alloc(bufs, n, align, len), 0);
	for (unsigned int i = 0; i < n; i++) {
		assert_non_null(bufs[i]);
		if (align > 1)
			assert_int_equal((uintptr_t)bufs[i] % align, 0);
		if (i)
			assert_true((uintptr_t)bufs[i] >= (uintptr_t)bufs[i - 1] + len);
		/* a new mapping reads as zeros */
		assert_int_equal(((unsigned char *)bufs[i])[0], 0);
		assert_int_equal(((unsigned char *)bufs[i])[len - 1], 0);
		memset(bufs[i], (int)(i + 1), len);
	}
	for (unsigned int i = 0; i < n; i++)
		for (size_t b = 0; b < len; b += 4093)
			assert_int_equal(((unsigned char *)bufs[i])[b], (unsigned char)(i + 1));
	pdd_bufs_free(bufs, n, align, len);
	free(bufs);
}

static void test_alignments(void **state)
{
	(void)state;
	check(1, 0, 1);
	check(3, 512, 512);
	check(7, 4096, 12288);		/* under 2 MiB in all */
	check(16, 4096, 1 << 20);	/* 16 MiB: 2 MiB aligned mapping */
	check(5, 4096, 3 << 20);
	check(4, 1 << 20, 1 << 20);
	check(2, 4u << 20, 65536);	/* an alignment above 2 MiB */
	check(64, 512, 4096 + 512);	/* strides that are not whole pages */
}

static void test_refused(void **state)
{
	void *bufs[4] = { NULL };

	(void)state;
	assert_int_equal(pdd_bufs_alloc(bufs, 4, 6144, 1 << 20), -EINVAL);
	assert_int_equal(pdd_bufs_alloc(bufs, 4, 12288, 12288), -EINVAL);
	assert_int_equal(pdd_bufs_alloc(bufs, 0, 4096, 4096), -EINVAL);
	assert_int_equal(pdd_bufs_alloc(bufs, 4, 4096, 0), -EINVAL);
	assert_null(bufs[0]);
}

/* every page of [p, p + len) is in memory */
static bool resident(void *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (len + page - 1) / page;
	unsigned char *vec = calloc(n, 1);
	bool all = vec && !mincore(p, len, vec);

	for (size_t i = 0; all && i < n; i++)
		all = vec[i] & 1;
	free(vec);
	return all;
}

/* the helper brings every buffer in, in any race with the copy asking
 * for them; what the copy wrote into a buffer it was given stays */
static void test_fill(void **state)
{
	enum { N = 16, LEN = 1 << 20 };
	void *bufs[N];
	struct pdd_fill *f;

	(void)state;
	assert_int_equal(pdd_bufs_alloc(bufs, 4, 4096, 4096), 0);
	assert_null(pdd_fill_new(bufs, 4, 4096, UINT64_MAX));	/* 16 KiB: not worth a thread */
	assert_true(pdd_fill_ready(NULL, 3, false));
	assert_int_equal(pdd_fill_all(NULL), 0);
	pdd_fill_end(NULL);
	pdd_bufs_free(bufs, 4, 4096, 4096);

	for (int round = 0; round < 3; round++) {
		assert_int_equal(pdd_bufs_alloc(bufs, N, 4096, LEN), 0);
		f = pdd_fill_new(bufs, N, LEN, UINT64_MAX);
		assert_non_null(f);
		assert_true(pdd_fill_ready(f, 0, false));	/* the first at once */
		assert_false(pdd_fill_all(f));
		pdd_fill_go(f);
		/* round 0 asks for each in turn as a copy does, waiting; round
		 * 1 only looks, round 2 ends the helper at once */
		for (unsigned int i = 0; round == 0 && i < N; i++) {
			assert_true(pdd_fill_ready(f, i, true));
			memset(bufs[i], (int)(i + 1), LEN);
		}
		while (round == 1 && !pdd_fill_all(f))
			;
		/* buffer 0 is left to the first request */
		if (round == 1)
			assert_true(resident(bufs[1], (size_t)(N - 1) * LEN));
		if (round < 2)
			for (unsigned int i = 0; i < N; i++)
				assert_true(pdd_fill_ready(f, i, false));
		pdd_fill_end(f);
		for (unsigned int i = 0; i < N; i++)
			for (size_t b = 0; b < LEN; b += 4093)
				assert_int_equal(((unsigned char *)bufs[i])[b],
						 round ? 0 : (unsigned char)(i + 1));
		pdd_bufs_free(bufs, N, 4096, LEN);
	}
	/* buffers that share pages with their neighbours, one written to
	 * while the helper brings in the next */
	enum { ODD = 3 * 65536 + 512 };
	assert_int_equal(pdd_bufs_alloc(bufs, N, 512, ODD), 0);
	f = pdd_fill_new(bufs, N, ODD, UINT64_MAX);
	assert_non_null(f);
	pdd_fill_go(f);
	for (unsigned int i = 0; i < N; i++) {
		assert_true(pdd_fill_ready(f, i, true));
		memset(bufs[i], (int)(i + 1), ODD);
	}
	while (!pdd_fill_all(f))
		;
	assert_int_equal(pdd_fill_all(f), N);
	pdd_fill_end(f);
	for (unsigned int i = 0; i < N; i++)
		for (size_t b = 0; b < ODD; b += 511)
			assert_int_equal(((unsigned char *)bufs[i])[b], (unsigned char)(i + 1));
	pdd_bufs_free(bufs, N, 512, ODD);
	/* only the buffers of the transfers planned */
	assert_int_equal(pdd_bufs_alloc(bufs, N, 4096, LEN), 0);
	assert_null(pdd_fill_new(bufs, N, LEN, 1));
	f = pdd_fill_new(bufs, N, LEN, 3);
	assert_non_null(f);
	assert_true(pdd_fill_ready(f, 5, false));	/* not the helper's */
	pdd_fill_go(f);
	while (!pdd_fill_all(f))
		;
	assert_int_equal(pdd_fill_all(f), 3);
	assert_true(resident(bufs[1], 2 * (size_t)LEN));
	assert_false(resident(bufs[4], (size_t)LEN));	/* past the huge page of 2 and 3 */
	pdd_fill_end(f);
	pdd_bufs_free(bufs, N, 4096, LEN);
	/* never started: ended all the same */
	assert_int_equal(pdd_bufs_alloc(bufs, N, 4096, LEN), 0);
	f = pdd_fill_new(bufs, N, LEN, UINT64_MAX);
	assert_false(pdd_fill_ready(f, 1, false));
	assert_true(pdd_fill_ready(f, 1, true));	/* brought in by the asker */
	pdd_fill_end(f);
	pdd_bufs_free(bufs, N, 4096, LEN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alignments),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_fill),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
