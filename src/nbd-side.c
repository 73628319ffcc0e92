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
#include <stdlib.h>
#include <libnbd.h>
#include <stdio.h>
#include <string.h>

#include "pdd.h"

/* The server's answer, or -errno with libnbd's message said. */
static int nbd_fail(const struct pdd_dev *d, const char *what)
{
	int err = nbd_get_errno();

	pdd_error("cannot %s '%s': %s", what, d->name, nbd_get_error());
	return err > 0 ? -err : -EIO;
}

int pdd_nbd_open(struct pdd_dev *d)
{
	struct nbd_handle *h = nbd_create();
	int64_t size, min, pref, max;

	if (!h)
		return nbd_fail(d, "open");
	d->nbd = h;
	d->kind = PDD_KIND_NBD;
	/* a URI's query may name a local file (tls-psk-file=, tls-certificates=):
	 * allowed, as the user gave it */
	nbd_set_uri_allow_local_file(h, true);
	if (nbd_connect_uri(h, d->path) == -1)
		return nbd_fail(d, "connect to");
	size = nbd_get_size(h);
	if (size < 0)
		return nbd_fail(d, "get the size of");
	min = nbd_get_block_size(h, LIBNBD_SIZE_MINIMUM);
	pref = nbd_get_block_size(h, LIBNBD_SIZE_PREFERRED);
	max = nbd_get_block_size(h, LIBNBD_SIZE_MAXIMUM);
	/* a server that says nothing takes any byte range: 512-byte blocks
	 * keep the copy's own arithmetic, as a file's do */
	d->lbs = min > 0 ? (unsigned int)min : 512;
	d->pbs = pref > 0 ? (unsigned int)pref : 4096;
	if (d->pbs < d->lbs)
		d->pbs = d->lbs;
	d->io_align = d->lbs;
	d->mem_align = 1;
	d->max_xfer = max > 0 ? (uint64_t)max : 32 * 1024 * 1024;	/* NBD's usual limit */
	d->size = (uint64_t)size;
	d->size_known = d->seekable = true;
	if (d->output && nbd_is_read_only(h) == 1) {
		pdd_error("'%s' is a read-only export: it cannot be the output", d->name);
		return -EROFS;
	}
	return 0;
}

void pdd_nbd_close(struct pdd_dev *d)
{
	if (d->nbd) {
		nbd_shutdown(d->nbd, 0);
		nbd_close(d->nbd);
		d->nbd = NULL;
	}
}

/* The dry run's lines on the export: its name, the server's block sizes,
 * and what it can do (after "logical block N, physical block M, "). */
void pdd_nbd_describe(FILE *f, const struct pdd_dev *d)
{
	struct nbd_handle *h = d->nbd;
	char *name = nbd_get_export_name(h);
	const struct {
		int (*can)(struct nbd_handle *);
		const char *what;
	} feat[] = {
		{ nbd_is_read_only, "read-only" }, { nbd_can_multi_conn, "multi-conn" },
		{ nbd_can_flush, "flush" }, { nbd_can_fua, "FUA" }, { nbd_can_zero, "zero" },
		{ nbd_can_fast_zero, "fast zero" }, { nbd_can_trim, "trim" },
	};
	const char *sep = "";

	fprintf(f, "largest transfer %" PRIu64 "\n", d->max_xfer);
	fprintf(f, "          export '%s', ", name ? name : "");
	free(name);
	for (size_t i = 0; i < sizeof(feat) / sizeof(feat[0]); i++)
		if (feat[i].can(h) == 1) {
			fprintf(f, "%s%s", sep, feat[i].what);
			sep = ", ";
		}
	fprintf(f, "%s\n", *sep ? "" : "no flush, no zero");
}
