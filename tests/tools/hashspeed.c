// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * How fast src/hash.c digests a stream fed as the copy loop feeds it:
 * entries of one size from a set of buffers (64 MiB in all, so that they
 * come from memory as a copy's would), the loop waiting on the module's
 * descriptor when the queue is full.  Beside `openssl speed -evp ALG
 * -bytes N`, this shows what the ring and the threads cost.
 *
 *   build/hashspeed [ALGS [ENTRY_BYTES [SECONDS]]]   default sha256 1048576 2
 *
 * Prints "ALGS ENTRY MB/s CPU-s/GiB".
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "hash.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	const char *list = argc > 1 ? argv[1] : "sha256", *bad;
	size_t entry = argc > 2 ? strtoull(argv[2], NULL, 0) : 1 << 20, badlen;
	double secs = argc > 3 ? atof(argv[3]) : 2, t0, c0, t;
	size_t nbuf = entry ? (64u << 20) / entry : 0;
	unsigned int algs, queue;
	struct pdd_hash *h;
	unsigned char *mem;
	uint64_t fed = 0;
	int ret;

	if (pdd_hash_parse(list, &algs, &bad, &badlen)) {
		fprintf(stderr, "hashspeed: unknown hash '%.*s'\n", (int)badlen, bad);
		return 2;
	}
	if (nbuf < 2) {
		fprintf(stderr, "hashspeed: entries of 1 byte to 32 MiB\n");
		return 2;
	}
	/* as many entries in flight as a copy would have buffers, at most
	 * the buffers there are: an entry's buffer is reused only once
	 * consumed */
	queue = nbuf < 64 ? (unsigned int)nbuf : 64;
	mem = malloc(nbuf * entry);
	if (!mem)
		return 1;
	for (size_t i = 0; i < nbuf * entry; i++)
		mem[i] = (unsigned char)(i * 2654435761u >> 13);
	ret = pdd_hash_start(&h, algs, 0, queue);
	if (ret) {
		fprintf(stderr, "hashspeed: %s\n", strerror(-ret));
		return 1;
	}
	t0 = now();
	c0 = cpu();
	while (now() - t0 < secs) {
		ret = pdd_hash_feed(h, mem + (fed % nbuf) * entry, entry);
		if (ret == -EAGAIN) {
			struct pollfd p = { .fd = pdd_hash_fd(h), .events = POLLIN };

			poll(&p, 1, -1);
			pdd_hash_ack(h);
		} else {
			fed++;
		}
	}
	ret = pdd_hash_finish(h);
	t = now() - t0;
	if (ret) {
		fprintf(stderr, "hashspeed: %s\n", strerror(-ret));
		return 1;
	}
	printf("%s %zu %.0f MB/s %.2f CPU-s/GiB\n", list, entry,
	       pdd_hash_bytes(h) / t / 1e6, (cpu() - c0) / (pdd_hash_bytes(h) / 1073741824.0));
	pdd_hash_free(h);
	free(mem);
	return 0;
}
