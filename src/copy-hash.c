// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hash=: the copy's digests, taken while it copies.  Each transfer is fed
 * to the hash (src/hash.c, a thread per algorithm) when its write is
 * issued, which is in ascending order, so the digests cover the range as
 * it is written, zero-filled blocks (coe=1) and holes (fed as zeros,
 * never read) included.  A slot's buffer is read by the hash threads
 * until they are done with it: no read reuses the slot before then, so
 * a hash slower than the copy slows the copy to it, and nothing waits
 * for the hash otherwise.  A copy that resumed from a map wrote only
 * part of the range: its digests come from reading the output after the
 * copy.  Part of the copy core (copy.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "hash.h"

int core_hash_setup(struct core *c)
{
	int err;

	if (!c->o->hash_algs)
		return 0;
	err = pdd_hash_start(&c->r->hash, c->o->hash_algs, c->o->hashwindow,
			     pdd_seq_win(&c->seq) + 1);
	if (err)
		pdd_error("cannot start hashing: %s", strerror(-err));
	return err;
}

/* Transfer idx's write is about to be issued: feed its bytes.  False
 * when the hash cannot take them yet (then the write waits). */
bool core_hash_feed(struct core *c, uint64_t idx)
{
	const struct slot *s = slot_of(c, idx);

	if (!c->r->hash)
		return true;
	return pdd_hash_feed(c->r->hash, s->zeros ? NULL : s->buf, s->got) != -EAGAIN;
}

/* May the next read start: is the slot it takes done with by the hash? */
bool core_hash_room(struct core *c)
{
	bool room = !c->r->hash ||
		    pdd_seq_next_read(&c->seq) < pdd_hash_consumed(c->r->hash) + pdd_seq_win(&c->seq);

	core_hash_wait(c, room);
	return room;
}

/* The time reads waited for the hash alone (asked only when nothing
 * else holds them back), which says whether it limited the speed. */
void core_hash_wait(struct core *c, bool room)
{
	if (!room && !c->hash_wait_from) {
		c->hash_wait_from = pdd_now();
	} else if (room && c->hash_wait_from) {
		c->r->hash_wait += pdd_now() - c->hash_wait_from;
		c->hash_wait_from = 0;
	}
}

/* The driver's pending_fd: the hash's descriptor while it holds
 * transfers the copy waits for. */
int core_hash_fd(void *ctx)
{
	struct core *c = ctx;

	if (!c->r->hash)
		return -1;
	pdd_hash_ack(c->r->hash);
	return pdd_hash_consumed(c->r->hash) < c->hash_fed ? pdd_hash_fd(c->r->hash) : -1;
}

/* The range's length, for a copy that finished: all of it, or to where
 * the input ended (a file or device holding less). */
static uint64_t range_len(const struct core *c)
{
	uint64_t len = c->p->total != PDD_UNTIL_EOF ? c->p->total : c->r->done;
	struct stat st;

	if (c->out->kind == PDD_KIND_FILE && fstat(c->out->fd_buf, &st) == 0 &&
	    (uint64_t)st.st_size < c->p->out_off + len)
		len = (uint64_t)st.st_size > c->p->out_off ? (uint64_t)st.st_size - c->p->out_off : 0;
	return len;
}

/* Does the range cover the whole output, so that a checker given its
 * name (sha256sum -c) reads exactly the bytes hashed? */
static bool whole_file(const struct core *c, uint64_t len)
{
	const struct pdd_dev *out = c->out;
	struct stat st;

	if (c->p->out_off || !strcmp(out->name, "-"))
		return false;
	if (out->kind == PDD_KIND_FILE)
		return fstat(out->fd_buf, &st) == 0 && (uint64_t)st.st_size == len;
	return out->kind == PDD_KIND_BLOCK && out->size_known && out->size == len;
}

/*
 * After the copy, its flushes and the map's last save: the digests are
 * of the whole range when this run wrote all of it and finished.  A
 * resumed copy that finished wrote part: its digests are to come from
 * the output read back (pdd_hash_after(), once the copy's engines are
 * gone).  Otherwise there are none, only the count of bytes hashed so
 * far.
 */
void core_hash_end(struct core *c)
{
	struct pdd_result *r = c->r;
	bool all = c->ntodo == 1 && c->todo[0].pos == 0 &&
		   (c->todo[0].size == c->p->total || c->todo[0].size == PDD_UNTIL_EOF);
	int err;

	if (!r->hash)
		return;
	core_hash_wait(c, true);
	err = pdd_hash_finish(r->hash);
	r->hashed = pdd_hash_bytes(r->hash);
	if (r->hashed > r->done)
		r->hashed = r->done;	/* what was fed past a failure is not copied */
	if (err || r->err || r->signal)
		return;
	r->hash_len = all ? r->hashed : range_len(c);
	r->hash_file = whole_file(c, r->hash_len);
	if (all)
		r->hash_whole = true;
	else
		r->hash_reread = true;
}
