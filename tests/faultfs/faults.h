/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * faultfs's fault set (faults.c): the one line of FAULTs that the control
 * file takes and shows, and the decisions for each request of disk.  It
 * holds the current set and its lock; faultfs.c has the FUSE operations
 * and the counters.  The syntax is in the comment at the top of faultfs.c.
 */
#ifndef FAULTFS_FAULTS_H
#define FAULTFS_FAULTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* replace the fault set by the FAULTs in line[0, len) (need not end in
 * NUL); *reset set when it says "reset" (the late turns are zeroed here,
 * the caller's counters by the caller).  0, -EINVAL (the set unchanged)
 * or -ENOMEM */
int faults_set(const char *line, size_t len, int *reset);

/* the first line of control: the fault set, as faults_set takes it */
void faults_show(FILE *o);

/* the decision for a read or write of disk at [off, off + size): sleeps
 * as long as the set says (delay_us=, slow=, and bad_delay_us= for a read
 * that fails), then 1 when it fails with EIO.  A read uses one failure
 * of each flaky= range it overlaps that has some left. */
int faults_request(int write, off_t off, size_t size);

/* rate=, write_rate= and slow_rate=: a read or write of disk of size
 * bytes at off is a turn of the one request served at a time, from
 * faults_turn_begin() to faults_turn_end(), which returns no sooner than
 * size / rate seconds after the turn began (the rate of a slow_rate= area
 * it meets where that is slower).  Without a rate both do nothing. */
struct faults_turn {
	int held;		/* the request is served in turn, at a rate */
	uint64_t end_ns;	/* CLOCK_MONOTONIC time it ends at the earliest */
};
void faults_turn_begin(struct faults_turn *t, int write, off_t off, size_t size);
void faults_turn_end(struct faults_turn *t);
/* turns at a rate that ran over their time (their thread woken late, or
 * their real I/O or delays slower than the rate), and by how long in
 * all: the disk's time lost, as the host kept up no better ("reset"
 * in a faults_set() line zeroes them) */
void faults_late(uint64_t *turns, uint64_t *us);

/* fsync=1, fallocate=1 */
int faults_fsync(void);
int faults_fallocate(void);

/* lose=: a write of buf to [off, off + size) of fd that overlaps a lost
 * range gets a copy of buf (*copy, then in *buf) holding there what fd
 * holds now (zeros past its end); *copy is NULL when none overlaps, to
 * be freed by the caller.  -1: no memory. */
int faults_lost(int fd, const char **buf, char **copy, off_t off, size_t size);

#endif
