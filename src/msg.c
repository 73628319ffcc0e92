// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Diagnostics.  Every message pdd prints about a problem goes through
 * here, so all of them share one prefix, one stream and one verbosity.
 * Messages follow git's guidelines: lowercase, no full stop, the subject
 * quoted.  The progress line (progress.c) is printed here too: on a
 * terminal it stays open, and any message ends it first so that no
 * message is appended to it.
 */
#include <stdarg.h>
#include <stdio.h>

#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "pdd.h"
#include "scsi.h"

FILE *pdd_msg_stream;		/* NULL means stderr; tests point it elsewhere */
int pdd_verbose;
int pdd_msg_columns = -1;	/* -1 asks the stream; tests set a width, or 0 */
static bool line_open;		/* a progress line without its newline is shown */

static FILE *out(void)
{
	return pdd_msg_stream ? pdd_msg_stream : stderr;
}

static void vsay(const char *fmt, va_list ap)
{
	FILE *f = out();

	pdd_msg_end_line();
	fputs("pdd: ", f);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fflush(f);
}

/* The first error of the run, for status=json: the reason a run that
 * stopped before copying gives. */
static char first_error[512];

static void keep_first(const char *fmt, va_list ap)
{
	if (!first_error[0])
		vsnprintf(first_error, sizeof(first_error), fmt, ap);
}

const char *pdd_first_error(void)
{
	return first_error[0] ? first_error : NULL;
}

void pdd_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	keep_first(fmt, ap);
	va_end(ap);
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
	keep_first(fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	fputs("Try 'pdd --help' for more information.\n", out());
	fflush(out());
}

/* The width of the terminal messages go to, or 0 when they do not go to
 * one; 80 for a terminal that does not say. */
unsigned int pdd_msg_terminal(void)
{
	struct winsize ws;
	int fd = fileno(out());

	if (pdd_msg_columns >= 0)
		return (unsigned int)pdd_msg_columns;
	if (fd < 0 || !isatty(fd))
		return 0;
	if (ioctl(fd, TIOCGWINSZ, &ws) || !ws.ws_col)
		return 80;
	return ws.ws_col;
}

/* A progress line.  In place, it goes back to the start of the line,
 * overwrites the last one and clears what is left of it, and stays open
 * without a newline; otherwise it is a line of its own. */
void pdd_msg_progress(const char *line, bool in_place)
{
	FILE *f = out();

	if (in_place) {
		fprintf(f, "\r%s\033[K", line);
		line_open = true;
	} else {
		fprintf(f, "%s\n", line);
	}
	fflush(f);
}

/* End an open progress line, before anything else is printed. */
void pdd_msg_end_line(void)
{
	if (!line_open)
		return;
	fputc('\n', out());
	fflush(out());
	line_open = false;
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
