// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * READ and WRITE CDBs of 6, 10, 12 and 16 bytes, the smallest size that
 * can carry a request, and a command's outcome (status, sense, host and
 * driver status) turned into pdd's error codes: pure functions, so the
 * unit tests check them byte by byte.  Then the two whole commands the
 * device side needs outside the copy, READ CAPACITY and SYNCHRONIZE
 * CACHE, sent through libsgutils2 with the same bounded retries as the
 * sg engine.
 */
#include <errno.h>
#include <scsi/sg.h>
#include <scsi/sg_cmds_basic.h>
#include <scsi/sg_io_linux.h>
#include <scsi/sg_lib.h>
#include <string.h>

#include "scsi.h"

/* the largest LBA + 1 and block count each CDB size can carry */
static bool fits(int cdbsz, uint64_t lba, uint32_t blocks)
{
	switch (cdbsz) {
	case 6:		/* 21-bit LBA; 0 blocks means 256 */
		return lba + blocks <= (1u << 21) && blocks >= 1 && blocks <= 256;
	case 10:
		return lba + blocks <= (1ULL << 32) && blocks <= 0xffff;
	case 12:
		return lba + blocks <= (1ULL << 32);
	case 16:
		return true;
	default:
		return false;
	}
}

/* cdbsz= asks for a size; like sgp_dd, pdd raises it to the first size
 * that can address lba..lba+blocks.  Returns the size, or -EINVAL. */
int pdd_scsi_cdbsz_for(int want, uint64_t lba, uint32_t blocks)
{
	static const int sizes[] = { 6, 10, 12, 16 };

	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (sizes[i] >= want && fits(sizes[i], lba, blocks))
			return sizes[i];
	return -EINVAL;
}

static void put_be(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* Fill cdb (at least cdbsz bytes) with READ or WRITE of blocks at lba.
 * FUA and DPO do not exist in the 6-byte form.  0 or -EINVAL. */
int pdd_scsi_rw_cdb(uint8_t *cdb, int cdbsz, bool write, uint64_t lba,
		    uint32_t blocks, bool fua, bool dpo)
{
	uint8_t flags = (uint8_t)((dpo ? 0x10 : 0) | (fua ? 0x08 : 0));

	if (!fits(cdbsz, lba, blocks) || (cdbsz == 6 && flags))
		return -EINVAL;
	memset(cdb, 0, (size_t)cdbsz);
	switch (cdbsz) {
	case 6:
		cdb[0] = write ? 0x0a : 0x08;
		put_be(cdb + 1, lba, 3);
		cdb[1] &= 0x1f;
		cdb[4] = (uint8_t)(blocks == 256 ? 0 : blocks);
		break;
	case 10:
		cdb[0] = write ? 0x2a : 0x28;
		cdb[1] = flags;
		put_be(cdb + 2, lba, 4);
		put_be(cdb + 7, blocks, 2);
		break;
	case 12:
		cdb[0] = write ? 0xaa : 0xa8;
		cdb[1] = flags;
		put_be(cdb + 2, lba, 4);
		put_be(cdb + 6, blocks, 4);
		break;
	case 16:
		cdb[0] = write ? 0x8a : 0x88;
		cdb[1] = flags;
		put_be(cdb + 2, lba, 8);
		put_be(cdb + 10, blocks, 4);
		break;
	}
	return 0;
}

/* sg3_utils' finer categories folded into the statuses SPEC names. */
static int fold_category(int cat)
{
	switch (cat) {
	case SG_LIB_CAT_CLEAN:
	case SG_LIB_CAT_RECOVERED:
	case SG_LIB_CAT_NO_SENSE:
		return 0;
	case SG_LIB_CAT_MEDIUM_HARD_WITH_INFO:
		cat = SG_LIB_CAT_MEDIUM_HARD;
		break;
	case SG_LIB_CAT_ILLEGAL_REQ_WITH_INFO:
	case SG_LIB_LBA_OUT_OF_RANGE:
	case SG_LIB_CAT_INVALID_OP:
#ifdef SG_LIB_CAT_INVALID_PARAM		/* sg3_utils after 1.46 */
	case SG_LIB_CAT_INVALID_PARAM:
#endif
		/* SPEC's status for every kind of illegal request is 5 */
		cat = SG_LIB_CAT_ILLEGAL_REQ;
		break;
#ifdef SG_LIB_CAT_STANDBY		/* sg3_utils after 1.46 splits */
	case SG_LIB_CAT_STANDBY:	/* "not ready" more finely */
#endif
#ifdef SG_LIB_CAT_UNAVAILABLE
	case SG_LIB_CAT_UNAVAILABLE:
#endif
		cat = SG_LIB_CAT_NOT_READY;
		break;
	}
	return PDD_ERR_SCSI(cat);
}

/* Sense data as a pdd error: -(PDD_ESCSI + sg3_utils' category), 0 for
 * "no sense" and "recovered error" (the command did its work).  *info
 * gets the INFO field (the first bad LBA of a medium error) or ~0. */
int pdd_scsi_sense_err(const uint8_t *sense, int len, uint64_t *info)
{
	if (!sg_get_sense_info_fld(sense, len, info))
		*info = ~0ULL;
	return fold_category(sg_err_category_sense(sense, len));
}

/*
 * The outcome of a finished sg v3 command: 0 when it did its work (GOOD,
 * or a RECOVERED ERROR, which sets *recovered), otherwise a pdd error:
 * the sense category, category 33 when the command timed out, -EIO for a
 * transport failure without sense.  *info as pdd_scsi_sense_err().
 */
int pdd_scsi_result(const struct sg_io_hdr *h, uint64_t *info, bool *recovered)
{
	int cat = sg_err_category3((struct sg_io_hdr *)h);

	*info = ~0ULL;
	*recovered = false;
	switch (cat) {
	case SG_LIB_CAT_CLEAN:
		return 0;
	case SG_LIB_CAT_RECOVERED:
		*recovered = true;
		if (h->sb_len_wr > 0 && !sg_get_sense_info_fld(h->sbp, h->sb_len_wr, info))
			*info = ~0ULL;
		return 0;
	case SG_LIB_CAT_TIMEOUT:
		return PDD_ERR_SCSI(SG_LIB_CAT_TIMEOUT);
	case SG_LIB_CAT_SENSE:
	case SG_LIB_CAT_OTHER: {
		/* the command failed; sense that claims otherwise does not
		 * make its data whole */
		int err = h->sb_len_wr > 0 ? pdd_scsi_sense_err(h->sbp, h->sb_len_wr, info) : 0;

		return err ? err : -EIO;
	}
	default:
		if (h->sb_len_wr > 0 && !sg_get_sense_info_fld(h->sbp, h->sb_len_wr, info))
			*info = ~0ULL;
		return fold_category(cat);
	}
}

/* A libsgutils2 helper's result as a pdd error. */
static int helper_err(int res)
{
	if (res == 0)
		return 0;
	if (res < 0)
		return -EIO;
	return fold_category(res);
}

/* Whether to send a failed command again: a unit attention (a reset, a
 * changed medium) up to 10 times and an aborted command up to 256, as
 * sg_dd; tries[] counts them for this one command. */
bool pdd_scsi_again(int err, unsigned int tries[2])
{
	if (err == PDD_ERR_SCSI(SG_LIB_CAT_UNIT_ATTENTION))
		return tries[0]++ < PDD_SCSI_UA_RETRIES;
	if (err == PDD_ERR_SCSI(SG_LIB_CAT_ABORTED_COMMAND))
		return tries[1]++ < PDD_SCSI_ABORTED_RETRIES;
	return false;
}

static uint64_t get_be(const uint8_t *p, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

/*
 * READ CAPACITY(10), and (16) when the device has 2^32 blocks or more:
 * the number of logical blocks, their size, and the physical block size
 * where (16) says.  Unit attentions and aborted commands are retried as
 * in a copy.  0 or a pdd error.  verbose > 1 lets libsgutils2 speak.
 */
int pdd_scsi_capacity(int fd, uint64_t *blocks, unsigned int *lbs,
		      unsigned int *pbs, int verbose)
{
	bool noisy = verbose > 1;
	int vb = verbose > 2 ? verbose - 2 : 0;
	unsigned int tries[2] = { 0, 0 };
	uint8_t r[32];
	int err;

	do {
		memset(r, 0, sizeof(r));
		err = helper_err(sg_ll_readcap_10(fd, false, 0, r, 8, noisy, vb));
	} while (pdd_scsi_again(err, tries));
	if (err)
		return err;
	*blocks = get_be(r, 4) + 1;
	*lbs = (unsigned int)get_be(r + 4, 4);
	*pbs = *lbs;
	if (get_be(r, 4) != 0xffffffff)
		return 0;
	do {
		memset(r, 0, sizeof(r));
		err = helper_err(sg_ll_readcap_16(fd, false, 0, r, 32, noisy, vb));
	} while (pdd_scsi_again(err, tries));
	if (err)
		return err;
	*blocks = get_be(r, 8) + 1;
	*lbs = (unsigned int)get_be(r + 8, 4);
	*pbs = *lbs << (r[13] & 0x0f);
	return 0;
}

/* SYNCHRONIZE CACHE(10) of the whole device, with the same retries. */
int pdd_scsi_sync(int fd, int verbose)
{
	unsigned int tries[2] = { 0, 0 };
	int err;

	do
		err = helper_err(sg_ll_sync_cache_10(fd, false, false, 0, 0, 0, verbose > 1,
						     verbose > 2 ? verbose - 2 : 0));
	while (pdd_scsi_again(err, tries));
	return err;
}

/* The words for a SCSI error code, as sg3_utils says them. */
const char *pdd_scsi_strerror(int err, char *buf, int len)
{
	return sg_get_category_sense_str(-err - PDD_ESCSI, len, buf, 0);
}
