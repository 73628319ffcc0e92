// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * noring ERRNO COMMAND [ARG]...
 *
 * Run COMMAND under a seccomp filter that fails io_uring_setup(2) with
 * ERRNO (EPERM, as a container's profile does, or ENOSYS, as a kernel
 * without io_uring does), so pdd's fallback from io_uring can be tested
 * for real.  Needs no privilege: no_new_privs is set first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#endif

int main(int argc, char **argv)
{
	unsigned int err;

	if (argc < 3 || (strcmp(argv[1], "EPERM") && strcmp(argv[1], "ENOSYS"))) {
		fprintf(stderr, "usage: noring EPERM|ENOSYS COMMAND [ARG]...\n");
		return 2;
	}
	err = strcmp(argv[1], "EPERM") ? ENOSYS : EPERM;
	struct sock_filter filter[] = {
#ifdef ARCH
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
#endif
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = filter,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("noring: seccomp");
		return 2;
	}
	execvp(argv[2], argv + 2);
	perror("noring: exec");
	return 127;
}
