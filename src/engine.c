// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The table of engines and the choice of each side's.  An sg device
 * always takes the sg engine, and nothing else does; an output that
 * discards (/dev/null) takes none.  Every other side takes the engine
 * engine= names if it can run at all, and with engine=auto the first in
 * the table that drives it at full speed: io_uring, then libaio, then
 * threads, which always works.
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
#ifdef HAVE_LIBNBD
	&pdd_nbd_ops,		/* for NBD exports, and only for them */
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

/* The engine for side d, not an sg device.  said has a bit for each
 * engine whose refusal was said already (a probe answers the same for
 * both sides). */
static int choose_one(const char *name, const struct pdd_dev *d, unsigned int *said,
		      const struct pdd_engine_ops **chosen)
{
	bool any = !strcmp(name, "auto");
	int err = -ENOENT;

	for (size_t i = 0; i < N_ENGINES; i++) {
		const struct pdd_engine_ops *ops = engines[i];
		int r;

		if (ops->sg || ops->nbd || (!any && strcmp(ops->name, name)))
			continue;
		r = ops->probe ? ops->probe(d) : 0;
		if (r > 0 && !any && d->stream) {
			/* in order, and synchronously: inside the copy loop,
			 * where a pipe that waits for its writer would stop
			 * progress lines and signals; a worker waits instead */
			pdd_info(1, "engine %s would read or write '%s' inside the copy loop: "
				 "the threads engine does", ops->name, d->name);
			*chosen = &pdd_threads_ops;
			return 0;
		}
		if (r == 0 || (r > 0 && !any)) {
			*chosen = ops;
			return 0;
		}
		err = r < 0 ? r : -EOPNOTSUPP;
		if (*said & (1u << i))
			continue;
		*said |= 1u << i;
		if (r > 0)
			pdd_info(1, "engine %s passed over: it would run synchronously here",
				 ops->name);
		else
			pdd_info(1, "engine %s cannot run here: %s", ops->name, strerror(-r));
	}
	pdd_error("engine=%s cannot run here: %s", name, strerror(-err));
	return err;
}

/*
 * Each side's engine into ops[] (input, output; NULL for an output that
 * discards).  engine=sg names the engine of the sg sides, so it needs
 * one; a side that is not an sg device then takes auto's choice.
 * Returns 0, or -errno when a side has none that can run (said why).
 */
int pdd_engine_choose(const char *name, const struct pdd_dev *in,
		      const struct pdd_dev *out, const struct pdd_engine_ops *ops[2])
{
	const struct pdd_dev *side[2] = { in, out };
	bool sg = in->kind == PDD_KIND_SG || out->kind == PDD_KIND_SG;
	unsigned int said = 0;
	int err;

	if (!strcmp(name, "sg")) {
		if (!sg) {
			pdd_error("engine=sg: neither side is an sg device");
			return -EOPNOTSUPP;
		}
		name = "auto";
	}
	if (!strcmp(name, "nbd")) {	/* likewise the engine of NBD sides */
		if (in->kind != PDD_KIND_NBD && out->kind != PDD_KIND_NBD) {
			pdd_error("engine=nbd: neither side is an NBD export");
			return -EOPNOTSUPP;
		}
		name = "auto";
	}
	for (int k = 0; k < 2; k++) {
		ops[k] = NULL;
		if (k == 1 && out->kind == PDD_KIND_NULL)
			continue;
#ifdef HAVE_LIBNBD
		if (side[k]->kind == PDD_KIND_NBD) {	/* only libnbd speaks NBD */
			ops[k] = &pdd_nbd_ops;
			continue;
		}
#endif
		if (side[k]->kind == PDD_KIND_SG) {
#ifdef HAVE_SGUTILS
			ops[k] = &pdd_sg_ops;
			continue;
#else
			pdd_error("'%s' is an sg device, and pdd was built without libsgutils2",
				  side[k]->name);
			return -EOPNOTSUPP;
#endif
		}
		err = choose_one(name, side[k], &said, &ops[k]);
		if (err)
			return err;
	}
	return 0;
}

/* Start ops on the side, sizes and buffers given in want. */
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
	(void)threads;		/* one submitting thread: threads= plays no part */
	return pdd_depth_for(16u << 20, xfer);
}

/* Requests of xfer bytes that fill window bytes in flight: 4 to 64. */
unsigned int pdd_depth_for(size_t window, size_t xfer)
{
	size_t n = window / xfer;

	return n > 64 ? 64 : n < 4 ? 4 : (unsigned int)n;
}
