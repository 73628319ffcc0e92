// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A side on an NBD server, given as a URI as libnbd parses it
 * (nbd://host[:port]/export, nbd+unix:///export?socket=PATH, and the TLS
 * forms nbds:// and nbds+unix://).  Opening connects and asks the server
 * what a disk's sysfs would tell: the size, the block-size constraints
 * (minimum, preferred, maximum: the logical block, the physical block and
 * the largest transfer), whether it is read-only.  The copy's requests
 * go through the nbd engine (src/engines/nbd.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <libnbd.h>
#include <stdio.h>
#include <string.h>

#include "nbd-side.h"
#include "pdd.h"

/* libnbd's last error without the name of the call it came from, which
 * says nothing to a user ("nbd_aio_notify_read: handshake: ..."). */
const char *pdd_nbd_error(void)
{
	const char *m = nbd_get_error();
	const char *p = m;

	if (!m)
		return "unknown error";
	if (strncmp(p, "nbd_", 4))
		return m;
	while (*p == '_' || (*p >= 'a' && *p <= 'z'))
		p++;
	return p[0] == ':' && p[1] == ' ' ? p + 2 : m;
}

/* libnbd's last error as -errno (-EIO when it gave none). */
int pdd_nbd_errno(void)
{
	int err = nbd_get_errno();

	return err > 0 ? -err : -EIO;
}

/* What handle h's state machine waits for, as a pollfd. */
void pdd_nbd_want(struct nbd_handle *h, struct pollfd *pfd)
{
	unsigned int dir = nbd_aio_get_direction(h);

	pfd->fd = nbd_aio_get_fd(h);
	pfd->events = (dir & LIBNBD_AIO_DIRECTION_READ ? POLLIN : 0) |
		      (dir & LIBNBD_AIO_DIRECTION_WRITE ? POLLOUT : 0);
	pfd->revents = 0;
}

/* Let h move as poll() found its socket: 0, or -1 with libnbd's error.
 * As nbd_poll does, a hang-up is read, to find the end. */
int pdd_nbd_notify(struct nbd_handle *h, short revents)
{
	if (revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))
		return nbd_aio_notify_read(h);
	if (revents & POLLOUT)
		return nbd_aio_notify_write(h);
	return 0;
}

/* The server's answer, or -errno with libnbd's message said. */
static int nbd_fail(const struct pdd_dev *d, const char *what)
{
	int err = pdd_nbd_errno();

	pdd_error("cannot %s '%s': %s", what, d->name, pdd_nbd_error());
	return err;
}

/*
 * One more connection to the side's URI: 0, or -errno said.  Made with
 * libnbd's asynchronous calls so that SIGINT and SIGTERM end the wait
 * for a server that accepts and says nothing (a qemu-nbd serving someone
 * else): libnbd's own wait goes on through signals.
 */
static int connect_one(struct pdd_dev *d)
{
	struct pdd_nbd *c = d->nbd;
	struct nbd_handle *h = nbd_create();

	if (!h)
		return nbd_fail(d, "open");
	c->h[c->n++] = h;
	/* a URI's query may name a local file (tls-psk-file=, tls-certificates=):
	 * allowed, as the user gave it */
	nbd_set_uri_allow_local_file(h, true);
	/* an input's first connection asks for the export's zero extents,
	 * which a sparse= copy does not read (nbd-extents.c); a server that
	 * has none simply agrees to nothing */
	if (c->n == 1 && !d->output &&
	    nbd_add_meta_context(h, LIBNBD_CONTEXT_BASE_ALLOCATION) == -1)
		return nbd_fail(d, "connect to");
	if (nbd_aio_connect_uri(h, d->path) == -1)
		return nbd_fail(d, "connect to");
	while (nbd_aio_is_connecting(h)) {
		struct pollfd pfd;
		int r;

		pdd_nbd_want(h, &pfd);
		r = poll(&pfd, 1, 100);

		if (pdd_stop_signal) {
			pdd_error("stopped while connecting to '%s'", d->name);
			return -EINTR;
		}
		if (r < 0 && errno != EINTR) {
			r = -errno;
			pdd_error("cannot connect to '%s': poll: %s", d->name, strerror(-r));
			return r;
		}
		if (r > 0 && pdd_nbd_notify(h, pfd.revents) == -1)
			return nbd_fail(d, "connect to");
	}
	if (!nbd_aio_is_ready(h))
		return nbd_fail(d, "connect to");
	return 0;
}

int pdd_nbd_open(struct pdd_dev *d)
{
	struct nbd_handle *h;
	int64_t size, min, pref, max;
	int err;

	if (pdd_lib_load(PDD_LIB_NBD)) {
		pdd_error("cannot open the NBD URI '%s': %s", d->path,
			  pdd_lib_error(PDD_LIB_NBD));
		return -ELIBACC;
	}
	d->nbd = calloc(1, sizeof(struct pdd_nbd));
	if (!d->nbd)
		return -ENOMEM;
	d->kind = PDD_KIND_NBD;
	err = connect_one(d);
	if (err)
		return err;
	h = ((struct pdd_nbd *)d->nbd)->h[0];
	size = nbd_get_size(h);
	if (size < 0)
		return nbd_fail(d, "get the size of");
	min = nbd_get_block_size(h, LIBNBD_SIZE_MINIMUM);
	pref = nbd_get_block_size(h, LIBNBD_SIZE_PREFERRED);
	max = nbd_get_block_size(h, LIBNBD_SIZE_MAXIMUM);
	/* a server that says nothing, or that takes any byte (minimum 1, as
	 * qemu-nbd says), takes any byte range: 512-byte blocks keep the
	 * copy's own arithmetic (bs= by default), as a file's do, and only a
	 * minimum above 1 is one every request must be a multiple of */
	d->lbs = min > 512 ? (unsigned int)min : 512;
	d->pbs = pref > 0 ? (unsigned int)pref : 4096;
	if (d->pbs < d->lbs)
		d->pbs = d->lbs;
	d->io_align = min > 1 ? (unsigned int)min : 1;
	d->mem_align = 1;
	/* NBD's usual limit when the server says nothing, and never more
	 * than libnbd sends in one request (64 MiB) */
	d->max_xfer = max > 0 ? (uint64_t)max : 32 * 1024 * 1024;
	if (d->max_xfer > 64 * 1024 * 1024)
		d->max_xfer = 64 * 1024 * 1024;
	d->size = (uint64_t)size;
	d->size_known = d->seekable = true;
	pdd_nbd_extents_setup(d);
	if (d->output && nbd_is_read_only(h) == 1) {
		pdd_error("'%s' is a read-only export: it cannot be the output", d->name);
		return -EROFS;
	}
	return 0;
}

/*
 * conns=: more connections when the server advertises multi-conn, which
 * makes them one disk (a flush on one covers all); one otherwise, and a
 * note when more were asked for.  want 0 is the default.
 */
int pdd_nbd_connect(struct pdd_dev *d, unsigned int want)
{
	struct pdd_nbd *c = d->nbd;
	int err = 0;

	if (nbd_can_multi_conn(c->h[0]) != 1) {
		if (want > 1)
			pdd_info(0, "'%s' does not advertise multi-conn: conns=%u becomes 1",
				 d->name, want);
		return 0;
	}
	if (!want)
		want = PDD_NBD_CONNS;
	while (!err && c->n < want)
		err = connect_one(d);
	return err;
}

void pdd_nbd_close(struct pdd_dev *d)
{
	struct pdd_nbd *c = d->nbd;

	if (!c)
		return;
	/* a goodbye that is not waited for, and only on a healthy idle
	 * connection: nbd_shutdown waits for the server with no limit (one
	 * that timeout= gave up on kept pdd for good), and after a failed
	 * send libnbd 1.14 reads a request it has freed */
	for (unsigned int i = 0; i < c->n; i++) {
		if (!c->failed && nbd_aio_is_ready(c->h[i]) == 1 &&
		    nbd_aio_in_flight(c->h[i]) == 0)
			nbd_aio_disconnect(c->h[i], 0);
		nbd_close(c->h[i]);
	}
	free(c->runs);
	free(c);
	d->nbd = NULL;
}

/* Zero extents to be had (BLOCK_STATUS in base:allocation)? */
static int can_extents(struct nbd_handle *h)
{
	return nbd_can_meta_context(h, LIBNBD_CONTEXT_BASE_ALLOCATION);
}

/* The dry run's lines on the export: its name, the server's block sizes,
 * and what it can do (after "logical block N, physical block M, "). */
void pdd_nbd_describe(FILE *f, const struct pdd_dev *d)
{
	const struct pdd_nbd *c = d->nbd;
	struct nbd_handle *h = c->h[0];
	char *name = nbd_get_export_name(h);
	const struct {
		int (*can)(struct nbd_handle *);
		const char *what;
	} feat[] = {
		{ nbd_is_read_only, "read-only" }, { nbd_can_multi_conn, "multi-conn" },
		{ nbd_can_flush, "flush" }, { nbd_can_fua, "FUA" }, { nbd_can_zero, "zero" },
		{ nbd_can_fast_zero, "fast zero" }, { nbd_can_trim, "trim" },
		{ can_extents, "base:allocation" },
	};
	const char *sep = "";

	fprintf(f, "largest transfer %" PRIu64 ", %u connection%s\n", d->max_xfer, c->n,
		c->n == 1 ? "" : "s");
	fprintf(f, "          export '%s', ", name ? name : "");
	free(name);
	for (size_t i = 0; i < sizeof(feat) / sizeof(feat[0]); i++)
		if (feat[i].can(h) == 1) {
			fprintf(f, "%s%s", sep, feat[i].what);
			sep = ", ";
		}
	fprintf(f, "%s\n", *sep ? "" : "no flush, no zero");
}
