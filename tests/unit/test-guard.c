// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for guard.c: pdd_guard() and pdd_guard_busy() against a
 * made-up /proc and /sys (pdd_guard_root), each refusal with its exact
 * message caught from pdd_msg_stream.  The block device is a node made
 * with mknod (major 240, for local use), only ever stat'ed, never opened:
 * those tests need root and are skipped without it.  The overlap of
 * regular files uses real files and runs as anyone.  Loop devices are
 * made up in sysfs too, over real files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "pdd.h"
#include "capture.h"

#define MiB (1024ULL * 1024)

#if defined(HAVE_LIBMOUNT) || defined(HAVE_PROCMOUNTS)
#define HAVE_MOUNTS true	/* guard-mount.c reads /proc through libmount,
				 * or guard-proc.c (build/test-guard-proc) */
#else
#define HAVE_MOUNTS false
#endif

static char root[64];		/* the made-up /proc and /sys */
static char nodes[64];		/* device nodes and regular files */
static char disk[128], part[128];	/* block nodes 240:0 and 240:1 */

/* Write text to root/rel, making the directories on the way. */
static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *s = strchr(path + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/*
 * The tree of a disk fake0 (240:0) with one partition fake0p1 (240:1)
 * starting 1 MiB in, nothing mounted, no swap, no holders: sysfs as the
 * kernel lays it out, /sys/dev/block/240:1 a link into its disk's
 * directory.
 */
static int setup(void **state)
{
	char link[512];

	strcpy(root, "/tmp/pdd-guard-root.XXXXXX");
	strcpy(nodes, "/tmp/pdd-guard-nodes.XXXXXX");
	if (!mkdtemp(root) || !mkdtemp(nodes))
		return -1;
	pdd_guard_root = root;
	put("proc/self/mountinfo",
	    "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
	    "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n");
	put("proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
	put("sys/dev/block/240:0/dev", "240:0\n");
	put("sys/dev/block/240:0/uevent", "MAJOR=240\nMINOR=0\nDEVNAME=fake0\nDEVTYPE=disk\n");
	put("sys/dev/block/240:0/holders/.keep", "");
	put("sys/dev/block/240:0/queue/logical_block_size", "512\n");
	put("sys/dev/block/240:0/fake0p1/dev", "240:1\n");
	put("sys/dev/block/240:0/fake0p1/partition", "1\n");
	put("sys/dev/block/240:0/fake0p1/start", "2048\n");
	put("sys/dev/block/240:0/fake0p1/uevent",
	    "MAJOR=240\nMINOR=1\nDEVNAME=fake0p1\nDEVTYPE=partition\nPARTN=1\n");
	put("sys/dev/block/240:0/fake0p1/holders/.keep", "");
	snprintf(link, sizeof(link), "%s/sys/dev/block/240:1", root);
	if (symlink("240:0/fake0p1", link))
		return -1;
	put("sys/block/.keep", "");	/* the disks, links as in the kernel's */
	snprintf(link, sizeof(link), "%s/sys/block/fake0", root);
	if (symlink("../dev/block/240:0", link))
		return -1;
	snprintf(disk, sizeof(disk), "%s/disk", nodes);
	snprintf(part, sizeof(part), "%s/part", nodes);
	if (geteuid() == 0 && (mknod(disk, S_IFBLK | 0600, makedev(240, 0)) ||
			       mknod(part, S_IFBLK | 0600, makedev(240, 1))))
		return -1;
	return cap_open(state);
}

static int teardown(void **state)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	nftw(nodes, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	pdd_guard_root = "";
	return cap_close(state);
}

/* The tests on the block nodes: mknod needs root, and a pdd built
 * without libmount refuses every block device before anything else
 * (test_without_libmount). */
static void needs_block(void)
{
	if (geteuid() != 0 || !HAVE_MOUNTS)
		skip();
}

static struct pdd_dev side(const char *path, enum pdd_kind kind, bool output,
			   unsigned int flags)
{
	return (struct pdd_dev){
		.path = path,
		.name = path,
		.output = output,
		.kind = kind,
		.fd = -1,
		.fd_buf = -1,
		.flags = flags,
		.seekable = true,
		.size_known = true,
	};
}

static struct pdd_plan plan(uint64_t in_off, uint64_t out_off, uint64_t total)
{
	return (struct pdd_plan){ .bs = 512, .in_off = in_off, .out_off = out_off,
				  .total = total };
}

/* pdd_guard() of a file to the disk, with oflag flags, and what it said. */
static int guard_disk(unsigned int flags)
{
	struct pdd_dev in = side("/nonexistent/in", PDD_KIND_FILE, false, 0);
	struct pdd_dev out = side(disk, PDD_KIND_BLOCK, true, flags);
	struct pdd_plan p = plan(0, 0, MiB);

	in.missing = true;	/* never located: no overlap to find */
	return pdd_guard(&p, &in, &out);
}

static char *msg(const char *fmt, ...)
{
	static char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return buf;
}

static void add_mount(const char *line)
{
	char path[512], text[2048];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/self/mountinfo", root);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) / 2, f);
	fclose(f);
	snprintf(text + n, sizeof(text) - n, "%s\n", line);	/* line may be msg()'s */
	put("proc/self/mountinfo", text);
}

/* --- the device and its partitions ---------------------------------------- */

static void test_nothing_in_use(void **state)
{
	(void)state;
	needs_block();
	assert_int_equal(guard_disk(0), 0);
	assert_string_equal(captured(), "");
}

static void test_mounted(void **state)
{
	(void)state;
	needs_block();
	/* /proc writes a space in a mount point as \040 */
	add_mount("40 27 240:0 / /mnt/my\\040disk rw,relatime shared:1 - ext4 /dev/fake0 rw");
	assert_int_equal(guard_disk(0), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' is mounted on /mnt/my disk: pdd does not write to a mounted device\n",
					    disk));
	/* force does not let it pass */
	cap_reset();
	assert_int_equal(guard_disk(PDD_F_FORCE), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' is mounted on /mnt/my disk: pdd does not write to a mounted device\n",
					    disk));
}

/* btrfs gives its mounts a device number of its own; the source names
 * the device, and only sources under /dev are looked at */
static void test_mounted_by_source(void **state)
{
	char dnode[128];

	(void)state;
	needs_block();
	add_mount(msg("41 27 0:45 / /srv rw - btrfs %s rw", disk));
	assert_int_equal(guard_disk(0), 0);
	snprintf(dnode, sizeof(dnode), "/dev/shm/pdd-guard-%d", (int)getpid());
	if (mknod(dnode, S_IFBLK | 0600, makedev(240, 0)))
		skip();		/* no /dev/shm to put a node in */
	add_mount(msg("42 27 0:46 / /srv2 rw - btrfs %s rw", dnode));
	assert_int_equal(guard_disk(0), -EBUSY);
	unlink(dnode);
	assert_string_equal(captured(), msg("pdd: '%s' is mounted on /srv2: pdd does not write to a mounted device\n",
					    disk));
}

static void test_partition_mounted(void **state)
{
	(void)state;
	needs_block();
	add_mount("40 27 240:1 / /mnt/p rw - ext4 /dev/fake0p1 rw");
	add_mount("43 27 240:1 / /mnt/bind rw - ext4 /dev/fake0p1 rw");
	assert_int_equal(guard_disk(PDD_F_FORCE), -EBUSY);
	/* the first mount is named */
	assert_string_equal(captured(), msg("pdd: '%s' holds '/dev/fake0p1', mounted on /mnt/p: pdd does not write to a mounted device\n",
					    disk));
}

static void test_swap(void **state)
{
	(void)state;
	needs_block();
	put("proc/swaps", msg("Filename\tType\tSize\tUsed\tPriority\n"
			      "/swapfile                               file\t\t1024\t0\t-2\n"
			      "%s                               partition\t16380\t0\t-3\n", disk));
	assert_int_equal(guard_disk(PDD_F_FORCE), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' is in use as swap: pdd does not write to active swap\n",
					    disk));
	cap_reset();
	put("proc/swaps", msg("Filename\tType\tSize\tUsed\tPriority\n"
			      "%s                               partition\t16380\t0\t-3\n", part));
	assert_int_equal(guard_disk(0), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' holds '/dev/fake0p1', in use as swap: pdd does not write to active swap\n",
					    disk));
}

static void test_no_swaps_file(void **state)
{
	char path[512];

	(void)state;
	needs_block();
	snprintf(path, sizeof(path), "%s/proc/swaps", root);
	unlink(path);		/* a kernel without swap */
	assert_int_equal(guard_disk(0), 0);
	assert_string_equal(captured(), "");
}

static void test_held(void **state)
{
	(void)state;
	needs_block();
	put("sys/dev/block/240:0/holders/dm-0", "");
	assert_int_equal(guard_disk(0), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' is held by dm-0: another device is built on it\n",
					    disk));
	/* this one force lets pass */
	cap_reset();
	assert_int_equal(guard_disk(PDD_F_FORCE), 0);
	assert_string_equal(captured(), "");
}

static void test_partition_held(void **state)
{
	(void)state;
	needs_block();
	put("sys/dev/block/240:0/fake0p1/holders/md127", "");
	assert_int_equal(guard_disk(0), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' holds '/dev/fake0p1', held by md127: another device is built on it\n",
					    disk));
	cap_reset();
	assert_int_equal(guard_disk(PDD_F_FORCE), 0);
}

/* every reason is named, not only the first */
static void test_several(void **state)
{
	(void)state;
	needs_block();
	add_mount("40 27 240:0 / /a rw - ext4 /dev/fake0 rw");
	put("sys/dev/block/240:0/holders/dm-3", "");
	put("proc/swaps", msg("Filename\tType\tSize\tUsed\tPriority\n%s partition 1 0 -2\n", part));
	assert_int_equal(guard_disk(0), -EBUSY);
	assert_string_equal(captured(),
			    msg("pdd: '%s' is mounted on /a: pdd does not write to a mounted device\n"
				"pdd: '%s' is held by dm-3: another device is built on it\n"
				"pdd: '%s' holds '/dev/fake0p1', in use as swap: pdd does not write to active swap\n",
				disk, disk, disk));
}

/* the partition as the output: its own mounts count, not its disk's
 * other partitions */
static void test_partition_output(void **state)
{
	struct pdd_dev in = side("/nonexistent/in", PDD_KIND_FILE, false, 0);
	struct pdd_dev out = side(part, PDD_KIND_BLOCK, true, 0);
	struct pdd_plan p = plan(0, 0, MiB);

	(void)state;
	needs_block();
	in.missing = true;
	add_mount("40 27 240:0 / /whole rw - ext4 /dev/fake0 rw");
	assert_int_equal(pdd_guard(&p, &in, &out), 0);
	add_mount("41 27 240:1 / /p rw - ext4 /dev/fake0p1 rw");
	assert_int_equal(pdd_guard(&p, &in, &out), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' is mounted on /p: pdd does not write to a mounted device\n",
					    part));
}

/* a check that cannot be made refuses */
static void test_no_mountinfo(void **state)
{
	char path[512];

	(void)state;
	needs_block();
	snprintf(path, sizeof(path), "%s/proc/self/mountinfo", root);
	unlink(path);
	assert_int_equal(guard_disk(PDD_F_FORCE), -ENOENT);
	assert_string_equal(captured(), msg("pdd: cannot read '%s/proc/self/mountinfo' to see whether '%s' is mounted: No such file or directory\n",
					    root, disk));
}

/* a mountinfo libmount cannot read as mountinfo refuses too, where
 * libmount's own default would skip the line and go on */
static void test_bad_mountinfo(void **state)
{
	char path[512];
	const char *fmt = "pdd: cannot read '%s/proc/self/mountinfo' to see whether '%s' is mounted: %s\n";

	(void)state;
	needs_block();
	add_mount("40 27 240:0 / /a rw");	/* no " - " and what follows */
	add_mount("41 27 240:0 / /b rw - ext4 /dev/fake0 rw");
	assert_int_equal(guard_disk(0), -EBADMSG);
	assert_string_equal(captured(), msg(fmt, root, disk, "Bad message"));
	/* read as an fstab when its first line is not mountinfo's */
	cap_reset();
	put("proc/self/mountinfo", "/dev/fake0 /a ext4 rw 0 0\n");
	assert_int_equal(guard_disk(0), -EBADMSG);
	assert_string_equal(captured(), msg(fmt, root, disk, "Bad message"));
	/* opened but not read */
	cap_reset();
	snprintf(path, sizeof(path), "%s/proc/self/mountinfo", root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(guard_disk(PDD_F_FORCE), -EIO);
	assert_string_equal(captured(), msg(fmt, root, disk, "Input/output error"));
	assert_int_equal(rmdir(path), 0);
}

/* a bad last line with no newline after it, which the kernel never
 * leaves off, is passed over (libmount's way, and guard-proc.c's) */
static void test_unended_last_line(void **state)
{
	char path[512];
	FILE *f;

	(void)state;
	needs_block();
	snprintf(path, sizeof(path), "%s/proc/self/mountinfo", root);
	f = fopen(path, "a");
	assert_non_null(f);
	fputs("40 27 240:0 / /a rw", f);
	fclose(f);
	assert_int_equal(guard_disk(0), 0);
	assert_string_equal(captured(), "");
}

static void test_bad_swaps(void **state)
{
	(void)state;
	needs_block();
	put("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n/swapfile file\n");
	assert_int_equal(guard_disk(0), -EBADMSG);
	assert_string_equal(captured(), msg("pdd: cannot read '%s/proc/swaps' to see whether '%s' is swap: Bad message\n",
					    root, disk));
}

/* libmount undoes the escapes in a source too, and drops the
 * " (deleted)" after a swap area's path: a node that stands there now
 * for the same device is that device */
static void test_escaped_and_deleted(void **state)
{
	char dnode[128], esc[160];

	(void)state;
	needs_block();
	snprintf(dnode, sizeof(dnode), "/dev/shm/pdd guard-%d", (int)getpid());
	snprintf(esc, sizeof(esc), "/dev/shm/pdd\\040guard-%d", (int)getpid());
	if (mknod(dnode, S_IFBLK | 0600, makedev(240, 0)))
		skip();		/* no /dev/shm to put a node in */
	add_mount(msg("42 27 0:46 / /srv\\011x rw - btrfs %s rw", esc));
	put("proc/swaps", msg("Filename\tType\tSize\tUsed\tPriority\n"
			      "%s\\040(deleted) partition 1 0 -2\n", esc));
	assert_int_equal(guard_disk(0), -EBUSY);
	unlink(dnode);
	assert_string_equal(captured(), msg("pdd: '%s' is mounted on /srv\tx: pdd does not write to a mounted device\n"
					    "pdd: '%s' is in use as swap: pdd does not write to active swap\n",
					    disk, disk));
}

/* built without libmount nothing tells whether a device is mounted:
 * every block device is refused, but for oflag=force */
static void test_without_libmount(void **state)
{
	(void)state;
	if (geteuid() != 0 || HAVE_MOUNTS)
		skip();
	assert_int_equal(guard_disk(0), -ENOTSUP);
	assert_string_equal(captured(), msg("pdd: pdd was built without libmount: cannot see whether '%s' is mounted or in use as swap; oflag=force writes anyway\n",
					    disk));
	cap_reset();
	put("sys/dev/block/240:0/holders/dm-0", "");
	assert_int_equal(guard_disk(PDD_F_FORCE), 0);
	assert_string_equal(captured(), "");
}

/* verify=only opens its output to read: nothing is written */
static void test_verify_only(void **state)
{
	struct pdd_dev in = side(disk, PDD_KIND_BLOCK, false, 0);
	struct pdd_dev out = side(disk, PDD_KIND_BLOCK, false, 0);
	struct pdd_plan p = plan(0, 0, MiB);

	(void)state;
	needs_block();
	add_mount("40 27 240:0 / /a rw - ext4 /dev/fake0 rw");
	assert_int_equal(pdd_guard(&p, &in, &out), 0);
	assert_string_equal(captured(), "");
}

/* --- why the exclusive open failed ---------------------------------------- */

static void test_busy(void **state)
{
	struct pdd_dev in = side("/nonexistent/in", PDD_KIND_FILE, false, 0);
	struct pdd_dev out = side(disk, PDD_KIND_BLOCK, true, 0);

	(void)state;
	needs_block();
	pdd_guard_busy(&in, &out);
	assert_string_equal(captured(), msg("pdd: '%s' is busy: another program holds it exclusively\n",
					    disk));
	/* named when it is known; a holder too, force or not */
	cap_reset();
	put("sys/dev/block/240:0/holders/dm-0", "");
	out.flags = PDD_F_FORCE;
	pdd_guard_busy(&in, &out);
	assert_string_equal(captured(), msg("pdd: '%s' is held by dm-0: another device is built on it\n",
					    disk));
}

static void test_busy_iflag_excl(void **state)
{
	struct pdd_dev in = side(part, PDD_KIND_BLOCK, false, PDD_F_EXCL);
	struct pdd_dev out = side(disk, PDD_KIND_BLOCK, true, 0);

	(void)state;
	needs_block();
	pdd_guard_busy(&in, &out);
	assert_string_equal(captured(), msg("pdd: '%s' is busy: the input '%s' holds it exclusively (iflag=excl)\n",
					    disk, part));
}

static void test_busy_not_block(void **state)
{
	struct pdd_dev in = side("/nonexistent/in", PDD_KIND_FILE, false, 0);
	struct pdd_dev out = side("/nonexistent/sg", PDD_KIND_SG, true, 0);

	(void)state;
	pdd_guard_busy(&in, &out);	/* the open's own message says it */
	assert_string_equal(captured(), "");
}

/* --- overlap -------------------------------------------------------------- */

static int guard_pair(const char *ip, const char *op, uint64_t in_off,
		      uint64_t out_off, uint64_t total)
{
	struct pdd_dev in = side(ip, PDD_KIND_BLOCK, false, 0);
	struct pdd_dev out = side(op, PDD_KIND_BLOCK, true, 0);
	struct pdd_plan p = plan(in_off, out_off, total);

	return pdd_guard(&p, &in, &out);
}

static void test_overlap_same_device(void **state)
{
	(void)state;
	needs_block();
	assert_int_equal(guard_pair(disk, disk, 0, MiB, MiB + 512), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' bytes 1048576 to 2097663 overlap the input's bytes 0 to 1049087 on the same device\n",
					    disk));
	cap_reset();
	assert_int_equal(guard_pair(disk, disk, 0, 0, 512), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' bytes 0 to 511 overlap the input's bytes 0 to 511 on the same device\n",
					    disk));
	/* ranges that touch, either way round, or empty, do not */
	cap_reset();
	assert_int_equal(guard_pair(disk, disk, 0, MiB, MiB), 0);
	assert_int_equal(guard_pair(disk, disk, MiB, 0, MiB), 0);
	assert_int_equal(guard_pair(disk, disk, 0, 0, 0), 0);
	assert_string_equal(captured(), "");
}

static void test_overlap_until_eof(void **state)
{
	(void)state;
	needs_block();
	assert_int_equal(guard_pair(disk, disk, 4096, 0, PDD_UNTIL_EOF), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' bytes 0 to the end overlap the input's bytes 4096 to the end on the same device\n",
					    disk));
	cap_reset();
	assert_int_equal(guard_pair(disk, disk, UINT64_MAX - 10, UINT64_MAX - 50, 100), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' bytes 18446744073709551565 to the end overlap the input's bytes 18446744073709551605 to the end on the same device\n",
					    disk));
}

/* a partition against its disk: compared where it lies, 1 MiB in */
static void test_overlap_partition(void **state)
{
	(void)state;
	needs_block();
	assert_int_equal(guard_pair(part, disk, 0, 0, MiB), 0);
	assert_int_equal(guard_pair(part, disk, 0, 2 * MiB, MiB), 0);
	assert_int_equal(guard_pair(part, disk, 0, MiB / 2, MiB), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' and the input '%s' are on the disk '/dev/fake0', where the output's bytes 524288 to 1572863 overlap the input's bytes 1048576 to 2097151\n",
					    disk, part));
	cap_reset();
	assert_int_equal(guard_pair(disk, part, MiB + 1024, 512, 4096), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' and the input '%s' are on the disk '/dev/fake0', where the output's bytes 1049088 to 1053183 overlap the input's bytes 1049600 to 1053695\n",
					    part, disk));
	cap_reset();
	assert_int_equal(guard_pair(disk, part, 0, 0, MiB), 0);
	assert_string_equal(captured(), "");
}

/* --- regular files: anyone can run these ---------------------------------- */

static int guard_files(const char *ip, const char *op, uint64_t in_off,
		       uint64_t out_off, uint64_t total, bool missing)
{
	struct pdd_dev in = side(ip, PDD_KIND_FILE, false, 0);
	struct pdd_dev out = side(op, PDD_KIND_FILE, true, PDD_F_FORCE);
	struct pdd_plan p = plan(in_off, out_off, total);

	out.missing = missing;
	return pdd_guard(&p, &in, &out);
}

static void test_overlap_files(void **state)
{
	char a[128], b[128], l[128];
	int fd;

	(void)state;
	snprintf(a, sizeof(a), "%s/a", nodes);
	snprintf(b, sizeof(b), "%s/b", nodes);
	snprintf(l, sizeof(l), "%s/link", nodes);
	fd = open(a, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	fd = open(b, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(link(a, l), 0);

	assert_int_equal(guard_files(a, a, 0, 4096, 16384, false), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' bytes 4096 to 20479 overlap the input's bytes 0 to 16383 in the same file\n",
					    a));
	cap_reset();
	assert_int_equal(guard_files(l, a, 8192, 4096, 16384, false), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' bytes 4096 to 20479 overlap the input's bytes 8192 to 24575 in the same file\n",
					    a));
	cap_reset();
	assert_int_equal(guard_files(a, a, 0, 16384, 16384, false), 0);
	assert_int_equal(guard_files(a, b, 0, 0, 16384, false), 0);
	assert_int_equal(guard_files(a, a, 0, 0, 16384, true), 0);	/* not made yet */
	assert_string_equal(captured(), "");
}

/* oflag=append writes after the end; oflag=trunc cuts the file at seek=
 * before the copy reads it */
static void test_overlap_append_trunc(void **state)
{
	struct pdd_dev in, out;
	struct pdd_plan p = plan(0, 0, 8192);
	char a[128];
	int fd;

	(void)state;
	snprintf(a, sizeof(a), "%s/a", nodes);
	fd = open(a, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	in = side(a, PDD_KIND_FILE, false, 0);
	out = side(a, PDD_KIND_FILE, true, PDD_F_APPEND);
	out.size = 8192;
	assert_int_equal(pdd_guard(&p, &in, &out), 0);
	p = plan(0, 0, 16384);	/* count= past the end would read what it appends */
	assert_int_equal(pdd_guard(&p, &in, &out), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' bytes 8192 to 24575 overlap the input's bytes 0 to 16383 in the same file\n",
					    a));
	cap_reset();
	out = side(a, PDD_KIND_FILE, true, PDD_F_TRUNC);
	p = plan(8192, 0, 4096);	/* the input lies past seek=: cut off */
	assert_int_equal(pdd_guard(&p, &in, &out), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' bytes 0 to the end overlap the input's bytes 8192 to 12287 in the same file\n",
					    a));
	cap_reset();
	p = plan(0, 8192, 4096);	/* before it: kept */
	assert_int_equal(pdd_guard(&p, &in, &out), 0);
	assert_string_equal(captured(), "");
}

/* --- through loop devices ------------------------------------------------- */

/*
 * Loop devices in the made-up sysfs: without a descriptor to ask
 * LOOP_GET_STATUS64, guard.c reads loop/backing_file and loop/offset.
 * fake0 (240:0, partition fake0p1 1 MiB in) becomes a loop device with
 * make_loop("240:0", ...); fake1 (240:16, node nodes/disk1) is a second.
 */
static char file_a[128], disk1[128];

static void make_loop(const char *devnum, const char *backing, const char *offset)
{
	char rel[128], text[256];

	snprintf(rel, sizeof(rel), "sys/dev/block/%s/loop/backing_file", devnum);
	snprintf(text, sizeof(text), "%s\n", backing);
	put(rel, text);
	snprintf(rel, sizeof(rel), "sys/dev/block/%s/loop/offset", devnum);
	snprintf(text, sizeof(text), "%s\n", offset);
	put(rel, text);
}

/* file_a, 4 MiB, and fake1's sysfs and node */
static void loop_files(void)
{
	char link[512];
	int fd;

	needs_block();
	snprintf(file_a, sizeof(file_a), "%s/a", nodes);
	snprintf(disk1, sizeof(disk1), "%s/disk1", nodes);
	fd = open(file_a, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4 * MiB), 0);
	close(fd);
	put("sys/dev/block/240:16/dev", "240:16\n");
	put("sys/dev/block/240:16/uevent", "MAJOR=240\nMINOR=16\nDEVNAME=fake1\nDEVTYPE=disk\n");
	assert_int_equal(mknod(disk1, S_IFBLK | 0600, makedev(240, 16)), 0);
	snprintf(link, sizeof(link), "%s/sys/block/fake1", root);
	assert_int_equal(symlink("../dev/block/240:16", link), 0);
}

/* pdd_guard() of ip to op, each a block device or else a regular file */
static int guard_mixed(const char *ip, bool iblk, const char *op, bool oblk,
		       uint64_t in_off, uint64_t out_off, uint64_t total, unsigned int oflags)
{
	struct pdd_dev in = side(ip, iblk ? PDD_KIND_BLOCK : PDD_KIND_FILE, false, 0);
	struct pdd_dev out = side(op, oblk ? PDD_KIND_BLOCK : PDD_KIND_FILE, true, oflags);
	struct pdd_plan p = plan(in_off, out_off, total);

	out.size = 4 * MiB;
	return pdd_guard(&p, &in, &out);
}

/* a loop device over the output file, 4096 bytes in: the input's bytes
 * are the file's from 4096 on */
static void test_loop_to_its_file(void **state)
{
	(void)state;
	loop_files();
	make_loop("240:0", file_a, "4096");
	assert_int_equal(guard_mixed(disk, true, file_a, false, 0, 0, MiB, 0), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' and the input '%s' are in the file '%s' (the input is a loop device over it), where the output's bytes 0 to 1048575 overlap the input's bytes 4096 to 1052671\n",
					    file_a, disk, file_a));
	/* past the loop's range, or before its offset, it does not */
	cap_reset();
	assert_int_equal(guard_mixed(disk, true, file_a, false, 0, MiB + 4096, MiB, 0), 0);
	assert_int_equal(guard_mixed(disk, true, file_a, false, 0, 0, 4096, 0), 0);
	/* and without sysfs's loop/ it is a disk like any other */
	make_loop("240:0", "/nonexistent/a (deleted)", "0");
	assert_int_equal(guard_mixed(disk, true, file_a, false, 0, 0, MiB, 0), 0);
	assert_string_equal(captured(), "");
}

/* the file as the input, the loop device over it as the output */
static void test_file_to_its_loop(void **state)
{
	(void)state;
	loop_files();
	make_loop("240:0", file_a, "0");
	assert_int_equal(guard_mixed(file_a, false, disk, true, 512, 0, 4096, 0), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' and the input '%s' are in the file '%s' (the output is a loop device over it), where the output's bytes 0 to 4095 overlap the input's bytes 512 to 4607\n",
					    disk, file_a, file_a));
	cap_reset();
	assert_int_equal(guard_mixed(file_a, false, disk, true, 0, 4096, 4096, 0), 0);
	assert_string_equal(captured(), "");
}

/* a partition of the loop device: its start and the loop's offset add up */
static void test_loop_partition(void **state)
{
	(void)state;
	loop_files();
	make_loop("240:0", file_a, "512");
	assert_int_equal(guard_mixed(part, true, file_a, false, 0, MiB, 4096, 0), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' and the input '%s' are in the file '%s' (the input is a partition of the loop device '/dev/fake0' over it), where the output's bytes 1048576 to 1052671 overlap the input's bytes 1049088 to 1053183\n",
					    file_a, part, file_a));
	cap_reset();
	assert_int_equal(guard_mixed(part, true, file_a, false, 0, MiB + 4608, 4096, 0), 0);
	assert_int_equal(guard_mixed(file_a, false, part, true, 0, 0, MiB, 0), 0);
	/* the partition against its own loop is compared on the disk, as before */
	assert_int_equal(guard_pair(part, disk, 0, MiB / 2, MiB), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' and the input '%s' are on the disk '/dev/fake0', where the output's bytes 524288 to 1572863 overlap the input's bytes 1048576 to 2097151\n",
					    disk, part));
}

/* two loop devices over one file: the file is named as sysfs has it */
static void test_two_loops(void **state)
{
	(void)state;
	loop_files();
	make_loop("240:0", file_a, "0");
	make_loop("240:16", file_a, "1048576");
	assert_int_equal(guard_pair(disk1, disk, 0, MiB + 512, 4096), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' and the input '%s' are in the file '%s' (the input is a loop device over it; the output is a loop device over it), where the output's bytes 1049088 to 1053183 overlap the input's bytes 1048576 to 1052671\n",
					    disk, disk1, file_a));
	cap_reset();
	assert_int_equal(guard_pair(disk1, disk, 0, 0, MiB), 0);
	assert_int_equal(guard_pair(disk, disk1, 0, 0, MiB), 0);
	assert_string_equal(captured(), "");
}

/* a loop device over a loop device over the file: offsets add up */
static void test_loop_chain(void **state)
{
	(void)state;
	loop_files();
	make_loop("240:16", disk, "4096");
	make_loop("240:0", file_a, "8192");
	assert_int_equal(guard_mixed(disk1, true, file_a, false, 0, 0, 16384, 0), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' and the input '%s' are in the file '%s' (the input is a loop device over it), where the output's bytes 0 to 16383 overlap the input's bytes 12288 to 28671\n",
					    file_a, disk1, file_a));
	cap_reset();
	assert_int_equal(guard_mixed(disk1, true, file_a, false, 0, 0, 12288, 0), 0);
	assert_string_equal(captured(), "");
}

/* a loop device over a partition lies on that partition's disk */
static void test_loop_over_partition(void **state)
{
	(void)state;
	loop_files();
	make_loop("240:16", part, "0");
	assert_int_equal(guard_pair(disk1, disk, 0, MiB + 4096, 4096), 0);
	assert_int_equal(guard_pair(disk1, disk, 4096, MiB + 4096, 4096), -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' and the input '%s' are on the disk '/dev/fake0' (the input is a loop device on it), where the output's bytes 1052672 to 1056767 overlap the input's bytes 1052672 to 1056767\n",
					    disk, disk1));
}

/* a cycle, which only a made-up sysfs can show, ends */
static void test_loop_cycle(void **state)
{
	(void)state;
	loop_files();
	make_loop("240:0", disk1, "0");
	make_loop("240:16", disk, "0");
	assert_int_equal(guard_mixed(disk, true, file_a, false, 0, 0, MiB, 0), 0);
	assert_string_equal(captured(), "");
}

/* oflag=append and oflag=trunc on the file under the input's loop */
static void test_loop_append_trunc(void **state)
{
	(void)state;
	loop_files();
	make_loop("240:0", file_a, "3145728");		/* the file's last MiB */
	assert_int_equal(guard_mixed(disk, true, file_a, false, 0, 2 * MiB, MiB, 0), 0);
	assert_int_equal(guard_mixed(disk, true, file_a, false, 0, 2 * MiB, MiB, PDD_F_TRUNC),
			 -EINVAL);
	assert_string_equal(captured(), msg("pdd: '%s' and the input '%s' are in the file '%s' (the input is a loop device over it), where the output's bytes 2097152 to the end overlap the input's bytes 3145728 to 4194303\n",
					    file_a, disk, file_a));
	cap_reset();
	/* appended after its 4 MiB: nothing the loop reads */
	assert_int_equal(guard_mixed(disk, true, file_a, false, 0, 0, MiB, PDD_F_APPEND), 0);
	assert_string_equal(captured(), "");
}

/* --- loop devices over the output ----------------------------------------- */

/* pdd_guard() of a missing input (no overlap to find) to op, a block
 * device or else a regular file, with oflag flags */
static int guard_to(const char *op, bool oblk, unsigned int flags)
{
	struct pdd_dev in = side("/nonexistent/in", PDD_KIND_FILE, false, 0);
	struct pdd_dev out = side(op, oblk ? PDD_KIND_BLOCK : PDD_KIND_FILE, true, flags);
	struct pdd_plan p = plan(0, 0, MiB);

	in.missing = true;
	return pdd_guard(&p, &in, &out);
}

/* fake0 over file_a, mounted: the file is refused, force or not; only
 * attached, or over another file, it is not */
static void test_loop_file_mounted(void **state)
{
	char b[128];
	int fd;

	(void)state;
	loop_files();
	make_loop("240:0", file_a, "0");
	assert_int_equal(guard_to(file_a, false, 0), 0);	/* attached only */
	assert_string_equal(captured(), "");
	add_mount("40 27 240:0 / /mnt/img rw - ext4 /dev/fake0 rw");
	assert_int_equal(guard_to(file_a, false, 0), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' is the backing file of '/dev/fake0', which is mounted on /mnt/img: pdd does not write to a mounted device\n",
					    file_a));
	cap_reset();
	assert_int_equal(guard_to(file_a, false, PDD_F_FORCE), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' is the backing file of '/dev/fake0', which is mounted on /mnt/img: pdd does not write to a mounted device\n",
					    file_a));
	/* the file is known by device and inode, not by its name */
	cap_reset();
	snprintf(b, sizeof(b), "%s/b", nodes);
	fd = open(b, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(guard_to(b, false, 0), 0);
	assert_string_equal(captured(), "");
}

/* a partition of the loop device, swap, and a holder, which force passes */
static void test_loop_file_busy(void **state)
{
	(void)state;
	loop_files();
	make_loop("240:0", file_a, "1048576");
	add_mount("40 27 240:1 / /mnt/p rw - ext4 /dev/fake0p1 rw");
	assert_int_equal(guard_to(file_a, false, PDD_F_FORCE), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' is the backing file of '/dev/fake0', which holds '/dev/fake0p1', mounted on /mnt/p: pdd does not write to a mounted device\n",
					    file_a));
	cap_reset();
	put("proc/self/mountinfo", "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n");
	put("proc/swaps", msg("Filename\tType\tSize\tUsed\tPriority\n%s partition 1 0 -2\n", disk));
	assert_int_equal(guard_to(file_a, false, PDD_F_FORCE), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' is the backing file of '/dev/fake0', which is in use as swap: pdd does not write to active swap\n",
					    file_a));
	cap_reset();
	put("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n");
	put("sys/dev/block/240:0/holders/dm-2", "");
	assert_int_equal(guard_to(file_a, false, 0), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' is the backing file of '/dev/fake0', which is held by dm-2: another device is built on it\n",
					    file_a));
	cap_reset();
	assert_int_equal(guard_to(file_a, false, PDD_F_FORCE), 0);
	assert_string_equal(captured(), "");
}

/* fake1 over the disk fake0, or over its partition: the disk and the
 * partition are refused; every reason is told, the output's own too */
static void test_loop_over_block_mounted(void **state)
{
	(void)state;
	loop_files();
	make_loop("240:16", disk, "0");
	add_mount("40 27 240:16 / /m rw - ext4 /dev/fake1 rw");
	assert_int_equal(guard_to(disk, true, 0), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' is the backing device of '/dev/fake1', which is mounted on /m: pdd does not write to a mounted device\n",
					    disk));
	cap_reset();
	make_loop("240:16", part, "0");
	put("sys/dev/block/240:0/holders/dm-0", "");
	assert_int_equal(guard_to(disk, true, 0), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' is held by dm-0: another device is built on it\n"
					    "pdd: '%s' holds '/dev/fake0p1', the backing device of '/dev/fake1', which is mounted on /m: pdd does not write to a mounted device\n",
					    disk, disk));
	cap_reset();
	assert_int_equal(guard_to(part, true, PDD_F_FORCE), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' is the backing device of '/dev/fake1', which is mounted on /m: pdd does not write to a mounted device\n",
					    part));
}

/* a loop device over a loop device over the file: the way up is told */
static void test_loop_chain_mounted(void **state)
{
	(void)state;
	loop_files();
	make_loop("240:0", file_a, "0");
	make_loop("240:16", disk, "0");
	add_mount("40 27 240:16 / /top rw - ext4 /dev/fake1 rw");
	assert_int_equal(guard_to(file_a, false, 0), -EBUSY);
	assert_string_equal(captured(), msg("pdd: '%s' is the backing file of '/dev/fake0', which is the backing device of '/dev/fake1', which is mounted on /top: pdd does not write to a mounted device\n",
					    file_a));
	/* a cycle, which only a made-up sysfs can show, ends */
	cap_reset();
	make_loop("240:0", disk1, "0");
	assert_int_equal(guard_to(disk, true, 0), -EBUSY);
}

/* --- the flag -------------------------------------------------------------- */

static void test_force_flag(void **state)
{
	char *ok[] = { "pdd", "if=a", "of=b", "oflag=excl,force" };
	char *bad[] = { "pdd", "if=a", "of=b", "iflag=force" };
	struct pdd_opts o;

	(void)state;
	assert_int_equal(pdd_parse_args(4, ok, &o), 0);
	assert_int_equal(o.oflags, PDD_F_EXCL | PDD_F_FORCE);
	assert_int_not_equal(pdd_parse_args(4, bad, &o), 0);
	assert_string_equal(captured(), "pdd: iflag=force: 'force' applies to oflag= only\n" TRY_HELP);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_nothing_in_use),
		T(test_mounted),
		T(test_mounted_by_source),
		T(test_partition_mounted),
		T(test_swap),
		T(test_no_swaps_file),
		T(test_held),
		T(test_partition_held),
		T(test_several),
		T(test_partition_output),
		T(test_no_mountinfo),
		T(test_bad_mountinfo),
		T(test_unended_last_line),
		T(test_bad_swaps),
		T(test_escaped_and_deleted),
		T(test_without_libmount),
		T(test_verify_only),
		T(test_busy),
		T(test_busy_iflag_excl),
		T(test_busy_not_block),
		T(test_overlap_same_device),
		T(test_overlap_until_eof),
		T(test_overlap_partition),
		T(test_overlap_files),
		T(test_overlap_append_trunc),
		T(test_loop_to_its_file),
		T(test_file_to_its_loop),
		T(test_loop_partition),
		T(test_two_loops),
		T(test_loop_chain),
		T(test_loop_over_partition),
		T(test_loop_cycle),
		T(test_loop_append_trunc),
		T(test_loop_file_mounted),
		T(test_loop_file_busy),
		T(test_loop_over_block_mounted),
		T(test_loop_chain_mounted),
		T(test_force_flag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
