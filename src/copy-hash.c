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
	return !c->r->hash ||
	       pdd_seq_next_read(&c->seq) < pdd_hash_consumed(c->r->hash) + pdd_seq_win(&c->seq);
}

/* The driver's pending_fd: the hash's descriptor while it holds
 * transfers the copy waits for.  It rings when the reads it holds back
 * may go on, a quarter of the window at once (the hash still has the
 * rest to work on meanwhile), or else when it is done with everything
 * fed: a loop with I/O in flight is woken by that, not by each entry. */
int core_hash_fd(void *ctx)
{
	struct core *c = ctx;
	uint64_t want = c->hash_fed;
	unsigned int win = pdd_seq_win(&c->seq);

	if (!c->r->hash)
		return -1;
	pdd_hash_ack(c->r->hash);
	if (pdd_seq_can_read(&c->seq) && !core_hash_room(c)) {
		/* next_read >= consumed + win: no wrap */
		want = pdd_seq_next_read(&c->seq) - win + (win + 3) / 4;
		if (want > c->hash_fed)
			want = c->hash_fed;
	}
	pdd_hash_want(c->r->hash, want);
	return pdd_hash_consumed(c->r->hash) < c->hash_fed ? pdd_hash_fd(c->r->hash) : -1;
}

/* Hash the output's bytes [off, off+len) by reading them (a resumed copy:
 * an earlier run wrote the rest), through a descriptor of its own on the
 * file pdd has open (the name may be '-', or another file by now).  A
 * stop ends it: no digest. */
static int reread(struct core *c, uint64_t off, uint64_t len)
{
	const size_t chunk = 4u << 20;
	char *buf = malloc(chunk), self[64];
	int fd, err = 0;
	uint64_t fed = 0;
	struct pollfd pfd;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", c->out->fd_buf);
	fd = open(self, O_RDONLY | O_CLOEXEC);
	if (!buf || fd < 0) {
		err = !buf ? -ENOMEM : -errno;
		goto out;
	}
	pdd_hash_free(c->r->hash);
	c->r->hash = NULL;
	err = pdd_hash_start(&c->r->hash, c->o->hash_algs, c->o->hashwindow, 2);
	pfd = (struct pollfd){ .fd = err ? -1 : pdd_hash_fd(c->r->hash), .events = POLLIN };
	for (uint64_t at = 0; !err && at < len; at += chunk) {
		size_t n = len - at < chunk ? (size_t)(len - at) : chunk;

		for (size_t got = 0; !err && got < n;) {	/* short reads */
			ssize_t k = pread(fd, buf + got, n - got, (off_t)(off + at + got));

			err = k < 0 ? -errno : k == 0 ? -EIO : 0;
			got += k > 0 ? (size_t)k : 0;
		}
		if (!err)
			err = pdd_hash_feed(c->r->hash, buf, n);
		fed++;
		/* one buffer: wait until the hash is done with it */
		while (!err && pdd_hash_consumed(c->r->hash) < fed) {
			if (pdd_stop_signal)
				err = -EINTR;
			pdd_hash_ack(c->r->hash);
			(void)poll(&pfd, 1, 100);
		}
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
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

/*
 * After the copy, its flushes and the map's last save: the digests are
 * of the whole range when this run wrote all of it and finished; of a
 * resumed copy that finished, they come from the output read back;
 * otherwise there are none, only the count of bytes hashed so far.
 */
void core_hash_end(struct core *c)
{
	struct pdd_result *r = c->r;
	bool all = c->ntodo == 1 && c->todo[0].pos == 0 &&
		   (c->todo[0].size == c->p->total || c->todo[0].size == PDD_UNTIL_EOF);
	int err;

	if (!r->hash)
		return;
	err = pdd_hash_finish(r->hash);
	r->hashed = pdd_hash_bytes(r->hash);
	if (r->hashed > r->done)
		r->hashed = r->done;	/* what was fed past a failure is not copied */
	if (err || r->err || r->signal)
		return;
	if (!all) {
		if (c->out->kind != PDD_KIND_FILE && c->out->kind != PDD_KIND_BLOCK) {
			pdd_error("hash=: this run wrote part of '%s', which pdd cannot read back to hash",
				  c->out->name);
			r->hash_failed = true;
			return;
		}
		pdd_info(0, "hash=: this run wrote part of the range: hashing '%s' by reading it",
			 c->out->name);
		err = reread(c, c->p->out_off, range_len(c));
		if (!err)
			err = pdd_hash_finish(r->hash);
		if (err) {
			pdd_error("hash=: cannot read '%s' back: %s", c->out->name, strerror(-err));
			r->hash_failed = true;
			return;
		}
		r->hash_reread = true;
		r->hashed = pdd_hash_bytes(r->hash);
	}
	r->hash_whole = true;
}

/* hashlog=, once the copy is known good (flushed and closed). */
void core_hash_log(const struct core *c)
{
	struct pdd_result *r = c->r;
	int err;

	if (!r->hash_whole || r->err || !c->o->hashlog)
		return;
	err = pdd_hash_log(r->hash, c->o->hashlog, c->out->name);
	if (err) {
		pdd_error("cannot write hashlog '%s': %s", c->o->hashlog, strerror(-err));
		r->hash_failed = true;
	}
}
