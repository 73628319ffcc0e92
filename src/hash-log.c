// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hashlog (hashlog=): the digests of a finished src/hash.c in the
 * format the coreutils checkers read with -c, so that `sha256sum -c LOG`
 * proves the image later.  Written safely, as src/mapfile.c saves maps:
 * LOG.new, fsync, rename over LOG, fsync of the directory; a crash leaves
 * the old log or the new one, never half of one.  Only the module's
 * public interface is used here.
 */
#define _GNU_SOURCE		/* asprintf */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"

/* the tags of coreutils' --tag lines (cksum's, b2sum's BLAKE2b) */
static const char *const tags[PDD_HASH_MAX] = {
	[PDD_HASH_MD5] = "MD5",
	[PDD_HASH_SHA1] = "SHA1",
	[PDD_HASH_SHA256] = "SHA256",
	[PDD_HASH_SHA512] = "SHA512",
	[PDD_HASH_SHA3_256] = "SHA3-256",
	[PDD_HASH_BLAKE2B512] = "BLAKE2b",
};

/* NAME as coreutils' *sum print it: a backslash and a newline escaped,
 * which -c undoes when the line starts with a backslash (the caller
 * writes that).  Coreutils 9.1 knows no other escape: a \r stays. */
static void put_name(FILE *f, const char *name)
{
	for (const char *p = name; *p; p++)
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
}

/*
 * The hashlog, which the coreutils checkers read with -c:
 *
 *   DIGEST  NAME                       a digest of the whole range, as
 *                                      md5sum, sha1sum, sha256sum, sha512sum
 *                                      and b2sum print it
 *   TAG (NAME) = DIGEST                the same in --tag form, where the
 *                                      plain form would be misread (below)
 *   # ALG DIGEST  NAME:OFF-END         a window: bytes OFF to END - 1 of
 *                                      the output; and the whole range's
 *                                      digest when the range is not the
 *                                      whole output (seek=, a device
 *                                      larger than it): a checker would
 *                                      read the whole output and fail
 *
 * A checker skips a line that is not its own as "improperly formatted"
 * (and then warns, or fails with --strict) but takes any plain line whose
 * length it accepts for its own: sha256sum would check a SHA3-256 digest
 * as SHA-256 and report FAILED, and b2sum takes a plain digest of any
 * length for a BLAKE2b one.  So sha3-256 is always tagged, and when
 * blake2b512 is in a log with others every line is.  Windows cannot be
 * checked against a file, so they are comment lines, which every checker
 * skips silently, even with --strict.  Whole lines come first, in the
 * order of enum pdd_hash_alg, then the windows in order, each window's
 * algorithms together.  A name with a backslash or a newline is escaped
 * as coreutils escapes it, the line starting with a backslash.
 */
/* A comment line: algorithm a's digest hex of bytes [off, end). */
static void put_comment(FILE *f, enum pdd_hash_alg a, const char *hex, const char *name,
			uint64_t off, uint64_t end)
{
	fprintf(f, "# %s %s  ", pdd_hash_name(a), hex);
	put_name(f, name);
	fprintf(f, ":%llu-%llu\n", (unsigned long long)off, (unsigned long long)end);
}

static void write_log(const struct pdd_hash *h, FILE *f, const char *name,
		      const struct pdd_hash_range *rg)
{
	bool esc = strpbrk(name, "\\\n") != NULL;
	bool blake = pdd_hash_hex(h, PDD_HASH_BLAKE2B512) != NULL, others = false;

	for (int a = 0; a < PDD_HASH_MAX; a++)
		others |= a != PDD_HASH_BLAKE2B512 && pdd_hash_hex(h, a);
	for (int a = 0; a < PDD_HASH_MAX; a++) {
		const char *hex = pdd_hash_hex(h, a);

		if (!hex)
			continue;
		if (!rg->whole) {
			put_comment(f, a, hex, name, rg->off, rg->off + rg->len);
			continue;
		}
		fputs(esc ? "\\" : "", f);
		if ((blake && others) || a == PDD_HASH_SHA3_256) {
			fprintf(f, "%s (", tags[a]);
			put_name(f, name);
			fprintf(f, ") = %s\n", hex);
		} else {
			fprintf(f, "%s  ", hex);
			put_name(f, name);
			fputc('\n', f);
		}
	}
	for (size_t k = 0; k < pdd_hash_nwindows(h); k++) {
		uint64_t off, len;

		pdd_hash_window(h, k, &off, &len);
		for (int a = 0; a < PDD_HASH_MAX; a++) {
			if (pdd_hash_hex(h, a))
				put_comment(f, a, pdd_hash_window_hex(h, k, a), name,
					    rg->off + off, rg->off + off + len);
		}
	}
}

/* PATH.new written and on disk, in the directory open as dfd. */
static int write_new(const struct pdd_hash *h, int dfd, const char *tmp, const char *name,
		     const struct pdd_hash_range *rg)
{
	FILE *f;
	int fd, err = 0;

	/* a file of our own, not what a link left at that name points to */
	if (unlinkat(dfd, tmp, 0) && errno != ENOENT)
		return -errno;
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	errno = 0;
	write_log(h, f, name, rg);
	if (ferror(f) || fflush(f))
		err = errno ? -errno : -EIO;
	else if (fsync(fd))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int pdd_hash_log(const struct pdd_hash *h, const char *path, const char *name,
		 const struct pdd_hash_range *rg)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *dir = NULL, *tmp = NULL;
	int dfd = -1, err;
	bool done = false;

	/* a digest to log: finished, and without error */
	for (int a = 0; a < PDD_HASH_MAX; a++)
		done |= pdd_hash_hex(h, a) != NULL;
	if (!done)
		return -EINVAL;
	if (!*base)
		return -EISDIR;
	/* everything relative to the directory, opened once: the rename
	 * and the fsync that makes it durable are then surely in the
	 * directory the file was written in */
	dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
	if (dir && asprintf(&tmp, "%s.new", base) < 0)
		tmp = NULL;
	if (!dir || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		err = -errno;
		goto out;
	}
	err = write_new(h, dfd, tmp, name, rg);
	if (!err && renameat(dfd, tmp, dfd, base))
		err = -errno;
	if (err)
		unlinkat(dfd, tmp, 0);
	/* some file systems cannot sync a directory (EINVAL): the rename
	 * is done, which is all there is to have there */
	else if (fsync(dfd) && errno != EINVAL)
		err = -errno;
out:
	if (dfd >= 0)
		close(dfd);
	free(tmp);
	free(dir);
	return err;
}
