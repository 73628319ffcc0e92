// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for scsi.c: READ and WRITE CDBs of every size byte by byte,
 * the automatic raise of cdbsz= to a size that can carry the request, the
 * FUA and DPO bits, and sense data (fixed and descriptor format) turned
 * into pdd's error codes, the INFO field and the exit status.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "exitcodes.h"
#include "pdd.h"
#include "scsi.h"

static void check_cdb(int sz, bool write, uint64_t lba, uint32_t blocks,
		      bool fua, bool dpo, const uint8_t *want)
{
	uint8_t cdb[16];

	memset(cdb, 0xee, sizeof(cdb));
	assert_int_equal(pdd_scsi_rw_cdb(cdb, sz, write, lba, blocks, fua, dpo), 0);
	assert_memory_equal(cdb, want, (size_t)sz);
}

static void test_cdb6(void **state)
{
	(void)state;
	check_cdb(6, false, 0x12345, 8, false, false,
		  (const uint8_t[]){ 0x08, 0x01, 0x23, 0x45, 8, 0 });
	check_cdb(6, true, 0x1fffff - 255, 256, false, false,
		  (const uint8_t[]){ 0x0a, 0x1f, 0xff, 0x00, 0, 0 });
}

static void test_cdb10(void **state)
{
	(void)state;
	check_cdb(10, false, 0xdeadbeef, 0x1234, false, false,
		  (const uint8_t[]){ 0x28, 0, 0xde, 0xad, 0xbe, 0xef, 0, 0x12, 0x34, 0 });
	check_cdb(10, true, 7, 1, true, true,
		  (const uint8_t[]){ 0x2a, 0x18, 0, 0, 0, 7, 0, 0, 1, 0 });
}

static void test_cdb12(void **state)
{
	(void)state;
	check_cdb(12, false, 1, 0x10000, false, true,
		  (const uint8_t[]){ 0xa8, 0x10, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0 });
	check_cdb(12, true, 0xfffffffe, 1, true, false,
		  (const uint8_t[]){ 0xaa, 0x08, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 1, 0, 0 });
}

static void test_cdb16(void **state)
{
	(void)state;
	check_cdb(16, false, 0x0102030405060708ULL, 0x0a0b0c0d, false, false,
		  (const uint8_t[]){ 0x88, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 0x0c, 0x0d, 0, 0 });
	check_cdb(16, true, 1ULL << 32, 128, true, false,
		  (const uint8_t[]){ 0x8a, 0x08, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 128, 0, 0 });
}

/* what a size cannot carry is refused, never truncated */
static void test_cdb_limits_refused(void **state)
{
	uint8_t cdb[16];

	(void)state;
	assert_int_equal(pdd_scsi_rw_cdb(cdb, 6, false, 1u << 21, 1, false, false), -EINVAL);
	assert_int_equal(pdd_scsi_rw_cdb(cdb, 6, false, 0, 257, false, false), -EINVAL);
	assert_int_equal(pdd_scsi_rw_cdb(cdb, 6, true, 0, 1, true, false), -EINVAL);
	assert_int_equal(pdd_scsi_rw_cdb(cdb, 10, false, 0, 0x10000, false, false), -EINVAL);
	assert_int_equal(pdd_scsi_rw_cdb(cdb, 10, false, 0xffffffff, 2, false, false), -EINVAL);
	assert_int_equal(pdd_scsi_rw_cdb(cdb, 12, false, 1ULL << 32, 1, false, false), -EINVAL);
	assert_int_equal(pdd_scsi_rw_cdb(cdb, 8, false, 0, 1, false, false), -EINVAL);
}

/* cdbsz= is a floor: raised to the first size that fits, as sgp_dd does */
static void test_cdbsz_raised(void **state)
{
	(void)state;
	assert_int_equal(pdd_scsi_cdbsz_for(10, 0, 128), 10);
	assert_int_equal(pdd_scsi_cdbsz_for(6, 0, 128), 6);
	assert_int_equal(pdd_scsi_cdbsz_for(6, 1u << 21, 1), 10);
	assert_int_equal(pdd_scsi_cdbsz_for(6, 0, 300), 10);
	assert_int_equal(pdd_scsi_cdbsz_for(10, 0, 0x10000), 12);
	assert_int_equal(pdd_scsi_cdbsz_for(10, 1ULL << 32, 1), 16);
	assert_int_equal(pdd_scsi_cdbsz_for(12, 0xffffffffULL, 2), 16);
	assert_int_equal(pdd_scsi_cdbsz_for(16, 0, 1), 16);
}

/* fixed-format sense: response 0x70, VALID bit for INFO, key, ASC/ASCQ */
static int fixed_sense(uint8_t *s, uint8_t key, uint8_t asc, uint8_t ascq,
		       bool valid, uint32_t info)
{
	memset(s, 0, 18);
	s[0] = (uint8_t)(0x70 | (valid ? 0x80 : 0));
	s[2] = key;
	s[3] = (uint8_t)(info >> 24);
	s[4] = (uint8_t)(info >> 16);
	s[5] = (uint8_t)(info >> 8);
	s[6] = (uint8_t)info;
	s[7] = 10;
	s[12] = asc;
	s[13] = ascq;
	return 18;
}

static void test_sense_categories(void **state)
{
	uint8_t s[32];
	uint64_t info;
	int n;

	(void)state;
	n = fixed_sense(s, 0x3, 0x11, 0, true, 4660);
	assert_int_equal(pdd_scsi_sense_err(s, n, &info), PDD_ERR_SCSI(3));
	assert_int_equal(info, 4660);
	n = fixed_sense(s, 0x4, 0x44, 0, false, 0);
	assert_int_equal(pdd_scsi_sense_err(s, n, &info), PDD_ERR_SCSI(3));
	assert_int_equal(info, ~0ULL);
	n = fixed_sense(s, 0x2, 0x04, 0, false, 0);
	assert_int_equal(pdd_scsi_sense_err(s, n, &info), PDD_ERR_SCSI(2));
	n = fixed_sense(s, 0x6, 0x29, 0, false, 0);
	assert_int_equal(pdd_scsi_sense_err(s, n, &info), PDD_ERR_SCSI(6));
	/* LBA out of range and invalid opcode are illegal requests too */
	n = fixed_sense(s, 0x5, 0x21, 0, false, 0);
	assert_int_equal(pdd_scsi_sense_err(s, n, &info), PDD_ERR_SCSI(5));
	n = fixed_sense(s, 0x5, 0x20, 0, false, 0);
	assert_int_equal(pdd_scsi_sense_err(s, n, &info), PDD_ERR_SCSI(5));
	n = fixed_sense(s, 0x5, 0x24, 0, false, 0);
	assert_int_equal(pdd_scsi_sense_err(s, n, &info), PDD_ERR_SCSI(5));
	n = fixed_sense(s, 0xb, 0, 0, false, 0);
	assert_int_equal(pdd_scsi_sense_err(s, n, &info), PDD_ERR_SCSI(11));
	/* recovered: the data is good */
	n = fixed_sense(s, 0x1, 0x17, 0, false, 0);
	assert_int_equal(pdd_scsi_sense_err(s, n, &info), 0);
}

/* descriptor format (0x72) with an information descriptor: a 64-bit LBA */
static void test_sense_descriptor_info(void **state)
{
	uint8_t s[20] = { 0x72, 0x3, 0x11, 0x00, 0, 0, 0, 12,
			  0x00, 0x0a, 0x80, 0, 0, 0, 0, 1, 0, 0, 0, 5 };
	uint64_t info;

	(void)state;
	assert_int_equal(pdd_scsi_sense_err(s, (int)sizeof(s), &info), PDD_ERR_SCSI(3));
	assert_int_equal(info, (1ULL << 32) + 5);
}

/* the exit status of a SCSI error is sg3_utils' category */
static void test_exit_status(void **state)
{
	struct pdd_result r = { 0 };
	static const int cats[] = { 2, 3, 5, 6, 11 };

	(void)state;
	for (unsigned int i = 0; i < sizeof(cats) / sizeof(cats[0]); i++) {
		r.err = PDD_ERR_SCSI(cats[i]);
		assert_int_equal(pdd_exit_status(&r), cats[i]);
	}
	assert_int_equal(PDD_EXIT_UNIT_ATTENTION, 6);
	r.err = -EIO;
	assert_int_equal(pdd_exit_status(&r), PDD_EXIT_MEDIUM_HARD);
	assert_true(pdd_err_is_scsi(PDD_ERR_SCSI(6)));
	assert_false(pdd_err_is_scsi(-EIO));
}

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(pdd_strerror(PDD_ERR_SCSI(6)), "Unit attention");
	assert_string_equal(pdd_strerror(PDD_ERR_SCSI(2)), "Device not ready");
	assert_string_equal(pdd_strerror(-EIO), "Input/output error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cdb6),
		cmocka_unit_test(test_cdb10),
		cmocka_unit_test(test_cdb12),
		cmocka_unit_test(test_cdb16),
		cmocka_unit_test(test_cdb_limits_refused),
		cmocka_unit_test(test_cdbsz_raised),
		cmocka_unit_test(test_sense_categories),
		cmocka_unit_test(test_sense_descriptor_info),
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_strerror),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
