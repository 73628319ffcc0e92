// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the sequencer (seq.c).  The fixed cases walk one window
 * by hand; the randomized ones play a copy with a seeded PRNG, finishing
 * reads and writes in random order, sometimes with an error or the end of
 * the input at a chosen transfer, and check after every step that writes
 * are issued strictly in ascending order, that the done mark is exactly
 * the number of contiguous finished writes, and that reads stay inside
 * the window and below the end.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "seq.h"

static int state_of(const struct pdd_seq *s, uint64_t idx)
{
	return s->state[idx % s->win];
}

/* Start reads until the sequencer says no; returns how many started and
 * checks that they are handed out in order from first. */
static unsigned int start_reads(struct pdd_seq *s, uint64_t first)
{
	unsigned int n = 0;

	while (pdd_seq_can_read(s)) {
		assert_int_equal(pdd_seq_start_read(s), first + n);
		n++;
	}
	return n;
}

/* --- fixed cases ---------------------------------------------------------- */

static void test_init_refuses_empty_window(void **state)
{
	struct pdd_seq s;

	(void)state;
	assert_int_equal(pdd_seq_init(&s, 0, 10), -EINVAL);
}

static void test_init_and_free(void **state)
{
	struct pdd_seq s;

	(void)state;
	assert_int_equal(pdd_seq_init(&s, 4, 10), 0);
	assert_int_equal(s.done, 0);
	assert_int_equal(s.next_read, 0);
	assert_int_equal(s.next_write, 0);
	assert_int_equal(s.end, 10);
	assert_int_equal(s.win, 4);
	for (unsigned int i = 0; i < 4; i++)
		assert_int_equal(s.state[i], PDD_SEQ_FREE);
	pdd_seq_free(&s);
	assert_null(s.state);
}

static void test_window_limits_reads(void **state)
{
	struct pdd_seq s;
	uint64_t idx;

	(void)state;
	assert_int_equal(pdd_seq_init(&s, 3, 100), 0);
	assert_int_equal(start_reads(&s, 0), 3);
	assert_false(pdd_seq_can_read(&s));
	assert_int_equal(state_of(&s, 0), PDD_SEQ_READING);
	pdd_seq_read_done(&s, 0);
	assert_int_equal(state_of(&s, 0), PDD_SEQ_READY);
	/* a finished read does not free its slot: only the done mark does */
	assert_false(pdd_seq_can_read(&s));
	assert_true(pdd_seq_next_write(&s, &idx));
	assert_int_equal(idx, 0);
	assert_int_equal(state_of(&s, 0), PDD_SEQ_WRITING);
	assert_false(pdd_seq_can_read(&s));
	pdd_seq_write_done(&s, 0);
	assert_int_equal(s.done, 1);
	assert_int_equal(state_of(&s, 0), PDD_SEQ_FREE);
	assert_true(pdd_seq_can_read(&s));
	assert_int_equal(start_reads(&s, 3), 1);
	assert_int_equal(state_of(&s, 3), PDD_SEQ_READING);
	pdd_seq_free(&s);
}

static void test_end_limits_reads(void **state)
{
	struct pdd_seq s;

	(void)state;
	assert_int_equal(pdd_seq_init(&s, 8, 3), 0);
	assert_int_equal(start_reads(&s, 0), 3);
	assert_int_equal(s.next_read, 3);
	pdd_seq_free(&s);

	assert_int_equal(pdd_seq_init(&s, 8, 0), 0);
	assert_false(pdd_seq_can_read(&s));
	pdd_seq_free(&s);
}

static void test_writes_wait_for_lowest_read(void **state)
{
	struct pdd_seq s;
	uint64_t idx = 99;

	(void)state;
	assert_int_equal(pdd_seq_init(&s, 4, 4), 0);
	assert_int_equal(start_reads(&s, 0), 4);
	pdd_seq_read_done(&s, 3);
	pdd_seq_read_done(&s, 1);
	pdd_seq_read_done(&s, 2);
	/* 1, 2 and 3 are in, but 0 is not: nothing may be written */
	assert_false(pdd_seq_next_write(&s, &idx));
	assert_int_equal(idx, 99);
	assert_int_equal(s.next_write, 0);
	pdd_seq_read_done(&s, 0);
	for (uint64_t want = 0; want < 4; want++) {
		assert_true(pdd_seq_next_write(&s, &idx));
		assert_int_equal(idx, want);
	}
	assert_false(pdd_seq_next_write(&s, &idx));
	assert_int_equal(s.next_write, 4);
	pdd_seq_free(&s);
}

static void test_write_gap_stops_writes(void **state)
{
	struct pdd_seq s;
	uint64_t idx;

	(void)state;
	assert_int_equal(pdd_seq_init(&s, 4, 4), 0);
	assert_int_equal(start_reads(&s, 0), 4);
	pdd_seq_read_done(&s, 0);
	pdd_seq_read_done(&s, 2);
	assert_true(pdd_seq_next_write(&s, &idx));
	assert_int_equal(idx, 0);
	/* 2 is ready but 1 is not */
	assert_false(pdd_seq_next_write(&s, &idx));
	pdd_seq_read_done(&s, 1);
	assert_true(pdd_seq_next_write(&s, &idx));
	assert_int_equal(idx, 1);
	assert_true(pdd_seq_next_write(&s, &idx));
	assert_int_equal(idx, 2);
	assert_false(pdd_seq_next_write(&s, &idx));
	pdd_seq_free(&s);
}

static void test_peek_write_changes_nothing(void **state)
{
	struct pdd_seq s;
	uint64_t idx = 99;

	(void)state;
	assert_int_equal(pdd_seq_init(&s, 4, 3), 0);
	assert_int_equal(start_reads(&s, 0), 3);
	assert_false(pdd_seq_peek_write(&s, &idx));
	assert_int_equal(idx, 99);
	pdd_seq_read_done(&s, 1);
	assert_false(pdd_seq_peek_write(&s, &idx));
	pdd_seq_read_done(&s, 0);
	/* asked twice, the same answer: peeking issues nothing */
	assert_true(pdd_seq_peek_write(&s, &idx));
	assert_int_equal(idx, 0);
	assert_true(pdd_seq_peek_write(&s, &idx));
	assert_int_equal(idx, 0);
	assert_int_equal(s.next_write, 0);
	assert_int_equal(state_of(&s, 0), PDD_SEQ_READY);
	assert_true(pdd_seq_next_write(&s, &idx));
	assert_int_equal(idx, 0);
	assert_int_equal(state_of(&s, 0), PDD_SEQ_WRITING);
	assert_true(pdd_seq_peek_write(&s, &idx));
	assert_int_equal(idx, 1);
	assert_true(pdd_seq_next_write(&s, &idx));
	assert_int_equal(idx, 1);
	/* 2 is still being read */
	assert_false(pdd_seq_peek_write(&s, &idx));
	pdd_seq_read_done(&s, 2);
	pdd_seq_stop_at(&s, 2);
	/* ready, but past the end */
	idx = 99;
	assert_false(pdd_seq_peek_write(&s, &idx));
	assert_int_equal(idx, 99);
	pdd_seq_free(&s);
}

static void test_done_mark_is_contiguous(void **state)
{
	struct pdd_seq s;
	uint64_t idx;

	(void)state;
	assert_int_equal(pdd_seq_init(&s, 4, 4), 0);
	assert_int_equal(start_reads(&s, 0), 4);
	for (uint64_t i = 0; i < 4; i++)
		pdd_seq_read_done(&s, i);
	for (uint64_t i = 0; i < 4; i++)
		assert_true(pdd_seq_next_write(&s, &idx));
	pdd_seq_write_done(&s, 2);
	assert_int_equal(s.done, 0);
	assert_int_equal(state_of(&s, 2), PDD_SEQ_WRITTEN);
	pdd_seq_write_done(&s, 3);
	assert_int_equal(s.done, 0);
	pdd_seq_write_done(&s, 0);
	assert_int_equal(s.done, 1);
	pdd_seq_write_done(&s, 1);
	/* 1 closes the gap: the mark moves over 2 and 3 too */
	assert_int_equal(s.done, 4);
	for (uint64_t i = 0; i < 4; i++)
		assert_int_equal(state_of(&s, i), PDD_SEQ_FREE);
	pdd_seq_free(&s);
}

static void test_slots_wrap_around(void **state)
{
	struct pdd_seq s;
	uint64_t idx;

	(void)state;
	/* a window of one: strictly read, write, read, write */
	assert_int_equal(pdd_seq_init(&s, 1, 5), 0);
	for (uint64_t i = 0; i < 5; i++) {
		assert_int_equal(start_reads(&s, i), 1);
		pdd_seq_read_done(&s, i);
		assert_true(pdd_seq_next_write(&s, &idx));
		assert_int_equal(idx, i);
		assert_false(pdd_seq_can_read(&s));
		pdd_seq_write_done(&s, i);
		assert_int_equal(s.done, i + 1);
	}
	assert_false(pdd_seq_can_read(&s));
	assert_false(pdd_seq_next_write(&s, &idx));
	pdd_seq_free(&s);
}

static void test_stop_at_read_error(void **state)
{
	struct pdd_seq s;
	uint64_t idx;

	(void)state;
	assert_int_equal(pdd_seq_init(&s, 8, 100), 0);
	assert_int_equal(start_reads(&s, 0), 8);
	/* the read of 3 fails */
	pdd_seq_stop_at(&s, 3);
	assert_int_equal(s.end, 3);
	pdd_seq_read_done(&s, 0);
	pdd_seq_read_done(&s, 1);
	pdd_seq_read_done(&s, 2);
	for (uint64_t i = 4; i < 8; i++)
		pdd_seq_drop(&s, i);
	for (uint64_t want = 0; want < 3; want++) {
		assert_true(pdd_seq_next_write(&s, &idx));
		assert_int_equal(idx, want);
	}
	assert_false(pdd_seq_next_write(&s, &idx));
	for (uint64_t i = 0; i < 3; i++)
		pdd_seq_write_done(&s, i);
	assert_int_equal(s.done, 3);
	/* the window has room again, but nothing past the error is read */
	assert_false(pdd_seq_can_read(&s));
	pdd_seq_free(&s);
}

static void test_stop_at_below_window_still_reads_up_to_it(void **state)
{
	struct pdd_seq s;

	(void)state;
	assert_int_equal(pdd_seq_init(&s, 4, 100), 0);
	assert_int_equal(pdd_seq_start_read(&s), 0);
	assert_int_equal(pdd_seq_start_read(&s), 1);
	/* the end of the input turns out to be at 3: 2 must still be read */
	pdd_seq_stop_at(&s, 3);
	assert_int_equal(start_reads(&s, 2), 1);
	assert_int_equal(s.next_read, 3);
	pdd_seq_free(&s);
}

static void test_stop_at_write_error_holds_done_mark(void **state)
{
	struct pdd_seq s;
	uint64_t idx;

	(void)state;
	assert_int_equal(pdd_seq_init(&s, 8, 8), 0);
	assert_int_equal(start_reads(&s, 0), 8);
	for (uint64_t i = 0; i < 8; i++)
		pdd_seq_read_done(&s, i);
	for (uint64_t i = 0; i < 6; i++)
		assert_true(pdd_seq_next_write(&s, &idx));
	/* the write of 2 fails while 3, 4 and 5 are in flight */
	pdd_seq_write_done(&s, 0);
	pdd_seq_stop_at(&s, 2);
	pdd_seq_write_done(&s, 1);
	pdd_seq_write_done(&s, 5);
	pdd_seq_write_done(&s, 3);
	pdd_seq_write_done(&s, 4);
	assert_int_equal(s.done, 2);
	/* 6 and 7 were read but lie past the error */
	assert_false(pdd_seq_next_write(&s, &idx));
	assert_false(pdd_seq_can_read(&s));
	pdd_seq_free(&s);
}

static void test_stop_at_keeps_lowest(void **state)
{
	struct pdd_seq s;

	(void)state;
	assert_int_equal(pdd_seq_init(&s, 4, 50), 0);
	pdd_seq_stop_at(&s, 20);
	assert_int_equal(s.end, 20);
	pdd_seq_stop_at(&s, 30);
	assert_int_equal(s.end, 20);
	pdd_seq_stop_at(&s, 7);
	assert_int_equal(s.end, 7);
	pdd_seq_stop_at(&s, 7);
	assert_int_equal(s.end, 7);
	pdd_seq_free(&s);
}

static void test_drop_frees_slot_only(void **state)
{
	struct pdd_seq s;
	uint64_t idx;

	(void)state;
	assert_int_equal(pdd_seq_init(&s, 4, 100), 0);
	assert_int_equal(start_reads(&s, 0), 4);
	/* the input ends inside 2: 2 is the last transfer, 3 is past it */
	pdd_seq_stop_at(&s, 3);
	pdd_seq_drop(&s, 3);
	assert_int_equal(state_of(&s, 3), PDD_SEQ_FREE);
	assert_int_equal(s.next_read, 4);
	assert_int_equal(s.done, 0);
	assert_int_equal(s.next_write, 0);
	for (uint64_t i = 0; i < 3; i++)
		pdd_seq_read_done(&s, i);
	for (uint64_t want = 0; want < 3; want++) {
		assert_true(pdd_seq_next_write(&s, &idx));
		assert_int_equal(idx, want);
		pdd_seq_write_done(&s, want);
	}
	assert_false(pdd_seq_next_write(&s, &idx));
	assert_false(pdd_seq_can_read(&s));
	assert_int_equal(s.done, 3);
	pdd_seq_free(&s);
}

/* --- randomized ----------------------------------------------------------- */

/* xorshift64*: the same sequence on every machine */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static unsigned int rnd_below(unsigned int n)
{
	return (unsigned int)(rnd() % n);
}

enum stop_kind {
	STOP_NONE,		/* the copy runs to total */
	STOP_READ_ERROR,	/* the read of k fails */
	STOP_EOF,		/* the read of k finds the end of the input */
	STOP_WRITE_ERROR,	/* the write of k fails */
};

struct sim {
	struct pdd_seq s;
	uint64_t total;			/* transfers the copy would have */
	enum stop_kind stop;		/* what happens at k */
	uint64_t k;			/* where it happens */
	uint64_t reads[16];		/* reads in flight */
	unsigned int nreads;
	uint64_t writes[16];		/* writes in flight */
	unsigned int nwrites;
	bool *written;			/* per transfer: write finished */
	uint64_t issued;		/* writes issued so far */
	uint64_t max_done;		/* highest done mark seen */
};

static uint64_t take(uint64_t *v, unsigned int *n, unsigned int i)
{
	uint64_t x = v[i];

	v[i] = v[--*n];
	return x;
}

/* What the done mark must be: the count of contiguous finished writes. */
static uint64_t contiguous(const struct sim *m)
{
	uint64_t n = 0;

	while (n < m->total && m->written[n])
		n++;
	return n;
}

static void check_invariants(const struct sim *m)
{
	const struct pdd_seq *s = &m->s;

	assert_int_equal(s->done, contiguous(m));
	assert_true(s->done >= m->max_done);
	assert_true(s->next_read <= s->done + s->win);
	assert_true(s->done <= s->next_write);
	assert_true(s->next_write <= s->next_read);
	assert_int_equal(s->next_write, m->issued);
	if (m->stop != STOP_NONE)
		assert_true(s->done <= m->k);
}

static void step(struct sim *m)
{
	struct pdd_seq *s = &m->s;
	uint64_t idx;

	switch (rnd_below(4)) {
	case 0:		/* start some reads */
		for (unsigned int n = rnd_below(4); n && pdd_seq_can_read(s); n--) {
			uint64_t end = s->end;

			idx = pdd_seq_start_read(s);
			assert_true(idx < end);
			assert_true(idx < s->done + s->win);
			assert_true(idx < m->total);
			assert_true(m->nreads < 16);
			m->reads[m->nreads++] = idx;
		}
		break;
	case 1:		/* finish one read */
		if (!m->nreads)
			break;
		idx = take(m->reads, &m->nreads, rnd_below(m->nreads));
		if (idx >= s->end) {
			pdd_seq_drop(s, idx);
		} else if (idx == m->k && m->stop == STOP_READ_ERROR) {
			pdd_seq_stop_at(s, idx);
		} else if (idx == m->k && m->stop == STOP_EOF) {
			pdd_seq_stop_at(s, idx);
			pdd_seq_drop(s, idx);
		} else {
			pdd_seq_read_done(s, idx);
		}
		break;
	case 2:		/* issue what may be written */
		for (;;) {
			uint64_t peeked = UINT64_MAX;
			bool ready = pdd_seq_peek_write(s, &peeked);

			assert_int_equal(pdd_seq_next_write(s, &idx), ready);
			if (!ready)
				break;
			assert_int_equal(idx, peeked);
			assert_int_equal(idx, m->issued);
			assert_true(idx < s->end);
			m->issued++;
			assert_true(m->nwrites < 16);
			m->writes[m->nwrites++] = idx;
		}
		break;
	case 3:		/* finish one write */
		if (!m->nwrites)
			break;
		idx = take(m->writes, &m->nwrites, rnd_below(m->nwrites));
		if (idx == m->k && m->stop == STOP_WRITE_ERROR) {
			pdd_seq_stop_at(s, idx);
		} else {
			m->written[idx] = true;
			pdd_seq_write_done(s, idx);
		}
		break;
	}
	if (s->done > m->max_done)
		m->max_done = s->done;
	check_invariants(m);
}

/* One copy of total transfers through a window of win, run until nothing
 * more can happen; returns the final done mark. */
static uint64_t play(unsigned int win, uint64_t total, enum stop_kind stop,
		     uint64_t k)
{
	struct sim m = { .total = total, .stop = stop, .k = k };
	uint64_t done;

	m.written = calloc(total + 1, sizeof(*m.written));
	assert_non_null(m.written);
	assert_int_equal(pdd_seq_init(&m.s, win, total), 0);
	for (;;) {
		uint64_t idx;

		step(&m);
		if (m.nreads || m.nwrites || pdd_seq_can_read(&m.s))
			continue;
		/* nothing in flight: only a ready write can still move */
		if (!pdd_seq_next_write(&m.s, &idx))
			break;
		assert_int_equal(idx, m.issued);
		m.issued++;
		m.writes[m.nwrites++] = idx;
	}
	done = m.s.done;
	/* no write at or past the stop was ever issued, except those
	 * already on their way when a write error stopped the copy */
	if (stop == STOP_READ_ERROR || stop == STOP_EOF)
		assert_true(m.issued <= k);
	pdd_seq_free(&m.s);
	free(m.written);
	return done;
}

static void test_random_order_completes(void **state)
{
	(void)state;
	rng_state = 0x9e3779b97f4a7c15ULL;
	for (unsigned int round = 0; round < 2000; round++) {
		unsigned int win = 1 + round % 16;
		uint64_t total = rnd_below(64);

		assert_int_equal(play(win, total, STOP_NONE, UINT64_MAX), total);
	}
}

static void test_random_read_error_stops_at_k(void **state)
{
	(void)state;
	rng_state = 0x243f6a8885a308d3ULL;
	for (unsigned int round = 0; round < 2000; round++) {
		unsigned int win = 1 + round % 16;
		uint64_t total = 1 + rnd_below(64);
		uint64_t k = rnd_below((unsigned int)total);

		assert_int_equal(play(win, total, STOP_READ_ERROR, k), k);
	}
}

static void test_random_eof_stops_at_k(void **state)
{
	(void)state;
	rng_state = 0x13198a2e03707344ULL;
	for (unsigned int round = 0; round < 2000; round++) {
		unsigned int win = 1 + round % 16;
		uint64_t total = 1 + rnd_below(64);
		uint64_t k = rnd_below((unsigned int)total);

		assert_int_equal(play(win, total, STOP_EOF, k), k);
	}
}

static void test_random_write_error_stops_at_k(void **state)
{
	(void)state;
	rng_state = 0xa4093822299f31d0ULL;
	for (unsigned int round = 0; round < 2000; round++) {
		unsigned int win = 1 + round % 16;
		uint64_t total = 1 + rnd_below(64);
		uint64_t k = rnd_below((unsigned int)total);

		assert_int_equal(play(win, total, STOP_WRITE_ERROR, k), k);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_refuses_empty_window),
		cmocka_unit_test(test_init_and_free),
		cmocka_unit_test(test_window_limits_reads),
		cmocka_unit_test(test_end_limits_reads),
		cmocka_unit_test(test_writes_wait_for_lowest_read),
		cmocka_unit_test(test_write_gap_stops_writes),
		cmocka_unit_test(test_peek_write_changes_nothing),
		cmocka_unit_test(test_done_mark_is_contiguous),
		cmocka_unit_test(test_slots_wrap_around),
		cmocka_unit_test(test_stop_at_read_error),
		cmocka_unit_test(test_stop_at_below_window_still_reads_up_to_it),
		cmocka_unit_test(test_stop_at_write_error_holds_done_mark),
		cmocka_unit_test(test_stop_at_keeps_lowest),
		cmocka_unit_test(test_drop_frees_slot_only),
		cmocka_unit_test(test_random_order_completes),
		cmocka_unit_test(test_random_read_error_stops_at_k),
		cmocka_unit_test(test_random_eof_stops_at_k),
		cmocka_unit_test(test_random_write_error_stops_at_k),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
