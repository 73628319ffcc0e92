// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hash= after the copy: the digests of a resumed copy, which wrote only
 * part of the range, taken by reading the output's range back; the
 * hashlog; and verify=hash, which reads the output's range back and
 * compares its digests with those taken while copying, never reading the
 * input again (what a failing source disk needs).  Both read back as
 * verify=1 does (verify.c): direct I/O where the output takes it,
 * through the engine the copy gave it, transfers in flight.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

#include "hash.h"
#include "pdd.h"

/* A new hash of the algorithms of hash= over the output's range, read
 * back.  0, or -errno (-EINTR: stopped by a signal, kept in r); a read
 * error is said where it happens. */
static int read_back(const struct pdd_plan *p, const struct pdd_dev *out,
		     const struct pdd_opts *o, struct pdd_result *r, struct pdd_hash **h)
{
	int err = pdd_hash_start(h, o->hash_algs, o->hashwindow, p->depth + 1);

	if (!err)
		err = pdd_verify_read(p, out, o, r, *h, r->hash_len);
	if (!err)
		err = r->signal ? -EINTR : r->err;
	if (!err)
		err = pdd_hash_finish(*h);
	return err;
}

/* A resumed copy that finished: its digests from the output. */
static void resumed(const struct pdd_plan *p, const struct pdd_dev *out,
		    const struct pdd_opts *o, struct pdd_result *r)
{
	struct pdd_result rr = { .hash_len = r->hash_len };
	struct pdd_hash *h = NULL;
	int err;

	if (out->stream || out->kind == PDD_KIND_NULL || out->kind == PDD_KIND_ZERO) {
		pdd_error("hash=: this run wrote part of '%s', which pdd cannot read back to hash",
			  out->name);
		r->hash_failed = true;
		return;
	}
	pdd_info(0, "hash=: this run wrote part of the range: hashing '%s' by reading it",
		 out->name);
	err = read_back(p, out, o, &rr, &h);
	r->signal = rr.signal;
	if (err) {
		if (err != -EINTR)
			pdd_error("hash=: cannot read '%s' back: %s", out->name, pdd_strerror(err));
		if (rr.err) {	/* the read's error: the exit status says it */
			r->err = rr.err;
			r->err_op = rr.err_op;
			r->err_off = rr.err_off;
			r->err_len = rr.err_len;
		}
		pdd_hash_free(h);
		r->hash_failed = err != -EINTR;
		return;
	}
	pdd_hash_free(r->hash);
	r->hash = h;
	r->hashed = pdd_hash_bytes(h);
	r->hash_whole = true;
}

/*
 * After the copy and before its report: the digests of a resumed copy,
 * then the hashlog of a copy known good (flushed and closed).  A range
 * that is not the whole output (seek=, a device larger than it, an
 * output named '-') cannot be checked by a checker given the output's
 * name: its digests go in the log as comments, and a note says so.
 */
void pdd_hash_after(const struct pdd_plan *p, const struct pdd_dev *out,
		    const struct pdd_opts *o, struct pdd_result *r)
{
	int err;

	if (r->err)	/* the close failed: nothing is known good */
		r->hash_whole = false;
	if (!r->hash || r->err)
		return;
	if (r->hash_reread)
		resumed(p, out, o, r);
	if (!r->hash_whole || !o->hashlog)
		return;
	err = pdd_hash_log(r->hash, o->hashlog, out->name, &(struct pdd_hash_range){
		.off = p->out_off - p->out_base, .len = r->hash_len, .whole = r->hash_file });
	if (err) {
		pdd_error("cannot write hashlog '%s': %s", o->hashlog, strerror(-err));
		r->hash_failed = true;
	} else if (!r->hash_file) {
		pdd_info(0, "hashlog '%s': a checker given '%s' would not read exactly bytes %" PRIu64
			 " to %" PRIu64 " of it: written as comments, which checkers skip",
			 o->hashlog, out->name, p->out_off - p->out_base,
			 p->out_off - p->out_base + r->hash_len);
	}
}

/* Would a checker given the output's name (sha256sum -c) read exactly
 * the len bytes from p->out_off: a regular file or block device that
 * holds them and nothing else?  (Its descriptor must still be open.) */
bool pdd_hash_whole_file(const struct pdd_dev *out, const struct pdd_plan *p, uint64_t len)
{
	struct stat st;

	if (p->out_off || !strcmp(out->name, "-"))
		return false;
	if (out->kind == PDD_KIND_FILE)
		return fstat(out->fd_buf, &st) == 0 && (uint64_t)st.st_size == len;
	return out->kind == PDD_KIND_BLOCK && out->size_known && out->size == len;
}

/* The windows (hashwindow=) whose digests of algorithm a differ: how
 * many, and the first. */
static size_t windows_differ(const struct pdd_hash *h, const struct pdd_hash *back,
			     enum pdd_hash_alg a, size_t *first)
{
	size_t n = 0;

	for (size_t i = pdd_hash_nwindows(h); i-- > 0;)
		if (i >= pdd_hash_nwindows(back) ||
		    strcmp(pdd_hash_window_hex(h, i, a), pdd_hash_window_hex(back, i, a))) {
			n++;
			*first = i;
		}
	return n;
}

/* verify=hash, after a copy that finished with its digests. */
int pdd_verify_hash(const struct pdd_plan *p, const struct pdd_dev *out,
		    const struct pdd_opts *o, struct pdd_result *r)
{
	struct pdd_hash *back = NULL;
	int err;

	if (!r->hash_whole)
		return 0;	/* nothing to compare with: said already */
	err = read_back(p, out, o, r, &back);
	if (err == -EINTR || (err && r->err)) {
		if (r->signal)
			pdd_error("verify stopped by SIG%s: %" PRIu64 " of %" PRIu64 " bytes read back",
				  sigabbrev_np(r->signal), pdd_hash_bytes(back), r->hash_len);
		else
			pdd_error("verify stopped: %" PRIu64 " of %" PRIu64 " bytes read back",
				  pdd_hash_bytes(back), r->hash_len);
		pdd_hash_free(back);
		return 0;
	}
	if (err)
		pdd_error("verify: cannot hash '%s': %s", out->name, pdd_strerror(err));
	for (int a = 0; !err && a < PDD_HASH_MAX; a++) {
		const char *want = pdd_hash_hex(r->hash, a), *got = pdd_hash_hex(back, a);
		size_t first = 0, n;
		uint64_t off, len;

		if (!want)
			continue;
		if (!strcmp(want, got)) {
			if (o->status != PDD_STATUS_NONE && o->status != PDD_STATUS_JSON)
				pdd_info(0, "verify: the %s of '%s' read back matches the copy's",
					 pdd_hash_name(a), out->name);
			continue;
		}
		r->verify_hash_diff++;
		pdd_error("verify: the %s of '%s' read back is %s, not %s as copied",
			  pdd_hash_name(a), out->name, got, want);
		n = windows_differ(r->hash, back, a, &first);
		if (!n)
			continue;
		/* in the output, as in the hashlog */
		pdd_hash_window(r->hash, first, &off, &len);
		off += p->out_off - p->out_base;
		pdd_error("verify: %zu of %zu windows differ, the first bytes %" PRIu64 " to %" PRIu64,
			  n, pdd_hash_nwindows(r->hash), off, off + len);
	}
	pdd_hash_free(back);
	return err;
}
