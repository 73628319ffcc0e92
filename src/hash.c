// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Digests of the copy's output stream, taken beside the copy so that an
 * image needs no second read to be proven later (hash=, hashwindow=,
 * hashlog=).
 *
 * The copy loop must never wait for a digest: pdd_hash_feed() only puts
 * (buf, len) in a ring under a mutex held for a few instructions, and says
 * -EAGAIN when the ring is full; the loop then polls pdd_hash_fd() with
 * its other descriptors, so a hash slower than the copy slows the copy to
 * it without the loop ever sleeping inside this module.  Each algorithm
 * has a thread of its own that takes the entries in order: two algorithms
 * hash the same bytes in parallel and the slower alone sets the pace.  An
 * entry is consumed when every thread is past it (the minimum of their
 * positions); only then may the caller reuse its buffer.  The eventfd
 * that says so is written once between two acks, and only once the count
 * reaches what the loop said it waits for (pdd_hash_want()): a loop that
 * has a quarter of its window to read again is woken once for all of it,
 * not for each entry, and not at all while it has I/O to wait on instead.
 *
 * Built without libcrypto the ring is still here but pdd_hash_start()
 * says -ENOTSUP, and the names still parse, so that hash= can be refused
 * with a message that says why.
 */
#define _GNU_SOURCE		/* strchrnul */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "hash.h"

#ifdef HAVE_LIBCRYPTO
#include <openssl/evp.h>
#endif
#include "libs.h"

#define ALGS_ALL ((1u << PDD_HASH_MAX) - 1)

static const struct {
	const char *name;	/* ours, and openssl's command line's */
	const char *evp;	/* EVP_MD_fetch()'s */
	unsigned int size;	/* digest bytes */
} algs_info[PDD_HASH_MAX] = {
	[PDD_HASH_MD5] = { "md5", "MD5", 16 },
	[PDD_HASH_SHA1] = { "sha1", "SHA1", 20 },
	[PDD_HASH_SHA256] = { "sha256", "SHA256", 32 },
	[PDD_HASH_SHA512] = { "sha512", "SHA512", 64 },
	[PDD_HASH_SHA3_256] = { "sha3-256", "SHA3-256", 32 },
	[PDD_HASH_BLAKE2B512] = { "blake2b512", "BLAKE2B-512", 64 },
};

/* holes are hashed from here, a piece at a time, never materialised */
static const unsigned char zero_page[1 << 16];
/* with windows, each piece is given to the whole digest and to the
 * window's: pieces this small are still in L2 the second time */
#define WINDOW_PIECE (1u << 16)

struct entry {
	const void *buf;	/* NULL: len zeros */
	size_t len;
};

struct worker {
	struct pdd_hash *h;
	enum pdd_hash_alg alg;
	pthread_t tid;
	bool running;		/* tid to be joined */
	uint64_t pos;		/* entries done (under h->lock) */
	uint64_t bytes;		/* bytes done (under h->lock) */
	int err;		/* the thread's own until joined */
	void *md, *ctx, *wctx;	/* EVP_MD, the digest's and the window's EVP_MD_CTX */
	uint64_t wfill;		/* bytes in the current window */
	char *whex;		/* window digests, hexlen + 1 apart */
	size_t nw, wcap;
	size_t hexlen;
	char hex[PDD_HASH_HEX_MAX + 1];
};

struct pdd_hash {
	pthread_mutex_t lock;
	pthread_cond_t work;	/* entries fed, or the end */
	struct entry *ring;
	unsigned int queue;
	uint64_t head;		/* entries fed (under lock) */
	uint64_t fed_bytes;	/* (under lock) */
	_Atomic uint64_t consumed, bytes;	/* the minimum over workers */
	_Atomic uint64_t want;	/* ring once consumed reaches this */
	atomic_bool rung;	/* efd written since the last ack */
	bool finishing;		/* drain what is fed, then end */
	bool stop;		/* end now (pdd_hash_free) */
	bool finished;
	int result;
	int efd;
	uint64_t window;
	unsigned int algs, nworkers;
	struct worker w[PDD_HASH_MAX];
};

const char *pdd_hash_name(enum pdd_hash_alg a)
{
	return (unsigned int)a < PDD_HASH_MAX ? algs_info[a].name : NULL;
}

/* libcrypto is loaded here, the first time (libs.c) */
bool pdd_hash_available(void)
{
	return !pdd_lib_load(PDD_LIB_CRYPTO);
}

int pdd_hash_parse(const char *list, unsigned int *algs, const char **bad, size_t *badlen)
{
	unsigned int set = 0;
	const char *p = list;

	for (;;) {
		const char *end = strchrnul(p, ',');
		size_t n = (size_t)(end - p);
		int a;

		for (a = 0; a < PDD_HASH_MAX; a++)
			if (n && strlen(algs_info[a].name) == n &&
			    !strncasecmp(p, algs_info[a].name, n))
				break;
		if (a == PDD_HASH_MAX || (set & (1u << a))) {
			*bad = p;
			*badlen = n;
			return -EINVAL;
		}
		set |= 1u << a;
		if (!*end)
			break;
		p = end + 1;
	}
	*algs = set;
	return 0;
}

/* --- the digests: libcrypto, or nothing -------------------------------- */

#ifdef HAVE_LIBCRYPTO
static void md_close(struct worker *w)
{
	EVP_MD_CTX_free(w->ctx);
	EVP_MD_CTX_free(w->wctx);
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
	EVP_MD_free(w->md);
#endif
	w->ctx = w->wctx = w->md = NULL;
}

/* The algorithm and its contexts, started.  Done before any thread runs,
 * so that an algorithm libcrypto lacks (a FIPS build without MD5, an old
 * one without BLAKE2b) is -ENOTSUP at once. */
static int md_open(struct worker *w, bool window)
{
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
	/* fetched once: an EVP_get_digestbyname() digest is fetched again
	 * by every EVP_DigestInit_ex(), and windows init once each */
	w->md = EVP_MD_fetch(NULL, algs_info[w->alg].evp, NULL);
#else
	w->md = (void *)EVP_get_digestbyname(algs_info[w->alg].evp);
#endif
	if (!w->md || EVP_MD_size(w->md) != (int)algs_info[w->alg].size)
		return -ENOTSUP;
	w->ctx = EVP_MD_CTX_new();
	w->wctx = window ? EVP_MD_CTX_new() : NULL;
	if (!w->ctx || (window && !w->wctx))
		return -ENOMEM;
	if (!EVP_DigestInit_ex(w->ctx, w->md, NULL) ||
	    (window && !EVP_DigestInit_ex(w->wctx, w->md, NULL)))
		return -EIO;
	return 0;
}

static int md_update(void *ctx, const void *p, size_t n)
{
	return EVP_DigestUpdate(ctx, p, n) == 1 ? 0 : -EIO;
}

/* ctx's digest in hex into hex (hexlen + 1 bytes), and ctx started again
 * when again (the next window) */
static int md_final(struct worker *w, void *ctx, char *hex, bool again)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (!EVP_DigestFinal_ex(ctx, d, &n) || 2 * n != w->hexlen)
		return -EIO;
	for (unsigned int i = 0; i < n; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[2 * n] = '\0';
	if (again && !EVP_DigestInit_ex(ctx, w->md, NULL))
		return -EIO;
	return 0;
}
#else
static void md_close(struct worker *w)
{
	(void)w;
}

static int md_open(struct worker *w, bool window)
{
	(void)w;
	(void)window;
	return -ENOTSUP;
}

/* never reached: nothing starts without md_open() */
static int md_update(void *ctx, const void *p, size_t n)
{
	(void)ctx;
	(void)p;
	(void)n;
	return -ENOTSUP;
}

static int md_final(struct worker *w, void *ctx, char *hex, bool again)
{
	(void)w;
	(void)ctx;
	(void)hex;
	(void)again;
	return -ENOTSUP;
}
#endif

/* --- one algorithm's thread ------------------------------------------- */

/* The current window is full (or the stream's last): keep its digest. */
static int close_window(struct worker *w)
{
	if (w->nw == w->wcap) {
		size_t cap = w->wcap ? 2 * w->wcap : 64;
		char *p = realloc(w->whex, cap * (w->hexlen + 1));

		if (!p)
			return -ENOMEM;
		w->whex = p;
		w->wcap = cap;
	}
	w->wfill = 0;
	return md_final(w, w->wctx, w->whex + w->nw++ * (w->hexlen + 1), true);
}

/* One entry into the digest and, cut at their boundaries, the windows. */
static int hash_entry(struct worker *w, const unsigned char *buf, size_t len)
{
	uint64_t window = w->h->window;
	int err;

	while (len) {
		size_t n = len;

		if (!buf && n > sizeof(zero_page))
			n = sizeof(zero_page);
		if (window) {
			if (n > WINDOW_PIECE)
				n = WINDOW_PIECE;
			if (n > window - w->wfill)
				n = (size_t)(window - w->wfill);
		}
		err = md_update(w->ctx, buf ? buf : zero_page, n);
		if (!err && window) {
			err = md_update(w->wctx, buf ? buf : zero_page, n);
			w->wfill += n;
			if (!err && w->wfill == window)
				err = close_window(w);
		}
		if (err)
			return err;
		if (buf)
			buf += n;
		len -= n;
	}
	return 0;
}

/* Write the eventfd if consumed has reached want, once between acks: one
 * write is enough, and saves the workers a system call per entry.  The
 * worker stores consumed and then reads want, pdd_hash_want() stores want
 * and then reads consumed (both sequentially consistent): one of the two
 * sees the other's store, so a count reached is never left unrung.  A
 * write of 1 fails only when the counter would overflow, and then the
 * descriptor is readable anyway. */
static void ring(struct pdd_hash *h)
{
	uint64_t one = 1;

	if (atomic_load(&h->consumed) >= atomic_load(&h->want) && !atomic_exchange(&h->rung, true) &&
	    write(h->efd, &one, sizeof(one)) < 0)
		(void)0;
}

/* After a worker's step: what every worker has done, published, and the
 * eventfd rung when entries were freed.  Under h->lock. */
static void advance(struct pdd_hash *h)
{
	uint64_t pos = UINT64_MAX, bytes = UINT64_MAX;

	for (unsigned int i = 0; i < h->nworkers; i++) {
		if (h->w[i].pos < pos)
			pos = h->w[i].pos;
		if (h->w[i].bytes < bytes)
			bytes = h->w[i].bytes;
	}
	atomic_store_explicit(&h->bytes, bytes, memory_order_release);
	if (pos > atomic_load_explicit(&h->consumed, memory_order_relaxed)) {
		atomic_store(&h->consumed, pos);
		ring(h);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pdd_hash *h = w->h;
	struct entry e;
	bool stopped;
	int err;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (w->pos == h->head && !h->finishing && !h->stop)
			pthread_cond_wait(&h->work, &h->lock);
		if (h->stop || w->pos == h->head)
			break;
		e = h->ring[w->pos % h->queue];
		pthread_mutex_unlock(&h->lock);
		/* after an error the entries are still taken, unhashed, so
		 * that the copy is not held up by a digest it will not get */
		if (!w->err)
			w->err = hash_entry(w, e.buf, e.len);
		pthread_mutex_lock(&h->lock);
		w->pos++;
		w->bytes += e.len;
		advance(h);
	}
	stopped = h->stop;
	pthread_mutex_unlock(&h->lock);
	if (w->err || stopped)
		return NULL;
	/* the digests are finished here, in parallel */
	err = md_final(w, w->ctx, w->hex, false);
	if (!err && w->wfill)
		err = close_window(w);	/* the last, partial window */
	w->err = err;
	return NULL;
}

/* --- the interface ---------------------------------------------------- */

/* Stop the threads: at once (stop) or after what was fed (finishing). */
static void join_all(struct pdd_hash *h, bool stop)
{
	pthread_mutex_lock(&h->lock);
	if (stop)
		h->stop = true;
	h->finishing = true;
	pthread_cond_broadcast(&h->work);
	pthread_mutex_unlock(&h->lock);
	for (unsigned int i = 0; i < h->nworkers; i++)
		if (h->w[i].running) {
			pthread_join(h->w[i].tid, NULL);
			h->w[i].running = false;
		}
}

int pdd_hash_start(struct pdd_hash **hp, unsigned int algs, uint64_t window, unsigned int queue)
{
	struct pdd_hash *h;
	sigset_t all, old;
	int err = 0;

	*hp = NULL;
	if (!pdd_hash_available())
		return -ENOTSUP;
	if (!algs || (algs & ~ALGS_ALL) || !queue)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->ring = calloc(queue, sizeof(*h->ring));
	h->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->work, NULL);
	h->queue = queue;
	h->window = window;
	h->algs = algs;
	if (!h->ring || h->efd < 0) {
		err = h->ring ? -errno : -ENOMEM;
		goto fail;
	}
	for (int a = 0; a < PDD_HASH_MAX; a++) {
		struct worker *w = &h->w[h->nworkers];

		if (!(algs & (1u << a)))
			continue;
		w->h = h;
		w->alg = (enum pdd_hash_alg)a;
		w->hexlen = 2 * algs_info[a].size;
		h->nworkers++;
		err = md_open(w, window != 0);
		if (err)
			goto fail;
	}
	/* the copy's signals are for its own thread: these never see one */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (unsigned int i = 0; i < h->nworkers && !err; i++) {
		err = -pthread_create(&h->w[i].tid, NULL, worker_main, &h->w[i]);
		h->w[i].running = !err;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto fail;
	*hp = h;
	return 0;
fail:
	pdd_hash_free(h);
	return err;
}

int pdd_hash_feed(struct pdd_hash *h, const void *buf, size_t len)
{
	int ret = 0;

	pthread_mutex_lock(&h->lock);
	if (h->finishing)
		ret = -EINVAL;
	else if (h->head - atomic_load_explicit(&h->consumed, memory_order_relaxed) >= h->queue)
		ret = -EAGAIN;
	else {
		h->ring[h->head % h->queue] = (struct entry){ buf, len };
		h->head++;
		h->fed_bytes += len;
		pthread_cond_broadcast(&h->work);
	}
	pthread_mutex_unlock(&h->lock);
	return ret;
}

uint64_t pdd_hash_consumed(struct pdd_hash *h)
{
	return atomic_load_explicit(&h->consumed, memory_order_acquire);
}

uint64_t pdd_hash_fed(struct pdd_hash *h)
{
	uint64_t n;

	pthread_mutex_lock(&h->lock);
	n = h->head;
	pthread_mutex_unlock(&h->lock);
	return n;
}

uint64_t pdd_hash_bytes(struct pdd_hash *h)
{
	return atomic_load_explicit(&h->bytes, memory_order_acquire);
}

enum pdd_hash_alg pdd_hash_slowest(struct pdd_hash *h)
{
	unsigned int slow = 0;

	pthread_mutex_lock(&h->lock);
	for (unsigned int i = 1; i < h->nworkers; i++)
		if (h->w[i].bytes < h->w[slow].bytes)
			slow = i;
	pthread_mutex_unlock(&h->lock);
	return h->w[slow].alg;
}

int pdd_hash_fd(struct pdd_hash *h)
{
	return h->efd;
}

void pdd_hash_want(struct pdd_hash *h, uint64_t consumed)
{
	atomic_store(&h->want, consumed);
	ring(h);
}

void pdd_hash_ack(struct pdd_hash *h)
{
	uint64_t n;

	/* The count read first, the flag cleared after: a worker that
	 * rings between the two rings again at its next step, and its
	 * growth is in what the caller's pdd_hash_consumed() sees after
	 * this.  Cleared first, a ring in between would be read away and
	 * leave the flag set over an empty count: the next growth would
	 * ring nobody.  EAGAIN: nothing since the last ack, no error. */
	if (read(h->efd, &n, sizeof(n)) < 0)
		(void)0;
	atomic_store(&h->rung, false);
}

int pdd_hash_finish(struct pdd_hash *h)
{
	uint64_t nw;

	if (h->finished)
		return h->result;
	join_all(h, false);
	h->finished = true;
	nw = h->window ? (h->fed_bytes + h->window - 1) / h->window : 0;
	for (unsigned int i = 0; i < h->nworkers; i++) {
		if (!h->result && h->w[i].err)
			h->result = h->w[i].err;
		/* each thread cut the windows itself: they must agree */
		if (!h->result && h->w[i].nw != nw)
			h->result = -EIO;
	}
	return h->result;
}

static const struct worker *done_worker(const struct pdd_hash *h, enum pdd_hash_alg a)
{
	if (!h->finished || h->result)
		return NULL;
	for (unsigned int i = 0; i < h->nworkers; i++)
		if (h->w[i].alg == a)
			return &h->w[i];
	return NULL;
}

const char *pdd_hash_hex(const struct pdd_hash *h, enum pdd_hash_alg a)
{
	const struct worker *w = done_worker(h, a);

	return w ? w->hex : NULL;
}

size_t pdd_hash_nwindows(const struct pdd_hash *h)
{
	return h->finished && !h->result && h->nworkers ? h->w[0].nw : 0;
}

void pdd_hash_window(const struct pdd_hash *h, size_t i, uint64_t *off, uint64_t *len)
{
	*off = i * h->window;
	*len = *off < h->fed_bytes ? h->fed_bytes - *off : 0;
	if (*len > h->window)
		*len = h->window;
}

const char *pdd_hash_window_hex(const struct pdd_hash *h, size_t i, enum pdd_hash_alg a)
{
	const struct worker *w = done_worker(h, a);

	return w && i < w->nw ? w->whex + i * (w->hexlen + 1) : NULL;
}

void pdd_hash_free(struct pdd_hash *h)
{
	if (!h)
		return;
	join_all(h, true);
	for (unsigned int i = 0; i < h->nworkers; i++) {
		md_close(&h->w[i]);
		free(h->w[i].whex);
	}
	pthread_cond_destroy(&h->work);
	pthread_mutex_destroy(&h->lock);
	if (h->efd >= 0)
		close(h->efd);
	free(h->ring);
	free(h);
}
