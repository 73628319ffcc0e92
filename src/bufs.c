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
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pdd.h"

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
