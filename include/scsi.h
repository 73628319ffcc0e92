/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SCSI pieces of the sg engine that need no device: building READ, WRITE
 * and WRITE SAME CDBs, and turning sense data into pdd's error codes.  Sense
 * decoding itself is libsgutils2's (sg3_utils).
 */
#ifndef PDD_SCSI_H
#define PDD_SCSI_H

#include <stdbool.h>
#include <stdint.h>

/* A SCSI failure travels through the core as -(PDD_ESCSI + category),
 * with sg3_utils' category (SG_LIB_CAT_*), which is also its exit status. */
#define PDD_ESCSI 1000
#define PDD_ERR_SCSI(cat) (-(PDD_ESCSI + (cat)))

static inline bool pdd_err_is_scsi(int err)
{
	return err <= -PDD_ESCSI && err > -(PDD_ESCSI + 128);
}

/* how often one command is sent again, as sg_dd */
#define PDD_SCSI_UA_RETRIES		10	/* after a unit attention */
#define PDD_SCSI_ABORTED_RETRIES	256	/* after an aborted command */

struct sg_io_hdr;

#ifdef HAVE_SGUTILS
int pdd_scsi_cdbsz_for(int want, uint64_t lba, uint32_t blocks);
int pdd_scsi_rw_cdb(uint8_t *cdb, int cdbsz, bool write, uint64_t lba,
		    uint32_t blocks, bool fua, bool dpo);
int pdd_scsi_write_same16_cdb(uint8_t cdb[16], uint64_t lba, uint32_t blocks);
bool pdd_scsi_refused(const uint8_t *sense, int len);
int pdd_scsi_write_same_max(int fd, uint64_t *max, int verbose);
int pdd_scsi_sense_err(const uint8_t *sense, int len, uint64_t *info);
const char *pdd_scsi_strerror(int err, char *buf, int len);
int pdd_scsi_result(const struct sg_io_hdr *h, uint64_t *info, bool *recovered);
bool pdd_scsi_again(int err, unsigned int tries[2]);
int pdd_scsi_capacity(int fd, uint64_t *blocks, unsigned int *lbs,
		      unsigned int *pbs, int verbose);
int pdd_scsi_sync(int fd, int verbose);
int pdd_scsi_identify(int fd, char *model, size_t mlen, char *serial,
		      size_t slen, int verbose);
#else
/* without sg3_utils there is no sg engine, and no SCSI error to name */
static inline const char *pdd_scsi_strerror(int err, char *buf, int len)
{
	(void)err;
	(void)len;
	buf[0] = '\0';
	return "SCSI error";
}
#endif

#endif
