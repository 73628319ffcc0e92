// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Test helper: catch what pdd prints through msg.c.  cap_open() points
 * pdd_msg_stream at an in-memory stream, captured() returns everything
 * printed since, and cap_close() frees it and puts stderr back.  Used as
 * the per-test setup and teardown in the cmocka tables, so every test
 * starts with nothing captured.
 */
#ifndef PDD_TEST_CAPTURE_H
#define PDD_TEST_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "pdd.h"

/* the line pdd_usage_error() adds after the message */
#define TRY_HELP "Try 'pdd --help' for more information.\n"

static char *cap_buf;		/* what was printed, NUL-terminated */
static size_t cap_len;		/* its length */

static inline int cap_open(void **state)
{
	(void)state;
	cap_buf = NULL;
	cap_len = 0;
	pdd_msg_stream = open_memstream(&cap_buf, &cap_len);
	return pdd_msg_stream ? 0 : -1;
}

static inline int cap_close(void **state)
{
	(void)state;
	if (pdd_msg_stream)
		fclose(pdd_msg_stream);
	pdd_msg_stream = NULL;
	free(cap_buf);
	cap_buf = NULL;
	return 0;
}

/* Everything printed since cap_open() or the last cap_reset(). */
static inline const char *captured(void)
{
	fflush(pdd_msg_stream);
	return cap_buf ? cap_buf : "";
}

/* Forget what was printed so far. */
static inline void cap_reset(void)
{
	cap_close(NULL);
	cap_open(NULL);
}

#endif
