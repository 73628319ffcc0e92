// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for scsi.c: READ and WRITE CDBs of every size byte by byte,
 * WRITE SAME(16) (never UNMAP) and the sense that says a device lacks it,
 * the automatic raise of cdbsz= to a size that can carry the request, the
 * FUA and DPO bits, and sense data (fixed and descriptor format) turned
 * into pdd's error codes, the INFO field and the exit status; a whole
 * command's outcome (SCSI status, sense, host and driver status) from a
 * hand-built sg_io_hdr, and which failures are sent again, how often.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <scsi/sg.h>
#include <scsi/sg_io_linux.h>
#include <scsi/sg_lib.h>
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

/* --- a whole command's outcome ------------------------------------------- */

#define SAM_CHECK_CONDITION	0x02	/* SCSI status byte */
#define MASKED_CHECK_CONDITION	0x01	/* the same, shifted right, as sg gives it */

/* A finished sg v3 command: status, host and driver status, and sense
 * data of len bytes (0 for none) copied into the header's own buffer. */
struct cmd {
	struct sg_io_hdr h;
	uint8_t sense[32];
};

static void cmd_init(struct cmd *c, uint8_t status, uint16_t host,
		     uint16_t driver, const uint8_t *sense, int len)
{
	memset(c, 0, sizeof(*c));
	c->h.interface_id = 'S';
	c->h.status = status;
	c->h.masked_status = (uint8_t)((status >> 1) & 0x7f);
	c->h.host_status = host;
	c->h.driver_status = driver;
	c->h.sbp = c->sense;
	c->h.mx_sb_len = sizeof(c->sense);
	memset(c->sense, 0xee, sizeof(c->sense));
	if (len)
		memcpy(c->sense, sense, (size_t)len);
	c->h.sb_len_wr = (uint8_t)len;
}

/* CHECK CONDITION with DRIVER_SENSE, as the sg driver reports sense */
static void cmd_check(struct cmd *c, const uint8_t *sense, int len)
{
	cmd_init(c, SAM_CHECK_CONDITION, 0, SG_LIB_DRIVER_SENSE, sense, len);
}

/* pdd_scsi_result() twice, *info set to junk and *recovered to false then
 * true first: both calls must store the same, so each check sees what
 * the call stored and nothing left from before */
static int result(const struct cmd *c, uint64_t *info, bool *recovered)
{
	uint64_t info2 = 0xa5a5a5a5a5a5a5a5ULL;
	bool rec2 = true;
	int rc, rc2;

	*info = 0x5a5a5a5a5a5a5a5aULL;
	*recovered = false;
	rc = pdd_scsi_result(&c->h, info, recovered);
	rc2 = pdd_scsi_result(&c->h, &info2, &rec2);
	assert_int_equal(rc2, rc);
	assert_true(info2 == *info);
	assert_int_equal(rec2, *recovered);
	return rc;
}

static void test_result_constants(void **state)
{
	(void)state;
	/* the kernel's numbers the tests below stand on */
	assert_int_equal(SG_LIB_DRIVER_SENSE, 0x08);
	assert_int_equal(SG_LIB_DID_TIME_OUT, 0x03);
	assert_int_equal(SG_LIB_DID_ERROR, 0x07);
	assert_int_equal(SG_LIB_CAT_MEDIUM_HARD, 3);
	assert_int_equal(SG_LIB_CAT_ILLEGAL_REQ, 5);
	assert_int_equal(SG_LIB_CAT_UNIT_ATTENTION, 6);
	assert_int_equal(SG_LIB_CAT_ABORTED_COMMAND, 11);
	assert_int_equal(PDD_ERR_SCSI(SG_LIB_CAT_MEDIUM_HARD), -1003);
}

static void test_result_good(void **state)
{
	struct cmd c;
	uint64_t info;
	bool rec;

	(void)state;
	cmd_init(&c, 0, 0, 0, NULL, 0);
	assert_int_equal(result(&c, &info, &rec), 0);
	assert_false(rec);
	assert_int_equal(info, ~0ULL);
	/* GOOD whatever junk lies in an unwritten sense buffer */
	fixed_sense(c.sense, 0x3, 0x11, 0, true, 77);
	assert_int_equal(result(&c, &info, &rec), 0);
	assert_false(rec);
	assert_int_equal(info, ~0ULL);
}

static void test_result_medium_fixed_info(void **state)
{
	uint8_t s[32];
	struct cmd c;
	uint64_t info;
	bool rec;
	int n;

	(void)state;
	n = fixed_sense(s, 0x3, 0x11, 0x00, true, 0x1234);
	cmd_check(&c, s, n);
	assert_int_equal(c.h.masked_status, MASKED_CHECK_CONDITION);
	assert_int_equal(result(&c, &info, &rec), PDD_ERR_SCSI(SG_LIB_CAT_MEDIUM_HARD));
	assert_int_equal(info, 0x1234);
	assert_false(rec);
	/* without the VALID bit the INFO bytes mean nothing */
	n = fixed_sense(s, 0x3, 0x11, 0x00, false, 0x1234);
	cmd_check(&c, s, n);
	assert_int_equal(result(&c, &info, &rec), PDD_ERR_SCSI(SG_LIB_CAT_MEDIUM_HARD));
	assert_int_equal(info, ~0ULL);
	/* a hardware error is the same category */
	n = fixed_sense(s, 0x4, 0x44, 0x00, true, 9);
	cmd_check(&c, s, n);
	assert_int_equal(result(&c, &info, &rec), PDD_ERR_SCSI(SG_LIB_CAT_MEDIUM_HARD));
	assert_int_equal(info, 9);
	/* sense with DRIVER_SENSE alone, the status byte lost on the way */
	n = fixed_sense(s, 0x3, 0x11, 0x00, true, 0x1234);
	cmd_init(&c, 0, 0, SG_LIB_DRIVER_SENSE, s, n);
	assert_int_equal(result(&c, &info, &rec), PDD_ERR_SCSI(SG_LIB_CAT_MEDIUM_HARD));
	assert_int_equal(info, 0x1234);
	/* or CHECK CONDITION alone */
	cmd_init(&c, SAM_CHECK_CONDITION, 0, 0, s, n);
	assert_int_equal(result(&c, &info, &rec), PDD_ERR_SCSI(SG_LIB_CAT_MEDIUM_HARD));
	assert_int_equal(info, 0x1234);
}

static void test_result_medium_descriptor_info(void **state)
{
	static const uint8_t s[20] = {
		0x72, 0x3, 0x11, 0x00, 0, 0, 0, 12,
		0x00, 0x0a, 0x80, 0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
	};
	struct cmd c;
	uint64_t info;
	bool rec;

	(void)state;
	cmd_check(&c, s, (int)sizeof(s));
	assert_int_equal(result(&c, &info, &rec), PDD_ERR_SCSI(SG_LIB_CAT_MEDIUM_HARD));
	assert_true(info == 0x0123456789abcdefULL);
	assert_false(rec);
}

/* the device corrected it: the data is good, and the caller is told */
static void test_result_recovered(void **state)
{
	uint8_t s[32];
	struct cmd c;
	uint64_t info;
	bool rec;
	int n;

	(void)state;
	n = fixed_sense(s, 0x1, 0x17, 0x01, true, 0x2000);
	cmd_check(&c, s, n);
	assert_int_equal(result(&c, &info, &rec), 0);
	assert_true(rec);
	assert_int_equal(info, 0x2000);
	n = fixed_sense(s, 0x1, 0x17, 0x01, false, 0x2000);
	cmd_check(&c, s, n);
	assert_int_equal(result(&c, &info, &rec), 0);
	assert_true(rec);
	assert_int_equal(info, ~0ULL);
}

static void test_result_sense_categories(void **state)
{
	static const struct {
		uint8_t key, asc, ascq;
		int cat;
	} cases[] = {
		{ 0x6, 0x29, 0x00, SG_LIB_CAT_UNIT_ATTENTION },	/* power on, reset */
		{ 0x6, 0x28, 0x00, SG_LIB_CAT_UNIT_ATTENTION },	/* medium changed */
		{ 0x2, 0x04, 0x01, SG_LIB_CAT_NOT_READY },	/* becoming ready */
		{ 0x2, 0x3a, 0x00, SG_LIB_CAT_NOT_READY },	/* no medium */
		{ 0x5, 0x24, 0x00, SG_LIB_CAT_ILLEGAL_REQ },	/* invalid field in CDB */
		{ 0x5, 0x21, 0x00, SG_LIB_CAT_ILLEGAL_REQ },	/* LBA out of range */
		{ 0x5, 0x20, 0x00, SG_LIB_CAT_ILLEGAL_REQ },	/* invalid opcode */
		{ 0xb, 0x47, 0x00, SG_LIB_CAT_ABORTED_COMMAND },	/* parity error */
		{ 0xb, 0x00, 0x00, SG_LIB_CAT_ABORTED_COMMAND },
		{ 0x7, 0x27, 0x00, SG_LIB_CAT_DATA_PROTECT },	/* write protected */
	};
	uint8_t s[32];
	struct cmd c;
	uint64_t info;
	bool rec;

	(void)state;
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char got[64], want[64];
		int n = fixed_sense(s, cases[i].key, cases[i].asc, cases[i].ascq, false, 0);

		cmd_check(&c, s, n);
		snprintf(got, sizeof(got), "%x/%02x/%02x -> %d", cases[i].key,
			 cases[i].asc, cases[i].ascq, result(&c, &info, &rec));
		snprintf(want, sizeof(want), "%x/%02x/%02x -> %d", cases[i].key,
			 cases[i].asc, cases[i].ascq, PDD_ERR_SCSI(cases[i].cat));
		assert_string_equal(got, want);
		assert_int_equal(info, ~0ULL);
		assert_false(rec);
	}
	/* the exit statuses the brief names */
	assert_int_equal(PDD_ERR_SCSI(SG_LIB_CAT_UNIT_ATTENTION), PDD_ERR_SCSI(6));
	assert_int_equal(PDD_ERR_SCSI(SG_LIB_CAT_NOT_READY), PDD_ERR_SCSI(2));
	assert_int_equal(PDD_ERR_SCSI(SG_LIB_CAT_ABORTED_COMMAND), PDD_ERR_SCSI(11));
	/* an illegal request with a valid INFO field keeps it */
	cmd_check(&c, s, fixed_sense(s, 0x5, 0x21, 0x00, true, 0xffffffff));
	assert_int_equal(result(&c, &info, &rec), PDD_ERR_SCSI(SG_LIB_CAT_ILLEGAL_REQ));
	assert_int_equal(info, 0xffffffffULL);
}

/* a timeout is SCSI category 33 (exit 33), whoever noticed it */
static void test_result_timeout(void **state)
{
	struct cmd c;
	uint64_t info;
	bool rec;

	(void)state;
	cmd_init(&c, 0, SG_LIB_DID_TIME_OUT, 0, NULL, 0);
	assert_int_equal(result(&c, &info, &rec), PDD_ERR_SCSI(SG_LIB_CAT_TIMEOUT));
	assert_int_equal(info, ~0ULL);
	assert_false(rec);
	cmd_init(&c, 0, 0, SG_LIB_DRIVER_TIMEOUT, NULL, 0);
	assert_int_equal(result(&c, &info, &rec), PDD_ERR_SCSI(SG_LIB_CAT_TIMEOUT));
	/* but sense, when there is some, says more */
	{
		uint8_t s[32];
		int n = fixed_sense(s, 0x6, 0x29, 0x00, false, 0);

		cmd_init(&c, SAM_CHECK_CONDITION, SG_LIB_DID_TIME_OUT,
			 SG_LIB_DRIVER_SENSE, s, n);
		assert_int_equal(result(&c, &info, &rec),
				 PDD_ERR_SCSI(SG_LIB_CAT_UNIT_ATTENTION));
	}
}

/* a transport failure without sense is an I/O error */
static void test_result_transport_error(void **state)
{
	struct cmd c;
	uint64_t info;
	bool rec;

	(void)state;
	cmd_init(&c, 0, SG_LIB_DID_ERROR, 0, NULL, 0);
	assert_int_equal(result(&c, &info, &rec), -EIO);
	assert_int_equal(info, ~0ULL);
	assert_false(rec);
	cmd_init(&c, 0, SG_LIB_DID_RESET, 0, NULL, 0);
	assert_int_equal(result(&c, &info, &rec), -EIO);
	cmd_init(&c, 0, SG_LIB_DID_ABORT, 0, NULL, 0);
	assert_int_equal(result(&c, &info, &rec), -EIO);
	cmd_init(&c, 0, 0, SG_LIB_DRIVER_ERROR, NULL, 0);
	assert_int_equal(result(&c, &info, &rec), -EIO);
	/* CHECK CONDITION, and the sense lost */
	cmd_init(&c, SAM_CHECK_CONDITION, 0, SG_LIB_DRIVER_SENSE, NULL, 0);
	assert_int_equal(result(&c, &info, &rec), -EIO);
	assert_int_equal(info, ~0ULL);
}

/* sense that cannot be decoded is sg3_utils' "sense" category, 98 */
static void test_result_sense_undecodable(void **state)
{
	static const uint8_t s[8] = { 0x00, 0, 0x3, 0, 0, 0, 0, 0 };
	struct cmd c;
	uint64_t info;
	bool rec;

	(void)state;
	cmd_check(&c, s, (int)sizeof(s));
	assert_int_equal(result(&c, &info, &rec), PDD_ERR_SCSI(SG_LIB_CAT_SENSE));
	assert_int_equal(info, ~0ULL);
	assert_true(pdd_err_is_scsi(PDD_ERR_SCSI(SG_LIB_CAT_SENSE)));
	assert_true(pdd_err_is_scsi(PDD_ERR_SCSI(SG_LIB_CAT_OTHER)));
}

/* --- sending a command again --------------------------------------------- */

static void test_again_unit_attention(void **state)
{
	unsigned int tries[2] = { 0, 0 };
	unsigned int n = 0;

	(void)state;
	while (pdd_scsi_again(PDD_ERR_SCSI(SG_LIB_CAT_UNIT_ATTENTION), tries) && n < 1000)
		n++;
	assert_int_equal(n, PDD_SCSI_UA_RETRIES);
	assert_int_equal(n, 10);
	assert_int_equal(tries[1], 0);
	/* and no more after that */
	assert_false(pdd_scsi_again(PDD_ERR_SCSI(SG_LIB_CAT_UNIT_ATTENTION), tries));
}

static void test_again_aborted(void **state)
{
	unsigned int tries[2] = { 0, 0 };
	unsigned int n = 0;

	(void)state;
	while (pdd_scsi_again(PDD_ERR_SCSI(SG_LIB_CAT_ABORTED_COMMAND), tries) && n < 10000)
		n++;
	assert_int_equal(n, PDD_SCSI_ABORTED_RETRIES);
	assert_int_equal(n, 256);
	assert_int_equal(tries[0], 0);
	assert_false(pdd_scsi_again(PDD_ERR_SCSI(SG_LIB_CAT_ABORTED_COMMAND), tries));
}

/* the two budgets are apart: spending one leaves the other whole */
static void test_again_counted_apart(void **state)
{
	unsigned int tries[2] = { 0, 0 };
	unsigned int ua = 0, ab = 0;

	(void)state;
	for (int i = 0; i < 300; i++) {
		if (pdd_scsi_again(PDD_ERR_SCSI(SG_LIB_CAT_UNIT_ATTENTION), tries))
			ua++;
		if (pdd_scsi_again(PDD_ERR_SCSI(SG_LIB_CAT_ABORTED_COMMAND), tries))
			ab++;
	}
	assert_int_equal(ua, 10);
	assert_int_equal(ab, 256);
	/* interleaved at the start too */
	tries[0] = tries[1] = 0;
	for (int i = 0; i < 9; i++)
		assert_true(pdd_scsi_again(PDD_ERR_SCSI(SG_LIB_CAT_UNIT_ATTENTION), tries));
	for (int i = 0; i < 256; i++)
		assert_true(pdd_scsi_again(PDD_ERR_SCSI(SG_LIB_CAT_ABORTED_COMMAND), tries));
	assert_true(pdd_scsi_again(PDD_ERR_SCSI(SG_LIB_CAT_UNIT_ATTENTION), tries));
	assert_false(pdd_scsi_again(PDD_ERR_SCSI(SG_LIB_CAT_UNIT_ATTENTION), tries));
	assert_false(pdd_scsi_again(PDD_ERR_SCSI(SG_LIB_CAT_ABORTED_COMMAND), tries));
}

/* what another try cannot mend is never tried again, and costs nothing */
static void test_again_never(void **state)
{
	static const int errs[] = {
		PDD_ERR_SCSI(SG_LIB_CAT_MEDIUM_HARD),
		PDD_ERR_SCSI(SG_LIB_CAT_NOT_READY),
		PDD_ERR_SCSI(SG_LIB_CAT_ILLEGAL_REQ),
		PDD_ERR_SCSI(SG_LIB_CAT_DATA_PROTECT),
		PDD_ERR_SCSI(SG_LIB_CAT_SENSE),
		-EIO,
		PDD_ERR_SCSI(SG_LIB_CAT_TIMEOUT),
		0,
	};
	unsigned int tries[2] = { 0, 0 };

	(void)state;
	for (unsigned int i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		assert_false(pdd_scsi_again(errs[i], tries));
		assert_int_equal(tries[0], 0);
		assert_int_equal(tries[1], 0);
	}
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

/* WRITE SAME(16): opcode 93h, UNMAP, ANCHOR and NDOB 0, never 0 blocks
 * (the whole rest of the medium on a device with WSNZ 0) */
static void test_write_same16(void **state)
{
	uint8_t cdb[16];

	(void)state;
	memset(cdb, 0xee, sizeof(cdb));
	assert_int_equal(pdd_scsi_write_same16_cdb(cdb, 0x0102030405060708ULL, 0x0a0b0c0d), 0);
	assert_memory_equal(cdb, ((const uint8_t[]){ 0x93, 0, 1, 2, 3, 4, 5, 6, 7, 8,
						   0x0a, 0x0b, 0x0c, 0x0d, 0, 0 }), 16);
	assert_int_equal(pdd_scsi_write_same16_cdb(cdb, 5, 1), 0);
	assert_memory_equal(cdb, ((const uint8_t[]){ 0x93, 0, 0, 0, 0, 0, 0, 0, 0, 5,
						   0, 0, 0, 1, 0, 0 }), 16);
	assert_int_equal(pdd_scsi_write_same16_cdb(cdb, 5, 0), -EINVAL);
}

/* a refusal of the command is ILLEGAL REQUEST 20h or 24h, in either
 * sense format; other illegal requests and other keys are failures */
static void test_refused(void **state)
{
	uint8_t s[32];

	(void)state;
	assert_true(pdd_scsi_refused(s, fixed_sense(s, 5, 0x20, 0, false, 0)));
	assert_true(pdd_scsi_refused(s, fixed_sense(s, 5, 0x24, 0, false, 0)));
	assert_false(pdd_scsi_refused(s, fixed_sense(s, 5, 0x21, 0, false, 0)));
	assert_false(pdd_scsi_refused(s, fixed_sense(s, 3, 0x0c, 0, true, 7)));
	assert_false(pdd_scsi_refused(s, fixed_sense(s, 6, 0x20, 0, false, 0)));
	memset(s, 0, sizeof(s));
	s[0] = 0x72;
	s[1] = 5;
	s[2] = 0x20;
	assert_true(pdd_scsi_refused(s, 8));
	assert_false(pdd_scsi_refused(s, 0));
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
		cmocka_unit_test(test_result_constants),
		cmocka_unit_test(test_result_good),
		cmocka_unit_test(test_result_medium_fixed_info),
		cmocka_unit_test(test_result_medium_descriptor_info),
		cmocka_unit_test(test_result_recovered),
		cmocka_unit_test(test_result_sense_categories),
		cmocka_unit_test(test_result_timeout),
		cmocka_unit_test(test_result_transport_error),
		cmocka_unit_test(test_result_sense_undecodable),
		cmocka_unit_test(test_again_unit_attention),
		cmocka_unit_test(test_again_aborted),
		cmocka_unit_test(test_again_counted_apart),
		cmocka_unit_test(test_again_never),
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_write_same16),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_strerror),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
