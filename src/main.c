// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pdd: operands -> devices -> plan -> copy -> report.  Nothing else lives
 * here; this is the only place that turns a failure into an exit status.
 */
#include <errno.h>
#include <stdio.h>

#include "engine.h"
#include "exitcodes.h"
#include "pdd.h"
#include "scsi.h"

static int open_both(const struct pdd_opts *o, struct pdd_dev *in,
		     struct pdd_dev *out)
{
	int err = pdd_dev_open(in, o->in_path, false, o->iflags);

	if (!err)
		err = pdd_dev_open(out, o->out_path, true, o->oflags);
	if (!err) {
		/* how sg commands are built, for the sides that are sg */
		in->cdbsz = out->cdbsz = o->cdbsz;
		in->timeout_ms = out->timeout_ms = o->timeout * 1000;
		in->dio = out->dio = o->dio;
		return 0;
	}
	if (pdd_err_is_scsi(err))	/* READ CAPACITY failed: not ready... */
		return -err - PDD_ESCSI;
	if (err == -ENOTSUP)		/* recognised, but not drivable here */
		return PDD_EXIT_FILE_ERROR;
	return pdd_exit_os(err);
}

int main(int argc, char **argv)
{
	struct pdd_dev in = { .fd = -1 }, out = { .fd = -1 };
	struct pdd_result r;
	struct pdd_plan p;
	struct pdd_opts o;
	int status, err;

	if (pdd_parse_args(argc, argv, &o))
		return PDD_EXIT_SYNTAX;
	if (o.help) {
		pdd_usage(stdout);
		return PDD_EXIT_OK;
	}
	if (o.version) {
		char names[128];

		pdd_engine_names(names, sizeof(names));
		printf("pdd %s\nengines: %s\n", PDD_VERSION, names);
		return PDD_EXIT_OK;
	}
	pdd_verbose = o.verbose;
	pdd_signals_install();	/* a signal from here on stops the copy cleanly */

	status = open_both(&o, &in, &out);
	if (status)
		goto out;
	if (pdd_plan_make(&o, &in, &out, &p)) {
		status = PDD_EXIT_CONTRADICT;
		goto out;
	}
	if (o.dry_run) {
		pdd_plan_print(stdout, &p, &in, &out);
		goto out;
	}
	err = pdd_dev_create(&out, p.out_off);
	if (err) {
		status = pdd_exit_os(err);
		goto out;
	}
	if (in.stream && p.in_off) {
		err = pdd_dev_skip_stream(&in, p.in_off);
		if (err == -ENODATA) {
			pdd_error("'%s' ended before skip=%llu: nothing to copy", in.name,
				  (unsigned long long)o.skip);
			p.total = 0;
		} else if (err) {
			r = (struct pdd_result){ .err = err };
			status = pdd_exit_status(&r);
			goto out;
		}
	}
	err = pdd_copy(&p, &in, &out, &o, &r);
	if (err) {
		status = PDD_EXIT_OTHER;
		goto out;
	}
	pdd_report(&o, &p, &r);
	pdd_print_resume(argc, argv, &p, &in, &out, &r);
	status = pdd_exit_status(&r);
out:
	pdd_dev_close(&in);
	pdd_dev_close(&out);
	return status;
}
