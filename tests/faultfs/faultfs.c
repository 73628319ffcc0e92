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
 *   reads=N writes=N failed_reads=N failed_writes=N fsyncs=N failed_fsyncs=N
 *     read_bytes=N written_bytes=N fallocates=N failed_fallocates=N
 *     fallocated_bytes=N
 *
 * (two lines; the second is one line here cut in three; fallocate=1 only
 * when it is set, so that the first line reads as it did before there was
 * fallocate=)
 *
 * and replaces the whole fault set when written a line of FAULTs (an
 * empty line clears it; "reset" in the line also zeroes the counters):
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
 *                       (shown in control only when set)
 *   fallocate=1         fallocate(2) of disk is done on BACKING (a range
 *                       that overlaps write= fails with EIO, as a write);
 *                       0, the default, refuses it with EOPNOTSUPP, as a
 *                       FUSE file system without fallocate does
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
 *     corruption, no faults that fire N times or after N requests, no
 *     latency per range, no ENOSPC.  Faults on other operations
 *     (open, getattr, truncate) do not exist.
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
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAXR 256

struct range { uint64_t lo, hi; };

struct faults {
	struct range rd[MAXR], wr[MAXR], lose[MAXR];
	int nrd, nwr, nlose, fsync, fallocate;
	unsigned long delay_us;
};

static int backing = -1;
static struct faults cur;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t n_reads, n_writes, n_bad_reads, n_bad_writes,
	n_fsyncs, n_bad_fsyncs, n_read_bytes, n_written_bytes, n_fallocs,
	n_bad_fallocs, n_falloc_bytes;

/* a control file open for reading holds the text it had at open */
struct snap { char *buf; size_t len; };

static int number(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

/* "A-B,C-D" (or "") into r; -1 when malformed */
static int ranges(char *s, struct range *r, int *n)
{
	char *save = NULL, *tok, *dash;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		dash = strchr(tok, '-');
		if (!dash || *n >= MAXR)
			return -1;
		*dash = 0;
		if (number(tok, &r[*n].lo) || number(dash + 1, &r[*n].hi) ||
		    r[*n].lo >= r[*n].hi)
			return -1;
		(*n)++;
	}
	return 0;
}

/* a line of FAULTs into f; *reset set when it says "reset" */
static int parse(char *line, struct faults *f, int *reset)
{
	char *save = NULL, *tok;
	uint64_t v;

	memset(f, 0, sizeof(*f));
	*reset = 0;
	for (tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		if (!strncmp(tok, "read=", 5)) {
			if (ranges(tok + 5, f->rd, &f->nrd))
				return -1;
		} else if (!strncmp(tok, "write=", 6)) {
			if (ranges(tok + 6, f->wr, &f->nwr))
				return -1;
		} else if (!strncmp(tok, "lose=", 5)) {
			if (ranges(tok + 5, f->lose, &f->nlose))
				return -1;
		} else if (!strncmp(tok, "fsync=", 6)) {
			if (number(tok + 6, &v) || v > 1)
				return -1;
			f->fsync = (int)v;
		} else if (!strncmp(tok, "fallocate=", 10)) {
			if (number(tok + 10, &v) || v > 1)
				return -1;
			f->fallocate = (int)v;
		} else if (!strncmp(tok, "delay_us=", 9)) {
			if (number(tok + 9, &v) || v > 60000000)
				return -1;
			f->delay_us = (unsigned long)v;
		} else if (!strcmp(tok, "reset")) {
			*reset = 1;
		} else {
			return -1;
		}
	}
	return 0;
}

static void put_ranges(FILE *o, const char *name, const struct range *r, int n)
{
	fprintf(o, "%s=", name);
	for (int i = 0; i < n; i++)
		fprintf(o, "%s%" PRIu64 "-%" PRIu64, i ? "," : "", r[i].lo, r[i].hi);
}

static int overlaps(const struct range *r, int n, off_t off, size_t size)
{
	uint64_t lo = (uint64_t)off, hi = lo + size;

	for (int i = 0; i < n; i++)
		if (lo < r[i].hi && r[i].lo < hi)
			return 1;
	return 0;
}

/* the fault decision for one request, and its delay */
static int faulty(int write, off_t off, size_t size)
{
	unsigned long delay;
	int bad;

	pthread_mutex_lock(&lock);
	bad = write ? overlaps(cur.wr, cur.nwr, off, size) : overlaps(cur.rd, cur.nrd, off, size);
	delay = cur.delay_us;
	pthread_mutex_unlock(&lock);
	if (delay) {
		struct timespec ts = { (time_t)(delay / 1000000), (long)(delay % 1000000) * 1000 };

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	return bad;
}

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
	pthread_mutex_lock(&lock);
	put_ranges(o, "read", cur.rd, cur.nrd);
	put_ranges(o, " write", cur.wr, cur.nwr);
	fprintf(o, " fsync=%d delay_us=%lu%s", cur.fsync, cur.delay_us,
		cur.fallocate ? " fallocate=1" : "");
	if (cur.nlose)
		put_ranges(o, " lose", cur.lose, cur.nlose);
	fputc('\n', o);
	pthread_mutex_unlock(&lock);
	fprintf(o, "reads=%" PRIuFAST64 " writes=%" PRIuFAST64 " failed_reads=%" PRIuFAST64
		" failed_writes=%" PRIuFAST64 " fsyncs=%" PRIuFAST64 " failed_fsyncs=%" PRIuFAST64,
		atomic_load(&n_reads), atomic_load(&n_writes), atomic_load(&n_bad_reads),
		atomic_load(&n_bad_writes), atomic_load(&n_fsyncs), atomic_load(&n_bad_fsyncs));
	fprintf(o, " read_bytes=%" PRIuFAST64 " written_bytes=%" PRIuFAST64 " fallocates=%" PRIuFAST64
		" failed_fallocates=%" PRIuFAST64 " fallocated_bytes=%" PRIuFAST64 "\n",
		atomic_load(&n_read_bytes), atomic_load(&n_written_bytes), atomic_load(&n_fallocs),
		atomic_load(&n_bad_fallocs), atomic_load(&n_falloc_bytes));
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
	if (faulty(0, off, size)) {
		atomic_fetch_add(&n_bad_reads, 1);
		return -EIO;
	}
	while (done < size) {
		ssize_t r = pread(backing, buf + done, size - done, off + (off_t)done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	atomic_fetch_add(&n_read_bytes, done);
	return (int)done;
}

/* lose=: a write overlapping a lost range gets a copy of its buffer
 * (*copy, in *buf) holding there what the disk holds now.  -1: no memory. */
static int lost(const char **buf, char **copy, off_t off, size_t size)
{
	uint64_t lo = (uint64_t)off, hi = lo + size;

	*copy = NULL;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < cur.nlose; i++) {
		uint64_t a = cur.lose[i].lo > lo ? cur.lose[i].lo : lo;
		uint64_t b = cur.lose[i].hi < hi ? cur.lose[i].hi : hi;

		if (a >= b)
			continue;
		if (!*copy && !(*copy = malloc(size))) {
			pthread_mutex_unlock(&lock);
			return -1;
		}
		if (*buf != *copy) {
			memcpy(*copy, *buf, size);
			*buf = *copy;
		}
		/* past the backing's end there is nothing to keep: zeros */
		memset(*copy + (a - lo), 0, b - a);
		(void)!pread(backing, *copy + (a - lo), b - a, (off_t)a);
	}
	pthread_mutex_unlock(&lock);
	return 0;
}

static int ff_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	char *copy = NULL;
	struct faults f;
	size_t done = 0;
	char *line;
	int reset;

	(void)fi;
	if (is(path, "/control")) {
		line = strndup(buf, size);
		if (!line)
			return -ENOMEM;
		if (parse(line, &f, &reset)) {
			free(line);
			return -EINVAL;
		}
		free(line);
		pthread_mutex_lock(&lock);
		cur = f;
		pthread_mutex_unlock(&lock);
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
	if (faulty(1, off, size)) {
		atomic_fetch_add(&n_bad_writes, 1);
		return -EIO;
	}
	if (lost(&buf, &copy, off, size))
		return -ENOMEM;
	while (done < size) {
		ssize_t r = pwrite(backing, buf + done, size - done, off + (off_t)done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(copy);
			if (!done)
				return -e;
			atomic_fetch_add(&n_written_bytes, done);
			return (int)done;
		}
		done += (size_t)r;
	}
	free(copy);
	atomic_fetch_add(&n_written_bytes, done);
	return (int)done;
}

static int fsync_fault(void)
{
	int f;

	pthread_mutex_lock(&lock);
	f = cur.fsync;
	pthread_mutex_unlock(&lock);
	return f;
}

static int ff_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)fi;
	if (!is(path, "/disk"))
		return 0;
	atomic_fetch_add(&n_fsyncs, 1);
	if (fsync_fault()) {
		atomic_fetch_add(&n_bad_fsyncs, 1);
		return -EIO;
	}
	return (datasync ? fdatasync(backing) : fsync(backing)) ? -errno : 0;
}

static int ff_flush(const char *path, struct fuse_file_info *fi)
{
	(void)fi;
	return is(path, "/disk") && fsync_fault() ? -EIO : 0;
}

static int ff_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	int on;

	(void)fi;
	if (!is(path, "/disk"))
		return -EOPNOTSUPP;
	atomic_fetch_add(&n_fallocs, 1);
	pthread_mutex_lock(&lock);
	on = cur.fallocate;
	pthread_mutex_unlock(&lock);
	/* not -ENOSYS, which the kernel would remember for good */
	if (!on) {
		atomic_fetch_add(&n_bad_fallocs, 1);
		return -EOPNOTSUPP;
	}
	if (faulty(1, off, (size_t)len)) {
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
			" [fsync=0|1] [delay_us=N] [fallocate=0|1] [FUSE-OPTION...]\n");
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
	if (parse(line, &cur, &reset))
		usage();
	free(line);
	return fuse_main(fargc, fargv, &ops, NULL);
}
