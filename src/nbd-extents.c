// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An NBD input's zero extents, so that sparse= does not read them: the
 * server's answers to BLOCK_STATUS in the "base:allocation" context,
 * asked on the first connection (which nbd-side.c opens with that
 * context requested).  Only NBD_STATE_ZERO counts: a run marked
 * NBD_STATE_HOLE alone is unallocated but need not read as zeros.
 *
 * One query asks about as much of the export as a server takes (its
 * maximum block size, or what a 32-bit length holds); the answer, which
 * may cover less, is kept, and the next query is made only when a read
 * starts outside it.  The query is sent with libnbd's asynchronous call
 * and waited for here, on that connection alone: the engine's reads on
 * it move on meanwhile, and their completion callbacks only queue them
 * for the engine's next reap (engines/nbd.c), so nothing of the copy is
 * disturbed.  The wait ends at timeout= and at a stop signal, as the
 * engine's do.  A server that refuses, fails or says nothing useful is
 * not asked again: everything is read from then on, and the copy never
 * fails for it.
 */
#include <errno.h>
#include <inttypes.h>
#include <libnbd.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "nbd-side.h"
#include "pdd.h"

/* After the connection is made: is base:allocation there to ask, and
 * how much may one query cover? */
void pdd_nbd_extents_setup(struct pdd_dev *d)
{
	struct pdd_nbd *c = d->nbd;
	struct nbd_handle *h = c->h[0];
	int64_t max = nbd_get_block_size(h, LIBNBD_SIZE_MAXIMUM);
	uint64_t align = d->io_align > 1 ? d->io_align : 1;

	c->size = d->size;
	c->extents = nbd_can_meta_context(h, LIBNBD_CONTEXT_BASE_ALLOCATION) == 1;
	/* a length is 32 bits on the wire; the server's maximum where it
	 * gives one, lest a strict server refuse a longer request; whole
	 * blocks of its minimum, which every request must be */
	c->ext_max = max > 0 && (uint64_t)max < UINT32_MAX ? (uint64_t)max : UINT32_MAX;
	c->ext_max -= c->ext_max % align;
	if (!c->ext_max)
		c->extents = false;
}

bool pdd_nbd_can_zero(const struct pdd_dev *d)
{
	const struct pdd_nbd *c = d->nbd;

	return nbd_can_zero(c->h[0]) == 1;
}

/* One more run at the end of what is known, merged with the last when
 * it reads the same way. */
static int add_run(struct pdd_nbd *c, uint64_t end, bool zero)
{
	struct pdd_nbd_run *r = c->runs;

	if (c->nruns && r[c->nruns - 1].zero == zero) {
		r[c->nruns - 1].end = end;
		return 0;
	}
	if (c->nruns == c->runcap) {
		size_t cap = c->runcap ? 2 * c->runcap : 64;

		r = realloc(c->runs, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		c->runs = r;
		c->runcap = cap;
	}
	r[c->nruns++] = (struct pdd_nbd_run){ end, zero };
	return 0;
}

/* libnbd's extent callback: the answer's (length, flags) pairs from
 * offset, the query's.  Only the first answer in base:allocation is
 * taken (a server sends one per context); what lies past the export's
 * end is not. */
static int got_extents(void *data, const char *context, uint64_t offset,
		       uint32_t *entries, size_t n, int *error)
{
	struct pdd_nbd *c = data;
	uint64_t pos = offset;

	if (*error || !c->extents || c->nruns || strcmp(context, LIBNBD_CONTEXT_BASE_ALLOCATION))
		return 0;
	for (size_t i = 0; i + 1 < n && pos < c->size; i += 2) {
		uint64_t end = pos + entries[i];

		if (end > c->size)
			end = c->size;
		if (end > pos && add_run(c, end, entries[i + 1] & LIBNBD_STATE_ZERO)) {
			c->nruns = 0;	/* no memory: as if it said nothing */
			break;
		}
		pos = end;
	}
	return 0;
}

/* Ask about the export from off on, and wait for the answer: 0 when it
 * says something about off, else -errno. */
static int ask(struct pdd_dev *d, uint64_t off)
{
	struct pdd_nbd *c = d->nbd;
	struct nbd_handle *h = c->h[0];
	nbd_extent_callback cb = { .callback = got_extents, .user_data = c };
	uint64_t len = c->size - off < c->ext_max ? c->size - off : c->ext_max;
	double t0 = pdd_now();
	int64_t cookie;

	c->nruns = c->at = 0;
	c->ext_off = off;
	cookie = nbd_aio_block_status(h, len, off, cb, NBD_NULL_COMPLETION, 0);
	if (cookie == -1)
		return pdd_nbd_errno();
	for (;;) {
		struct pollfd pfd;
		int r = nbd_aio_command_completed(h, cookie);

		if (r == -1)
			return pdd_nbd_errno();
		if (r == 1)
			break;
		if (pdd_stop_signal)
			return -EINTR;
		if (d->timeout_ms && (pdd_now() - t0) * 1000 > d->timeout_ms)
			return -ETIMEDOUT;
		pdd_nbd_want(h, &pfd);
		r = poll(&pfd, 1, 100);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0 && pdd_nbd_notify(h, pfd.revents) == -1)
			return pdd_nbd_errno();
	}
	return c->nruns ? 0 : -EIO;	/* an answer that says nothing */
}

/* The run the known answer holds off in: its index, or -1 when off is
 * outside it.  Reads come in ascending order: from the last one. */
static ssize_t find_run(struct pdd_nbd *c, uint64_t off)
{
	size_t i = c->at;

	if (!c->nruns || off < c->ext_off || off >= c->runs[c->nruns - 1].end)
		return -1;
	if (i >= c->nruns || (i && off < c->runs[i - 1].end))
		i = 0;
	while (c->runs[i].end <= off)
		i++;
	c->at = i;
	return (ssize_t)i;
}

/*
 * The run of data or zeros (*zero) the export holds at off: how many
 * bytes of it from off, up to max and the export's end, in *len (0 past
 * the end).  0, or -errno when the server cannot say (it has no
 * base:allocation, or it failed: it is not asked again).  A zero run
 * that reaches the end of what is known is asked about again from off,
 * once, to see how far it goes.
 */
int pdd_nbd_extent(struct pdd_dev *d, uint64_t off, uint64_t max, uint64_t *len, bool *zero)
{
	struct pdd_nbd *c = d->nbd;
	bool asked = false;

	*len = 0;
	*zero = false;
	if (!c->extents || c->failed)
		return -ENOTSUP;
	if (off >= c->size)
		return 0;
	if (max > c->size - off)
		max = c->size - off;
	for (;;) {
		ssize_t i = find_run(c, off);
		int err;

		if (i >= 0) {
			const struct pdd_nbd_run *r = &c->runs[i];

			if (!r->zero || r->end - off >= max || (size_t)i + 1 < c->nruns ||
			    asked || c->ext_off == off) {
				*zero = r->zero;
				*len = r->end - off < max ? r->end - off : max;
				return 0;
			}
		}
		err = ask(d, off);
		asked = true;
		if (err) {
			c->extents = false;
			c->nruns = 0;
			if (err != -EINTR)
				pdd_info(1, "'%s': no zero extents from the server (%s): the rest is read",
					 d->name, strerror(-err));
			return err;
		}
	}
}
