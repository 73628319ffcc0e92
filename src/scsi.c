// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * READ and WRITE CDBs of 6, 10, 12 and 16 bytes, the smallest size that
 * can carry a request, WRITE SAME(16) for sparse='s zero runs, and a
 * command's outcome (status, sense, host and driver status) turned into
 * pdd's error codes: pure functions, so the unit tests check them byte by
 * byte.  Then the whole commands the device side needs outside the copy,
 * READ CAPACITY, INQUIRY and SYNCHRONIZE CACHE, sent through libsgutils2's
 * pass-through layer with the same bounded retries and the same
 * judgement as the sg engine's.
 */
#include <errno.h>
#include <scsi/sg.h>
#include <scsi/sg_io_linux.h>
#include <scsi/sg_lib.h>
#include <scsi/sg_pt.h>
#include <string.h>

#include "pdd.h"
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

/*
 * WRITE SAME(16) of blocks at lba, from one logical block of data out
 * (NDOB 0: a device need not know NDOB, which SBC-4 added).  UNMAP and
 * ANCHOR stay 0: the blocks are written, never deallocated, as a
 * deallocated block need not read back as the data sent.  0, or -EINVAL
 * for 0 blocks, which SBC reads as "to the end of the medium" on a
 * device that allows it.
 */
int pdd_scsi_write_same16_cdb(uint8_t cdb[16], uint64_t lba, uint32_t blocks)
{
	if (!blocks)
		return -EINVAL;
	memset(cdb, 0, 16);
	cdb[0] = 0x93;
	put_be(cdb + 2, lba, 8);
	put_be(cdb + 10, blocks, 4);
	return 0;
}

/* Whether sense data says the device does not have a command, or not in
 * the form sent: ILLEGAL REQUEST with INVALID COMMAND OPERATION CODE
 * (20h) or INVALID FIELD IN CDB (24h). */
bool pdd_scsi_refused(const uint8_t *sense, int len)
{
	struct sg_scsi_sense_hdr sh;

	if (len <= 0 || !sg_scsi_normalize_sense(sense, len, &sh))
		return false;
	return sh.sense_key == SPC_SK_ILLEGAL_REQUEST && (sh.asc == 0x20 || sh.asc == 0x24);
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

/* A command's sg3_utils category, with its sense, as a pdd error. */
static int outcome(int cat, const uint8_t *sense, int slen, uint64_t *info,
		   bool *recovered)
{
	int err;

	if (slen <= 0 || !sg_get_sense_info_fld(sense, slen, info))
		*info = ~0ULL;
	*recovered = cat == SG_LIB_CAT_RECOVERED;
	if (cat != SG_LIB_CAT_SENSE && cat != SG_LIB_CAT_OTHER)
		return fold_category(cat);
	/* the command failed; sense that claims otherwise does not make
	 * its data whole */
	err = slen > 0 ? fold_category(sg_err_category_sense(sense, slen)) : 0;
	return err ? err : -EIO;
}

/*
 * The outcome of a finished sg v3 command: 0 when it did its work (GOOD,
 * or a RECOVERED ERROR, which sets *recovered), otherwise a pdd error:
 * the sense category, category 33 when the command timed out, -EIO for a
 * transport failure without sense.  *info as pdd_scsi_sense_err().
 */
int pdd_scsi_result(const struct sg_io_hdr *h, uint64_t *info, bool *recovered)
{
	return outcome(sg_err_category3((struct sg_io_hdr *)h), h->sbp, h->sb_len_wr,
		       info, recovered);
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

/* One try of a command with data in (or none) through libsgutils2's
 * pass-through layer. */
static int pt_once(int fd, const uint8_t *cdb, int cdblen, uint8_t *in, int inlen,
		   int vb)
{
	struct sg_pt_base *pt = construct_scsi_pt_obj_with_fd(fd, vb);
	uint8_t sense[64];
	uint64_t info;
	bool rec;
	int res, slen, err;

	if (!pt)
		return -ENOMEM;
	memset(sense, 0, sizeof(sense));
	set_scsi_pt_cdb(pt, cdb, cdblen);
	set_scsi_pt_sense(pt, sense, sizeof(sense));
	if (inlen)
		set_scsi_pt_data_in(pt, in, inlen);
	res = do_scsi_pt(pt, -1, PDD_SG_TIMEOUT, vb);
	slen = get_scsi_pt_sense_len(pt);
	if (res < 0)
		err = res;
	else if (get_scsi_pt_os_err(pt))
		err = -get_scsi_pt_os_err(pt);
	else if (res == SCSI_PT_DO_TIMEOUT)
		err = PDD_ERR_SCSI(SG_LIB_CAT_TIMEOUT);
	else if (res)
		err = -EIO;
	else
		err = outcome(sg_err_category_new(get_scsi_pt_status_response(pt),
						  get_scsi_pt_transport_err(pt), 0, sense, slen),
			      sense, slen, &info, &rec);
	destruct_scsi_pt_obj(pt);
	return err;
}

/*
 * A command outside the copy, judged as the copy's commands are, and sent
 * again after unit attentions and aborts as they are.  (The sg_ll_*
 * helpers of sg3_utils 1.46 take a command that timed out for a good one
 * that returned no data, so pdd does not use them.)  0 or a pdd error.
 */
static int pt_cmd(int fd, const uint8_t *cdb, int cdblen, uint8_t *in, int inlen,
		  int verbose)
{
	unsigned int tries[2] = { 0, 0 };
	int vb = verbose > 2 ? verbose - 2 : 0;
	int err;

	do
		err = pt_once(fd, cdb, cdblen, in, inlen, vb);
	while (pdd_scsi_again(err, tries));
	return err;
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
 * where (16) says.  0 or a pdd error.
 */
int pdd_scsi_capacity(int fd, uint64_t *blocks, unsigned int *lbs,
		      unsigned int *pbs, int verbose)
{
	static const uint8_t rc10[10] = { 0x25 };
	/* SERVICE ACTION IN(16), READ CAPACITY(16), 32 bytes back */
	static const uint8_t rc16[16] = { 0x9e, 0x10, [13] = 32 };
	uint8_t r[32];
	int err;

	memset(r, 0, sizeof(r));
	err = pt_cmd(fd, rc10, sizeof(rc10), r, 8, verbose);
	if (err)
		return err;
	*blocks = get_be(r, 4) + 1;
	*lbs = (unsigned int)get_be(r + 4, 4);
	*pbs = *lbs;
	if (get_be(r, 4) != 0xffffffff)
		return 0;
	memset(r, 0, sizeof(r));
	err = pt_cmd(fd, rc16, sizeof(rc16), r, 32, verbose);
	if (err)
		return err;
	*blocks = get_be(r, 8) + 1;
	*lbs = (unsigned int)get_be(r + 8, 4);
	*pbs = *lbs << (r[13] & 0x0f);
	return 0;
}

/* ASCII field of an INQUIRY answer, its padding trimmed, into out. */
static void ascii_field(char *out, size_t len, const uint8_t *p, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < len; i++)
		if (p[i] >= 0x20 && p[i] < 0x7f && !(p[i] == ' ' && (!o || out[o - 1] == ' ')))
			out[o++] = (char)p[i];
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
}

/*
 * Who the device says it is: INQUIRY's vendor, product and revision,
 * and the unit serial number page (VPD 0x80) where it has one.  Empty
 * strings for what it does not say; 0 or a pdd error from the standard
 * INQUIRY.
 */
int pdd_scsi_identify(int fd, char *model, size_t mlen, char *serial,
		      size_t slen, int verbose)
{
	static const uint8_t std[6] = { 0x12, 0, 0, 0, 96 };
	static const uint8_t sn[6] = { 0x12, 1, 0x80, 0, 252 };
	uint8_t r[252];
	char v[9], prod[17], rev[5];
	int err;

	model[0] = serial[0] = '\0';
	memset(r, 0, sizeof(r));
	err = pt_cmd(fd, std, sizeof(std), r, 96, verbose);
	if (err)
		return err;
	ascii_field(v, sizeof(v), r + 8, 8);
	ascii_field(prod, sizeof(prod), r + 16, 16);
	ascii_field(rev, sizeof(rev), r + 32, 4);
	snprintf(model, mlen, "%s%s%s%s%s", v, *v ? " " : "", prod, *rev ? " " : "", rev);
	memset(r, 0, sizeof(r));
	if (!pt_cmd(fd, sn, sizeof(sn), r, 252, verbose) && r[1] == 0x80)
		ascii_field(serial, slen, r + 4, r[3] < 248 ? r[3] : 248);
	return 0;
}

/*
 * The Block Limits VPD page (B0h)'s MAXIMUM WRITE SAME LENGTH in logical
 * blocks: *max 0 when the device reports none (the field is 0, or the
 * page is too short or missing).  0 or a pdd error from the INQUIRY.
 */
int pdd_scsi_write_same_max(int fd, uint64_t *max, int verbose)
{
	static const uint8_t bl[6] = { 0x12, 1, 0xb0, 0, 64 };
	uint8_t r[64];
	int err;

	*max = 0;
	memset(r, 0, sizeof(r));
	err = pt_cmd(fd, bl, sizeof(bl), r, sizeof(r), verbose);
	if (err)
		return err;
	/* the field ends at byte 43: a page length of 0x3c holds it */
	if (r[1] == 0xb0 && get_be(r + 2, 2) >= 40)
		*max = get_be(r + 36, 8);
	return 0;
}

/* SYNCHRONIZE CACHE(10) of the whole device. */
int pdd_scsi_sync(int fd, int verbose)
{
	static const uint8_t sc10[10] = { 0x35 };

	return pt_cmd(fd, sc10, sizeof(sc10), NULL, 0, verbose);
}

/* The words for a SCSI error code, as sg3_utils says them. */
const char *pdd_scsi_strerror(int err, char *buf, int len)
{
	return sg_get_category_sense_str(-err - PDD_ESCSI, len, buf, 0);
}
