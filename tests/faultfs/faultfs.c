// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * faultfs: a FUSE file system of one file whose reads and writes fail
 * with EIO where the test says, for pdd's rescue tests.  Put a loop
 * device on it and the block device has real, exact bad sectors.
 *
 *   faultfs BACKING MOUNTPOINT [FAULT...] [FUSE-OPTION...]
 *
 * MOUNTPOINT/disk is the regular file BACKING (its bytes, its size; read
 * and written through with pread/pwrite, opened direct_io so that the
 * page cache hides nothing and every read and write reaches faultfs).
 * MOUNTPOINT/control shows the fault set and the counters when read:
 *
 *   read=A-B,... write=A-B,... fsync=0|1 delay_us=N [fallocate=1]
 *     [lose=A-B,...] [slow=A-B:US,...] [flaky=A-B:N,...] [bad_delay_us=N]
 *     [jitter_us=N] [rate=N] [write_rate=N] [slow_rate=A-B:N,...]
 *   reads=N writes=N failed_reads=N failed_writes=N fsyncs=N failed_fsyncs=N
 *     read_bytes=N written_bytes=N fallocates=N failed_fallocates=N
 *     fallocated_bytes=N late_turns=N late_us=N
 *
 * (two lines, each cut here; the keys in brackets only when set, so that
 * the first line reads as it did before there were such keys; written
 * back to control, the first line gives the same fault set)
 *
 * and replaces the whole fault set (flaky= counts too) when written a
 * line of FAULTs (an empty line clears it; "reset" in the line also
 * zeroes the counters):
 *
 *   read=A-B[,A-B...]   a read request that overlaps any byte of [A, B)
 *                       (decimal bytes) fails as a whole with EIO
 *   write=A-B[,A-B...]  the same for writes; nothing of the request is
 *                       written
 *   fsync=1             fsync and fdatasync fail with EIO, and so does
 *                       flush (every close(2) of disk)
 *   delay_us=N          every read and write of disk sleeps N us first
 *                       (and every fallocate)
 *   lose=A-B[,A-B...]   writes succeed but leave the bytes of [A, B) as
 *                       they were: a disk that loses writes silently
 *   slow=A-B:US[,...]   a read, write or fallocate that overlaps [A, B)
 *                       sleeps US more microseconds first, failing or
 *                       not (the largest US of the slow ranges it meets,
 *                       once)
 *   flaky=A-B:N[,...]   a read that overlaps [A, B) fails with EIO while
 *                       the range has failures left, N at first, and uses
 *                       one (one of each such range it meets); then the
 *                       range reads.  control shows the failures left.
 *   bad_delay_us=N      a read that fails (read= or flaky=) sleeps N us
 *                       more first: a disk that takes long on a bad sector
 *   jitter_us=N         every read and write sleeps a random 0..N us more
 *                       (uniform, from a fixed seed): a service time that
 *                       varies
 *   rate=N              a disk with no idle credit: one read or write of
 *                       disk is served at a time, and each takes at least
 *                       its size / N seconds (N bytes per second), its
 *                       delays and the real I/O included; requests in
 *                       flight wait their turn in the order they came
 *                       (a disk serves its queue in order), and one that waited
 *                       starts when the one before it ends (the disk's
 *                       time, not when the host woke the next thread)
 *   write_rate=N        the same for writes, where it differs from rate=
 *   slow_rate=A-B:N[,...]  a read or write that meets [A, B) is served at
 *                       N bytes per second where that is slower (one at
 *                       a time, as rate=, also without rate=): areas of a
 *                       disk that are slower than the rest
 *   fallocate=1         fallocate(2) of disk is done on BACKING (a range
 *                       that overlaps write= fails with EIO, as a write);
 *                       0, the default, refuses it with EOPNOTSUPP, as a
 *                       FUSE file system without fallocate does
 *
 * A turn at a rate lasts at most 60 s.  Delays are at most 60000000 us each and add up (delay_us=, then slow=,
 * then bad_delay_us=, then jitter_us=); without rate= a sleeping request
 * holds no lock: requests in flight sleep at once (unless faultfs runs
 * single-threaded, -s).  With rate= they sleep in turn.  N of
 * flaky= is at most 1000000000.
 *
 * FUSE-OPTIONs (-f, -d, -s, -o ...) go to libfuse; by default the program
 * returns once mounted and serves in the background, multithreaded, with
 * auto_unmount (a killed faultfs does not leave a dead mount behind).
 * "fusermount3 -u MOUNTPOINT" or "umount MOUNTPOINT" ends it, once no
 * loop device holds disk open.
 *
 * Under a loop device (losetup --direct-io=on, or off: both work on FUSE
 * here) with /sys/block/loopN/queue/nomerges set to 2, an O_DIRECT read
 * of the loop device fails with EIO exactly when it covers a bad byte,
 * whatever its size and the loop's sector size (tests/dev/faultfs.sh).
 * With nomerges 0 or 1 adjacent requests in flight are merged and fail
 * together; buffered reads fail whole pages.
 *
 * Status: what faultfs does NOT do
 *   - It knows no sectors: a FUSE request fails or succeeds whole.  The
 *     kernel may split one loop request into several FUSE requests (a
 *     1 MiB one came as 2 x 512 KiB, or 956 + 68 KiB): a read then fails
 *     whole, but a write may leave its first parts written.
 *   - Only EIO (and EOPNOTSUPP for fallocate with fallocate=0) and lost
 *     writes, and only on disk; no short reads or writes, no other silent
 *     corruption, no ENOSPC.  flaky= is for reads only and counts
 *     requests, not sectors or time: no write that fails N times, no
 *     fault that starts after N requests, no sector that goes bad while
 *     read or that fails again later.  Delays are fixed but for jitter_us=.
 *     Faults on other operations (open, getattr, truncate) do not exist.
 *   - read_bytes and written_bytes count the bytes of the reads and
 *     writes of disk that succeeded; fallocates counts every fallocate of
 *     disk (refused ones too, in failed_fallocates), fallocated_bytes the
 *     lengths of those that succeeded, whatever their mode (PUNCH_HOLE,
 *     ZERO_RANGE: a loop device's write-zeroes comes as ZERO_RANGE).
 *   - Flushes are not counted.  fsyncs counts fsync and fdatasync calls
 *     (losetup --direct-io=on makes one itself, and succeeds if it fails).
 *   - A write beyond the end grows BACKING; truncating disk truncates
 *     BACKING.  No other files, no directories, no links, no xattrs.
 *   - One line per write(2) of control: a line split across two writes
 *     is two fault sets.  A bad line is refused whole (EINVAL).
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faults.h"

static int backing = -1;
static atomic_uint_fast64_t n_reads, n_writes, n_bad_reads, n_bad_writes,
	n_fsyncs, n_bad_fsyncs, n_read_bytes, n_written_bytes, n_fallocs,
	n_bad_fallocs, n_falloc_bytes;

/* a control file open for reading holds the text it had at open */
struct snap { char *buf; size_t len; };

static int is(const char *path, const char *name)
{
	return path && !strcmp(path, name);
}

static void *ff_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->direct_io = 1;
	cfg->kernel_cache = 0;
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	return NULL;
}

static int ff_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct stat b;

	(void)fi;
	memset(st, 0, sizeof(*st));
	st->st_uid = getuid();
	st->st_gid = getgid();
	if (is(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (is(path, "/disk")) {
		if (fstat(backing, &b))
			return -errno;
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
		st->st_size = b.st_size;
		st->st_blocks = b.st_blocks;
		st->st_blksize = 4096;
		st->st_atim = b.st_atim;
		st->st_mtim = b.st_mtim;
		st->st_ctim = b.st_ctim;
	} else if (is(path, "/control")) {
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
	} else {
		return -ENOENT;
	}
	return 0;
}

static int ff_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off, (void)fi, (void)flags;
	if (!is(path, "/"))
		return -ENOTDIR;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, "disk", NULL, 0, 0);
	fill(buf, "control", NULL, 0, 0);
	return 0;
}

static int ff_open(const char *path, struct fuse_file_info *fi)
{
	struct snap *s;
	FILE *o;
	uint64_t late, late_us;

	fi->direct_io = 1;
	fi->fh = 0;
	if (is(path, "/disk"))
		return 0;
	if (!is(path, "/control"))
		return -ENOENT;
	s = calloc(1, sizeof(*s));
	if (!s || !(o = open_memstream(&s->buf, &s->len))) {
		free(s);
		return -ENOMEM;
	}
	faults_show(o);
	faults_late(&late, &late_us);
	fprintf(o, "reads=%" PRIuFAST64 " writes=%" PRIuFAST64 " failed_reads=%" PRIuFAST64
		" failed_writes=%" PRIuFAST64 " fsyncs=%" PRIuFAST64 " failed_fsyncs=%" PRIuFAST64,
		atomic_load(&n_reads), atomic_load(&n_writes), atomic_load(&n_bad_reads),
		atomic_load(&n_bad_writes), atomic_load(&n_fsyncs), atomic_load(&n_bad_fsyncs));
	fprintf(o, " read_bytes=%" PRIuFAST64 " written_bytes=%" PRIuFAST64 " fallocates=%" PRIuFAST64
		" failed_fallocates=%" PRIuFAST64 " fallocated_bytes=%" PRIuFAST64
		" late_turns=%" PRIu64 " late_us=%" PRIu64 "\n",
		atomic_load(&n_read_bytes), atomic_load(&n_written_bytes), atomic_load(&n_fallocs),
		atomic_load(&n_bad_fallocs), atomic_load(&n_falloc_bytes), late, late_us);
	if (fclose(o)) {
		free(s->buf);
		free(s);
		return -ENOMEM;
	}
	fi->fh = (uintptr_t)s;
	return 0;
}

static int ff_release(const char *path, struct fuse_file_info *fi)
{
	struct snap *s = (struct snap *)(uintptr_t)fi->fh;

	(void)path;
	if (s)
		free(s->buf);
	free(s);
	return 0;
}

static int ff_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	struct snap *s = (struct snap *)(uintptr_t)fi->fh;
	struct faults_turn turn;
	size_t done = 0;

	if (s) {
		if ((size_t)off >= s->len)
			return 0;
		if (size > s->len - (size_t)off)
			size = s->len - (size_t)off;
		memcpy(buf, s->buf + off, size);
		return (int)size;
	}
	if (!is(path, "/disk"))
		return -EBADF;
	atomic_fetch_add(&n_reads, 1);
	faults_turn_begin(&turn, 0, off, size);
	if (faults_request(0, off, size)) {
		atomic_fetch_add(&n_bad_reads, 1);
		faults_turn_end(&turn);
		return -EIO;
	}
	while (done < size) {
		ssize_t r = pread(backing, buf + done, size - done, off + (off_t)done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			r = -errno;
			faults_turn_end(&turn);
			return (int)r;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	faults_turn_end(&turn);
	atomic_fetch_add(&n_read_bytes, done);
	return (int)done;
}

/* A write of disk: -EIO when the fault set fails it (*failed then set),
 * else what pwrite gave: 0 with *done bytes written, or -errno when none
 * were. */
static int write_disk(const char *buf, size_t size, off_t off, size_t *done, int *failed)
{
	char *copy = NULL;

	*failed = faults_request(1, off, size);
	if (*failed)
		return -EIO;
	if (faults_lost(backing, &buf, &copy, off, size))
		return -ENOMEM;
	while (*done < size) {
		ssize_t r = pwrite(backing, buf + *done, size - *done, off + (off_t)*done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(copy);
			return *done ? 0 : -e;
		}
		*done += (size_t)r;
	}
	free(copy);
	return 0;
}

static int ff_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct faults_turn turn;
	size_t done = 0;
	int reset, r, failed;

	(void)fi;
	if (is(path, "/control")) {
		r = faults_set(buf, size, &reset);
		if (r)
			return r;
		if (reset) {
			atomic_store(&n_reads, 0);
			atomic_store(&n_writes, 0);
			atomic_store(&n_bad_reads, 0);
			atomic_store(&n_bad_writes, 0);
			atomic_store(&n_fsyncs, 0);
			atomic_store(&n_bad_fsyncs, 0);
			atomic_store(&n_read_bytes, 0);
			atomic_store(&n_written_bytes, 0);
			atomic_store(&n_fallocs, 0);
			atomic_store(&n_bad_fallocs, 0);
			atomic_store(&n_falloc_bytes, 0);
		}
		return (int)size;
	}
	if (!is(path, "/disk"))
		return -EBADF;
	atomic_fetch_add(&n_writes, 1);
	faults_turn_begin(&turn, 1, off, size);
	r = write_disk(buf, size, off, &done, &failed);
	faults_turn_end(&turn);
	if (failed)
		atomic_fetch_add(&n_bad_writes, 1);
	if (r < 0)
		return r;
	atomic_fetch_add(&n_written_bytes, done);
	return (int)done;
}

static int ff_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)fi;
	if (!is(path, "/disk"))
		return 0;
	atomic_fetch_add(&n_fsyncs, 1);
	if (faults_fsync()) {
		atomic_fetch_add(&n_bad_fsyncs, 1);
		return -EIO;
	}
	return (datasync ? fdatasync(backing) : fsync(backing)) ? -errno : 0;
}

static int ff_flush(const char *path, struct fuse_file_info *fi)
{
	(void)fi;
	return is(path, "/disk") && faults_fsync() ? -EIO : 0;
}

static int ff_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	(void)fi;
	if (!is(path, "/disk"))
		return -EOPNOTSUPP;
	atomic_fetch_add(&n_fallocs, 1);
	/* not -ENOSYS, which the kernel would remember for good */
	if (!faults_fallocate()) {
		atomic_fetch_add(&n_bad_fallocs, 1);
		return -EOPNOTSUPP;
	}
	if (faults_request(1, off, (size_t)len)) {
		atomic_fetch_add(&n_bad_fallocs, 1);
		return -EIO;
	}
	if (fallocate(backing, mode, off, len)) {
		atomic_fetch_add(&n_bad_fallocs, 1);
		return -errno;
	}
	atomic_fetch_add(&n_falloc_bytes, (uint64_t)len);
	return 0;
}

static int ff_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)fi;
	if (is(path, "/control"))
		return 0;
	if (!is(path, "/disk"))
		return -ENOENT;
	return ftruncate(backing, size) ? -errno : 0;
}

static const struct fuse_operations ops = {
	.init = ff_init,
	.getattr = ff_getattr,
	.readdir = ff_readdir,
	.open = ff_open,
	.release = ff_release,
	.read = ff_read,
	.write = ff_write,
	.fsync = ff_fsync,
	.flush = ff_flush,
	.truncate = ff_truncate,
	.fallocate = ff_fallocate,
};

static void usage(void)
{
	fprintf(stderr, "usage: faultfs BACKING MOUNTPOINT [read=A-B,...] [write=A-B,...]"
			" [fsync=0|1] [delay_us=N]\n"
			"               [fallocate=0|1] [lose=A-B,...] [slow=A-B:US,...] [flaky=A-B:N,...]\n"
			"               [bad_delay_us=N] [jitter_us=N] [rate=N] [write_rate=N]\n"
			"               [slow_rate=A-B:N,...]\n"
			"               [FUSE-OPTION...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	char **fargv = calloc((size_t)argc + 3, sizeof(char *));
	char *line = calloc(1, 1);
	int fargc = 0, reset;
	struct stat st;

	if (argc < 3 || !fargv || !line)
		usage();
	backing = open(argv[1], O_RDWR | O_CLOEXEC);
	if (backing < 0 || fstat(backing, &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "faultfs: %s: %s\n", argv[1],
			backing < 0 ? strerror(errno) : "not a regular file");
		return 2;
	}
	fargv[fargc++] = argv[0];
	fargv[fargc++] = argv[2];
	/* libfuse 3.14 calls its own default max_idle_threads invalid */
	fargv[fargc++] = "-oauto_unmount,fsname=faultfs,subtype=faultfs,max_idle_threads=10";
	for (int i = 3; i < argc; i++) {
		if (argv[i][0] == '-') {
			fargv[fargc++] = argv[i];
			if (!strcmp(argv[i], "-o") && i + 1 < argc)
				fargv[fargc++] = argv[++i];
			continue;
		}
		size_t n = strlen(line);

		line = realloc(line, n + strlen(argv[i]) + 2);
		if (!line)
			usage();
		sprintf(line + n, "%s ", argv[i]);
	}
	if (faults_set(line, strlen(line), &reset))
		usage();
	free(line);
	return fuse_main(fargc, fargv, &ops, NULL);
}
