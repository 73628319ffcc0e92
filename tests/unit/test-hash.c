// SPDX-License-Identifier: GPL-2.0-or-later
/* src/hash.c: names, digests against libcrypto's one-shot ones over a
 * stream fed in random pieces (holes and empty pieces among them), windows
 * cut inside entries, a full queue that never blocks, and hashlogs that
 * the coreutils checkers accept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <poll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hash.h"

#ifdef HAVE_LIBCRYPTO
#include <openssl/evp.h>
#endif

#define ALL ((1u << PDD_HASH_MAX) - 1)

static void test_names_and_parse(void **state)
{
	static const char *const names[PDD_HASH_MAX] = {
		"md5", "sha1", "sha256", "sha512", "sha3-256", "blake2b512"
	};
	const char *bad = NULL;
	size_t badlen = 99;
	unsigned int algs = 0;

	(void)state;
	for (int a = 0; a < PDD_HASH_MAX; a++) {
		assert_string_equal(pdd_hash_name(a), names[a]);
		assert_int_equal(pdd_hash_parse(names[a], &algs, &bad, &badlen), 0);
		assert_int_equal(algs, 1u << a);
	}
	assert_null(pdd_hash_name(PDD_HASH_MAX));
	assert_int_equal(pdd_hash_parse("sha256,md5", &algs, &bad, &badlen), 0);
	assert_int_equal(algs, (1u << PDD_HASH_SHA256) | (1u << PDD_HASH_MD5));
	assert_int_equal(pdd_hash_parse("SHA1,Sha3-256", &algs, &bad, &badlen), 0);
	assert_int_equal(algs, (1u << PDD_HASH_SHA1) | (1u << PDD_HASH_SHA3_256));
	assert_int_equal(pdd_hash_parse("md5,sha1,sha256,sha512,sha3-256,blake2b512",
					&algs, &bad, &badlen), 0);
	assert_int_equal(algs, ALL);

	/* what is refused, and the item *bad points at */
	static const struct {
		const char *list;
		size_t at, len;
	} refused[] = {
		{ "sha257", 0, 6 },		{ "md5,sha", 4, 3 },
		{ "sha256,sha2566", 7, 7 },	{ "md5,sha1,md5", 9, 3 },
		{ "sha256,SHA256", 7, 6 },	{ "", 0, 0 },
		{ ",md5", 0, 0 },		{ "md5,", 4, 0 },
		{ "md5,,sha1", 4, 0 },		{ "md5 ", 0, 4 },
		{ "sha3_256", 0, 8 },
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		algs = 12345;
		assert_int_equal(pdd_hash_parse(refused[i].list, &algs, &bad, &badlen), -EINVAL);
		assert_ptr_equal(bad, refused[i].list + refused[i].at);
		assert_int_equal(badlen, refused[i].len);
		assert_int_equal(algs, 12345);	/* left alone */
	}
}

#ifdef HAVE_LIBCRYPTO

/* libcrypto's one-shot digest, by the name openssl gives the algorithm
 * (which is ours: the lookup checks that too) */
static void oneshot(enum pdd_hash_alg a, const void *p, size_t len, char *hex)
{
	const EVP_MD *md = EVP_get_digestbyname(pdd_hash_name(a));
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	assert_non_null(md);
	assert_int_equal(EVP_Digest(p, len, d, &n, md, NULL), 1);
	for (unsigned int i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", d[i]);
	hex[2 * n] = '\0';
}

/* Feed as the copy loop does: on -EAGAIN wait on the descriptor, then
 * again; consumed and bytes never go back. */
static void feed(struct pdd_hash *h, const void *buf, size_t len, uint64_t *last_c, uint64_t *last_b)
{
	int ret;

	while ((ret = pdd_hash_feed(h, buf, len)) == -EAGAIN) {
		struct pollfd p = { .fd = pdd_hash_fd(h), .events = POLLIN };

		/* a lost wakeup would hang here: the time limit fails it */
		assert_true(poll(&p, 1, 10000) == 1);
		pdd_hash_ack(h);
		assert_true(pdd_hash_consumed(h) >= *last_c);
		assert_true(pdd_hash_bytes(h) >= *last_b);
		*last_c = pdd_hash_consumed(h);
		*last_b = pdd_hash_bytes(h);
	}
	assert_int_equal(ret, 0);
}

/* the digests of a whole buffer, fed in one entry, for the algorithms in
 * algs; the caller frees */
static struct pdd_hash *hash_buf(unsigned int algs, uint64_t window, const void *p, size_t len)
{
	struct pdd_hash *h;
	uint64_t c = 0, b = 0;

	assert_int_equal(pdd_hash_start(&h, algs, window, 4), 0);
	feed(h, p, len, &c, &b);
	assert_int_equal(pdd_hash_finish(h), 0);
	return h;
}

static void test_vectors(void **state)
{
	static const char *const abc[PDD_HASH_MAX] = {
		"900150983cd24fb0d6963f7d28e17f72",
		"a9993e364706816aba3e25717850c26c9cd0d89d",
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
		"2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
		"3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532",
		"ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
		"7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923",
	};
	static const char *const empty[PDD_HASH_MAX] = {
		"d41d8cd98f00b204e9800998ecf8427e",
		"da39a3ee5e6b4b0d3255bfef95601890afd80709",
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
		"47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
		"a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a",
		"786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419"
		"d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce",
	};
	struct pdd_hash *h;

	(void)state;
	assert_true(pdd_hash_available());
	/* "abc" as three entries, and as one */
	assert_int_equal(pdd_hash_start(&h, ALL, 0, 2), 0);
	for (int i = 0; i < 3; i++) {
		uint64_t c = 0, b = 0;

		feed(h, &"abc"[i], 1, &c, &b);
	}
	assert_int_equal(pdd_hash_finish(h), 0);
	assert_int_equal(pdd_hash_finish(h), 0);	/* again: the same */
	for (int a = 0; a < PDD_HASH_MAX; a++)
		assert_string_equal(pdd_hash_hex(h, a), abc[a]);
	assert_int_equal(pdd_hash_feed(h, "x", 1), -EINVAL);	/* finished */
	pdd_hash_free(h);
	h = hash_buf(ALL, 0, "abc", 3);
	for (int a = 0; a < PDD_HASH_MAX; a++)
		assert_string_equal(pdd_hash_hex(h, a), abc[a]);
	pdd_hash_free(h);
	/* nothing fed; then one empty entry, with windows: no window */
	assert_int_equal(pdd_hash_start(&h, ALL, 0, 1), 0);
	assert_int_equal(pdd_hash_finish(h), 0);
	for (int a = 0; a < PDD_HASH_MAX; a++)
		assert_string_equal(pdd_hash_hex(h, a), empty[a]);
	pdd_hash_free(h);
	h = hash_buf(1u << PDD_HASH_SHA1, 512, "", 0);
	assert_string_equal(pdd_hash_hex(h, PDD_HASH_SHA1), empty[PDD_HASH_SHA1]);
	assert_null(pdd_hash_hex(h, PDD_HASH_MD5));	/* not asked for */
	assert_int_equal(pdd_hash_nwindows(h), 0);
	assert_int_equal(pdd_hash_consumed(h), 1);
	pdd_hash_free(h);
	/* what start refuses */
	assert_int_equal(pdd_hash_start(&h, 0, 0, 4), -EINVAL);
	assert_int_equal(pdd_hash_start(&h, 1u << PDD_HASH_MAX, 0, 4), -EINVAL);
	assert_int_equal(pdd_hash_start(&h, 1, 0, 0), -EINVAL);
	assert_null(h);
	pdd_hash_free(NULL);
}

/* A stream of random data and holes, in pieces of random sizes (empty
 * ones too), against one-shot digests of the same bytes, whole and per
 * window, for windows that divide entries, are cut by them, and are
 * longer than the stream. */
static void test_stream(void **state)
{
	enum { TOTAL = (3 << 20) + 4321, MAXPIECES = 4096 };
	unsigned char *ref = malloc(TOTAL);
	struct { size_t off, len; bool hole; } *pc = calloc(MAXPIECES, sizeof(*pc));
	const uint64_t windows[] = { 0, 4096, 65543, 1 << 20, (1 << 20) + 1, TOTAL, 2 * TOTAL };
	unsigned int seed = 2024;
	size_t n = 0, off = 0;
	char want[PDD_HASH_HEX_MAX + 1];

	(void)state;
	assert_non_null(ref);
	assert_non_null(pc);
	while (off < TOTAL) {
		unsigned int r = rand_r(&seed);
		size_t len = r % 10 == 0 ? 0 : r % 10 < 4 ? 1 + r % 100 : r % 10 < 8 ? r % 70000 : r % 300000;

		if (len > TOTAL - off)
			len = TOTAL - off;
		assert_true(n < MAXPIECES);
		pc[n].off = off;
		pc[n].len = len;
		pc[n].hole = rand_r(&seed) % 5 == 0;
		for (size_t i = 0; i < len; i++)
			ref[off + i] = pc[n].hole ? 0 : (unsigned char)rand_r(&seed);
		off += len;
		n++;
	}
	for (size_t wi = 0; wi < sizeof(windows) / sizeof(windows[0]); wi++) {
		uint64_t window = windows[wi], c = 0, b = 0, nw;
		struct pdd_hash *h;

		assert_int_equal(pdd_hash_start(&h, ALL, window, 3), 0);
		for (size_t i = 0; i < n; i++)
			feed(h, pc[i].hole ? NULL : ref + pc[i].off, pc[i].len, &c, &b);
		assert_int_equal(pdd_hash_finish(h), 0);
		assert_int_equal(pdd_hash_consumed(h), n);
		assert_int_equal(pdd_hash_fed(h), n);
		assert_int_equal(pdd_hash_bytes(h), TOTAL);
		for (int a = 0; a < PDD_HASH_MAX; a++) {
			oneshot(a, ref, TOTAL, want);
			assert_string_equal(pdd_hash_hex(h, a), want);
		}
		nw = window ? (TOTAL + window - 1) / window : 0;
		assert_int_equal(pdd_hash_nwindows(h), nw);
		for (size_t k = 0; k < nw; k++) {
			uint64_t woff, wlen;

			pdd_hash_window(h, k, &woff, &wlen);
			assert_int_equal(woff, k * window);
			assert_int_equal(wlen, k + 1 < nw ? window : TOTAL - woff);
			for (int a = 0; a < PDD_HASH_MAX; a++) {
				oneshot(a, ref + woff, wlen, want);
				assert_string_equal(pdd_hash_window_hex(h, k, a), want);
			}
		}
		assert_null(pdd_hash_window_hex(h, nw, PDD_HASH_MD5));
		pdd_hash_free(h);
	}
	free(pc);
	free(ref);
}

/* Many small entries through a queue of one, so that the loop waits on
 * the descriptor for nearly every one: a wakeup lost between a worker's
 * ring and the loop's ack shows as a poll that times out. */
static void test_wakeups(void **state)
{
	static const unsigned char bytes[2] = { 0x5a, 0xa5 };
	struct pdd_hash *h;
	uint64_t c = 0, b = 0;

	(void)state;
	for (unsigned int q = 1; q <= 8; q *= 2) {
		assert_int_equal(pdd_hash_start(&h, (1u << PDD_HASH_MD5) | (1u << PDD_HASH_SHA1), 0, q), 0);
		for (int i = 0; i < 50000; i++)
			feed(h, i % 7 ? bytes : NULL, (size_t)(i % 3), &c, &b);
		assert_int_equal(pdd_hash_finish(h), 0);
		assert_int_equal(pdd_hash_consumed(h), 50000);
		pdd_hash_free(h);
		c = b = 0;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A hole of 256 MiB takes SHA-256 a tenth of a second at the least: the
 * queue behind it fills, and a feed then says -EAGAIN at once.  The
 * descriptor is readable when the hole is done, not before anything was
 * consumed.  Free stops threads that still have work. */
static void test_queue_full(void **state)
{
	struct pdd_hash *h;
	struct pollfd p;
	double t0, t;
	int ret = 0, fed = 1;

	(void)state;
	assert_int_equal(pdd_hash_start(&h, 1u << PDD_HASH_SHA256, 0, 3), 0);
	p = (struct pollfd){ .fd = pdd_hash_fd(h), .events = POLLIN };
	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(pdd_hash_feed(h, NULL, 256 << 20), 0);
	for (int i = 0; i < 3 && ret != -EAGAIN; i++) {
		t0 = now();
		ret = pdd_hash_feed(h, "x", 1);
		t = now() - t0;
		assert_true(t < 0.05);
		fed += !ret;
	}
	assert_int_equal(ret, -EAGAIN);
	assert_int_equal(fed, 3);
	/* still busy with the hole after the refusal: it was full */
	assert_int_equal(pdd_hash_consumed(h), 0);
	assert_int_equal(pdd_hash_bytes(h), 0);
	assert_int_equal(poll(&p, 1, 30000), 1);
	pdd_hash_ack(h);
	assert_true(pdd_hash_consumed(h) >= 1);
	while (pdd_hash_consumed(h) < 3) {
		assert_int_equal(poll(&p, 1, 30000), 1);
		pdd_hash_ack(h);
	}
	assert_int_equal(pdd_hash_bytes(h), (256 << 20) + 2);
	assert_int_equal(pdd_hash_feed(h, "y", 1), 0);
	assert_int_equal(poll(&p, 1, 30000), 1);
	assert_int_equal(pdd_hash_slowest(h), PDD_HASH_SHA256);
	/* freed busy: the hole's hashing ends, the rest is dropped */
	assert_int_equal(pdd_hash_feed(h, NULL, 256 << 20), 0);
	assert_int_equal(pdd_hash_feed(h, NULL, 256 << 20), 0);
	pdd_hash_free(h);
}

/* pdd_hash_want(): the descriptor stays quiet while fewer entries than
 * asked for are consumed, rings when they are, and a want already met
 * rings at once (the copy loop asks after its ack, before it polls). */
static void test_want(void **state)
{
	struct pdd_hash *h;
	struct pollfd p;

	(void)state;
	assert_int_equal(pdd_hash_start(&h, (1u << PDD_HASH_SHA256) | (1u << PDD_HASH_MD5), 0, 8), 0);
	p = (struct pollfd){ .fd = pdd_hash_fd(h), .events = POLLIN };
	pdd_hash_want(h, 3);
	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(pdd_hash_feed(h, "a", 1), 0);
	assert_int_equal(pdd_hash_feed(h, NULL, 1 << 20), 0);
	while (pdd_hash_consumed(h) < 2)
		usleep(1000);
	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(pdd_hash_feed(h, "b", 1), 0);
	assert_int_equal(poll(&p, 1, 30000), 1);
	pdd_hash_ack(h);
	assert_int_equal(pdd_hash_consumed(h), 3);
	assert_int_equal(poll(&p, 1, 0), 0);
	pdd_hash_want(h, 3);
	assert_int_equal(poll(&p, 1, 0), 1);
	pdd_hash_ack(h);
	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(pdd_hash_finish(h), 0);
	pdd_hash_free(h);
}

/* --- hashlogs ----------------------------------------------------------- */

static char dir[] = "/tmp/pdd-test-hash.XXXXXX";

static char *slurp(const char *name, size_t *len)
{
	char path[256];
	FILE *f;
	char *buf = calloc(1, 1 << 16);

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	*len = fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	return buf;
}

static void spill(const char *name, const void *p, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* the checker's status, run in the directory (its warnings about the
 * lines of other algorithms thrown away) */
static int check(const char *tool, const char *opts)
{
	char cmd[512];
	int st;

	snprintf(cmd, sizeof(cmd), "cd %s && %s -c %s log >/dev/null 2>&1", dir, tool, opts);
	st = system(cmd);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* hash the file called name in the directory and write its log as log;
 * the range: from byte base, the whole file when base is 0 */
static struct pdd_hash *log_part(const char *name, unsigned int algs, uint64_t window,
				 uint64_t base)
{
	char path[256];
	size_t len;
	char *data = slurp(name, &len);
	struct pdd_hash *h = hash_buf(algs, window, data, len);

	free(data);
	snprintf(path, sizeof(path), "%s/log", dir);
	assert_int_equal(pdd_hash_log(h, path, name, &(struct pdd_hash_range){
		.off = base, .len = len, .whole = !base }), 0);
	/* nothing left beside it */
	snprintf(path, sizeof(path), "%s/log.new", dir);
	assert_int_equal(access(path, F_OK), -1);
	return h;
}

static struct pdd_hash *log_file(const char *name, unsigned int algs, uint64_t window)
{
	return log_part(name, algs, window, 0);
}

static void test_hashlog(void **state)
{
	static const char *const tools[PDD_HASH_MAX] = {
		"md5sum", "sha1sum", "sha256sum", "sha512sum", NULL, "b2sum"
	};
	static const char *const tags[PDD_HASH_MAX] = {
		"MD5", "SHA1", "SHA256", "SHA512", "SHA3-256", "BLAKE2b"
	};
	unsigned char data[2500];
	char want[4096], *got, *p;
	size_t len;
	struct pdd_hash *h;

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 7 + i / 3);
	spill("data", data, sizeof(data));
	spill("log", "old\n", 4);	/* replaced */

	/* one algorithm with windows: a plain line, windows as comments */
	h = log_file("data", 1u << PDD_HASH_SHA256, 1000);
	p = want + sprintf(want, "%s  data\n", pdd_hash_hex(h, PDD_HASH_SHA256));
	for (int k = 0; k < 3; k++)
		p += sprintf(p, "# sha256 %s  data:%d-%d\n",
			     pdd_hash_window_hex(h, k, PDD_HASH_SHA256), k * 1000,
			     k == 2 ? 2500 : (k + 1) * 1000);
	got = slurp("log", &len);
	assert_string_equal(got, want);
	free(got);
	pdd_hash_free(h);
	assert_int_equal(check("sha256sum", "--strict"), 0);	/* '#' lines skipped */
	assert_int_not_equal(check("sha512sum", "--strict"), 0);

	/* a range that is not the whole output (from byte 4096): every line
	 * a comment, offsets in the output */
	h = log_part("data", (1u << PDD_HASH_SHA256) | (1u << PDD_HASH_MD5), 2000, 4096);
	sprintf(want, "# md5 %s  data:4096-6596\n# sha256 %s  data:4096-6596\n"
		"# md5 %s  data:4096-6096\n# sha256 %s  data:4096-6096\n"
		"# md5 %s  data:6096-6596\n# sha256 %s  data:6096-6596\n",
		pdd_hash_hex(h, PDD_HASH_MD5), pdd_hash_hex(h, PDD_HASH_SHA256),
		pdd_hash_window_hex(h, 0, PDD_HASH_MD5), pdd_hash_window_hex(h, 0, PDD_HASH_SHA256),
		pdd_hash_window_hex(h, 1, PDD_HASH_MD5), pdd_hash_window_hex(h, 1, PDD_HASH_SHA256));
	got = slurp("log", &len);
	assert_string_equal(got, want);
	free(got);
	pdd_hash_free(h);
	assert_int_not_equal(check("sha256sum", ""), 0);	/* nothing to check */

	/* without blake2b512, plain lines but for SHA3-256's (sha256sum
	 * would check it as SHA-256) */
	h = log_file("data", (1u << PDD_HASH_MD5) | (1u << PDD_HASH_SHA256) |
			     (1u << PDD_HASH_SHA3_256), 0);
	sprintf(want, "%s  data\n%s  data\nSHA3-256 (data) = %s\n",
		pdd_hash_hex(h, PDD_HASH_MD5), pdd_hash_hex(h, PDD_HASH_SHA256),
		pdd_hash_hex(h, PDD_HASH_SHA3_256));
	got = slurp("log", &len);
	assert_string_equal(got, want);
	free(got);
	pdd_hash_free(h);
	assert_int_equal(check("md5sum", ""), 0);
	assert_int_equal(check("sha256sum", ""), 0);

	/* all six: every line tagged, and each checker finds its own */
	h = log_file("data", ALL, 0);
	p = want;
	for (int a = 0; a < PDD_HASH_MAX; a++)
		p += sprintf(p, "%s (data) = %s\n", tags[a], pdd_hash_hex(h, a));
	got = slurp("log", &len);
	assert_string_equal(got, want);
	free(got);
	pdd_hash_free(h);
	for (int a = 0; a < PDD_HASH_MAX; a++)
		if (tools[a])
			assert_int_equal(check(tools[a], ""), 0);
	/* a changed byte is found */
	data[1234] ^= 1;
	spill("data", data, sizeof(data));
	for (int a = 0; a < PDD_HASH_MAX; a++)
		if (tools[a])
			assert_int_not_equal(check(tools[a], ""), 0);

	/* blake2b512 alone: plain, as b2sum prints it */
	h = log_file("data", 1u << PDD_HASH_BLAKE2B512, 0);
	sprintf(want, "%s  data\n", pdd_hash_hex(h, PDD_HASH_BLAKE2B512));
	got = slurp("log", &len);
	assert_string_equal(got, want);
	free(got);
	pdd_hash_free(h);
	assert_int_equal(check("b2sum", "--strict"), 0);

	/* a backslash and a newline in the name, escaped as coreutils does */
	spill("a\\b\nc", data, 100);
	h = log_file("a\\b\nc", 1u << PDD_HASH_MD5, 60);
	sprintf(want, "\\%s  a\\\\b\\nc\n# md5 %s  a\\\\b\\nc:0-60\n# md5 %s  a\\\\b\\nc:60-100\n",
		pdd_hash_hex(h, PDD_HASH_MD5), pdd_hash_window_hex(h, 0, PDD_HASH_MD5),
		pdd_hash_window_hex(h, 1, PDD_HASH_MD5));
	got = slurp("log", &len);
	assert_string_equal(got, want);
	free(got);
	assert_int_equal(check("md5sum", "--strict"), 0);
	/* where the log cannot go: the error, and no log */
	const struct pdd_hash_range whole = { .off = 0, .len = 100, .whole = true };

	assert_int_equal(pdd_hash_log(h, "/nonexistent-dir/log", "x", &whole), -ENOENT);
	assert_int_equal(pdd_hash_log(h, "/tmp/", "x", &whole), -EISDIR);
	pdd_hash_free(h);

	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

#else	/* built without libcrypto */

static void test_without_libcrypto(void **state)
{
	struct pdd_hash *h = (struct pdd_hash *)1;

	(void)state;
	assert_false(pdd_hash_available());
	assert_int_equal(pdd_hash_start(&h, 1u << PDD_HASH_SHA256, 0, 4), -ENOTSUP);
	assert_null(h);
}

#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_and_parse),
#ifdef HAVE_LIBCRYPTO
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_queue_full),
		cmocka_unit_test(test_wakeups),
		cmocka_unit_test(test_want),
		cmocka_unit_test(test_hashlog),
#else
		cmocka_unit_test(test_without_libcrypto),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
