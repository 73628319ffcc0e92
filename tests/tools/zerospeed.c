// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * How fast pdd_is_zero() looks at a buffer that is all zeros (its worst
 * case: every byte is read), in the cache (1 MiB, looked at again and
 * again) and from memory (256 MiB), beside memcpy of the same buffer, for
 * scripts/bench-zero.sh.  Prints "case GB/s" lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zero.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* bytes per second of f over a buffer of len bytes, for about 0.5 s */
static double rate(const char *what, unsigned char *buf, unsigned char *dst, size_t len)
{
	double t0 = now(), t;
	size_t bytes = 0;
	volatile int sink = 0;

	do {
		if (!strcmp(what, "memcpy"))
			memcpy(dst, buf, len);
		else
			sink += pdd_is_zero(buf, len);
		bytes += len;
		t = now() - t0;
	} while (t < 0.5);
	(void)sink;
	return bytes / t;
}

int main(void)
{
	const size_t sizes[] = { 1 << 20, 256 << 20 };

	for (size_t i = 0; i < 2; i++) {
		unsigned char *buf = calloc(1, sizes[i]), *dst = malloc(sizes[i]);

		if (!buf || !dst)
			return 1;
		memset(buf, 0, sizes[i]);	/* touched: no zero page behind it */
		memset(dst, 1, sizes[i]);
		printf("zero-check %s %.1f\n", i ? "256MiB" : "1MiB",
		       rate("zero", buf, dst, sizes[i]) / 1e9);
		printf("memcpy %s %.1f\n", i ? "256MiB" : "1MiB",
		       rate("memcpy", buf, dst, sizes[i]) / 1e9);
		free(buf);
		free(dst);
	}
	return 0;
}
