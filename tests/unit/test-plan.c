// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for plan.c: pdd_plan_make() on made-up devices, no file
 * opened.  They check the defaults that depend on the devices (bs, bpt,
 * count, depth, threads, buffer alignment) and every refusal, each with
 * its exact message caught from pdd_msg_stream.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "pdd.h"
#include "capture.h"

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

/* What pdd_parse_args() gives for an empty command line. */
static struct pdd_opts opts(void)
{
	return (struct pdd_opts){
		.threads = 4,
		.engine = "threads",	/* its depth does not depend on the machine */
		.sync = true,
	};
}

static struct pdd_dev dev(const char *name, enum pdd_kind kind, bool output)
{
	return (struct pdd_dev){
		.path = name,
		.name = name,
		.output = output,
		.kind = kind,
		.fd = -1,
		.fd_buf = -1,
		.lbs = 1,
		.pbs = 1,
		.io_align = 1,
		.mem_align = 1,
	};
}

/* A block device as dev.c measures it: direct unless nodirect. */
static struct pdd_dev blockdev(const char *name, bool output, unsigned int lbs,
			       uint64_t size, bool direct)
{
	struct pdd_dev d = dev(name, PDD_KIND_BLOCK, output);

	d.seekable = true;
	d.direct = direct;
	d.size_known = true;
	d.size = size;
	d.lbs = d.pbs = d.io_align = lbs;
	d.mem_align = 512;
	return d;
}

static struct pdd_dev regfile(const char *name, bool output, uint64_t size,
			      bool direct)
{
	struct pdd_dev d = dev(name, PDD_KIND_FILE, output);

	d.seekable = true;
	d.direct = direct;
	d.size_known = true;
	d.size = size;
	d.lbs = 512;
	d.pbs = 4096;
	d.io_align = 4096;
	d.mem_align = 512;
	return d;
}

static struct pdd_dev fifo(const char *name, bool output)
{
	struct pdd_dev d = dev(name, PDD_KIND_FIFO, output);

	d.stream = true;
	return d;
}

static struct pdd_dev zero(void)
{
	struct pdd_dev d = dev("/dev/zero", PDD_KIND_ZERO, false);

	d.seekable = true;
	return d;
}

static struct pdd_dev discard(void)
{
	struct pdd_dev d = dev("/dev/null", PDD_KIND_NULL, true);

	d.seekable = true;
	d.size_known = true;
	return d;
}

/* An sg device as dev.c measures it: READ CAPACITY's size and logical
 * block, never O_DIRECT (the driver moves the data), and the host's
 * largest command from BLKSECTGET, 0 when it does not say. */
static struct pdd_dev sgdev(const char *name, bool output, unsigned int lbs,
			    uint64_t size, uint64_t max_xfer)
{
	struct pdd_dev d = dev(name, PDD_KIND_SG, output);

	d.seekable = true;
	d.size_known = true;
	d.size = size;
	d.lbs = d.pbs = d.io_align = lbs;
	d.max_xfer = max_xfer;
	d.cdbsz = 10;
	d.timeout_ms = 60000;
	return d;
}

/* A raw device: the block ioctls of the disk behind it, direct I/O only,
 * buffers aligned to its logical block. */
static struct pdd_dev rawdev(const char *name, bool output, unsigned int lbs,
			     uint64_t size)
{
	struct pdd_dev d = blockdev(name, output, lbs, size, true);

	d.kind = PDD_KIND_RAW;
	d.mem_align = lbs;
	return d;
}

/* An NBD export as nbd-side.c measures it: never O_DIRECT, blocks of the
 * server's minimum (512 when it gives none or 1), requests a multiple of
 * that minimum when it gives one above 1, and its largest request. */
static struct pdd_dev nbdexport(const char *name, bool output, unsigned int min,
				uint64_t size, uint64_t max_xfer)
{
	struct pdd_dev d = dev(name, PDD_KIND_NBD, output);

	d.seekable = true;
	d.size_known = true;
	d.size = size;
	d.lbs = min > 512 ? min : 512;
	d.pbs = 4096;
	d.io_align = min > 1 ? min : 1;
	d.max_xfer = max_xfer;
	return d;
}

static size_t page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (size_t)page : 4096;
}

/* A plan that must pass and print nothing. */
#define assert_plan_ok(o, in, out, p) do {				\
		int plan_rc_ = pdd_plan_make((o), (in), (out), (p));	\
		assert_string_equal(captured(), "");			\
		assert_int_equal(plan_rc_, 0);				\
	} while (0)

/* A plan that must be refused with exactly this message. */
#define assert_plan_refused(o, in, out, msg) do {			\
		struct pdd_plan refused_plan_;				\
		assert_int_equal(pdd_plan_make((o), (in), (out), &refused_plan_), \
				 -EINVAL);				\
		assert_string_equal(captured(), "pdd: " msg "\n");	\
	} while (0)

/* A plan engine.c refuses: -EOPNOTSUPP, with its message. */
#define assert_engine_refused(o, in, out, msg) do {			\
		struct pdd_plan refused_plan_;				\
		assert_int_equal(pdd_plan_make((o), (in), (out), &refused_plan_), \
				 -EOPNOTSUPP);				\
		assert_string_equal(captured(), "pdd: " msg "\n");	\
	} while (0)

/* --- bs and bpt ----------------------------------------------------------- */

static void test_bs_defaults_to_block_device_lbs(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = blockdev("/dev/sdb", false, 4096, 64 * MiB, true);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bs, 4096);
	assert_int_equal(p.bpt, 32);
	assert_int_equal(p.xfer, 128 * KiB);
	assert_ptr_equal(p.ops[0], &pdd_threads_ops);
	assert_ptr_equal(p.ops[1], &pdd_threads_ops);

	in = blockdev("/dev/sdb", false, 512, 64 * MiB, true);
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bs, 512);
	assert_int_equal(p.bpt, 128);
	assert_int_equal(p.xfer, 64 * KiB);
}

static void test_bs_defaults_to_512_otherwise(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1 * MiB, false);
	struct pdd_dev out = blockdev("/dev/sdc", true, 4096, 64 * MiB, true);
	struct pdd_plan p;

	(void)state;
	/* the output's sector size does not choose bs */
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bs, 512);
	assert_int_equal(p.bpt, 128);

	in = fifo("pipe", false);
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bs, 512);
	assert_int_equal(p.bpt, 128);
}

static void test_bpt_default_follows_bs(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 64 * MiB, false);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.bs = 2047;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bpt, 128);
	assert_int_equal(p.xfer, 2047 * 128);
	o.bs = 2048;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bpt, 32);
	assert_int_equal(p.xfer, 64 * KiB);
	o.bs = 1 * MiB;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bpt, 32);
}

static void test_bs_and_bpt_given_win(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = blockdev("/dev/sdb", false, 512, 64 * MiB, true);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.bs = 4096;
	o.bpt = 3;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bs, 4096);
	assert_int_equal(p.bpt, 3);
	assert_int_equal(p.xfer, 12288);
}

static void test_transfer_size_limit(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 4 * GiB, false);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.bs = 1 * MiB;
	o.bpt = 1025;
	assert_plan_refused(&o, &in, &out,
			    "bs=1048576 bpt=1025: a transfer may be at most 1073741824 bytes");
	cap_reset();
	o.bpt = 1024;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.xfer, 1 * GiB);
	/* one such transfer is more than the in-flight budget: still one */
	assert_int_equal(p.depth, 1);
	assert_int_equal(p.threads, 1);
	cap_reset();
	/* a product that overflows 64 bits */
	o.bs = 1 * GiB;
	o.bpt = 1ULL << 40;
	assert_plan_refused(&o, &in, &out,
			    "bs=1073741824 bpt=1099511627776: a transfer may be at most 1073741824 bytes");
}

/* --- how much to copy ---------------------------------------------------- */

static void test_count_from_input_size_minus_skip(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 10000, false);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.in_off, 0);
	assert_int_equal(p.out_off, 0);
	assert_int_equal(p.total, 10000);

	o.skip = 3;
	o.seek = 5;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.in_off, 1536);
	assert_int_equal(p.out_off, 2560);
	assert_int_equal(p.total, 10000 - 1536);
}

static void test_skip_to_end_copies_nothing(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1024, false);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.skip = 2;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.total, 0);
	assert_int_equal(p.depth, 1);
	assert_int_equal(p.threads, 1);
}

static void test_skip_past_end_gives_zero(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1000, false);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.skip = 2;
	assert_int_equal(pdd_plan_make(&o, &in, &out, &p), 0);
	assert_string_equal(captured(),
			    "pdd: skip=2 is past the end of 'in.img' (1000 bytes): nothing to copy\n");
	assert_int_equal(p.in_off, 1024);
	assert_int_equal(p.total, 0);
	assert_int_equal(p.depth, 1);
}

static void test_count_given_wins(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 10000, false);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.count = 3;
	o.count_given = true;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.total, 1536);
	/* more than the input has: the copy ends at the end of the input */
	o.count = 100;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.total, 51200);
	o.count = 0;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.total, 0);
	/* a stream input with count= has a known total */
	in = fifo("pipe", false);
	o.count = 4;
	o.bs = 1000;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.total, 4000);
}

static void test_count_range_too_large(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 10000, false);
	struct pdd_dev out = regfile("out.img", true, 0, false);

	(void)state;
	o.count = INT64_MAX;
	o.count_given = true;
	assert_plan_refused(&o, &in, &out,
			    "count=9223372036854775807 bs=512: the range is too large");
}

static void test_offsets_too_large(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 10000, false);
	struct pdd_dev out = regfile("out.img", true, 0, false);

	(void)state;
	o.skip = 1ULL << 54;
	assert_plan_refused(&o, &in, &out, "skip=18014398509481984: offset too large");
	cap_reset();
	o.skip = 0;
	o.seek = 1ULL << 54;
	assert_plan_refused(&o, &in, &out, "seek=18014398509481984: offset too large");
}

static void test_zero_without_count_refused(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = zero();
	struct pdd_dev out = discard();
	struct pdd_plan p;

	(void)state;
	assert_plan_refused(&o, &in, &out, "'/dev/zero' never ends: give count=");
	cap_reset();
	o.count = 8;
	o.count_given = true;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.total, 4096);
}

static void test_stream_input_until_eof(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = fifo("standard input", false);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.skip = 5;
	assert_plan_ok(&o, &in, &out, &p);
	assert_true(p.total == PDD_UNTIL_EOF);
	assert_int_equal(p.in_off, 2560);
	/* no count of transfers to cap the depth */
	assert_int_equal(p.depth, 64);
	assert_int_equal(p.threads, 4);
}

/* map= resumes by position: no streams, no input of unknown size */
static void test_map_needs_positions(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = fifo("standard input", false);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_dev file = regfile("in.img", false, 1 * MiB, false);
	struct pdd_dev pipe = fifo("standard output", true);
	struct pdd_plan p;

	(void)state;
	o.map = "m";
	assert_plan_refused(&o, &in, &out,
			    "map=m: 'standard input' is a fifo; a map needs both sides to seek");
	cap_reset();
	assert_plan_refused(&o, &file, &pipe,
			    "map=m: 'standard output' is a fifo; a map needs both sides to seek");
	cap_reset();
	in = dev("/dev/ttyS0", PDD_KIND_FILE, false);	/* seekable, no size */
	in.seekable = true;
	assert_plan_refused(&o, &in, &out,
			    "map=m: the size of '/dev/ttyS0' is not known; give count=");
	cap_reset();
	o.count = 8;
	o.count_given = true;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.total, 4096);
	cap_reset();
	assert_plan_ok(&o, &file, &out, &p);
}

/* --- direct I/O alignment ------------------------------------------------ */

static void test_skip_unaligned_on_4kn_refused(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = blockdev("/dev/sdb", false, 4096, 64 * MiB, true);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.bs = 512;
	o.skip = 1;
	assert_plan_refused(&o, &in, &out,
			    "skip=1: offset 512 of '/dev/sdb' is not a multiple of its logical block size 4096; with bs=512 skip= must be a multiple of 8");
	cap_reset();
	o.skip = 12;
	assert_plan_refused(&o, &in, &out,
			    "skip=12: offset 6144 of '/dev/sdb' is not a multiple of its logical block size 4096; with bs=512 skip= must be a multiple of 8");
	cap_reset();
	o.skip = 16;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.in_off, 8192);
}

static void test_skip_multiple_is_lbs_over_gcd(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = blockdev("/dev/sdb", false, 4096, 64 * MiB, true);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	/* 6144 = 1.5 * 4096: every second block lands on a sector */
	o.bs = 6144;
	o.bpt = 2;
	o.skip = 1;
	assert_plan_refused(&o, &in, &out,
			    "skip=1: offset 6144 of '/dev/sdb' is not a multiple of its logical block size 4096; with bs=6144 skip= must be a multiple of 2");
	cap_reset();
	o.skip = 2;
	assert_plan_ok(&o, &in, &out, &p);
	cap_reset();
	o.bs = 1000;
	o.bpt = 4096;
	o.skip = 8;
	assert_plan_refused(&o, &in, &out,
			    "skip=8: offset 8000 of '/dev/sdb' is not a multiple of its logical block size 4096; with bs=1000 skip= must be a multiple of 512");
}

static void test_seek_unaligned_on_4kn_refused(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1 * MiB, false);
	struct pdd_dev out = blockdev("/dev/sdc", true, 4096, 64 * MiB, true);
	struct pdd_plan p;

	(void)state;
	o.bs = 512;
	o.seek = 3;
	assert_plan_refused(&o, &in, &out,
			    "seek=3: offset 1536 of '/dev/sdc' is not a multiple of its logical block size 4096; with bs=512 seek= must be a multiple of 8");
	cap_reset();
	o.seek = 8;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.out_off, 4096);
}

static void test_bpt_unaligned_on_4kn_refused(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = blockdev("/dev/sdb", false, 4096, 64 * MiB, true);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.bs = 512;
	o.bpt = 1;
	assert_plan_refused(&o, &in, &out,
			    "bs=512 bpt=1: a transfer of 512 bytes is not a multiple of the logical block size 4096 of '/dev/sdb'; with bs=512 bpt= must be a multiple of 8");
	cap_reset();
	o.bpt = 12;
	assert_plan_refused(&o, &in, &out,
			    "bs=512 bpt=12: a transfer of 6144 bytes is not a multiple of the logical block size 4096 of '/dev/sdb'; with bs=512 bpt= must be a multiple of 8");
	cap_reset();
	/* the same on the output side */
	in = regfile("in.img", false, 1 * MiB, false);
	out = blockdev("/dev/sdc", true, 4096, 64 * MiB, true);
	o.bpt = 1;
	assert_plan_refused(&o, &in, &out,
			    "bs=512 bpt=1: a transfer of 512 bytes is not a multiple of the logical block size 4096 of '/dev/sdc'; with bs=512 bpt= must be a multiple of 8");
	cap_reset();
	o.bpt = 24;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.xfer, 12288);
}

static void test_nodirect_block_device_not_refused(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = blockdev("/dev/sdb", false, 4096, 64 * MiB, false);
	struct pdd_dev out = blockdev("/dev/sdc", true, 4096, 128 * MiB, false);
	struct pdd_plan p;

	(void)state;
	o.bs = 512;
	o.bpt = 1;
	o.skip = 1;
	o.seek = 3;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.in_off, 512);
	assert_int_equal(p.out_off, 1536);
	assert_int_equal(p.xfer, 512);
}

static void test_direct_regular_file_not_refused(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1 * MiB, true);
	struct pdd_dev out = regfile("out.img", true, 0, true);
	struct pdd_plan p;

	(void)state;
	o.bs = 512;
	o.bpt = 1;
	o.skip = 1;
	o.seek = 3;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.total, 1 * MiB - 512);
}

static void test_aligned_512_device_not_refused(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = blockdev("/dev/sdb", false, 512, 64 * MiB, true);
	struct pdd_dev out = blockdev("/dev/sdc", true, 512, 128 * MiB, true);
	struct pdd_plan p;

	(void)state;
	o.bs = 512;
	o.bpt = 1;
	o.skip = 1;
	o.seek = 3;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.total, 64 * MiB - 512);
}

/* --- the destination ----------------------------------------------------- */

static void test_small_block_destination_refused(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1 * MiB, false);
	struct pdd_dev out = blockdev("/dev/sdc", true, 512, 512 * KiB, true);
	struct pdd_plan p;

	(void)state;
	assert_plan_refused(&o, &in, &out,
			    "'/dev/sdc' is too small: the copy needs 1048576 bytes from byte 0 on, and the device holds 524288; give count= to copy less");
	cap_reset();
	/* it fits exactly */
	out.size = 1 * MiB;
	assert_plan_ok(&o, &in, &out, &p);
	cap_reset();
	/* but not after seek= */
	o.seek = 1;
	assert_plan_refused(&o, &in, &out,
			    "'/dev/sdc' is too small: the copy needs 1048576 bytes from byte 512 on, and the device holds 1048576; give count= to copy less");
	cap_reset();
	/* seek= past the end of the device */
	o.seek = 4096;
	assert_plan_refused(&o, &in, &out,
			    "'/dev/sdc' is too small: the copy needs 1048576 bytes from byte 2097152 on, and the device holds 1048576; give count= to copy less");
}

static void test_small_destination_with_count_allowed(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1 * MiB, false);
	struct pdd_dev out = blockdev("/dev/sdc", true, 512, 512 * KiB, true);
	struct pdd_plan p;

	(void)state;
	o.count = 2048;
	o.count_given = true;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.total, 1 * MiB);
}

static void test_small_file_destination_allowed(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1 * MiB, false);
	struct pdd_dev out = regfile("out.img", true, 4096, false);
	struct pdd_plan p;

	(void)state;
	/* a file grows */
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.total, 1 * MiB);
}

static void test_seek_on_fifo_refused(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1 * MiB, false);
	struct pdd_dev out = fifo("out.fifo", true);
	struct pdd_plan p;

	(void)state;
	o.seek = 1;
	assert_plan_refused(&o, &in, &out, "seek=1: 'out.fifo' is a fifo and cannot seek");
	cap_reset();
	o.seek = 0;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.out_off, 0);
}

/* --- sg and raw devices -------------------------------------------------- */

/* SCSI addresses logical blocks: bs= on an sg side is its block size */
static void test_sg_bs_mismatch_refused(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = sgdev("/dev/sg1", false, 4096, 64 * MiB, 0);
	struct pdd_dev out = regfile("out.img", true, 0, false);

	(void)state;
	o.engine = "auto";
	o.bs = 512;
	assert_plan_refused(&o, &in, &out,
			    "bs=512: '/dev/sg1' is an sg device with 4096-byte logical blocks; give bs=4096");
	cap_reset();
	o.bs = 8192;
	assert_plan_refused(&o, &in, &out,
			    "bs=8192: '/dev/sg1' is an sg device with 4096-byte logical blocks; give bs=4096");
	cap_reset();
	/* the same on the output side */
	in = regfile("in.img", false, 1 * MiB, false);
	out = sgdev("/dev/sg2", true, 512, 64 * MiB, 0);
	o.bs = 4096;
	assert_plan_refused(&o, &in, &out,
			    "bs=4096: '/dev/sg2' is an sg device with 512-byte logical blocks; give bs=512");
	cap_reset();
	/* bs= does not come from the sg output when the input is a device
	 * with a block size of its own */
	in = blockdev("/dev/sdb", false, 512, 64 * MiB, true);
	out = sgdev("/dev/sg2", true, 4096, 64 * MiB, 0);
	o.bs = 0;
	assert_plan_refused(&o, &in, &out,
			    "bs=512: '/dev/sg2' is an sg device with 4096-byte logical blocks; give bs=4096");
	cap_reset();
	/* nor can two sg devices with different blocks meet */
	in = sgdev("/dev/sg1", false, 512, 64 * MiB, 0);
	assert_plan_refused(&o, &in, &out,
			    "bs=512: '/dev/sg2' is an sg device with 4096-byte logical blocks; give bs=4096");
}

static void test_sg_max_xfer_refused(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = sgdev("/dev/sg1", false, 512, 64 * MiB, 64 * KiB);
	struct pdd_dev out = regfile("out.img", true, 0, false);

	(void)state;
	o.engine = "auto";
	o.bpt = 129;
	assert_plan_refused(&o, &in, &out,
			    "bpt=129: a transfer of 66048 bytes is more than one command to '/dev/sg1' may move (65536 bytes); give bpt=128 or less");
	cap_reset();
	/* a limit that is no multiple of bs: the most whole blocks */
	in = sgdev("/dev/sg1", false, 4096, 64 * MiB, 120 * KiB);
	o.bpt = 31;
	assert_plan_refused(&o, &in, &out,
			    "bpt=31: a transfer of 126976 bytes is more than one command to '/dev/sg1' may move (122880 bytes); give bpt=30 or less");
	cap_reset();
	/* the same on the output side */
	in = regfile("in.img", false, 1 * MiB, false);
	out = sgdev("/dev/sg2", true, 512, 64 * MiB, 32 * KiB);
	o.bpt = 65;
	assert_plan_refused(&o, &in, &out,
			    "bpt=65: a transfer of 33280 bytes is more than one command to '/dev/sg2' may move (32768 bytes); give bpt=64 or less");
}

/* a block size wrong for the sg side is named before its transfer size */
static void test_sg_bs_checked_before_max_xfer(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = sgdev("/dev/sg1", false, 4096, 64 * MiB, 4 * KiB);
	struct pdd_dev out = regfile("out.img", true, 0, false);

	(void)state;
	o.bs = 512;
	o.bpt = 128;
	assert_plan_refused(&o, &in, &out,
			    "bs=512: '/dev/sg1' is an sg device with 4096-byte logical blocks; give bs=4096");
}

static void test_sg_output_too_small_refused(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1 * MiB, false);
	struct pdd_dev out = sgdev("/dev/sg2", true, 512, 512 * KiB, 0);

	(void)state;
	o.engine = "auto";
	assert_plan_refused(&o, &in, &out,
			    "'/dev/sg2' is too small: the copy needs 1048576 bytes from byte 0 on, and the device holds 524288; give count= to copy less");
	cap_reset();
	out.size = 1 * MiB;
	o.seek = 1;
	assert_plan_refused(&o, &in, &out,
			    "'/dev/sg2' is too small: the copy needs 1048576 bytes from byte 512 on, and the device holds 1048576; give count= to copy less");
}

/* a raw device is a device: direct I/O alignment and the room check */
static void test_raw_device_alignment_refused(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = rawdev("/dev/raw/raw1", false, 4096, 64 * MiB);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.bs = 512;
	o.skip = 1;
	assert_plan_refused(&o, &in, &out,
			    "skip=1: offset 512 of '/dev/raw/raw1' is not a multiple of its logical block size 4096; with bs=512 skip= must be a multiple of 8");
	cap_reset();
	o.skip = 8;
	o.bpt = 4;
	assert_plan_refused(&o, &in, &out,
			    "bs=512 bpt=4: a transfer of 2048 bytes is not a multiple of the logical block size 4096 of '/dev/raw/raw1'; with bs=512 bpt= must be a multiple of 8");
	cap_reset();
	o.bpt = 8;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.in_off, 4096);
	assert_int_equal(p.xfer, 4096);
	/* its buffers are aligned to its logical block, and to a page */
	assert_int_equal(p.buf_align, page_size() > 4096 ? page_size() : 4096);
	cap_reset();
	/* on the output side */
	in = regfile("in.img", false, 1 * MiB, false);
	out = rawdev("/dev/raw/raw2", true, 4096, 64 * MiB);
	o = opts();
	o.bs = 512;
	o.seek = 3;
	assert_plan_refused(&o, &in, &out,
			    "seek=3: offset 1536 of '/dev/raw/raw2' is not a multiple of its logical block size 4096; with bs=512 seek= must be a multiple of 8");
}

static void test_raw_device_defaults_and_room(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = rawdev("/dev/raw/raw1", false, 4096, 64 * MiB);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	/* bs= from a raw input, as from a block device */
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bs, 4096);
	assert_int_equal(p.bpt, 32);
	assert_int_equal(p.total, 64 * MiB);
	cap_reset();
	in = regfile("in.img", false, 1 * MiB, false);
	out = rawdev("/dev/raw/raw2", true, 512, 512 * KiB);
	assert_plan_refused(&o, &in, &out,
			    "'/dev/raw/raw2' is too small: the copy needs 1048576 bytes from byte 0 on, and the device holds 524288; give count= to copy less");
	cap_reset();
	o.count = 1024;
	o.count_given = true;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.total, 512 * KiB);
}

/* an NBD export whose server gives a minimum block size: libnbd refuses
 * requests that are not multiples of it, and there is no page cache for
 * the rest, so the plan refuses what could only fail there */
static void test_nbd_minimum_block_refused(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = nbdexport("nbd://a/", false, 4096, 8 * MiB, 1 * MiB);
	struct pdd_dev out = regfile("out.img", true, 0, false);

	(void)state;
	o.bs = 512;
	o.skip = 1;
	assert_plan_refused(&o, &in, &out,
			    "skip=1: offset 512 of 'nbd://a/' is not a multiple of its logical block size 4096; with bs=512 skip= must be a multiple of 8");
	cap_reset();
	o.skip = 8;
	o.bpt = 4;
	assert_plan_refused(&o, &in, &out,
			    "bs=512 bpt=4: a transfer of 2048 bytes is not a multiple of the logical block size 4096 of 'nbd://a/'; with bs=512 bpt= must be a multiple of 8");
	cap_reset();
	o.bpt = 8;
	o.count = 9;
	o.count_given = true;
	assert_plan_refused(&o, &in, &out,
			    "'nbd://a/' is an NBD export, which moves whole 4096-byte blocks only, and the copy is 4608 bytes; give a count= of whole blocks");
	cap_reset();
	in = regfile("in.img", false, 1 * MiB, false);
	out = nbdexport("nbd://b/", true, 4096, 8 * MiB, 1 * MiB);
	o = opts();
	o.bs = 512;
	o.seek = 3;
	assert_plan_refused(&o, &in, &out,
			    "seek=3: offset 1536 of 'nbd://b/' is not a multiple of its logical block size 4096; with bs=512 seek= must be a multiple of 8");
}

#ifdef HAVE_LIBNBD
/* a server with no minimum, or a minimum of 1, takes any byte range:
 * bs= is 512 by default, as for a file, and nothing is refused */
static void test_nbd_any_byte(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = nbdexport("nbd://a/", false, 1, 8 * MiB, 32 * MiB);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bs, 512);
	assert_int_equal(p.xfer, 64 * KiB);
	cap_reset();
	o.bs = 1;
	o.skip = 1;
	o.bpt = 7;
	o.count = 1000;
	o.count_given = true;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.in_off, 1);
	assert_int_equal(p.total, 1000);
	cap_reset();
	/* a 4096-byte minimum aligned: accepted */
	in = nbdexport("nbd://a/", false, 4096, 8 * MiB, 1 * MiB);
	o = opts();
	o.bs = 512;
	o.skip = 8;
	o.bpt = 8;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.in_off, 4096);
}
#endif

#ifdef HAVE_SGUTILS
/* sparse='s default grain on an sg output: 4096 bytes, or the block when
 * larger, always whole blocks (WRITE SAME zeroes whole blocks): 4160 on
 * a disk of 520-byte blocks */
static void test_sg_sparse_grain_whole_blocks(void **state)
{
	static const unsigned int lbs[] = { 512, 4096, 8192, 520 };
	static const size_t want[] = { 4096, 4096, 8192, 4160 };
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1 * MiB, false);
	struct pdd_plan p;

	(void)state;
	o.engine = "auto";
	for (size_t i = 0; i < sizeof(lbs) / sizeof(lbs[0]); i++) {
		struct pdd_dev out = sgdev("/dev/sg2", true, lbs[i], 64 * MiB, 0);

		o.bs = lbs[i];
		assert_plan_ok(&o, &in, &out, &p);
		assert_int_equal(p.sparse, want[i]);
	}
}

/* bs= left out: the sg side's logical block */
static void test_sg_bs_default(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = sgdev("/dev/sg1", false, 4096, 64 * MiB, 0);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.engine = "auto";
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bs, 4096);
	assert_int_equal(p.bpt, 32);
	assert_int_equal(p.xfer, 128 * KiB);
	assert_int_equal(p.total, 64 * MiB);
	/* from an sg output when the input is a file */
	in = regfile("in.img", false, 1 * MiB, false);
	out = sgdev("/dev/sg2", true, 4096, 64 * MiB, 0);
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bs, 4096);
	assert_int_equal(p.bpt, 32);
	assert_int_equal(p.total, 1 * MiB);
	/* or a stream */
	in = fifo("pipe", false);
	out = sgdev("/dev/sg2", true, 512, 64 * MiB, 0);
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bs, 512);
	assert_int_equal(p.bpt, 128);
	assert_true(p.total == PDD_UNTIL_EOF);
	/* the input's block wins when both are sg and agree */
	in = sgdev("/dev/sg1", false, 512, 64 * MiB, 0);
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bs, 512);
	/* and bs= given equal to the block is taken */
	o.bs = 512;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bs, 512);
}

/* without bpt= the transfer shrinks to one command's worth; a block
 * larger than any command is refused on its own terms */
static void test_sg_default_bpt_fits(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1 * MiB, false);
	struct pdd_dev out = sgdev("/dev/sg1", true, 4096, 64 * MiB, 120 * KiB);
	struct pdd_plan p;

	(void)state;
	o.engine = "auto";
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bs, 4096);
	assert_int_equal(p.bpt, 30);
	/* the input side too, and the smaller limit wins */
	in = sgdev("/dev/sg0", false, 4096, 64 * MiB, 64 * KiB);
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bpt, 16);
	cap_reset();
	in = regfile("in.img", false, 1 * MiB, false);
	out = sgdev("/dev/sg1", true, 4096, 64 * MiB, 2048);
	assert_plan_refused(&o, &in, &out,
			    "'/dev/sg1' takes at most 2048 bytes in one command, less than one block of 4096");
}

/* a transfer of exactly the most one command may move is accepted */
static void test_sg_max_xfer_exact(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = sgdev("/dev/sg1", false, 512, 64 * MiB, 64 * KiB);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.engine = "auto";
	o.bpt = 128;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.xfer, 64 * KiB);
	o.bpt = 1;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.xfer, 512);
	/* the default, 128 blocks of 512, fits too */
	o.bpt = 0;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.bpt, 128);
	assert_int_equal(p.xfer, 64 * KiB);
	/* no limit known: only pdd's own */
	in.max_xfer = 0;
	o.bpt = 2048;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.xfer, 1 * MiB);
	/* on the output side */
	in = regfile("in.img", false, 1 * MiB, false);
	out = sgdev("/dev/sg2", true, 4096, 64 * MiB, 120 * KiB);
	o.bpt = 30;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.xfer, 120 * KiB);
}

static void test_sg_small_output_with_count_allowed(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1 * MiB, false);
	struct pdd_dev out = sgdev("/dev/sg2", true, 512, 512 * KiB, 0);
	struct pdd_plan p;

	(void)state;
	o.engine = "auto";
	o.count = 2048;
	o.count_given = true;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.total, 1 * MiB);
	/* and without count=, a device that holds it all */
	o.count = 0;
	o.count_given = false;
	out.size = 1 * MiB;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.total, 1 * MiB);
}

/* an sg side takes the sg engine, on either side; the other side takes
 * its own */
static void test_sg_engine_auto(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = sgdev("/dev/sg1", false, 512, 64 * MiB, 0);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.engine = "auto";
	assert_plan_ok(&o, &in, &out, &p);
	assert_ptr_equal(p.ops[0], &pdd_sg_ops);
	assert_string_equal(p.ops[0]->name, "sg");
	assert_false(p.ops[1]->sg);
	/* 64 KiB transfers: the asynchronous depth, 64; threads= counts
	 * only for a side on the threads engine */
	assert_int_equal(p.depth, 64);
	assert_int_equal(p.threads, p.ops[1]->threaded ? 4 : 1);
	in = regfile("in.img", false, 1 * MiB, false);
	out = sgdev("/dev/sg2", true, 512, 64 * MiB, 0);
	assert_plan_ok(&o, &in, &out, &p);
	assert_ptr_equal(p.ops[1], &pdd_sg_ops);
	assert_false(p.ops[0]->sg);
	/* 1 MiB is 16 transfers of 64 KiB */
	assert_int_equal(p.depth, 16);
	in = sgdev("/dev/sg1", false, 512, 64 * MiB, 0);
	assert_plan_ok(&o, &in, &out, &p);
	assert_ptr_equal(p.ops[0], &pdd_sg_ops);
	assert_ptr_equal(p.ops[1], &pdd_sg_ops);
	assert_int_equal(p.threads, 1);
	/* and named */
	o.engine = "sg";
	o.qd = 7;
	assert_plan_ok(&o, &in, &out, &p);
	assert_ptr_equal(p.ops[0], &pdd_sg_ops);
	assert_int_equal(p.depth, 7);
	/* a copy with no sg side never takes it */
	in = blockdev("/dev/sdb", false, 512, 64 * MiB, true);
	out = blockdev("/dev/sdc", true, 512, 64 * MiB, true);
	o.engine = "auto";
	assert_plan_ok(&o, &in, &out, &p);
	assert_false(p.ops[0]->sg);
	assert_false(p.ops[1]->sg);
	/* an output that discards takes none */
	in = sgdev("/dev/sg1", false, 512, 64 * MiB, 0);
	out = discard();
	assert_plan_ok(&o, &in, &out, &p);
	assert_ptr_equal(p.ops[0], &pdd_sg_ops);
	assert_null(p.ops[1]);
}

/* engine= names the engine of the sides that are not sg devices; an sg
 * side takes sg whatever it says, and engine=sg needs an sg side */
static void test_sg_side_with_named_engine(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = sgdev("/dev/sg1", false, 512, 64 * MiB, 0);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.engine = "threads";
	assert_plan_ok(&o, &in, &out, &p);
	assert_ptr_equal(p.ops[0], &pdd_sg_ops);
	assert_ptr_equal(p.ops[1], &pdd_threads_ops);
	assert_int_equal(p.threads, 4);
#ifdef HAVE_LIBURING
	o.engine = "uring";
	assert_plan_ok(&o, &in, &out, &p);
	assert_ptr_equal(p.ops[0], &pdd_sg_ops);
	assert_ptr_equal(p.ops[1], &pdd_uring_ops);
	assert_int_equal(p.threads, 1);
#endif
#ifdef HAVE_LIBAIO
	o.engine = "aio";
	in = regfile("in.img", false, 1 * MiB, false);
	out = sgdev("/dev/sg2", true, 512, 64 * MiB, 0);
	assert_plan_ok(&o, &in, &out, &p);
	assert_ptr_equal(p.ops[0], &pdd_aio_ops);
	assert_ptr_equal(p.ops[1], &pdd_sg_ops);
#endif
	o.engine = "sg";
	in = blockdev("/dev/sdb", false, 512, 64 * MiB, true);
	out = regfile("out.img", true, 0, false);
	assert_engine_refused(&o, &in, &out, "engine=sg: neither side is an sg device");
	cap_reset();
	in = regfile("in.img", false, 1 * MiB, false);
	assert_engine_refused(&o, &in, &out, "engine=sg: neither side is an sg device");
}
#endif

/* --- depth, threads, buffers --------------------------------------------- */

/* threads: the asynchronous engines' depth (64 KiB transfers by default:
 * 64), and twice the threads where that is more */
static void test_threads_default_depth(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1 * GiB, false);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 64);
	assert_int_equal(p.threads, 4);
	o.threads = 1;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 64);
	assert_int_equal(p.threads, 1);
	o.threads = 100;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 200);
	assert_int_equal(p.threads, 100);
	o.threads = 4;
	o.bpt = 8;		/* 4 KiB transfers: 64, no more */
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 64);
	o.bpt = 1;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 64);
	o.bpt = 2048;		/* 1 MiB: 16 MiB in flight */
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 16);
	o.threads = 12;		/* twice the threads where that is more */
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 24);
}

/* the asynchronous engines: 64 requests, at most 16 MiB, at least 4 */
static void test_async_default_depth(void **state)
{
	(void)state;
	assert_int_equal(pdd_async_depth(512, 4), 64);
	assert_int_equal(pdd_async_depth(4 * KiB, 4), 64);
	assert_int_equal(pdd_async_depth(64 * KiB, 1), 64);
	assert_int_equal(pdd_async_depth(512 * KiB, 16), 32);
	assert_int_equal(pdd_async_depth(256 * KiB, 4), 64);
	assert_int_equal(pdd_async_depth(1 * MiB, 4), 16);
	assert_int_equal(pdd_async_depth(2 * MiB, 4), 8);
	assert_int_equal(pdd_async_depth(8 * MiB, 4), 4);
	assert_int_equal(pdd_async_depth(1 * GiB, 4), 4);
}

#ifdef HAVE_LIBURING
/* engine=uring: its own depth, and one submitting thread whatever threads= */
static void test_uring_plan(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = blockdev("/dev/sdb", false, 512, 64 * MiB, true);
	struct pdd_dev out = blockdev("/dev/sdc", true, 512, 64 * MiB, true);
	struct pdd_plan p;

	(void)state;
	o.engine = "uring";
	o.threads = 8;
	assert_plan_ok(&o, &in, &out, &p);
	assert_ptr_equal(p.ops[0], &pdd_uring_ops);
	assert_ptr_equal(p.ops[1], &pdd_uring_ops);
	assert_int_equal(p.depth, 64);
	assert_int_equal(p.threads, 1);
	o.qd = 5;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 5);
}
#endif

static void test_depth_set_by_qd(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 1 * GiB, false);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	o.qd = 3;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 3);
	/* threads never above depth */
	assert_int_equal(p.threads, 3);
	o.qd = 16;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 16);
	assert_int_equal(p.threads, 4);
}

static void test_depth_capped_by_memory(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 4 * GiB, false);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	/* 32 MiB transfers: 256 MiB holds 8 */
	o.bs = 1 * MiB;
	o.bpt = 32;
	o.threads = 16;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 8);
	assert_int_equal(p.threads, 8);
	o.qd = 4096;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 8);
	/* 100 MiB transfers: 2 fit */
	o.bpt = 100;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 2);
	assert_int_equal(p.threads, 2);
}

static void test_depth_capped_by_transfers(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = regfile("in.img", false, 2 * 64 * KiB + 1, false);
	struct pdd_dev out = regfile("out.img", true, 0, false);
	struct pdd_plan p;

	(void)state;
	/* two whole transfers and a one-byte piece */
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.xfer, 64 * KiB);
	assert_int_equal(p.depth, 3);
	assert_int_equal(p.threads, 3);
	in.size = 2 * 64 * KiB;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 2);
	assert_int_equal(p.threads, 2);
	in.size = 1;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.depth, 1);
	assert_int_equal(p.threads, 1);
}

static void test_buf_align_at_least_page(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = blockdev("/dev/sdb", false, 512, 64 * MiB, true);
	struct pdd_dev out = blockdev("/dev/sdc", true, 512, 64 * MiB, true);
	size_t page = page_size();
	struct pdd_plan p;

	(void)state;
	in.mem_align = out.mem_align = 512;
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.buf_align, page);
	in = fifo("pipe", false);
	out = discard();
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.buf_align, page);
}

static void test_buf_align_follows_devices(void **state)
{
	struct pdd_opts o = opts();
	struct pdd_dev in = blockdev("/dev/sdb", false, 512, 64 * MiB, true);
	struct pdd_dev out = blockdev("/dev/sdc", true, 512, 64 * MiB, true);
	size_t page = page_size();
	struct pdd_plan p;

	(void)state;
	in.mem_align = (unsigned int)(2 * page);
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.buf_align, 2 * page);
	out.mem_align = (unsigned int)(4 * page);
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.buf_align, 4 * page);
	in.mem_align = (unsigned int)(8 * page);
	assert_plan_ok(&o, &in, &out, &p);
	assert_int_equal(p.buf_align, 8 * page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, cap_open, cap_close)
		T(test_bs_defaults_to_block_device_lbs),
		T(test_bs_defaults_to_512_otherwise),
		T(test_bpt_default_follows_bs),
		T(test_bs_and_bpt_given_win),
		T(test_transfer_size_limit),
		T(test_count_from_input_size_minus_skip),
		T(test_skip_to_end_copies_nothing),
		T(test_skip_past_end_gives_zero),
		T(test_count_given_wins),
		T(test_count_range_too_large),
		T(test_offsets_too_large),
		T(test_zero_without_count_refused),
		T(test_stream_input_until_eof),
		T(test_map_needs_positions),
		T(test_skip_unaligned_on_4kn_refused),
		T(test_skip_multiple_is_lbs_over_gcd),
		T(test_seek_unaligned_on_4kn_refused),
		T(test_bpt_unaligned_on_4kn_refused),
		T(test_nodirect_block_device_not_refused),
		T(test_direct_regular_file_not_refused),
		T(test_aligned_512_device_not_refused),
		T(test_small_block_destination_refused),
		T(test_small_destination_with_count_allowed),
		T(test_small_file_destination_allowed),
		T(test_seek_on_fifo_refused),
		T(test_sg_bs_mismatch_refused),
		T(test_sg_max_xfer_refused),
		T(test_sg_bs_checked_before_max_xfer),
		T(test_sg_output_too_small_refused),
		T(test_raw_device_alignment_refused),
		T(test_raw_device_defaults_and_room),
		T(test_nbd_minimum_block_refused),
#ifdef HAVE_LIBNBD
		T(test_nbd_any_byte),
#endif
#ifdef HAVE_SGUTILS
		T(test_sg_sparse_grain_whole_blocks),
		T(test_sg_bs_default),
		T(test_sg_max_xfer_exact),
		T(test_sg_default_bpt_fits),
		T(test_sg_small_output_with_count_allowed),
		T(test_sg_engine_auto),
		T(test_sg_side_with_named_engine),
#endif
		T(test_threads_default_depth),
		T(test_depth_set_by_qd),
		T(test_async_default_depth),
#ifdef HAVE_LIBURING
		T(test_uring_plan),
#endif
		T(test_depth_capped_by_memory),
		T(test_depth_capped_by_transfers),
		T(test_buf_align_at_least_page),
		T(test_buf_align_follows_devices),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
