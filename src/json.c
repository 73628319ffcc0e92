// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * status=json: the whole story of a run as one JSON object on standard
 * output, printed last, so that a script reads fields instead of parsing
 * the text report.  What a stage did not reach is null: no devices when
 * an operand was refused, no copy when the plan was.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "map.h"
#include "hash.h"
#include "pdd.h"

/*
 * The length of the valid UTF-8 sequence at p (RFC 3629), or 0 when the
 * byte at p does not start one: no overlong forms, no UTF-16 surrogates
 * (ED A0..BF), nothing above U+10FFFF, no sequence cut short.
 */
static int utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;	/* the second byte's range */
	int n;

	if (*p < 0x80)
		return 1;
	if (*p >= 0xc2 && *p <= 0xdf)
		n = 2;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 3;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 4;
	else
		return 0;	/* a continuation byte, C0, C1 or F5..FF */
	if (*p == 0xe0)
		lo = 0xa0;	/* below it, overlong */
	else if (*p == 0xed)
		hi = 0x9f;	/* above it, a surrogate */
	else if (*p == 0xf0)
		lo = 0x90;	/* below it, overlong */
	else if (*p == 0xf4)
		hi = 0x8f;	/* above it, past U+10FFFF */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)	/* a NUL ends the loop here too */
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/*
 * A JSON string.  Paths and operands are bytes, not always UTF-8, and the
 * report must stay valid JSON and lose nothing: valid UTF-8 is copied as
 * it is, and every other byte is written as the lone surrogate \udcXX, as
 * Python's surrogateescape (PEP 383) decodes it, so that os.fsencode()
 * gives the bytes back.
 */
void pdd_json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *p; p += n ? n : 1) {
		n = utf8_len(p);
		if (!n)
			fprintf(f, "\\udc%02x", *p);
		else if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fwrite(p, 1, (size_t)n, f);
	}
	fputc('"', f);
}

/* "name": at the given indent, with the comma that separates it from
 * the field before */
static void key(FILE *f, int depth, bool *first, const char *name)
{
	fprintf(f, "%s\n%*s\"%s\": ", *first ? "" : ",", 2 * depth, "", name);
	*first = false;
}

static void num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6f", v);
	else
		fputs("null", f);
}

static void side(FILE *f, const struct pdd_dev *d, const struct pdd_engine_ops *ops)
{
	bool first = true;

	if (!d) {
		fputs("null", f);
		return;
	}
	fputc('{', f);
	key(f, 2, &first, "path");
	pdd_json_str(f, d->path);
	key(f, 2, &first, "kind");
	pdd_json_str(f, pdd_kind_word(d->kind));
	key(f, 2, &first, "size");
	if (d->size_known && !d->missing && d->kind != PDD_KIND_NULL)
		fprintf(f, "%" PRIu64, d->size);
	else
		fputs("null", f);
	key(f, 2, &first, "logical_block");
	fprintf(f, "%u", d->lbs);
	key(f, 2, &first, "physical_block");
	fprintf(f, "%u", d->pbs);
	key(f, 2, &first, "direct");
	fputs(d->direct ? "true" : "false", f);
	key(f, 2, &first, "model");
	pdd_json_str(f, d->model[0] ? d->model : NULL);
	key(f, 2, &first, "serial");
	pdd_json_str(f, d->serial[0] ? d->serial : NULL);
	key(f, 2, &first, "backing_file");
	pdd_json_str(f, d->backing[0] ? d->backing : NULL);
	key(f, 2, &first, "engine");
	pdd_json_str(f, ops ? ops->name : NULL);
	fprintf(f, "\n  }");
}

/* what of out_bytes sparse= did not send as data */
static uint64_t sparse_part(const struct pdd_result *r)
{
	uint64_t n = r->zero_bytes + r->skip_bytes;

	return n < r->out_bytes ? n : r->out_bytes;
}

static void records(FILE *f, uint64_t bytes, uint64_t bs)
{
	fprintf(f, "{ \"full\": %" PRIu64 ", \"partial\": %d }", bytes / bs, bytes % bs != 0);
}

static const char *op_word(enum pdd_op op)
{
	switch (op) {
	case PDD_OP_READ:
		return "read";
	case PDD_OP_WRITE:
		return "write";
	case PDD_OP_FLUSH:
		return "flush";
	case PDD_OP_MAP:
		return "map";
	case PDD_OP_CLOSE:
		return "close";
	default:
		return "copy";
	}
}

/* hash=: the bytes hashed, what limited the speed, and the digests of
 * the whole range (null without them), with the windows' of
 * hashwindow= (their offsets in the output, as in the hashlog). */
static void hashes(FILE *f, bool *first, const struct pdd_result *r,
		   const struct pdd_plan *p)
{
	/* digests of a copy that ended well, whatever verify= found later */
	const struct pdd_hash *h = r && r->hash_whole ? r->hash : NULL;
	size_t nw = h ? pdd_hash_nwindows(h) : 0;
	uint64_t base = p ? p->out_off - p->out_base : 0;

	key(f, 1, first, "bytes_hashed");
	fprintf(f, "%" PRIu64, r ? r->hashed : 0);
	key(f, 1, first, "hash_wait_seconds");
	num(f, r ? r->hash_wait : 0);
	key(f, 1, first, "speed_limited_by");
	if (r && r->hash && r->hashed && !r->hash_reread)
		fprintf(f, "\"%s\"", pdd_hash_limited(r) ? pdd_hash_name((enum pdd_hash_alg)(r->hash_slow - 1)) : "copy");
	else
		fputs("null", f);
	key(f, 1, first, "hashes");
	if (!h) {
		fputs("null", f);
	} else {
		fputc('{', f);
		for (int a = 0, n = 0; a < PDD_HASH_MAX; a++)
			if (pdd_hash_hex(h, (enum pdd_hash_alg)a))
				fprintf(f, "%s\"%s\": \"%s\"", n++ ? ", " : " ",
					pdd_hash_name((enum pdd_hash_alg)a),
					pdd_hash_hex(h, (enum pdd_hash_alg)a));
		fputs(" }", f);
	}
	key(f, 1, first, "hash_windows");
	if (!nw) {
		fputs(h ? "[]" : "null", f);
		return;
	}
	fputc('[', f);
	for (size_t i = 0; i < nw; i++) {
		uint64_t off, len;

		pdd_hash_window(h, i, &off, &len);
		fprintf(f, "%s\n    { \"offset\": %" PRIu64 ", \"length\": %" PRIu64, i ? "," : "",
			base + off, len);
		for (int a = 0; a < PDD_HASH_MAX; a++)
			if (pdd_hash_window_hex(h, i, (enum pdd_hash_alg)a))
				fprintf(f, ", \"%s\": \"%s\"", pdd_hash_name((enum pdd_hash_alg)a),
					pdd_hash_window_hex(h, i, (enum pdd_hash_alg)a));
		fputs(" }", f);
	}
	fputs("\n  ]", f);
}
/* The copy's error: what failed, where, and why. */
static void error(FILE *f, const struct pdd_json *j)
{
	const struct pdd_result *r = j->r;
	bool first = true;

	if (!r || !r->err) {
		if (j->message) {	/* stopped before the copy: the reason */
			fputs("{ \"op\": \"start\", \"block\": null, \"message\": ", f);
			pdd_json_str(f, j->message);
			fputs(" }", f);
		} else {
			fputs("null", f);
		}
		return;
	}
	fputc('{', f);
	key(f, 2, &first, "op");
	pdd_json_str(f, op_word(r->err_op));
	key(f, 2, &first, "block");
	if (r->err_op == PDD_OP_READ || r->err_op == PDD_OP_WRITE)
		/* counted from where a standard input or output was left */
		fprintf(f, "%" PRIu64, (r->err_off - (r->err_op == PDD_OP_READ ?
						      j->p->in_base : j->p->out_base)) / j->p->bs);
	else
		fputs("null", f);
	key(f, 2, &first, "offset");
	if (r->err_op == PDD_OP_READ || r->err_op == PDD_OP_WRITE)
		fprintf(f, "%" PRIu64, r->err_off);
	else
		fputs("null", f);
	key(f, 2, &first, "message");
	pdd_json_str(f, pdd_strerror(r->err));
	fprintf(f, "\n  }");
}

static void bad(FILE *f, const struct pdd_result *r)
{
	bool first = true;

	fputc('{', f);
	key(f, 2, &first, "count");
	fprintf(f, "%" PRIu64, r->bad_blocks);
	key(f, 2, &first, "block_size");
	fprintf(f, "%u", r->bad_blocks ? r->bad_unit : 0);
	key(f, 2, &first, "lbas");
	fputc('[', f);
	for (size_t i = 0; i < r->nbad_lbas; i++)
		fprintf(f, "%s%" PRIu64, i ? ", " : "", r->bad_lbas[i]);
	fputc(']', f);
	fprintf(f, "\n  }");
}

static void map(FILE *f, const struct pdd_json *j)
{
	const struct pdd_plan *p = j->p;
	uint64_t s, e, done, badb;
	bool first = true;

	if (!j->map || !p) {
		fputs("null", f);
		return;
	}
	s = p->in_off;
	e = p->in_off + p->total;
	done = pdd_map_bytes(j->map, s, e, PDD_MAP_DONE);
	badb = pdd_map_bytes(j->map, s, e, PDD_MAP_BAD);
	fputc('{', f);
	key(f, 2, &first, "path");
	pdd_json_str(f, j->map->path);
	key(f, 2, &first, "finished");
	fprintf(f, "%" PRIu64, done);
	key(f, 2, &first, "bad");
	fprintf(f, "%" PRIu64, badb);
	key(f, 2, &first, "to_try");
	fprintf(f, "%" PRIu64, p->total - done - badb);
	fprintf(f, "\n  }");
}

/* verify=: how it went; with verify=hash, blocks are those read back
 * and digests_differ counts the digests that differ (null otherwise) */
static void verify(FILE *f, const struct pdd_result *r, const struct pdd_opts *o)
{
	bool first = true, hash = o && o->verify == PDD_VERIFY_HASH;

	if (!r || !r->verified) {
		fputs("null", f);
		return;
	}
	fputc('{', f);
	key(f, 2, &first, "mode");
	fprintf(f, "\"%s\"", hash ? "hash" : o && o->verify == PDD_VERIFY_ONLY ? "only" : "1");
	key(f, 2, &first, "digests_differ");
	if (hash)
		fprintf(f, "%u", r->verify_hash_diff);
	else
		fputs("null", f);
	key(f, 2, &first, "blocks");
	fprintf(f, "%" PRIu64, r->verify_blocks);
	key(f, 2, &first, "differ");
	fprintf(f, "%" PRIu64, r->verify_diff);
	key(f, 2, &first, "first");
	if (r->verify_diff)
		fprintf(f, "%" PRIu64, r->verify_first);
	else
		fputs("null", f);
	key(f, 2, &first, "seconds");
	num(f, r->verify_secs);
	fprintf(f, "\n  }");
}

void pdd_report_json(FILE *f, const struct pdd_json *j)
{
	const struct pdd_result *r = j->r;
	const struct pdd_plan *p = j->p;
	bool first = true;

	fputc('{', f);
	key(f, 1, &first, "pdd");
	pdd_json_str(f, PDD_VERSION);
	key(f, 1, &first, "operands");
	fputc('[', f);
	for (int i = 1; i < j->argc; i++) {
		fputs(i > 1 ? ", " : "", f);
		pdd_json_str(f, j->argv[i]);
	}
	fputc(']', f);
	key(f, 1, &first, "dry_run");
	fputs(j->dry_run ? "true" : "false", f);
	key(f, 1, &first, "input");
	side(f, j->in, p ? p->ops[0] : NULL);
	key(f, 1, &first, "output");
	side(f, j->out, p ? p->ops[1] : NULL);
	key(f, 1, &first, "bs");
	p ? fprintf(f, "%" PRIu64, p->bs) : fputs("null", f);
	key(f, 1, &first, "engine");
	pdd_json_str(f, p ? pdd_plan_engine(p) : NULL);
	key(f, 1, &first, "bytes_in");
	r ? fprintf(f, "%" PRIu64, r->in_bytes) : fputs("0", f);
	key(f, 1, &first, "bytes_out");
	r ? fprintf(f, "%" PRIu64, r->out_bytes) : fputs("0", f);
	/* of bytes_out: sent as data, zeroed by the output (sparse=), and
	 * left alone where it held zeros already */
	key(f, 1, &first, "bytes_written");
	r ? fprintf(f, "%" PRIu64, r->out_bytes - sparse_part(r)) : fputs("0", f);
	key(f, 1, &first, "bytes_zeroed");
	r ? fprintf(f, "%" PRIu64, r->zero_bytes) : fputs("0", f);
	key(f, 1, &first, "bytes_skipped");
	r ? fprintf(f, "%" PRIu64, r->skip_bytes) : fputs("0", f);
	key(f, 1, &first, "bytes_in_holes");	/* of bytes_in: not read */
	r ? fprintf(f, "%" PRIu64, r->hole_bytes) : fputs("0", f);
	hashes(f, &first, r, j->p);
	key(f, 1, &first, "records_in");
	records(f, r ? r->in_bytes : 0, p ? p->bs : 512);
	key(f, 1, &first, "records_out");
	records(f, r ? r->out_bytes : 0, p ? p->bs : 512);
	key(f, 1, &first, "seconds");
	num(f, r ? r->secs : 0);
	key(f, 1, &first, "bytes_per_second");
	if (r && r->secs > 0)
		num(f, r->out_bytes / r->secs);
	else
		fputs("null", f);
	key(f, 1, &first, "cpu_user_seconds");
	num(f, r ? r->user_secs : 0);
	key(f, 1, &first, "cpu_sys_seconds");
	num(f, r ? r->sys_secs : 0);
	key(f, 1, &first, "error");
	error(f, j);
	key(f, 1, &first, "signal");
	if (r && r->signal)
		fprintf(f, "\"SIG%s\"", sigabbrev_np(r->signal));
	else
		fputs("null", f);
	key(f, 1, &first, "unreadable_blocks");
	r ? bad(f, r) : (void)fputs("null", f);
	key(f, 1, &first, "recovered_errors");
	fprintf(f, "%" PRIu64, r ? r->recovered : 0);
	key(f, 1, &first, "map");
	map(f, j);
	key(f, 1, &first, "rescue");
	pdd_rescue_json(f, r);
	key(f, 1, &first, "verify");
	verify(f, r, j->o);
	key(f, 1, &first, "resume");
	pdd_json_str(f, j->resume);
	key(f, 1, &first, "exit_status");
	fprintf(f, "%d", j->status);
	/* not flushed here: main's pdd_stdout_close() does, and a failed
	 * flush here would leave it no errno to report */
	fputs("\n}\n", f);
}
