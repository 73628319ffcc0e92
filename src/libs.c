// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Loading libnbd and libcrypto when they are first needed (include/libs.h
 * says why).  Each library is opened once, by the soname pdd was built
 * against (the Makefile reads it off the library), and every function
 * pdd calls is looked up at once, so that a library too old to have one
 * fails here, with its name, and never later in the middle of a copy.
 */
#define PDD_LIBS_IMPL
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#ifdef HAVE_LIBNBD
#include <libnbd.h>
#endif
#ifdef HAVE_LIBCRYPTO
#include <openssl/evp.h>
#endif
#include "libs.h"

#ifdef PDD_LAZY_LIBS
#include <dlfcn.h>

struct lib {
	const char *soname;
	const char *const *names;	/* the functions, in the order of fns */
	void *fns;			/* the struct of their pointers */
	unsigned int n;
	bool tried;
	int err;
	char why[256];
};

#define PDD_LIB_NAME(f) #f,
#define COUNT(a) (sizeof(a) / sizeof(*(a)))
/* a library built against, its functions' names and their pointers (a
 * row of them, as the asserts check); one built without */
#define LIB(soname, names, fns) { soname, names, &fns, COUNT(names), false, 0, "" }
#define NO_LIB(name) { name, NULL, NULL, 0, true, -ENOENT, "pdd was built without " name }

#ifdef HAVE_LIBNBD
struct pdd_nbd_fns pdd_nbd_fns;
static const char *const nbd_names[] = { PDD_NBD_FUNCS(PDD_LIB_NAME) };
_Static_assert(sizeof(pdd_nbd_fns) == COUNT(nbd_names) * sizeof(void *), "a row of pointers");
#define NBD_LIB LIB(PDD_LIBNBD_SONAME, nbd_names, pdd_nbd_fns)
#else
#define NBD_LIB NO_LIB("libnbd")
#endif

#ifdef HAVE_LIBCRYPTO
struct pdd_crypto_fns pdd_crypto_fns;
static const char *const crypto_names[] = { PDD_CRYPTO_FUNCS(PDD_LIB_NAME) };
_Static_assert(sizeof(pdd_crypto_fns) == COUNT(crypto_names) * sizeof(void *), "a row of pointers");
#define CRYPTO_LIB LIB(PDD_LIBCRYPTO_SONAME, crypto_names, pdd_crypto_fns)
#else
#define CRYPTO_LIB NO_LIB("libcrypto")
#endif

static struct lib libs[] = { [PDD_LIB_NBD] = NBD_LIB, [PDD_LIB_CRYPTO] = CRYPTO_LIB };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The struct of pointers is laid out as an array of them: every member
 * is a function pointer of one size, as the asserts below check. */
static int open_lib(struct lib *l)
{
	void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL), *f;

	if (!h) {
		snprintf(l->why, sizeof(l->why), "%s", dlerror());
		return -ENOENT;
	}
	for (unsigned int i = 0; i < l->n; i++) {
		f = dlsym(h, l->names[i]);
		memcpy((char *)l->fns + i * sizeof(f), &f, sizeof(f));
		if (!f) {
			snprintf(l->why, sizeof(l->why), "%s has no %s", l->soname,
				 l->names[i]);
			dlclose(h);
			return -ENOENT;
		}
	}
	return 0;	/* h stays open for the life of the process */
}

int pdd_lib_load(enum pdd_lib lib)
{
	struct lib *l = &libs[lib];
	int err;

	pthread_mutex_lock(&lock);
	if (!l->tried) {
		l->err = open_lib(l);
		l->tried = true;
	}
	err = l->err;
	pthread_mutex_unlock(&lock);
	return err;
}

const char *pdd_lib_error(enum pdd_lib lib)
{
	return libs[lib].err ? libs[lib].why : NULL;
}

#else /* linked in, or not built */

int pdd_lib_load(enum pdd_lib lib)
{
#ifdef HAVE_LIBNBD
	if (lib == PDD_LIB_NBD)
		return 0;
#endif
#ifdef HAVE_LIBCRYPTO
	if (lib == PDD_LIB_CRYPTO)
		return 0;
#endif
	(void)lib;
	return -ENOENT;
}

const char *pdd_lib_error(enum pdd_lib lib)
{
	if (!pdd_lib_load(lib))
		return NULL;
	return lib == PDD_LIB_NBD ? "pdd was built without libnbd" :
				    "pdd was built without libcrypto";
}

#endif
