// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * map=FILE (see include/map.h): the map in memory, a list of extents
 * kept contiguous, ascending, and with no two neighbours of one status,
 * and what the copy asks of it: give a range a status, the status of a
 * byte, the bytes of a status, what is still to copy.  Nothing here reads
 * or writes: the ddrescue text is map-text.c's and the file on disk
 * mapfile.c's, so the bookkeeping can change without touching either.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "map.h"

void pdd_map_init(struct pdd_map *m, const char *path)
{
	memset(m, 0, sizeof(*m));
	m->path = path;
	m->cur_status = PDD_MAP_UNTRIED;
	m->pass = 1;
	m->started = time(NULL);
}

static void free_ext(struct pdd_map *m)
{
	free(m->ext);
	m->ext = NULL;
	m->n = 0;
	m->cap = 0;
}

void pdd_map_free(struct pdd_map *m)
{
	free_ext(m);
	free(m->file);
	m->file = NULL;
}

int pdd_extent_push(struct pdd_extent **ext, size_t *n, size_t *cap,
		    uint64_t pos, uint64_t size, char status)
{
	struct pdd_extent *e;

	if (!size)
		return 0;
	if (*n && (*ext)[*n - 1].status == status &&
	    (*ext)[*n - 1].pos + (*ext)[*n - 1].size == pos) {
		(*ext)[*n - 1].size += size;
		return 0;
	}
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;

		e = realloc(*ext, ncap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		*ext = e;
		*cap = ncap;
	}
	(*ext)[(*n)++] = (struct pdd_extent){ pos, size, status };
	return 0;
}

void pdd_map_reset(struct pdd_map *m)
{
	free_ext(m);
	m->cur_pos = 0;
	m->cur_status = PDD_MAP_UNTRIED;
	m->pass = 1;
}

/* --- changing and asking -------------------------------------------------- */

static uint64_t ext_end(const struct pdd_extent *e)
{
	return e->pos + e->size;
}

static int reserve(struct pdd_map *m, size_t more)
{
	struct pdd_extent *e;
	size_t cap;

	if (m->n + more <= m->cap)
		return 0;
	cap = m->cap ? m->cap : 16;
	while (cap < m->n + more)
		cap *= 2;
	e = realloc(m->ext, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	m->ext = e;
	m->cap = cap;
	return 0;
}

/* Extent i takes the place of extents i and i+1, which have one status. */
static void join_next(struct pdd_map *m, size_t i)
{
	m->ext[i].size += m->ext[i + 1].size;
	memmove(&m->ext[i + 1], &m->ext[i + 2], (m->n - i - 2) * sizeof(*m->ext));
	m->n--;
}

/*
 * The common change, done where it stands: a range inside one extent (a
 * bad block met in the untried rest, a stretch written, a bad block that
 * reads now).  The extent is split, or the range joins the neighbour of
 * its status; only the extents after it move, and a copy meets its bad
 * blocks from the front, so few do.  1 when the range is not inside one
 * extent, for the caller to rebuild the array.
 */
static int set_inside(struct pdd_map *m, uint64_t pos, uint64_t size, char status)
{
	size_t lo = 0, hi = m->n, i;
	uint64_t end = pos + size, e_end;
	bool head, tail;
	char old;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pos < m->ext[mid].pos)
			hi = mid;
		else if (pos >= ext_end(&m->ext[mid]))
			lo = mid + 1;
		else
			break;
	}
	if (lo >= hi)
		return 1;
	i = lo + (hi - lo) / 2;
	e_end = ext_end(&m->ext[i]);
	if (end > e_end)
		return 1;
	old = m->ext[i].status;
	if (old == status)
		return 0;
	head = pos > m->ext[i].pos;
	tail = end < e_end;
	if (!head && tail && i && m->ext[i - 1].status == status) {
		m->ext[i - 1].size += size;
		m->ext[i].pos = end;
		m->ext[i].size -= size;
		return 0;
	}
	if (head && !tail && i + 1 < m->n && m->ext[i + 1].status == status) {
		m->ext[i + 1].pos = pos;
		m->ext[i + 1].size += size;
		m->ext[i].size -= size;
		return 0;
	}
	if (!head && !tail) {		/* the whole extent changes */
		m->ext[i].status = status;
		if (i + 1 < m->n && m->ext[i + 1].status == status)
			join_next(m, i);
		if (i && m->ext[i - 1].status == status)
			join_next(m, i - 1);
		return 0;
	}
	if (reserve(m, 2))
		return -ENOMEM;
	if (head && tail) {		/* old | new | old */
		memmove(&m->ext[i + 3], &m->ext[i + 1], (m->n - i - 1) * sizeof(*m->ext));
		m->ext[i].size = pos - m->ext[i].pos;
		m->ext[i + 1] = (struct pdd_extent){ pos, size, status };
		m->ext[i + 2] = (struct pdd_extent){ end, e_end - end, old };
		m->n += 2;
	} else if (tail) {		/* new | old */
		memmove(&m->ext[i + 1], &m->ext[i], (m->n - i) * sizeof(*m->ext));
		m->ext[i] = (struct pdd_extent){ pos, size, status };
		m->ext[i + 1] = (struct pdd_extent){ end, e_end - end, old };
		m->n++;
	} else {			/* old | new */
		memmove(&m->ext[i + 2], &m->ext[i + 1], (m->n - i - 1) * sizeof(*m->ext));
		m->ext[i].size = pos - m->ext[i].pos;
		m->ext[i + 1] = (struct pdd_extent){ pos, size, status };
		m->n++;
	}
	return 0;
}

/* Any other change rebuilds the array in order: what lies before the
 * range, a '?' gap up to it, the range, a '?' gap after it, what lies
 * after.  Only one of the two gaps can exist, and only when the range is
 * outside what is covered. */
int pdd_map_set(struct pdd_map *m, uint64_t pos, uint64_t size, char status)
{
	struct pdd_extent *ext;
	size_t n = 0, cap, i;
	uint64_t end;
	int ret = 0;

	if (!size)
		return 0;
	/* a map cannot describe bytes past 2^64; keep the end representable */
	if (size > UINT64_MAX - pos)
		size = UINT64_MAX - pos;
	ret = set_inside(m, pos, size, status);
	if (ret <= 0)
		return ret;
	ret = 0;
	end = pos + size;
	cap = m->n + 4;
	ext = malloc(cap * sizeof(*ext));
	if (!ext)
		return -ENOMEM;
	for (i = 0; i < m->n && m->ext[i].pos < pos; i++) {
		uint64_t e = ext_end(&m->ext[i]) < pos ? ext_end(&m->ext[i]) : pos;

		ret |= pdd_extent_push(&ext, &n, &cap, m->ext[i].pos,
				       e - m->ext[i].pos, m->ext[i].status);
	}
	if (m->n && ext_end(&m->ext[m->n - 1]) < pos)
		ret |= pdd_extent_push(&ext, &n, &cap,
				       ext_end(&m->ext[m->n - 1]),
				       pos - ext_end(&m->ext[m->n - 1]),
				       PDD_MAP_UNTRIED);
	ret |= pdd_extent_push(&ext, &n, &cap, pos, size, status);
	if (m->n && m->ext[0].pos > end)
		ret |= pdd_extent_push(&ext, &n, &cap, end, m->ext[0].pos - end,
				       PDD_MAP_UNTRIED);
	for (i = 0; i < m->n; i++) {
		uint64_t b;

		if (ext_end(&m->ext[i]) <= end)
			continue;
		b = m->ext[i].pos > end ? m->ext[i].pos : end;
		ret |= pdd_extent_push(&ext, &n, &cap, b,
				       ext_end(&m->ext[i]) - b,
				       m->ext[i].status);
	}
	/* cap covers the worst case (n + 3), so a push never grows the array;
	 * checked all the same */
	if (ret) {
		free(ext);
		return -ENOMEM;
	}
	free(m->ext);
	m->ext = ext;
	m->n = n;
	m->cap = cap;
	return 0;
}

void pdd_map_truncate(struct pdd_map *m, uint64_t end)
{
	while (m->n && m->ext[m->n - 1].pos >= end)
		m->n--;
	if (m->n && ext_end(&m->ext[m->n - 1]) > end)
		m->ext[m->n - 1].size = end - m->ext[m->n - 1].pos;
}

char pdd_map_status(const struct pdd_map *m, uint64_t pos)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct pdd_extent *e = &m->ext[mid];

		if (pos < e->pos)
			hi = mid;
		else if (pos >= ext_end(e))
			lo = mid + 1;
		else
			return e->status;
	}
	return PDD_MAP_UNTRIED;
}

uint64_t pdd_map_bytes(const struct pdd_map *m, uint64_t start, uint64_t end,
		       char status)
{
	uint64_t sum = 0, covered = 0;
	size_t i;

	if (start >= end)
		return 0;
	for (i = 0; i < m->n; i++) {
		uint64_t a = m->ext[i].pos > start ? m->ext[i].pos : start;
		uint64_t b = ext_end(&m->ext[i]) < end ? ext_end(&m->ext[i]) : end;

		if (a >= b)
			continue;
		covered += b - a;
		if (m->ext[i].status == status)
			sum += b - a;
	}
	if (status == PDD_MAP_UNTRIED)
		sum += end - start - covered;
	return sum;
}

/* Add [p, q) widened to the grain to the list, joining it to the last
 * entry when they touch or overlap. */
static int todo_add(struct pdd_extent **out, size_t *n, size_t *cap,
		    uint64_t start, uint64_t end, uint64_t grain,
		    uint64_t p, uint64_t q)
{
	uint64_t lo = start + (p - start) / grain * grain;
	uint64_t r = (q - start) % grain;
	uint64_t extra = r ? grain - r : 0;
	uint64_t hi = extra >= end - q ? end : q + extra;
	struct pdd_extent *last = *n ? &(*out)[*n - 1] : NULL;

	if (last && lo <= ext_end(last)) {
		if (hi > ext_end(last))
			last->size = hi - last->pos;
		return 0;
	}
	/* never merged by status: pdd_extent_push() only joins what touches,
	 * and that was handled above */
	return pdd_extent_push(out, n, cap, lo, hi - lo, PDD_MAP_UNTRIED);
}

int pdd_map_todo(const struct pdd_map *m, uint64_t start, uint64_t end,
		 uint64_t grain, struct pdd_extent **out, size_t *n)
{
	struct pdd_extent *list = NULL;
	size_t cnt = 0, cap = 0, i;
	uint64_t c = start;	/* everything below c is handled */
	int ret = 0;

	if (!grain)
		grain = 1;
	for (i = 0; i < m->n && c < end && !ret; i++) {
		const struct pdd_extent *e = &m->ext[i];
		uint64_t b = ext_end(e) < end ? ext_end(e) : end;

		if (b <= c)
			continue;
		if (e->pos > c) {
			/* uncovered: never tried */
			uint64_t gap = e->pos < end ? e->pos : end;

			ret = todo_add(&list, &cnt, &cap, start, end, grain,
				       c, gap);
			c = gap;
			if (c >= end || ret)
				break;
		}
		if (e->status != PDD_MAP_DONE)
			ret = todo_add(&list, &cnt, &cap, start, end, grain,
				       c, b);
		c = b;
	}
	if (!ret && c < end)
		ret = todo_add(&list, &cnt, &cap, start, end, grain, c, end);
	if (ret) {
		free(list);
		*out = NULL;
		*n = 0;
		return ret;
	}
	if (!cnt) {
		free(list);
		list = NULL;
	}
	*out = list;
	*n = cnt;
	return 0;
}
