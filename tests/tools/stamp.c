// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Address-stamped data for pdd's tests.  Every 8-byte word carries a
 * value derived from a salt and its byte position in the source, so a
 * block written to the wrong place, twice, or not at all is found and
 * named.
 *
 *   stamp fill  FILE OFF LEN SALT          write stamps for positions OFF..
 *   stamp check FILE OFF LEN SALT SRC [BS] check FILE[OFF, OFF+LEN) holds
 *                                          the stamps of positions SRC..
 *
 * check exits 1 and prints the first bad block (in BS units, default 512,
 * counted from the start of FILE) and how many blocks differ.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (1 << 20)

static uint64_t word_at(uint64_t salt, uint64_t pos)
{
	uint64_t x = (pos / 8) ^ (salt * 0x9E3779B97F4A7C15ULL);

	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ULL;
	x ^= x >> 29;
	return x | 1;		/* never a zero word: zero-fill shows */
}

static uint8_t byte_at(uint64_t salt, uint64_t pos)
{
	uint64_t w = word_at(salt, pos);

	return (uint8_t)(w >> (8 * (pos % 8)));
}

static void gen(uint8_t *buf, size_t n, uint64_t salt, uint64_t pos)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = byte_at(salt, pos + i);
}

static uint64_t num(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	if (*end) {
		fprintf(stderr, "stamp: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	uint64_t off, len, salt, src, bs = 512, bad = 0, first = 0;
	uint8_t *want, *got;
	bool fill;
	int fd;

	if (argc < 6 || (strcmp(argv[1], "fill") && strcmp(argv[1], "check"))) {
		fprintf(stderr, "usage: stamp fill FILE OFF LEN SALT\n"
				"       stamp check FILE OFF LEN SALT SRC [BS]\n");
		return 2;
	}
	fill = !strcmp(argv[1], "fill");
	off = num(argv[3]);
	len = num(argv[4]);
	salt = num(argv[5]);
	src = fill ? off : (argc > 6 ? num(argv[6]) : off);
	if (!fill && argc > 7)
		bs = num(argv[7]);
	fd = open(argv[2], fill ? O_WRONLY | O_CREAT : O_RDONLY, 0644);
	if (fd < 0) {
		fprintf(stderr, "stamp: %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	want = malloc(CHUNK);
	got = malloc(CHUNK);
	for (uint64_t done = 0; done < len;) {
		size_t n = len - done < CHUNK ? (size_t)(len - done) : CHUNK;
		ssize_t r;

		gen(want, n, salt, src + done);
		if (fill) {
			r = pwrite(fd, want, n, (off_t)(off + done));
		} else {
			r = pread(fd, got, n, (off_t)(off + done));
			if (r >= 0 && (size_t)r < n)
				memset(got + r, 0, n - r), r = (ssize_t)n;
		}
		if (r != (ssize_t)n) {
			fprintf(stderr, "stamp: %s at %" PRIu64 ": %s\n", argv[2],
				off + done, r < 0 ? strerror(errno) : "short");
			return 2;
		}
		if (!fill) {
			/* count differing blocks, by the file's own block numbers */
			for (size_t i = 0; i < n;) {
				uint64_t pos = off + done + i;
				size_t blk_end = (size_t)((pos / bs + 1) * bs - (off + done));

				if (blk_end > n)
					blk_end = n;
				if (memcmp(want + i, got + i, blk_end - i)) {
					if (!bad++)
						first = pos / bs;
				}
				i = blk_end;
			}
		}
		done += n;
	}
	if (fill && fsync(fd) < 0 && errno != EINVAL) {
		fprintf(stderr, "stamp: fsync %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	close(fd);
	free(want);
	free(got);
	if (bad) {
		printf("stamp: %s: %" PRIu64 " bad blocks of %" PRIu64 " bytes, first at block %" PRIu64 "\n",
		       argv[2], bad, bs, first);
		return 1;
	}
	return 0;
}
