/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnbd and libcrypto, loaded when a copy first needs them (libs.c).
 *
 * Linked in, they cost every run their start: libnbd brings GnuTLS,
 * libxml2 and ICU, 20 libraries in all, and libcrypto its own setup; pdd
 * took 9.4 ms of CPU to copy one block with them linked, 2.2 ms now.  So
 * the shared pdd is not linked with them: an NBD side or hash= loads the
 * library, and this header turns each of its functions pdd calls into a
 * pointer filled in from it, so that the code reads as plain calls.  The
 * static pdd links libcrypto (and has no libnbd): there nothing is loaded
 * and the names stay the library's own.
 *
 * Include it after <libnbd.h> or <openssl/evp.h>, in place of linking.
 */
#ifndef PDD_LIBS_H
#define PDD_LIBS_H

enum pdd_lib { PDD_LIB_NBD, PDD_LIB_CRYPTO };

/* Load lib if it is not yet: 0, or -ENOENT with the loader's reason in
 * pdd_lib_error().  Safe from any thread; a failure is remembered. */
int pdd_lib_load(enum pdd_lib lib);
const char *pdd_lib_error(enum pdd_lib lib);

#ifdef PDD_LAZY_LIBS

#define PDD_LIB_PTR(f) __typeof__(f) *f;

#if defined(HAVE_LIBNBD) && defined(LIBNBD_H)
#define PDD_NBD_FUNCS(X) \
	X(nbd_add_meta_context) X(nbd_aio_block_status) X(nbd_aio_command_completed) \
	X(nbd_aio_connect_uri) X(nbd_aio_disconnect) X(nbd_aio_flush) \
	X(nbd_aio_get_direction) X(nbd_aio_get_fd) X(nbd_aio_in_flight) \
	X(nbd_aio_is_connecting) X(nbd_aio_is_processing) X(nbd_aio_is_ready) \
	X(nbd_aio_notify_read) X(nbd_aio_notify_write) X(nbd_aio_pread) \
	X(nbd_aio_pwrite) X(nbd_aio_zero) X(nbd_can_flush) X(nbd_can_fua) \
	X(nbd_can_fast_zero) X(nbd_can_meta_context) X(nbd_can_multi_conn) \
	X(nbd_can_trim) X(nbd_can_zero) X(nbd_close) \
	X(nbd_create) X(nbd_get_block_size) X(nbd_get_errno) X(nbd_get_error) \
	X(nbd_get_export_name) X(nbd_get_size) X(nbd_get_version) \
	X(nbd_is_read_only) X(nbd_set_uri_allow_local_file)
struct pdd_nbd_fns { PDD_NBD_FUNCS(PDD_LIB_PTR) };
extern struct pdd_nbd_fns pdd_nbd_fns;
#ifndef PDD_LIBS_IMPL
#define nbd_add_meta_context		pdd_nbd_fns.nbd_add_meta_context
#define nbd_aio_block_status		pdd_nbd_fns.nbd_aio_block_status
#define nbd_aio_command_completed	pdd_nbd_fns.nbd_aio_command_completed
#define nbd_aio_connect_uri		pdd_nbd_fns.nbd_aio_connect_uri
#define nbd_aio_disconnect		pdd_nbd_fns.nbd_aio_disconnect
#define nbd_aio_flush			pdd_nbd_fns.nbd_aio_flush
#define nbd_aio_get_direction		pdd_nbd_fns.nbd_aio_get_direction
#define nbd_aio_get_fd			pdd_nbd_fns.nbd_aio_get_fd
#define nbd_aio_in_flight		pdd_nbd_fns.nbd_aio_in_flight
#define nbd_aio_is_connecting		pdd_nbd_fns.nbd_aio_is_connecting
#define nbd_aio_is_processing		pdd_nbd_fns.nbd_aio_is_processing
#define nbd_aio_is_ready		pdd_nbd_fns.nbd_aio_is_ready
#define nbd_aio_notify_read		pdd_nbd_fns.nbd_aio_notify_read
#define nbd_aio_notify_write		pdd_nbd_fns.nbd_aio_notify_write
#define nbd_aio_pread			pdd_nbd_fns.nbd_aio_pread
#define nbd_aio_pwrite			pdd_nbd_fns.nbd_aio_pwrite
#define nbd_aio_zero			pdd_nbd_fns.nbd_aio_zero
#define nbd_can_flush			pdd_nbd_fns.nbd_can_flush
#define nbd_can_fua			pdd_nbd_fns.nbd_can_fua
#define nbd_can_fast_zero		pdd_nbd_fns.nbd_can_fast_zero
#define nbd_can_meta_context		pdd_nbd_fns.nbd_can_meta_context
#define nbd_can_multi_conn		pdd_nbd_fns.nbd_can_multi_conn
#define nbd_can_trim			pdd_nbd_fns.nbd_can_trim
#define nbd_can_zero			pdd_nbd_fns.nbd_can_zero
#define nbd_close			pdd_nbd_fns.nbd_close
#define nbd_create			pdd_nbd_fns.nbd_create
#define nbd_get_block_size		pdd_nbd_fns.nbd_get_block_size
#define nbd_get_errno			pdd_nbd_fns.nbd_get_errno
#define nbd_get_error			pdd_nbd_fns.nbd_get_error
#define nbd_get_export_name		pdd_nbd_fns.nbd_get_export_name
#define nbd_get_size			pdd_nbd_fns.nbd_get_size
#define nbd_get_version			pdd_nbd_fns.nbd_get_version
#define nbd_is_read_only		pdd_nbd_fns.nbd_is_read_only
#define nbd_set_uri_allow_local_file	pdd_nbd_fns.nbd_set_uri_allow_local_file
#endif
#endif

#if defined(HAVE_LIBCRYPTO) && (defined(OPENSSL_EVP_H) || defined(HEADER_ENVELOPE_H))
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
/* EVP_MD_size is OpenSSL 3's macro for EVP_MD_get_size */
#define PDD_CRYPTO_FUNCS(X) \
	X(EVP_DigestFinal_ex) X(EVP_DigestInit_ex) X(EVP_DigestUpdate) \
	X(EVP_MD_CTX_free) X(EVP_MD_CTX_new) X(EVP_MD_fetch) X(EVP_MD_free) \
	X(EVP_MD_get_size) X(OpenSSL_version)
#else	/* 1.1: digests by name, no fetch */
#define PDD_CRYPTO_FUNCS(X) \
	X(EVP_DigestFinal_ex) X(EVP_DigestInit_ex) X(EVP_DigestUpdate) \
	X(EVP_MD_CTX_free) X(EVP_MD_CTX_new) X(EVP_get_digestbyname) \
	X(EVP_MD_size) X(OpenSSL_version)
#endif
struct pdd_crypto_fns { PDD_CRYPTO_FUNCS(PDD_LIB_PTR) };
extern struct pdd_crypto_fns pdd_crypto_fns;
#ifndef PDD_LIBS_IMPL
#define EVP_DigestFinal_ex		pdd_crypto_fns.EVP_DigestFinal_ex
#define EVP_DigestInit_ex		pdd_crypto_fns.EVP_DigestInit_ex
#define EVP_DigestUpdate		pdd_crypto_fns.EVP_DigestUpdate
#define EVP_MD_CTX_free			pdd_crypto_fns.EVP_MD_CTX_free
#define EVP_MD_CTX_new			pdd_crypto_fns.EVP_MD_CTX_new
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
#define EVP_MD_fetch			pdd_crypto_fns.EVP_MD_fetch
#define EVP_MD_free			pdd_crypto_fns.EVP_MD_free
#define EVP_MD_get_size			pdd_crypto_fns.EVP_MD_get_size
#else
#define EVP_get_digestbyname		pdd_crypto_fns.EVP_get_digestbyname
#define EVP_MD_size			pdd_crypto_fns.EVP_MD_size
#endif
#define OpenSSL_version			pdd_crypto_fns.OpenSSL_version
#endif
#endif

#endif /* PDD_LAZY_LIBS */
#endif
