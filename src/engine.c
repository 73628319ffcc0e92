// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The table of engines and the choice among them.  A copy with an sg
 * device on either side takes the sg engine, and no other copy does.
 * Otherwise engine=auto takes the first engine in the table that can
 * drive both sides at full speed: io_uring, then libaio, then threads,
 * which always works.  An engine named on the command line is used if it
 * can run at all.
 */
#include <errno.h>
#include <string.h>

#include "engine.h"

static const struct pdd_engine_ops *const engines[] = {
#ifdef HAVE_LIBURING
	&pdd_uring_ops,
#endif
#ifdef HAVE_LIBAIO
	&pdd_aio_ops,
#endif
	&pdd_threads_ops,
#ifdef HAVE_SGUTILS
	&pdd_sg_ops,		/* for sg devices, and only for them */
#endif
};
#define N_ENGINES (sizeof(engines) / sizeof(engines[0]))

bool pdd_engine_known(const char *name)
{
	if (!strcmp(name, "auto"))
		return true;
	for (size_t i = 0; i < N_ENGINES; i++)
		if (!strcmp(engines[i]->name, name))
			return true;
	return false;
}

/* "auto, uring, aio, threads" for messages */
void pdd_engine_names(char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "auto");

	for (size_t i = 0; i < N_ENGINES && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, ", %s", engines[i]->name);
}

const struct pdd_engine_ops *pdd_engine_choose(const char *name,
					       const struct pdd_dev *in,
					       const struct pdd_dev *out, int *err)
{
	bool any = !strcmp(name, "auto");
	bool sg = in->kind == PDD_KIND_SG || out->kind == PDD_KIND_SG;
	bool said = false;

	*err = -ENOENT;
	for (size_t i = 0; i < N_ENGINES; i++) {
		const struct pdd_engine_ops *ops = engines[i];
		int r;

		if (!any && strcmp(ops->name, name))
			continue;
		if (ops->sg != sg) {
			/* only the sg engine sends SCSI commands, and it
			 * needs an sg device to send them to */
			if (!any)
				pdd_error("engine=%s: %s", name, sg ?
					  "an sg device takes engine=sg (or auto)" :
					  "neither side is an sg device");
			said = !any;
			*err = -EOPNOTSUPP;
			continue;
		}
		r = ops->probe ? ops->probe(in, out) : 0;
		if (r == 0 || (r > 0 && !any))
			return ops;
		if (r > 0)
			pdd_info(1, "engine %s passed over: it would run synchronously here",
				 ops->name);
		else
			pdd_info(1, "engine %s cannot run here: %s", ops->name, strerror(-r));
		*err = r < 0 ? r : -EOPNOTSUPP;
	}
	if (!said)
		pdd_error("engine=%s cannot run here: %s", name, strerror(-*err));
	return NULL;
}

/* Start ops with the sides, sizes and buffers given in want. */
int pdd_engine_start(struct pdd_engine *e, const struct pdd_engine_ops *ops,
		     const struct pdd_engine *want)
{
	*e = *want;
	e->ops = ops;
	e->priv = NULL;
	return ops->init(e);
}

/*
 * Default queue depth of the asynchronous engines: deep enough that small
 * transfers keep the device busy (64 requests), shallow enough that large
 * ones do not hoard memory (16 MiB in flight), never below 4.  Measured
 * with scripts/bench.sh on 1 GiB loop devices: at 4 KiB, 64 in flight
 * copied 556 MiB/s (disk-backed) and 1145 MiB/s (memory-backed) against
 * 416 and 845 with 32; at 1 MiB, 16 in flight (16 MiB) copied 6632 MiB/s
 * on memory-backed loops against 5456 with 32, and on disk-backed ones
 * the two were within the noise.  qd= overrides it.
 */
unsigned int pdd_async_depth(size_t xfer, unsigned int threads)
{
	size_t by_mem = (16u << 20) / xfer;

	(void)threads;		/* one submitting thread: threads= plays no part */
	if (by_mem > 64)
		return 64;
	return by_mem < 4 ? 4 : (unsigned int)by_mem;
}
