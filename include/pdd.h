/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pdd - parallel block-device copier.
 *
 * The pieces a copy passes through, in order: operands (args.c) become
 * struct pdd_opts; each side is opened and measured (dev.c) into a
 * struct pdd_dev; the two are checked against each other (plan.c) into a
 * struct pdd_plan; the copy core (copy.c) drives an engine (engine.h) and
 * fills a struct pdd_result; the report (stats.c) prints it.  Below main()
 * every function returns 0 or -errno; diagnostics go through msg.c.
 */
#ifndef PDD_H
#define PDD_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

#define PDD_VERSION "0.1.0"

/* Limits on what the operands may ask for. */
#define PDD_MAX_THREADS		1024		/* as sgp_dd */
#define PDD_MAX_XFER		(1ULL << 30)	/* bytes in one transfer */
#define PDD_MAX_INFLIGHT_BYTES	(256ULL << 20)	/* buffer memory in flight */
#define PDD_HOLES_DEPTH		8	/* transfers in flight at least, from a file
					 * whose holes cut them */
#define PDD_MAX_QD		4096		/* requests in flight */
#define PDD_NBD_MAX_CONNS	16		/* conns=: connections to a server */
#define PDD_NBD_CONNS		2		/* its default, with multi-conn */

/* iflag= and oflag= bits */
#define PDD_F_DIRECT	(1u << 0)	/* O_DIRECT even on a regular file */
#define PDD_F_NODIRECT	(1u << 1)	/* never O_DIRECT */
#define PDD_F_DSYNC	(1u << 2)	/* O_DSYNC */
#define PDD_F_EXCL	(1u << 3)	/* O_EXCL: exclusive device, or new file */
#define PDD_F_APPEND	(1u << 4)	/* of only: O_APPEND, written in order */
#define PDD_F_TRUNC	(1u << 5)	/* of only: truncate to seek= first */
#define PDD_F_NOCREAT	(1u << 6)	/* of only: never create the file */
#define PDD_F_FUA	(1u << 7)	/* sg: force unit access on each command */
#define PDD_F_DPO	(1u << 8)	/* sg: disable page out (do not cache) */
#define PDD_F_COE	(1u << 9)	/* continue on read errors (coe=1) */
#define PDD_F_NULL	(1u << 10)	/* sgp_dd's placeholder: does nothing */
#define PDD_F_FORCE	(1u << 11)	/* of only: write although another device
					 * holds the output (never when mounted) */
#define PDD_F_ZEROED	(1u << 12)	/* of only: the output reads as zeros
					 * already; zero runs are not written */

#define PDD_SG_TIMEOUT	60		/* seconds a SCSI command may take, as sg_dd */
#define PDD_MAP_INTERVAL 30		/* seconds between saves of map=, as ddrescue */

enum pdd_status {
	PDD_STATUS_DEFAULT,		/* records and bytes lines */
	PDD_STATUS_NOXFER,		/* records lines only */
	PDD_STATUS_NONE,		/* errors only */
	PDD_STATUS_JSON,		/* one JSON object at the end, on stdout */
};

enum pdd_verify {
	PDD_VERIFY_NONE,		/* verify=0 */
	PDD_VERIFY_AFTER,		/* verify=1: compare after the copy */
	PDD_VERIFY_ONLY,		/* verify=only: compare, copy nothing */
	PDD_VERIFY_HASH,		/* verify=hash: the output's digests read
					 * back against the copy's */
};

/* What the command line asked for, before any file is looked at. */
struct pdd_opts {
	const char *in_path;		/* if=, NULL or "-" for stdin */
	const char *out_path;		/* of=, NULL or "-" for stdout */
	uint64_t bs;			/* bs=, 0 when not given */
	uint64_t bpt;			/* bpt=, 0 when not given */
	uint64_t skip;			/* skip= in blocks of bs */
	uint64_t seek;			/* seek= in blocks of bs */
	uint64_t count;			/* count= in blocks of bs */
	bool count_given;		/* count= was on the command line */
	bool timeout_given;		/* timeout= was: an NBD side's requests
					 * have that long (none without it) */
	unsigned int threads;		/* threads= / thr= */
	unsigned int qd;		/* qd=, 0 for the engine's default */
	unsigned int conns;		/* conns=: NBD connections, 0 default */
	uint64_t sparse;		/* sparse=: grain of zero runs, 0 off */
	bool sparse_given;		/* sparse= was on the command line */
	bool conv_sparse;		/* conv=sparse: dd's name for the default */
	const char *engine;		/* engine=, "auto" by default */
	unsigned int iflags;		/* PDD_F_* for the input */
	unsigned int oflags;		/* PDD_F_* for the output */
	bool sync;			/* sync=1: flush the output at the end */
	bool time;			/* time=1: sgp_dd's timing line and CPU */
	unsigned int cdbsz;		/* cdbsz=: smallest READ/WRITE CDB for sg */
	unsigned int fua;		/* fua=0..3: 1 of, 2 if (sgp_dd's bits) */
	bool dio;			/* dio=1: sg direct I/O (SG_FLAG_DIRECT_IO) */
	bool coe;			/* coe=1: continue past unreadable blocks */
	/* rescue=1 (rescue.c) */
	bool rescue;			/* rescue=1: ddrescue's passes */
	uint64_t skip_size, skip_max;	/* skip_size=, max_skip=: pass 1's skip */
	bool skip_given;		/* skip_size= was given (0: never skip) */
	uint64_t min_rate, max_rate;	/* min_rate=, max_rate=: bytes a second */
	unsigned int give_up;		/* give_up=: seconds without a good read */
	bool reverse;			/* reverse=1: passes the other way */
	const char *domain;		/* domain=: only what this map finished */
	bool trim, scrape;		/* trim=0, scrape=0: leave those phases */
	const char *rescue_only;	/* an operand given that needs rescue=1 */
	unsigned int retries;		/* retries=: more reads of a bad block */
	uint64_t coe_limit;		/* coe_limit=: stop after this many, 0 never */
	unsigned int timeout;		/* timeout=: seconds per SCSI command */
	const char *map;		/* map=: ddrescue-format mapfile, or NULL */
	unsigned int map_interval;	/* map_interval=: seconds between saves */
	enum pdd_status status;		/* status= */
	bool progress;			/* status=progress, -p, --progress */
	enum pdd_verify verify;		/* verify= */
	unsigned int hash_algs;		/* hash=: a bit per enum pdd_hash_alg */
	const char *hashlog;		/* hashlog=: where the digests go */
	uint64_t hashwindow;		/* hashwindow=: a digest per window too */
	int verbose;			/* verbose= / deb= / -v */
	bool dry_run;			/* --dry-run: plan only */
	bool help;			/* --help */
	bool version;			/* --version */
};

enum pdd_kind {
	PDD_KIND_FILE,			/* regular file */
	PDD_KIND_BLOCK,			/* block device */
	PDD_KIND_FIFO,			/* FIFO, pipe, socket or tty: a stream */
	PDD_KIND_CHAR,			/* other character device: a stream */
	PDD_KIND_NULL,			/* /dev/null or "." : discards, empty */
	PDD_KIND_ZERO,			/* /dev/zero: endless zeros */
	PDD_KIND_SG,			/* SCSI generic, char major 21 */
	PDD_KIND_RAW,			/* raw device, char major 162 */
	PDD_KIND_NBD,			/* an export on an NBD server (a URI) */
};

/* One side of the copy, opened and measured. */
struct pdd_dev {
	const char *path;		/* as given; "-" for stdin or stdout */
	const char *name;		/* for messages */
	bool output;			/* the of= side */
	enum pdd_kind kind;		/* what it is */
	int fd;				/* descriptor for aligned I/O; -1 until opened */
	int fd_buf;			/* buffered descriptor for unaligned pieces
					 * when direct; same as fd otherwise */
	bool own_fd;			/* we opened fd (close it) */
	int std_fd;			/* a seekable standard input or output:
					 * the shell's descriptor, whose offset
					 * pdd moves past the copy; else -1 */
	uint64_t base;			/* that descriptor's offset at the start:
					 * skip= or seek= counts from it */
	bool missing;			/* output file does not exist yet */
	bool seekable;			/* positional I/O is possible */
	bool stream;			/* must be read or written in order */
	bool direct;			/* fd has O_DIRECT */
	bool size_known;		/* size is meaningful */
	uint64_t size;			/* bytes, whole logical blocks for devices */
	unsigned int lbs;		/* logical block size (1 for streams) */
	unsigned int pbs;		/* physical block size */
	unsigned int io_align;		/* offset and length multiple for direct I/O */
	unsigned int mem_align;		/* buffer address multiple for direct I/O */
	uint64_t max_xfer;		/* device's largest request, 0 if unknown */
	unsigned int flags;		/* PDD_F_* that applied */
	/* sg devices only: how each command is built */
	unsigned int cdbsz;		/* smallest CDB to use: 6, 10, 12, 16 */
	unsigned int timeout_ms;	/* per command */
	bool dio;			/* ask the driver for direct I/O */
	/* who it is, for the dry run and the report; empty when unknown */
	char model[64];			/* sysfs vendor and model, or INQUIRY's */
	char serial[64];		/* sysfs serial, or VPD page 0x80 */
	char backing[256];		/* a loop device's backing file */
	void *nbd;			/* NBD side: its libnbd handle */
};

/* The copy as it will run: every number checked against both devices. */
struct pdd_plan {
	uint64_t bs;			/* block size: unit of skip, seek, count */
	uint64_t bpt;			/* blocks per transfer */
	size_t xfer;			/* bytes per transfer, bs * bpt */
	uint64_t in_off;		/* first input byte: skip * bs, after
					 * where standard input was left */
	uint64_t out_off;		/* first output byte: seek * bs, after
					 * where standard output was left */
	uint64_t in_base, out_base;	/* those starting offsets (pdd_dev.base):
					 * block numbers shown count from them */
	uint64_t total;			/* bytes to copy; PDD_UNTIL_EOF for streams */
	unsigned int depth;		/* transfers in flight */
	size_t sparse;			/* sparse=: grain of zero runs, 0: none */
	unsigned int threads;		/* worker threads of a threaded side */
	bool reads_alone;		/* coe=1, rescue=1: each read moved by
					 * itself, never merged with the next
					 * (threads), so that a failing block
					 * is read as often as planned */
	size_t buf_align;		/* buffer address alignment */
	size_t buf_len;			/* bytes in each buffer: a transfer, or
					 * the whole copy when that is less */
	const struct pdd_engine_ops *ops[2]; /* each side's engine: the input's,
					 * the output's (NULL: it discards) */
};

#define PDD_WRITE_BACK (8u << 20)	/* written back through the page cache in these */
#define PDD_UNTIL_EOF UINT64_MAX

/* The greatest common divisor of a and b (a when b is 0). */
static inline uint64_t pdd_gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

struct pdd_engine_ops;
struct pdd_map;

enum pdd_op {
	PDD_OP_NONE,
	PDD_OP_READ,
	PDD_OP_WRITE,
	PDD_OP_FLUSH,
	PDD_OP_MAP,			/* saving the map */
	PDD_OP_CLOSE,			/* closing the output */
	PDD_OP_ZERO,			/* making a range of the output read as
					 * zeros without sending them (sparse=) */
};

/* What happened: enough to print the report and pick the exit status. */
struct pdd_result {
	uint64_t in_bytes;		/* bytes read and accepted for writing */
	uint64_t out_bytes;		/* bytes written */
	uint64_t done;			/* the done mark: every byte of the range
					 * below it is copied (by this run, or
					 * by an earlier one the map recorded) */
	int err;			/* first error as -errno, 0 if none */
	enum pdd_op err_op;		/* what failed */
	uint64_t zero_bytes;		/* sparse=: zero runs zeroed by the output */
	uint64_t skip_bytes;		/* and not written, the output holding
					 * zeros there already */
	uint64_t hole_bytes;		/* input bytes in holes: not read */
	struct pdd_hash *hash;		/* hash=: the digests, or NULL */
	uint64_t hashed;		/* bytes of the range hashed */
	bool hash_whole;		/* the digests cover the whole range */
	bool hash_reread;		/* to be read from the output after the
					 * copy (a resumed copy wrote only part) */
	uint64_t hash_len;		/* the bytes the digests are to cover */
	bool hash_file;			/* ... which are all the output's (a
					 * checker given its name reads them) */
	double hash_wait;		/* seconds reads waited for the hash */
	unsigned int hash_slow;		/* 1 + the algorithm they last waited
					 * for (enum pdd_hash_alg); 0: none */
	unsigned int verify_hash_diff;	/* verify=hash: digests that differ */
	bool hash_failed;		/* no digest where one was due, or the
					 * hashlog could not be written */
	bool unflushed;			/* the last flush failed after another
					 * error: nothing written is known to
					 * be on stable storage */
	uint64_t bad_blocks;		/* coe: input blocks zero-filled */
	uint64_t bad_first, bad_last;	/* coe: lowest and highest of them */
	unsigned int bad_unit;		/* coe: their size in bytes */
	uint64_t *bad_lbas;		/* coe: each of them, as met (malloc'd;
					 * pdd_result_free) */
	size_t nbad_lbas;
	uint64_t recovered;		/* errors the device recovered itself */
	int signal;			/* SIGINT or SIGTERM stopped the copy */
	uint64_t err_off;		/* byte offset of the failure in its file */
	size_t err_len;			/* bytes the failing request asked for */
	double secs;			/* wall time of the copy and flush */
	double user_secs;		/* CPU time in user mode */
	double sys_secs;		/* CPU time in the kernel */
	/* verify= */
	bool verified;			/* the comparison ran to its end */
	uint64_t verify_blocks;		/* blocks of bs compared */
	uint64_t verify_diff;		/* of them, blocks that differ */
	uint64_t verify_first;		/* the first that differs, in blocks of
					 * bs from the start of the output */
	double verify_secs;		/* wall time of the comparison */
	/* rescue=1: how it ended (rescue-report.c) */
	bool rescue;			/* the run was a rescue */
	uint64_t rescued;		/* bytes of the range finished ('+') */
	uint64_t non_tried, non_trimmed, non_scraped, bad_bytes;
	uint64_t bad_areas;		/* runs of bad blocks */
	uint64_t read_errors;		/* reads that failed */
	char rescue_status;		/* the phase it ended in, as the map's
					 * status line: '?', '*', '/', '-', '+' */
	unsigned int rescue_pass;
	bool gave_up;			/* give_up= expired */
	double since_good;		/* seconds since the last good read */
};

/* args.c */
int pdd_parse_num(const char *s, uint64_t *out);
int pdd_parse_args(int argc, char **argv, struct pdd_opts *o);
void pdd_usage(FILE *f);
/* version.c: --version, with the engines and each library's version */
void pdd_version(FILE *f);

/* dev.c: what a side is and its geometry */
struct stat;
enum pdd_kind pdd_dev_classify(const struct stat *st);
int pdd_dev_measure(struct pdd_dev *d, const struct stat *st);
void pdd_dev_measure_file(struct pdd_dev *d, const struct stat *st);
int pdd_dev_skip_stream(struct pdd_dev *d, uint64_t bytes);
int pdd_dev_flush(struct pdd_dev *d);

/* n transfer buffers of len bytes aligned to align (a power of two, or
 * 0), in one mapping that huge pages can back, into bufs[] (bufs.c); 0,
 * -EINVAL or -ENOMEM.  Freed together by pdd_bufs_free() with the same
 * n, align and len. */
int pdd_bufs_alloc(void **bufs, unsigned int n, size_t align, size_t len);
void pdd_bufs_free(void **bufs, unsigned int n, size_t align, size_t len);

/* A helper thread that brings a copy's n buffers of len bytes into memory
 * in order while the copy starts (bufs.c), those of the first use
 * transfers at most.  pdd_fill_new() is NULL when there is no need (less
 * than a huge page in all) or no memory: each buffer is then faulted in
 * by its first request, which is always safe.
 * pdd_fill_go() starts the helper.  Buffer 0 is ready at once.
 * pdd_fill_ready(): may buffer i be used?  With wait, it is brought in
 * first (for a loop with no read in flight to wake it).  pdd_fill_all():
 * 0 until every buffer the helper is for is in, then how many those are.
 * pdd_fill_end() stops the helper and frees f, before the buffers go.
 * f may be NULL in each. */
struct pdd_fill;
struct pdd_fill *pdd_fill_new(void *const *bufs, unsigned int n, size_t len, uint64_t use);
void pdd_fill_go(struct pdd_fill *f);
bool pdd_fill_ready(struct pdd_fill *f, unsigned int i, bool wait);
unsigned int pdd_fill_all(struct pdd_fill *f);
void pdd_fill_end(struct pdd_fill *f);

/* Are reads (writes, for an output) through fd throttled by this
 * process's cgroup (blkio or io.max, on the whole disk fd's device or
 * file system lies on)?  throttle.c */
bool pdd_throttled(int fd, bool output);

/* A sysfs attribute of block device rdev (path under its directory, after
 * up: "" or "../" for a partition's disk), NUL-terminated in out; its
 * length, 0 when missing (dev.c). */
size_t pdd_sys_read(dev_t rdev, const char *up, const char *path, char *out, size_t len);

/* The kernel's \ooo escapes in /proc's mount tables undone in s, in
 * place (throttle.c). */
void pdd_unescape(char *s);
const char *pdd_kind_name(enum pdd_kind k);
const char *pdd_kind_word(enum pdd_kind k);
int pdd_dev_pick_fd(const struct pdd_dev *d, uint64_t off, size_t len,
		    const void *buf);

/* nbd-side.c (with libnbd) */
bool pdd_nbd_uri(const char *path);
int pdd_nbd_open(struct pdd_dev *d);
#ifdef HAVE_LIBNBD
int pdd_nbd_connect(struct pdd_dev *d, unsigned int want);
bool pdd_nbd_can_zero(const struct pdd_dev *d);
int pdd_nbd_extent(struct pdd_dev *d, uint64_t off, uint64_t max, uint64_t *len,
		   bool *zero);
#else
/* without libnbd no side is an NBD export (open.c refuses the URI) */
static inline int pdd_nbd_connect(struct pdd_dev *d, unsigned int want)
{
	(void)d;
	(void)want;
	return 0;
}
static inline bool pdd_nbd_can_zero(const struct pdd_dev *d)
{
	(void)d;
	return false;
}
static inline int pdd_nbd_extent(struct pdd_dev *d, uint64_t off, uint64_t max,
				 uint64_t *len, bool *zero)
{
	(void)d;
	(void)off;
	(void)max;
	*len = 0;
	*zero = false;
	return -ENOTSUP;
}
#endif
void pdd_nbd_close(struct pdd_dev *d);
void pdd_nbd_describe(FILE *f, const struct pdd_dev *d);

/* open.c: opening it, and the checks made at open */
int pdd_dev_open(struct pdd_dev *d, const char *path, bool output,
		 unsigned int flags);
int pdd_dev_create(struct pdd_dev *d);
int pdd_dev_truncate(struct pdd_dev *d, uint64_t trunc_to);
int pdd_dev_close(struct pdd_dev *d);
void pdd_dev_leave(const struct pdd_dev *d, uint64_t off);

/* plan.c */
int pdd_plan_make(const struct pdd_opts *o, const struct pdd_dev *in,
		  const struct pdd_dev *out, struct pdd_plan *p);
const char *pdd_plan_engine(const struct pdd_plan *p);
void pdd_plan_print(FILE *f, const struct pdd_plan *p,
		    const struct pdd_dev *in, const struct pdd_dev *out);

/* guard.c */
extern const char *pdd_guard_root;	/* prefix of /proc and /sys: "" but in tests */
int pdd_guard(const struct pdd_plan *p, const struct pdd_dev *in,
	      const struct pdd_dev *out);
void pdd_guard_busy(const struct pdd_dev *in, const struct pdd_dev *out);

/* copy.c */
int pdd_copy(const struct pdd_plan *p, struct pdd_dev *in,
	     struct pdd_dev *out, const struct pdd_opts *o,
	     struct pdd_map *map, struct pdd_result *r);

/* copy-report.c */
bool pdd_say_io_error(const struct pdd_result *r, const struct pdd_plan *p,
		      const struct pdd_dev *in, const struct pdd_dev *out);

/* stats.c */
size_t pdd_fmt_human(char *buf, size_t len, double v, bool iec);
size_t pdd_fmt_rate(char *buf, size_t len, double v);
size_t pdd_fmt_records(char *buf, size_t len, const char *dir,
		       uint64_t bytes, uint64_t bs);
size_t pdd_fmt_bytes_line(char *buf, size_t len, uint64_t bytes, double secs);
size_t pdd_fmt_time_line(char *buf, size_t len, uint64_t bytes, double secs);
void pdd_report(const struct pdd_opts *o, const struct pdd_plan *p,
		const struct pdd_result *r);
int pdd_exit_status(const struct pdd_result *r);
bool pdd_hash_limited(const struct pdd_result *r);
void pdd_result_free(struct pdd_result *r);
double pdd_now(void);
char *pdd_resume_command(int argc, char **argv, const struct pdd_plan *p,
			 const struct pdd_dev *in, const struct pdd_dev *out,
			 const struct pdd_result *r, const char **stream);

/* progress.c */
struct pdd_extent;
size_t pdd_fmt_progress(char *buf, size_t len, uint64_t bytes, uint64_t total,
			double secs, double rate, unsigned int width);
void pdd_progress_start(bool on, const struct pdd_extent *todo, size_t n,
			double t0);
void pdd_progress_tick(uint64_t bytes, double now, double idle);
void pdd_progress_end(void);

/* rescue.c */
struct pdd_map;
int pdd_rescue(const struct pdd_plan *p, struct pdd_dev *in, struct pdd_dev *out,
	       const struct pdd_opts *o, struct pdd_map *map, struct pdd_result *r);
int pdd_rescue_check(const struct pdd_opts *o, const struct pdd_dev *in,
		     const struct pdd_dev *out, const struct pdd_plan *p);
void pdd_rescue_json(FILE *f, const struct pdd_result *r);
void pdd_rescue_say(const struct pdd_opts *o, const struct pdd_result *r);

/* verify-open.c */
int pdd_verify_check(const struct pdd_opts *o, const struct pdd_dev *in,
		     const struct pdd_dev *out, const struct pdd_plan *p);
int pdd_verify_open(struct pdd_dev *v, const struct pdd_dev *d, int std_fd,
		    unsigned int conns);

/* verify.c */
int pdd_verify(const struct pdd_plan *p, const struct pdd_dev *in,
	       const struct pdd_dev *out, const struct pdd_opts *o,
	       struct pdd_result *r);
struct pdd_hash;
int pdd_verify_read(const struct pdd_plan *p, const struct pdd_dev *out,
		    const struct pdd_opts *o, struct pdd_result *r,
		    struct pdd_hash *h, uint64_t len);

/* verify-hash.c */
void pdd_hash_after(const struct pdd_plan *p, const struct pdd_dev *out,
		    const struct pdd_opts *o, struct pdd_result *r);
int pdd_verify_hash(const struct pdd_plan *p, const struct pdd_dev *out,
		    const struct pdd_opts *o, struct pdd_result *r);
bool pdd_hash_whole_file(const struct pdd_dev *out, const struct pdd_plan *p, uint64_t len);

/* signals.c */
extern volatile sig_atomic_t pdd_stop_signal;
extern volatile sig_atomic_t pdd_report_now;
void pdd_signals_install(void);
void pdd_signals_block(bool block, sigset_t *old);

/* msg.c: the one place that prints diagnostics */
extern FILE *pdd_msg_stream;
extern int pdd_verbose;
void pdd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pdd_info(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pdd_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
const char *pdd_strerror(int err);
const char *pdd_first_error(void);
void pdd_stdout_open(void);
int pdd_stdout_close(int status, bool data);

/* json.c: what status=json reports; NULL for a stage not reached */
struct pdd_json {
	int argc;
	char **argv;			/* the operands as given */
	const struct pdd_dev *in, *out;	/* once both are open */
	const struct pdd_plan *p;	/* once the plan is made */
	const struct pdd_result *r;	/* once the copy (or verify) ran */
	const struct pdd_opts *o;	/* with r */
	const struct pdd_map *map;	/* with map= */
	const char *resume;		/* the command that resumes, or NULL */
	const char *message;		/* why pdd stopped before copying */
	bool dry_run;			/* --dry-run: the plan, not a copy */
	int status;			/* the exit status */
};
void pdd_report_json(FILE *f, const struct pdd_json *j);
void pdd_json_str(FILE *f, const char *s);
extern int pdd_msg_columns;
unsigned int pdd_msg_terminal(void);
void pdd_msg_progress(const char *line, bool in_place);
void pdd_msg_end_line(void);

#endif
