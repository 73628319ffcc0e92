/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sequencer: which transfer may be written next, and the done mark.
 *
 * Transfers are numbered from 0 in input order.  Reads may finish in any
 * order; writes are issued strictly in ascending number; writes may finish
 * in any order.  The done mark is the number of transfers below which every
 * write has finished, which is what pdd reports as progress.  At most 'win'
 * transfers are between the done mark and the next one read, so transfer i
 * lives in slot i % win.
 */
#ifndef PDD_SEQ_H
#define PDD_SEQ_H

#include <stdbool.h>
#include <stdint.h>

enum pdd_seq_state {
	PDD_SEQ_FREE,			/* slot unused */
	PDD_SEQ_READING,		/* read in flight */
	PDD_SEQ_READY,			/* read done, waiting to be written */
	PDD_SEQ_WRITING,		/* write in flight */
	PDD_SEQ_WRITTEN,		/* written, waiting for the done mark */
};

struct pdd_seq {
	uint64_t done;			/* transfers below this are all written */
	uint64_t next_read;		/* next transfer to hand out for reading */
	uint64_t next_write;		/* next transfer whose write may issue */
	uint64_t end;			/* transfers at or above this are not
					 * written (end of input, or an error) */
	unsigned int win;		/* slots */
	unsigned char *state;		/* enum pdd_seq_state per slot */
};

int pdd_seq_init(struct pdd_seq *s, unsigned int win, uint64_t end);
void pdd_seq_free(struct pdd_seq *s);
bool pdd_seq_can_read(const struct pdd_seq *s);
uint64_t pdd_seq_start_read(struct pdd_seq *s);
void pdd_seq_read_done(struct pdd_seq *s, uint64_t idx);
bool pdd_seq_peek_write(const struct pdd_seq *s, uint64_t *idx);
bool pdd_seq_next_write(struct pdd_seq *s, uint64_t *idx);
void pdd_seq_write_done(struct pdd_seq *s, uint64_t idx);
void pdd_seq_stop_at(struct pdd_seq *s, uint64_t idx);
void pdd_seq_drop(struct pdd_seq *s, uint64_t idx);

/* Reading the sequencer: its slots, the done mark, the next transfer to
 * read and to write, and where writing ends. */
static inline unsigned int pdd_seq_win(const struct pdd_seq *s) { return s->win; }
static inline uint64_t pdd_seq_done(const struct pdd_seq *s) { return s->done; }
static inline uint64_t pdd_seq_next_read(const struct pdd_seq *s) { return s->next_read; }
static inline uint64_t pdd_seq_to_write(const struct pdd_seq *s) { return s->next_write; }
static inline uint64_t pdd_seq_end(const struct pdd_seq *s) { return s->end; }

#endif
