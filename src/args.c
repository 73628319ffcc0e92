// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The command line: a sorted table of operands, number parsing with dd's
 * and sgp_dd's suffixes, and the checks that need no file opened.  Any
 * problem is one line naming the operand, then the pointer to --help.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine.h"
#include "hash.h"
#include "libs.h"
#include "pdd.h"

/* Multiplier for a suffix, or 0 if it is not one.  One letter is binary
 * (K = 1024) as in dd and sgp_dd; a letter then B (or D) is decimal
 * (kB = 1000); a letter then iB is binary again (KiB = 1024). */
static uint64_t suffix_mult(const char *s)
{
	static const char letters[] = "KMGTPE";
	const char *p;
	uint64_t bin = 1024, dec = 1000;

	if (!*s)
		return 1;
	if (!s[1]) {
		switch (*s) {
		case 'c': case 'C':
			return 1;
		case 'w': case 'W':
			return 2;
		case 'b': case 'B':
			return 512;
		}
	}
	p = strchr(letters, *s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s);
	if (!p || !*s)
		return 0;
	for (const char *q = letters; q < p; q++) {
		bin *= 1024;
		dec *= 1000;
	}
	if (!s[1])
		return bin;
	if (!s[2] && strchr("bBdD", s[1]))
		return dec;
	if (!strcasecmp(s + 1, "iB"))
		return bin;
	return 0;
}

/*
 * Parse a count of bytes or blocks: decimal or 0x hex, an optional suffix,
 * and optionally 'x' and another such number to multiply by (2x512).
 * Negative numbers, junk and values above INT64_MAX are refused, so every
 * result can become an off_t.  Returns 0, -EINVAL or -ERANGE.
 */
int pdd_parse_num(const char *s, uint64_t *out)
{
	uint64_t v = 0, mult, rest;
	const char *p = s;
	int base = 10, digits = 0;
	char *x;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	for (;; p++) {
		unsigned int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (__builtin_mul_overflow(v, (uint64_t)base, &v) ||
		    __builtin_add_overflow(v, (uint64_t)d, &v))
			return -ERANGE;
		digits++;
	}
	if (!digits)
		return -EINVAL;

	/* the suffix runs up to an 'x' that starts another number */
	x = strpbrk(p, "xX");
	if (x) {
		char suf[8];
		size_t n = x - p;
		int err;

		if (n >= sizeof(suf))
			return -EINVAL;
		memcpy(suf, p, n);
		suf[n] = '\0';
		mult = suffix_mult(suf);
		if (!mult)
			return -EINVAL;
		err = pdd_parse_num(x + 1, &rest);
		if (err)
			return err;
		if (__builtin_mul_overflow(mult, rest, &mult))
			return -ERANGE;
	} else {
		mult = suffix_mult(p);
		if (!mult)
			return -EINVAL;
	}
	if (__builtin_mul_overflow(v, mult, &v) || v > INT64_MAX)
		return -ERANGE;
	*out = v;
	return 0;
}

enum arg_kind {
	ARG_PATH,		/* const char * */
	ARG_U64,		/* uint64_t, number with suffixes */
	ARG_UINT,		/* unsigned int, number with suffixes */
	ARG_BOOL,		/* bool, 0 or 1 */
	ARG_INT,		/* int, verbosity */
	ARG_IFLAGS,		/* iflag list */
	ARG_OFLAGS,		/* oflag list */
	ARG_ENGINE,		/* engine name */
	ARG_STATUS,		/* none, noxfer; progress sets progress */
	ARG_VERIFY,		/* 0, 1 or only */
	ARG_CONV,		/* dd's conv= list: sparse only */
	ARG_HASH,		/* hash= list of algorithms */
};

struct operand {
	const char *name;	/* before the '=' */
	enum arg_kind kind;	/* how to parse the value */
	size_t off;		/* field in struct pdd_opts */
	uint64_t min, max;	/* range for numbers */
	int id;			/* aliases share one: thr= repeats threads= */
};

#define OPT(f) offsetof(struct pdd_opts, f)

/* Sorted by name for bsearch. */
static const struct operand operands[] = {
	{ "bpt",	ARG_U64,	OPT(bpt),	1, PDD_MAX_XFER, 0 },
	{ "bs",		ARG_U64,	OPT(bs),	1, PDD_MAX_XFER, 1 },
	{ "cdbsz",	ARG_UINT,	OPT(cdbsz),	6, 16,		16 },
	{ "coe",	ARG_BOOL,	OPT(coe),	0, 1,		17 },
	{ "coe_limit",	ARG_U64,	OPT(coe_limit),	0, INT64_MAX,	21 },
	{ "conns",	ARG_UINT,	OPT(conns),	1, PDD_NBD_MAX_CONNS, 29 },
	{ "conv",	ARG_CONV,	OPT(conv_sparse), 0, 0,		31 },
	{ "count",	ARG_U64,	OPT(count),	0, INT64_MAX,	2 },
	{ "deb",	ARG_INT,	OPT(verbose),	0, 9,		3 },
	{ "dio",	ARG_BOOL,	OPT(dio),	0, 1,		18 },
	{ "domain",	ARG_PATH,	OPT(domain),	0, 0,		35 },
	{ "engine",	ARG_ENGINE,	OPT(engine),	0, 0,		4 },
	{ "fua",	ARG_UINT,	OPT(fua),	0, 3,		19 },
	{ "give_up",	ARG_UINT,	OPT(give_up),	1, 4000000,	36 },
	{ "hash",	ARG_HASH,	OPT(hash_algs),	0, 0,		32 },
	{ "hashlog",	ARG_PATH,	OPT(hashlog),	0, 0,		33 },
	{ "hashwindow",	ARG_U64,	OPT(hashwindow), 1, INT64_MAX,	34 },
	{ "if",		ARG_PATH,	OPT(in_path),	0, 0,		5 },
	{ "iflag",	ARG_IFLAGS,	OPT(iflags),	0, 0,		6 },
	{ "map",	ARG_PATH,	OPT(map),	0, 0,		23 },
	{ "map_interval", ARG_UINT,	OPT(map_interval), 0, 86400,	24 },
	{ "max_rate",	ARG_U64,	OPT(max_rate),	1, INT64_MAX,	37 },
	{ "max_skip",	ARG_U64,	OPT(skip_max),	65536, INT64_MAX, 38 },
	{ "min_rate",	ARG_U64,	OPT(min_rate),	1, INT64_MAX,	39 },
	{ "of",		ARG_PATH,	OPT(out_path),	0, 0,		7 },
	{ "oflag",	ARG_OFLAGS,	OPT(oflags),	0, 0,		8 },
	{ "qd",		ARG_UINT,	OPT(qd),	1, PDD_MAX_QD,	9 },
	{ "rescue",	ARG_BOOL,	OPT(rescue),	0, 1,		40 },
	{ "retries",	ARG_UINT,	OPT(retries),	0, 1000,	22 },
	{ "reverse",	ARG_BOOL,	OPT(reverse),	0, 1,		41 },
	{ "scrape",	ARG_BOOL,	OPT(scrape),	0, 1,		42 },
	{ "seek",	ARG_U64,	OPT(seek),	0, INT64_MAX,	10 },
	{ "skip",	ARG_U64,	OPT(skip),	0, INT64_MAX,	11 },
	{ "skip_size",	ARG_U64,	OPT(skip_size),	0, INT64_MAX,	43 },
	{ "sparse",	ARG_U64,	OPT(sparse),	0, PDD_MAX_XFER, 30 },
	{ "status",	ARG_STATUS,	OPT(status),	0, 0,		12 },
	{ "sync",	ARG_BOOL,	OPT(sync),	0, 1,		13 },
	{ "thr",	ARG_UINT,	OPT(threads),	1, PDD_MAX_THREADS, 14 },
	{ "threads",	ARG_UINT,	OPT(threads),	1, PDD_MAX_THREADS, 14 },
	{ "time",	ARG_BOOL,	OPT(time),	0, 1,		15 },
	{ "timeout",	ARG_UINT,	OPT(timeout),	1, 4000000,	20 },
	{ "trim",	ARG_BOOL,	OPT(trim),	0, 1,		44 },
	{ "verbose",	ARG_INT,	OPT(verbose),	0, 9,		3 },
	{ "verify",	ARG_VERIFY,	OPT(verify),	0, 0,		28 },
};
#define N_OPERANDS (sizeof(operands) / sizeof(operands[0]))

struct flag {
	const char *name;	/* as written in the list */
	unsigned int bit;	/* PDD_F_* */
	bool out_only;		/* meaningless for the input */
};

static const struct flag flags[] = {
	{ "append",	PDD_F_APPEND,	true },
	{ "coe",	PDD_F_COE,	false },
	{ "direct",	PDD_F_DIRECT,	false },
	{ "dpo",	PDD_F_DPO,	false },
	{ "dsync",	PDD_F_DSYNC,	false },
	{ "excl",	PDD_F_EXCL,	false },
	{ "force",	PDD_F_FORCE,	true },
	{ "fua",	PDD_F_FUA,	false },
	{ "nocreat",	PDD_F_NOCREAT,	true },
	{ "nodirect",	PDD_F_NODIRECT,	false },
	{ "null",	PDD_F_NULL,	false },
	{ "trunc",	PDD_F_TRUNC,	true },
	{ "zeroed",	PDD_F_ZEROED,	true },
};

static int parse_hash(const char *val, unsigned int *algs)
{
	const char *bad;
	size_t n;

	if (pdd_hash_parse(val, algs, &bad, &n))
		pdd_usage_error("hash=%s: unknown or repeated algorithm '%.*s' (choose from md5, sha1, sha256, sha512, sha3-256, blake2b512)",
				val, (int)n, bad);
	else if (!pdd_hash_available())
		pdd_usage_error("hash=%s: %s", val, pdd_lib_error(PDD_LIB_CRYPTO));
	else
		return 0;
	return -EINVAL;
}

static int parse_flags(const char *op, const char *val, bool output,
		       unsigned int *out)
{
	char buf[256];
	unsigned int v = 0;
	char *tok, *save;

	if (!*val || strlen(val) >= sizeof(buf) || *val == ',' ||
	    val[strlen(val) - 1] == ',' || strstr(val, ",,")) {
		pdd_usage_error("%s=%s: invalid flag list", op, val);
		return -EINVAL;
	}
	strcpy(buf, val);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct flag *f = NULL;

		for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
			if (!strcmp(flags[i].name, tok))
				f = &flags[i];
		if (!f) {
			pdd_usage_error("%s=%s: unknown flag '%s'", op, val, tok);
			return -EINVAL;
		}
		if (f->out_only && !output) {
			pdd_usage_error("%s=%s: '%s' applies to oflag= only",
					op, val, tok);
			return -EINVAL;
		}
		if (v & f->bit) {
			pdd_usage_error("%s=%s: '%s' given twice", op, val, tok);
			return -EINVAL;
		}
		v |= f->bit;
	}
	if ((v & PDD_F_DIRECT) && (v & PDD_F_NODIRECT)) {
		pdd_usage_error("%s=%s: 'direct' and 'nodirect' contradict", op, val);
		return -EINVAL;
	}
	if ((v & PDD_F_APPEND) && (v & PDD_F_TRUNC)) {
		pdd_usage_error("%s=%s: 'append' and 'trunc' contradict", op, val);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int cmp_operand(const void *key, const void *elem)
{
	return strcmp(key, ((const struct operand *)elem)->name);
}

static int set_operand(struct pdd_opts *o, const struct operand *op,
		       const char *val)
{
	char *field = (char *)o + op->off;
	uint64_t v;
	int err;

	switch (op->kind) {
	case ARG_PATH:
		if (!*val) {
			pdd_usage_error("%s=: missing file name", op->name);
			return -EINVAL;
		}
		*(const char **)field = val;
		return 0;
	case ARG_IFLAGS:
		return parse_flags(op->name, val, false, (unsigned int *)field);
	case ARG_OFLAGS:
		return parse_flags(op->name, val, true, (unsigned int *)field);
	case ARG_ENGINE:
		if (!pdd_engine_known(val)) {
			char names[128];

			pdd_engine_names(names, sizeof(names));
			pdd_usage_error("engine=%s: unknown engine (choose from %s)",
					val, names);
			return -EINVAL;
		}
		*(const char **)field = val;
		return 0;
	case ARG_STATUS:
		if (!strcmp(val, "none"))
			*(enum pdd_status *)field = PDD_STATUS_NONE;
		else if (!strcmp(val, "noxfer"))
			*(enum pdd_status *)field = PDD_STATUS_NOXFER;
		else if (!strcmp(val, "progress"))
			o->progress = true;	/* the report stays as it is */
		else if (!strcmp(val, "json"))
			*(enum pdd_status *)field = PDD_STATUS_JSON;
		else {
			pdd_usage_error("status=%s: unknown status (choose none, noxfer, progress or json)",
					val);
			return -EINVAL;
		}
		return 0;
	case ARG_CONV:
		/* dd's conversions change data or stand for what pdd does
		 * anyway or spells otherwise; sparse is what pdd does by
		 * default (sparse=), done right on every output */
		for (const char *v = val; ; v += strcspn(v, ",") + 1) {
			size_t n = strcspn(v, ",");

			if (n != 6 || strncmp(v, "sparse", 6)) {
				pdd_usage_error("conv=%s: unknown conversion '%.*s' (pdd takes conv=sparse only)",
						val, (int)n, v);
				return -EINVAL;
			}
			if (!v[n])
				break;
		}
		*(bool *)field = true;
		return 0;
	case ARG_HASH:
		return parse_hash(val, (unsigned int *)field);
	case ARG_VERIFY:
		if (!strcmp(val, "0"))
			*(enum pdd_verify *)field = PDD_VERIFY_NONE;
		else if (!strcmp(val, "1"))
			*(enum pdd_verify *)field = PDD_VERIFY_AFTER;
		else if (!strcmp(val, "only"))
			*(enum pdd_verify *)field = PDD_VERIFY_ONLY;
		else if (!strcmp(val, "hash"))
			*(enum pdd_verify *)field = PDD_VERIFY_HASH;
		else {
			pdd_usage_error("verify=%s: choose 0, 1, only or hash", val);
			return -EINVAL;
		}
		return 0;
	default:
		break;
	}

	err = pdd_parse_num(val, &v);
	if (err == -ERANGE) {
		pdd_usage_error("%s=%s: number too large", op->name, val);
		return err;
	}
	if (err) {
		pdd_usage_error("%s=%s: invalid number", op->name, val);
		return err;
	}
	if (v < op->min) {
		pdd_usage_error("%s=%s: must be at least %llu", op->name, val,
				(unsigned long long)op->min);
		return -EINVAL;
	}
	if (v > op->max) {
		pdd_usage_error("%s=%s: must be at most %llu", op->name, val,
				(unsigned long long)op->max);
		return -EINVAL;
	}
	switch (op->kind) {
	case ARG_U64:
		*(uint64_t *)field = v;
		break;
	case ARG_UINT:
		*(unsigned int *)field = (unsigned int)v;
		break;
	case ARG_INT:
		*(int *)field = (int)v;
		break;
	case ARG_BOOL:
		*(bool *)field = v != 0;
		break;
	default:
		break;
	}
	return 0;
}

static int parse_option(struct pdd_opts *o, const char *arg)
{
	if (!strcmp(arg, "--help") || !strcmp(arg, "-h"))
		o->help = true;
	else if (!strcmp(arg, "--version") || !strcmp(arg, "-V"))
		o->version = true;
	else if (!strcmp(arg, "--progress") || !strcmp(arg, "-p"))
		o->progress = true;
	else if (!strcmp(arg, "--dry-run"))
		o->dry_run = true;
	else if (!strcmp(arg, "--verbose"))
		o->verbose++;
	else if (arg[1] == 'v' && strspn(arg + 1, "v") == strlen(arg + 1))
		o->verbose += (int)strlen(arg + 1);
	else {
		pdd_usage_error("unknown option '%s'", arg);
		return -EINVAL;
	}
	return 0;
}

/* Checks between operands that need no file opened. */
static int check_conflicts(const struct pdd_opts *o)
{
	if ((o->oflags & PDD_F_APPEND) && o->seek) {
		pdd_usage_error("oflag=append and seek= contradict: appended data goes to the end");
		return -EINVAL;
	}
	if ((o->oflags & PDD_F_EXCL) && (o->oflags & PDD_F_NOCREAT)) {
		pdd_usage_error("oflag=excl,nocreat: 'excl' makes a new file, 'nocreat' forbids it");
		return -EINVAL;
	}
	if (o->status == PDD_STATUS_JSON && (!o->out_path || !strcmp(o->out_path, "-"))) {
		pdd_usage_error("status=json prints on standard output, which is the output here: give of=");
		return -EINVAL;
	}
	if (o->hash_algs && o->verify == PDD_VERIFY_ONLY) {
		pdd_usage_error("hash= and verify=only contradict: nothing is copied to hash");
		return -EINVAL;
	}
	if ((o->hashlog || o->hashwindow) && !o->hash_algs) {
		pdd_usage_error("%s= needs hash=: which digests?", o->hashlog ? "hashlog" : "hashwindow");
		return -EINVAL;
	}
	if (o->conv_sparse && o->sparse_given && !o->sparse) {
		pdd_usage_error("conv=sparse and sparse=0 contradict");
		return -EINVAL;
	}
	if (o->rescue_only && !o->rescue) {
		pdd_usage_error("%s= needs rescue=1", o->rescue_only);
		return -EINVAL;
	}
	if (o->rescue && (o->verify || (o->oflags & PDD_F_APPEND))) {
		pdd_usage_error("rescue=1 and %s contradict: a rescue writes where it reads, in any order",
				o->verify ? "verify=" : "oflag=append");
		return -EINVAL;
	}
	if (o->skip_size && o->skip_size < 65536) {
		pdd_usage_error("skip_size=%llu: 0 (never skip) or at least 65536, as ddrescue's",
				(unsigned long long)o->skip_size);
		return -EINVAL;
	}
	if (o->skip_size && o->skip_max && o->skip_size > o->skip_max) {
		pdd_usage_error("skip_size=%llu is more than max_skip=%llu",
				(unsigned long long)o->skip_size, (unsigned long long)o->skip_max);
		return -EINVAL;
	}
	if (o->map && (o->oflags & PDD_F_TRUNC)) {
		pdd_usage_error("map= and oflag=trunc contradict: a rerun would cut off what the map marks finished");
		return -EINVAL;
	}
	if (o->map && (o->oflags & PDD_F_APPEND)) {
		pdd_usage_error("map= and oflag=append contradict: a map needs the output's positions");
		return -EINVAL;
	}
	if (!o->map && o->map_interval != PDD_MAP_INTERVAL) {
		pdd_usage_error("map_interval= needs map=");
		return -EINVAL;
	}
	if (o->cdbsz != 6 && o->cdbsz != 10 && o->cdbsz != 12 && o->cdbsz != 16) {
		pdd_usage_error("cdbsz=%u: must be 6, 10, 12 or 16", o->cdbsz);
		return -EINVAL;
	}
	return 0;
}

/* sgp_dd's spellings of the same switches: fua=1 is oflag=fua, fua=2
 * iflag=fua; coe=1, iflag=coe and oflag=coe all mean continue on read
 * errors (write errors always stop the copy). */
static void merge_aliases(struct pdd_opts *o)
{
	if (o->fua & 1)
		o->oflags |= PDD_F_FUA;
	if (o->fua & 2)
		o->iflags |= PDD_F_FUA;
	if (o->coe || ((o->iflags | o->oflags) & PDD_F_COE)) {
		o->coe = true;
		o->iflags |= PDD_F_COE;
	}
}

int pdd_parse_args(int argc, char **argv, struct pdd_opts *o)
{
	bool seen[48] = { false };
	int err;

	memset(o, 0, sizeof(*o));
	o->threads = 4;
	o->engine = "auto";
	o->sync = true;
	o->cdbsz = 10;
	o->timeout = PDD_SG_TIMEOUT;
	o->map_interval = PDD_MAP_INTERVAL;
	o->trim = o->scrape = true;

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *eq = strchr(arg, '=');
		const struct operand *op;
		char name[16];
		size_t n;

		if (arg[0] == '-' && arg[1] && !eq) {
			err = parse_option(o, arg);
			if (err)
				return err;
			continue;
		}
		n = eq ? (size_t)(eq - arg) : 0;
		if (!eq || n == 0 || n >= sizeof(name)) {
			pdd_usage_error("unknown operand '%s'", arg);
			return -EINVAL;
		}
		memcpy(name, arg, n);
		name[n] = '\0';
		op = bsearch(name, operands, N_OPERANDS, sizeof(*op), cmp_operand);
		if (!op) {
			pdd_usage_error("unknown operand '%s'", arg);
			return -EINVAL;
		}
		if (seen[op->id]) {
			pdd_usage_error("%s= given more than once", name);
			return -EINVAL;
		}
		seen[op->id] = true;
		err = set_operand(o, op, eq + 1);
		if (err)
			return err;
		if (!strcmp(name, "count"))
			o->count_given = true;
		if (!strcmp(name, "timeout"))
			o->timeout_given = true;
		if (!strcmp(name, "sparse"))
			o->sparse_given = true;
		if (!strcmp(name, "skip_size"))
			o->skip_given = true;
		if (op->id >= 35 && op->id != 40)
			o->rescue_only = op->name;	/* one of rescue=1's */
	}
	if (o->help || o->version)
		return 0;
	merge_aliases(o);
	/* verify=hash compares digests: sha256's unless hash= names others */
	if (o->verify == PDD_VERIFY_HASH && !pdd_hash_available()) {
		pdd_usage_error("verify=hash: %s", pdd_lib_error(PDD_LIB_CRYPTO));
		return -EINVAL;
	}
	if (o->verify == PDD_VERIFY_HASH && !o->hash_algs)
		o->hash_algs = 1u << PDD_HASH_SHA256;
	return check_conflicts(o);
}
