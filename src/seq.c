// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sequencer (see include/seq.h).  It is plain bookkeeping with no
 * locks: only the copy core's loop touches it.
 */
#include <errno.h>
#include <stdlib.h>

#include "seq.h"

int pdd_seq_init(struct pdd_seq *s, unsigned int win, uint64_t end)
{
	if (!win)
		return -EINVAL;
	s->state = calloc(win, 1);
	if (!s->state)
		return -ENOMEM;
	s->win = win;
	s->done = 0;
	s->next_read = 0;
	s->next_write = 0;
	s->end = end;
	return 0;
}

void pdd_seq_free(struct pdd_seq *s)
{
	free(s->state);
	s->state = NULL;
}

static unsigned char *slot(const struct pdd_seq *s, uint64_t idx)
{
	return &s->state[idx % s->win];
}

/* A new read may start when it is wanted and its slot is free. */
bool pdd_seq_can_read(const struct pdd_seq *s)
{
	return s->next_read < s->end && s->next_read < s->done + s->win;
}

uint64_t pdd_seq_start_read(struct pdd_seq *s)
{
	uint64_t idx = s->next_read++;

	*slot(s, idx) = PDD_SEQ_READING;
	return idx;
}

void pdd_seq_read_done(struct pdd_seq *s, uint64_t idx)
{
	*slot(s, idx) = PDD_SEQ_READY;
}

/* The next transfer to write, if its data is in and nothing stops it. */
bool pdd_seq_peek_write(const struct pdd_seq *s, uint64_t *idx)
{
	if (s->next_write >= s->end || *slot(s, s->next_write) != PDD_SEQ_READY)
		return false;
	*idx = s->next_write;
	return true;
}

/* The same, and its write is now issued. */
bool pdd_seq_next_write(struct pdd_seq *s, uint64_t *idx)
{
	if (!pdd_seq_peek_write(s, idx))
		return false;
	*slot(s, *idx) = PDD_SEQ_WRITING;
	s->next_write++;
	return true;
}

/* Finishing the write at the done mark moves the mark over every
 * contiguous finished write behind it and frees their slots. */
void pdd_seq_write_done(struct pdd_seq *s, uint64_t idx)
{
	*slot(s, idx) = PDD_SEQ_WRITTEN;
	while (s->done < s->next_write && *slot(s, s->done) == PDD_SEQ_WRITTEN) {
		*slot(s, s->done) = PDD_SEQ_FREE;
		s->done++;
	}
}

/* Nothing at or above idx will be read any more or written. */
void pdd_seq_stop_at(struct pdd_seq *s, uint64_t idx)
{
	if (idx < s->end)
		s->end = idx;
}

/* A read at or above the end finished: its data is thrown away and its
 * slot is free again (no read starts past the end, so none reuses it). */
void pdd_seq_drop(struct pdd_seq *s, uint64_t idx)
{
	*slot(s, idx) = PDD_SEQ_FREE;
}
