// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where map= lives on disk, and reading and replacing it there (the
 * format is map-text.c's).  A map is replaced on every save: PATH.new is
 * written, the old map kept as PATH.bak, PATH.new renamed to PATH.  So
 * before anything is read or written, pdd_map_check() makes sure that
 * this can only ever touch the map: the map, PATH.new and PATH.bak are
 * neither the input nor the output (as GNU ddrescue refuses "outfile and
 * mapfile are the same"), the map is a regular file, and its directory
 * takes new files.  A map that is a symbolic link is read and replaced
 * at its target, as ddrescue does: the link stays a link.
 */
#define _GNU_SOURCE		/* asprintf */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "map.h"
#include "pdd.h"

/* The file read and replaced: the link's target once pdd_map_check() has
 * resolved it, else the name given (the unit tests load and save without
 * a check). */
static const char *where(const struct pdd_map *m)
{
	return m->file ? m->file : m->path;
}

/* dir + '/' + name + suffix, malloc'd; no second '/' after "/", and no
 * '/' at all without a name (a path and a suffix). */
static char *join(const char *dir, const char *name, const char *suffix)
{
	size_t len = strlen(dir);
	const char *sep = !*name || (len && dir[len - 1] == '/') ? "" : "/";
	char *s;

	if (asprintf(&s, "%s%s%s%s", dir, sep, name, suffix) < 0)
		return NULL;
	return s;
}

/* The directory part of path, malloc'd: "." for a bare name, "/" for a
 * name in the root. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The canonical name of a path that need not exist: realpath() of what
 * exists; for a name that does not exist yet, realpath() of its
 * directory and the last name, after following a dangling symbolic link
 * the way open(O_CREAT) follows it to create its target.  NULL and errno
 * when it cannot be had. */
static char *canon(const char *path)
{
	char *cur, *dir, *real, *ret = NULL;
	struct stat st;
	int hops = 0;

	ret = realpath(path, NULL);
	if (ret || errno != ENOENT)
		return ret;
	cur = strdup(path);
	while (cur && !lstat(cur, &st) && S_ISLNK(st.st_mode)) {
		char target[PATH_MAX], *next;
		ssize_t n = readlink(cur, target, sizeof(target) - 1);

		if (n < 0 || ++hops > 40) {
			errno = n < 0 ? errno : ELOOP;
			free(cur);
			return NULL;
		}
		target[n] = '\0';
		dir = target[0] == '/' ? strdup("/") : dir_of(cur);
		next = dir ? join(dir, target, "") : NULL;
		free(dir);
		free(cur);
		cur = next;
	}
	if (!cur)
		return NULL;
	dir = dir_of(cur);
	real = dir ? realpath(dir, NULL) : NULL;
	if (real)
		ret = join(real, base_of(cur), "");
	free(real);
	free(dir);
	free(cur);
	return ret;
}

static int cannot_read(const struct pdd_map *m, int e)
{
	pdd_error("cannot read map '%s': %s", m->path, strerror(e));
	return -e;
}

static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "directory";
	if (S_ISCHR(mode))
		return "character device";
	if (S_ISBLK(mode))
		return "block device";
	if (S_ISFIFO(mode))
		return "fifo";
	if (S_ISSOCK(mode))
		return "socket";
	return "special file";
}

/* m->file: the map's target, or where a new map will be made.  Saving
 * renames over m->file: a device node there would become a regular file
 * (and reading /dev/zero would never end), so only a regular file is a
 * map.  A link to nothing is refused rather than its target created: a
 * typing error in the link should not scatter maps about. */
static int locate(struct pdd_map *m)
{
	struct stat st;
	char *dir;
	int err;

	if (lstat(m->path, &st)) {
		if (errno != ENOENT)
			return cannot_read(m, errno);
		/* a new map; its directory must be there to hold it */
		dir = dir_of(m->path);
		if (!dir)
			return cannot_read(m, ENOMEM);
		m->file = realpath(dir, NULL);
		if (m->file) {
			char *file = join(m->file, base_of(m->path), "");

			free(m->file);
			m->file = file;
			free(dir);
			return file ? 0 : cannot_read(m, ENOMEM);
		}
		err = errno;
		pdd_error("map=%s: cannot save the map in '%s': %s", m->path, dir,
			  strerror(err));
		free(dir);
		return err == EINVAL ? -ENOENT : -err;
	}
	if (S_ISLNK(st.st_mode) && stat(m->path, &st)) {
		char target[PATH_MAX];
		ssize_t n;

		if (errno != ENOENT)
			return cannot_read(m, errno);
		n = readlink(m->path, target, sizeof(target) - 1);
		target[n < 0 ? 0 : n] = '\0';
		pdd_error("map=%s: '%s' is a symbolic link to '%s', which does not exist",
			  m->path, m->path, target);
		return -ENOENT;
	}
	m->file = realpath(m->path, NULL);
	if (!m->file)
		return cannot_read(m, errno);
	if (!S_ISREG(st.st_mode)) {
		pdd_error("map=%s: '%s' is a %s, not a regular file", m->path, m->file,
			  file_kind(st.st_mode));
		return S_ISDIR(st.st_mode) ? -EISDIR : -ENOTSUP;
	}
	return 0;
}

/* Whether the side is the file: the same inode as the side's descriptor
 * (so links and /dev/fd/N are seen through), following a link at name
 * or not; an output that is not made yet, by its canonical name. */
static bool side_is(const struct pdd_dev *d, const char *name, bool follow)
{
	struct stat a, b;
	bool same = false;

	if (d->fd >= 0)
		return !fstat(d->fd, &a) && !(follow ? stat(name, &b) : lstat(name, &b)) &&
		       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	if (d->missing) {
		char *c = canon(d->path);

		same = c && !strcmp(c, name);
		free(c);
	}
	return same;
}

/* Neither side may be the map or a file a save replaces beside it: the
 * map would be written over the data.  PATH.new and PATH.bak are names
 * that a save unlinks, so they are compared as names (not followed). */
static int check_sides(const struct pdd_map *m, const struct pdd_dev *in,
		       const struct pdd_dev *out)
{
	static const char *const suffix[] = { "", ".new", ".bak" };
	static const char *const what[] = { NULL, "temporary", "backup" };
	const struct pdd_dev *side[] = { in, out };
	int ret = 0;

	for (size_t s = 0; s < 2 && !ret; s++) {
		const char *role = side[s]->output ? "output" : "input";

		for (size_t i = 0; i < 3 && !ret; i++) {
			char *name = join(m->file, "", suffix[i]);

			if (!name)
				return cannot_read(m, ENOMEM);
			if (side_is(side[s], name, i == 0)) {
				if (i == 0)
					pdd_error("map=%s: the map and the %s '%s' are the same file; "
						  "saving the map would replace it", m->path, role,
						  side[s]->name);
				else
					pdd_error("map=%s: the %s '%s' is the map's %s file '%s'; "
						  "saving the map would replace it", m->path, role,
						  side[s]->name, what[i], name);
				ret = -EINVAL;
			}
			free(name);
		}
	}
	return ret;
}

/* A save makes PATH.new in the map's directory and renames it: found out
 * now, not after the whole copy.  AT_EACCESS asks as pdd runs, and
 * access() also sees a read-only mount, which root's mode bits do not. */
static int check_dir(const struct pdd_map *m)
{
	char *dir = dir_of(m->file);
	int ret = 0;

	if (!dir)
		return cannot_read(m, ENOMEM);
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS)) {
		/* -EINVAL would read as a contradiction */
		ret = errno == EINVAL ? -EACCES : -errno;
		pdd_error("map=%s: cannot save the map in '%s': %s", m->path, dir,
			  strerror(-ret));
	}
	free(dir);
	return ret;
}

int pdd_map_check(struct pdd_map *m, const struct pdd_dev *in,
		  const struct pdd_dev *out)
{
	int err;

	free(m->file);
	m->file = NULL;
	err = locate(m);
	if (!err)
		err = check_sides(m, in, out);
	if (!err)
		err = check_dir(m);
	return err;
}

int pdd_map_load(struct pdd_map *m)
{
	FILE *f = fopen(where(m), "re");
	int ret;

	if (!f) {
		if (errno == ENOENT)
			return -ENOENT;
		return cannot_read(m, errno);
	}
	/* a read error is reported by the parse, under the name given */
	ret = pdd_map_parse(m, f, m->path);
	fclose(f);
	return ret;
}

/* Make the renames in the directory durable: without this a crash could
 * bring back the old map, or none. */
static int sync_dir(const char *path)
{
	char *dir = dir_of(path);
	int fd, e = 0;

	if (!dir)
		return ENOMEM;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
	} else {
		/* some file systems cannot sync a directory (EINVAL); the
		 * rename has happened, which is all that can be had there */
		if (fsync(fd) && errno != EINVAL)
			e = errno;
		close(fd);
	}
	free(dir);
	return e;
}

/* The new map, complete and on disk, as PATH.new.  0 or an errno;
 * *created says whether PATH.new is there to be removed. */
static int write_new(const struct pdd_map *m, const char *tmp, bool *created)
{
	FILE *f;
	int fd, e = 0;

	/* a new file of our own: not whatever a link left at that name
	 * points to */
	if (unlink(tmp) < 0 && errno != ENOENT)
		return errno;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	*created = true;
	f = fdopen(fd, "w");
	if (!f) {
		e = errno;
		close(fd);
		return e;
	}
	/* pdd_map_write() says only EIO; the errno of the failing write
	 * (ENOSPC, say) tells the user more */
	errno = 0;
	if (pdd_map_write(m, f, time(NULL)))
		e = errno ? errno : EIO;
	else if (fflush(f))
		e = errno;
	else if (fsync(fileno(f)))
		e = errno;
	if (fclose(f) && !e)
		e = errno;
	return e;
}

/* Keep the map that is there as PATH.bak.  A hard link leaves PATH in
 * place until the rename replaces it, so there is never a moment without
 * a map; where links are not possible, a rename has to do. */
static int keep_old(const char *path, const char *bak)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : errno;
	if (unlink(bak) && errno != ENOENT)
		return errno;
	if (link(path, bak) && rename(path, bak))
		return errno;
	return 0;
}

int pdd_map_save(const struct pdd_map *m)
{
	const char *file = where(m);	/* a link's target: the link stays */
	size_t len = strlen(file);
	char *tmp = malloc(len + 5), *bak = malloc(len + 5);
	bool created = false;
	int e;

	if (!tmp || !bak) {
		e = ENOMEM;
		goto fail;
	}
	snprintf(tmp, len + 5, "%s.new", file);
	snprintf(bak, len + 5, "%s.bak", file);
	e = write_new(m, tmp, &created);
	if (e)
		goto fail;
	e = keep_old(file, bak);
	if (e)
		goto fail;
	if (rename(tmp, file)) {
		e = errno;
		goto fail;
	}
	created = false;
	e = sync_dir(file);
	if (e)
		goto fail;
	free(tmp);
	free(bak);
	return 0;
fail:
	if (created)
		unlink(tmp);
	pdd_error("cannot save map '%s': %s", m->path, strerror(e));
	free(tmp);
	free(bak);
	return -e;
}
