/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Digests of the copied stream, taken beside the copy (src/hash.c): one
 * thread per algorithm, each fed the same ordered entries through a ring
 * that the copy loop appends to without ever waiting; and the hashlog
 * that holds them (src/hash-log.c).
 */
#ifndef PDD_HASH_H
#define PDD_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PDD_HASH_MAX 6			/* algorithms at once */
/* the longest digest in hex (SHA-512, BLAKE2b-512), without its NUL */
#define PDD_HASH_HEX_MAX 128

enum pdd_hash_alg { PDD_HASH_MD5, PDD_HASH_SHA1, PDD_HASH_SHA256, PDD_HASH_SHA512,
		    PDD_HASH_SHA3_256, PDD_HASH_BLAKE2B512 };

/* "md5", "sha1", "sha256", "sha512", "sha3-256", "blake2b512" (as openssl
 * names them); the name printed in a hashlog is the same.  NULL for a
 * value outside the enum. */
const char *pdd_hash_name(enum pdd_hash_alg a);
/* Parse a comma list ("sha256,md5"; names as above, in any case) into
 * *algs (a bit per enum value): 0, or -EINVAL with *bad and *badlen giving
 * the offending item (the caller prints the message); duplicates are
 * -EINVAL too; an empty item is -EINVAL (*badlen 0). */
int pdd_hash_parse(const char *list, unsigned int *algs, const char **bad, size_t *badlen);
bool pdd_hash_available(void);		/* built with libcrypto */

struct pdd_hash;			/* opaque */
/* Start hashing: one thread per algorithm in algs, each with its own
 * EVP_MD_CTX, fed the same ordered stream.  window: hashwindow= in bytes
 * (0: none): a digest of each window of the stream (offset 0..window,
 * window..2*window, ... and the last partial one) is kept as well.
 * queue: the most entries fed and not yet consumed by every thread.
 * 0 or -errno: -ENOTSUP built without libcrypto or when libcrypto lacks
 * an algorithm, -EINVAL for no algorithm or queue 0. */
int pdd_hash_start(struct pdd_hash **h, unsigned int algs, uint64_t window, unsigned int queue);
/* Feed the next len bytes of the stream: buf, or len zeros when buf is
 * NULL (a hole, never materialised: hashed from a static zero page).
 * Never blocks: -EAGAIN when the queue is full, -EINVAL after finish.
 * The caller keeps buf unchanged until pdd_hash_consumed() counts this
 * entry. */
int pdd_hash_feed(struct pdd_hash *h, const void *buf, size_t len);
/* Entries every thread has finished with (a count from 0, in feed order). */
uint64_t pdd_hash_consumed(struct pdd_hash *h);
/* Entries fed so far (consumed == fed: the threads are idle). */
uint64_t pdd_hash_fed(struct pdd_hash *h);
/* Bytes every thread has hashed. */
uint64_t pdd_hash_bytes(struct pdd_hash *h);
/* The algorithm that has hashed the fewest bytes: the one that limits the
 * speed when the queue fills (the lowest such value on a tie). */
enum pdd_hash_alg pdd_hash_slowest(struct pdd_hash *h);
/* A descriptor readable whenever pdd_hash_consumed() may have grown since
 * the last pdd_hash_ack() (an eventfd) and has reached the count last
 * given to pdd_hash_want() (0 until then: any growth); the copy loop
 * polls it, and reads pdd_hash_consumed() after the ack, not before:
 * growth that the ack raced with is in that value or rings again.
 * pdd_hash_want() after the ack rings at once when the count is already
 * there, so that a poll after it never waits for what has happened. */
int pdd_hash_fd(struct pdd_hash *h);
void pdd_hash_ack(struct pdd_hash *h);
void pdd_hash_want(struct pdd_hash *h, uint64_t consumed);
/* Wait for everything fed, stop the threads and finish: 0, or -errno
 * (the first error of any thread; a second call returns the same). */
int pdd_hash_finish(struct pdd_hash *h);
/* the digest of algorithm a (lowercase hex, NUL-terminated) after a
 * finish that returned 0, or NULL when a is not in algs */
const char *pdd_hash_hex(const struct pdd_hash *h, enum pdd_hash_alg a);
/* windows after finish: how many, and window i's offset, length and hex
 * digest for a (NULL when a is not in algs or i is out of range) */
size_t pdd_hash_nwindows(const struct pdd_hash *h);
void pdd_hash_window(const struct pdd_hash *h, size_t i, uint64_t *off, uint64_t *len);
const char *pdd_hash_window_hex(const struct pdd_hash *h, size_t i, enum pdd_hash_alg a);
/* Where the hashed bytes lie in the output named in a hashlog: from off,
 * len of them, which are all of it (whole) or not. */
struct pdd_hash_range {
	uint64_t off, len;
	bool whole;
};
/* Write a hashlog after finish, replacing PATH through PATH.new, fsync and
 * rename (the format is described in src/hash-log.c).  NAME
 * is the output's name as given.  0 or -errno. */
int pdd_hash_log(const struct pdd_hash *h, const char *path, const char *name,
		 const struct pdd_hash_range *rg);
/* Free everything (threads stopped if still running, without waiting for
 * what is queued).  NULL is allowed. */
void pdd_hash_free(struct pdd_hash *h);

#endif
