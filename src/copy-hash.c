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
#include <string.h>
#include <sys/stat.h>

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

/* May the next read start: is the slot it takes done with by the hash?
 * Asked only when nothing else holds the read back: a no means the hash
 * alone holds the copy up, and the slowest algorithm is the one. */
bool core_hash_room(struct core *c)
{
	struct pdd_hash *h = c->r->hash;

	if (!h || pdd_seq_next_read(&c->seq) < pdd_hash_consumed(h) + pdd_seq_win(&c->seq))
		return true;
	c->hash_blocked = true;
	c->r->hash_slow = 1 + pdd_hash_slowest(h);
	return false;
}

/*
 * A turn of the loop begins (before the reads are issued): the time since
 * the last turn counts as waiting for the hash when reads were held back
 * by it alone then, which says whether it limited the speed.  The hash's
 * descriptor is acknowledged here, before its counts are read in this
 * turn, so that anything it finishes later rings it again.
 */
void core_hash_turn(struct core *c, double now)
{
	if (!c->r->hash)
		return;
	if (c->hash_blocked)
		c->r->hash_wait += now - c->hash_turn_t;
	c->hash_turn_t = now;
	c->hash_blocked = false;
	/* nothing rings until core_hash_fd() says what this turn waits for:
	 * the last turn's want, met already (it woke the loop), would ring
	 * for every entry finished while this turn issues its requests */
	pdd_hash_want(c->r->hash, UINT64_MAX);
	pdd_hash_ack(c->r->hash);
}

/* The driver's pending_fd: the hash's descriptor while it holds
 * transfers the copy waits for, or reads wait for it (acknowledged at the
 * turn's start: what it finished since rings it).  It rings when the
 * reads it holds back may go on, a quarter of the window at once (the
 * hash still has the rest to work on meanwhile), or else when it is done
 * with everything fed: a loop with I/O in flight is woken by that, not
 * by each entry. */
int core_hash_fd(void *ctx)
{
	struct core *c = ctx;
	uint64_t want = c->hash_fed;
	unsigned int win = pdd_seq_win(&c->seq);

	if (!c->r->hash)
		return -1;
	if (c->hash_blocked) {
		/* next_read >= consumed + win: no wrap */
		want = pdd_seq_next_read(&c->seq) - win + (win + 3) / 4;
		if (want > c->hash_fed)
			want = c->hash_fed;
	}
	pdd_hash_want(c->r->hash, want);
	return c->hash_blocked || pdd_hash_consumed(c->r->hash) < c->hash_fed ?
	       pdd_hash_fd(c->r->hash) : -1;
}

/* The range's length, for a copy that finished: all of it, or to where
 * the input ended (a file or device holding less). */
static uint64_t range_len(const struct core *c)
{
	uint64_t len = c->p->total != PDD_UNTIL_EOF ? c->p->total : c->r->done;
	const struct pdd_dev *in = c->in;
	struct stat st;

	if (in->size_known && !in->stream && in->kind != PDD_KIND_ZERO)
		len = in->size <= c->p->in_off ? 0 :
		      in->size - c->p->in_off < len ? in->size - c->p->in_off : len;

	if (c->out->kind == PDD_KIND_FILE && fstat(c->out->fd_buf, &st) == 0 &&
	    (uint64_t)st.st_size < c->p->out_off + len)
		len = (uint64_t)st.st_size > c->p->out_off ? (uint64_t)st.st_size - c->p->out_off : 0;
	return len;
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
	core_hash_turn(c, pdd_now());	/* the last wait counted */
	err = pdd_hash_finish(r->hash);
	r->hashed = pdd_hash_bytes(r->hash);
	if (r->hashed > r->done)
		r->hashed = r->done;	/* what was fed past a failure is not copied */
	if (err || r->err || r->signal)
		return;
	r->hash_len = all ? r->hashed : range_len(c);
	r->hash_file = pdd_hash_whole_file(c->out, c->p, r->hash_len);
	if (all)
		r->hash_whole = true;
	else
		r->hash_reread = true;
}
