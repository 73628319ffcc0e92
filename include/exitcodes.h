/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Exit statuses.  pdd follows sg3_utils (sg_lib.h) so that scripts written
 * for sgp_dd and sg_dd read pdd's status the same way.  Each value is listed
 * in man/pdd.1 under EXIT STATUS.
 */
#ifndef PDD_EXITCODES_H
#define PDD_EXITCODES_H

#define PDD_EXIT_OK		0	/* copy complete */
#define PDD_EXIT_SYNTAX		1	/* bad operand or option */
#define PDD_EXIT_NOT_READY	2	/* device not ready */
#define PDD_EXIT_MEDIUM_HARD	3	/* medium or hardware error (EIO) */
#define PDD_EXIT_ILLEGAL_REQ	5	/* device refused the request */
#define PDD_EXIT_UNIT_ATTENTION	6	/* device state changed, 10 times over */
#define PDD_EXIT_ABORTED	11	/* command aborted, 256 times over */
#define PDD_EXIT_MISCOMPARE	14	/* verification found a difference */
#define PDD_EXIT_FILE_ERROR	15	/* other error reading, writing or flushing */
#define PDD_EXIT_CONTRADICT	31	/* operands contradict each other or a device */
#define PDD_EXIT_TIMEOUT	33	/* command timed out */
#define PDD_EXIT_OS_BASE	50	/* 50 + errno: opening or sizing failed */
#define PDD_EXIT_OTHER		99	/* anything else */

/* 50 + errno for errno values that fit below 97, as sg_convert_errno() */
static inline int pdd_exit_os(int err)
{
	if (err < 0)
		err = -err;
	if (err > 0 && err < 97 - PDD_EXIT_OS_BASE)
		return PDD_EXIT_OS_BASE + err;
	return PDD_EXIT_OS_BASE;
}

#endif
