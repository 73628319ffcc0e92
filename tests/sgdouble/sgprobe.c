// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sgprobe DEV BACKING LBS BADLBA [CHECK]
 *
 * Checks the parts of the sg v3 interface that sg3_utils' tools do not
 * reach, against libsgdouble.so (or a real sg node whose blocks BACKING
 * holds): the queue of 16 and EDOM, reading by pack_id, EAGAIN, blocking
 * reads woken by another thread, poll, the sense and status fields of a
 * failed command, iovecs, the mmapped reserved buffer, the ioctls'
 * answers, and what the node refuses.  DEV must have a medium fault on
 * BADLBA (and only there) and hold at least 64 blocks.  Prints one line
 * per check; exits 1 if any failed.
 *
 * With CHECK, only that one runs, against the double set up for it:
 *   recovered     DEV has a recovered fault on BADLBA, and no other
 *   timeout       DEV has timeout:2, and no other fault
 *   latency:US    SGDOUBLE_LATENCY_US=US, no fault
 *   raw:N         DEV is raw device N (SGDOUBLE_RAW), bound to the
 *                 regular file BACKING of at least 64 KiB; LBS is 512 and
 *                 BADLBA is not used
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <poll.h>
#include <pthread.h>
#include <scsi/sg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#ifndef SG_FLAG_MMAP_IO
#define SG_FLAG_MMAP_IO 4
#endif

static const char *dev;
static int lbs;
static int backing_fd;
static int failures;

#define CHECK(cond, ...)						\
	do {								\
		if (cond) {						\
			printf("ok: ");					\
		} else {						\
			printf("FAILED (line %d): ", __LINE__);		\
			failures++;					\
		}							\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	} while (0)

static void read10(uint8_t *cdb, uint32_t lba, uint16_t n)
{
	memset(cdb, 0, 10);
	cdb[0] = 0x28;
	cdb[2] = lba >> 24;
	cdb[3] = lba >> 16;
	cdb[4] = lba >> 8;
	cdb[5] = lba;
	cdb[7] = n >> 8;
	cdb[8] = n;
}

static void hdr_init(struct sg_io_hdr *h, uint8_t *cdb, int cdb_len, void *buf,
		     unsigned int len, uint8_t *sense, int pack_id)
{
	memset(h, 0, sizeof(*h));
	h->interface_id = 'S';
	h->dxfer_direction = len ? SG_DXFER_FROM_DEV : SG_DXFER_NONE;
	h->cmd_len = cdb_len;
	h->cmdp = cdb;
	h->dxfer_len = len;
	h->dxferp = buf;
	h->mx_sb_len = 32;
	h->sbp = sense;
	h->timeout = 20000;
	h->pack_id = pack_id;
	h->usr_ptr = (void *)(intptr_t)(pack_id * 1000);
}

/* the device's block lba is what the backing file holds there */
static int same_as_backing(const void *buf, uint32_t lba, unsigned int n)
{
	uint8_t *want = malloc((size_t)n * lbs);
	int same;

	if (pread(backing_fd, want, (size_t)n * lbs, (off_t)lba * lbs) != (ssize_t)n * lbs)
		return 0;
	same = !memcmp(want, buf, (size_t)n * lbs);
	free(want);
	return same;
}

static int open_dev(int flags)
{
	int fd = open(dev, flags);

	if (fd < 0) {
		printf("FAILED: open %s: %s\n", dev, strerror(errno));
		exit(1);
	}
	return fd;
}

static void check_node(void)
{
	struct stat st, fst;
	int fd = open_dev(O_RDWR), v = 0;

	CHECK(stat(dev, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 21 &&
	      st.st_size == 0, "stat: char device, major 21, size 0");
	CHECK(fstat(fd, &fst) == 0 && S_ISCHR(fst.st_mode) && fst.st_rdev == st.st_rdev,
	      "fstat: the same node");
	CHECK(ioctl(fd, SG_GET_VERSION_NUM, &v) == 0 && v == 30536,
	      "SG_GET_VERSION_NUM: %d", v);
	CHECK(ioctl(fd, SG_GET_RESERVED_SIZE, &v) == 0 && v == 32768,
	      "reserved size starts at 32768: %d", v);
	v = 100;
	ioctl(fd, SG_SET_RESERVED_SIZE, &v);
	CHECK(ioctl(fd, SG_GET_RESERVED_SIZE, &v) == 0 && v == 4096,
	      "reserved size is at least a page: %d", v);
	v = 64 << 20;
	ioctl(fd, SG_SET_RESERVED_SIZE, &v);
	CHECK(ioctl(fd, SG_GET_RESERVED_SIZE, &v) == 0 && v == 1310720,
	      "reserved size is clamped to max_sectors: %d", v);
	CHECK(ioctl(fd, BLKSECTGET, &v) == 0 && v == 1310720, "BLKSECTGET in bytes: %d", v);
	CHECK(ioctl(fd, SG_GET_TIMEOUT, 0) == 6000, "SG_GET_TIMEOUT returns 60 s in USER_HZ");
	CHECK(ioctl(fd, SG_GET_COMMAND_Q, &v) == 0 && v == 0, "command queuing starts off");
	CHECK(pread(fd, &v, 1, 0) < 0 && errno == ESPIPE, "pread: ESPIPE");
	CHECK(lseek(fd, 0, SEEK_SET) < 0 && errno == ESPIPE, "lseek: ESPIPE");
	CHECK(fsync(fd) < 0 && errno == EINVAL, "fsync: EINVAL");
	CHECK(open(dev, O_RDWR | O_EXCL | O_NONBLOCK) < 0 && errno == EBUSY,
	      "O_EXCL while open: EBUSY");
	close(fd);
	fd = open_dev(O_RDONLY);
	CHECK(write(fd, &st, sizeof(struct sg_io_hdr)) < 0 && errno == EBADF,
	      "write on an O_RDONLY fd: EBADF");
	CHECK(ioctl(fd, BLKSSZGET, &v) < 0 && errno == EPERM,
	      "unknown ioctl on a read-only fd: EPERM");
	close(fd);
}

struct slot {
	struct sg_io_hdr h;
	uint8_t cdb[10];
	uint8_t sense[32];
	uint8_t *buf;
};

static void check_queue(void)
{
	int fd = open_dev(O_RDWR), v = 0, ok = 1;
	struct slot s[17];
	struct sg_io_hdr out;
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };

	for (int i = 0; i < 17; i++) {
		s[i].buf = malloc(lbs);
		read10(s[i].cdb, i, 1);
		hdr_init(&s[i].h, s[i].cdb, 10, s[i].buf, lbs, s[i].sense, i + 1);
	}
	CHECK(poll(&p, 1, 0) == 1 && p.revents == POLLOUT,
	      "poll, nothing queued: POLLOUT (0x%x)", p.revents);
	for (int i = 0; i < 16; i++)
		ok &= write(fd, &s[i].h, sizeof(s[i].h)) == sizeof(s[i].h);
	CHECK(ok, "16 commands queued");
	CHECK(write(fd, &s[16].h, sizeof(s[16].h)) < 0 && errno == EDOM,
	      "the 17th: EDOM");
	CHECK(ioctl(fd, SG_GET_NUM_WAITING, &v) == 0 && v == 16, "SG_GET_NUM_WAITING: %d", v);
	CHECK(ioctl(fd, SG_GET_PACK_ID, &v) == 0 && v == 1, "SG_GET_PACK_ID: the oldest, %d", v);
	CHECK(poll(&p, 1, 0) == 1 && p.revents == POLLIN,
	      "poll, queue full: POLLIN only (0x%x)", p.revents);
	v = 1;
	ioctl(fd, SG_SET_FORCE_PACK_ID, &v);
	memset(&out, 0, sizeof(out));
	out.interface_id = 'S';
	out.dxfer_direction = SG_DXFER_FROM_DEV;
	out.pack_id = 9;
	CHECK(read(fd, &out, sizeof(out)) == sizeof(out) && out.pack_id == 9 &&
	      out.usr_ptr == (void *)9000 && out.status == 0 && out.info == 0 &&
	      out.resid == 0 && same_as_backing(s[8].buf, 8, 1),
	      "force_pack_id: read asks for 9, gets 9 with its data and usr_ptr");
	out.pack_id = -1;
	CHECK(read(fd, &out, sizeof(out)) == sizeof(out) && out.pack_id == 1,
	      "force_pack_id: -1 gets the oldest, 1 (got %d)", out.pack_id);
	CHECK(poll(&p, 1, 0) == 1 && p.revents == (POLLIN | POLLOUT),
	      "poll, room again: POLLIN|POLLOUT (0x%x)", p.revents);
	v = 0;
	ioctl(fd, SG_SET_FORCE_PACK_ID, &v);
	out.pack_id = 12;
	CHECK(read(fd, &out, sizeof(out)) == sizeof(out) && out.pack_id == 2,
	      "without force_pack_id the oldest comes back, 2 (got %d)", out.pack_id);
	CHECK(read(fd, &out, 20) < 0 && errno == EINVAL, "a short read: EINVAL");
	CHECK(ioctl(fd, SG_GET_NUM_WAITING, &v) == 0 && v == 12,
	      "... and that result is gone: %d waiting", v);
	CHECK(ioctl(fd, SG_GET_COMMAND_Q, &v) == 0 && v == 1, "a v3 write turned queuing on");
	for (int i = 0; i < 12; i++)
		ok &= read(fd, &out, sizeof(out)) == sizeof(out) &&
		      same_as_backing(s[out.pack_id - 1].buf, out.pack_id - 1, 1);
	CHECK(ok, "the other 12 come back in order, data right");
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	CHECK(read(fd, &out, sizeof(out)) < 0 && errno == EAGAIN, "O_NONBLOCK, nothing done: EAGAIN");
	CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR, "F_GETFL: O_RDWR");
	for (int i = 0; i < 17; i++)
		free(s[i].buf);
	close(fd);
}

struct waiter {
	int fd;
	int got;
	uint8_t buf[65536];
};

static void *wait_for_42(void *arg)
{
	struct waiter *w = arg;
	struct sg_io_hdr out;

	memset(&out, 0, sizeof(out));
	out.interface_id = 'S';
	out.dxfer_direction = SG_DXFER_FROM_DEV;
	out.pack_id = 42;
	w->got = read(w->fd, &out, sizeof(out)) == sizeof(out) ? out.pack_id : -2;
	return NULL;
}

static void check_blocking(void)
{
	struct waiter *w = calloc(1, sizeof(*w));
	struct slot a, b;
	struct sg_io_hdr out;
	struct pollfd p;
	pthread_t t;
	int v = 1, dupfd;

	w->fd = open_dev(O_RDWR);
	ioctl(w->fd, SG_SET_FORCE_PACK_ID, &v);
	pthread_create(&t, NULL, wait_for_42, w);
	usleep(100000);
	CHECK(w->got == 0, "a read for pack_id 42 blocks while nothing is queued");
	a.buf = malloc(lbs);
	b.buf = malloc(lbs);
	read10(a.cdb, 3, 1);
	hdr_init(&a.h, a.cdb, 10, a.buf, lbs, a.sense, 41);
	read10(b.cdb, 4, 1);
	hdr_init(&b.h, b.cdb, 10, b.buf, lbs, b.sense, 42);
	write(w->fd, &a.h, sizeof(a.h));
	usleep(100000);
	CHECK(w->got == 0, "... and while only pack_id 41 is done");
	write(w->fd, &b.h, sizeof(b.h));
	pthread_join(t, NULL);
	CHECK(w->got == 42, "pack_id 42 done: the blocked read returns it (%d)", w->got);
	p.fd = w->fd;
	p.events = POLLIN;
	CHECK(poll(&p, 1, 1000) == 1 && p.revents == POLLIN, "poll: 41 still waits");
	dupfd = dup(w->fd);
	memset(&out, 0, sizeof(out));
	out.interface_id = 'S';
	out.dxfer_direction = SG_DXFER_FROM_DEV;	/* < 0: a v3 header */
	out.pack_id = -1;
	CHECK(read(dupfd, &out, sizeof(out)) == sizeof(out) && out.pack_id == 41 &&
	      same_as_backing(a.buf, 3, 1), "a dup()ed fd shares the queue: 41 read there");
	p.revents = 0;
	CHECK(poll(&p, 1, 50) == 0, "poll: nothing left, times out");
	close(dupfd);
	close(w->fd);
	free(a.buf);
	free(b.buf);
	free(w);
}

static void check_errors(uint32_t bad)
{
	int fd = open_dev(O_RDWR);
	uint8_t cdb[16], sense[32], *buf = malloc(8 * lbs);
	struct sg_io_hdr h;
	uint32_t info;

	read10(cdb, bad - 2, 4);
	hdr_init(&h, cdb, 10, buf, 4 * lbs, sense, 1);
	CHECK(ioctl(fd, SG_IO, &h) == 0, "SG_IO READ over the bad block");
	info = (uint32_t)sense[3] << 24 | sense[4] << 16 | sense[5] << 8 | sense[6];
	CHECK(h.status == 0x02 && h.masked_status == 0x01 && h.host_status == 0 &&
	      h.driver_status == 0x08 && (h.info & SG_INFO_CHECK),
	      "CHECK CONDITION: status 0x%x masked 0x%x host 0x%x driver 0x%x info 0x%x",
	      h.status, h.masked_status, h.host_status, h.driver_status, h.info);
	CHECK(h.sb_len_wr == 18 && sense[0] == 0xf0 && (sense[2] & 0xf) == 3 &&
	      sense[12] == 0x11 && sense[13] == 0 && info == bad,
	      "sense: fixed, VALID, MEDIUM ERROR 11/00, INFO %u", info);
	CHECK(h.resid == (int)(4 * lbs), "resid: all of it (%d)", h.resid);
	h.mx_sb_len = 0;
	CHECK(ioctl(fd, SG_IO, &h) == 0 && h.sb_len_wr == 0 && h.driver_status == 0 &&
	      h.masked_status == 0x01, "no sense buffer: no DRIVER_SENSE, still CHECK CONDITION");
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x88;			/* READ(16) far past the end */
	cdb[2] = 0x01;
	cdb[13] = 1;
	hdr_init(&h, cdb, 16, buf, lbs, sense, 2);
	CHECK(ioctl(fd, SG_IO, &h) == 0 && (sense[2] & 0xf) == 5 && sense[12] == 0x21,
	      "LBA out of range: ILLEGAL REQUEST 21/00");
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0xc5;
	hdr_init(&h, cdb, 10, NULL, 0, sense, 3);
	CHECK(ioctl(fd, SG_IO, &h) == 0 && (sense[2] & 0xf) == 5 && sense[12] == 0x20,
	      "unknown opcode: ILLEGAL REQUEST 20/00");
	read10(cdb, 0, 2);
	hdr_init(&h, cdb, 10, buf, lbs, sense, 4);
	CHECK(ioctl(fd, SG_IO, &h) == 0 && h.host_status == 0x07 && (h.info & SG_INFO_CHECK),
	      "two blocks into a one-block buffer: DID_ERROR");
	hdr_init(&h, cdb, 10, buf, 4 * lbs, sense, 5);
	CHECK(ioctl(fd, SG_IO, &h) == 0 && h.status == 0 && h.resid == 2 * lbs &&
	      same_as_backing(buf, 0, 2), "two blocks into a four-block buffer: resid %d", h.resid);
	h.interface_id = 'Q';
	CHECK(ioctl(fd, SG_IO, &h) < 0 && errno == ENOSYS, "interface_id 'Q': ENOSYS");
	hdr_init(&h, cdb, 5, buf, lbs, sense, 6);
	CHECK(ioctl(fd, SG_IO, &h) < 0 && errno == EMSGSIZE, "a 5-byte CDB: EMSGSIZE");
	free(buf);
	close(fd);
}

static void check_iovec_mmap(void)
{
	int fd = open_dev(O_RDWR), v = 16 * lbs;
	uint8_t cdb[10], sense[32], *buf = malloc(4 * lbs), *map;
	sg_iovec_t iov[3] = {
		{ buf, 100 }, { buf + 100, lbs }, { buf + 100 + lbs, 3 * lbs - 100 },
	};
	struct sg_io_hdr h;

	read10(cdb, 7, 4);
	hdr_init(&h, cdb, 10, iov, 4 * lbs, sense, 1);
	h.iovec_count = 3;
	CHECK(ioctl(fd, SG_IO, &h) == 0 && h.status == 0 && same_as_backing(buf, 7, 4),
	      "iovec_count 3: the data lands in the pieces");
	ioctl(fd, SG_SET_RESERVED_SIZE, &v);
	map = mmap(NULL, 16 * lbs, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(map != MAP_FAILED, "mmap of the reserved buffer");
	if (map != MAP_FAILED) {
		read10(cdb, 20, 16);
		hdr_init(&h, cdb, 10, NULL, 16 * lbs, sense, 2);
		h.flags = SG_FLAG_MMAP_IO;
		CHECK(ioctl(fd, SG_IO, &h) == 0 && h.status == 0 && same_as_backing(map, 20, 16),
		      "SG_FLAG_MMAP_IO: the data lands in the mapping");
		v = 32 * lbs;
		CHECK(ioctl(fd, SG_SET_RESERVED_SIZE, &v) < 0 && errno == EBUSY,
		      "resizing a mapped reserved buffer: EBUSY");
		munmap(map, 16 * lbs);
	}
	free(buf);
	close(fd);
}

struct worker {
	int fd;
	int id;
	int ok;
};

/* sgp_dd's pattern: every thread writes, then reads back its own pack_id */
static void *hammer(void *arg)
{
	struct worker *w = arg;
	uint8_t *buf = malloc(4 * lbs);

	w->ok = 1;
	for (int i = 0; i < 200; i++) {
		struct sg_io_hdr h, out;
		uint8_t cdb[10], sense[32];
		uint32_t lba = (w->id * 7 + i * 3) % 60;
		int pack_id = w->id * 1000 + i;

		read10(cdb, lba, 4);
		hdr_init(&h, cdb, 10, buf, 4 * lbs, sense, pack_id);
		if (write(w->fd, &h, sizeof(h)) != sizeof(h)) {
			w->ok = 0;
			break;
		}
		memset(&out, 0, sizeof(out));
		out.interface_id = 'S';
		out.dxfer_direction = SG_DXFER_FROM_DEV;
		out.pack_id = pack_id;
		if (read(w->fd, &out, sizeof(out)) != sizeof(out) || out.pack_id != pack_id ||
		    out.status || !same_as_backing(buf, lba, 4)) {
			w->ok = 0;
			break;
		}
	}
	free(buf);
	return NULL;
}

static void check_threads(void)
{
	struct worker w[8];
	pthread_t t[8];
	int fd = open_dev(O_RDWR), v = 1, ok = 1;

	ioctl(fd, SG_SET_FORCE_PACK_ID, &v);
	for (int i = 0; i < 8; i++) {
		w[i].fd = fd;
		w[i].id = i + 1;
		pthread_create(&t[i], NULL, hammer, &w[i]);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		ok &= w[i].ok;
	}
	CHECK(ok, "8 threads on one fd, 1600 commands, each read back by pack_id");
	close(fd);
}

/* --- the checks for one CHECK argument ----------------------------------- */

static long long mono_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

static void write10(uint8_t *cdb, uint32_t lba, uint16_t n)
{
	read10(cdb, lba, n);
	cdb[0] = 0x2a;
}

static uint32_t sense_info(const uint8_t *sense)
{
	return (uint32_t)sense[3] << 24 | sense[4] << 16 | sense[5] << 8 | sense[6];
}

/* a READ or WRITE over BADLBA: done in full, and yet CHECK CONDITION */
static void check_recovered(uint32_t bad)
{
	int fd = open_dev(O_RDWR);
	uint8_t cdb[10], sense[32], *buf = malloc(4 * lbs), *back = malloc(2 * lbs);
	struct sg_io_hdr h, out;

	read10(cdb, bad - 1, 4);
	hdr_init(&h, cdb, 10, buf, 4 * lbs, sense, 1);
	CHECK(ioctl(fd, SG_IO, &h) == 0, "SG_IO READ over the block that needs retries");
	CHECK(h.status == 0x02 && h.masked_status == 0x01 && h.host_status == 0 &&
	      h.driver_status == 0x08 && (h.info & SG_INFO_CHECK),
	      "CHECK CONDITION: status 0x%x masked 0x%x host 0x%x driver 0x%x info 0x%x",
	      h.status, h.masked_status, h.host_status, h.driver_status, h.info);
	CHECK(h.sb_len_wr == 18 && sense[0] == 0xf0 && (sense[2] & 0xf) == 1 &&
	      sense[12] == 0x17 && sense[13] == 0x01 && sense_info(sense) == bad,
	      "sense: fixed, VALID, RECOVERED ERROR 17/01, INFO %u", sense_info(sense));
	CHECK(h.resid == 0 && same_as_backing(buf, bad - 1, 4),
	      "... and all the data came: resid %d, the blocks right", h.resid);
	read10(cdb, 0, 2);
	hdr_init(&h, cdb, 10, buf, 2 * lbs, sense, 2);
	CHECK(ioctl(fd, SG_IO, &h) == 0 && h.status == 0 && h.info == 0,
	      "a READ elsewhere: GOOD");

	for (int i = 0; i < 2 * lbs; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	write10(cdb, bad, 2);
	hdr_init(&h, cdb, 10, buf, 2 * lbs, sense, 3);
	h.dxfer_direction = SG_DXFER_TO_DEV;
	CHECK(write(fd, &h, sizeof(h)) == sizeof(h), "WRITE over it, through write()");
	memset(&out, 0, sizeof(out));
	out.interface_id = 'S';
	out.dxfer_direction = SG_DXFER_TO_DEV;
	CHECK(read(fd, &out, sizeof(out)) == sizeof(out) && out.pack_id == 3 &&
	      out.status == 0x02 && out.resid == 0 && (sense[2] & 0xf) == 1 &&
	      sense[12] == 0x17 && sense_info(sense) == bad,
	      "read() back: RECOVERED ERROR at %u, resid %d", sense_info(sense), out.resid);
	CHECK(pread(backing_fd, back, 2 * lbs, (off_t)bad * lbs) == 2 * lbs &&
	      !memcmp(back, buf, 2 * lbs), "... and the blocks were written");
	free(buf);
	free(back);
	close(fd);
}

/* timeout:2 - two commands time out, at once, then all is well */
static void check_timeout(void)
{
	int fd = open_dev(O_RDWR);
	uint8_t cdb[10], sense[32], *buf = malloc(4 * lbs);
	struct sg_io_hdr h, out;
	long long t0 = mono_us(), dt;
	int untouched = 1;

	memset(buf, 0xa5, 4 * lbs);
	memset(sense, 0, sizeof(sense));
	read10(cdb, 8, 4);
	hdr_init(&h, cdb, 10, buf, 4 * lbs, sense, 1);
	h.timeout = 12345;
	CHECK(ioctl(fd, SG_IO, &h) == 0, "SG_IO READ that times out");
	dt = mono_us() - t0;
	CHECK(h.status == 0 && h.masked_status == 0 && h.host_status == 0x03 &&
	      h.driver_status == 0 && h.sb_len_wr == 0 && (h.info & SG_INFO_CHECK),
	      "DID_TIME_OUT: status 0x%x host 0x%x driver 0x%x sb_len_wr %d info 0x%x",
	      h.status, h.host_status, h.driver_status, h.sb_len_wr, h.info);
	for (int i = 0; i < 4 * lbs; i++)
		untouched &= buf[i] == 0xa5;
	CHECK(h.resid == 4 * lbs && untouched && sense[0] == 0,
	      "nothing transferred (resid %d), no sense", h.resid);
	CHECK(h.duration == 12345 && dt < 5000000,
	      "duration is the timeout, %u ms, yet it came back in %lld ms", h.duration,
	      dt / 1000);
	hdr_init(&h, cdb, 10, buf, 4 * lbs, sense, 2);
	h.timeout = 0;
	CHECK(write(fd, &h, sizeof(h)) == sizeof(h), "a second one, through write()");
	memset(&out, 0, sizeof(out));
	out.interface_id = 'S';
	out.dxfer_direction = SG_DXFER_FROM_DEV;
	CHECK(read(fd, &out, sizeof(out)) == sizeof(out) && out.pack_id == 2 &&
	      out.host_status == 0x03 && out.duration == 30000 && (out.info & SG_INFO_CHECK),
	      "read() back: DID_TIME_OUT, timeout 0 counts as 30000 ms (%u)", out.duration);
	hdr_init(&h, cdb, 10, buf, 4 * lbs, sense, 3);
	CHECK(ioctl(fd, SG_IO, &h) == 0 && h.status == 0 && h.host_status == 0 &&
	      h.info == 0 && same_as_backing(buf, 8, 4), "the third: GOOD, with its data");
	free(buf);
	close(fd);
}

struct late_writer {
	int fd;
	struct slot *s;
	long long before;	/* when it called write(), 0 if that failed */
};

static void *write_later(void *arg)
{
	struct late_writer *w = arg;

	long long t;

	usleep(20000);
	t = mono_us();
	if (write(w->fd, &w->s->h, sizeof(w->s->h)) == sizeof(w->s->h))
		w->before = t;
	return NULL;
}

static int read_any(int fd, struct sg_io_hdr *out)
{
	memset(out, 0, sizeof(*out));
	out->interface_id = 'S';
	out->dxfer_direction = SG_DXFER_FROM_DEV;
	out->pack_id = -1;
	return read(fd, out, sizeof(*out)) == sizeof(*out);
}

/* SGDOUBLE_LATENCY_US=lat: each READ takes lat, however many are in
 * flight, and poll() and read() wait for it */
static void check_latency(long long lat)
{
	int fd = open_dev(O_RDWR), fd2 = open_dev(O_RDWR), v = -1, ok = 1, pipefd[2];
	struct slot s[16];
	struct sg_io_hdr h, out;
	struct pollfd pf[2];
	struct late_writer lw;
	long long t0, dt, settled;
	uint8_t cdb[10], sense[32];
	pthread_t t;

	for (int i = 0; i < 16; i++) {
		s[i].buf = malloc(lbs);
		read10(s[i].cdb, i, 1);
		hdr_init(&s[i].h, s[i].cdb, 10, s[i].buf, lbs, s[i].sense, i + 1);
	}
	if (pipe(pipefd) < 0)
		exit(2);

	t0 = mono_us();
	CHECK(ioctl(fd, SG_IO, &s[0].h) == 0 && s[0].h.status == 0 &&
	      same_as_backing(s[0].buf, 0, 1), "SG_IO READ");
	dt = mono_us() - t0;
	CHECK(dt >= lat && s[0].h.duration >= lat / 1000,
	      "... took the latency: %lld us, duration %u ms", dt, s[0].h.duration);
	memset(cdb, 0, sizeof(cdb));
	hdr_init(&h, cdb, 6, NULL, 0, sense, 99);
	t0 = mono_us();
	CHECK(ioctl(fd, SG_IO, &h) == 0 && h.status == 0 && mono_us() - t0 < lat,
	      "TEST UNIT READY has none");

	t0 = mono_us();
	write(fd, &s[1].h, sizeof(s[1].h));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	pf[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
	ok = read_any(fd, &out) == 0 && errno == EAGAIN;
	ok &= ioctl(fd, SG_GET_NUM_WAITING, &v) == 0 && v == 0;
	ok &= poll(pf, 1, 0) == 0;
	settled = mono_us() - t0;
	if (settled < lat)
		CHECK(ok, "written, not yet done: EAGAIN, none waiting, no POLLIN");
	else
		printf("skipped: the machine took %lld us to look, more than the latency\n",
		       settled);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	pf[0] = (struct pollfd){ .fd = pipefd[0], .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = fd, .events = POLLIN };
	CHECK(poll(pf, 2, -1) == 1 && pf[0].revents == 0 && pf[1].revents == POLLIN,
	      "poll on a pipe and the sg fd wakes for the sg fd");
	dt = mono_us() - t0;
	CHECK(dt >= lat && read_any(fd, &out) && out.pack_id == 2 &&
	      same_as_backing(s[1].buf, 1, 1) && out.duration >= lat / 1000,
	      "... after the latency, %lld us; duration %u ms", dt, out.duration);

	t0 = mono_us();
	write(fd, &s[2].h, sizeof(s[2].h));
	CHECK(read_any(fd, &out) && out.pack_id == 3 && mono_us() - t0 >= lat,
	      "a blocking read() waits out the latency: %lld us", mono_us() - t0);

	/* a poll() begun before the command is written must still wake */
	lw = (struct late_writer){ .fd = fd, .s = &s[3] };
	pthread_create(&t, NULL, write_later, &lw);
	pf[1].revents = 0;
	v = poll(pf, 2, (int)(20 * lat / 1000 + 2000));
	dt = mono_us();
	pthread_join(t, NULL);
	CHECK(v == 1 && pf[1].revents == POLLIN && lw.before && dt - lw.before >= lat,
	      "a poll() under way wakes for a command another thread writes, %lld us after",
	      lw.before ? dt - lw.before : -1);
	CHECK(read_any(fd, &out) && out.pack_id == 4, "... whose result is there");

	t0 = mono_us();
	for (int i = 0; i < 16; i++)
		ok &= write(fd, &s[i].h, sizeof(s[i].h)) == sizeof(s[i].h);
	for (int i = 0; i < 16; i++)
		ok &= read_any(fd, &out) && out.pack_id == i + 1 &&
		      same_as_backing(s[i].buf, i, 1);
	dt = mono_us() - t0;
	CHECK(ok && dt >= lat && dt < 4 * lat,
	      "16 written at once on one fd, all back in %lld us: overlapped, not %lld",
	      dt, 16 * lat);

	t0 = mono_us();
	for (int i = 0; i < 16; i++)
		ok &= write(i % 2 ? fd2 : fd, &s[i].h, sizeof(s[i].h)) == sizeof(s[i].h);
	for (int i = 0; i < 16; i++)
		ok &= read_any(i % 2 ? fd2 : fd, &out) && out.pack_id == i + 1;
	dt = mono_us() - t0;
	CHECK(ok && dt >= lat && dt < 4 * lat, "8 on each of two fds, all back in %lld us",
	      dt);
	for (int i = 0; i < 16; i++)
		free(s[i].buf);
	close(pipefd[0]);
	close(pipefd[1]);
	close(fd2);
	close(fd);
}

/* a raw device bound to BACKING, a regular file: the fd is the file's,
 * opened O_DIRECT, but it looks like char 162:N */
static void check_raw(unsigned int minor)
{
	struct stat st, bst;
	struct statx stx;
	uint8_t *buf, *back = malloc(4096);
	off_t size;
	int fd, fd2, v = 0, fl;
	unsigned int u = 0;
	uint64_t bytes = 0;
	unsigned long sectors = 0;

#define IS_RAW(s) (S_ISCHR((s).st_mode) && major((s).st_rdev) == 162 &&	\
		   minor((s).st_rdev) == minor && (s).st_size == 0 &&		\
		   ((s).st_mode & 0777) == 0660)
	if (posix_memalign((void **)&buf, 4096, 8192))
		exit(2);
	fstat(backing_fd, &bst);
	size = bst.st_size;
	CHECK(stat(dev, &st) == 0 && IS_RAW(st), "stat: char 162:%u, 0660, size 0", minor);
	CHECK(lstat(dev, &st) == 0 && IS_RAW(st), "lstat: the same");
	CHECK(statx(AT_FDCWD, dev, 0, STATX_BASIC_STATS, &stx) == 0 &&
	      S_ISCHR(stx.stx_mode) && stx.stx_rdev_major == 162 && stx.stx_rdev_minor == minor,
	      "statx: the same");
	CHECK(open(dev, O_RDWR | O_CREAT | O_EXCL, 0644) < 0 && errno == EEXIST,
	      "O_CREAT|O_EXCL: EEXIST");
	CHECK(open(dev, O_RDONLY | O_DIRECTORY) < 0 && errno == ENOTDIR, "O_DIRECTORY: ENOTDIR");
	fd = open(dev, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && fstat(backing_fd, &bst) == 0 && bst.st_size == size,
	      "open O_CREAT|O_TRUNC: the disk is not cut");
	if (fd < 0)
		return;
	CHECK(fstat(fd, &st) == 0 && IS_RAW(st), "fstat of the fd: char 162:%u", minor);
	CHECK(fstatat(fd, "", &st, AT_EMPTY_PATH) == 0 && IS_RAW(st),
	      "fstatat(AT_EMPTY_PATH): the same");
	CHECK(statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) == 0 &&
	      stx.stx_rdev_major == 162 && stx.stx_rdev_minor == minor,
	      "statx(AT_EMPTY_PATH): the same");
	fl = fcntl(fd, F_GETFL);
	CHECK(fl >= 0 && (fl & O_DIRECT) && (fl & O_ACCMODE) == O_RDWR, "F_GETFL: O_DIRECT");
	fcntl(fd, F_SETFL, fl & ~O_DIRECT);
	CHECK(fcntl(fd, F_GETFL) & O_DIRECT, "F_SETFL without O_DIRECT: still direct");
	CHECK(pread(fd, buf, 4096, 4096) == 4096 && pread(backing_fd, back, 4096, 4096) == 4096 &&
	      !memcmp(buf, back, 4096), "an aligned pread: the file's bytes");
	CHECK(pread(fd, buf, 512, 100) < 0 && errno == EINVAL, "a misaligned offset: EINVAL");
	CHECK(pread(fd, buf, 100, 0) < 0 && errno == EINVAL, "a misaligned length: EINVAL");
	for (int i = 0; i < 1024; i++)
		buf[i] = (uint8_t)(i * 13 + minor);
	CHECK(pwrite(fd, buf, 1024, 3 * 512) == 1024 &&
	      pread(backing_fd, back, 1024, 3 * 512) == 1024 && !memcmp(buf, back, 1024),
	      "an aligned pwrite lands in the file");
	CHECK(fsync(fd) == 0, "fsync works");
	CHECK(ioctl(fd, BLKSSZGET, &v) == 0 && v >= 512 && !(v & (v - 1)),
	      "BLKSSZGET: %d", v);
	CHECK(ioctl(fd, BLKPBSZGET, &u) == 0 && u == (unsigned int)v, "BLKPBSZGET: %u", u);
	CHECK(ioctl(fd, BLKGETSIZE64, &bytes) == 0 && bytes == (uint64_t)size,
	      "BLKGETSIZE64: %llu", (unsigned long long)bytes);
	CHECK(ioctl(fd, BLKGETSIZE, &sectors) == 0 && sectors == (unsigned long)size / 512,
	      "BLKGETSIZE: %lu sectors", sectors);
	CHECK(lseek(fd, 0, SEEK_END) == 0 && lseek(fd, 4096, SEEK_END) == 4096,
	      "lseek SEEK_END: from the node's size, 0");
	CHECK(lseek(fd, 0, SEEK_DATA) < 0 && errno == ENXIO, "SEEK_DATA: ENXIO");
	CHECK(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED && errno == ENODEV,
	      "mmap: ENODEV");
	CHECK(ftruncate(fd, 0) < 0 && errno == EINVAL && fstat(backing_fd, &bst) == 0 &&
	      bst.st_size == size, "ftruncate: EINVAL, the file whole");
	CHECK(fallocate(fd, 0, 0, 4096) < 0 && errno == ENODEV, "fallocate: ENODEV");
	fd2 = dup(fd);
	CHECK(fstat(fd2, &st) == 0 && IS_RAW(st), "a dup()ed fd is the raw node too");
	CHECK(dup2(fd, 100) == 100 && fstat(100, &st) == 0 && IS_RAW(st), "dup2: too");
	close(fd2);
	CHECK(fcntl(fd, F_DUPFD_CLOEXEC, 50) >= 50 && fstat(50, &st) == 0 && IS_RAW(st),
	      "F_DUPFD_CLOEXEC: too");
	close(50);
	close(100);
	close(fd);
	fd2 = open("/dev/null", O_RDONLY);
	CHECK(fd2 == fd && fstat(fd2, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1,
	      "closed: its number is someone else's");
	close(fd2);
	fd = open(dev, O_RDONLY);
	CHECK(fd >= 0 && read(fd, buf, 4096) == 4096 && pread(backing_fd, back, 4096, 0) == 4096 &&
	      !memcmp(buf, back, 4096), "read() from the start, O_RDONLY");
	close(fd);
	free(buf);
	free(back);
#undef IS_RAW
}

int main(int argc, char **argv)
{
	const char *check = argc == 6 ? argv[5] : NULL;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: sgprobe DEV BACKING LBS BADLBA [CHECK]\n");
		return 2;
	}
	dev = argv[1];
	lbs = atoi(argv[3]);
	backing_fd = open(argv[2], O_RDONLY);
	if (backing_fd < 0) {
		perror(argv[2]);
		return 2;
	}
	if (!check) {
		check_node();
		check_queue();
		check_blocking();
		check_errors(strtoul(argv[4], NULL, 0));
		check_iovec_mmap();
		check_threads();
	} else if (!strcmp(check, "recovered")) {
		check_recovered(strtoul(argv[4], NULL, 0));
	} else if (!strcmp(check, "timeout")) {
		check_timeout();
	} else if (!strncmp(check, "latency:", 8)) {
		check_latency(strtoll(check + 8, NULL, 0));
	} else if (!strncmp(check, "raw:", 4)) {
		check_raw(strtoul(check + 4, NULL, 0));
	} else {
		fprintf(stderr, "sgprobe: unknown check '%s'\n", check);
		return 2;
	}
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
