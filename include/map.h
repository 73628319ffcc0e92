/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * map=FILE: what is known about each byte of the input, kept in GNU
 * ddrescue's mapfile format so that pdd and ddrescue can each pick up
 * where the other stopped.  Positions are byte offsets in the input.
 *
 *   # comment lines
 *   0x00100000     ?               1        <- current_pos status pass
 *   0x00000000  0x00100000  +               <- pos size status, one
 *   0x00100000  0x00000200  -                  line per extent
 *
 * The extents are contiguous and ascending; bytes no extent covers are
 * not tried.  The copy core marks what it wrote (+) and what it could
 * not read (-); a rerun copies what is not +.
 *
 * Three files, one section each below: map-extents.c keeps the extents
 * in memory, map-text.c reads and writes ddrescue's text, mapfile.c
 * finds, checks, loads and saves the file.
 */
#ifndef PDD_MAP_H
#define PDD_MAP_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* an extent's status, as ddrescue */
#define PDD_MAP_UNTRIED		'?'	/* not tried */
#define PDD_MAP_UNTRIMMED	'*'	/* ddrescue: failed, edges not trimmed */
#define PDD_MAP_UNSCRAPED	'/'	/* ddrescue: failed, not scraped */
#define PDD_MAP_BAD		'-'	/* read, block by block, and failed */
#define PDD_MAP_DONE		'+'	/* copied */

struct pdd_extent {
	uint64_t pos;			/* first input byte */
	uint64_t size;			/* bytes, > 0 */
	char status;			/* PDD_MAP_* */
};

struct pdd_map {
	const char *path;		/* the file, as given to map=: for messages */
	char *file;			/* the file read and replaced: path with
					 * its links resolved (pdd_map_check),
					 * or NULL for path itself; malloc'd */
	struct pdd_extent *ext;		/* n extents: contiguous, ascending,
					 * neighbours of one status merged */
	size_t n, cap;
	uint64_t cur_pos;		/* status line: where the copy is */
	char cur_status;		/* '?' copying, '+' finished */
	unsigned int pass;		/* status line: the pass (rescue=1), else 1 */
	const char *msg;		/* the comment above it: what is being
					 * done (rescue=1); NULL: "Copying" */
	const char *cmdline;		/* for the header; NULL leaves it out */
	time_t started;			/* for the header */
};

/* --- the extents in memory (map-extents.c) -------------------------------- */

void pdd_map_init(struct pdd_map *m, const char *path);
void pdd_map_free(struct pdd_map *m);

/* Give [pos, pos+size) the status; extents are split and merged so the
 * invariants above still hold.  0 or -ENOMEM. */
int pdd_map_set(struct pdd_map *m, uint64_t pos, uint64_t size, char status);

/* The map ends at end: what it says past it goes (the input ended
 * there, as ddrescue cuts its map). */
void pdd_map_truncate(struct pdd_map *m, uint64_t end);

/* The status of the byte at pos; '?' where no extent covers it. */
char pdd_map_status(const struct pdd_map *m, uint64_t pos);

/* Bytes in [start, end) with the status (uncovered bytes count as '?'). */
uint64_t pdd_map_bytes(const struct pdd_map *m, uint64_t start, uint64_t end,
		       char status);

/* What a copy of [start, end) must still do: the parts that are not '+',
 * each widened to multiples of grain counted from start (and cut at end),
 * overlapping or touching ones joined.  *out is malloc'd (NULL when
 * *n is 0).  0 or -ENOMEM. */
int pdd_map_todo(const struct pdd_map *m, uint64_t start, uint64_t end,
		 uint64_t grain, struct pdd_extent **out, size_t *n);

/* For the parser (map-text.c) only; the rest of pdd goes through the
 * calls above. */

/* Append to an extent array of *n entries and room for *cap (realloc'd
 * as it grows), merging with the last extent when it has the same status,
 * so the array never holds two equal neighbours.  The caller keeps the
 * extents contiguous.  An empty extent is left out.  0 or -ENOMEM. */
int pdd_extent_push(struct pdd_extent **ext, size_t *n, size_t *cap,
		    uint64_t pos, uint64_t size, char status);

/* The extents go and the status line starts again ('?' at 0, pass 1);
 * the file the map was found at stays. */
void pdd_map_reset(struct pdd_map *m);

/* --- ddrescue's text (map-text.c) ----------------------------------------- */

/* Read a map in ddrescue's format from f; name is for messages
 * ("map 'NAME' line 4: blocks are not contiguous").  0, -EINVAL, or the
 * -errno of a read that failed (reported too: never taken as the end). */
int pdd_map_parse(struct pdd_map *m, FILE *f, const char *name);

/* Write the map in ddrescue's format, the header's current time now. */
int pdd_map_write(const struct pdd_map *m, FILE *f, time_t now);

/* --- the file on disk (mapfile.c) ----------------------------------------- */

struct pdd_dev;

/* Before anything is read or written: find the file the map is (a link
 * is followed to its target, which is then read and replaced; a link to
 * nothing is refused), refuse a map that is not a regular file, a map, or
 * its PATH.new or PATH.bak, that is the input or the output, and a map
 * whose directory does not take new files.  Each refusal is reported.
 * 0; -EINVAL when the map is one of the sides (operands that contradict);
 * another -errno when the map cannot be used. */
int pdd_map_check(struct pdd_map *m, const struct pdd_dev *in,
		  const struct pdd_dev *out);

/* Read the map (m->file, or m->path).  -ENOENT (quietly) when there is
 * no such file yet, so the map starts empty; any other failure, a read
 * error too, is reported and returned. */
int pdd_map_load(struct pdd_map *m);

/* Replace the map (m->file, or m->path) safely: write PATH.new, fsync it,
 * keep the old map as PATH.bak, rename PATH.new to PATH, fsync the
 * directory.  Failures are reported under m->path; 0 or -errno. */
int pdd_map_save(const struct pdd_map *m);

#endif
