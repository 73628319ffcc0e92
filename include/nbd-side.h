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

#include "pdd.h"

struct pdd_nbd {
	struct nbd_handle *h[PDD_NBD_MAX_CONNS];
	unsigned int n;			/* connections open */
	bool failed;			/* a connection failed or went silent:
					 * closed without a goodbye */
};

const char *pdd_nbd_error(void);
int pdd_nbd_errno(void);
void pdd_nbd_want(struct nbd_handle *h, struct pollfd *pfd);
int pdd_nbd_notify(struct nbd_handle *h, short revents);

#endif
