// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * map=FILE (see include/map.h): GNU ddrescue's mapfile format, read by
 * the rules ddrescue 1.27 reads it with and written the way ddrescue
 * writes it, so a map can go back and forth between pdd, ddrescue and
 * ddrescuelog.  Only the text: the extents it is read into and written
 * from are map-extents.c's, and the file it lives in (links, the
 * directory, refusing a map that is the input or the output, loading and
 * saving) is mapfile.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "map.h"
#include "pdd.h"

#define MAP_MAX_LINE	1000	/* longer lines are refused, not cut */

/* --- reading -------------------------------------------------------------- */

static bool block_status(int c)
{
	return c && strchr("?*/-+", c);
}

/* the status line may also say ddrescue is filling (F) or generating (G) */
static bool line_status(int c)
{
	return c && strchr("?*/-FG+", c);
}

static const char *skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* One number as strtoull base 0 reads it, ending at whitespace or the end
 * of the line.  A sign other than '+' is refused: strtoull would quietly
 * turn "-1" into a huge value. */
static int parse_num(const char **s, uint64_t *v)
{
	const char *p = *s;
	char *end;
	unsigned long long x;

	if (*p == '+')
		p++;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	x = strtoull(p, &end, 0);
	if (errno || x > INT64_MAX)
		return -EINVAL;
	if (*end && !isspace((unsigned char)*end))
		return -EINVAL;
	*v = x;
	*s = skip_space(end);
	return 0;
}

/* One status character standing alone. */
static int parse_status(const char **s, char *c)
{
	const char *p = *s;

	if (!*p || (p[1] && !isspace((unsigned char)p[1])))
		return -EINVAL;
	*c = *p;
	*s = skip_space(p + 1);
	return 0;
}

/* "POS STATUS [PASS]" */
static int parse_status_line(struct pdd_map *m, const char *s)
{
	uint64_t pos;
	unsigned long pass = 1;
	char c;

	s = skip_space(s);
	if (parse_num(&s, &pos) || parse_status(&s, &c) || !line_status(c))
		return -EINVAL;
	if (*s) {
		char *end;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		errno = 0;
		pass = strtoul(s, &end, 10);
		if (errno || pass < 1 || pass > INT_MAX)
			return -EINVAL;
		if (*skip_space(end))
			return -EINVAL;
	}
	m->cur_pos = pos;
	m->cur_status = c;
	m->pass = (unsigned int)pass;
	return 0;
}

/* "POS SIZE STATUS" */
static int parse_block_line(const char *s, struct pdd_extent *e)
{
	s = skip_space(s);
	if (parse_num(&s, &e->pos) || parse_num(&s, &e->size) ||
	    parse_status(&s, &e->status) || *s || !block_status(e->status))
		return -EINVAL;
	if (e->size > (uint64_t)INT64_MAX - e->pos)
		return -EINVAL;
	/* ddrescue writes "0 0 ?" for an empty domain; nothing else may be
	 * empty */
	if (!e->size && e->pos)
		return -EINVAL;
	return 0;
}

static int bad_line(const char *name, unsigned long line, const char *what)
{
	pdd_error("map '%s' line %lu: %s", name, line, what);
	return -EINVAL;
}


/* Line by line: blank lines and comments (first non-blank character '#',
 * as ddrescue has it) are skipped, the first other line is the status
 * line, the rest are blocks. */
static int parse_lines(struct pdd_map *m, FILE *f, const char *name)
{
	char *buf = NULL;
	size_t bufsz = 0;
	ssize_t len;
	unsigned long line = 0;
	bool have_status = false;
	uint64_t next = 0;	/* where the next block must start */
	bool have_block = false;
	int ret = 0;

	/* errno: getline() sets it only when a read or its buffer fails */
	while ((errno = 0, len = getline(&buf, &bufsz, f)) >= 0) {
		struct pdd_extent e;
		const char *s;

		line++;
		if (len && buf[len - 1] == '\n') {
			buf[--len] = '\0';
		} else if (ferror(f)) {		/* cut short by a read error */
			len = -1;
			break;
		}
		if (len > MAP_MAX_LINE) {
			ret = bad_line(name, line, "line too long");
			break;
		}
		s = skip_space(buf);
		if (!*s && (size_t)(s - buf) == (size_t)len)
			continue;
		if (*s == '#')
			continue;
		/* a NUL inside the line would hide the rest from the parser */
		if (strlen(buf) != (size_t)len) {
			ret = bad_line(name, line, have_status ?
				       "bad block line" : "bad status line");
			break;
		}
		if (!have_status) {
			if (parse_status_line(m, s)) {
				ret = bad_line(name, line, "bad status line");
				break;
			}
			have_status = true;
			continue;
		}
		if (parse_block_line(s, &e)) {
			ret = bad_line(name, line, "bad block line");
			break;
		}
		/* the empty "0 0 ?" still anchors the next block at 0, as
		 * in ddrescue */
		if (have_block && e.pos != next) {
			ret = bad_line(name, line, "blocks are not contiguous");
			break;
		}
		have_block = true;
		next = e.pos + e.size;
		ret = pdd_extent_push(&m->ext, &m->n, &m->cap, e.pos, e.size,
				      e.status);
		if (ret) {
			pdd_error("cannot read map '%s': %s", name, strerror(-ret));
			break;
		}
	}
	/* a failed read (EIO, EISDIR; ENOMEM on a giant line) is not the end:
	 * what was read so far would pass for the whole map */
	if (len < 0 && !feof(f)) {
		ret = errno ? -errno : -EIO;
		pdd_error("cannot read map '%s': %s", name, strerror(-ret));
	}
	free(buf);
	return ret;
}

int pdd_map_parse(struct pdd_map *m, FILE *f, const char *name)
{
	int ret;

	pdd_map_reset(m);
	ret = parse_lines(m, f, name);
	if (ret)
		pdd_map_reset(m);
	return ret;
}

/* --- writing -------------------------------------------------------------- */

static void fmt_time(char *buf, size_t len, time_t t)
{
	struct tm tm;

	if (!localtime_r(&t, &tm) ||
	    !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "?");
}

int pdd_map_write(const struct pdd_map *m, FILE *f, time_t now)
{
	char start[64], cur[64];
	size_t i;

	fmt_time(start, sizeof(start), m->started);
	fmt_time(cur, sizeof(cur), now);
	fprintf(f, "# Mapfile. Created by pdd " PDD_VERSION "\n");
	if (m->cmdline)
		fprintf(f, "# Command line: %s\n", m->cmdline);
	fprintf(f, "# Start time:   %s\n", start);
	fprintf(f, "# Current time: %s\n", cur);
	fprintf(f, "# %s\n", m->cur_status == PDD_MAP_DONE ? "Finished" :
			      m->msg ? m->msg : "Copying");
	fprintf(f, "# current_pos  current_status  current_pass\n");
	fprintf(f, "0x%08" PRIX64 "     %c               %u\n",
		m->cur_pos, m->cur_status, m->pass);
	fprintf(f, "#      pos        size  status\n");
	for (i = 0; i < m->n; i++)
		fprintf(f, "0x%08" PRIX64 "  0x%08" PRIX64 "  %c\n",
			m->ext[i].pos, m->ext[i].size, m->ext[i].status);
	if (fflush(f) || ferror(f))
		return -EIO;
	return 0;
}
