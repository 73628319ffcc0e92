// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The transfer buffers of a copy, a rescue or a verify: all in one
 * anonymous mapping, which starts on a 2 MiB boundary when it holds that
 * much, so that transparent huge pages can back it.  Separate
 * allocations of 1 MiB each (glibc maps each on its own, 4 KiB-aligned)
 * cost a page fault per 4 KiB when first filled and a page reference per
 * 4 KiB each time direct I/O pins them: 16 MiB of buffers took ~13 ms of
 * CPU before the first byte was copied, and every 1 MiB request of aio
 * or a plain pread/pwrite pins 256 pages.  Backed by huge pages the
 * mapping faults in 2 MiB at a time and pins a page per 2 MiB.
 *
 * The first touch of that memory still costs: on a virtual machine whose
 * host has taken the free memory back, 32 MiB of huge pages took 122 ms
 * to fault in the first time (274 MB/s) and 3.7 ms when used again, and
 * a first batch of aio or io_uring requests faults in every buffer it
 * reads into before the first one reaches the device (a 1 MiB copy at
 * qd=32 started reading 70-115 ms after pdd started, 6 ms at qd=8).  So
 * a copy's buffers are brought in by a helper thread, in order, while
 * its first transfers run (pdd_fill_new(), pdd_fill_go()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "pdd.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14; older C libraries lack it */
#endif

#define HUGE (2u << 20)

static size_t page_size(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	return pg > 0 ? (size_t)pg : 4096;
}

static size_t stride(size_t align, size_t len)
{
	return align > 1 ? (len + align - 1) / align * align : len;
}

/* the mapping's length for n buffers, whole pages */
static size_t span(unsigned int n, size_t align, size_t len)
{
	size_t page = page_size(), total = stride(align, len) * n;

	return (total + page - 1) / page * page;
}

/* align is a power of two (direct I/O's alignments are); so are the page
 * and HUGE, and the largest of the three is a multiple of the others */
int pdd_bufs_alloc(void **bufs, unsigned int n, size_t align, size_t len)
{
	size_t total, page = page_size(), head, tail;
	size_t extra = page;
	uint8_t *map, *base;

	if (!n || !len || (align & (align - 1)))
		return -EINVAL;
	total = span(n, align, len);
	if (total >= HUGE && extra < HUGE)
		extra = HUGE;
	if (align > extra)
		extra = align;
	map = mmap(NULL, total + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return -ENOMEM;
	/* keep the aligned part only: head and tail are whole pages */
	base = (uint8_t *)(((uintptr_t)map + extra - 1) / extra * extra);
	head = (size_t)(base - map);
	tail = extra - head;
	if (head)
		munmap(map, head);
	if (tail)
		munmap(base + total, tail);
	if (total >= HUGE)
		(void)madvise(base, total, MADV_HUGEPAGE);	/* a hint: may be off */
	for (unsigned int i = 0; i < n; i++)
		bufs[i] = base + (size_t)i * stride(align, len);
	return 0;
}

void pdd_bufs_free(void **bufs, unsigned int n, size_t align, size_t len)
{
	if (bufs && n && bufs[0])
		munmap(bufs[0], span(n, align, len));
}

struct pdd_fill {
	void *const *bufs;
	unsigned int n;
	size_t len;
	atomic_uint next;		/* the next buffer to claim */
	atomic_uint count;		/* buffers in memory */
	atomic_bool stop;
	atomic_uchar *in;		/* in[i]: buffer i is in memory */
	pthread_t thread;
	bool started;			/* thread runs */
};

/* Buffer i's pages into memory, a huge page at a time (the memory map's
 * lock is held through each call, and a stop is seen between them): false
 * when stopped first.  No one uses buffer i yet (it is not in[]); its
 * neighbours may be in use, but MADV_POPULATE_WRITE faults whole pages in
 * without writing them.  Before Linux 5.14 a zero is written into each
 * page of the buffer's own bytes instead (fresh memory reads as zeros). */
static bool fill_one(struct pdd_fill *f, unsigned int i)
{
	size_t page = page_size();
	uintptr_t b = (uintptr_t)f->bufs[i], lo = b / page * page;
	uintptr_t hi = (b + f->len + page - 1) / page * page;

	for (uintptr_t p = lo, end; p < hi; p = end) {
		end = (p / HUGE + 1) * HUGE;
		if (end > hi)
			end = hi;
		if (atomic_load(&f->stop))
			return false;
		if (madvise((void *)p, end - p, MADV_POPULATE_WRITE))
			break;
		if (end == hi)
			return true;
	}
	((volatile uint8_t *)b)[0] = 0;
	for (uintptr_t p = lo + page; p < b + f->len; p += page)
		*(volatile uint8_t *)p = 0;
	return true;
}

/* Claim the next buffer if it is at most last, and bring it in: false
 * when there is none such (all claimed up to last) or on a stop. */
static bool claim(struct pdd_fill *f, unsigned int last)
{
	unsigned int i = atomic_load(&f->next);

	do {
		if (i > last || i >= f->n)
			return false;
	} while (!atomic_compare_exchange_weak(&f->next, &i, i + 1));
	if (!fill_one(f, i))
		return false;
	atomic_store_explicit(&f->in[i], 1, memory_order_release);
	atomic_fetch_add_explicit(&f->count, 1, memory_order_release);
	return true;
}

static void *filler(void *arg)
{
	struct pdd_fill *f = arg;

	while (claim(f, f->n - 1))
		;
	return NULL;
}

/* Below a huge page the faults cost too little to hand over.  Buffers
 * the copy will not use (more than the transfers it plans) are left
 * alone. */
struct pdd_fill *pdd_fill_new(void *const *bufs, unsigned int n, size_t len, uint64_t use)
{
	struct pdd_fill *f;

	if (use < n)
		n = (unsigned int)use;
	if (n < 2 || span(n, 1, len) < HUGE)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (f)
		f->in = calloc(n, sizeof(*f->in));
	if (!f || !f->in) {	/* each is faulted in by its first request */
		if (f)
			free(f->in);
		free(f);
		return NULL;
	}
	f->bufs = bufs;
	f->n = n;
	f->len = len;
	/* the first is faulted in by its own first request at once */
	atomic_init(&f->in[0], 1);
	atomic_init(&f->count, 1);
	atomic_init(&f->next, 1);
	atomic_init(&f->stop, false);
	return f;
}

/* Started once the copy's set-up is done: the helper's faults hold the
 * memory map's lock for reading, and kept the set-up's own mmap() calls
 * (io_uring's rings, stdio) waiting 9-20 ms each. */
void pdd_fill_go(struct pdd_fill *f)
{
	sigset_t all, old;

	if (!f)
		return;
	/* the copy's signals are for the thread that runs it */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int err = pthread_create(&f->thread, NULL, filler, f);

	pthread_sigmask(SIG_SETMASK, &old, NULL);
	f->started = !err;
	if (err) {	/* each is faulted in by its first request */
		pdd_info(1, "buffers: no thread to bring them in (%s): each comes in with its first transfer",
			 strerror(err));
		for (unsigned int i = 0; i < f->n; i++)
			atomic_store(&f->in[i], 1);
		atomic_store(&f->count, f->n);
	}
}

bool pdd_fill_ready(struct pdd_fill *f, unsigned int i, bool wait)
{
	if (!f || i >= f->n || atomic_load_explicit(&f->in[i], memory_order_acquire))
		return true;
	if (!wait)
		return false;
	/* buffers are claimed in order: claim those up to i, then wait for
	 * the helper to bring in what it has claimed (a buffer's faults) */
	while (!atomic_load_explicit(&f->in[i], memory_order_acquire))
		if (!claim(f, i))
			nanosleep(&(struct timespec){ 0, 50000 }, NULL);
	return true;
}

unsigned int pdd_fill_all(struct pdd_fill *f)
{
	return f && atomic_load_explicit(&f->count, memory_order_acquire) == f->n ? f->n : 0;
}

void pdd_fill_end(struct pdd_fill *f)
{
	if (!f)
		return;
	atomic_store(&f->stop, true);
	if (f->started)
		pthread_join(f->thread, NULL);
	free(f->in);
	free(f);
}
