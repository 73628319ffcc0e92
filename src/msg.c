// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Diagnostics.  Every message pdd prints about a problem goes through
 * here, so all of them share one prefix, one stream and one verbosity.
 * Messages follow git's guidelines: lowercase, no full stop, the subject
 * quoted.
 */
#include <stdarg.h>
#include <stdio.h>

#include <string.h>

#include "pdd.h"
#include "scsi.h"

FILE *pdd_msg_stream;		/* NULL means stderr; tests point it elsewhere */
int pdd_verbose;

static FILE *out(void)
{
	return pdd_msg_stream ? pdd_msg_stream : stderr;
}

static void vsay(const char *fmt, va_list ap)
{
	FILE *f = out();

	fputs("pdd: ", f);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fflush(f);
}

void pdd_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

/* Shown only from verbose=level up. */
void pdd_info(int level, const char *fmt, ...)
{
	va_list ap;

	if (pdd_verbose < level)
		return;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

/* A bad command line: the problem, then where to read about it. */
void pdd_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	fputs("Try 'pdd --help' for more information.\n", out());
	fflush(out());
}

/* strerror() that also names the SCSI categories the sg engine reports.
 * Not reentrant; only the copy loop's thread calls it. */
const char *pdd_strerror(int err)
{
	static char buf[128];

	if (pdd_err_is_scsi(err))
		return pdd_scsi_strerror(err, buf, (int)sizeof(buf));
	return strerror(err < 0 ? -err : err);
}
