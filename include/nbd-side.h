/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An NBD side's connections, shared by nbd-side.c (which opens them) and
 * the nbd engine (which sends requests over them).  The first is opened
 * with the side; the others only when the server advertises multi-conn,
 * which promises that a flush on one covers what any has written.
 */
#ifndef PDD_NBD_SIDE_H
#define PDD_NBD_SIDE_H

#include <libnbd.h>
#include <poll.h>

#include "libs.h"
#include "pdd.h"

/* A run of the export as BLOCK_STATUS told it: it ends at end (it
 * begins where the one before ended), and reads as zeros or not. */
struct pdd_nbd_run {
	uint64_t end;
	bool zero;
};

struct pdd_nbd {
	struct nbd_handle *h[PDD_NBD_MAX_CONNS];
	unsigned int n;			/* connections open */
	bool failed;			/* a connection failed or went silent:
					 * closed without a goodbye */
	/* base:allocation on the first connection (nbd-extents.c) */
	bool extents;			/* agreed, and still asked for */
	uint64_t size;			/* the export's */
	uint64_t ext_max;		/* the most one query asks about */
	uint64_t ext_off;		/* the runs known begin here */
	struct pdd_nbd_run *runs;	/* what the last answer said */
	size_t nruns, runcap, at;	/* at: the run last looked at */
};

const char *pdd_nbd_error(void);
int pdd_nbd_errno(void);
void pdd_nbd_want(struct nbd_handle *h, struct pollfd *pfd);
int pdd_nbd_notify(struct nbd_handle *h, short revents);
void pdd_nbd_extents_setup(struct pdd_dev *d);

#endif
