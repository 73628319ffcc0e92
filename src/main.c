// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pdd: operands -> devices -> plan -> copy -> report.  Nothing else lives
 * here; this is the only place that turns a failure into an exit status.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "exitcodes.h"
#include "map.h"
#include "hash.h"
#include "pdd.h"
#include "scsi.h"

static int open_both(const struct pdd_opts *o, struct pdd_dev *in,
		     struct pdd_dev *out)
{
	/* verify=only writes nothing: its output is opened as a side to
	 * read, so one that is missing is an error and none is created */
	bool only = o->verify == PDD_VERIFY_ONLY && o->out_path &&
		    strcmp(o->out_path, "-") && strcmp(o->out_path, ".");
	int err = pdd_dev_open(in, o->in_path, false, o->iflags);

	if (!err) {
		err = pdd_dev_open(out, o->out_path, !only, o->oflags);
		if (err == -EBUSY)
			pdd_guard_busy(in, out);	/* say who holds it */
	}
	if (!err) {
		/* how sg commands are built, for the sides that are sg */
		in->cdbsz = out->cdbsz = o->cdbsz;
		in->timeout_ms = out->timeout_ms = o->timeout * 1000;
		/* an NBD server is given no time limit unless asked */
		if (in->kind == PDD_KIND_NBD && !o->timeout_given)
			in->timeout_ms = 0;
		if (out->kind == PDD_KIND_NBD && !o->timeout_given)
			out->timeout_ms = 0;
		in->dio = out->dio = o->dio;
		/* conns=: the connections past the first */
		if (in->kind == PDD_KIND_NBD)
			err = pdd_nbd_connect(in, o->conns);
		if (!err && out->kind == PDD_KIND_NBD)
			err = pdd_nbd_connect(out, o->conns);
		if (!err)
			return 0;
	}
	if (pdd_stop_signal)		/* while connecting to a server */
		return 128 + pdd_stop_signal;
	if (pdd_err_is_scsi(err))	/* READ CAPACITY failed: not ready... */
		return -err - PDD_ESCSI;
	if (err == -ENOTSUP)		/* recognised, but not drivable here */
		return PDD_EXIT_FILE_ERROR;
	return pdd_exit_os(err);
}

/* The command line, for the map's header. */
static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	for (int i = 0; s && i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/*
 * map=: read what an earlier run (of pdd or of GNU ddrescue) recorded,
 * or start a new map in which the input, as far as it is known, is not
 * tried yet.  A map that cannot be read stops pdd before anything is
 * written, as does one that marks part of the range finished when
 * verify=hash is to compare digests of what this run writes.
 */
static int load_map(struct pdd_map *m, const struct pdd_plan *p,
		    const struct pdd_dev *in, const struct pdd_opts *o)
{
	uint64_t end = p->in_off + p->total, have;
	int err = pdd_map_load(m);

	if (err && err != -ENOENT)
		return PDD_EXIT_FILE_ERROR;	/* unreadable, or not a map */
	if (in->size_known && in->size > end)
		end = in->size;
	have = m->n ? m->ext[m->n - 1].pos + m->ext[m->n - 1].size : 0;
	if (have < end && pdd_map_set(m, have, end - have, PDD_MAP_UNTRIED)) {
		pdd_error("cannot keep the map '%s': %s", m->path, strerror(ENOMEM));
		return PDD_EXIT_FILE_ERROR;
	}
	/* what an earlier run wrote was not hashed as it was written */
	if (o->verify == PDD_VERIFY_HASH &&
	    pdd_map_bytes(m, p->in_off, p->in_off + p->total, PDD_MAP_DONE)) {
		pdd_error("verify=hash and map= contradict: '%s' marks part of the range finished, which this run cannot hash as it writes",
			  m->path);
		return PDD_EXIT_CONTRADICT;
	}
	return 0;
}

/* What the map says about the range. */
static void describe_map(char *buf, size_t len, const struct pdd_map *m,
			 const struct pdd_plan *p)
{
	uint64_t s = p->in_off, e = p->in_off + p->total;
	uint64_t done = pdd_map_bytes(m, s, e, PDD_MAP_DONE);
	uint64_t bad = pdd_map_bytes(m, s, e, PDD_MAP_BAD);

	snprintf(buf, len, "map '%s': of %" PRIu64 " bytes, %" PRIu64 " finished, %" PRIu64
		 " bad, %" PRIu64 " to try", m->path, p->total, done, bad,
		 p->total - done - bad);
}

/* --dry-run: the plan, and what map= and verify= would do. */
static void dry_run(const struct pdd_opts *o, const struct pdd_plan *p,
		    const struct pdd_dev *in, const struct pdd_dev *out,
		    const struct pdd_map *m)
{
	/* where standard output is the copy's output (a disk, say), the
	 * plan must not land in it: it goes to standard error */
	FILE *f = !strcmp(out->path, "-") ? stderr : stdout;
	char line[PATH_MAX + 160];

	pdd_plan_print(f, p, in, out);
	if (m) {
		describe_map(line, sizeof(line), m, p);
		fprintf(f, "  %s\n", line);
	}
	if (o->verify)
		fprintf(f, "  verify  %s\n", o->verify == PDD_VERIFY_ONLY ?
			"only: compare the two ranges, write nothing" :
			o->verify == PDD_VERIFY_HASH ?
			"hash: read the output back after the copy and compare its digests" :
			"read both ranges again after the copy and compare them");
}

/*
 * The copy itself: wind a stream input past skip=, copy (the copy makes
 * the output once its memory is in hand), report, say how to resume
 * (*resume, malloc'd, for the JSON too), and compare the ranges when
 * verify=1 asks and the copy finished.  Returns the exit status; *copied
 * says whether r describes a copy.
 */
static int copy(int argc, char **argv, const struct pdd_opts *o,
		struct pdd_plan *p, struct pdd_dev *in, struct pdd_dev *out,
		struct pdd_map *m, struct pdd_result *r, char **resume,
		bool *copied)
{
	char line[PATH_MAX + 160];
	const char *stream;
	int err;

	if (in->stream && p->in_off) {
		err = pdd_dev_skip_stream(in, p->in_off);
		if (err == -ENODATA) {
			pdd_error("'%s' ended before skip=%llu: nothing to copy", in->name,
				  (unsigned long long)o->skip);
			p->total = 0;
		} else if (err) {
			r->err = err;
			return pdd_exit_status(r);
		}
	}
	err = pdd_copy(p, in, out, o, m, r);
	if (err)	/* out of memory, or the output or engine would not open */
		return err == -ENOMEM ? PDD_EXIT_OTHER : pdd_exit_os(err);
	*copied = true;
	/* as dd, a redirected standard input or output is left just past
	 * what was copied, for the next command of the shell's */
	pdd_dev_leave(in, p->in_off + r->done);
	pdd_dev_leave(out, p->out_off + r->done);
	pdd_hash_after(p, out, o, r);	/* a resumed copy's digests, the hashlog */
	pdd_report(o, p, r);
	if (m && pdd_map_bytes(m, p->in_off, p->in_off + p->total, PDD_MAP_DONE) < p->total) {
		describe_map(line, sizeof(line), m, p);
		pdd_info(0, "%s", line);
	}
	*resume = pdd_resume_command(argc, argv, p, in, out, r, &stream);
	if (stream)
		pdd_error("the rest cannot be copied by a rerun: '%s' is a stream", stream);
	if (*resume)
		pdd_error("to resume: %s", *resume);
	/* only a copy that finished is worth comparing */
	if (o->verify && !r->err && !r->signal) {
		err = o->verify == PDD_VERIFY_HASH ? pdd_verify_hash(p, out, o, r) :
						     pdd_verify(p, in, out, o, r);
		if (err)
			return pdd_exit_os(err);
	}
	return pdd_exit_status(r);
}

/* rescue=1: the rescue, its report, and how to go on after a stop. */
static int rescue(int argc, char **argv, const struct pdd_opts *o,
		  struct pdd_plan *p, struct pdd_dev *in, struct pdd_dev *out,
		  struct pdd_map *m, struct pdd_result *r, char **resume,
		  bool *copied)
{
	int err = pdd_rescue(p, in, out, o, m, r);

	if (err)
		return err == -ENOMEM ? PDD_EXIT_OTHER : pdd_exit_os(err);
	*copied = true;
	pdd_hash_after(p, out, o, r);	/* the digests, read back */
	pdd_report(o, p, r);
	pdd_rescue_say(o, r);
	/* what stopped it (a failed save of the map said why already) */
	if (r->err && !pdd_say_io_error(r, p, in, out) && r->err_op != PDD_OP_MAP)
		pdd_error("rescue stopped: %s", pdd_strerror(r->err));
	else if (r->err == -ENOMEM && r->err_op == PDD_OP_MAP)
		pdd_error("rescue stopped: cannot keep the map: %s", strerror(ENOMEM));
	if (r->err_op == PDD_OP_FLUSH && m)
		pdd_error("the map '%s' marks nothing finished that was written since it was last saved",
			  m->path);
	if (!r->err && !r->signal && !r->gave_up)
		return pdd_exit_status(r);
	if (m) {
		*resume = join_args(argc, argv);
		if (*resume)
			pdd_error("to resume: %s", *resume);
	} else {
		pdd_error("without map= this rescue cannot be resumed: a rerun starts again");
	}
	return pdd_exit_status(r);
}

int main(int argc, char **argv)
{
	struct pdd_dev in = { .fd = -1 }, out = { .fd = -1 };
	struct pdd_result r = { 0 };
	struct pdd_plan p;
	struct pdd_opts o;
	struct pdd_map map, *m = NULL;
	/* for status=json: how far the run came */
	struct pdd_json js = { .argc = argc, .argv = argv };
	char *cmdline = NULL, *resume = NULL;
	bool copied = false;
	int status, err;

	pdd_stdout_open();	/* before anything is opened */
	if (pdd_parse_args(argc, argv, &o))
		return pdd_stdout_close(PDD_EXIT_SYNTAX, false);
	if (o.help) {
		pdd_usage(stdout);
		return pdd_stdout_close(PDD_EXIT_OK, false);
	}
	if (o.version) {
		pdd_version(stdout);
		return pdd_stdout_close(PDD_EXIT_OK, false);
	}
	pdd_verbose = o.verbose;
	pdd_signals_install();	/* a signal from here on stops the copy cleanly */

	status = open_both(&o, &in, &out);
	if (status)
		goto out;
	js.in = &in;
	js.out = &out;
	if (pdd_plan_make(&o, &in, &out, &p) || pdd_verify_check(&o, &in, &out, &p) ||
	    pdd_rescue_check(&o, &in, &out, &p)) {
		status = PDD_EXIT_CONTRADICT;
		goto out;
	}
	js.p = &p;
	/* the wrong disk is refused before anything is written, dry run too */
	err = pdd_guard(&p, &in, &out);
	if (err) {
		status = err == -EINVAL ? PDD_EXIT_CONTRADICT : pdd_exit_os(err);
		goto out;
	}
	if (o.map) {
		pdd_map_init(&map, o.map);
		m = &map;
		/* before the map is read: it could be a device, or a side */
		err = pdd_map_check(m, &in, &out);
		if (err) {
			status = err == -EINVAL ? PDD_EXIT_CONTRADICT : PDD_EXIT_FILE_ERROR;
			goto out;
		}
		map.cmdline = cmdline = join_args(argc, argv);
		status = load_map(m, &p, &in, &o);
		if (status)
			goto out;
		js.map = m;
	}
	if (o.dry_run) {
		if (o.status != PDD_STATUS_JSON)	/* stdout is the JSON's */
			dry_run(&o, &p, &in, &out, m);
		goto out;
	}
	if (o.verify == PDD_VERIFY_ONLY) {	/* a check of an earlier copy */
		copied = true;
		err = pdd_verify(&p, &in, &out, &o, &r);
		status = err ? pdd_exit_os(err) : pdd_exit_status(&r);
		goto out;
	}
	status = o.rescue ? rescue(argc, argv, &o, &p, &in, &out, m, &r, &resume, &copied) :
			    copy(argc, argv, &o, &p, &in, &out, m, &r, &resume, &copied);
out:
	if (o.status == PDD_STATUS_JSON) {
		js.r = copied ? &r : NULL;
		js.o = &o;
		js.resume = resume;
		js.dry_run = o.dry_run;
		js.message = copied ? NULL : pdd_first_error();
		js.status = status;
		pdd_report_json(stdout, &js);
	}
	if (m)
		pdd_map_free(m);
	pdd_result_free(&r);
	free(resume);
	free(cmdline);
	pdd_dev_close(&in);
	pdd_dev_close(&out);
	/* of= on standard output: the copy's data went there, not stdio's */
	return pdd_stdout_close(status, !o.out_path || !strcmp(o.out_path, "-"));
}
