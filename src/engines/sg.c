// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sg engine: SCSI READ and WRITE commands to one sg device, the side
 * it was given, through the driver's asynchronous v3 interface.  A
 * command is written to the device as a struct sg_io_hdr, carrying its
 * slot in usr_ptr and its transfer number as pack_id, and its result is
 * read back once poll() says one is waiting; so the depth in flight is
 * qd=, and no thread is involved.  The driver queues at most 16 commands
 * on one descriptor, so the side opens as many descriptors as the depth
 * needs; when every one of them is full, submit() answers PDD_BUSY and
 * the request stays with the core until a command finishes.  Nothing
 * waits here: the only requests this engine holds are those the device
 * has.
 *
 * A zero run of sparse= (PDD_OP_ZERO) goes as WRITE SAME(16) of one block
 * of zeros, never with UNMAP: a deallocated block need not read back as
 * zeros.  No more blocks go in one command than the device's Block Limits
 * page allows (asked once at init); the core sends the rest again.  A
 * device that answers it with ILLEGAL REQUEST, invalid operation code or
 * invalid field in CDB, does not have it: -EOPNOTSUPP, and the core
 * writes the zeros from then on.
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
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "scsi.h"

#define SG_QUEUE	16	/* commands the driver queues per descriptor */
#define SENSE_LEN	64	/* as much sense as any device returns */

struct sg_side {
	const struct pdd_dev *d;	/* e->dev */
	int *fds;			/* fds[0] is d->fd, the rest are ours */
	unsigned int *queued;		/* commands in flight on each */
	unsigned int nfds;
	unsigned int inflight;		/* the sum of queued[] */
	bool said_raise;		/* the cdbsz raise was reported */
	uint64_t ws_max;		/* WRITE SAME's most blocks; 0: no limit said */
	uint8_t *zero_blk;		/* one logical block of zeros, its data out */
};

struct sg_cmd {				/* one per core buffer, so per request */
	struct pdd_req *rq;
	unsigned int fdi;		/* the descriptor it was written to */
	unsigned int tries[2];		/* unit attentions, aborts so far */
	size_t zero_len;		/* PDD_OP_ZERO: the bytes of rq this WRITE
					 * SAME zeroes */
	uint8_t cdb[16];
	uint8_t sense[SENSE_LEN];
	struct sg_io_hdr hdr;
};

struct sg_priv {
	struct sg_side side;		/* the one this engine drives */
	struct sg_cmd *cmds;		/* e->nbufs of them */
	/* finished and not yet handed back.  reap() reads no more results
	 * than done[] has room for, so this is empty again when it returns
	 * and a finished request is never hidden from pollfd()'s callers. */
	struct pdd_reqq ready;
	struct pollfd *pfd;		/* one per descriptor */
};

static void finish(struct sg_priv *g, struct pdd_req *rq, ssize_t res)
{
	rq->res = res;
	pdd_reqq_push(&g->ready, rq);
}

/* Move up to max finished requests to done[]; how many. */
static unsigned int take_ready(struct sg_priv *g, struct pdd_req **done, unsigned int max)
{
	unsigned int n = 0;

	while (n < max && g->ready.head)
		done[n++] = pdd_reqq_pop(&g->ready);
	return n;
}

/* READ or WRITE of rq's blocks into c->cdb and c->hdr: the CDB's size,
 * or -errno. */
static int rw_cmd(struct sg_side *s, struct sg_cmd *c)
{
	struct pdd_req *rq = c->rq;
	const struct pdd_dev *d = s->d;
	bool wr = rq->op == PDD_OP_WRITE;
	size_t len = rq->len;
	uint64_t lba = rq->off / d->lbs;
	int cdbsz, err;

	if (len % d->lbs) {
		/* a partial last block (the end of a file copied to the
		 * device, or read back for verify=): a SCSI device takes
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
	c->hdr.dxfer_direction = wr ? SG_DXFER_TO_DEV : SG_DXFER_FROM_DEV;
	c->hdr.dxfer_len = (unsigned int)len;
	c->hdr.dxferp = rq->buf;
	c->hdr.flags = d->dio ? SG_FLAG_DIRECT_IO : 0;
	return cdbsz;
}

/* WRITE SAME(16) of zeros over rq's blocks, or as many of them as the
 * device takes in one command: 16, or -errno. */
static int zero_cmd(struct sg_side *s, struct sg_cmd *c)
{
	struct pdd_req *rq = c->rq;
	const struct pdd_dev *d = s->d;
	/* a partial last block (the end of a file input) is zeroed whole,
	 * as a write pads it with zeros */
	uint64_t blocks = (rq->len + d->lbs - 1) / d->lbs;
	int err;

	/* the grain is whole blocks (plan.c), so a run starts on one */
	if (rq->off % d->lbs)
		return -EOPNOTSUPP;
	if (s->ws_max && blocks > s->ws_max)
		blocks = s->ws_max;
	if (blocks > UINT32_MAX)
		blocks = UINT32_MAX;
	c->zero_len = blocks * d->lbs < rq->len ? blocks * d->lbs : rq->len;
	err = pdd_scsi_write_same16_cdb(c->cdb, rq->off / d->lbs, (uint32_t)blocks);
	if (err)
		return err;
	/* one block out, so no direct I/O asked (the block is ours) */
	c->hdr.dxfer_direction = SG_DXFER_TO_DEV;
	c->hdr.dxfer_len = d->lbs;
	c->hdr.dxferp = s->zero_blk;
	return 16;
}

/* Build the command for c->rq and write it to the least busy descriptor.
 * 0, -EAGAIN when every descriptor is full, or -errno. */
static int send_cmd(struct sg_side *s, struct sg_cmd *c)
{
	struct pdd_req *rq = c->rq;
	unsigned int fdi = 0;
	int cdbsz;

	for (unsigned int i = 1; i < s->nfds; i++)
		if (s->queued[i] < s->queued[fdi])
			fdi = i;
	if (s->queued[fdi] >= SG_QUEUE)
		return -EAGAIN;
	memset(&c->hdr, 0, sizeof(c->hdr));
	cdbsz = rq->op == PDD_OP_ZERO ? zero_cmd(s, c) : rw_cmd(s, c);
	if (cdbsz < 0)
		return cdbsz;
	c->hdr.interface_id = 'S';
	c->hdr.cmd_len = (unsigned char)cdbsz;
	c->hdr.cmdp = c->cdb;
	c->hdr.mx_sb_len = SENSE_LEN;
	c->hdr.sbp = c->sense;
	c->hdr.timeout = s->d->timeout_ms;
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
	s->inflight++;
	return 0;
}

static int sg_submit(struct pdd_engine *e, struct pdd_req *rq)
{
	struct sg_priv *g = e->priv;
	struct sg_cmd *c = &g->cmds[rq->buf_idx];
	int err;

	c->rq = rq;
	c->tries[0] = c->tries[1] = 0;
	err = send_cmd(&g->side, c);
	if (err != -EAGAIN)
		return err;
	/* Busy is only an answer while a completion is to come that the
	 * core will be told of; with none in flight here (a descriptor the
	 * driver says is full while we count it empty: someone else's
	 * commands on it) the request would wait for ever. */
	if (!g->side.inflight && !g->ready.head)
		return -EBUSY;
	return PDD_BUSY;
}

/* A command's result is back: done, sent again, or failed. */
static void cmd_done(struct pdd_engine *e, struct sg_cmd *c)
{
	struct sg_priv *g = e->priv;
	struct sg_side *s = &g->side;
	struct pdd_req *rq = c->rq;
	const struct pdd_dev *d = s->d;
	bool recovered;
	uint64_t info;
	int err;

	s->queued[c->fdi]--;
	s->inflight--;
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
		/* its descriptor has just had a place freed, so it fits; a
		 * driver that still says full fails it, as there is no
		 * backlog to keep it in */
		err = send_cmd(s, c);
		if (err)
			finish(g, rq, err == -EAGAIN ? -EBUSY : err);
		return;
	}
	if (err && rq->op == PDD_OP_ZERO && pdd_scsi_refused(c->sense, c->hdr.sb_len_wr)) {
		finish(g, rq, -EOPNOTSUPP);	/* no WRITE SAME here */
		return;
	}
	if (err) {
		if (info != ~0ULL && info >= rq->off / d->lbs &&
		    info < (rq->off + rq->len + d->lbs - 1) / d->lbs)
			rq->bad_off = info * d->lbs;
		finish(g, rq, err);
		return;
	}
	if (rq->op == PDD_OP_ZERO) {	/* its one block went out whole */
		finish(g, rq, c->hdr.resid ? -EIO : (ssize_t)c->zero_len);
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

/* Read up to *room results waiting on one descriptor, counting them off
 * *room.  Results left unread keep the descriptor readable for poll(). */
static int collect(struct pdd_engine *e, int fd, unsigned int *room)
{
	struct sg_io_hdr h;
	int waiting = 0;

	if (ioctl(fd, SG_GET_NUM_WAITING, &waiting) < 0 || waiting < 1)
		waiting = 1;	/* poll() said there is one */
	while (waiting > 0 && *room > 0) {
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
		waiting--;
		(*room)--;
		/* the header comes back whole, usr_ptr and all */
		struct sg_cmd *c = h.usr_ptr;

		c->hdr = h;
		cmd_done(e, c);
	}
	return 0;
}

/* The descriptors with commands in flight, up to max of them. */
static unsigned int busy_fds(const struct sg_side *s, struct pollfd *pfd, unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < s->nfds && n < max; i++)
		if (s->queued[i]) {
			pfd[n].fd = s->fds[i];
			pfd[n].events = POLLIN;
			pfd[n++].revents = 0;
		}
	return n;
}

/* Poll the busy descriptors for up to timeout_ms (negative: no limit)
 * and read up to room results from those that have some.  0, -EINTR
 * when a signal came, or -errno. */
static int wait_some(struct pdd_engine *e, int timeout_ms, unsigned int room)
{
	struct sg_priv *g = e->priv;
	unsigned int n = busy_fds(&g->side, g->pfd, g->side.nfds);
	int r;

	if (!n)
		return 0;	/* nothing in flight: nothing will finish */
	r = poll(g->pfd, n, timeout_ms);
	if (r < 0)
		return -errno;
	for (unsigned int i = 0; i < n && room > 0; i++) {
		if (!g->pfd[i].revents)
			continue;
		if (g->pfd[i].revents & (POLLERR | POLLNVAL))
			return -EIO;
		/* the device is going away: its read() would only say EAGAIN */
		if (g->pfd[i].revents & POLLHUP)
			return -ENODEV;
		r = collect(e, g->pfd[i].fd, &room);
		if (r)
			return r;
	}
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int sg_reap(struct pdd_engine *e, struct pdd_req **done, unsigned int max,
		   int timeout_ms)
{
	struct sg_priv *g = e->priv;
	int64_t end = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
	unsigned int n = take_ready(g, done, max);
	int wait = n ? 0 : timeout_ms;
	int r;

	/* what has finished is taken without waiting, so that a reap
	 * after the core's own poll() sees it; when there is none, wait.
	 * A command sent again after a unit attention finishes nothing,
	 * so the wait goes on until the time is up. */
	for (;;) {
		if (n == max)
			return (int)n;
		r = wait_some(e, wait, max - n);
		n += take_ready(g, done + n, max - n);
		if (r == -EINTR)
			return (int)n;	/* the core looks at its signals */
		if (r < 0)
			return n ? (int)n : r;	/* the error comes back next time */
		if (n || !wait || !g->side.inflight)
			return (int)n;
		if (wait > 0) {
			int64_t left = end - now_ms();

			if (left <= 0)
				return 0;
			wait = (int)left;
		}
	}
}

static unsigned int sg_pollfd(struct pdd_engine *e, struct pollfd *pfd, unsigned int max)
{
	struct sg_priv *g = e->priv;

	return busy_fds(&g->side, pfd, max);
}

static void sg_exit(struct pdd_engine *e)
{
	struct sg_priv *g = e->priv;

	if (!g)
		return;
	for (unsigned int i = 1; i < g->side.nfds; i++)
		close(g->side.fds[i]);
	free(g->side.fds);
	free(g->side.queued);
	free(g->side.zero_blk);
	free(g->cmds);
	free(g->pfd);
	free(g);
	e->priv = NULL;
}

/* Descriptors enough for depth commands at 16 each: the one dev.c
 * opened and more of the same device.  With oflag/iflag=excl no second
 * open is possible; submit() then answers busy beyond what one
 * descriptor takes. */
static int side_open(struct sg_side *s, const struct pdd_dev *d, unsigned int depth,
		     size_t buf_len)
{
	unsigned int want = depth ? (depth + SG_QUEUE - 1) / SG_QUEUE : 1;
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
	struct sg_priv *g;
	int err;

	if (!e->dev || e->dev->kind != PDD_KIND_SG)
		return -EINVAL;		/* engine.c gives this engine sg sides only */
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	e->priv = g;
	g->cmds = calloc(e->nbufs, sizeof(*g->cmds));
	if (!g->cmds) {
		err = -ENOMEM;
		goto fail;
	}
	err = side_open(&g->side, e->dev, e->depth, e->buf_len);
	if (err)
		goto fail;
	g->pfd = calloc(g->side.nfds, sizeof(*g->pfd));
	g->side.zero_blk = calloc(1, e->dev->lbs);
	if (!g->pfd || !g->side.zero_blk) {
		err = -ENOMEM;
		goto fail;
	}
	/* for sparse='s WRITE SAME: a device without the page or the limit
	 * is sent whole runs, and says so if they are too long for it */
	(void)pdd_scsi_write_same_max(e->dev->fd, &g->side.ws_max, pdd_verbose);
	return 0;
fail:
	sg_exit(e);
	return err;
}

/* The sg engine is the one for an sg side (engine.c sees to that);
 * there is nothing more to find out before it starts. */
static int sg_probe(const struct pdd_dev *d)
{
	(void)d;
	return 0;
}

/* flush is NULL: pdd_dev_flush sends an sg side SYNCHRONIZE CACHE */
const struct pdd_engine_ops pdd_sg_ops = {
	.name = "sg",
	.threaded = false,	/* one thread sends and reaps every command */
	.sg = true,
	.probe = sg_probe,
	.default_depth = pdd_async_depth,
	.init = sg_init,
	.submit = sg_submit,
	.reap = sg_reap,
	.pollfd = sg_pollfd,
	.exit = sg_exit,
};
