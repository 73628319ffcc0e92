// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Diagnostics.  Every message pdd prints about a problem goes through
 * here, so all of them share one prefix, one stream and one verbosity.
 * Messages follow git's guidelines: lowercase, no full stop, the subject
 * quoted.  The progress line (progress.c) is printed here too: on a
 * terminal it stays open, and any message ends it first so that no
 * message is appended to it.  The end of standard output is checked
 * here too, as a write error is one more diagnostic.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "exitcodes.h"
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

/* The first error writing standard output: stdio forgets it once the
 * buffer that failed is dropped, and a later flush then succeeds. */
static int stdout_err;

static ssize_t stdout_write(void *cookie, const char *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	(void)cookie;
	while (done < len) {
		n = write(STDOUT_FILENO, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			if (!stdout_err)
				stdout_err = errno;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int stdout_close(void *cookie)
{
	(void)cookie;
	if (close(STDOUT_FILENO) < 0) {
		if (!stdout_err)
			stdout_err = errno;
		return -1;
	}
	return 0;
}

/*
 * Before anything is opened or printed.  Standard output or error that
 * the shell closed (>&-) is held with /dev/null opened read-only, so that
 * no file pdd opens takes its number and the JSON or a message is never
 * written into a copy's output; a write to it still fails with EBADF, as
 * on the closed descriptor.  Standard input is left as it is: a held one
 * would read as empty.  stdout becomes a stream that keeps the first
 * write error for pdd_stdout_close() to name.
 */
void pdd_stdout_open(void)
{
	static const cookie_io_functions_t io = {
		.write = stdout_write,
		.close = stdout_close,
	};
	FILE *f;

	for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++) {
		int held;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		held = open("/dev/null", O_RDONLY);
		if (held >= 0 && held != fd) {	/* standard input was closed too */
			dup2(held, fd);
			close(held);
		}
	}
	f = fopencookie(NULL, "w", io);
	if (!f)
		return;		/* the plain stream, which reports less */
	if (isatty(STDOUT_FILENO))	/* lines keep their place among messages */
		setvbuf(f, NULL, _IOLBF, 0);
	stdout = f;	/* glibc lets a program set it */
}

/*
 * At the end, as coreutils' close_stdout: what pdd printed on standard
 * output (help, version, the dry run's plan, the JSON) is flushed and
 * checked, so that a full disk or a closed descriptor is not a silent
 * success.  Returns the status to exit with: a run that failed keeps its
 * own, one that succeeded becomes a file error.  When standard output is
 * the copy's output (data), the copy reported its own write errors and
 * the descriptor is its, so it is flushed here but not closed.
 */
int pdd_stdout_close(int status, bool data)
{
	bool pending = __fpending(stdout) > 0;
	int err = 0;

	errno = 0;
	if (fflush(stdout) == EOF || ferror(stdout))
		err = stdout_err ? stdout_err : errno ? errno : EIO;
	/* nothing printed on a closed standard output is no error */
	if (!data && fclose(stdout) == EOF && !err && (pending || errno != EBADF))
		err = stdout_err ? stdout_err : errno;
	if (err) {
		pdd_error("error writing standard output: %s", strerror(err));
		return status ? status : PDD_EXIT_FILE_ERROR;
	}
	/* the copy's data went to it: a file system may report a failed
	 * write-back only now (NFS, FUSE), as for a named output */
	if (data && close(STDOUT_FILENO) < 0 && errno != EBADF) {
		struct pdd_result r = { .err = -errno, .err_op = PDD_OP_CLOSE };

		pdd_error("error closing 'standard output': %s", strerror(errno));
		return status ? status : pdd_exit_status(&r);
	}
	return status;
}
