// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Signals during a copy.  The handlers only set flags; the copy loop
 * (copy.c) looks at them after every batch of completions.  SIGINT and
 * SIGTERM stop new reads, and what is in flight is finished, written,
 * flushed and reported; a second SIGINT ends pdd at once.  SIGUSR1 prints
 * the report so far and the copy goes on.  Only the thread that runs the
 * copy loop takes these signals: engines start their workers with them
 * blocked (pdd_signals_block).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "pdd.h"

volatile sig_atomic_t pdd_stop_signal;	/* SIGINT or SIGTERM came: stop */
volatile sig_atomic_t pdd_report_now;	/* SIGUSR1 came: report, go on */

static void on_stop(int sig)
{
	if (pdd_stop_signal && sig == SIGINT)
		_exit(128 + SIGINT);	/* asked twice: no more waiting */
	pdd_stop_signal = sig;
}

static void on_report(int sig)
{
	(void)sig;
	pdd_report_now = 1;
}

void pdd_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_report;
	sigaction(SIGUSR1, &sa, NULL);
}

/* Block (or with block false, restore) the copy's signals in this
 * thread; threads created meanwhile keep them blocked for good. */
void pdd_signals_block(bool block, sigset_t *old)
{
	sigset_t set;

	if (!block) {
		pthread_sigmask(SIG_SETMASK, old, NULL);
		return;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, old);
}
