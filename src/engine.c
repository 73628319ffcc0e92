// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The table of engines and the choice among them.  engine=auto takes the
 * first engine in the table whose probe accepts both sides.
 */
#include <errno.h>
#include <string.h>

#include "engine.h"

static const struct pdd_engine_ops *const engines[] = {
	&pdd_threads_ops,
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

/* "auto, threads" for messages and --help */
void pdd_engine_names(char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "auto");

	for (size_t i = 0; i < N_ENGINES && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, ", %s", engines[i]->name);
}

/* Start the engine called name (or the first that works, for "auto"),
 * with the sides, sizes and buffers given in want. */
int pdd_engine_setup(struct pdd_engine *e, const char *name,
		     const struct pdd_engine *want)
{
	bool any = !strcmp(name, "auto");
	int err = -ENOENT;

	for (size_t i = 0; i < N_ENGINES; i++) {
		const struct pdd_engine_ops *ops = engines[i];

		if (!any && strcmp(ops->name, name))
			continue;
		err = ops->probe ? ops->probe(want->in, want->out) : 0;
		if (!err) {
			*e = *want;
			e->ops = ops;
			e->priv = NULL;
			err = ops->init(e);
		}
		if (!err)
			return 0;
		pdd_info(1, "engine %s cannot run here: %s", ops->name, strerror(-err));
	}
	return err;
}
