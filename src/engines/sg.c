// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sg engine: SCSI READ and WRITE commands to sg devices through the
 * driver's asynchronous v3 interface.  A command is written to the device
 * as a struct sg_io_hdr, carrying its request in usr_ptr and its transfer
 * number as pack_id, and its result is read back once poll() says one is
 * waiting; so the depth in flight is qd=, not the number of threads.  The
 * driver queues at most 16 commands on one descriptor, so each sg side
 * opens as many descriptors as the depth needs, and anything beyond what
 * they take waits here in a backlog.
 *
 * A side that is not an sg device (a file, a block device, a pipe) is
 * handed to the threads engine running inside this one; it rings an
 * eventfd that is polled together with the sg descriptors.
 *
 * Each command is retried here after a unit attention (10 times) or an
 * aborted command (256 times); any other failure goes back to the core
 * as a pdd error, a medium error with the first bad block's offset from
 * the sense INFO field in rq->bad_off, for coe.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <scsi/sg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "engine.h"
#include "scsi.h"

#define SG_QUEUE	16	/* commands the driver queues per descriptor */
#define SENSE_LEN	64	/* as much sense as any device returns */

struct sg_side {
	const struct pdd_dev *d;	/* NULL: this side is not an sg device */
	int *fds;			/* fds[0] is d->fd, the rest are ours */
	unsigned int *queued;		/* commands in flight on each */
	unsigned int nfds;
	bool said_raise;		/* the cdbsz raise was reported */
};

struct sg_cmd {				/* one per core buffer, so per request */
	struct pdd_req *rq;
	struct sg_side *side;
	unsigned int fdi;		/* the descriptor it was written to */
	unsigned int tries[2];		/* unit attentions, aborts so far */
	uint8_t cdb[16];
	uint8_t sense[SENSE_LEN];
	struct sg_io_hdr hdr;
};

struct sg_priv {
	struct sg_side side[2];		/* the input, the output */
	struct sg_cmd *cmds;		/* e->nbufs of them */
	struct pdd_engine inner;	/* threads, for a side that is not sg */
	bool has_inner;
	unsigned int inner_busy;	/* requests in the inner engine */
	int efd;			/* the inner engine's eventfd, or -1 */
	struct pdd_req *backlog, *backlog_tail;	/* no descriptor had room */
	struct pdd_req *ready, *ready_tail;	/* finished here, not reaped */
	struct pollfd *pfd;		/* every descriptor, and efd */
};

static void push(struct pdd_req **head, struct pdd_req **tail, struct pdd_req *rq)
{
	rq->next = NULL;
	if (*tail)
		(*tail)->next = rq;
	else
		*head = rq;
	*tail = rq;
}

static struct pdd_req *pop(struct pdd_req **head, struct pdd_req **tail)
{
	struct pdd_req *rq = *head;

	if (rq) {
		*head = rq->next;
		if (!*head)
			*tail = NULL;
	}
	return rq;
}

static struct sg_side *side_of(struct sg_priv *g, const struct pdd_req *rq)
{
	struct sg_side *s = &g->side[rq->op == PDD_OP_WRITE];

	return s->d ? s : NULL;
}

static void finish(struct sg_priv *g, struct pdd_req *rq, ssize_t res)
{
	rq->res = res;
	push(&g->ready, &g->ready_tail, rq);
}

/* Build the command for rq and write it to the least busy descriptor.
 * 0, -EAGAIN when every descriptor is full, or -errno. */
static int send_cmd(struct sg_cmd *c)
{
	struct sg_side *s = c->side;
	struct pdd_req *rq = c->rq;
	const struct pdd_dev *d = s->d;
	bool wr = rq->op == PDD_OP_WRITE;
	size_t len = rq->len;
	uint64_t lba = rq->off / d->lbs;
	unsigned int fdi = 0;
	int cdbsz, err;

	for (unsigned int i = 1; i < s->nfds; i++)
		if (s->queued[i] < s->queued[fdi])
			fdi = i;
	if (s->queued[fdi] >= SG_QUEUE)
		return -EAGAIN;
	if (len % d->lbs) {
		/* the last, partial block of the input: a SCSI device takes
		 * whole blocks, so the rest of it goes as zeros (the buffer
		 * is a whole number of blocks long, and ours while in flight) */
		size_t pad = d->lbs - len % d->lbs;

		memset((char *)rq->buf + len, 0, pad);
		len += pad;
	}
	cdbsz = pdd_scsi_cdbsz_for((int)d->cdbsz, lba, (uint32_t)(len / d->lbs));
	if (cdbsz < 0)
		return -EINVAL;
	if (cdbsz != (int)d->cdbsz && !s->said_raise) {
		s->said_raise = true;
		pdd_info(1, "'%s': cdbsz=%u cannot address LBA %" PRIu64 " + %zu blocks; using %d-byte CDBs",
			 d->name, d->cdbsz, lba, len / d->lbs, cdbsz);
	}
	err = pdd_scsi_rw_cdb(c->cdb, cdbsz, wr, lba, (uint32_t)(len / d->lbs),
			      (d->flags & PDD_F_FUA) && cdbsz > 6,
			      (d->flags & PDD_F_DPO) && cdbsz > 6);
	if (err)
		return err;

	memset(&c->hdr, 0, sizeof(c->hdr));
	c->hdr.interface_id = 'S';
	c->hdr.dxfer_direction = wr ? SG_DXFER_TO_DEV : SG_DXFER_FROM_DEV;
	c->hdr.cmd_len = (unsigned char)cdbsz;
	c->hdr.cmdp = c->cdb;
	c->hdr.mx_sb_len = SENSE_LEN;
	c->hdr.sbp = c->sense;
	c->hdr.dxfer_len = (unsigned int)len;
	c->hdr.dxferp = rq->buf;
	c->hdr.timeout = d->timeout_ms;
	c->hdr.flags = d->dio ? SG_FLAG_DIRECT_IO : 0;
	c->hdr.pack_id = (int)rq->idx;
	c->hdr.usr_ptr = c;
	while (write(s->fds[fdi], &c->hdr, sizeof(c->hdr)) < 0) {
		if (errno == EINTR)
			continue;
		/* EDOM: the driver's queue is full after all */
		return errno == EDOM ? -EAGAIN : -errno;
	}
	c->fdi = fdi;
	s->queued[fdi]++;
	return 0;
}

/* Send what waits in the backlog while descriptors have room. */
static void drain_backlog(struct pdd_engine *e)
{
	struct sg_priv *g = e->priv;
	int err;

	while (g->backlog) {
		struct sg_cmd *c = &g->cmds[g->backlog->buf_idx];

		err = send_cmd(c);
		if (err == -EAGAIN)
			return;
		pop(&g->backlog, &g->backlog_tail);
		if (err)
			finish(g, c->rq, err);
	}
}

/* Send c, or let it wait behind the others when no descriptor has room
 * or some already wait, so that commands go in the order they came. */
static int send_or_wait(struct pdd_engine *e, struct sg_cmd *c)
{
	struct sg_priv *g = e->priv;
	int err = g->backlog ? -EAGAIN : send_cmd(c);

	if (err == -EAGAIN) {
		push(&g->backlog, &g->backlog_tail, c->rq);
		return 0;
	}
	return err;
}

static int sg_submit(struct pdd_engine *e, struct pdd_req *rq)
{
	struct sg_priv *g = e->priv;
	struct sg_side *s = side_of(g, rq);
	struct sg_cmd *c;
	int err;

	if (!s) {
		err = g->inner.ops->submit(&g->inner, rq);
		if (!err)
			g->inner_busy++;
		return err;
	}
	c = &g->cmds[rq->buf_idx];
	c->rq = rq;
	c->side = s;
	c->tries[0] = c->tries[1] = 0;
	return send_or_wait(e, c);
}

/* A command's result is back: done, sent again, or failed. */
static void cmd_done(struct pdd_engine *e, struct sg_cmd *c)
{
	struct sg_priv *g = e->priv;
	struct pdd_req *rq = c->rq;
	const struct pdd_dev *d = c->side->d;
	bool recovered;
	uint64_t info;
	int err;

	c->side->queued[c->fdi]--;
	err = pdd_scsi_result(&c->hdr, &info, &recovered);
	if (recovered) {
		e->recovered++;
		if (info != ~0ULL)
			pdd_info(0, "'%s': the device recovered an error at LBA %" PRIu64,
				 d->name, info);
		else
			pdd_info(0, "'%s': the device recovered an error in LBA %" PRIu64 "+%zu",
				 d->name, rq->off / d->lbs, rq->len / d->lbs);
	}
	if (err && pdd_scsi_again(err, c->tries)) {
		pdd_info(1, "'%s': %s at LBA %" PRIu64 ", sending the command again",
			 d->name, pdd_strerror(err), rq->off / d->lbs);
		err = send_or_wait(e, c);
		if (err)
			finish(g, rq, err);
		return;
	}
	if (err) {
		if (info != ~0ULL && info >= rq->off / d->lbs &&
		    info < (rq->off + rq->len + d->lbs - 1) / d->lbs)
			rq->bad_off = info * d->lbs;
		finish(g, rq, err);
		return;
	}
	if (c->hdr.resid > 0 && (size_t)c->hdr.resid < c->hdr.dxfer_len) {
		/* fewer bytes than asked: the core sends the rest again */
		size_t moved = c->hdr.dxfer_len - (size_t)c->hdr.resid;

		moved -= moved % d->lbs;
		finish(g, rq, (ssize_t)(moved < rq->len ? moved : rq->len));
		return;
	}
	if (c->hdr.resid != 0) {
		finish(g, rq, -EIO);
		return;
	}
	finish(g, rq, (ssize_t)rq->len);
}

/* Read the results waiting on one descriptor. */
static int collect(struct pdd_engine *e, int fd)
{
	struct sg_io_hdr h;
	int waiting = 0;

	if (ioctl(fd, SG_GET_NUM_WAITING, &waiting) < 0 || waiting < 1)
		waiting = 1;	/* poll() said there is one */
	while (waiting-- > 0) {
		memset(&h, 0, sizeof(h));
		h.interface_id = 'S';
		/* a v3 read: the driver looks for a negative direction here */
		h.dxfer_direction = SG_DXFER_FROM_DEV;
		h.pack_id = -1;
		if (read(fd, &h, sizeof(h)) < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return -errno;
		}
		/* the header comes back whole, usr_ptr and all */
		struct sg_cmd *c = h.usr_ptr;

		c->hdr = h;
		cmd_done(e, c);
	}
	return 0;
}

/* Wait for something to finish, on the sg descriptors or in the inner
 * engine, and take it in. */
static int wait_some(struct pdd_engine *e)
{
	struct sg_priv *g = e->priv;
	unsigned int n = 0;
	int r;

	for (int k = 0; k < 2; k++)
		for (unsigned int i = 0; i < g->side[k].nfds; i++)
			if (g->side[k].queued[i]) {
				g->pfd[n].fd = g->side[k].fds[i];
				g->pfd[n++].events = POLLIN;
			}
	if (g->inner_busy) {
		g->pfd[n].fd = g->efd;
		g->pfd[n++].events = POLLIN;
	}
	if (!n)
		return -EINVAL;		/* nothing in flight: nothing to wait for */
	r = poll(g->pfd, n, -1);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	for (unsigned int i = 0; i < n; i++) {
		int err;

		if (!g->pfd[i].revents)
			continue;
		if (g->pfd[i].fd == g->efd) {
			uint64_t cnt;

			if (read(g->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
				return -errno;
			continue;
		}
		if (g->pfd[i].revents & (POLLERR | POLLNVAL))
			return -EIO;
		err = collect(e, g->pfd[i].fd);
		if (err)
			return err;
	}
	return 0;
}

static int sg_reap(struct pdd_engine *e, struct pdd_req **done, unsigned int max)
{
	struct sg_priv *g = e->priv;
	unsigned int n = 0;
	int r;

	for (;;) {
		while (n < max && g->ready)
			done[n++] = pop(&g->ready, &g->ready_tail);
		if (n < max && g->has_inner && g->inner_busy) {
			r = g->inner.ops->reap(&g->inner, done + n, max - n);
			if (r < 0)
				return r;
			g->inner_busy -= (unsigned int)r;
			n += (unsigned int)r;
		}
		if (n)
			return (int)n;
		r = wait_some(e);
		if (r)
			return r;
		drain_backlog(e);
	}
}

static void side_close(struct sg_side *s)
{
	for (unsigned int i = 1; i < s->nfds; i++)
		close(s->fds[i]);
	free(s->fds);
	free(s->queued);
}

static void sg_exit(struct pdd_engine *e)
{
	struct sg_priv *g = e->priv;

	if (!g)
		return;
	if (g->has_inner)
		g->inner.ops->exit(&g->inner);
	for (int k = 0; k < 2; k++)
		side_close(&g->side[k]);
	if (g->efd >= 0)
		close(g->efd);
	free(g->cmds);
	free(g->pfd);
	free(g);
	e->priv = NULL;
}

/* Descriptors enough for depth commands at 16 each: the one dev.c
 * opened and more of the same device.  With oflag/iflag=excl no second
 * open is possible; the backlog then holds what one descriptor cannot. */
static int side_open(struct sg_side *s, const struct pdd_dev *d, unsigned int depth,
		     size_t buf_len)
{
	unsigned int want = (depth + SG_QUEUE - 1) / SG_QUEUE;
	int rsv = buf_len > INT32_MAX ? INT32_MAX : (int)buf_len;

	s->d = d;
	s->fds = calloc(want, sizeof(*s->fds));
	s->queued = calloc(want, sizeof(*s->queued));
	if (!s->fds || !s->queued)
		return -ENOMEM;
	s->fds[0] = d->fd;
	s->nfds = 1;
	while (s->nfds < want && !(d->flags & PDD_F_EXCL)) {
		int fd = open(d->path, O_RDWR | O_CLOEXEC | O_NONBLOCK);

		if (fd < 0) {
			pdd_info(1, "'%s': a descriptor more could not be opened (%s); %u commands in flight at most",
				 d->name, strerror(errno), s->nfds * SG_QUEUE);
			break;
		}
		s->fds[s->nfds++] = fd;
	}
	/* the reserved buffer serves one command per descriptor without
	 * the driver allocating; a refusal only costs that */
	for (unsigned int i = 0; i < s->nfds; i++)
		(void)ioctl(s->fds[i], SG_SET_RESERVED_SIZE, &rsv);
	return 0;
}

static int sg_init(struct pdd_engine *e)
{
	struct sg_priv *g = calloc(1, sizeof(*g));
	const struct pdd_dev *sides[2] = { e->in, e->out };
	unsigned int npfd = 1;
	int err = 0;

	if (!g)
		return -ENOMEM;
	g->efd = -1;
	e->priv = g;
	g->cmds = calloc(e->nbufs, sizeof(*g->cmds));
	if (!g->cmds)
		goto nomem;
	for (int k = 0; k < 2; k++) {
		if (sides[k]->kind == PDD_KIND_SG) {
			err = side_open(&g->side[k], sides[k], e->depth, e->buf_len);
			if (err)
				goto fail;
			npfd += g->side[k].nfds;
		} else if (sides[k]->kind != PDD_KIND_NULL || k == 0) {
			g->has_inner = true;
		}
	}
	g->pfd = calloc(npfd, sizeof(*g->pfd));
	if (!g->pfd)
		goto nomem;
	if (g->has_inner) {
		g->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (g->efd < 0) {
			err = -errno;
			goto fail;
		}
		err = pdd_engine_start(&g->inner, &pdd_threads_ops, &(struct pdd_engine){
			.threads = e->threads, .depth = e->depth, .in = e->in, .out = e->out,
			.bufs = e->bufs, .nbufs = e->nbufs, .buf_len = e->buf_len,
			.notify = true, .notify_fd = g->efd });
		if (err) {
			g->has_inner = false;
			goto fail;
		}
	}
	return 0;
nomem:
	err = -ENOMEM;
fail:
	sg_exit(e);
	return err;
}

/* The sg engine is the one for a copy with an sg side (engine.c sees to
 * that); there is nothing more to find out before it starts. */
static int sg_probe(const struct pdd_dev *in, const struct pdd_dev *out)
{
	(void)in;
	(void)out;
	return 0;
}

const struct pdd_engine_ops pdd_sg_ops = {
	.name = "sg",
	.threaded = true,	/* threads= serves the side that is not sg */
	.sg = true,
	.probe = sg_probe,
	.default_depth = pdd_async_depth,
	.init = sg_init,
	.submit = sg_submit,
	.reap = sg_reap,
	.exit = sg_exit,
};
