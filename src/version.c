// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --version: pdd's version, the engines and digests built in, and one
 * line for each library pdd can be built with: its version, or why it
 * was left out.  A library that can say its version at run time is
 * asked (libsgutils2, libcrypto, libmount, libnbd), since a shared one
 * may have been upgraded since the build; liburing 2.3 and libaio have no
 * such call, so theirs is the version built with, from the Makefile.
 * The libraries are listed here alone: each has its #ifdef once, at the
 * top level, as engine.c has its engines.
 */
#include <stdio.h>

#include "engine.h"
#include "hash.h"
#include "pdd.h"

#ifdef HAVE_SGUTILS
#include <scsi/sg_lib.h>
#endif
#ifdef HAVE_LIBCRYPTO
#include <openssl/evp.h>	/* and crypto.h, for libs.h */
#endif
#ifdef HAVE_LIBMOUNT
#include <libmount.h>
#endif
#ifdef HAVE_LIBNBD
#include <libnbd.h>
#endif
#include "libs.h"

/* Why a library is not in this pdd: the static build says which have no
 * static archive (make static); else it was not installed, or left out
 * with make HAVE_...= */
#ifndef PDD_NO_URING
#define PDD_NO_URING "not built"
#endif
#ifndef PDD_NO_AIO
#define PDD_NO_AIO "not built"
#endif
#ifndef PDD_NO_SGUTILS
#define PDD_NO_SGUTILS "not built"
#endif
#ifndef PDD_NO_LIBCRYPTO
#define PDD_NO_LIBCRYPTO "not built"
#endif
#ifndef PDD_NO_LIBMOUNT
#define PDD_NO_LIBMOUNT "not built"
#endif
#ifndef PDD_NO_LIBNBD
#define PDD_NO_LIBNBD "not built"
#endif

#if defined(HAVE_LIBURING) && defined(PDD_LIBURING_VERSION)
static const char uring_version[] = PDD_LIBURING_VERSION;
#elif defined(HAVE_LIBURING)
static const char uring_version[] = "(version not known)";
#else
static const char uring_version[] = PDD_NO_URING;
#endif

#if defined(HAVE_LIBAIO) && defined(PDD_LIBAIO_VERSION)
static const char aio_version[] = PDD_LIBAIO_VERSION;
#elif defined(HAVE_LIBAIO)
static const char aio_version[] = "(version not known)";
#else
static const char aio_version[] = PDD_NO_AIO;
#endif

#ifdef HAVE_SGUTILS
static const char *sgutils_version(void) { return sg_lib_version(); }
#else
static const char *sgutils_version(void) { return PDD_NO_SGUTILS; }
#endif

#ifdef HAVE_LIBCRYPTO
/* the shared pdd loads it to ask (libs.c): a library that will not load
 * is named with the loader's reason */
static const char *crypto_version(void)
{
	static char why[320];

	if (!pdd_lib_load(PDD_LIB_CRYPTO))
		return OpenSSL_version(OPENSSL_VERSION);
	snprintf(why, sizeof(why), "cannot be loaded (%s)", pdd_lib_error(PDD_LIB_CRYPTO));
	return why;
}
#else
static const char *crypto_version(void) { return PDD_NO_LIBCRYPTO; }
#endif

#ifdef HAVE_LIBMOUNT
static const char *mount_version(void)
{
	const char *v = NULL;

	mnt_get_library_version(&v);
	return v ? v : "(version not known)";
}
#elif defined(HAVE_PROCMOUNTS)
static const char *mount_version(void)
{
	return PDD_NO_LIBMOUNT "; pdd reads /proc's mounts and swaps itself";
}
#else
static const char *mount_version(void) { return PDD_NO_LIBMOUNT; }
#endif

#ifdef HAVE_LIBNBD
/* libnbd tells its version through a handle; one that is never connected
 * costs no more than its allocation */
static void print_nbd_version(FILE *f)
{
	struct nbd_handle *h;
	const char *v;

	if (pdd_lib_load(PDD_LIB_NBD)) {
		fprintf(f, "libnbd: cannot be loaded (%s)\n", pdd_lib_error(PDD_LIB_NBD));
		return;
	}
	h = nbd_create();
	v = h ? nbd_get_version(h) : NULL;

	fprintf(f, "libnbd: %s\n", v ? v : "(version not known)");
	nbd_close(h);
}
#else
static void print_nbd_version(FILE *f)
{
	fprintf(f, "libnbd: %s\n", PDD_NO_LIBNBD);
}
#endif

#ifdef PDD_STATIC
#define LINKED " (static)"
#else
#define LINKED ""
#endif

void pdd_version(FILE *f)
{
	char names[128];

	pdd_engine_names(names, sizeof(names));
	fprintf(f, "pdd %s%s\nengines: %s\n", PDD_VERSION, LINKED, names);
	/* hash= needs libcrypto: say whether it is there */
	if (pdd_hash_available())
		fprintf(f, "hashes: md5, sha1, sha256, sha512, sha3-256, blake2b512 (libcrypto)\n");
	else
		fprintf(f, "hashes: none (%s)\n", pdd_lib_error(PDD_LIB_CRYPTO));
	fprintf(f, "liburing: %s\n", uring_version);
	fprintf(f, "libaio: %s\n", aio_version);
	fprintf(f, "libsgutils2: %s\n", sgutils_version());
	fprintf(f, "libcrypto: %s\n", crypto_version());
	fprintf(f, "libmount: %s\n", mount_version());
	print_nbd_version(f);
}
