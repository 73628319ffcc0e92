// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The report printed at the end: records in and out counted in blocks of
 * bs as GNU dd counts them, the bytes line in dd's format, and with time=1
 * the line sgp_dd 1.46 printed (scripts such as sgpdd-survey read it) and
 * the CPU used.  The formatters write into buffers so the tests can check
 * them to the byte.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exitcodes.h"
#include "hash.h"
#include "pdd.h"
#include "scsi.h"

/* A size or rate as dd shows it: scaled to the largest unit that keeps it
 * at least 1, one decimal below 10, rounded to nearest ("2.1 GB",
 * "512 B", "10 MiB"). */
size_t pdd_fmt_human(char *buf, size_t len, double v, bool iec)
{
	static const char *const si[] = { "B", "kB", "MB", "GB", "TB", "PB", "EB" };
	static const char *const bi[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	const double base = iec ? 1024 : 1000;
	const char *const *unit = iec ? bi : si;
	int i = 0;
	double r;

	while (v >= base && i < 6) {
		v /= base;
		i++;
	}
	if (i && v < 10) {
		r = round(v * 10) / 10;
		if (r < 10)
			return (size_t)snprintf(buf, len, "%.1f %s", r, unit[i]);
		v = r;
	}
	r = round(v);
	if (r >= base && i < 6)
		return (size_t)snprintf(buf, len, "1.0 %s", unit[i + 1]);
	return (size_t)snprintf(buf, len, "%.0f %s", r, unit[i]);
}

/* "1+1 records in": whole blocks of bs, and one partial if bytes ends
 * inside a block. */
size_t pdd_fmt_records(char *buf, size_t len, const char *dir,
		       uint64_t bytes, uint64_t bs)
{
	return (size_t)snprintf(buf, len, "%" PRIu64 "+%d records %s", bytes / bs,
				bytes % bs != 0, dir);
}

/* A rate as dd shows it: SI units, one decimal below 100 ("27.1 MB/s",
 * "479 MB/s"), and nothing copied in measurable time is "0.0 kB/s". */
size_t pdd_fmt_rate(char *buf, size_t len, double v)
{
	static const char *const si[] = { "B", "kB", "MB", "GB", "TB", "PB", "EB" };
	int i = 0;

	if (v <= 0)
		return (size_t)snprintf(buf, len, "0.0 kB/s");
	while (v >= 1000 && i < 6) {
		v /= 1000;
		i++;
	}
	if (round(v * 10) / 10 < 100)
		return (size_t)snprintf(buf, len, "%.1f %s/s", v, si[i]);
	return (size_t)snprintf(buf, len, "%.0f %s/s", v, si[i]);
}

/* "2147483648 bytes (2.1 GB, 2.0 GiB) copied, 1.01832 s, 2.1 GB/s", with
 * the unit in parentheses left out where it would only repeat bytes. */
size_t pdd_fmt_bytes_line(char *buf, size_t len, uint64_t bytes, double secs)
{
	char si[32], iec[32], rate[40];

	pdd_fmt_human(si, sizeof(si), (double)bytes, false);
	pdd_fmt_human(iec, sizeof(iec), (double)bytes, true);
	if (secs > 0)
		pdd_fmt_rate(rate, sizeof(rate), bytes / secs);
	else
		snprintf(rate, sizeof(rate), "Infinity B/s");
	if (bytes < 1000)
		return (size_t)snprintf(buf, len, "%" PRIu64 " byte%s copied, %g s, %s",
					bytes, bytes == 1 ? "" : "s", secs, rate);
	if (bytes < 1024)
		return (size_t)snprintf(buf, len, "%" PRIu64 " bytes (%s) copied, %g s, %s",
					bytes, si, secs, rate);
	return (size_t)snprintf(buf, len, "%" PRIu64 " bytes (%s, %s) copied, %g s, %s",
				bytes, si, iec, secs, rate);
}

/* sgp_dd 1.46: "time to transfer data was 1.018321 secs, 2108.87 MB/sec"
 * with MB = 10^6; the rate is left off for tiny copies, as it was. */
size_t pdd_fmt_time_line(char *buf, size_t len, uint64_t bytes, double secs)
{
	long long us = llround(secs * 1e6);
	size_t n = (size_t)snprintf(buf, len, "time to transfer data was %lld.%06lld secs",
				    us / 1000000, us % 1000000);

	if (secs > 0.00001 && bytes > 511 && n < len)
		n += (size_t)snprintf(buf + n, len - n, ", %.2f MB/sec",
				      bytes / (secs * 1e6));
	return n;
}

/* hash=: the digests of the whole range, one line each as sha256sum
 * would print them but for the name; or how far the hash got. */
static void report_hashes(const struct pdd_result *r)
{
	if (!r->hash)
		return;
	if (!r->hash_whole || r->err) {
		fprintf(stderr, "pdd: hashed %" PRIu64 " bytes so far%s\n", r->hashed,
			r->hash_failed ? "" : "; no digest of the whole range");
		return;
	}
	for (int a = 0; a < PDD_HASH_MAX; a++)
		if (pdd_hash_hex(r->hash, (enum pdd_hash_alg)a))
			fprintf(stderr, "pdd: %s %s\n", pdd_hash_name((enum pdd_hash_alg)a),
				pdd_hash_hex(r->hash, (enum pdd_hash_alg)a));
	if (r->bad_blocks)
		fprintf(stderr, "pdd: the digests include %" PRIu64 " unreadable block%s of %u bytes,"
			" hashed as the zeros written for them\n", r->bad_blocks,
			r->bad_blocks == 1 ? "" : "s", r->bad_unit);
}

/* Did reads wait for the hash for more than 5% of the copy's time? */
bool pdd_hash_limited(const struct pdd_result *r)
{
	return r->hash_slow && r->hash_wait > 0.05 * r->secs;
}

/* hash=: which limited the speed, the copy or the slowest hash (the
 * time reads waited for it alone).  Not for digests read back. */
static void report_pace(const struct pdd_result *r)
{
	if (!r->hash || !r->hashed || r->hash_reread)
		return;
	if (pdd_hash_limited(r))
		fprintf(stderr, "pdd: the %s hash limited the speed: reads waited %.2f s of %.2f s for it\n",
			pdd_hash_name((enum pdd_hash_alg)(r->hash_slow - 1)), r->hash_wait, r->secs);
	else
		fprintf(stderr, "pdd: the copy limited the speed, not the hash: reads waited %.2f s for it\n",
			r->hash_wait);
}

void pdd_report(const struct pdd_opts *o, const struct pdd_plan *p,
		const struct pdd_result *r)
{
	char line[256];

	if (o->status == PDD_STATUS_NONE || o->status == PDD_STATUS_JSON)
		return;
	pdd_fmt_records(line, sizeof(line), "in", r->in_bytes, p->bs);
	fprintf(stderr, "%s\n", line);
	pdd_fmt_records(line, sizeof(line), "out", r->out_bytes, p->bs);
	fprintf(stderr, "%s\n", line);
	if (o->status != PDD_STATUS_NOXFER) {
		pdd_fmt_bytes_line(line, sizeof(line), r->out_bytes, r->secs);
		fprintf(stderr, "%s\n", line);
		if (r->zero_bytes || r->skip_bytes)	/* sparse= */
			fprintf(stderr, "pdd: of those, %" PRIu64 " bytes zeroed by the output and %"
				PRIu64 " not written (zeros there already)\n", r->zero_bytes,
				r->skip_bytes);
	}
	report_hashes(r);
	report_pace(r);
	if (o->time) {
		pdd_fmt_time_line(line, sizeof(line), r->out_bytes, r->secs);
		fprintf(stderr, "%s\n", line);
		fprintf(stderr, "cpu time: user %.3f secs, sys %.3f secs, %.1f%% of elapsed\n",
			r->user_secs, r->sys_secs,
			r->secs > 0 ? 100 * (r->user_secs + r->sys_secs) / r->secs : 0.0);
	}
	fflush(stderr);
}

/* sg3_utils' categories for an error met while copying. */
/* Seconds on the monotonic clock: what every duration is measured by. */
double pdd_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void pdd_result_free(struct pdd_result *r)
{
	pdd_hash_free(r->hash);
	r->hash = NULL;
	free(r->bad_lbas);
	r->bad_lbas = NULL;
	r->nbad_lbas = 0;
}

int pdd_exit_status(const struct pdd_result *r)
{
	if (r->signal)
		return 128 + r->signal;	/* as the shell reports a signal */
	if (pdd_err_is_scsi(r->err))
		return -r->err - PDD_ESCSI;	/* sg3_utils' category */
	if (r->err_op == PDD_OP_MAP)
		return PDD_EXIT_FILE_ERROR;	/* the map, not the copy, failed */
	if (!r->err && r->hash_failed)
		return PDD_EXIT_FILE_ERROR;	/* the digests, not the copy */
	switch (-r->err) {
	case 0:
		/* rescue=1: give_up= expired, or blocks are left unread */
		if (r->rescue && r->gave_up)
			return PDD_EXIT_TIMEOUT;
		if (r->rescue && (r->non_tried || r->non_trimmed || r->non_scraped || r->bad_bytes))
			return PDD_EXIT_MEDIUM_HARD;
		/* verify=hash found the output unlike what was written: that
		 * comes before the unreadable blocks coe=1 wrote as zeros */
		if (r->verify_hash_diff)
			return PDD_EXIT_MISCOMPARE;
		/* coe carried on past unreadable blocks; scripts must notice */
		if (r->bad_blocks)
			return PDD_EXIT_MEDIUM_HARD;
		/* verify= found the output unlike the input */
		return r->verify_diff || r->verify_hash_diff ? PDD_EXIT_MISCOMPARE : PDD_EXIT_OK;
	case EIO:
	case EREMOTEIO:
	case EBADMSG:
	case ENODATA:
		return PDD_EXIT_MEDIUM_HARD;
	case ETIMEDOUT:
		return PDD_EXIT_TIMEOUT;
	case ENOMEDIUM:
		return PDD_EXIT_NOT_READY;
	default:
		return PDD_EXIT_FILE_ERROR;
	}
}

/* An operand as the shell would take it back: quoted when it needs to be. */
static void put_word(FILE *f, const char *w)
{
	if (w[strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		       "0123456789=/.,_+:@%-")] == '\0') {
		fprintf(f, " %s", w);
		return;
	}
	fputs(" '", f);
	for (; *w; w++)
		if (*w == '\'')
			fputs("'\\''", f);
		else
			fputc(*w, f);
	fputc('\'', f);
}

static bool is_operand(const char *w, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(w, name, n) && w[n] == '=';
}

/* oflag= on a resume of a regular file: without excl, which asked for a
 * new file and would now refuse the one this run made. */
static void put_oflags(FILE *f, const char *list)
{
	char buf[256], out[256] = "oflag=", *tok, *save;
	bool any = false;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "excl"))
			continue;
		if (any)
			strcat(out, ",");
		strncat(out, tok, sizeof(out) - strlen(out) - 1);
		any = true;
	}
	if (any)
		put_word(f, out);
}

/*
 * A copy that stopped with work left (an error, a signal): the command
 * that goes on from the done mark.  It is the command as given, with
 * skip=, seek= and count= moved on by what was written and bs= spelled
 * out; rerun, it copies exactly what is missing.  With map= the map
 * holds the progress, so the command as given is the one to rerun.  A
 * stream cannot be wound back to the done mark: *stream names it, and
 * there is no command.  The command (malloc'd, "pdd ...") or NULL.
 */
char *pdd_resume_command(int argc, char **argv, const struct pdd_plan *p,
			 const struct pdd_dev *in, const struct pdd_dev *out,
			 const struct pdd_result *r, const char **stream)
{
	uint64_t done = r->done - r->done % p->bs;
	bool mapped = false;
	char *cmd = NULL;
	size_t len;
	FILE *f;

	*stream = NULL;
	for (int i = 1; i < argc; i++)
		mapped |= is_operand(argv[i], "map");
	if (!r->err && !r->signal)
		return NULL;
	if (!mapped && (r->err_op == PDD_OP_FLUSH || r->err_op == PDD_OP_CLOSE || r->unflushed ||
			(p->total != PDD_UNTIL_EOF && done >= p->total)))
		return NULL;
	if (in->stream || out->stream) {
		*stream = in->stream ? in->name : out->name;
		return NULL;
	}
	f = open_memstream(&cmd, &len);
	if (!f)
		return NULL;
	fputs("pdd", f);
	for (int i = 1; i < argc; i++) {
		if (!mapped && (is_operand(argv[i], "skip") || is_operand(argv[i], "seek") ||
				is_operand(argv[i], "count") || is_operand(argv[i], "bs")))
			continue;
		if (is_operand(argv[i], "oflag") && out->kind == PDD_KIND_FILE)
			put_oflags(f, argv[i] + strlen("oflag="));
		else
			put_word(f, argv[i]);
	}
	if (!mapped) {
		fprintf(f, " bs=%" PRIu64 " skip=%" PRIu64 " seek=%" PRIu64, p->bs,
			(p->in_off - p->in_base + done) / p->bs,
			(p->out_off - p->out_base + done) / p->bs);
		if (p->total != PDD_UNTIL_EOF)
			fprintf(f, " count=%" PRIu64, (p->total - done + p->bs - 1) / p->bs);
	}
	if (fclose(f)) {
		free(cmd);
		return NULL;
	}
	return cmd;
}
