// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * READ and WRITE CDBs of 6, 10, 12 and 16 bytes, the smallest size that
 * can carry a request, and sense data turned into pdd's error codes.
 * These are pure functions so the unit tests check them byte by byte.
 */
#include <errno.h>
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

/* Sense data as a pdd error: -(PDD_ESCSI + sg3_utils' category), 0 for
 * "no sense" and "recovered error" (the command did its work).  *info
 * gets the INFO field (the first bad LBA of a medium error) or ~0. */
int pdd_scsi_sense_err(const uint8_t *sense, int len, uint64_t *info)
{
	int cat = sg_err_category_sense(sense, len);

	if (!sg_get_sense_info_fld(sense, len, info))
		*info = ~0ULL;
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
		/* SPEC's status for every kind of illegal request is 5 */
		cat = SG_LIB_CAT_ILLEGAL_REQ;
		break;
	}
	return PDD_ERR_SCSI(cat);
}

/* The words for a SCSI error code, as sg3_utils says them. */
const char *pdd_scsi_strerror(int err, char *buf, int len)
{
	return sg_get_category_sense_str(-err - PDD_ESCSI, len, buf, 0);
}
