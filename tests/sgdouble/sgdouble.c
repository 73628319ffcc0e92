// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libsgdouble.so: a SCSI generic (sg) device made of a regular file, for
 * machines without the sg driver.  LD_PRELOAD it; every configured path
 * then opens as an sg device, a direct-access disk (peripheral type 0)
 * whose blocks are the backing file's, and answers the sg v3 interface
 * (the SG_IO ioctl, and write()/read() of struct sg_io_hdr) the way the
 * mainline driver (version 3.5.36) does, so that sg3_utils' sg_dd,
 * sgp_dd, sg_readcap, sg_inq and sg_turs, and pdd, run against it.  It
 * also makes raw devices (/dev/raw/rawN, removed from Linux in 5.14) of
 * block devices or regular files.
 *
 *   LD_PRELOAD=tests/sgdouble/libsgdouble.so SGDOUBLE_DEVS=/x/sg0=/tmp/d.img \
 *           sg_readcap /x/sg0
 *
 * Status: what the double does NOT do
 *   - The sg v2 interface (struct sg_header writes): ENOSYS; the v4
 *     interface (SG_IOSUBMIT..., sg driver 4.x); SCSI_IOCTL_SEND_COMMAND;
 *     BLKTRACE*: EINVAL.
 *   - Command timeouts happen only when injected (timeout:N): a command
 *     slower than its timeout field still completes.  duration is real
 *     time, or the latency when SGDOUBLE_LATENCY_US asks for more.
 *   - Direct I/O: SG_FLAG_DIRECT_IO is accepted and done indirectly
 *     (info says so), as with the driver's default allow_dio=0.
 *   - Read-only opens may send any command, as root may on a real node.
 *   - Signals do not interrupt a blocked read() or SG_IO (no EINTR).
 *   - Bad user pointers crash the caller instead of giving EFAULT.
 *   - Exclusive opens, fault counts and queues live in one process (the
 *     counts across processes with SGDOUBLE_STATE); fds inherited over
 *     exec, fds closed by fclose() until their number is reused by
 *     open(), fopen() streams, creat(), O_PATH, select(), epoll, splice,
 *     sendfile, copy_file_range, io_uring and raw syscalls see the
 *     backing file, not a device.  access(), realpath() and /sys know no
 *     such node.
 *   - No other SCSI command (READ LONG, WRITE SAME(10) and (32), UNMAP,
 *     MODE SELECT, PERSISTENT RESERVE..., protection information, ATA
 *     pass-through).  WRITE SAME(16) knows no thin provisioning: UNMAP=1
 *     writes the data as UNMAP=0 does, and ANCHOR=1 is refused.
 *   - Raw devices: the driver's own exclusive claim of the disk (EBUSY
 *     while it is mounted) is not made, and the caller's O_EXCL is
 *     dropped, as a char device ignores it; permissions are BLOCKDEV's.
 *     F_SETFL cannot clear O_DIRECT, though the kernel's setfl() let it
 *     (SETFL_MASK holds O_DIRECT, raw had no check_flags) and I/O then
 *     went through the disk's page cache: the double stays strict, so a
 *     program counting on that is caught.  A write past the end of a
 *     regular file BLOCKDEV grows it (a disk says ENOSPC).  As for sg,
 *     fds the double did not see opened (exec, fopen...) are BLOCKDEV's.
 *
 * Environment:
 *   SGDOUBLE_DEVS=PATH=BACKING[:LBS][,PATH=BACKING[:LBS]]...
 *       Each PATH (it need not exist) becomes an sg device, char 21:N for
 *       the N-th entry counted from 0, backed by the regular file BACKING,
 *       opened read-write whatever the caller asks.  LBS is the logical
 *       block size, 512 by default (any power of two from 512 to 65536).
 *       The capacity is the backing file's size / LBS, measured at open.
 *   SGDOUBLE_RAW=PATH=BLOCKDEV[,PATH=BLOCKDEV]...
 *       Each PATH (it need not exist, and may not be an SGDOUBLE_DEVS
 *       path) becomes a raw device, char 162:N for the N-th entry counted
 *       from 1, as /dev/raw/rawN was (0 was rawctl), bound to BLOCKDEV: a
 *       block device or, for tests without root, a regular file on a file
 *       system that takes O_DIRECT.  BLOCKDEV may not hold ','.
 *   SGDOUBLE_FAULTS=FAULT[,FAULT]...  where FAULT is KIND[@PATH][:ARGS];
 *       without @PATH it applies to every sg device (raw devices take none):
 *         medium:A-B     a READ or VERIFY touching any LBA in A..B (or the
 *                        one LBA A) fails: CHECK CONDITION, MEDIUM ERROR,
 *                        11/00 unrecovered read error, the INFO field (VALID
 *                        set) holding the first bad LBA of the request;
 *                        nothing is transferred, resid is dxfer_len.
 *         wmedium:A-B    the same for WRITE, 0c/00 write error; nothing of
 *                        the request is written.
 *         recovered:A-B  a READ or WRITE touching A..B is done in full (the
 *                        data moved, resid as without the fault) but ends
 *                        with CHECK CONDITION, RECOVERED ERROR, 17/01
 *                        recovered data with retries, the INFO field (VALID
 *                        set) holding the first LBA of the request in A..B.
 *                        A medium or wmedium fault on the request wins.
 *         ua:N           the next N commands fail with UNIT ATTENTION,
 *                        29/00 power on or reset occurred
 *         notready:N     ... NOT READY, 04/00 not ready, cause not reportable
 *         aborted:N      ... ABORTED COMMAND, 00/00
 *         illegal:N      ... ILLEGAL REQUEST, 24/00 invalid field in CDB
 *         timeout:N      ... time out: not executed, nothing transferred
 *                        (resid dxfer_len), status 0, host_status
 *                        DID_TIME_OUT (0x03), driver_status 0, no sense;
 *                        duration is the header's timeout (30000 ms, the
 *                        block layer's default, when it is 0), reported at
 *                        once: the double does not wait it out.
 *         nowritesame:N  the next N WRITE SAME(16) commands (and no other
 *                        command) fail with ILLEGAL REQUEST, 20/00 invalid
 *                        command operation code, as on a device without
 *                        it ("always": a device that has none), after the
 *                        other counted faults and before any check of the
 *                        CDB.
 *       N is a count or "always" (default 1).  Counted faults skip
 *       INQUIRY, REPORT LUNS and REQUEST SENSE, as SPC exempts them from
 *       unit attentions (REQUEST SENSE reports a pending ua, and clears it,
 *       or the not-ready state, with GOOD status); among them ua comes
 *       first, then notready, aborted, illegal, timeout.  A counted
 *       kind written with the prefix "io-" (io-ua:always, io-timeout:2)
 *       fires on READ, WRITE and WRITE SAME commands only (not on
 *       nowritesame, which is for WRITE SAME already), so that a program's
 *       READ CAPACITY, TEST UNIT READY and SYNCHRONIZE CACHE get through
 *       and the fault meets its copy.  PATH may not hold ':' or ',', and
 *       BACKING may not hold ','.
 *   SGDOUBLE_STATE=FILE
 *       Keep the counts of counted faults in FILE, shared by every process
 *       that names it, the way a unit attention is reported once by the
 *       device and not once per program.  Created and filled on first use;
 *       remove it to start over.  Without it each process counts alone.
 *   SGDOUBLE_LATENCY_US=N
 *       Every READ and WRITE (of any CDB size), and WRITE SAME(16), that
 *       reaches the medium,
 *       i.e. that no counted fault ends, takes at least N microseconds
 *       from its write() or SG_IO, as a disk's service time: SG_IO
 *       returns no sooner, and a command written with write() is not
 *       readable, POLLIN or counted by SG_GET_NUM_WAITING before then;
 *       but write() returns at once, so commands in flight on one fd or
 *       several overlap their latencies and queue depth pays off as on a
 *       disk.  duration includes it.  0, the default: no latency.
 *   SGDOUBLE_WRITE_SAME_MAX=N
 *       The Block Limits VPD page's MAXIMUM WRITE SAME LENGTH, in logical
 *       blocks: a WRITE SAME(16) of more fails with ILLEGAL REQUEST, 24/00
 *       invalid field in CDB.  0, the default: no limit is reported, and
 *       any number of blocks to the end of the capacity is written.
 *   SGDOUBLE_LOG=FILE
 *       Append a line for each SCSI command (pid, device, command, CDB,
 *       LBA, blocks, dxfer_len, pack_id, result with sense key, ASC and
 *       INFO), each other ioctl with its result, each open and close, each
 *       refused write()/SG_IO and each call the node refuses.
 *
 * What the double does:
 *   open, open64, openat, openat64 and their _2 fortify forms (O_EXCL is
 *   the driver's exclusive open, within this process; O_NONBLOCK makes
 *   read() return EAGAIN and O_EXCL opens fail EBUSY instead of waiting);
 *   close, close_range, closefrom, dup, dup2, dup3, fcntl (F_DUPFD*,
 *   F_GETFL reports the access mode asked for); stat, lstat, fstat,
 *   fstatat and their 64 forms, __xstat, __lxstat, __fxstat, __fxstatat
 *   and their 64 forms, statx (S_IFCHR 0660, st_rdev 21:N, size 0, no
 *   STATX_DIOALIGN; newfstatat is a syscall glibc does not export);
 *   ioctl: SG_IO, SG_GET_VERSION_NUM (30536),
 *   SG_[GS]ET_RESERVED_SIZE (32 KiB default, page minimum, clamped to
 *   max_sectors 1280 KiB, EBUSY while in use or mmapped),
 *   SG_SET_FORCE_PACK_ID, SG_GET_PACK_ID, SG_GET_NUM_WAITING,
 *   SG_[GS]ET_TIMEOUT (the get returns it as the ioctl's value),
 *   SG_GET_SCSI_ID, SG_EMULATED_HOST, SG_[GS]ET_COMMAND_Q,
 *   SG_[GS]ET_KEEP_ORPHAN, SG_GET_SG_TABLESIZE, SG_NEXT_CMD_LEN,
 *   SG_GET_LOW_DMA, SG_SET_FORCE_LOW_DMA, SG_SET_DEBUG,
 *   SG_GET_ACCESS_COUNT, SG_GET_REQUEST_TABLE, SG_SCSI_RESET (a reset
 *   leaves a unit attention), SCSI_IOCTL_GET_IDLUN, _GET_BUS_NUMBER,
 *   _PROBE_HOST, _TEST_UNIT_READY, _START_UNIT, _STOP_UNIT, _DOORLOCK,
 *   _DOORUNLOCK, and BLKSECTGET (in bytes, as sg answers it); other
 *   ioctls fail EPERM on a fd not opened O_RDWR, else EINVAL.
 *   write() queues a v3 header (16 per fd, then EDOM; ENOSYS unless
 *   interface_id is 'S'; EMSGSIZE for a CDB outside 6..252 bytes; EINVAL
 *   beyond 32767 sectors of data or 1024 iovecs; EBADF on an O_RDONLY fd)
 *   and runs the command at once, outside the fd's lock, so threads
 *   sharing a fd run in parallel; read() returns the oldest finished
 *   command, or with SG_SET_FORCE_PACK_ID the one whose pack_id the
 *   caller's header names (-1: any), blocks until one is done or returns
 *   EAGAIN on an O_NONBLOCK fd, and gives back the whole header as
 *   written (usr_ptr, pack_id) with status, masked_status, host_status,
 *   driver_status (DRIVER_SENSE with sense), sb_len_wr, resid, duration,
 *   info (SG_INFO_CHECK on any error); readv/writev loop over the
 *   iovecs; poll and ppoll report POLLIN when a result is waiting and
 *   POLLOUT while fewer than 16 are queued, as sg_poll() does; mmap maps
 *   the reserved buffer for SG_FLAG_MMAP_IO; pread, pwrite and lseek fail
 *   ESPIPE, fsync, fdatasync and ftruncate EINVAL, fallocate ENODEV, as
 *   on the real node.
 *   Data moves through dxferp (or iovec_count sg_iovec entries, or the
 *   mmapped reserved buffer); SG_FLAG_NO_DXFER skips the copy (a write
 *   then writes zeros).
 *   SCSI: TEST UNIT READY, REQUEST SENSE, INQUIRY (standard: PDD
 *   SGDOUBLE 1.0, SPC-4; VPD 00, 80 serial, 83 NAA and T10 ids, B0 block
 *   limits, B1 non-rotating), READ CAPACITY(10) (last LBA 0xffffffff when
 *   it does not fit), READ CAPACITY(16), READ and WRITE (6/10/12/16; FUA
 *   and DPO accepted), VERIFY(10/12/16) with BYTCHK 0 or 1 (MISCOMPARE
 *   1d/00 with the LBA), WRITE SAME(16) as SBC-4 has it (one block of
 *   data out written to every block of the range, or zeros with NDOB=1
 *   and no data out; 0 blocks, WRPROTECT, ANCHOR or the obsolete PBDATA
 *   and LBDATA bits 24/00, as Block Limits says WSNZ and the device has
 *   no protection information; wmedium and recovered faults apply as to
 *   WRITE), SYNCHRONIZE CACHE(10/16) (fsync of the backing
 *   file), MODE SENSE(6/10) (caching page with WCE, control page; saved
 *   values 39/00), START STOP UNIT, REPORT LUNS (LUN 0).  Anything else
 *   is ILLEGAL REQUEST 20/00; a range past the capacity 21/00; bad CDB
 *   fields or a CDB shorter than its group's 24/00.  A transfer length
 *   that needs more data than dxfer_len, or a data direction that does
 *   not fit the command, ends with host_status DID_ERROR and no data.
 *   Sense is fixed format, or descriptor format when the INFO LBA needs
 *   more than 32 bits.  An I/O error on the backing file is MEDIUM ERROR
 *   (11/00 read, 0c/00 write) without INFO; other errors HARDWARE ERROR
 *   44/00.
 *   Raw devices: open of PATH opens BLOCKDEV for real with the caller's
 *   flags and O_DIRECT, as raw_open() set it (O_CREAT and O_TRUNC do
 *   nothing to the node, O_CREAT|O_EXCL fails EEXIST, O_DIRECTORY
 *   ENOTDIR), so the fd is BLOCKDEV's own: read, write, pread, pwrite,
 *   readv, io_uring, fsync and ioctls reach it natively, and misaligned
 *   I/O fails EINVAL as on raw.  stat and its kin, as for sg, of PATH or
 *   of such a fd say S_IFCHR 0660, 162:N, size 0 (no STATX_DIOALIGN);
 *   dup and close are followed as for sg; F_SETFL keeps O_DIRECT;
 *   lseek's SEEK_END counts from 0 and SEEK_DATA and SEEK_HOLE fail
 *   ENXIO (default_llseek() on the node, whose size is 0); mmap and
 *   fallocate fail ENODEV and ftruncate EINVAL, as raw_fops had none of
 *   them.  On a regular file BLOCKDEV the block ioctls a program sizes a
 *   disk with are answered as the disk would: BLKSSZGET, BLKPBSZGET,
 *   BLKBSZGET and BLKIOMIN with the file's direct I/O alignment
 *   (STATX_DIOALIGN, else 512), BLKGETSIZE64 and BLKGETSIZE with its
 *   size, BLKIOOPT, BLKALIGNOFF and BLKROGET 0, BLKSECTGET 2560 sectors;
 *   others fail as on the file (ENOTTY).
 */
#undef _FORTIFY_SOURCE		/* the fortify wrappers of open() would clash */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <poll.h>
#include <pthread.h>
#include <scsi/scsi.h>
#include <scsi/scsi_ioctl.h>
#include <scsi/sg.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC	(1U << 2)
#endif

#define SGD_MAJOR		21	/* SCSI_GENERIC_MAJOR */
#define SGD_RAW_MAJOR		162	/* RAW_MAJOR */
#define SGD_VERSION_NUM		30536	/* mainline sg driver 3.5.36 */
#define SGD_MAX_QUEUE		16	/* SG_MAX_QUEUE: requests per fd */
#define SGD_HDR_V2		36	/* sizeof(struct sg_header), SZ_SG_HEADER */
#define SGD_MAX_CDB		252	/* SG_MAX_CDB_SIZE */
#define SGD_SENSE_MAX		96	/* SCSI_SENSE_BUFFERSIZE */
#define SGD_DEF_RESERVE		32768	/* def_reserved_size */
#define SGD_MAX_SECTORS		2560	/* queue max_sectors: 1280 KiB */
#define SGD_MAX_HW_SECTORS	32767	/* largest pass-through request */
#define SGD_TABLESIZE		128	/* sg_tablesize of the made-up host */
#define SGD_MAX_IOV		1024	/* UIO_MAXIOV */
#define SGD_MAX_FD		65536	/* fds above this are never sg */
#define SGD_USER_HZ		100	/* timeouts are in USER_HZ ticks */
#define SGD_HZ			250	/* Debian's kernel HZ, for the clamp */
#define SGD_DEF_TIMEOUT		(60 * SGD_USER_HZ)
#define SGD_RQ_TIMEOUT_MS	30000	/* the block layer's when a header says 0 */
#define SGD_MAX_LATENCY_US	60000000	/* a minute: beyond any disk, a typo */

#ifndef SG_FLAG_MMAP_IO		/* glibc's scsi/sg.h lacks the newer flags */
#define SG_FLAG_MMAP_IO		4
#endif
#ifndef SG_GET_ACCESS_COUNT
#define SG_GET_ACCESS_COUNT	0x2289
#endif

/* the status bytes of a finished command */
#define STAT_CHECK		0x02	/* SAM CHECK CONDITION */
#define MASKED_CHECK		0x01	/* the same, shifted right by one */
#define DRIVER_SENSE		0x08
#define DID_TIME_OUT		0x03
#define DID_ERROR		0x07

/* sense keys and additional sense codes (ASC << 8 | ASCQ) */
#define KEY_NO_SENSE		0x0
#define KEY_RECOVERED		0x1
#define KEY_NOT_READY		0x2
#define KEY_MEDIUM		0x3
#define KEY_HARDWARE		0x4
#define KEY_ILLEGAL		0x5
#define KEY_UA			0x6
#define KEY_ABORTED		0xb
#define KEY_MISCOMPARE		0xe
#define ASC_NONE		0x0000
#define ASC_NOT_READY		0x0400
#define ASC_WRITE_ERROR		0x0c00
#define ASC_RECOVERED_RETRIES	0x1701
#define ASC_READ_ERROR		0x1100
#define ASC_MISCOMPARE		0x1d00
#define ASC_INVALID_OP		0x2000
#define ASC_LBA_RANGE		0x2100
#define ASC_INVALID_FIELD	0x2400
#define ASC_RESET		0x2900
#define ASC_NO_SAVE		0x3900
#define ASC_NO_MEDIUM		0x3a00
#define ASC_INTERNAL		0x4400

/* --- configuration ------------------------------------------------------ */

struct sgd_dev {			/* one configured device */
	char *path;			/* normalised absolute path of the node */
	const char *base;		/* its last component: a cheap first test */
	char *backing;			/* the regular file holding the blocks */
	unsigned int lbs;		/* logical block size */
	unsigned int minor;		/* N of char 21:N: its place in the list */
	uint64_t id;			/* hash of path: inode, serial, NAA id */
	int pending_ua;			/* set by SG_SCSI_RESET, taken by a command */
	pthread_mutex_t lock;		/* guards nopen and excl */
	pthread_cond_t cv;		/* signalled when an open goes away */
	int nopen;			/* open file descriptions */
	bool excl;			/* one of them is an O_EXCL open */
};

struct sgd_raw {			/* one SGDOUBLE_RAW entry */
	char *path;			/* normalised absolute path of the node */
	const char *base;		/* its last component */
	char *blockdev;			/* the block device or file it is bound to */
	unsigned int minor;		/* N of char 162:N: its place, from 1 */
	uint64_t id;			/* hash of path: the node's inode */
};

enum fault_kind {
	F_MEDIUM, F_WMEDIUM, F_RECOVERED,	/* by LBA */
	F_UA, F_NOTREADY, F_ABORTED, F_ILLEGAL, F_TIMEOUT,	/* counted */
	F_NOWS				/* counted, WRITE SAME only */
};

struct sgd_fault {			/* one SGDOUBLE_FAULTS entry */
	enum fault_kind kind;
	int dev;			/* index into devs, -1 for every device */
	uint64_t lo, hi;		/* LBA kinds: the LBAs it covers */
	int32_t *left;			/* counted kinds: commands left, -1 always */
	bool io_only;			/* "io-" kinds: READ and WRITE commands only */
};

static struct sgd_dev *devs;
static int ndevs;
static struct sgd_fault *faults;
static int nfaults;
static struct sgd_raw *raws;
static int nraws;
static int64_t latency_ns;		/* SGDOUBLE_LATENCY_US */
static uint64_t ws_max;			/* SGDOUBLE_WRITE_SAME_MAX, 0: none */
static int log_fd = -1;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* --- per open file ------------------------------------------------------- */

enum rq_state { RQ_FREE, RQ_BUSY, RQ_DONE, RQ_READING };

struct sgd_req {			/* one of a fd's 16 request slots */
	enum rq_state state;
	bool sg_io_owned;		/* SG_IO's own: read() and poll() skip it */
	bool uses_reserve;		/* holds the reserved buffer until read */
	uint64_t seq;			/* write order: read() takes the oldest */
	struct timespec start;		/* when it was written, for duration */
	int64_t ready_ns;		/* when its result may be seen; 0 while it runs */
	struct sg_io_hdr hdr;		/* as written; results are filled in */
	uint8_t cdb[SGD_MAX_CDB];
	uint8_t sense[SGD_SENSE_MAX];
};

struct sgd_file {			/* one open of a device; dup()s share it */
	struct sgd_dev *dev;
	int refs;			/* fd table entries + calls in progress */
	int accmode;			/* O_RDONLY, O_WRONLY or O_RDWR as asked */
	bool excl;			/* opened O_EXCL */
	uint64_t capacity;		/* in logical blocks, measured at open */
	pthread_mutex_t lock;		/* guards everything below */
	pthread_cond_t done_cv;		/* a request finished or went in flight */
	struct sgd_req req[SGD_MAX_QUEUE];
	uint64_t next_seq;		/* seq of the next request written */
	int waiting;			/* done, not SG_IO's, not yet claimed */
	bool force_pack_id;		/* read() takes the pack_id it is given */
	bool cmd_q;			/* command queuing: on with any v3 header */
	int keep_orphan;		/* stored only: no SG_IO is ever interrupted */
	int timeout_user;		/* SG_SET_TIMEOUT's value: stored only */
	int reserve;			/* reserved buffer size in bytes */
	bool res_in_use;		/* a request holds the reserved buffer */
	bool mmap_called;		/* the reserved buffer is mapped: fixed size */
	int next_cmd_len;		/* stored only: for the v2 interface */
	int debug;			/* SG_SET_DEBUG's value: stored only */
	int efd;			/* eventfd readable while waiting > 0 */
	int tfd;			/* timerfd due when the next result ripens */
	int64_t armed;			/* what tfd is set to, 0: disarmed */
	int memfd;			/* the reserved buffer, once mapped */
	uint8_t *resv;			/* our mapping of it */
	size_t resv_len;
};

static struct sgd_file *fdtab[SGD_MAX_FD];
static struct sgd_raw *rawtab[SGD_MAX_FD];	/* the raw opens: their node */
static pthread_mutex_t fdtab_lock = PTHREAD_MUTEX_INITIALIZER;

/* --- the functions interposed, as the next library has them ------------- */

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_open_2)(const char *, int);
static int (*real_open64_2)(const char *, int);
static int (*real_openat_2)(int, const char *, int);
static int (*real_openat64_2)(int, const char *, int);
static int (*real_close)(int);
static int (*real_close_range)(unsigned int, unsigned int, int);
static void (*real_closefrom)(int);
static int (*real_dup)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static int (*real_fcntl)(int, int, ...);
static int (*real_fcntl64)(int, int, ...);
static int (*real_stat)(const char *, struct stat *);
static int (*real_stat64)(const char *, struct stat64 *);
static int (*real_lstat)(const char *, struct stat *);
static int (*real_lstat64)(const char *, struct stat64 *);
static int (*real_fstat)(int, struct stat *);
static int (*real_fstat64)(int, struct stat64 *);
static int (*real_fstatat)(int, const char *, struct stat *, int);
static int (*real_fstatat64)(int, const char *, struct stat64 *, int);
static int (*real_xstat)(int, const char *, struct stat *);
static int (*real_xstat64)(int, const char *, struct stat64 *);
static int (*real_lxstat)(int, const char *, struct stat *);
static int (*real_lxstat64)(int, const char *, struct stat64 *);
static int (*real_fxstat)(int, int, struct stat *);
static int (*real_fxstat64)(int, int, struct stat64 *);
static int (*real_fxstatat)(int, int, const char *, struct stat *, int);
static int (*real_fxstatat64)(int, int, const char *, struct stat64 *, int);
static int (*real_statx)(int, const char *, int, unsigned int, struct statx *);
static int (*real_ioctl)(int, unsigned long, ...);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_read_chk)(int, void *, size_t, size_t);
static ssize_t (*real_readv)(int, const struct iovec *, int);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_pread64)(int, void *, size_t, off64_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static off_t (*real_lseek)(int, off_t, int);
static off64_t (*real_lseek64)(int, off64_t, int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off64_t);
static int (*real_fallocate)(int, int, off_t, off_t);
static int (*real_fallocate64)(int, int, off64_t, off64_t);
static int (*real_poll)(struct pollfd *, nfds_t, int);
static int (*real_ppoll)(struct pollfd *, nfds_t, const struct timespec *,
			 const sigset_t *);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static void *(*real_mmap64)(void *, size_t, int, int, int, off64_t);

static int resolved;

#define RESOLVE(var, name) (*(void **)&(var) = dlsym(RTLD_NEXT, name))

/* Needs no lock and no configuration, so any wrapper may call it, even
 * while the configuration is being read; racing callers store the same. */
static void resolve(void)
{
	if (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE))
		return;
	RESOLVE(real_open, "open");
	RESOLVE(real_open64, "open64");
	RESOLVE(real_openat, "openat");
	RESOLVE(real_openat64, "openat64");
	RESOLVE(real_open_2, "__open_2");
	RESOLVE(real_open64_2, "__open64_2");
	RESOLVE(real_openat_2, "__openat_2");
	RESOLVE(real_openat64_2, "__openat64_2");
	RESOLVE(real_close, "close");
	RESOLVE(real_close_range, "close_range");
	RESOLVE(real_closefrom, "closefrom");
	RESOLVE(real_dup, "dup");
	RESOLVE(real_dup2, "dup2");
	RESOLVE(real_dup3, "dup3");
	RESOLVE(real_fcntl, "fcntl");
	RESOLVE(real_fcntl64, "fcntl64");
	RESOLVE(real_stat, "stat");
	RESOLVE(real_stat64, "stat64");
	RESOLVE(real_lstat, "lstat");
	RESOLVE(real_lstat64, "lstat64");
	RESOLVE(real_fstat, "fstat");
	RESOLVE(real_fstat64, "fstat64");
	RESOLVE(real_fstatat, "fstatat");
	RESOLVE(real_fstatat64, "fstatat64");
	RESOLVE(real_xstat, "__xstat");
	RESOLVE(real_xstat64, "__xstat64");
	RESOLVE(real_lxstat, "__lxstat");
	RESOLVE(real_lxstat64, "__lxstat64");
	RESOLVE(real_fxstat, "__fxstat");
	RESOLVE(real_fxstat64, "__fxstat64");
	RESOLVE(real_fxstatat, "__fxstatat");
	RESOLVE(real_fxstatat64, "__fxstatat64");
	RESOLVE(real_statx, "statx");
	RESOLVE(real_ioctl, "ioctl");
	RESOLVE(real_read, "read");
	RESOLVE(real_write, "write");
	RESOLVE(real_read_chk, "__read_chk");
	RESOLVE(real_readv, "readv");
	RESOLVE(real_writev, "writev");
	RESOLVE(real_pread, "pread");
	RESOLVE(real_pread64, "pread64");
	RESOLVE(real_pwrite, "pwrite");
	RESOLVE(real_pwrite64, "pwrite64");
	RESOLVE(real_lseek, "lseek");
	RESOLVE(real_lseek64, "lseek64");
	RESOLVE(real_fsync, "fsync");
	RESOLVE(real_fdatasync, "fdatasync");
	RESOLVE(real_ftruncate, "ftruncate");
	RESOLVE(real_ftruncate64, "ftruncate64");
	RESOLVE(real_fallocate, "fallocate");
	RESOLVE(real_fallocate64, "fallocate64");
	RESOLVE(real_poll, "poll");
	RESOLVE(real_ppoll, "ppoll");
	RESOLVE(real_mmap, "mmap");
	RESOLVE(real_mmap64, "mmap64");
	__atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
}

/* --- small helpers ------------------------------------------------------- */

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, v >> 16);
	put_be16(p + 2, v);
}

static void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, v >> 32);
	put_be32(p + 4, v);
}

static uint32_t get_be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t get_be32(const uint8_t *p)
{
	return get_be16(p) << 16 | get_be16(p + 2);
}

static uint64_t get_be64(const uint8_t *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

static __attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...)
{
	va_list ap;

	fputs("sgdouble: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	_exit(125);	/* not a status any sg3_utils tool gives */
}

static __attribute__((format(printf, 1, 2))) void sgd_log(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	if (log_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "sgdouble[%d]: ", (int)getpid());
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* one write per line: O_APPEND keeps processes' lines whole */
	if (real_write(log_fd, line, n) < 0)
		return;
}

static uint64_t hash64(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static struct timespec ns_ts(int64_t ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };
}

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ts_ns(&t);
}

/* --- paths --------------------------------------------------------------- */

/* PATH made absolute (against dirfd or the working directory) with ".",
 * ".." and repeated slashes folded away; nothing is looked up, as the
 * path need not exist.  NULL when it cannot be made. */
static char *normalise(int dirfd, const char *path)
{
	char base[PATH_MAX], *buf, *out, *seg, *save;
	size_t len;

	if (path[0] == '/') {
		base[0] = '\0';
	} else if (dirfd == AT_FDCWD) {
		if (!getcwd(base, sizeof(base)))
			return NULL;
	} else {
		char link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
		n = readlink(link, base, sizeof(base) - 1);
		if (n < 0)
			return NULL;
		base[n] = '\0';
	}
	len = strlen(base) + strlen(path) + 2;
	buf = malloc(len);
	out = malloc(len + 1);
	if (!buf || !out) {
		free(buf);
		free(out);
		return NULL;
	}
	snprintf(buf, len, "%s/%s", base, path);
	out[0] = '\0';
	len = 0;
	for (seg = strtok_r(buf, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
		if (!strcmp(seg, "."))
			continue;
		if (!strcmp(seg, "..")) {
			char *slash = strrchr(out, '/');

			if (slash)
				*slash = '\0';
			len = strlen(out);
			continue;
		}
		out[len++] = '/';
		strcpy(out + len, seg);
		len += strlen(seg);
	}
	if (!len)
		strcpy(out, "/");
	free(buf);
	return out;
}

static void init(void);

/* The configured node a path names: an sg device (*d) or a raw device
 * (*rw), the other NULL; false when it is neither. */
static bool lookup(int dirfd, const char *path, struct sgd_dev **d, struct sgd_raw **rw)
{
	const char *base;
	bool maybe;
	char *norm;

	*d = NULL;
	*rw = NULL;
	pthread_once(&init_once, init);
	if ((!ndevs && !nraws) || !path || !path[0])
		return false;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	maybe = !*base || !strcmp(base, "..") || !strcmp(base, ".");
	for (int i = 0; i < ndevs && !maybe; i++)
		maybe = !strcmp(devs[i].base, base);
	for (int i = 0; i < nraws && !maybe; i++)
		maybe = !strcmp(raws[i].base, base);
	if (!maybe)
		return false;
	norm = normalise(dirfd, path);
	if (!norm)
		return false;
	for (int i = 0; i < ndevs && !*d; i++)
		if (!strcmp(devs[i].path, norm))
			*d = &devs[i];
	for (int i = 0; i < nraws && !*d && !*rw; i++)
		if (!strcmp(raws[i].path, norm))
			*rw = &raws[i];
	free(norm);
	return *d || *rw;
}

/* --- configuration ------------------------------------------------------- */

static struct sgd_dev *dev_by_name(const char *path)
{
	char *norm = normalise(AT_FDCWD, path);
	struct sgd_dev *hit = NULL;

	if (!norm)
		die("cannot make '%s' absolute", path);
	for (int i = 0; i < ndevs && !hit; i++)
		if (!strcmp(devs[i].path, norm))
			hit = &devs[i];
	free(norm);
	return hit;
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-')
		die("bad number '%s' in %s", s, what);
	return v;
}

static void parse_devs(const char *spec)
{
	char *copy = strdup(spec), *ent, *save;

	if (!copy)
		die("out of memory");
	for (ent = strtok_r(copy, ",", &save); ent; ent = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(ent, '='), *colon, *norm;
		struct sgd_dev *d;
		unsigned int lbs = 512;

		if (!eq || eq == ent || !eq[1])
			die("SGDOUBLE_DEVS entry '%s' is not PATH=BACKING[:LBS]", ent);
		*eq = '\0';
		colon = strrchr(eq + 1, ':');
		if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
			uint64_t v = parse_u64(colon + 1, "SGDOUBLE_DEVS");

			if (v < 512 || v > 65536 || (v & (v - 1)))
				die("logical block size %s of '%s' is not a power of two from 512 to 65536",
				    colon + 1, ent);
			lbs = v;
			*colon = '\0';
		}
		norm = normalise(AT_FDCWD, ent);
		if (!norm)
			die("cannot make '%s' absolute", ent);
		devs = realloc(devs, (ndevs + 1) * sizeof(*devs));
		if (!devs)
			die("out of memory");
		d = &devs[ndevs];
		memset(d, 0, sizeof(*d));
		d->path = norm;
		d->base = strrchr(norm, '/') + 1;
		d->backing = strdup(eq + 1);
		d->lbs = lbs;
		d->minor = ndevs;
		d->id = hash64(norm);
		pthread_mutex_init(&d->lock, NULL);
		pthread_cond_init(&d->cv, NULL);
		for (int i = 0; i < ndevs; i++)
			if (!strcmp(devs[i].path, norm))
				die("device '%s' is configured twice", ent);
		ndevs++;
	}
	free(copy);
}

static void parse_raws(const char *spec)
{
	char *copy = strdup(spec), *ent, *save;

	if (!copy)
		die("out of memory");
	for (ent = strtok_r(copy, ",", &save); ent; ent = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(ent, '='), *norm;
		struct sgd_raw *rw;

		if (!eq || eq == ent || !eq[1])
			die("SGDOUBLE_RAW entry '%s' is not PATH=BLOCKDEV", ent);
		*eq = '\0';
		norm = normalise(AT_FDCWD, ent);
		if (!norm)
			die("cannot make '%s' absolute", ent);
		for (int i = 0; i < ndevs; i++)
			if (!strcmp(devs[i].path, norm))
				die("'%s' is both an sg device and a raw device", ent);
		for (int i = 0; i < nraws; i++)
			if (!strcmp(raws[i].path, norm))
				die("raw device '%s' is configured twice", ent);
		raws = realloc(raws, (nraws + 1) * sizeof(*raws));
		if (!raws)
			die("out of memory");
		rw = &raws[nraws];
		rw->path = norm;
		rw->base = strrchr(norm, '/') + 1;
		rw->blockdev = strdup(eq + 1);
		if (!rw->blockdev)
			die("out of memory");
		rw->minor = ++nraws;	/* raw0 was the control node, rawctl */
		rw->id = hash64(norm);
	}
	free(copy);
}

static const struct {
	const char *name;
	enum fault_kind kind;
} fault_names[] = {
	{ "medium", F_MEDIUM }, { "wmedium", F_WMEDIUM }, { "recovered", F_RECOVERED },
	{ "ua", F_UA }, { "notready", F_NOTREADY }, { "aborted", F_ABORTED },
	{ "illegal", F_ILLEGAL }, { "timeout", F_TIMEOUT }, { "nowritesame", F_NOWS },
};

static int32_t *counts;			/* the counted faults' counts */

static bool by_lba(enum fault_kind kind)
{
	return kind == F_MEDIUM || kind == F_WMEDIUM || kind == F_RECOVERED;
}

static void parse_fault(char *ent, int32_t *init_count)
{
	char *at = strchr(ent, '@'), *colon, *args = NULL;
	struct sgd_fault *f;
	size_t k;

	colon = strrchr(at ? at : ent, ':');
	if (colon) {
		*colon = '\0';
		args = colon + 1;
	}
	if (at)
		*at = '\0';
	faults = realloc(faults, (nfaults + 1) * sizeof(*faults));
	if (!faults)
		die("out of memory");
	f = &faults[nfaults];
	memset(f, 0, sizeof(*f));
	if (!strncmp(ent, "io-", 3)) {
		f->io_only = true;
		ent += 3;
	}
	for (k = 0; k < sizeof(fault_names) / sizeof(fault_names[0]); k++)
		if (!strcmp(ent, fault_names[k].name))
			break;
	if (k == sizeof(fault_names) / sizeof(fault_names[0]))
		die("unknown fault kind '%s' (medium, wmedium, recovered, ua, notready, aborted, illegal, timeout, nowritesame)", ent);
	f->kind = fault_names[k].kind;
	if (f->io_only && (by_lba(f->kind) || f->kind == F_NOWS))
		die("io-%s: the io- prefix is for the counted faults but nowritesame", ent);
	f->dev = -1;
	if (at) {
		struct sgd_dev *d = dev_by_name(at + 1);

		if (!d)
			die("fault on '%s', which SGDOUBLE_DEVS does not name", at + 1);
		f->dev = d->minor;
	}
	*init_count = 0;
	if (by_lba(f->kind)) {
		char *dash;

		if (!args || !*args)
			die("%s fault needs an LBA or LBA-LBA", ent);
		dash = strchr(args, '-');
		if (dash)
			*dash = '\0';
		f->lo = parse_u64(args, "SGDOUBLE_FAULTS");
		f->hi = dash ? parse_u64(dash + 1, "SGDOUBLE_FAULTS") : f->lo;
		if (f->hi < f->lo)
			die("empty LBA range in %s fault", ent);
	} else if (!args || !*args) {
		*init_count = 1;
	} else if (!strcmp(args, "always")) {
		*init_count = -1;
	} else {
		uint64_t n = parse_u64(args, "SGDOUBLE_FAULTS");

		if (n > INT32_MAX)
			die("count %s too large", args);
		*init_count = n;
	}
	nfaults++;
}

/* The counts live in FILE when SGDOUBLE_STATE names one, so that every
 * process sees one device: header "SGDSTAT1", the number of faults, then
 * one int32 per fault.  The first process fills it, under flock. */
static void map_counts(const int32_t *init_counts)
{
	const char *state = getenv("SGDOUBLE_STATE");
	size_t len = 16 + (size_t)(nfaults ? nfaults : 1) * sizeof(int32_t);
	struct stat st;
	uint8_t *map;
	int fd;

	if (!state || !*state) {
		counts = calloc(nfaults ? nfaults : 1, sizeof(int32_t));
		if (!counts)
			die("out of memory");
		memcpy(counts, init_counts, nfaults * sizeof(int32_t));
		return;
	}
	fd = real_open(state, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		die("cannot open SGDOUBLE_STATE '%s': %s", state, strerror(errno));
	if (flock(fd, LOCK_EX) < 0 || real_fstat(fd, &st) < 0)
		die("cannot lock SGDOUBLE_STATE '%s': %s", state, strerror(errno));
	if (st.st_size == 0) {
		uint8_t *buf = calloc(1, len);

		if (!buf)
			die("out of memory");
		memcpy(buf, "SGDSTAT1", 8);
		memcpy(buf + 8, &nfaults, sizeof(int));
		memcpy(buf + 16, init_counts, nfaults * sizeof(int32_t));
		if (real_pwrite(fd, buf, len, 0) != (ssize_t)len)
			die("cannot write SGDOUBLE_STATE '%s'", state);
		free(buf);
	} else if (st.st_size != (off_t)len) {
		die("SGDOUBLE_STATE '%s' was made for other faults: remove it", state);
	}
	map = real_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die("cannot map SGDOUBLE_STATE '%s': %s", state, strerror(errno));
	if (memcmp(map, "SGDSTAT1", 8) || memcmp(map + 8, &nfaults, sizeof(int)))
		die("SGDOUBLE_STATE '%s' was made for other faults: remove it", state);
	flock(fd, LOCK_UN);
	real_close(fd);
	counts = (int32_t *)(map + 16);
}

static void parse_faults(const char *spec)
{
	char *copy = strdup(spec), *ent, *save;
	int32_t *init_counts = NULL;

	if (!copy)
		die("out of memory");
	for (ent = strtok_r(copy, ",", &save); ent; ent = strtok_r(NULL, ",", &save)) {
		init_counts = realloc(init_counts, (nfaults + 1) * sizeof(int32_t));
		if (!init_counts)
			die("out of memory");
		parse_fault(ent, &init_counts[nfaults]);
	}
	map_counts(init_counts);
	for (int i = 0; i < nfaults; i++)
		if (!by_lba(faults[i].kind))
			faults[i].left = &counts[i];
	free(init_counts);
	free(copy);
}

static void init(void)
{
	const char *s;

	resolve();
	s = getenv("SGDOUBLE_LOG");
	if (s && *s) {
		int fd = real_open(s, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (fd < 0)
			die("cannot open SGDOUBLE_LOG '%s': %s", s, strerror(errno));
		/* out of the way of the low numbers programs expect to get */
		log_fd = real_fcntl(fd, F_DUPFD_CLOEXEC, 200);
		real_close(fd);
	}
	s = getenv("SGDOUBLE_DEVS");
	if (s && *s)
		parse_devs(s);
	s = getenv("SGDOUBLE_RAW");
	if (s && *s)
		parse_raws(s);
	s = getenv("SGDOUBLE_FAULTS");
	if (s && *s)
		parse_faults(s);
	s = getenv("SGDOUBLE_WRITE_SAME_MAX");
	if (s && *s)
		ws_max = parse_u64(s, "SGDOUBLE_WRITE_SAME_MAX");
	s = getenv("SGDOUBLE_LATENCY_US");
	if (s && *s) {
		uint64_t us = parse_u64(s, "SGDOUBLE_LATENCY_US");

		if (us > SGD_MAX_LATENCY_US)
			die("SGDOUBLE_LATENCY_US=%s is more than a minute", s);
		latency_ns = (int64_t)us * 1000;
	}
	for (int i = 0; i < ndevs; i++)
		sgd_log("device %s = %s, %u-byte blocks, char %d:%u", devs[i].path,
		     devs[i].backing, devs[i].lbs, SGD_MAJOR, devs[i].minor);
	for (int i = 0; i < nraws; i++)
		sgd_log("raw device %s = %s, char %d:%u", raws[i].path, raws[i].blockdev,
			SGD_RAW_MAJOR, raws[i].minor);
	if (latency_ns)
		sgd_log("READ and WRITE take %" PRId64 " us", latency_ns / 1000);
	if (ws_max)
		sgd_log("WRITE SAME takes %" PRIu64 " blocks at most", ws_max);
}

static __attribute__((constructor)) void sgd_constructor(void)
{
	pthread_once(&init_once, init);
}

/* --- the fd table -------------------------------------------------------- */

static bool maybe_sg(int fd)
{
	return fd >= 0 && fd < SGD_MAX_FD && __atomic_load_n(&fdtab[fd], __ATOMIC_ACQUIRE);
}

/* The file behind fd with a reference held, or NULL: not an sg fd. */
static struct sgd_file *get_file(int fd)
{
	struct sgd_file *f;

	resolve();
	if (!maybe_sg(fd))
		return NULL;
	pthread_mutex_lock(&fdtab_lock);
	f = fdtab[fd];
	if (f)
		f->refs++;
	pthread_mutex_unlock(&fdtab_lock);
	return f;
}

static void free_file(struct sgd_file *f)
{
	struct sgd_dev *d = f->dev;

	if (f->efd >= 0)
		real_close(f->efd);
	if (f->tfd >= 0)
		real_close(f->tfd);
	if (f->resv)
		munmap(f->resv, f->resv_len);
	if (f->memfd >= 0)
		real_close(f->memfd);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->done_cv);
	pthread_mutex_lock(&d->lock);
	d->nopen--;
	if (f->excl)
		d->excl = false;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->lock);
	free(f);
}

static void put_file(struct sgd_file *f)
{
	bool last;

	pthread_mutex_lock(&fdtab_lock);
	last = --f->refs == 0;
	pthread_mutex_unlock(&fdtab_lock);
	if (last)
		free_file(f);
}

/* fd now refers to f (one more reference); whatever it referred to goes */
static void set_fd(int fd, struct sgd_file *f)
{
	struct sgd_file *old;

	pthread_mutex_lock(&fdtab_lock);
	old = fdtab[fd];
	if (f)
		f->refs++;
	__atomic_store_n(&fdtab[fd], f, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fdtab_lock);
	if (old)
		put_file(old);
}

/* The raw device fd is an open of, or NULL.  The entries point into the
 * configuration, which lives as long as the process: no references. */
static struct sgd_raw *raw_of(int fd)
{
	if (fd < 0 || fd >= SGD_MAX_FD)
		return NULL;
	return __atomic_load_n(&rawtab[fd], __ATOMIC_ACQUIRE);
}

static void raw_set(int fd, struct sgd_raw *rw)
{
	if (fd >= 0 && fd < SGD_MAX_FD)
		__atomic_store_n(&rawtab[fd], rw, __ATOMIC_RELEASE);
}

/* --- open ---------------------------------------------------------------- */

/* sg_open()'s exclusivity: O_EXCL needs write access and no other open;
 * any open waits while an O_EXCL one exists, or fails EBUSY with
 * O_NONBLOCK. */
static int claim_dev(struct sgd_dev *d, int flags)
{
	bool excl = flags & O_EXCL;
	int err = 0;

	if (excl && (flags & O_ACCMODE) == O_RDONLY)
		return -EPERM;
	pthread_mutex_lock(&d->lock);
	while (d->excl || (excl && d->nopen)) {
		if (flags & O_NONBLOCK) {
			err = -EBUSY;
			goto out;
		}
		pthread_cond_wait(&d->cv, &d->lock);
	}
	d->nopen++;
	d->excl = excl;
out:
	pthread_mutex_unlock(&d->lock);
	return err;
}

static void release_dev(struct sgd_dev *d, int flags)
{
	pthread_mutex_lock(&d->lock);
	d->nopen--;
	if (flags & O_EXCL)
		d->excl = false;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->lock);
}

static int open_dev(struct sgd_dev *d, int flags)
{
	struct sgd_file *f;
	pthread_condattr_t ca;
	struct stat st;
	int fd, err;

	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
		errno = EEXIST;
		return -1;
	}
	if (flags & O_DIRECTORY) {
		errno = ENOTDIR;
		return -1;
	}
	err = claim_dev(d, flags);
	if (err) {
		errno = -err;
		return -1;
	}
	fd = real_open(d->backing, O_RDWR | (flags & (O_CLOEXEC | O_NONBLOCK)));
	if (fd < 0) {
		err = errno;
		release_dev(d, flags);
		errno = err;
		return -1;
	}
	f = calloc(1, sizeof(*f));
	err = !f ? ENOMEM : fd >= SGD_MAX_FD ? EMFILE : real_fstat(fd, &st) < 0 ? errno : 0;
	if (err) {
		real_close(fd);
		release_dev(d, flags);
		free(f);
		errno = err;
		return -1;
	}
	f->dev = d;
	f->accmode = flags & O_ACCMODE;
	f->excl = flags & O_EXCL;
	f->capacity = (uint64_t)st.st_size / d->lbs;
	pthread_mutex_init(&f->lock, NULL);
	/* read() waits for a ready time on the clock the requests use */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->done_cv, &ca);
	pthread_condattr_destroy(&ca);
	f->timeout_user = SGD_DEF_TIMEOUT;
	f->reserve = SGD_DEF_RESERVE;
	f->efd = -1;
	f->tfd = -1;
	f->memfd = -1;
	raw_set(fd, NULL);	/* a raw fd of that number closed behind our back */
	set_fd(fd, f);
	sgd_log("open %s as fd %d (flags 0x%x), %" PRIu64 " blocks", d->path, fd, flags,
	     f->capacity);
	return fd;
}

/* A new fd of some other file: if the tables still list that number, the
 * sg or raw fd it was got closed behind our back (fclose, a raw syscall). */
static int not_sg(int fd)
{
	if (maybe_sg(fd))
		set_fd(fd, NULL);
	if (raw_of(fd))
		raw_set(fd, NULL);
	return fd;
}

/* raw_open(): the bound disk itself, with O_DIRECT whatever the caller
 * asked.  The node exists, so O_CREAT and O_TRUNC do nothing to it (and
 * must not cut a regular file BLOCKDEV); a char device ignores O_EXCL. */
static int open_raw(struct sgd_raw *rw, int flags)
{
	int fd;

	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
		errno = EEXIST;
		return -1;
	}
	if (flags & O_DIRECTORY) {
		errno = ENOTDIR;
		return -1;
	}
	fd = real_open(rw->blockdev, (flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_DIRECT);
	if (fd < 0) {
		int err = errno;

		sgd_log("open raw %s (%s): %s", rw->path, rw->blockdev, strerror(err));
		errno = err;
		return -1;
	}
	if (fd >= SGD_MAX_FD) {
		real_close(fd);
		errno = EMFILE;
		return -1;
	}
	not_sg(fd);
	raw_set(fd, rw);
	sgd_log("open raw %s as fd %d (flags 0x%x)", rw->path, fd, flags);
	return fd;
}

static int open_node(struct sgd_dev *d, struct sgd_raw *rw, int flags)
{
	return d ? open_dev(d, flags) : open_raw(rw, flags);
}

static bool has_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

#define OPEN_WRAPPER(name, real)					\
int name(const char *path, int flags, ...)				\
{									\
	struct sgd_dev *d;						\
	struct sgd_raw *rw;						\
	mode_t mode = 0;						\
	va_list ap;							\
									\
	if (has_mode(flags)) {						\
		va_start(ap, flags);					\
		mode = va_arg(ap, mode_t);				\
		va_end(ap);						\
	}								\
	if (lookup(AT_FDCWD, path, &d, &rw))				\
		return open_node(d, rw, flags);				\
	return not_sg(real(path, flags, mode));				\
}

#define OPENAT_WRAPPER(name, real)					\
int name(int dirfd, const char *path, int flags, ...)			\
{									\
	struct sgd_dev *d;						\
	struct sgd_raw *rw;						\
	mode_t mode = 0;						\
	va_list ap;							\
									\
	if (has_mode(flags)) {						\
		va_start(ap, flags);					\
		mode = va_arg(ap, mode_t);				\
		va_end(ap);						\
	}								\
	if (lookup(dirfd, path, &d, &rw))				\
		return open_node(d, rw, flags);				\
	return not_sg(real(dirfd, path, flags, mode));			\
}

OPEN_WRAPPER(open, real_open)
OPEN_WRAPPER(open64, real_open64)
OPENAT_WRAPPER(openat, real_openat)
OPENAT_WRAPPER(openat64, real_openat64)

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

int __open_2(const char *path, int flags)
{
	struct sgd_dev *d;
	struct sgd_raw *rw;

	if (lookup(AT_FDCWD, path, &d, &rw))
		return open_node(d, rw, flags);
	return not_sg(real_open_2(path, flags));
}

int __open64_2(const char *path, int flags)
{
	struct sgd_dev *d;
	struct sgd_raw *rw;

	if (lookup(AT_FDCWD, path, &d, &rw))
		return open_node(d, rw, flags);
	return not_sg(real_open64_2(path, flags));
}

int __openat_2(int dirfd, const char *path, int flags)
{
	struct sgd_dev *d;
	struct sgd_raw *rw;

	if (lookup(dirfd, path, &d, &rw))
		return open_node(d, rw, flags);
	return not_sg(real_openat_2(dirfd, path, flags));
}

int __openat64_2(int dirfd, const char *path, int flags)
{
	struct sgd_dev *d;
	struct sgd_raw *rw;

	if (lookup(dirfd, path, &d, &rw))
		return open_node(d, rw, flags);
	return not_sg(real_openat64_2(dirfd, path, flags));
}

/* --- close and dup ------------------------------------------------------- */

int close(int fd)
{
	resolve();
	if (maybe_sg(fd)) {
		sgd_log("close fd %d", fd);
		set_fd(fd, NULL);
	}
	if (raw_of(fd)) {
		sgd_log("close raw fd %d", fd);
		raw_set(fd, NULL);
	}
	return real_close(fd);
}

/* forget the sg and raw fds in [first, last]: they are being closed */
static void forget_fds(unsigned int first, unsigned int last)
{
	for (unsigned int fd = first; fd <= last && fd < SGD_MAX_FD; fd++) {
		if (maybe_sg(fd))
			set_fd(fd, NULL);
		if (raw_of(fd))
			raw_set(fd, NULL);
	}
}

int close_range(unsigned int first, unsigned int last, int flags)
{
	resolve();
	if (!(flags & CLOSE_RANGE_CLOEXEC))
		forget_fds(first, last);
	return real_close_range(first, last, flags);
}

void closefrom(int lowfd)
{
	resolve();
	forget_fds(lowfd < 0 ? 0 : lowfd, SGD_MAX_FD - 1);
	real_closefrom(lowfd);
}

/* after a dup of oldfd to newfd succeeded: newfd is what oldfd is */
static int dup_done(int oldfd, int newfd)
{
	struct sgd_file *f;
	struct sgd_raw *rw;

	if (newfd < 0)
		return newfd;
	f = get_file(oldfd);
	rw = raw_of(oldfd);
	if ((f || rw) && newfd >= SGD_MAX_FD) {
		real_close(newfd);
		if (f)
			put_file(f);
		errno = EMFILE;
		return -1;
	}
	if (f || maybe_sg(newfd))
		set_fd(newfd, f);
	if (rw || raw_of(newfd))
		raw_set(newfd, rw);
	if (f)
		put_file(f);
	return newfd;
}

int dup(int fd)
{
	resolve();
	return dup_done(fd, real_dup(fd));
}

int dup2(int oldfd, int newfd)
{
	resolve();
	if (oldfd == newfd)
		return real_dup2(oldfd, newfd);
	return dup_done(oldfd, real_dup2(oldfd, newfd));
}

int dup3(int oldfd, int newfd, int flags)
{
	resolve();
	return dup_done(oldfd, real_dup3(oldfd, newfd, flags));
}

static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, void *arg)
{
	struct sgd_file *f;
	int r;

	resolve();
	if (raw_of(fd)) {
		if (cmd == F_SETFL)	/* stays direct: see the top of the file */
			arg = (void *)((uintptr_t)arg | O_DIRECT);
		if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
			return dup_done(fd, real(fd, cmd, arg));
	}
	if (!maybe_sg(fd))
		return real(fd, cmd, arg);
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		return dup_done(fd, real(fd, cmd, arg));
	case F_GETFL:
		r = real(fd, cmd, arg);
		f = get_file(fd);
		if (r >= 0 && f)
			r = (r & ~O_ACCMODE) | f->accmode;
		if (f)
			put_file(f);
		return r;
	default:
		return real(fd, cmd, arg);
	}
}

/* glibc too takes the third argument as a pointer, whatever it is */
int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	resolve();
	return fcntl_common(real_fcntl, fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	resolve();
	return fcntl_common(real_fcntl64 ? real_fcntl64 : real_fcntl, fd, cmd, arg);
}

/* --- stat ---------------------------------------------------------------- */

struct node {				/* what stat() says of a path or fd */
	const char *backing;		/* whose times it shows */
	uint64_t id;
	unsigned int major, minor;
};

/* What stat() says of the node: a char device in devtmpfs, owned by
 * root:disk, mode 0660, size 0; times are the backing file's. */
static void fake_stat(const struct node *n, struct stat *st)
{
	struct stat b;
	bool have = real_stat(n->backing, &b) == 0;

	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(0, 5);
	st->st_ino = n->id & 0xffffffff;
	st->st_mode = S_IFCHR | 0660;
	st->st_nlink = 1;
	st->st_uid = 0;
	st->st_gid = 6;
	st->st_rdev = makedev(n->major, n->minor);
	st->st_size = 0;
	st->st_blksize = 4096;
	st->st_blocks = 0;
	if (have) {
		st->st_atim = b.st_atim;
		st->st_mtim = b.st_mtim;
		st->st_ctim = b.st_ctim;
	}
}

static void fake_stat64(const struct node *n, struct stat64 *st)
{
	struct stat s;

	fake_stat(n, &s);
	memset(st, 0, sizeof(*st));
	st->st_dev = s.st_dev;
	st->st_ino = s.st_ino;
	st->st_mode = s.st_mode;
	st->st_nlink = s.st_nlink;
	st->st_uid = s.st_uid;
	st->st_gid = s.st_gid;
	st->st_rdev = s.st_rdev;
	st->st_size = s.st_size;
	st->st_blksize = s.st_blksize;
	st->st_blocks = s.st_blocks;
	st->st_atim = s.st_atim;
	st->st_mtim = s.st_mtim;
	st->st_ctim = s.st_ctim;
}

static bool set_node(struct node *n, const struct sgd_dev *d, const struct sgd_raw *rw)
{
	if (d)
		*n = (struct node){ d->backing, d->id, SGD_MAJOR, d->minor };
	else if (rw)
		*n = (struct node){ rw->blockdev, rw->id, SGD_RAW_MAJOR, rw->minor };
	return d || rw;
}

/* the node a path names, or false */
static bool node_by_path(int dirfd, const char *path, struct node *n)
{
	struct sgd_dev *d;
	struct sgd_raw *rw;

	lookup(dirfd, path, &d, &rw);
	return set_node(n, d, rw);
}

/* the node an fd is an open of, or false */
static bool node_by_fd(int fd, struct node *n)
{
	struct sgd_file *f = get_file(fd);
	bool hit;

	if (!f)
		return set_node(n, NULL, raw_of(fd));
	hit = set_node(n, f->dev, NULL);
	put_file(f);
	return hit;
}

/* for the *at() forms: the node named by (dirfd, path, flags), or false */
static bool node_by_at(int dirfd, const char *path, int flags, struct node *n)
{
	if ((flags & AT_EMPTY_PATH) && path && !path[0])
		return node_by_fd(dirfd, n);
	return node_by_path(dirfd, path, n);
}

int stat(const char *path, struct stat *st)
{
	struct node n;

	if (!node_by_path(AT_FDCWD, path, &n))
		return real_stat(path, st);
	fake_stat(&n, st);
	return 0;
}

int stat64(const char *path, struct stat64 *st)
{
	struct node n;

	if (!node_by_path(AT_FDCWD, path, &n))
		return real_stat64(path, st);
	fake_stat64(&n, st);
	return 0;
}

int lstat(const char *path, struct stat *st)
{
	struct node n;

	if (!node_by_path(AT_FDCWD, path, &n))
		return real_lstat(path, st);
	fake_stat(&n, st);
	return 0;
}

int lstat64(const char *path, struct stat64 *st)
{
	struct node n;

	if (!node_by_path(AT_FDCWD, path, &n))
		return real_lstat64(path, st);
	fake_stat64(&n, st);
	return 0;
}

int fstat(int fd, struct stat *st)
{
	struct node n;

	if (!node_by_fd(fd, &n))
		return real_fstat(fd, st);
	fake_stat(&n, st);
	return 0;
}

int fstat64(int fd, struct stat64 *st)
{
	struct node n;

	if (!node_by_fd(fd, &n))
		return real_fstat64(fd, st);
	fake_stat64(&n, st);
	return 0;
}

int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	struct node n;

	if (!node_by_at(dirfd, path, flags, &n))
		return real_fstatat(dirfd, path, st, flags);
	fake_stat(&n, st);
	return 0;
}

int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	struct node n;

	if (!node_by_at(dirfd, path, flags, &n))
		return real_fstatat64(dirfd, path, st, flags);
	fake_stat64(&n, st);
	return 0;
}

/* The pre-2.33 glibc entry points, for programs linked against them: the
 * version argument names struct stat's layout, which is the current one. */
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstat(int ver, int fd, struct stat *st);
int __fxstat64(int ver, int fd, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags);

int __xstat(int ver, const char *path, struct stat *st)
{
	struct node n;

	if (!node_by_path(AT_FDCWD, path, &n))
		return real_xstat ? real_xstat(ver, path, st) : real_stat(path, st);
	fake_stat(&n, st);
	return 0;
}

int __xstat64(int ver, const char *path, struct stat64 *st)
{
	struct node n;

	if (!node_by_path(AT_FDCWD, path, &n))
		return real_xstat64 ? real_xstat64(ver, path, st) : real_stat64(path, st);
	fake_stat64(&n, st);
	return 0;
}

int __lxstat(int ver, const char *path, struct stat *st)
{
	struct node n;

	if (!node_by_path(AT_FDCWD, path, &n))
		return real_lxstat ? real_lxstat(ver, path, st) : real_lstat(path, st);
	fake_stat(&n, st);
	return 0;
}

int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	struct node n;

	if (!node_by_path(AT_FDCWD, path, &n))
		return real_lxstat64 ? real_lxstat64(ver, path, st) : real_lstat64(path, st);
	fake_stat64(&n, st);
	return 0;
}

int __fxstat(int ver, int fd, struct stat *st)
{
	struct node n;

	if (!node_by_fd(fd, &n))
		return real_fxstat ? real_fxstat(ver, fd, st) : real_fstat(fd, st);
	fake_stat(&n, st);
	return 0;
}

int __fxstat64(int ver, int fd, struct stat64 *st)
{
	struct node n;

	if (!node_by_fd(fd, &n))
		return real_fxstat64 ? real_fxstat64(ver, fd, st) : real_fstat64(fd, st);
	fake_stat64(&n, st);
	return 0;
}

int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	struct node n;

	if (!node_by_at(dirfd, path, flags, &n))
		return real_fxstatat ? real_fxstatat(ver, dirfd, path, st, flags) :
				       real_fstatat(dirfd, path, st, flags);
	fake_stat(&n, st);
	return 0;
}

int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags)
{
	struct node n;

	if (!node_by_at(dirfd, path, flags, &n))
		return real_fxstatat64 ? real_fxstatat64(ver, dirfd, path, st, flags) :
					 real_fstatat64(dirfd, path, st, flags);
	fake_stat64(&n, st);
	return 0;
}

/* statx: the same node; a char device has no STATX_DIOALIGN */
int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *stx)
{
	struct node n;
	struct stat st;

	if (!node_by_at(dirfd, path, flags, &n))
		return real_statx(dirfd, path, flags, mask, stx);
	fake_stat(&n, &st);
	memset(stx, 0, sizeof(*stx));
	stx->stx_mask = STATX_BASIC_STATS;
	stx->stx_blksize = st.st_blksize;
	stx->stx_nlink = st.st_nlink;
	stx->stx_uid = st.st_uid;
	stx->stx_gid = st.st_gid;
	stx->stx_mode = st.st_mode;
	stx->stx_ino = st.st_ino;
	stx->stx_size = 0;
	stx->stx_blocks = 0;
	stx->stx_atime.tv_sec = st.st_atim.tv_sec;
	stx->stx_atime.tv_nsec = st.st_atim.tv_nsec;
	stx->stx_mtime.tv_sec = st.st_mtim.tv_sec;
	stx->stx_mtime.tv_nsec = st.st_mtim.tv_nsec;
	stx->stx_ctime.tv_sec = st.st_ctim.tv_sec;
	stx->stx_ctime.tv_nsec = st.st_ctim.tv_nsec;
	stx->stx_rdev_major = n.major;
	stx->stx_rdev_minor = n.minor;
	stx->stx_dev_major = 0;
	stx->stx_dev_minor = 5;
	return 0;
}

/* --- executing one SCSI command ------------------------------------------ */

struct area {				/* the caller's data buffer */
	struct iovec *v;		/* its pieces */
	int cnt;
	struct iovec one;		/* storage when there is one piece */
	size_t len;			/* dxfer_len, or less if the iovecs hold less */
	bool no_copy;			/* SG_FLAG_NO_DXFER */
};

struct cmd {				/* a command being executed */
	struct sgd_file *f;
	struct sgd_dev *d;
	int fd;				/* the caller's fd, i.e. the backing file */
	struct sgd_req *r;
	struct area a;
	uint64_t lba;			/* for the log */
	uint64_t blocks;		/* for the log */
	bool medium;			/* a READ or WRITE got to the medium: latency */
	bool timed_out;			/* a timeout fault ended it */
};

static void set_sense(struct cmd *c, int key, int asc, bool valid, uint64_t info)
{
	uint8_t *s = c->r->sense;

	memset(s, 0, SGD_SENSE_MAX);
	if (valid && info > 0xffffffffULL) {
		/* descriptor format: the INFO field holds 64 bits there */
		s[0] = 0x72;
		s[1] = key;
		s[2] = asc >> 8;
		s[3] = asc & 0xff;
		s[7] = 12;
		s[8] = 0x00;		/* information descriptor */
		s[9] = 0x0a;
		s[10] = 0x80;		/* VALID */
		put_be64(s + 12, info);
	} else {
		s[0] = 0x70 | (valid ? 0x80 : 0);
		s[2] = key;
		if (valid)
			put_be32(s + 3, info);
		s[7] = 10;
		s[12] = asc >> 8;
		s[13] = asc & 0xff;
	}
	c->r->hdr.status = STAT_CHECK;
	c->r->hdr.masked_status = MASKED_CHECK;
	c->r->hdr.resid = c->r->hdr.dxfer_len;
}

static void check(struct cmd *c, int key, int asc)
{
	set_sense(c, key, asc, false, 0);
}

static void host_error(struct cmd *c)
{
	c->r->hdr.host_status = DID_ERROR;
	c->r->hdr.resid = c->r->hdr.dxfer_len;
}

static bool data_in_ok(const struct cmd *c)
{
	int dir = c->r->hdr.dxfer_direction;

	return dir == SG_DXFER_FROM_DEV || dir == SG_DXFER_TO_FROM_DEV;
}

/* Hand a built response to the caller: at most alloc bytes of it, as the
 * device would, and at most what the buffer holds; resid says the rest. */
static void respond(struct cmd *c, const uint8_t *buf, size_t len, size_t alloc)
{
	size_t n = len < alloc ? len : alloc, done = 0;

	if (n && !data_in_ok(c)) {
		host_error(c);
		return;
	}
	if (n > c->a.len)
		n = c->a.len;
	for (int i = 0; i < c->a.cnt && done < n; i++) {
		size_t k = c->a.v[i].iov_len < n - done ? c->a.v[i].iov_len : n - done;

		if (!c->a.no_copy)
			memcpy(c->a.v[i].iov_base, buf + done, k);
		done += k;
	}
	c->r->hdr.resid = c->r->hdr.dxfer_len - done;
}

/* Move n bytes between the caller's area and the backing file at off.
 * 0, or the errno of the failure; a short read (the file shrank) reads
 * zeros. */
static int area_io(struct cmd *c, size_t n, off_t off, bool to_dev)
{
	static const uint8_t zeros[65536];
	size_t done = 0;

	if (c->a.no_copy && !to_dev)
		return 0;
	for (int i = 0; i < c->a.cnt && done < n; i++) {
		uint8_t *p = c->a.v[i].iov_base;
		size_t k = c->a.v[i].iov_len < n - done ? c->a.v[i].iov_len : n - done;

		while (k) {
			size_t chunk = c->a.no_copy && k > sizeof(zeros) ? sizeof(zeros) : k;
			ssize_t r;

			if (to_dev)
				r = real_pwrite(c->fd, c->a.no_copy ? zeros : p, chunk, off);
			else
				r = real_pread(c->fd, p, chunk, off);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return errno;
			if (r == 0) {
				if (to_dev)
					return EIO;
				memset(p, 0, k);
				r = k;
			}
			p += r;
			off += r;
			k -= r;
			done += r;
		}
	}
	return 0;
}

static bool take(int32_t *left)
{
	int32_t v = __atomic_load_n(left, __ATOMIC_RELAXED);

	while (v) {
		if (v < 0)
			return true;
		if (__atomic_compare_exchange_n(left, &v, v - 1, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return true;
	}
	return false;
}

static bool applies(const struct sgd_fault *fl, const struct sgd_dev *d)
{
	return fl->dev < 0 || fl->dev == (int)d->minor;
}

/* a counted fault of this kind fires (and is counted) */
static bool fault_fires(const struct sgd_dev *d, enum fault_kind kind, bool consume,
			bool io)
{
	for (int i = 0; i < nfaults; i++) {
		struct sgd_fault *fl = &faults[i];

		if (fl->kind != kind || !applies(fl, d) || (fl->io_only && !io))
			continue;
		if (consume ? take(fl->left) : __atomic_load_n(fl->left, __ATOMIC_RELAXED) != 0)
			return true;
	}
	return false;
}

/* The first LBA of [lba, lba + n) a medium fault of this kind covers;
 * false when none does. */
static bool first_bad(const struct sgd_dev *d, enum fault_kind kind, uint64_t lba,
		      uint64_t n, uint64_t *bad)
{
	uint64_t last = lba + n - 1;
	bool hit = false;

	for (int i = 0; i < nfaults; i++) {
		const struct sgd_fault *fl = &faults[i];
		uint64_t b;

		if (fl->kind != kind || !applies(fl, d) || fl->lo > last || fl->hi < lba)
			continue;
		b = fl->lo > lba ? fl->lo : lba;
		if (!hit || b < *bad)
			*bad = b;
		hit = true;
	}
	return hit;
}

static bool take_pending_ua(struct sgd_dev *d)
{
	return __atomic_exchange_n(&d->pending_ua, 0, __ATOMIC_ACQ_REL) != 0;
}

/* READ, WRITE, VERIFY and their checks, shared by every CDB size */
static bool range_ok(struct cmd *c, uint64_t lba, uint64_t n)
{
	if (!c->f->capacity) {
		check(c, KEY_NOT_READY, ASC_NO_MEDIUM);
		return false;
	}
	if (lba > c->f->capacity || n > c->f->capacity - lba) {
		check(c, KEY_ILLEGAL, ASC_LBA_RANGE);
		return false;
	}
	return true;
}

/* A recovered fault on a request done in full: CHECK CONDITION with
 * RECOVERED ERROR all the same, as a disk that needed retries says */
static void recovered(struct cmd *c, uint64_t lba, uint64_t n)
{
	int resid = c->r->hdr.resid;
	uint64_t at;

	if (!first_bad(c->d, F_RECOVERED, lba, n, &at))
		return;
	set_sense(c, KEY_RECOVERED, ASC_RECOVERED_RETRIES, true, at);
	c->r->hdr.resid = resid;	/* set_sense() took it that nothing moved */
}

static void do_read(struct cmd *c, uint64_t lba, uint64_t n)
{
	uint64_t bytes = n * c->d->lbs, bad;
	int err;

	c->medium = true;
	c->lba = lba;
	c->blocks = n;
	if (!range_ok(c, lba, n))
		return;
	c->r->hdr.resid = c->r->hdr.dxfer_len;
	if (!n)
		return;
	if (!data_in_ok(c) || bytes > c->a.len) {
		host_error(c);
		return;
	}
	if (first_bad(c->d, F_MEDIUM, lba, n, &bad)) {
		set_sense(c, KEY_MEDIUM, ASC_READ_ERROR, true, bad);
		return;
	}
	err = area_io(c, bytes, (off_t)(lba * c->d->lbs), false);
	if (err) {
		check(c, err == EIO ? KEY_MEDIUM : KEY_HARDWARE,
		      err == EIO ? ASC_READ_ERROR : ASC_INTERNAL);
		return;
	}
	c->r->hdr.resid = c->r->hdr.dxfer_len - bytes;
	recovered(c, lba, n);
}

static void do_write(struct cmd *c, uint64_t lba, uint64_t n)
{
	uint64_t bytes = n * c->d->lbs, bad;
	int err;

	c->medium = true;
	c->lba = lba;
	c->blocks = n;
	if (!range_ok(c, lba, n))
		return;
	c->r->hdr.resid = c->r->hdr.dxfer_len;
	if (!n)
		return;
	if (c->r->hdr.dxfer_direction != SG_DXFER_TO_DEV || bytes > c->a.len) {
		host_error(c);
		return;
	}
	if (first_bad(c->d, F_WMEDIUM, lba, n, &bad)) {
		set_sense(c, KEY_MEDIUM, ASC_WRITE_ERROR, true, bad);
		return;
	}
	err = area_io(c, bytes, (off_t)(lba * c->d->lbs), true);
	if (err) {
		check(c, err == EIO ? KEY_MEDIUM : KEY_HARDWARE,
		      err == EIO ? ASC_WRITE_ERROR : ASC_INTERNAL);
		return;
	}
	c->r->hdr.resid = c->r->hdr.dxfer_len - bytes;
	recovered(c, lba, n);
}

/* The first n bytes of the caller's data out into blk (zeros with
 * SG_FLAG_NO_DXFER, as a write of it writes); the caller checked a.len. */
static void area_first(const struct cmd *c, uint8_t *blk, size_t n)
{
	size_t done = 0;

	memset(blk, 0, n);
	if (c->a.no_copy)
		return;
	for (int i = 0; i < c->a.cnt && done < n; i++) {
		size_t k = c->a.v[i].iov_len < n - done ? c->a.v[i].iov_len : n - done;

		memcpy(blk + done, c->a.v[i].iov_base, k);
		done += k;
	}
}

/* n copies of the lbs-byte block blk to the backing file from block lba,
 * a MiB at a time.  0, or the errno of the failure. */
static int write_copies(struct cmd *c, const uint8_t *blk, uint64_t lba, uint64_t n)
{
	size_t lbs = c->d->lbs, per = (1u << 20) / lbs;	/* lbs <= 64 KiB */
	uint8_t *buf;
	int err = 0;

	if (per > n)
		per = n;
	buf = malloc(per * lbs);
	if (!buf)
		return ENOMEM;
	for (size_t i = 0; i < per; i++)
		memcpy(buf + i * lbs, blk, lbs);
	for (uint64_t done = 0; done < n && !err; ) {
		uint64_t k = n - done < per ? n - done : per;
		size_t len = k * lbs, put = 0;
		off_t off = (off_t)((lba + done) * lbs);

		while (put < len) {
			ssize_t r = real_pwrite(c->fd, buf + put, len - put, off + (off_t)put);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				err = r < 0 ? errno : EIO;
				break;
			}
			put += r;
		}
		done += k;
	}
	free(buf);
	return err;
}

/* WRITE SAME(16): one logical block of data out (or, NDOB=1, zeros and
 * no data out) written to each of the range's blocks.  No thin
 * provisioning here: UNMAP=1 writes the block all the same (SBC lets a
 * device that does not unmap do so), and ANCHOR=1 is refused. */
static void do_write_same(struct cmd *c, const uint8_t *cdb)
{
	bool ndob = cdb[1] & 0x01;
	uint64_t lba = get_be64(cdb + 2), n = get_be32(cdb + 10), bad;
	uint8_t *blk;
	int err;

	c->lba = lba;
	c->blocks = n;
	if (fault_fires(c->d, F_NOWS, true, true)) {
		check(c, KEY_ILLEGAL, ASC_INVALID_OP);
		return;
	}
	c->medium = true;
	/* WRPROTECT (no protection information), ANCHOR, PBDATA, LBDATA;
	 * 0 blocks as Block Limits' WSNZ says; more than its maximum */
	if ((cdb[1] & 0xf6) || !n || (ws_max && n > ws_max)) {
		check(c, KEY_ILLEGAL, ASC_INVALID_FIELD);
		return;
	}
	if (!range_ok(c, lba, n))
		return;
	c->r->hdr.resid = c->r->hdr.dxfer_len;
	if (!ndob && (c->r->hdr.dxfer_direction != SG_DXFER_TO_DEV || c->a.len < c->d->lbs)) {
		host_error(c);
		return;
	}
	if (first_bad(c->d, F_WMEDIUM, lba, n, &bad)) {
		set_sense(c, KEY_MEDIUM, ASC_WRITE_ERROR, true, bad);
		return;
	}
	blk = malloc(c->d->lbs);
	if (!blk) {
		check(c, KEY_HARDWARE, ASC_INTERNAL);
		return;
	}
	if (ndob)
		memset(blk, 0, c->d->lbs);
	else
		area_first(c, blk, c->d->lbs);
	err = write_copies(c, blk, lba, n);
	free(blk);
	if (err) {
		check(c, err == EIO ? KEY_MEDIUM : KEY_HARDWARE,
		      err == EIO ? ASC_WRITE_ERROR : ASC_INTERNAL);
		return;
	}
	c->r->hdr.resid = c->r->hdr.dxfer_len - (ndob ? 0 : c->d->lbs);
	recovered(c, lba, n);
}

/* VERIFY: BYTCHK 0 reads the medium, 1 also compares the data out */
static void do_verify(struct cmd *c, int bytchk, uint64_t lba, uint64_t n)
{
	uint64_t bytes = n * c->d->lbs, bad, done = 0;
	uint8_t *blk;

	c->lba = lba;
	c->blocks = n;
	if (bytchk > 1) {
		check(c, KEY_ILLEGAL, ASC_INVALID_FIELD);
		return;
	}
	if (!range_ok(c, lba, n))
		return;
	c->r->hdr.resid = c->r->hdr.dxfer_len;
	if (!n)
		return;
	if (bytchk && (c->r->hdr.dxfer_direction != SG_DXFER_TO_DEV || bytes > c->a.len)) {
		host_error(c);
		return;
	}
	if (first_bad(c->d, F_MEDIUM, lba, n, &bad)) {
		set_sense(c, KEY_MEDIUM, ASC_READ_ERROR, true, bad);
		return;
	}
	if (!bytchk) {
		c->r->hdr.resid = c->r->hdr.dxfer_len;
		return;
	}
	blk = malloc(c->d->lbs);
	if (!blk) {
		check(c, KEY_HARDWARE, ASC_INTERNAL);
		return;
	}
	for (int i = 0; i < c->a.cnt && done < bytes; i++) {
		const uint8_t *p = c->a.v[i].iov_base;
		size_t len = c->a.v[i].iov_len;

		for (size_t k = 0; k < len && done < bytes; ) {
			uint64_t at = lba * c->d->lbs + done;
			size_t in_blk = at % c->d->lbs;
			size_t m = c->d->lbs - in_blk;

			if (m > len - k)
				m = len - k;
			if (m > bytes - done)
				m = bytes - done;
			if (real_pread(c->fd, blk, m, (off_t)at) != (ssize_t)m) {
				check(c, KEY_MEDIUM, ASC_READ_ERROR);
				goto out;
			}
			if (memcmp(blk, p + k, m)) {
				set_sense(c, KEY_MISCOMPARE, ASC_MISCOMPARE, true,
					  at / c->d->lbs);
				goto out;
			}
			k += m;
			done += m;
		}
	}
	c->r->hdr.resid = c->r->hdr.dxfer_len - bytes;
out:
	free(blk);
}

static void do_sync(struct cmd *c, uint64_t lba, uint64_t n)
{
	c->lba = lba;
	c->blocks = n;
	if (lba > c->f->capacity || n > c->f->capacity - lba) {
		check(c, KEY_ILLEGAL, ASC_LBA_RANGE);
		return;
	}
	if (real_fsync(c->fd) < 0)
		check(c, KEY_MEDIUM, ASC_WRITE_ERROR);
}

static void inquiry_std(struct cmd *c, size_t alloc)
{
	uint8_t b[96];

	memset(b, 0, sizeof(b));
	b[0] = 0x00;		/* connected, direct-access block device */
	b[2] = 0x06;		/* SPC-4 */
	b[3] = 0x12;		/* HiSup, response data format 2 */
	b[4] = sizeof(b) - 5;
	b[7] = 0x02;		/* CmdQue */
	memcpy(b + 8, "PDD     ", 8);
	memcpy(b + 16, "SGDOUBLE        ", 16);
	memcpy(b + 32, "1.0 ", 4);
	put_be16(b + 58, 0x00a0);	/* SAM-5 */
	put_be16(b + 60, 0x0460);	/* SPC-4 */
	put_be16(b + 62, 0x04c0);	/* SBC-3 */
	respond(c, b, sizeof(b), alloc);
}

static void inquiry_vpd(struct cmd *c, int page, size_t alloc)
{
	uint8_t b[256];
	size_t len;
	char serial[17];

	snprintf(serial, sizeof(serial), "%08" PRIX64, c->d->id >> 32);
	memset(b, 0, sizeof(b));
	b[1] = page;
	switch (page) {
	case 0x00:		/* supported pages */
		b[4] = 0x00;
		b[5] = 0x80;
		b[6] = 0x83;
		b[7] = 0xb0;
		b[8] = 0xb1;
		len = 9;
		break;
	case 0x80:		/* unit serial number */
		len = 4 + strlen(serial);
		memcpy(b + 4, serial, strlen(serial));
		break;
	case 0x83: {		/* device identification */
		uint8_t *p = b + 4;
		int t10;

		p[0] = 0x01;	/* binary */
		p[1] = 0x03;	/* LU, NAA */
		p[3] = 8;
		/* NAA 3: locally assigned, from the path */
		put_be64(p + 4, (0x3ULL << 60) | (c->d->id & 0x0fffffffffffffffULL));
		p += 12;
		p[0] = 0x02;	/* ASCII */
		p[1] = 0x01;	/* LU, T10 vendor id */
		t10 = snprintf((char *)p + 4, 64, "PDD     SGDOUBLE        %s", serial);
		p[3] = t10;
		p += 4 + t10;
		len = p - b;
		break;
	}
	case 0xb0:		/* block limits */
		len = 64;
		b[4] = 0x01;	/* WSNZ: WRITE SAME of 0 blocks is refused */
		put_be32(b + 8, (uint32_t)((uint64_t)SGD_MAX_HW_SECTORS * 512 / c->d->lbs));
		put_be64(b + 36, ws_max);	/* MAXIMUM WRITE SAME LENGTH */
		break;
	case 0xb1:		/* block device characteristics */
		len = 64;
		put_be16(b + 4, 0x0001);	/* non-rotating medium */
		break;
	default:
		check(c, KEY_ILLEGAL, ASC_INVALID_FIELD);
		return;
	}
	put_be16(b + 2, len - 4);
	respond(c, b, len, alloc);
}

static void do_inquiry(struct cmd *c, const uint8_t *cdb)
{
	size_t alloc = get_be16(cdb + 3);

	if (cdb[1] & 0x02) {			/* CmdDt: obsolete */
		check(c, KEY_ILLEGAL, ASC_INVALID_FIELD);
	} else if (cdb[1] & 0x01) {
		inquiry_vpd(c, cdb[2], alloc);
	} else if (cdb[2]) {
		check(c, KEY_ILLEGAL, ASC_INVALID_FIELD);
	} else {
		inquiry_std(c, alloc);
	}
}

static void do_readcap10(struct cmd *c, const uint8_t *cdb)
{
	uint8_t b[8];
	uint64_t last;

	if (!c->f->capacity) {
		check(c, KEY_NOT_READY, ASC_NO_MEDIUM);
		return;
	}
	last = c->f->capacity - 1;
	if (!(cdb[8] & 0x01) && get_be32(cdb + 2)) {	/* LBA without PMI */
		check(c, KEY_ILLEGAL, ASC_INVALID_FIELD);
		return;
	}
	put_be32(b, last > 0xfffffffeULL ? 0xffffffff : (uint32_t)last);
	put_be32(b + 4, c->d->lbs);
	respond(c, b, sizeof(b), sizeof(b));
}

static void do_readcap16(struct cmd *c, const uint8_t *cdb)
{
	uint8_t b[32];

	if ((cdb[1] & 0x1f) != 0x10) {		/* other SERVICE ACTION IN(16) */
		check(c, KEY_ILLEGAL, ASC_INVALID_FIELD);
		return;
	}
	if (!c->f->capacity) {
		check(c, KEY_NOT_READY, ASC_NO_MEDIUM);
		return;
	}
	memset(b, 0, sizeof(b));
	put_be64(b, c->f->capacity - 1);
	put_be32(b + 8, c->d->lbs);
	respond(c, b, sizeof(b), get_be32(cdb + 10));
}

/* MODE SENSE pages: caching (WCE set: writes sit in the page cache until
 * SYNCHRONIZE CACHE) and control (fixed-format sense) */
static size_t mode_pages(uint8_t *p, int page, bool changeable)
{
	size_t len = 0;

	if (page == 0x08 || page == 0x3f) {
		memset(p, 0, 20);
		p[0] = 0x08;
		p[1] = 0x12;
		if (!changeable)
			p[2] = 0x04;	/* WCE */
		len += 20;
	}
	if (page == 0x0a || page == 0x3f) {
		memset(p + len, 0, 12);
		p[len] = 0x0a;
		p[len + 1] = 0x0a;
		len += 12;
	}
	return len;
}

static void do_mode_sense(struct cmd *c, const uint8_t *cdb, bool ten)
{
	int pc = cdb[2] >> 6, page = cdb[2] & 0x3f, sub = cdb[3];
	bool dbd = cdb[1] & 0x08, llba = ten && (cdb[1] & 0x10);
	size_t hdr = ten ? 8 : 4, bdl = dbd ? 0 : llba ? 16 : 8, plen, len;
	uint8_t b[128], *bd = b + hdr;

	if (pc == 3) {
		check(c, KEY_ILLEGAL, ASC_NO_SAVE);
		return;
	}
	if ((page != 0x08 && page != 0x0a && page != 0x3f) || (sub && !(page == 0x3f && sub == 0xff))) {
		check(c, KEY_ILLEGAL, ASC_INVALID_FIELD);
		return;
	}
	memset(b, 0, sizeof(b));
	if (bdl == 8) {
		put_be32(bd, c->f->capacity > 0xffffffffULL ? 0xffffffff : (uint32_t)c->f->capacity);
		put_be32(bd + 4, c->d->lbs & 0xffffff);
	} else if (bdl == 16) {
		put_be64(bd, c->f->capacity);
		put_be32(bd + 12, c->d->lbs);
	}
	plen = mode_pages(b + hdr + bdl, page, pc == 1);
	len = hdr + bdl + plen;
	if (ten) {
		put_be16(b, len - 2);
		b[3] = 0x10;		/* DPOFUA */
		b[4] = llba ? 0x01 : 0;
		put_be16(b + 6, bdl);
		respond(c, b, len, get_be16(cdb + 7));
	} else {
		b[0] = len - 1;
		b[2] = 0x10;		/* DPOFUA */
		b[3] = bdl;
		respond(c, b, len, cdb[4]);
	}
}

static void do_request_sense(struct cmd *c, const uint8_t *cdb)
{
	int key = KEY_NO_SENSE, asc = ASC_NONE;
	uint8_t b[18];
	size_t len;

	if (take_pending_ua(c->d) || fault_fires(c->d, F_UA, true, false)) {
		key = KEY_UA;
		asc = ASC_RESET;
	} else if (fault_fires(c->d, F_NOTREADY, false, false)) {
		key = KEY_NOT_READY;
		asc = ASC_NOT_READY;
	}
	memset(b, 0, sizeof(b));
	if (cdb[1] & 0x01) {	/* DESC */
		b[0] = 0x72;
		b[1] = key;
		b[2] = asc >> 8;
		b[3] = asc & 0xff;
		len = 8;
	} else {
		b[0] = 0x70;
		b[2] = key;
		b[7] = 10;
		b[12] = asc >> 8;
		b[13] = asc & 0xff;
		len = 18;
	}
	respond(c, b, len, cdb[4]);
}

static void do_report_luns(struct cmd *c, const uint8_t *cdb)
{
	uint8_t b[16];
	uint32_t alloc = get_be32(cdb + 6);

	if (alloc < 16) {
		check(c, KEY_ILLEGAL, ASC_INVALID_FIELD);
		return;
	}
	memset(b, 0, sizeof(b));
	put_be32(b, 8);		/* one LUN: 0 */
	respond(c, b, sizeof(b), alloc);
}

static size_t cdb_len_for(uint8_t op)
{
	switch (op >> 5) {
	case 0:
		return 6;
	case 1:
	case 2:
		return 10;
	case 4:
		return 16;
	case 5:
		return 12;
	default:
		return 6;
	}
}

/* the counted faults, in SPC's order; true when one ended the command */
static bool counted_fault(struct cmd *c)
{
	uint8_t op = c->r->cdb[0];
	/* READ and WRITE of every size, and WRITE SAME, for the io- faults */
	bool io = op == 0x08 || op == 0x0a || op == 0x28 || op == 0x2a ||
		  op == 0xa8 || op == 0xaa || op == 0x88 || op == 0x8a || op == 0x93;

	if (take_pending_ua(c->d) || fault_fires(c->d, F_UA, true, io)) {
		check(c, KEY_UA, ASC_RESET);
		return true;
	}
	if (fault_fires(c->d, F_NOTREADY, true, io)) {
		check(c, KEY_NOT_READY, ASC_NOT_READY);
		return true;
	}
	if (fault_fires(c->d, F_ABORTED, true, io)) {
		check(c, KEY_ABORTED, ASC_NONE);
		return true;
	}
	if (fault_fires(c->d, F_ILLEGAL, true, io)) {
		check(c, KEY_ILLEGAL, ASC_INVALID_FIELD);
		return true;
	}
	if (fault_fires(c->d, F_TIMEOUT, true, io)) {
		/* the midlayer gave up on it: no status, no sense, no data */
		c->r->hdr.host_status = DID_TIME_OUT;
		c->r->hdr.resid = c->r->hdr.dxfer_len;
		c->timed_out = true;
		return true;
	}
	return false;
}

static const char *op_name(uint8_t op)
{
	switch (op) {
	case 0x00: return "TEST UNIT READY";
	case 0x03: return "REQUEST SENSE";
	case 0x08: return "READ(6)";
	case 0x0a: return "WRITE(6)";
	case 0x12: return "INQUIRY";
	case 0x1a: return "MODE SENSE(6)";
	case 0x1b: return "START STOP UNIT";
	case 0x25: return "READ CAPACITY(10)";
	case 0x28: return "READ(10)";
	case 0x2a: return "WRITE(10)";
	case 0x2f: return "VERIFY(10)";
	case 0x35: return "SYNCHRONIZE CACHE(10)";
	case 0x5a: return "MODE SENSE(10)";
	case 0x88: return "READ(16)";
	case 0x8a: return "WRITE(16)";
	case 0x8f: return "VERIFY(16)";
	case 0x91: return "SYNCHRONIZE CACHE(16)";
	case 0x93: return "WRITE SAME(16)";
	case 0x9e: return "SERVICE ACTION IN(16)";
	case 0xa0: return "REPORT LUNS";
	case 0xa8: return "READ(12)";
	case 0xaa: return "WRITE(12)";
	case 0xaf: return "VERIFY(12)";
	default: return "unsupported";
	}
}

static void dispatch(struct cmd *c)
{
	const uint8_t *cdb = c->r->cdb;
	uint8_t op = cdb[0];

	if (c->r->hdr.cmd_len < cdb_len_for(op)) {
		check(c, KEY_ILLEGAL, ASC_INVALID_FIELD);
		return;
	}
	if (op != 0x12 && op != 0xa0 && op != 0x03 && counted_fault(c))
		return;
	switch (op) {
	case 0x00:
		break;
	case 0x03:
		do_request_sense(c, cdb);
		break;
	case 0x08:
		do_read(c, (cdb[1] & 0x1f) << 16 | get_be16(cdb + 2), cdb[4] ? cdb[4] : 256);
		break;
	case 0x0a:
		do_write(c, (cdb[1] & 0x1f) << 16 | get_be16(cdb + 2), cdb[4] ? cdb[4] : 256);
		break;
	case 0x28:
		do_read(c, get_be32(cdb + 2), get_be16(cdb + 7));
		break;
	case 0x2a:
		do_write(c, get_be32(cdb + 2), get_be16(cdb + 7));
		break;
	case 0xa8:
		do_read(c, get_be32(cdb + 2), get_be32(cdb + 6));
		break;
	case 0xaa:
		do_write(c, get_be32(cdb + 2), get_be32(cdb + 6));
		break;
	case 0x88:
		do_read(c, get_be64(cdb + 2), get_be32(cdb + 10));
		break;
	case 0x8a:
		do_write(c, get_be64(cdb + 2), get_be32(cdb + 10));
		break;
	case 0x2f:
		do_verify(c, (cdb[1] >> 1) & 3, get_be32(cdb + 2), get_be16(cdb + 7));
		break;
	case 0xaf:
		do_verify(c, (cdb[1] >> 1) & 3, get_be32(cdb + 2), get_be32(cdb + 6));
		break;
	case 0x8f:
		do_verify(c, (cdb[1] >> 1) & 3, get_be64(cdb + 2), get_be32(cdb + 10));
		break;
	case 0x93:
		do_write_same(c, cdb);
		break;
	case 0x12:
		do_inquiry(c, cdb);
		break;
	case 0x1a:
		do_mode_sense(c, cdb, false);
		break;
	case 0x5a:
		do_mode_sense(c, cdb, true);
		break;
	case 0x1b:
		break;
	case 0x25:
		do_readcap10(c, cdb);
		break;
	case 0x9e:
		do_readcap16(c, cdb);
		break;
	case 0x35:
		do_sync(c, get_be32(cdb + 2), get_be16(cdb + 7));
		break;
	case 0x91:
		do_sync(c, get_be64(cdb + 2), get_be32(cdb + 10));
		break;
	case 0xa0:
		do_report_luns(c, cdb);
		break;
	default:
		check(c, KEY_ILLEGAL, ASC_INVALID_OP);
		break;
	}
}

static void log_result(const struct cmd *c)
{
	const struct sg_io_hdr *h = &c->r->hdr;
	const uint8_t *s = c->r->sense;
	char res[96], cdb[3 * 16 + 1];
	int n = 0;

	if (log_fd < 0)
		return;
	for (int i = 0; i < h->cmd_len && i < 16; i++)
		n += snprintf(cdb + n, sizeof(cdb) - n, "%s%02x", i ? " " : "", c->r->cdb[i]);
	if (h->host_status)
		snprintf(res, sizeof(res), "host_status 0x%x%s", h->host_status,
			 h->host_status == DID_TIME_OUT ? " (timed out)" : "");
	else if (h->status == STAT_CHECK && (s[0] & 0x7f) == 0x72)
		snprintf(res, sizeof(res), "CHECK CONDITION key 0x%x asc 0x%02x/0x%02x info %" PRIu64,
			 s[1], s[2], s[3], get_be64(s + 12));
	else if (h->status == STAT_CHECK && (s[0] & 0x80))
		snprintf(res, sizeof(res), "CHECK CONDITION key 0x%x asc 0x%02x/0x%02x info %u",
			 s[2] & 0xf, s[12], s[13], get_be32(s + 3));
	else if (h->status == STAT_CHECK)
		snprintf(res, sizeof(res), "CHECK CONDITION key 0x%x asc 0x%02x/0x%02x",
			 s[2] & 0xf, s[12], s[13]);
	else
		snprintf(res, sizeof(res), "GOOD resid %d", h->resid);
	sgd_log("%s %s [%s] lba %" PRIu64 " blocks %" PRIu64 " len %u pack_id %d -> %s",
		c->d->path, op_name(c->r->cdb[0]), cdb, c->lba, c->blocks, h->dxfer_len,
		h->pack_id, res);
}

/* Describe the caller's data buffer: dxferp, iovec_count sg_iovec pieces,
 * or the reserved buffer for SG_FLAG_MMAP_IO.  0 or -errno. */
static int build_area(struct sgd_file *f, struct sgd_req *r, struct area *a)
{
	struct sg_io_hdr *h = &r->hdr;

	memset(a, 0, sizeof(*a));
	a->no_copy = h->flags & SG_FLAG_NO_DXFER;
	a->v = &a->one;
	if (!h->dxfer_len || h->dxfer_direction == SG_DXFER_NONE)
		return 0;
	if (h->flags & SG_FLAG_MMAP_IO) {
		a->one.iov_base = f->resv;
		a->one.iov_len = h->dxfer_len;
		a->no_copy = false;
	} else if (h->iovec_count) {
		const sg_iovec_t *sv = h->dxferp;
		size_t left = h->dxfer_len;

		a->v = calloc(h->iovec_count, sizeof(*a->v));
		if (!a->v)
			return -ENOMEM;
		for (int i = 0; i < h->iovec_count && left; i++) {
			size_t k = sv[i].iov_len < left ? sv[i].iov_len : left;

			a->v[a->cnt].iov_base = sv[i].iov_base;
			a->v[a->cnt++].iov_len = k;
			left -= k;
		}
		a->len = h->dxfer_len - left;
		return 0;
	} else {
		a->one.iov_base = h->dxferp;
		a->one.iov_len = h->dxfer_len;
	}
	a->cnt = a->one.iov_base || a->no_copy ? 1 : 0;
	a->len = a->cnt ? h->dxfer_len : 0;
	return 0;
}

/* Run the command; *ready is when its result may be seen: now, or with
 * SGDOUBLE_LATENCY_US the latency after it was written */
static int execute(struct sgd_file *f, int fd, struct sgd_req *r, int64_t *ready)
{
	struct cmd c = { .f = f, .d = f->dev, .fd = fd, .r = r };
	struct sg_io_hdr *h = &r->hdr;
	int64_t start = ts_ns(&r->start), now;
	int err;

	h->status = h->masked_status = h->msg_status = 0;
	h->host_status = h->driver_status = 0;
	h->sb_len_wr = 0;
	h->resid = 0;
	h->info = 0;
	err = build_area(f, r, &c.a);
	if (err)
		return err;
	dispatch(&c);
	now = now_ns();
	*ready = now;
	if (c.timed_out) {
		/* it took its whole timeout, in the story the header tells */
		h->duration = h->timeout ? h->timeout : SGD_RQ_TIMEOUT_MS;
	} else {
		if (c.medium && start + latency_ns > now)
			*ready = start + latency_ns;
		h->duration = (*ready - start) / 1000000;
	}
	log_result(&c);
	if (c.a.v != &c.a.one)
		free(c.a.v);
	return 0;
}

/* --- the request queue of a fd ------------------------------------------- */

/* keep the eventfd that poll() waits on readable while results wait */
static void set_waiting(struct sgd_file *f, int waiting)
{
	uint64_t v = 1;

	if (f->efd >= 0 && !f->waiting && waiting) {
		if (real_write(f->efd, &v, sizeof(v)) < 0)
			v = 0;
	} else if (f->efd >= 0 && f->waiting && !waiting) {
		if (real_read(f->efd, &v, sizeof(v)) < 0)
			v = 0;
	}
	f->waiting = waiting;
}

static int queued(const struct sgd_file *f)
{
	int n = 0;

	for (int i = 0; i < SGD_MAX_QUEUE; i++)
		n += f->req[i].state != RQ_FREE;
	return n;
}

/* Commands whose latency is over become done: read(), poll() and
 * SG_GET_NUM_WAITING see them from now on.  The timerfd that poll() also
 * waits on is set for the next to ripen, so that a poll() started before
 * that command was written still wakes for it.  Returns that time, 0
 * when none is in flight.  Under f->lock. */
static int64_t ripen(struct sgd_file *f)
{
	int64_t now = 0, next = 0;
	int n = 0;

	for (int i = 0; i < SGD_MAX_QUEUE; i++) {
		struct sgd_req *q = &f->req[i];

		if (q->state != RQ_BUSY || !q->ready_ns)
			continue;	/* free, done, or still being executed */
		if (!now)
			now = now_ns();
		if (q->ready_ns <= now) {
			q->state = RQ_DONE;
			n += !q->sg_io_owned;
		} else if (!next || q->ready_ns < next) {
			next = q->ready_ns;
		}
	}
	if (n) {
		set_waiting(f, f->waiting + n);
		pthread_cond_broadcast(&f->done_cv);
	}
	if (f->tfd >= 0 && next != f->armed) {
		/* setting it again also makes a timer that went off unreadable */
		struct itimerspec its = { .it_value = ns_ts(next) };

		if (timerfd_settime(f->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
			f->armed = next;
	}
	return next;
}

/* The reserved buffer as memory both we and the caller can map. */
static int map_reserve(struct sgd_file *f)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = ((size_t)f->reserve + page - 1) / page * page;
	int err;

	if (f->resv)
		return 0;
	f->memfd = memfd_create("sgdouble-reserve", MFD_CLOEXEC);
	if (f->memfd < 0)
		return -errno;
	if (real_ftruncate(f->memfd, len) == 0) {
		f->resv = real_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f->memfd, 0);
		if (f->resv != MAP_FAILED) {
			f->resv_len = len;
			return 0;
		}
	}
	err = -errno;
	real_close(f->memfd);
	f->memfd = -1;
	f->resv = NULL;
	return err;
}

/* a new size: the buffer is made again when next needed */
static void drop_reserve(struct sgd_file *f)
{
	if (!f->resv)
		return;
	munmap(f->resv, f->resv_len);
	real_close(f->memfd);
	f->resv = NULL;
	f->memfd = -1;
}

static void free_req(struct sgd_file *f, struct sgd_req *r)
{
	if (r->uses_reserve)
		f->res_in_use = false;
	r->state = RQ_FREE;
	r->uses_reserve = false;
	r->ready_ns = 0;
}

/* sg_new_write(): take a slot, check the header, run the command.
 * Returns the slot, done or in flight till its ready_ns, or NULL with
 * errno set. */
static struct sgd_req *submit(struct sgd_file *f, int fd, const struct sg_io_hdr *uh,
			      bool sg_io_owned)
{
	struct sgd_req *r = NULL;
	struct sg_io_hdr *h;
	int64_t ready = 0;
	int err = 0;

	pthread_mutex_lock(&f->lock);
	f->cmd_q = true;	/* a v3 header turns command queuing on */
	for (int i = 0; i < SGD_MAX_QUEUE && !r; i++)
		if (f->req[i].state == RQ_FREE)
			r = &f->req[i];
	if (!r) {
		pthread_mutex_unlock(&f->lock);
		sgd_log("%s fd %d: 16 commands queued, EDOM", f->dev->path, fd);
		errno = EDOM;
		return NULL;
	}
	r->state = RQ_BUSY;
	r->sg_io_owned = sg_io_owned;
	r->seq = f->next_seq++;
	clock_gettime(CLOCK_MONOTONIC, &r->start);
	r->hdr = *uh;
	h = &r->hdr;
	if (h->interface_id != 'S')
		err = ENOSYS;
	else if ((h->flags & SG_FLAG_MMAP_IO) && h->dxfer_len > (unsigned int)f->reserve)
		err = ENOMEM;
	else if ((h->flags & SG_FLAG_MMAP_IO) && (h->flags & SG_FLAG_DIRECT_IO))
		err = EINVAL;
	else if ((h->flags & SG_FLAG_MMAP_IO) && f->res_in_use)
		err = EBUSY;
	else if (!h->cmdp || h->cmd_len < 6 || h->cmd_len > SGD_MAX_CDB)
		err = EMSGSIZE;
	else if (h->iovec_count > SGD_MAX_IOV ||
		 h->dxfer_len > (unsigned int)SGD_MAX_HW_SECTORS * 512)
		err = EINVAL;
	else if (h->flags & SG_FLAG_MMAP_IO)
		err = -map_reserve(f);
	if (!err && h->dxfer_len && h->dxfer_direction != SG_DXFER_NONE &&
	    !f->res_in_use && h->dxfer_len <= (unsigned int)f->reserve) {
		r->uses_reserve = true;
		f->res_in_use = true;
	}
	if (err) {
		free_req(f, r);
		pthread_mutex_unlock(&f->lock);
		sgd_log("%s fd %d: header refused: %s", f->dev->path, fd, strerror(err));
		errno = err;
		return NULL;
	}
	memcpy(r->cdb, h->cmdp, h->cmd_len);
	pthread_mutex_unlock(&f->lock);

	err = execute(f, fd, r, &ready);

	pthread_mutex_lock(&f->lock);
	if (err) {
		free_req(f, r);
		pthread_mutex_unlock(&f->lock);
		errno = -err;
		return NULL;
	}
	r->ready_ns = ready;
	ripen(f);
	if (!sg_io_owned)	/* done, or readers waiting have a new deadline */
		pthread_cond_broadcast(&f->done_cv);
	pthread_mutex_unlock(&f->lock);
	return r;
}

/* sg_new_read(): the finished header as the caller sees it, sense copied
 * to its sbp */
static void finish(const struct sgd_req *r, struct sg_io_hdr *out)
{
	*out = r->hdr;
	out->sb_len_wr = 0;
	if (out->mx_sb_len && out->sbp &&
	    ((out->masked_status & MASKED_CHECK) || (out->driver_status & DRIVER_SENSE))) {
		size_t len = 8 + r->sense[7];

		if (len > out->mx_sb_len)
			len = out->mx_sb_len;
		if (len > SGD_SENSE_MAX)
			len = SGD_SENSE_MAX;
		memcpy(out->sbp, r->sense, len);
		out->driver_status = DRIVER_SENSE;
		out->sb_len_wr = len;
	}
	if (out->masked_status || out->host_status || out->driver_status)
		out->info |= SG_INFO_CHECK;
}

static ssize_t sg_write(struct sgd_file *f, int fd, const void *buf, size_t count)
{
	struct sg_io_hdr h;
	int reply_len;

	if (f->accmode == O_RDONLY) {
		errno = EBADF;
		return -1;
	}
	if (count < SGD_HDR_V2) {
		errno = EIO;
		return -1;
	}
	memcpy(&reply_len, (const uint8_t *)buf + 4, sizeof(int));
	if (reply_len >= 0) {		/* a struct sg_header: v1/v2 interface */
		sgd_log("%s fd %d: sg v2 interface not emulated", f->dev->path, fd);
		errno = ENOSYS;
		return -1;
	}
	if (count < sizeof(h)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&h, buf, sizeof(h));
	if (!submit(f, fd, &h, false))
		return -1;
	return count;
}

static bool nonblocking(int fd)
{
	int fl = real_fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_NONBLOCK);
}

/* sg_read(): the oldest finished request, or with force_pack_id the one
 * whose pack_id the caller's header names (-1: any) */
static ssize_t sg_read(struct sgd_file *f, int fd, void *buf, size_t count)
{
	struct sgd_req *r;
	struct sg_io_hdr out;
	int want = -1;

	if (f->accmode == O_WRONLY) {
		errno = EBADF;
		return -1;
	}
	pthread_mutex_lock(&f->lock);
	if (f->force_pack_id && count >= SGD_HDR_V2) {
		int reply_len;

		memcpy(&reply_len, (uint8_t *)buf + 4, sizeof(int));
		if (reply_len < 0 && count >= sizeof(struct sg_io_hdr))
			want = ((struct sg_io_hdr *)buf)->pack_id;
		else if (reply_len >= 0)
			memcpy(&want, (uint8_t *)buf + 8, sizeof(int));
	}
	for (;;) {
		int64_t next = ripen(f);

		r = NULL;
		for (int i = 0; i < SGD_MAX_QUEUE; i++) {
			struct sgd_req *q = &f->req[i];

			if (q->state == RQ_DONE && !q->sg_io_owned &&
			    (want == -1 || q->hdr.pack_id == want) && (!r || q->seq < r->seq))
				r = q;
		}
		if (r)
			break;
		if (nonblocking(fd)) {
			pthread_mutex_unlock(&f->lock);
			errno = EAGAIN;
			return -1;
		}
		if (next) {	/* till the next in flight ripens, or news */
			struct timespec until = ns_ts(next);

			pthread_cond_timedwait(&f->done_cv, &f->lock, &until);
		} else {
			pthread_cond_wait(&f->done_cv, &f->lock);
		}
	}
	r->state = RQ_READING;
	set_waiting(f, f->waiting - 1);
	if (count < sizeof(out)) {	/* the result is lost, as in sg_new_read() */
		free_req(f, r);
		pthread_mutex_unlock(&f->lock);
		errno = EINVAL;
		return -1;
	}
	finish(r, &out);
	free_req(f, r);
	pthread_mutex_unlock(&f->lock);
	memcpy(buf, &out, sizeof(out));
	return count;
}

ssize_t read(int fd, void *buf, size_t count)
{
	struct sgd_file *f = get_file(fd);
	ssize_t r;

	if (!f)
		return real_read(fd, buf, count);
	r = sg_read(f, fd, buf, count);
	put_file(f);
	return r;
}

ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen);

ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen)
{
	struct sgd_file *f = get_file(fd);
	ssize_t r;

	if (!f)
		return real_read_chk(fd, buf, count, buflen);
	if (count > buflen)
		abort();
	r = sg_read(f, fd, buf, count);
	put_file(f);
	return r;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	struct sgd_file *f = get_file(fd);
	ssize_t r;

	if (!f)
		return real_write(fd, buf, count);
	r = sg_write(f, fd, buf, count);
	put_file(f);
	return r;
}

/* the driver has no read_iter: the VFS calls read() once per iovec */
ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	struct sgd_file *f = get_file(fd);
	ssize_t r, total = 0;

	if (!f)
		return real_readv(fd, iov, cnt);
	for (int i = 0; i < cnt; i++) {
		if (!iov[i].iov_len)
			continue;
		r = sg_read(f, fd, iov[i].iov_base, iov[i].iov_len);
		if (r < 0) {
			total = total ? total : -1;
			break;
		}
		total += r;
		if ((size_t)r < iov[i].iov_len)
			break;
	}
	put_file(f);
	return total;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	struct sgd_file *f = get_file(fd);
	ssize_t r, total = 0;

	if (!f)
		return real_writev(fd, iov, cnt);
	for (int i = 0; i < cnt; i++) {
		if (!iov[i].iov_len)
			continue;
		r = sg_write(f, fd, iov[i].iov_base, iov[i].iov_len);
		if (r < 0) {
			total = total ? total : -1;
			break;
		}
		total += r;
		if ((size_t)r < iov[i].iov_len)
			break;
	}
	put_file(f);
	return total;
}

/* --- what the node refuses ----------------------------------------------- */

#define REFUSE(fd, err)						\
	do {							\
		resolve();					\
		if (maybe_sg(fd)) {				\
			sgd_log("%s on sg fd %d: %s", __func__,	\
				fd, strerror(err));		\
			errno = (err);				\
			return -1;				\
		}						\
	} while (0)

/* ... and what a raw node refuses: it is a char device, whose raw_fops
 * had no mmap and no fallocate */
#define REFUSE_RAW(fd, err)						\
	do {								\
		if (raw_of(fd)) {					\
			sgd_log("%s on raw fd %d: %s", __func__,	\
				fd, strerror(err));			\
			errno = (err);					\
			return -1;					\
		}							\
	} while (0)

/* default_llseek() on the raw node, not on the disk: SEEK_END and the
 * rest go by the node's size, 0 */
static off64_t raw_lseek(int fd, off64_t off, int whence)
{
	if (whence == SEEK_DATA || whence == SEEK_HOLE) {
		if (off >= 0) {
			errno = ENXIO;
			return -1;
		}
		whence = SEEK_SET;	/* a negative offset: EINVAL */
	} else if (whence == SEEK_END) {
		whence = SEEK_SET;
	}
	return real_lseek64(fd, off, whence);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	REFUSE(fd, ESPIPE);	/* nonseekable_open() */
	return real_pread(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	REFUSE(fd, ESPIPE);
	return real_pread64(fd, buf, n, off);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	REFUSE(fd, ESPIPE);
	return real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	REFUSE(fd, ESPIPE);
	return real_pwrite64(fd, buf, n, off);
}

off_t lseek(int fd, off_t off, int whence)
{
	REFUSE(fd, ESPIPE);
	if (raw_of(fd))
		return raw_lseek(fd, off, whence);
	return real_lseek(fd, off, whence);
}

off64_t lseek64(int fd, off64_t off, int whence)
{
	REFUSE(fd, ESPIPE);
	if (raw_of(fd))
		return raw_lseek(fd, off, whence);
	return real_lseek64(fd, off, whence);
}

int fsync(int fd)
{
	REFUSE(fd, EINVAL);	/* no fsync in sg's file operations */
	return real_fsync(fd);
}

int fdatasync(int fd)
{
	REFUSE(fd, EINVAL);
	return real_fdatasync(fd);
}

int ftruncate(int fd, off_t len)
{
	REFUSE(fd, EINVAL);	/* not a regular file */
	REFUSE_RAW(fd, EINVAL);
	return real_ftruncate(fd, len);
}

int ftruncate64(int fd, off64_t len)
{
	REFUSE(fd, EINVAL);
	REFUSE_RAW(fd, EINVAL);
	return real_ftruncate64(fd, len);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
	REFUSE(fd, ENODEV);	/* neither a regular file nor a block device */
	REFUSE_RAW(fd, ENODEV);
	return real_fallocate(fd, mode, off, len);
}

int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
	REFUSE(fd, ENODEV);
	REFUSE_RAW(fd, ENODEV);
	return real_fallocate64(fd, mode, off, len);
}

/* --- mmap: the reserved buffer ------------------------------------------- */

static void *sg_mmap(struct sgd_file *f, void *addr, size_t len, int prot, int flags, off_t off)
{
	void *p = MAP_FAILED;
	int err = 0;

	pthread_mutex_lock(&f->lock);
	if (off)
		err = EINVAL;
	else if ((flags & MAP_TYPE) == MAP_PRIVATE)
		err = EINVAL;
	else if (len > (size_t)f->reserve)
		err = ENOMEM;
	else
		err = -map_reserve(f);
	if (!err) {
		p = real_mmap(addr, len, prot, flags, f->memfd, 0);
		if (p == MAP_FAILED)
			err = errno;
		else
			f->mmap_called = true;
	}
	pthread_mutex_unlock(&f->lock);
	sgd_log("%s: mmap of %zu bytes: %s", f->dev->path, len, err ? strerror(err) : "done");
	errno = err;
	return p;
}

/* raw_fops had no mmap */
static void *raw_mmap(int fd)
{
	sgd_log("mmap on raw fd %d: %s", fd, strerror(ENODEV));
	errno = ENODEV;
	return MAP_FAILED;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct sgd_file *f = (flags & MAP_ANONYMOUS) ? NULL : get_file(fd);
	void *p;

	resolve();
	if (!(flags & MAP_ANONYMOUS) && raw_of(fd))
		return raw_mmap(fd);
	if (!f)
		return real_mmap(addr, len, prot, flags, fd, off);
	p = sg_mmap(f, addr, len, prot, flags, off);
	put_file(f);
	return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	struct sgd_file *f = (flags & MAP_ANONYMOUS) ? NULL : get_file(fd);
	void *p;

	resolve();
	if (!(flags & MAP_ANONYMOUS) && raw_of(fd))
		return raw_mmap(fd);
	if (!f)
		return real_mmap64(addr, len, prot, flags, fd, off);
	p = sg_mmap(f, addr, len, prot, flags, off);
	put_file(f);
	return p;
}

/* --- poll ---------------------------------------------------------------- */

/* sg_poll(): POLLIN while a result waits; POLLOUT while the queue has
 * room (with command queuing off, only when it is empty).  *recheck is
 * set when the fds poll() is given cannot say when to look again; *efd
 * and *tfd, when asked for, are those fds (-1: none). */
static short sg_revents(struct sgd_file *f, short events, bool *recheck, int *efd,
			 int *tfd)
{
	short rev = 0;
	int64_t next;
	int n;

	pthread_mutex_lock(&f->lock);
	if (latency_ns && f->tfd < 0) {
		f->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		f->armed = 0;
	}
	next = ripen(f);
	if (next && f->tfd < 0)
		*recheck = true;	/* no timerfd: fall back to ticks */
	n = queued(f);
	if (f->waiting)
		rev |= POLLIN | POLLRDNORM;
	if (f->cmd_q ? n < SGD_MAX_QUEUE : n == 0)
		rev |= POLLOUT | POLLWRNORM;
	else if (events & (POLLOUT | POLLWRNORM))
		*recheck = true;
	if (f->efd < 0) {
		f->efd = eventfd(f->waiting ? 1 : 0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (f->efd < 0)
			*recheck = true;	/* no eventfd: fall back to ticks */
	}
	if (efd)
		*efd = f->efd;
	if (tfd)
		*tfd = f->tfd;
	pthread_mutex_unlock(&f->lock);
	return rev & (events | POLLERR | POLLHUP);
}

static bool any_sg(const struct pollfd *fds, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		if (maybe_sg(fds[i].fd))
			return true;
	return false;
}

/* Each sg entry becomes its eventfd, readable while a result waits, and
 * with SGDOUBLE_LATENCY_US its timerfd too, readable when the next
 * command in flight ripens; a wanted POLLOUT that the queue cannot give
 * yet is re-checked every 10 ms.  The revents of sg entries are always
 * worked out afresh. */
static int sg_poll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
		   const sigset_t *mask)
{
	int64_t deadline = tmo ? now_ns() + tmo->tv_sec * 1000000000LL + tmo->tv_nsec : 0;
	struct pollfd *sh = calloc(2 * n, sizeof(*sh));
	int ready, r;

	if (!sh) {
		errno = ENOMEM;
		return -1;
	}
	sgd_log("poll on %lu fds, sg among them", (unsigned long)n);
	for (;;) {
		bool recheck = false;
		struct timespec wait, *wp = NULL;
		int64_t left = 0;
		nfds_t m = n;

		ready = 0;
		for (nfds_t i = 0; i < n; i++) {
			struct sgd_file *f = get_file(fds[i].fd);
			int efd, tfd;

			sh[i] = fds[i];
			sh[i].revents = 0;
			if (!f)
				continue;
			ready += sg_revents(f, fds[i].events, &recheck, &efd, &tfd) != 0;
			sh[i].fd = efd;
			sh[i].events = POLLIN;
			if (tfd >= 0)
				sh[m++] = (struct pollfd){ .fd = tfd, .events = POLLIN };
			put_file(f);
		}
		if (tmo) {
			left = deadline - now_ns();
			if (left < 0)
				left = 0;
		}
		if (ready)
			left = 0;
		else if (recheck && (!tmo || left > 10000000))
			left = 10000000;
		if (tmo || ready || recheck) {
			wait.tv_sec = left / 1000000000;
			wait.tv_nsec = left % 1000000000;
			wp = &wait;
		}
		r = real_ppoll(sh, m, wp, mask);
		if (r < 0)
			break;
		r = 0;
		for (nfds_t i = 0; i < n; i++) {
			struct sgd_file *f = get_file(fds[i].fd);
			bool dummy = false;

			if (f) {
				fds[i].revents = sg_revents(f, fds[i].events, &dummy, NULL, NULL);
				put_file(f);
			} else {
				fds[i].revents = sh[i].revents;
			}
			r += fds[i].revents != 0;
		}
		if (r || (tmo && now_ns() >= deadline))
			break;
	}
	free(sh);
	return r;
}

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec t;

	resolve();
	if (!any_sg(fds, n))
		return real_poll(fds, n, timeout);
	t.tv_sec = timeout / 1000;
	t.tv_nsec = (long)(timeout % 1000) * 1000000;
	return sg_poll(fds, n, timeout < 0 ? NULL : &t, NULL);
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask)
{
	resolve();
	if (!any_sg(fds, n))
		return real_ppoll(fds, n, tmo, mask);
	return sg_poll(fds, n, tmo, mask);
}

/* --- ioctl --------------------------------------------------------------- */

static int sg_io(struct sgd_file *f, int fd, struct sg_io_hdr *uh)
{
	struct sgd_req *r;

	if (!uh) {
		errno = EFAULT;
		return -1;
	}
	r = submit(f, fd, uh, true);
	if (!r)
		return -1;
	if (latency_ns) {	/* the latency, slept out; only this thread frees r */
		struct timespec until = ns_ts(r->ready_ns);

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
			;
	}
	pthread_mutex_lock(&f->lock);
	finish(r, uh);
	free_req(f, r);
	pthread_mutex_unlock(&f->lock);
	return 0;
}

static int put_int(void *arg, int v)
{
	if (!arg) {
		errno = EFAULT;
		return -1;
	}
	memcpy(arg, &v, sizeof(v));
	return 0;
}

static int get_int(const void *arg, int *v)
{
	if (!arg) {
		errno = EFAULT;
		return -1;
	}
	memcpy(v, arg, sizeof(*v));
	return 0;
}

static int fail(int err)
{
	errno = err;
	return -1;
}

static int max_sectors_bytes(void)
{
	return SGD_MAX_SECTORS * 512;
}

static int set_reserved(struct sgd_file *f, const void *arg)
{
	long page = sysconf(_SC_PAGESIZE);
	int val = 0, err = 0;

	if (get_int(arg, &val))
		return -1;
	if (val < 0)
		return fail(EINVAL);
	if (val > max_sectors_bytes())
		val = max_sectors_bytes();
	/* sg_build_reserve(): at least a page, whole 512-byte units */
	if (val < page)
		val = page;
	val = (val + 511) & ~511;
	pthread_mutex_lock(&f->lock);
	if (val != f->reserve) {
		if (f->mmap_called || f->res_in_use) {
			err = EBUSY;
		} else {
			drop_reserve(f);
			f->reserve = val;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return err ? fail(err) : 0;
}

static int request_table(struct sgd_file *f, void *arg)
{
	sg_req_info_t t[SGD_MAX_QUEUE];
	const struct sgd_req *order[SGD_MAX_QUEUE];
	int n = 0;

	if (!arg)
		return fail(EFAULT);
	memset(t, 0, sizeof(t));
	pthread_mutex_lock(&f->lock);
	ripen(f);
	for (int i = 0; i < SGD_MAX_QUEUE; i++) {
		const struct sgd_req *q = &f->req[i];
		int k;

		if (q->state == RQ_FREE)
			continue;
		for (k = n; k > 0 && order[k - 1]->seq > q->seq; k--)
			order[k] = order[k - 1];
		order[k] = q;
		n++;
	}
	for (int i = 0; i < n; i++) {
		const struct sgd_req *q = order[i];

		t[i].req_state = q->state == RQ_BUSY ? 1 : q->state == RQ_DONE ? 2 : 3;
		t[i].problem = q->hdr.masked_status & q->hdr.host_status & q->hdr.driver_status;
		t[i].duration = q->state == RQ_BUSY ? (unsigned int)ms_since(&q->start) :
						       q->hdr.duration;
		t[i].sg_io_owned = q->sg_io_owned;
		t[i].pack_id = q->hdr.pack_id;
		t[i].usr_ptr = q->hdr.usr_ptr;
	}
	pthread_mutex_unlock(&f->lock);
	memcpy(arg, t, sizeof(t));
	return 0;
}

/* an internal command for the SCSI_IOCTL_* that send one; its SCSI
 * result (status byte) as the ioctl's value */
static int internal_cmd(struct sgd_file *f, int fd, const uint8_t *cdb, int len)
{
	struct sg_io_hdr h;
	uint8_t sense[32];

	memset(&h, 0, sizeof(h));
	h.interface_id = 'S';
	h.dxfer_direction = SG_DXFER_NONE;
	h.cmd_len = len;
	h.cmdp = (uint8_t *)cdb;
	h.mx_sb_len = sizeof(sense);
	h.sbp = sense;
	if (sg_io(f, fd, &h))
		return -1;
	if (h.host_status)
		return h.host_status << 16;
	if (h.status == STAT_CHECK && h.sb_len_wr > 2 && (sense[2] & 0xf) == KEY_UA)
		return -2;	/* a unit attention: scsi_test_unit_ready() retries */
	return h.status;
}

static int scsi_ioctl(struct sgd_file *f, int fd, unsigned long req, void *arg)
{
	static const uint8_t tur[6] = { 0x00 };
	uint8_t ssu[6] = { 0x1b, 0, 0, 0, 0, 0 };
	int v = 0, r;

	switch (req) {
	case SCSI_IOCTL_GET_IDLUN: {
		int idlun[2] = { (int)(f->dev->minor & 0xff), 0 };

		if (!arg)
			return fail(EFAULT);
		memcpy(arg, idlun, sizeof(idlun));
		return 0;
	}
	case SCSI_IOCTL_GET_BUS_NUMBER:
		return put_int(arg, 0);
	case SCSI_IOCTL_PROBE_HOST: {
		static const char name[] = "sgdouble";
		unsigned int len;

		if (!arg)
			return 1;
		memcpy(&len, arg, sizeof(len));
		if (len > sizeof(name) - 1)
			len = sizeof(name);
		memcpy(arg, name, len);
		return 1;
	}
	case SCSI_IOCTL_TEST_UNIT_READY:
		for (int tries = 3; tries; tries--) {
			r = internal_cmd(f, fd, tur, 6);
			if (r != -2)
				return r;
		}
		return STAT_CHECK;
	case SCSI_IOCTL_START_UNIT:
	case SCSI_IOCTL_STOP_UNIT:
		ssu[4] = req == SCSI_IOCTL_START_UNIT;
		r = internal_cmd(f, fd, ssu, 6);
		return r == -2 ? STAT_CHECK : r;
	case SCSI_IOCTL_DOORLOCK:
	case SCSI_IOCTL_DOORUNLOCK:
		return 0;	/* not removable: nothing to lock */
	case SG_SCSI_RESET:
		if (geteuid() != 0)
			return fail(EACCES);
		if (get_int(arg, &v))
			return -1;
		switch (v & 0xff) {
		case SG_SCSI_RESET_NOTHING:
			return 0;
		case SG_SCSI_RESET_DEVICE:
		case SG_SCSI_RESET_BUS:
		case SG_SCSI_RESET_HOST:
		case 4:		/* SG_SCSI_RESET_TARGET */
			__atomic_store_n(&f->dev->pending_ua, 1, __ATOMIC_RELEASE);
			sgd_log("%s: reset, unit attention pending", f->dev->path);
			return 0;
		default:
			return fail(EINVAL);
		}
	default:
		return fail(EINVAL);	/* the host template has no ioctl */
	}
}

/* sg_ioctl_common() */
static int sg_ioctl(struct sgd_file *f, int fd, unsigned long req, void *arg)
{
	bool read_only = f->accmode != O_RDWR;
	int v = 0, n;

	switch (req) {
	case SG_IO:
		return sg_io(f, fd, arg);
	case SG_SET_TIMEOUT:
		if (get_int(arg, &v))
			return -1;
		if (v < 0)
			return fail(EIO);
		if ((int64_t)v >= (int64_t)INT_MAX * SGD_USER_HZ / SGD_HZ)
			v = (int64_t)INT_MAX * SGD_USER_HZ / SGD_HZ;
		pthread_mutex_lock(&f->lock);
		f->timeout_user = v;
		pthread_mutex_unlock(&f->lock);
		return 0;
	case SG_GET_TIMEOUT:		/* as the value, not through arg */
		pthread_mutex_lock(&f->lock);
		v = f->timeout_user;
		pthread_mutex_unlock(&f->lock);
		return v;
	case SG_SET_FORCE_LOW_DMA:
		return 0;
	case SG_GET_LOW_DMA:
		return put_int(arg, 0);
	case SG_GET_SCSI_ID: {
		struct sg_scsi_id id;

		if (!arg)
			return fail(EFAULT);
		memset(&id, 0, sizeof(id));
		id.host_no = 0;
		id.channel = 0;
		id.scsi_id = f->dev->minor;
		id.lun = 0;
		id.scsi_type = 0;
		id.h_cmd_per_lun = 1;
		id.d_queue_depth = 32;
		memcpy(arg, &id, sizeof(id));
		return 0;
	}
	case SG_SET_FORCE_PACK_ID:
		if (get_int(arg, &v))
			return -1;
		pthread_mutex_lock(&f->lock);
		f->force_pack_id = v != 0;
		pthread_mutex_unlock(&f->lock);
		return 0;
	case SG_GET_PACK_ID:
	case SG_GET_NUM_WAITING: {
		const struct sgd_req *oldest = NULL;

		pthread_mutex_lock(&f->lock);
		ripen(f);
		n = 0;
		for (int i = 0; i < SGD_MAX_QUEUE; i++) {
			const struct sgd_req *q = &f->req[i];

			if (q->state != RQ_DONE || q->sg_io_owned)
				continue;
			n++;
			if (!oldest || q->seq < oldest->seq)
				oldest = q;
		}
		v = req == SG_GET_NUM_WAITING ? n : oldest ? oldest->hdr.pack_id : -1;
		pthread_mutex_unlock(&f->lock);
		return put_int(arg, v);
	}
	case SG_GET_SG_TABLESIZE:
		return put_int(arg, SGD_TABLESIZE);
	case SG_SET_RESERVED_SIZE:
		return set_reserved(f, arg);
	case SG_GET_RESERVED_SIZE:
		pthread_mutex_lock(&f->lock);
		v = f->reserve < max_sectors_bytes() ? f->reserve : max_sectors_bytes();
		pthread_mutex_unlock(&f->lock);
		return put_int(arg, v);
	case SG_SET_COMMAND_Q:
		if (get_int(arg, &v))
			return -1;
		pthread_mutex_lock(&f->lock);
		f->cmd_q = v != 0;
		pthread_mutex_unlock(&f->lock);
		return 0;
	case SG_GET_COMMAND_Q:
		pthread_mutex_lock(&f->lock);
		v = f->cmd_q;
		pthread_mutex_unlock(&f->lock);
		return put_int(arg, v);
	case SG_SET_KEEP_ORPHAN:
		if (get_int(arg, &v))
			return -1;
		pthread_mutex_lock(&f->lock);
		f->keep_orphan = v;
		pthread_mutex_unlock(&f->lock);
		return 0;
	case SG_GET_KEEP_ORPHAN:
		pthread_mutex_lock(&f->lock);
		v = f->keep_orphan;
		pthread_mutex_unlock(&f->lock);
		return put_int(arg, v);
	case SG_NEXT_CMD_LEN:
		if (get_int(arg, &v))
			return -1;
		if (v > SGD_MAX_CDB)
			return fail(ENOMEM);
		pthread_mutex_lock(&f->lock);
		f->next_cmd_len = v > 0 ? v : 0;	/* only the v2 interface reads it */
		pthread_mutex_unlock(&f->lock);
		return 0;
	case SG_GET_VERSION_NUM:
		return put_int(arg, SGD_VERSION_NUM);
	case SG_GET_ACCESS_COUNT:
		return put_int(arg, 1);
	case SG_GET_REQUEST_TABLE:
		return request_table(f, arg);
	case SG_EMULATED_HOST:
		return put_int(arg, 0);
	case SCSI_IOCTL_SEND_COMMAND:
		sgd_log("%s: SCSI_IOCTL_SEND_COMMAND not emulated", f->dev->path);
		return fail(EINVAL);
	case SG_SET_DEBUG:
		if (get_int(arg, &v))
			return -1;
		pthread_mutex_lock(&f->lock);
		f->debug = v;
		pthread_mutex_unlock(&f->lock);
		return 0;
	case BLKSECTGET:	/* sg answers in bytes, not sectors */
		return put_int(arg, max_sectors_bytes());
	case SCSI_IOCTL_GET_IDLUN:
	case SCSI_IOCTL_GET_BUS_NUMBER:
	case SCSI_IOCTL_PROBE_HOST:
	case SG_GET_TRANSFORM:
	case SG_SCSI_RESET:
		break;
	default:
		if (read_only)
			return fail(EPERM);	/* the driver's "safe approach" */
		break;
	}
	return scsi_ioctl(f, fd, req, arg);
}

/* raw_ioctl() handed every ioctl to the disk.  A regular file BLOCKDEV
 * answers none of the block ones, so the double answers those a program
 * sizes a disk with, as a disk the size of the file whose logical block
 * is the file's direct I/O alignment would. */
static int raw_ioctl(int fd, unsigned long req, void *arg)
{
	unsigned int lbs = 512, u;
	unsigned long ul;
	unsigned short us;
	struct stat st;
	uint64_t size;

	if (real_fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return real_ioctl(fd, req, arg);
#ifdef STATX_DIOALIGN
	{
		struct statx stx;

		if (real_statx && real_statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
		    (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align)
			lbs = stx.stx_dio_offset_align;
	}
#endif
	size = (uint64_t)st.st_size;
	switch (req) {
	case BLKSSZGET:
	case BLKBSZGET:		/* an int, whatever its _IOR says */
		return put_int(arg, lbs);
	case BLKPBSZGET:
	case BLKIOMIN:
	case BLKIOOPT:
		u = req == BLKIOOPT ? 0 : lbs;
		if (!arg)
			return fail(EFAULT);
		memcpy(arg, &u, sizeof(u));
		return 0;
	case BLKALIGNOFF:
	case BLKROGET:
		return put_int(arg, 0);
	case BLKGETSIZE64:
		if (!arg)
			return fail(EFAULT);
		memcpy(arg, &size, sizeof(size));
		return 0;
	case BLKGETSIZE:
		ul = size >> 9;
		if (!arg)
			return fail(EFAULT);
		memcpy(arg, &ul, sizeof(ul));
		return 0;
	case BLKSECTGET:	/* in sectors, as a block device answers it */
		us = SGD_MAX_SECTORS;
		if (!arg)
			return fail(EFAULT);
		memcpy(arg, &us, sizeof(us));
		return 0;
	default:
		return real_ioctl(fd, req, arg);
	}
}

int ioctl(int fd, unsigned long req, ...)
{
	struct sgd_file *f;
	va_list ap;
	void *arg;
	int r;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	f = get_file(fd);
	if (!f)
		return raw_of(fd) ? raw_ioctl(fd, req, arg) : real_ioctl(fd, req, arg);
	r = sg_ioctl(f, fd, req, arg);
	if (req != SG_IO)
		sgd_log("%s fd %d: ioctl 0x%lx -> %d%s%s", f->dev->path, fd, req, r,
			r < 0 ? " " : "", r < 0 ? strerror(errno) : "");
	put_file(f);
	return r;
}
