// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Finding zeros in what was read, so that a run of them need not be
 * written the slow way (sparse=).  The check runs on every byte copied, so
 * it must cost next to nothing beside the copy: it ORs eight 64-bit words
 * at a time, which the compiler keeps in vector registers, and looks at
 * the result once per 64 bytes, so that data (the common case) is left
 * after its first non-zero word's block.
 */
#include <stdint.h>
#include <string.h>

#include "zero.h"

/* Whether the len bytes at p are all zero. */
bool pdd_is_zero(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t w[8], acc;

	/* the first block alone: most data ends the look here */
	while (len >= sizeof(w)) {
		memcpy(w, b, sizeof(w));	/* no alignment asked of p */
		acc = w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7];
		if (acc)
			return false;
		b += sizeof(w);
		len -= sizeof(w);
	}
	while (len--)
		if (*b++)
			return false;
	return true;
}

/*
 * The run at the start of the len bytes at p, cut in grains of g bytes
 * (the last may be short): how many bytes it holds, all of them in grains
 * that are wholly zero (*zero true) or in grains that are not.  g 0 looks
 * at nothing: the whole of it is one run of data.  The caller starts p
 * where a grain of the output starts, so that a zero run is whole blocks.
 */
size_t pdd_zero_run(const void *p, size_t len, size_t g, bool *zero)
{
	const unsigned char *b = p;
	size_t run, n;

	*zero = false;
	if (!g || !len)
		return len;
	run = g < len ? g : len;
	*zero = pdd_is_zero(b, run);
	while (run < len) {
		n = g < len - run ? g : len - run;
		if (pdd_is_zero(b + run, n) != *zero)
			break;
		run += n;
	}
	return run;
}
