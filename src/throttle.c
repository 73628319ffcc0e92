// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Is this process's I/O to a device throttled by its cgroup (v1 blkio's
 * blkio.throttle.*_device, v2's io.max)?  The io_uring engine needs to
 * know.  io_uring first issues a direct read or write without waiting
 * (REQ_NOWAIT); a throttled bio is held back by the cgroup, charged
 * against its budget, then failed with EAGAIN, and io_uring issues it
 * again from a worker, where it is held back and charged a second time.
 * Every request then costs twice its bytes of the budget, and a copy
 * between two throttled disks takes their read time plus their write
 * time instead of the slower one's (kernel 6.18, loop devices under blkio
 * limits: 5.8 s for 256 MiB against 2.8 s for the writes alone; the
 * kernel's trace shows each request queued to a worker one throttle
 * delay after it was submitted).  Issued from a worker from the start
 * (IOSQE_ASYNC) it is charged once.
 *
 * The limits in the direction of the side count (reads for an input,
 * writes for an output), for the whole disk the descriptor's device (or
 * file system) lies on: the kernel keeps limits per disk, not per
 * partition.  Under cgroup v1 only the process's own cgroup limits it
 * (v1 blk-throttle is flat: a parent's limit does not reach its
 * children); under v2 its ancestors' limits apply too.  Whatever cannot
 * be read means "not throttled", and the plain way stands.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "pdd.h"

/* The whole disk of dev: its parent in sysfs when dev is a partition. */
static dev_t whole_disk(dev_t dev)
{
	char buf[32];
	unsigned int ma, mi;

	if (pdd_sys_read(dev, "", "partition", buf, sizeof(buf)) &&
	    pdd_sys_read(dev, "../", "dev", buf, sizeof(buf)) &&
	    sscanf(buf, "%u:%u", &ma, &mi) == 2)
		return makedev(ma, mi);
	return dev;
}

/* Does the limits file at path hold a line for dev with a limit in it?
 * v1: "MAJ:MIN VALUE" (a removed limit is not listed); v2 io.max:
 * "MAJ:MIN rbps=max wbps=... riops=... wiops=...", of whose keys only
 * those starting with dir ('r' or 'w') count. */
static bool limits_dev(const char *path, dev_t dev, char dir)
{
	char line[256], key[32], *save = NULL;
	bool hit = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	snprintf(key, sizeof(key), "%u:%u ", major(dev), minor(dev));
	while (!hit && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, strlen(key)))
			continue;
		for (char *tok = strtok_r(line + strlen(key), " \n", &save); tok && !hit;
		     tok = strtok_r(NULL, " \n", &save)) {
			const char *eq = strchr(tok, '=');

			if (!eq)	/* v1: any value listed is a limit */
				hit = strtoull(tok, NULL, 10) > 0;
			else		/* v2: rbps=, riops= for reads; w... */
				hit = tok[0] == dir && strcmp(eq + 1, "max");
		}
	}
	fclose(f);
	return hit;
}

/* Does the cgroup directory dir (and, with up, each one above it up to
 * the mount, root_len bytes of dir) limit dev through one of files? */
static bool tree_limits(char *dir, size_t root_len, bool up, const char *const *files, dev_t dev,
			char rw)
{
	char path[4096];

	for (;;) {
		for (const char *const *f = files; *f; f++) {
			int n = snprintf(path, sizeof(path), "%s/%s", dir, *f);

			if (n > 0 && (size_t)n < sizeof(path) && limits_dev(path, dev, rw))
				return true;
		}
		char *slash = strrchr(dir, '/');

		if (!up || !slash || (size_t)(slash - dir) < root_len)
			return false;
		*slash = '\0';
	}
}

/* The kernel's \ooo escapes in /proc's mount tables (\040 for a space)
 * undone in s, in place; also for guard-proc.c. */
void pdd_unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/* The mount point of the cgroup hierarchy that has controller (v1: in
 * its super options; "" for the v2 hierarchy) into mnt, and the root of
 * that mount into root.  0 or -1. */
static int hierarchy(const char *controller, char *mnt, size_t mlen, char *root, size_t rlen)
{
	char line[1024];
	int r = -1;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -1;
	while (r && fgets(line, sizeof(line), f)) {
		char rt[512], mp[512], fstype[32], opts[256];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %511s %511s", rt, mp) != 2 ||
		    sscanf(dash + 3, "%31s %*s %255s", fstype, opts) != 2)
			continue;
		if (*controller ? strcmp(fstype, "cgroup") ||
				  !strstr(opts, controller) : strcmp(fstype, "cgroup2"))
			continue;
		pdd_unescape(mp);
		pdd_unescape(rt);
		snprintf(mnt, mlen, "%s", mp);
		snprintf(root, rlen, "%s", rt);
		r = 0;
	}
	fclose(f);
	return r;
}

/* Is dev limited in direction rw ('r' or 'w') for this process in the
 * hierarchy of controller (v1 "blkio", or "" for v2), whose line in
 * /proc/self/cgroup is cg (the path after the second colon)? */
static bool limited(const char *controller, const char *cg, dev_t dev, char rw)
{
	static const char *const v1r[] = { "blkio.throttle.read_bps_device",
		"blkio.throttle.read_iops_device", NULL };
	static const char *const v1w[] = { "blkio.throttle.write_bps_device",
		"blkio.throttle.write_iops_device", NULL };
	static const char *const v2[] = { "io.max", NULL };
	char mnt[512], root[512], dir[4096];
	size_t rl;

	if (hierarchy(controller, mnt, sizeof(mnt), root, sizeof(root)))
		return false;
	/* a mount of part of the tree: the path is relative to its root,
	 * and a cgroup outside it is not to be found there */
	rl = strcmp(root, "/") ? strlen(root) : 0;
	if (rl) {
		if (strncmp(cg, root, rl) || (cg[rl] && cg[rl] != '/'))
			return false;
		cg += rl;
	}
	snprintf(dir, sizeof(dir), "%s%s", mnt, strcmp(cg, "/") ? cg : "");
	if (*controller)
		return tree_limits(dir, strlen(mnt), false, rw == 'r' ? v1r : v1w, dev, rw);
	return tree_limits(dir, strlen(mnt), true, v2, dev, rw);
}

bool pdd_throttled(int fd, bool output)
{
	char line[4096];
	struct stat st;
	bool hit = false;
	dev_t dev;
	FILE *f;

	if (fd < 0 || fstat(fd, &st))
		return false;
	dev = whole_disk(S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev);
	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return false;
	while (!hit && fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *cg = ctl ? strchr(ctl + 1, ':') : NULL;

		if (!cg)
			continue;
		*cg++ = '\0';
		cg[strcspn(cg, "\n")] = '\0';
		ctl++;
		if (!*ctl)
			hit = limited("", cg, dev, output ? 'w' : 'r');
		else if (strstr(ctl, "blkio"))
			hit = limited("blkio", cg, dev, output ? 'w' : 'r');
	}
	fclose(f);
	return hit;
}
