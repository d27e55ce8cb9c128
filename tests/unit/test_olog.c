/*
 * test_olog.c
 *	  The operation log: counts out of range refused; records of every
 *	  length from 0 to PM_OLOG_MAX_RECORD read back as written and where
 *	  the format puts them (a segment's end skipped, marked where a header
 *	  fits); a lane full at max_segments, with room again once reclaimed,
 *	  and reclaimed segments back in the allocator; a segment filled
 *	  exactly, reclaimed to its end with the next not yet linked; two
 *	  persists an append; a writer hint or read cursor that does not check
 *	  out (the log validates, records go where they belong, the read says
 *	  corrupt); a writer, an applier-reclaimer with one cursor throughout, a
 *	  reader and a follower thread (one cursor over every segment while the
 *	  reclaimer frees below it) passing 1M records of random lengths; the
 *	  walks and time (a diag) of an append as 1 to 64 segments lie between
 *	  head and tail; damaged directories,
 *	  positions, chains and records refused, and read without a step out of
 *	  the pool, under targeted and random damage; allocator recovery keeping
 *	  the log and freeing segments a crash left unlinked; and an adr power
 *	  failure at every persistence event of a workload that wraps into new
 *	  segments, applies and reclaims: each image validates and holds every
 *	  acknowledged record whole and in order, a negative control (a tail
 *	  written before its record) being caught.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness_crash.h"
#include "olog.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

#define SEG_DATA		((uint64_t) PM_OLOG_SEGMENT_DATA)
#define MAX_BYTES		(16 + PM_OLOG_MAX_RECORD)	/* the largest record's bytes */
#define NLANES			3
#define MAX_SEGMENTS	4
#define LENGTHS_RECORDS (3 * (PM_OLOG_MAX_RECORD + 1))
#define THREAD_RECORDS	1000000
#define DAMAGE_ROUNDS	4000
#define MODEL_MAX		8192

/* ---------- records: host position = sequence number, data derived from it ---------- */

static uint64_t
mix(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* Record seq's data, len bytes of it, in whole words. */
static void
make_data(uint64_t seq, uint32_t len, uint64_t *buf)
{
	uint64_t	w = mix(seq);

	for (uint32_t i = 0; i < (len + 7) / 8; i++)
		buf[i] = w + i * UINT64_C(0x9e3779b97f4a7c15);
}

static bool
record_is(const pm_olog_record *rec, uint64_t seq, uint32_t len)
{
	uint64_t	buf[PM_OLOG_MAX_RECORD / 8];

	if (rec->host_pos != seq || rec->len != len)
		return false;
	make_data(seq, len, buf);
	return memcmp(rec->data, buf, len) == 0;
}

/* The format's arithmetic, done again here: a record's bytes and where it goes after tail. */
static uint64_t
bytes_of(uint32_t len)
{
	return 16 + ((uint64_t) len + 7) / 8 * 8;
}

static uint64_t
start_of(uint64_t tail, uint32_t len)
{
	uint64_t	left = SEG_DATA - tail % SEG_DATA;

	return bytes_of(len) <= left ? tail : tail + left;
}

static uint64_t
end_of(uint64_t tail, uint32_t len)
{
	return start_of(tail, len) + bytes_of(len);
}

/* ---------- a lane's expected contents ---------- */

typedef struct model
{
	uint64_t	n;				/* records: sequence numbers 0 .. n - 1 */
	uint32_t	lens[MODEL_MAX];
	uint64_t	ends[MODEL_MAX];	/* the tail after record k */
} model;

static model m0;				/* lane 0: every length */
static model m2;				/* lane 2: segment ends */
static model cm;				/* the crash workload's lane */

/* Where record k's predecessor ends (the tail before record k). */
static uint64_t
model_end(const model *m, uint64_t k)
{
	return k == 0 ? 0 : m->ends[k - 1];
}

/* The first record that ends past pos. */
static uint64_t
model_first(const model *m, uint64_t pos)
{
	uint64_t	k = 0;

	while (k < m->n && m->ends[k] <= pos)
		k++;
	return k;
}

static pm_olog_lane *
lane_of(const pm_pool *pool, uint32_t lane)
{
	return pm_olog_lane_at(pool, pm_olog_of(pool), lane);
}

/* The lane's segment numbered seq, from its head; NULL if it is not linked. */
static pm_olog_segment *
segment_of(const pm_pool *pool, const pm_olog_lane *l, uint64_t seq)
{
	for (uint64_t off = l->head; off != 0;)
	{
		pm_olog_segment *s = pm_pool_addr(pool, off);

		if (s->seq == seq)
			return s;
		off = s->next;
	}
	return NULL;
}

static uint64_t
next_of(const pm_pool *pool, uint64_t off)
{
	return ((pm_olog_segment *) pm_pool_addr(pool, off))->next;
}

static uint64_t
chain_length(const pm_pool *pool, const pm_olog_lane *l)
{
	uint64_t	n = 0;

	for (uint64_t off = l->head; off != 0; off = next_of(pool, off))
		n++;
	return n;
}

static uint64_t
blocks_in_use(const pm_alloc *a)
{
	pm_alloc_stats st;

	pm_alloc_get_stats(a, &st);
	return st.blocks;
}

/* Appends that took other than two persists, and records not where the format puts them. */
static uint64_t extra_persists;
static uint64_t misplaced;
static uint64_t skip_headers;	/* segment ends marked with a skip header */
static uint64_t short_ends;		/* segment ends with less than a header left */

/* Reserve and append the model's next record, of len bytes; the reserve's code. */
static pm_errcode
model_put(model *m, pm_pool *pool, pm_alloc *a, uint32_t lane, uint32_t len, pm_error *err)
{
	const pm_olog *o = pm_olog_of(pool);
	pm_olog_lane *l = lane_of(pool, lane);
	uint64_t	buf[PM_OLOG_MAX_RECORD / 8];
	uint64_t	tail = model_end(m, m->n);
	uint64_t	fences;
	uint64_t	end;
	pm_errcode	rc;

	if (m->n == MODEL_MAX)
	{
		tap_diag("more than %d records in a model", MODEL_MAX);
		exit(1);
	}
	if ((rc = pm_olog_reserve(pool, a, o, lane, len, err)) != PM_OK)
		return rc;
	make_data(m->n, len, buf);
	fences = pm_tls_counters.fences;
	end = pm_olog_append(pool, o, lane, buf, len, m->n);
	extra_persists += pm_tls_counters.fences - fences != 2;
	misplaced += end != end_of(tail, len) || l->tail != end;
	if (start_of(tail, len) != tail)
	{
		if (SEG_DATA - tail % SEG_DATA >= 16)
		{
			pm_olog_segment *s = segment_of(pool, l, tail / SEG_DATA);

			misplaced += s == NULL || ((pm_olog_header *) ((char *) s->data + tail % SEG_DATA))->len != PM_OLOG_SKIP;
			skip_headers++;
		}
		else
			short_ends++;
	}
	m->lens[m->n] = len;
	m->ends[m->n++] = end;
	return PM_OK;
}

/*
 * Read a lane from pos to upto: the model's records in order, each where
 * the model ends it, then false with PM_OK at upto.  NULL, or what is
 * wrong.
 */
static const char *
model_read(const model *m, const pm_pool *pool, uint32_t lane, uint64_t pos, uint64_t upto)
{
	static char why[400];
	const pm_olog *o = pm_olog_of(pool);
	uint64_t	k = model_first(m, pos);
	pm_olog_cursor c;
	pm_olog_record rec;
	pm_error	err;

	pm_olog_cursor_init(&c, pos);
	while (pm_olog_next(pool, o, lane, &c, upto, &rec, &err))
	{
		if (k >= m->n || !record_is(&rec, k, m->lens[k]) || c.pos != m->ends[k])
		{
			snprintf(why, sizeof(why), "record %llu is not as written (host position %llu, %u bytes)",
					 (unsigned long long) k, (unsigned long long) rec.host_pos, rec.len);
			return why;
		}
		k++;
	}
	if (err.code != PM_OK || c.pos != upto || (upto != 0 && (k == 0 || m->ends[k - 1] != upto)))
	{
		snprintf(why, sizeof(why), "the read ends at %llu, not %llu (%s)", (unsigned long long) c.pos,
				 (unsigned long long) upto, err.code != PM_OK ? err.msg : "no error");
		return why;
	}
	return NULL;
}

/* Append to the model's lane until the tail's segment has left bytes left (0: it is full). */
static void
fill_left(model *m, pm_pool *pool, pm_alloc *a, uint32_t lane, uint64_t left, pm_error *err)
{
	for (;;)
	{
		uint64_t	tail = model_end(m, m->n);
		uint64_t	have = tail % SEG_DATA == 0 && tail != 0 ? 0 : SEG_DATA - tail % SEG_DATA;
		uint64_t	want = have - left;
		uint64_t	bytes;

		if (want == 0)
			return;
		/* the last record takes what is wanted; those before leave it at least a header */
		bytes = want <= MAX_BYTES ? want : want - 16 < MAX_BYTES ? want - 16 : MAX_BYTES;
		if (model_put(m, pool, a, lane, (uint32_t) (bytes - 16), err) != PM_OK)
			return;
	}
}

/*
 * The walk hook of the stale-head check: once armed, it reclaims lane 2 to
 * hook_upto under the walk that called it, and scribbles over the segment
 * it freed, as another user of the block would.
 */
static pm_pool *hook_pool;
static pm_alloc *hook_alloc;
static uint64_t hook_upto;
static bool hook_armed;
static uint64_t hook_freed;

static void
walk_hook(const pm_olog_lane *l)
{
	uint64_t	head = l->head;

	if (!hook_armed)
		return;
	hook_armed = false;
	pm_olog_reclaim(hook_pool, hook_alloc, pm_olog_of(hook_pool), 2, hook_upto);
	if (l->head != head)
	{
		pm_olog_segment *s = pm_pool_addr(hook_pool, head);

		hook_freed = head;
		s->seq = UINT64_C(0x0123456789abcdef);
		s->next = head;
	}
}

/* ---------- the cost of an append as a lane grows ---------- */

#define COST_SEGMENTS	64
#define COST_LEN		200		/* 216 bytes: segments end in a skip header, none filled exactly */

static uint64_t walks;

static void
count_walk(const pm_olog_lane *l)
{
	(void) l;
	walks++;
}

/*
 * Append to lane `lane` of a log of one pool until COST_SEGMENTS segments
 * lie between its head and its tail, nothing reclaimed; per number of
 * segments, the ns an append takes (reserve and append) and the walks from
 * the head it does.  With forced, the hint is spoiled before each call, so
 * both walk as every append did before the hint.  False if a record went
 * wrong.
 */
static bool
append_costs(pm_pool *pool, pm_alloc *a, uint32_t lane, bool forced, double *ns, uint64_t *nwalks)
{
	const pm_olog *o = pm_olog_of(pool);
	pm_olog_lane *l = pm_olog_lane_at(pool, o, lane);
	uint64_t	buf[COST_LEN / 8 + 1];
	uint64_t	n[COST_SEGMENTS + 1] = {0};
	pm_error	err;

	memset(buf, 0x11, sizeof(buf));
	for (int i = 0; i <= COST_SEGMENTS; i++)
	{
		ns[i] = 0;
		nwalks[i] = 0;
	}
	pm_olog_walk_hook = count_walk;
	for (uint64_t seq = 0;; seq++)
	{
		uint64_t	segs = l->tail / SEG_DATA + 1;
		uint64_t	w = walks;
		double		t0;

		if (segs > COST_SEGMENTS)
			break;
		t0 = now_sec();
		if (forced)
			l->tail_check = ~l->tail_check;
		if (pm_olog_reserve(pool, a, o, lane, COST_LEN, &err) != PM_OK)
		{
			pm_olog_walk_hook = NULL;
			return false;
		}
		if (forced)
			l->tail_check = ~l->tail_check;
		pm_olog_append(pool, o, lane, buf, COST_LEN, seq);
		ns[segs] += now_sec() - t0;
		nwalks[segs] += walks - w;
		n[segs]++;
	}
	pm_olog_walk_hook = NULL;
	for (int i = 1; i <= COST_SEGMENTS; i++)
		ns[i] = n[i] > 0 ? ns[i] * 1e9 / n[i] : 0;
	return true;
}

/* ---------- a writer, an applier-reclaimer and a reader thread ---------- */

#define THREAD_LANE 1

typedef struct threads
{
	pm_pool    *pool;
	const pm_olog *o;
	pm_alloc	writer_alloc;
	pm_alloc	reclaimer_alloc;
	uint64_t	target;			/* the reclaimer reclaims at most this far ... */
	uint64_t	announce;		/* ... and not past where the reader reads (UINT64_MAX: nowhere) */
	uint64_t	done;
	uint64_t	bad;
	char		why[400];
	uint64_t	full;			/* reserves refused while the lane was full */
	uint64_t	reader_passes;
	uint64_t	reader_records;
	uint64_t	follow_at;		/* where the follower's cursor is: no reclaim passes it */
	uint64_t	follow_records;
	uint64_t	follow_walks;	/* its reads that walked from the head */
	uint64_t	follow_segments;	/* segment boundaries it crossed */
} threads;

static uint32_t
thread_len(uint64_t seq)
{
	return (uint32_t) (mix(seq ^ UINT64_C(0x5555)) % (PM_OLOG_MAX_RECORD + 1));
}

static void
thread_fail(threads *t, const char *what, uint64_t seq, const pm_error *err)
{
	if (pm_fetch_add(&t->bad, 1) == 0)
		snprintf(t->why, sizeof(t->why), "%s at record %llu%s%s", what, (unsigned long long) seq,
				 err != NULL ? ": " : "", err != NULL ? err->msg : "");
}

static void *
writer(void *arg)
{
	threads    *t = arg;
	uint64_t	buf[PM_OLOG_MAX_RECORD / 8];
	pm_error	err;

	for (uint64_t seq = 0; seq < THREAD_RECORDS && pm_load(&t->bad) == 0; seq++)
	{
		uint32_t	len = thread_len(seq);
		pm_errcode	rc;

		make_data(seq, len, buf);
		while ((rc = pm_olog_reserve(t->pool, &t->writer_alloc, t->o, THREAD_LANE, len, &err)) == PM_ERR_LIMIT &&
			   pm_load(&t->bad) == 0)
		{
			t->full++;
			sched_yield();
		}
		if (rc != PM_OK)
		{
			thread_fail(t, "a reserve failed", seq, &err);
			break;
		}
		pm_olog_append(t->pool, t->o, THREAD_LANE, buf, len, seq);
	}
	return NULL;
}

/*
 * Applies what the writer appended, then reclaims it, but never past where
 * the reader reads: it publishes how far it means to go, then reads the
 * reader's position (the reader publishes its position, then reads that),
 * which is what the host's epochs do.
 */
static void *
applier(void *arg)
{
	threads    *t = arg;
	pm_olog_lane *l = pm_olog_lane_at(t->pool, t->o, THREAD_LANE);
	uint64_t	seq = 0;
	pm_olog_cursor c;
	pm_olog_record rec;
	pm_error	err;

	/* one cursor throughout: it never reclaims past where the cursor is */
	pm_olog_cursor_init(&c, 0);
	while (seq < THREAD_RECORDS && pm_load(&t->bad) == 0)
	{
		uint64_t	tail = pm_load(&l->tail);
		uint64_t	upto;

		while (pm_olog_next(t->pool, t->o, THREAD_LANE, &c, tail, &rec, &err))
		{
			if (!record_is(&rec, seq, thread_len(seq)))
				thread_fail(t, "the applier read a wrong record", seq, NULL);
			seq++;
		}
		if (err.code != PM_OK)
			thread_fail(t, "the applier's read failed", seq, &err);
		if (pm_load(&t->reader_records) == 0)
		{
			/*
			 * Nothing applied until the reader has read records: on two
			 * cores the applier can otherwise keep applied at the tail for
			 * every one of the reader's passes, and the reader reads nothing.
			 */
			sched_yield();
			continue;
		}
		if (tail > pm_load(&l->applied))
			pm_olog_set_applied(t->pool, t->o, THREAD_LANE, tail);
		else
			sched_yield();
		pm_store(&t->target, tail);
		pm_full_fence();
		upto = pm_load(&t->announce);
		if (upto > pm_load(&t->follow_at))
			upto = pm_load(&t->follow_at);
		if (upto > tail)
			upto = tail;
		if (upto > pm_load(&l->reclaimed))
			pm_olog_reclaim(t->pool, &t->reclaimer_alloc, t->o, THREAD_LANE, upto);
	}
	pm_store(&t->done, 1);
	return NULL;
}

/*
 * One cursor from the lane's start to its end, over every segment the
 * writer links, while the reclaimer frees below it: it publishes where the
 * cursor is, and the reclaimer goes no further (the cursor contract).
 */
static void *
follower(void *arg)
{
	threads    *t = arg;
	pm_olog_lane *l = pm_olog_lane_at(t->pool, t->o, THREAD_LANE);
	pm_olog_cursor c;
	pm_olog_record rec;
	pm_error	err;
	uint64_t	seq = 0;
	uint64_t	last_seg = 0;

	pm_olog_cursor_init(&c, 0);
	while (seq < THREAD_RECORDS && pm_load(&t->bad) == 0)
	{
		uint64_t	tail = pm_load(&l->tail);

		for (;;)
		{
			if (c.segment == 0 && c.pos < tail)
				t->follow_walks++;
			if (!pm_olog_next(t->pool, t->o, THREAD_LANE, &c, tail, &rec, &err))
				break;
			if (!record_is(&rec, seq, thread_len(seq)))
				thread_fail(t, "the follower read a wrong record", seq, NULL);
			/* a record's last byte is in its segment */
			t->follow_segments += (c.pos - 1) / SEG_DATA != last_seg;
			last_seg = (c.pos - 1) / SEG_DATA;
			seq++;
			pm_store(&t->follow_at, c.pos);
		}
		if (err.code != PM_OK)
			thread_fail(t, "the follower's read failed", seq, &err);
		sched_yield();
	}
	t->follow_records = seq;
	pm_store(&t->follow_at, UINT64_MAX);
	return NULL;
}

/* Reads [applied, tail) again and again while the others run; records consecutive and whole. */
static void *
reader(void *arg)
{
	threads    *t = arg;
	pm_olog_lane *l = pm_olog_lane_at(t->pool, t->o, THREAD_LANE);
	pm_olog_record rec;
	pm_error	err;

	while (pm_load(&t->done) == 0 && pm_load(&t->bad) == 0)
	{
		uint64_t	pos = pm_load(&l->applied);
		uint64_t	tail;
		uint64_t	expect = UINT64_MAX;
		pm_olog_cursor c;

		pm_store(&t->announce, pos);
		pm_full_fence();
		if (pm_load(&t->target) > pos)
			continue;			/* the reclaimer may be past it: start again */
		tail = pm_load(&l->tail);
		pm_olog_cursor_init(&c, pos);
		while (pm_olog_next(t->pool, t->o, THREAD_LANE, &c, tail, &rec, &err))
		{
			if ((expect != UINT64_MAX && rec.host_pos != expect) ||
				!record_is(&rec, rec.host_pos, thread_len(rec.host_pos)))
				thread_fail(t, "the reader read a wrong record", rec.host_pos, NULL);
			expect = rec.host_pos + 1;
			pm_store(&t->reader_records, t->reader_records + 1);
		}
		if (err.code != PM_OK)
			thread_fail(t, "the reader's read failed", expect, &err);
		pm_store(&t->announce, UINT64_MAX);
		t->reader_passes++;
		sched_yield();
	}
	return NULL;
}

/* ---------- damage ---------- */

/* The segments of the lanes before the damage: a record that starts in one ends in it. */
static uint64_t sound_segments[MAX_SEGMENTS * NLANES];
static int	nsound;

static bool
record_inside(const pm_pool *pool, const pm_olog_record *rec)
{
	const char *data = rec->data;

	if (data < pool->base || data + rec->len > pool->base + pm_pool_size(pool))
		return false;
	for (int i = 0; i < nsound; i++)
	{
		const char *seg = (const char *) ((pm_olog_segment *) pm_pool_addr(pool, sound_segments[i]))->data;

		if (data >= seg && data < seg + SEG_DATA && data + rec->len > seg + SEG_DATA)
			return false;
	}
	return true;
}

/*
 * Read every lane from its reclaimed to its tail as a reader would (a
 * damaged pool may say anything): false if a record returned lies outside
 * the pool or runs past its segment.  *corrupt counts the reads that ended
 * in PM_ERR_CORRUPT.
 */
static bool
read_all_inside(const pm_pool *pool, const pm_olog *o, const uint64_t *lane_offs, uint64_t *corrupt)
{
	for (uint32_t i = 0; i < NLANES; i++)
	{
		pm_olog_lane *l = pm_pool_addr(pool, lane_offs[i]);
		pm_olog_cursor c;
		pm_olog_record rec;
		pm_error	err;

		pm_olog_cursor_init(&c, l->reclaimed);
		while (pm_olog_next(pool, o, i, &c, l->tail, &rec, &err))
			if (!record_inside(pool, &rec))
				return false;
		*corrupt += err.code == PM_ERR_CORRUPT;
	}
	return true;
}

/* One damage: up to three words and what they are set to; whether a read of lane 0 fails. */
typedef struct damage
{
	const char *what;
	bool		read_fails;		/* lane 0's read ends in PM_ERR_CORRUPT */
	uint64_t   *word[3];
	uint64_t	value[3];
} damage;

/* ---------- the crash workload ---------- */

#define CRASH_LANE	1
#define CRASH_MAX	200

typedef struct crash_ctx
{
	pm_pool    *pool;
	pm_alloc	a;
	bool		tail_first;		/* the negative control: tails before records */
} crash_ctx;

static uint64_t crash_prefill;	/* records the image starts with */
static uint64_t crash_steps;	/* records the workload appends */

/*
 * The workload's record lengths, by where the tail is: large ones, and a
 * short one now and then; segment 0 ends with a skip header, segment 1 is
 * filled exactly.
 */
static uint32_t
crash_len(uint64_t k, uint64_t tail)
{
	uint64_t	seg = tail / SEG_DATA;
	uint64_t	left = SEG_DATA - tail % SEG_DATA;

	if (seg == 1 && left <= MAX_BYTES)
		return (uint32_t) (left - 16);
	if (seg <= 1 && left > MAX_BYTES && left <= MAX_BYTES + 1040)
		return (uint32_t) (left - 1040 - 16);
	return k % 7 == 3 ? (uint32_t) (k % 24) : PM_OLOG_MAX_RECORD - (uint32_t) ((k * 97) % 256);
}

static void
crash_model(void)
{
	uint64_t	tail = 0;

	cm.n = CRASH_MAX;
	for (uint64_t k = 0; k < CRASH_MAX; k++)
	{
		cm.lens[k] = crash_len(k, tail);
		tail = cm.ends[k] = end_of(tail, cm.lens[k]);
	}
	/* start three large records before segment 0's end; stop a few records after segment 1's */
	while (cm.ends[crash_prefill] < SEG_DATA - 3 * MAX_BYTES)
		crash_prefill++;
	crash_prefill++;
	while (cm.ends[crash_prefill + crash_steps] != 2 * SEG_DATA)
		crash_steps++;
	crash_steps += 5;
}

/* Record k as the negative control writes it: the tail first, then the record. */
static void
append_tail_first(pm_pool *pool, uint64_t k)
{
	pm_olog_lane *l = lane_of(pool, CRASH_LANE);
	uint64_t	tail = l->tail;
	uint64_t	at = start_of(tail, cm.lens[k]);
	pm_olog_segment *s = segment_of(pool, l, at / SEG_DATA);
	pm_olog_header *h = (pm_olog_header *) ((char *) s->data + at % SEG_DATA);

	l->tail = cm.ends[k];
	pm_persist(&pool->persist, &l->tail, sizeof(uint64_t));
	if (at != tail && at - tail >= 16)
	{
		pm_olog_header *skip = (pm_olog_header *) ((char *) segment_of(pool, l, tail / SEG_DATA)->data +
												   tail % SEG_DATA);

		skip->len = PM_OLOG_SKIP;
		skip->pad = 0;
		skip->host_pos = 0;
		pm_flush(&pool->persist, skip, 16);
	}
	h->len = cm.lens[k];
	h->pad = 0;
	h->host_pos = k;
	make_data(k, cm.lens[k], (uint64_t *) (h + 1));
	pm_persist(&pool->persist, h, bytes_of(cm.lens[k]));
}

/* Reserve and append record k of the crash model (as the control does, if tail_first). */
static const char *
crash_put(crash_ctx *c, uint64_t k)
{
	const pm_olog *o = pm_olog_of(c->pool);
	uint64_t	buf[PM_OLOG_MAX_RECORD / 8];
	pm_error	err;

	if (pm_olog_reserve(c->pool, &c->a, o, CRASH_LANE, cm.lens[k], &err) != PM_OK)
		return "a reserve failed";
	if (c->tail_first)
		append_tail_first(c->pool, k);
	else
	{
		make_data(k, cm.lens[k], buf);
		if (pm_olog_append(c->pool, o, CRASH_LANE, buf, cm.lens[k], k) != cm.ends[k])
			return "an append ended elsewhere";
	}
	return NULL;
}

static const char *
crash_open(void *ctx, const char *path, pm_mode mode, pm_pool **pool)
{
	crash_ctx  *c = ctx;
	pm_error	err;

	if (pm_pool_open(path, mode, pool, &err) != PM_OK)
		return "the pool does not open";
	c->pool = *pool;
	pm_alloc_attach_pool(&c->a, *pool);
	return NULL;
}

/*
 * Append record crash_prefill + step; apply and reclaim after every sixth,
 * to a segment's very end when a record fills it (the next not linked
 * yet), and all after the last (the head leaves segment 1 for segment 2).
 */
static const char *
crash_step(void *ctx, uint64_t step)
{
	crash_ctx  *c = ctx;
	const pm_olog *o = pm_olog_of(c->pool);
	pm_olog_lane *l = lane_of(c->pool, CRASH_LANE);
	uint64_t	k = crash_prefill + step;
	const char *why = crash_put(c, k);
	uint64_t	applied = 0;
	uint64_t	reclaimed = 0;

	if (why != NULL)
		return why;
	if (cm.ends[k] % SEG_DATA == 0 || step == crash_steps - 1)
		applied = reclaimed = cm.ends[k];
	else if (step % 6 == 5)
	{
		applied = cm.ends[k - 1];
		reclaimed = cm.ends[k - 4];
	}
	if (applied > l->applied)
		pm_olog_set_applied(c->pool, o, CRASH_LANE, applied);
	if (reclaimed > l->reclaimed)
		pm_olog_reclaim(c->pool, &c->a, o, CRASH_LANE, reclaimed);
	return NULL;
}

/*
 * NULL if the image's log is sound after acks acknowledged steps, or what
 * is wrong: it validates; its tail is after the last acknowledged record or
 * the one in flight; every record from reclaimed to the tail reads as
 * written; allocator recovery keeps exactly the directory, the lanes and
 * the chains; and the lane takes the next record.
 */
static const char *
check_crash_image(const char *image, uint64_t acks)
{
	static char why[600];
	pm_pool    *pool;
	crash_ctx	c = {NULL, {0}, false};
	pm_error	err;
	pm_olog_lane *l;
	uint64_t	last = crash_prefill + acks;	/* records acknowledged */
	uint64_t	n;
	const char *bad;

	if (pm_pool_open(image, PM_MODE_ADR, &pool, &err) != PM_OK)
		return "the image does not open";
	why[0] = '\0';
	if (pm_olog_validate(pool, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "does not validate: %s", err.msg);
		pm_pool_close(pool);
		return why;
	}
	l = lane_of(pool, CRASH_LANE);
	if (l->tail != cm.ends[last - 1] && (last == CRASH_MAX || l->tail != cm.ends[last]))
		snprintf(why, sizeof(why), "tail %llu after %llu acknowledged records",
				 (unsigned long long) l->tail, (unsigned long long) last);
	else if ((bad = model_read(&cm, pool, CRASH_LANE, l->reclaimed, l->tail)) != NULL)
		snprintf(why, sizeof(why), "from reclaimed %llu: %s", (unsigned long long) l->reclaimed, bad);
	if (why[0] != '\0')
	{
		pm_pool_close(pool);
		return why;
	}
	n = model_first(&cm, l->tail);
	c.pool = pool;
	pm_alloc_attach_pool(&c.a, pool);
	pm_alloc_recover_begin(&c.a);
	if (pm_olog_mark(&c.a, pool, &err) != PM_OK)
		snprintf(why, sizeof(why), "mark: %s", err.msg);
	pm_alloc_recover_end(&c.a);
	if (why[0] == '\0' && blocks_in_use(&c.a) != 1 + 2 + chain_length(pool, l))
		snprintf(why, sizeof(why), "after recovery %llu blocks are in use, not the directory, 2 lanes and "
				 "%llu segments",
				 (unsigned long long) blocks_in_use(&c.a), (unsigned long long) chain_length(pool, l));
	else if (why[0] == '\0' &&
			 (crash_put(&c, n) != NULL || model_read(&cm, pool, CRASH_LANE, cm.ends[n - 1], cm.ends[n]) != NULL))
		snprintf(why, sizeof(why), "after recovery the lane does not take record %llu", (unsigned long long) n);
	pm_pool_close(pool);
	return why[0] != '\0' ? why : NULL;
}

/* The parent's image of the workload's start: the crash model's first records, some applied and reclaimed. */
static pm_errcode
format_crash(pm_pool *pool, pm_error *err)
{
	crash_ctx	c = {pool, {0}, false};
	pm_errcode	rc;

	pm_alloc_attach_pool(&c.a, pool);
	if ((rc = pm_olog_create(pool, &c.a, 2, MAX_SEGMENTS, err)) != PM_OK)
		return rc;
	for (uint64_t k = 0; k < crash_prefill; k++)
		if (crash_put(&c, k) != NULL)
			return pm_error_set(err, PM_ERR_INVALID, 0, "the crash workload's first records do not fit");
	pm_olog_set_applied(pool, pm_olog_of(pool), CRASH_LANE, cm.ends[crash_prefill - 3]);
	pm_olog_reclaim(pool, &c.a, pm_olog_of(pool), CRASH_LANE, cm.ends[crash_prefill - 6]);
	return PM_OK;
}

/*
 * Crash a workload of steps steps at every persistence event of its
 * events, images images each: the images whose check fails.  Children that
 * did not crash count in *child_failures.
 */
static int
crash_every_event(crash_ctx *c, const char *path, const char *work, const char *image, uint64_t steps,
				  uint64_t events, int images, int *points, int *child_failures, bool quiet)
{
	crash_workload w = {c, crash_open, crash_step, NULL};
	int			failures = 0;

	for (uint64_t at = 1; at <= events; at++)
	{
		for (int seed = 1; seed <= images; seed++)
		{
			const char *why;

			if (!copy_file(path, work) || crash_run_adr_child(&w, work, at, image, at * 7 + seed, steps) != 0)
			{
				if ((*child_failures)++ < 5)
					tap_diag("event %llu: the child did not crash (%s)", (unsigned long long) at, crash_rep->msg);
				continue;
			}
			(*points)++;
			if ((why = check_crash_image(image, crash_rep->completed)) != NULL && failures++ < 5 && !quiet)
				tap_diag("event %llu, image %d: %s", (unsigned long long) at, seed, why);
		}
	}
	return failures;
}

/* The events of a run of steps steps that does not crash, or 0 if it fails. */
static uint64_t
crash_events(crash_ctx *c, const char *path, const char *work, uint64_t steps)
{
	crash_workload w = {c, crash_open, crash_step, NULL};

	if (!copy_file(path, work) || crash_run_adr_child(&w, work, 0, NULL, 1, steps) != 1)
	{
		tap_diag("the workload fails: %s", crash_rep->msg);
		return 0;
	}
	return crash_rep->total_events;
}

static pm_olog_header *
header_of(const pm_pool *pool, const pm_olog_lane *l, const model *m, uint64_t k)
{
	uint64_t	at = start_of(model_end(m, k), m->lens[k]);

	return (pm_olog_header *) ((char *) segment_of(pool, l, at / SEG_DATA)->data + at % SEG_DATA);
}

typedef struct orphans
{
	uint64_t	off[2];
	bool		allocated;
} orphans;

static void
find_orphan(void *ctx, uint64_t off, size_t size)
{
	orphans    *f = ctx;

	(void) size;
	f->allocated |= off == f->off[0] || off == f->off[1];
}

int
main(void)
{
	char	   *dir = tap_tmpdir("olog");
	char		path[600];
	char		work[600];
	char		image[600];
	pm_pool    *pool;
	pm_alloc	a;
	pm_error	err = {0};
	pm_olog    *o;
	pm_olog_lane *l0;
	pm_olog_lane *l1;
	pm_olog_lane *l2;
	pm_olog_record rec;
	uint64_t	blocks_start;
	pm_olog_cursor cur;
	const char *why = NULL;
	static threads t;

	tap_plan(22);
	snprintf(path, sizeof(path), "%s/pool.pm", dir);
	snprintf(work, sizeof(work), "%s/work.pm", dir);
	snprintf(image, sizeof(image), "%s/image.pm", dir);
	pool = harness_pool(path, PM_MODE_EADR, 64 << 20, PM_KIND_TEST, NULL);
	pm_alloc_attach_pool(&a, pool);
	tap_ok(pm_olog_create(pool, &a, 0, MAX_SEGMENTS, &err) == PM_ERR_INVALID &&
		   pm_olog_create(pool, &a, PM_OLOG_MAX_LANES + 1, MAX_SEGMENTS, &err) == PM_ERR_INVALID &&
		   pm_olog_create(pool, &a, NLANES, PM_OLOG_MIN_SEGMENTS - 1, &err) == PM_ERR_INVALID &&
		   pm_olog_validate(pool, &err) == PM_OK,
		   "no lanes, more than %d, or fewer than %d segments a lane, refused",
		   PM_OLOG_MAX_LANES, PM_OLOG_MIN_SEGMENTS);
	if (pm_olog_create(pool, &a, NLANES, MAX_SEGMENTS, &err) != PM_OK || (o = pm_olog_of(pool)) == NULL)
	{
		tap_diag("create: %s", err.msg);
		return 1;
	}
	l0 = lane_of(pool, 0);
	l1 = lane_of(pool, 1);
	l2 = lane_of(pool, 2);
	blocks_start = blocks_in_use(&a);
	pm_olog_cursor_init(&cur, 0);
	tap_ok(o->nlanes == NLANES && o->max_segments == MAX_SEGMENTS && l0->head == 0 &&
		   pm_olog_validate(pool, &err) == PM_OK &&
		   !pm_olog_next(pool, o, 0, &cur, 0, &rec, &err) && err.code == PM_OK &&
		   pm_olog_reserve(pool, &a, o, 0, PM_OLOG_MAX_RECORD + 1, &err) == PM_ERR_INVALID &&
		   l0->head == 0 && blocks_in_use(&a) == blocks_start,
		   "a log of %d lanes of at most %d segments of %zu bytes: empty lanes without a segment, "
		   "a record over %d bytes refused", NLANES, MAX_SEGMENTS, PM_OLOG_SEGMENT_DATA, PM_OLOG_MAX_RECORD);

	/* lane 0: every length, three times; full at MAX_SEGMENTS, then applied and half reclaimed */
	{
		uint64_t	limits = 0;
		uint64_t	bad = 0;
		uint64_t	segments;

		while (m0.n < LENGTHS_RECORDS && bad == 0)
		{
			uint32_t	len = (uint32_t) (m0.n * 1031 % (PM_OLOG_MAX_RECORD + 1));
			uint64_t	tail = l0->tail;
			uint64_t	blocks = blocks_in_use(&a);
			pm_errcode	rc = model_put(&m0, pool, &a, 0, len, &err);
			uint64_t	mid;

			if (rc == PM_OK)
				continue;
			limits++;
			if (rc != PM_ERR_LIMIT || l0->tail != tail || blocks_in_use(&a) != blocks ||
				chain_length(pool, l0) != MAX_SEGMENTS)
			{
				tap_diag("record %llu: %s, not full at %d segments with nothing changed",
						 (unsigned long long) m0.n, pm_errcode_name(rc), MAX_SEGMENTS);
				bad++;
			}
			else if ((why = model_read(&m0, pool, 0, l0->applied, l0->tail)) != NULL)
			{
				tap_diag("full lane: %s", why);
				bad++;
			}
			mid = model_first(&m0, l0->reclaimed);
			mid += (m0.n - mid) / 2;
			pm_olog_set_applied(pool, o, 0, l0->tail);
			pm_olog_reclaim(pool, &a, o, 0, m0.ends[mid]);
			if (blocks_in_use(&a) != blocks_start + chain_length(pool, l0))
			{
				tap_diag("after a reclaim %llu blocks are in use, not %llu", (unsigned long long) blocks_in_use(&a),
						 (unsigned long long) (blocks_start + chain_length(pool, l0)));
				bad++;
			}
		}
		tap_ok(bad == 0 && limits > 0 && m0.n == LENGTHS_RECORDS,
			   "%llu records of every length from 0 to %d: the lane full at %d segments %llu times, "
			   "nothing changed, each record read back as written, room again after half is reclaimed",
			   (unsigned long long) m0.n, PM_OLOG_MAX_RECORD, MAX_SEGMENTS, (unsigned long long) limits);
		why = model_read(&m0, pool, 0, l0->reclaimed, l0->tail);
		tap_ok(why == NULL && pm_olog_validate(pool, &err) == PM_OK,
			   "from reclaimed to the tail all read back, and the log validates%s%s", why != NULL ? ": " : "", why != NULL ? why : "");
		segments = l0->tail / SEG_DATA + 1;
		pm_olog_set_applied(pool, o, 0, l0->tail);
		pm_olog_reclaim(pool, &a, o, 0, l0->tail);
		tap_ok(blocks_in_use(&a) == blocks_start + 1 && chain_length(pool, l0) == 1,
			   "all reclaimed, the %llu segments linked are back in the allocator but the last "
			   "(%llu blocks in use, %llu at the start)", (unsigned long long) segments,
			   (unsigned long long) blocks_in_use(&a), (unsigned long long) blocks_start);
	}

	/* lane 2: a segment filled exactly, less than a header left, a skip header, full with the head behind */
	{
		uint64_t	blocks = blocks_in_use(&a);
		uint64_t	head;
		uint64_t	short_before;
		uint64_t	skip_before;
		char		end[8];
		char		end_after[8];
		bool		ok;
		pm_errcode	rc;

		fill_left(&m2, pool, &a, 2, 0, &err);
		head = l2->head;
		ok = l2->tail == SEG_DATA && chain_length(pool, l2) == 1 && blocks_in_use(&a) == blocks + 1;
		pm_olog_set_applied(pool, o, 2, SEG_DATA);
		pm_olog_reclaim(pool, &a, o, 2, SEG_DATA);
		ok &= l2->reclaimed == SEG_DATA && l2->head == head && blocks_in_use(&a) == blocks + 1 &&
			pm_olog_validate(pool, &err) == PM_OK && model_read(&m2, pool, 2, SEG_DATA, SEG_DATA) == NULL;
		tap_ok(ok, "a segment filled exactly: the tail at its end, the next not linked; reclaimed to there, "
			   "the head stays on it and the log validates");

		short_before = short_ends;
		skip_before = skip_headers;
		ok = model_put(&m2, pool, &a, 2, 100, &err) == PM_OK && chain_length(pool, l2) == 2 &&
			m2.ends[m2.n - 1] == SEG_DATA + bytes_of(100) && pm_olog_validate(pool, &err) == PM_OK;
		fill_left(&m2, pool, &a, 2, 8, &err);
		memcpy(end, (char *) segment_of(pool, l2, 1)->data + SEG_DATA - 8, 8);
		ok &= model_put(&m2, pool, &a, 2, 0, &err) == PM_OK && m2.ends[m2.n - 1] == 2 * SEG_DATA + 16;
		memcpy(end_after, (char *) segment_of(pool, l2, 1)->data + SEG_DATA - 8, 8);
		ok &= memcmp(end, end_after, 8) == 0 && short_ends == short_before + 1;
		fill_left(&m2, pool, &a, 2, 24, &err);
		ok &= model_put(&m2, pool, &a, 2, 16, &err) == PM_OK && m2.ends[m2.n - 1] == 3 * SEG_DATA + 32 &&
			skip_headers == skip_before + 1 && chain_length(pool, l2) == 4 && pm_olog_validate(pool, &err) == PM_OK;
		tap_ok(ok, "the next reserve links the next segment; with 8 bytes left a record starts the next "
			   "segment and the 8 bytes stay as they were; with 24 left a skip header marks them");

		fill_left(&m2, pool, &a, 2, 24, &err);
		rc = model_put(&m2, pool, &a, 2, PM_OLOG_MAX_RECORD, &err);
		ok = rc == PM_ERR_LIMIT && l2->head == head;
		pm_olog_set_applied(pool, o, 2, l2->tail);
		pm_olog_reclaim(pool, &a, o, 2, m2.ends[model_first(&m2, 2 * SEG_DATA)]);
		ok &= blocks_in_use(&a) == blocks + 2 &&
			model_put(&m2, pool, &a, 2, PM_OLOG_MAX_RECORD, &err) == PM_OK && blocks_in_use(&a) == blocks + 3 &&
			(why = model_read(&m2, pool, 2, l2->reclaimed, l2->tail)) == NULL &&
			pm_olog_validate(pool, &err) == PM_OK;
		pm_olog_set_applied(pool, o, 2, l2->tail);
		pm_olog_reclaim(pool, &a, o, 2, l2->tail);
		ok &= blocks_in_use(&a) == blocks + 1;
		tap_ok(ok, "a record needing a fifth segment refused while the head is behind (%s); "
			   "a reclaim frees two segments and makes room; all read back%s%s", pm_errcode_name(rc),
			   why != NULL ? ": " : "", why != NULL ? why : "");

		/* a reader above reclaimed whose walk starts from a head that a reclaim then frees */
		while (chain_length(pool, l2) < 3)
			model_put(&m2, pool, &a, 2, PM_OLOG_MAX_RECORD, &err);
		pm_olog_set_applied(pool, o, 2, l2->tail);
		hook_upto = m2.ends[model_first(&m2, (l2->tail / SEG_DATA - 1) * SEG_DATA)];
		pm_olog_cursor_init(&cur, hook_upto);
		hook_pool = pool;
		hook_alloc = &a;
		hook_armed = true;
		pm_olog_walk_hook = walk_hook;
		ok = pm_olog_next(pool, o, 2, &cur, l2->tail, &rec, &err) &&
			record_is(&rec, model_first(&m2, hook_upto), m2.lens[model_first(&m2, hook_upto)]);
		pm_olog_walk_hook = NULL;
		ok &= hook_freed != 0 && hook_freed != l2->head && l2->reclaimed == hook_upto &&
			pm_olog_validate(pool, &err) == PM_OK &&
			model_read(&m2, pool, 2, l2->reclaimed, l2->tail) == NULL;
		pm_olog_reclaim(pool, &a, o, 2, l2->tail);
		tap_ok(ok, "a reader above reclaimed whose walk set out from a head that a reclaim then moved, "
			   "freeing the segment (reused), walks again from the new head and reads its record");
	}
	tap_ok(misplaced == 0 && extra_persists == 0,
		   "every record where the format puts it (%llu segment ends with a skip header, %llu with less "
		   "than a header left), every append two persists", (unsigned long long) skip_headers,
		   (unsigned long long) short_ends);

	/* lane 2: a hint or a cursor that does not check out */
	{
		uint64_t	lane2 = o->lane[2];
		uint64_t	forged = pm_alloc_block(&a, PM_OLOG_SEGMENT, &err);
		pm_olog_segment *f = pm_pool_addr(pool, forged);
		uint64_t	size = pm_pool_size(pool);
		uint64_t	rng = 0x9e3779b97f4a7c15;
		int			bad_hints = 0;
		int			bad_cursors = 0;
		int			rounds = 0;

		while (chain_length(pool, l2) < 2)
			model_put(&m2, pool, &a, 2, PM_OLOG_MAX_RECORD, &err);
		for (int i = 0; i < 10; i++)
		{
			uint64_t	tseg = pm_pool_off(pool, segment_of(pool, l2, l2->tail / SEG_DATA));
			uint64_t	older = l2->head != tseg ? l2->head : next_of(pool, l2->head);
			uint64_t	hints[][2] = {
				{0, 0},
				{UINT64_MAX, UINT64_MAX ^ lane2},
				{size, size ^ lane2},
				{tseg + 8, (tseg + 8) ^ lane2},
				{pm_pool_root(pool, PM_OLOG_ROOT), pm_pool_root(pool, PM_OLOG_ROOT) ^ lane2},
				{older, older ^ lane2},
				{forged, tseg ^ lane2},	/* numbered as the tail's, without its check */
				{forged, forged ^ o->lane[0]},	/* another lane's check */
				{tseg, tseg},
				{xorshift(&rng), xorshift(&rng)},
			};

			/* a block numbered as the tail's segment, as one recovery freed might be */
			f->seq = l2->tail / SEG_DATA;
			f->next = 0;
			memset(f->data, 0x5a, 64);
			l2->tail_segment = hints[i][0];
			l2->tail_check = hints[i][1];
			if (older == 0 || pm_olog_validate(pool, &err) != PM_OK)
			{
				if (bad_hints++ < 3)
					tap_diag("hint %d: the log does not validate with it: %s", i, older == 0 ? "one segment" : err.msg);
				continue;
			}
			/* across a segment's end: a skip header, a link, a record in the new segment */
			fill_left(&m2, pool, &a, 2, 40, &err);
			if (model_put(&m2, pool, &a, 2, 100, &err) != PM_OK ||
				model_put(&m2, pool, &a, 2, 8, &err) != PM_OK ||
				model_read(&m2, pool, 2, l2->reclaimed, l2->tail) != NULL ||
				pm_olog_validate(pool, &err) != PM_OK ||
				f->seq + 1 != l2->tail / SEG_DATA || f->next != 0 || f->data[0] != UINT64_C(0x5a5a5a5a5a5a5a5a) ||
				l2->tail_segment != pm_pool_off(pool, segment_of(pool, l2, l2->tail / SEG_DATA)))
			{
				if (bad_hints++ < 3)
					tap_diag("hint %d: a reserve and append went wrong", i);
			}
			rounds++;

			/* a cursor whose segment does not check out: corrupt and unchanged, or (0) a walk */
			{
				uint64_t	segs[] = {0, size, l2->head + 8, next_of(pool, l2->head), pm_pool_root(pool, PM_OLOG_ROOT)};

				for (int j = 0; j < 5; j++)
				{
					pm_olog_cursor c;
					pm_olog_cursor before;
					uint64_t	k = model_first(&m2, l2->reclaimed);
					bool		got;

					pm_olog_cursor_init(&c, l2->reclaimed);
					c.segment = segs[j];
					before = c;
					got = pm_olog_next(pool, o, 2, &c, l2->tail, &rec, &err);
					if (j == 0 ? !got || !record_is(&rec, k, m2.lens[k]) || c.pos != m2.ends[k] :
						got || err.code != PM_ERR_CORRUPT || c.pos != before.pos || c.segment != before.segment)
						bad_cursors++;
				}
			}
			/* applied and reclaimed to the previous segment's last record: two segments stay */
			pm_olog_set_applied(pool, o, 2, l2->tail);
			pm_olog_reclaim(pool, &a, o, 2, m2.ends[model_first(&m2, l2->tail / SEG_DATA * SEG_DATA) - 1]);
		}
		pm_free_block(&a, forged, &err);
		tap_ok(bad_hints == 0 && rounds == 10 && bad_cursors == 0,
			   "a hint that does not check out (none, outside the pool, off its block, the directory, an older "
			   "segment, a block numbered as the tail's segment with another's or another lane's check, no check, "
			   "random): the log validates with it, reserves and appends across a segment's end put every record "
			   "right and leave the block alone, and the hint names the tail's segment again; a cursor naming "
			   "no segment walks, one naming a block outside the pool, off its block or numbered otherwise reads "
			   "corrupt and stays put");
	}

	/* lane 1: a writer, an applier-reclaimer and a reader thread */
	{
		pthread_t	th[4];
		uint64_t	blocks = blocks_in_use(&a);
		double		start = now_sec();
		double		secs;

		t.pool = pool;
		t.o = o;
		pm_alloc_attach_pool(&t.writer_alloc, pool);
		pm_alloc_attach_pool(&t.reclaimer_alloc, pool);
		t.announce = UINT64_MAX;
		t.follow_at = 0;
		pthread_create(&th[0], NULL, writer, &t);
		pthread_create(&th[1], NULL, applier, &t);
		pthread_create(&th[2], NULL, reader, &t);
		pthread_create(&th[3], NULL, follower, &t);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		secs = now_sec() - start;
		tap_ok(t.bad == 0 && t.reader_records > 0,
			   "a writer, an applier-reclaimer (one cursor throughout) and a reader thread passed %d records of random lengths "
			   "(%.0f MB) in %.1f s: all in order and whole (the writer found the lane full %llu times; "
			   "the reader read %llu records in %llu passes)%s%s",
			   THREAD_RECORDS, l1->tail / 1e6, secs, (unsigned long long) t.full,
			   (unsigned long long) t.reader_records, (unsigned long long) t.reader_passes,
			   t.bad ? ": " : "", t.why);
		tap_ok(t.bad == 0 && t.follow_records == THREAD_RECORDS && t.follow_segments == (l1->tail - 1) / SEG_DATA,
			   "and a fourth thread read all %llu records with one cursor over %llu segment boundaries while "
			   "the reclaimer freed below it, walking from the head %llu times (at the start, and where "
			   "the tail had ended a segment whose next was not linked yet)", (unsigned long long) t.follow_records,
			   (unsigned long long) t.follow_segments, (unsigned long long) t.follow_walks);
		pm_olog_reclaim(pool, &a, o, 1, l1->applied);
		tap_ok(pm_olog_validate(pool, &err) == PM_OK && l1->applied == l1->tail &&
			   blocks_in_use(&a) == blocks + 1 && chain_length(pool, l1) == 1,
			   "then the log validates and of the %llu segments the lane linked only its last is in use",
			   (unsigned long long) (l1->tail / SEG_DATA + 1));
	}

	/* damage: lane 0 with records over four segments; every damage found, nothing read outside */
	{
		uint64_t   *dir_word = (uint64_t *) o;
		uint64_t	lane_offs[NLANES];
		pm_olog_segment *s0;
		pm_olog_segment *s1;
		pm_olog_segment *s1_head;
		uint64_t	last_in_s0;
		uint64_t	last_in_s1;
		uint64_t	lanes = *dir_word & UINT64_C(0xffffffff);	/* the word's low half: nlanes */
		uint64_t   *last_header;
		uint64_t	size = pm_pool_size(pool);
		uint64_t	crossing;
		int			missed = 0;
		int			bad_reads = 0;
		int			n;

		while (chain_length(pool, l0) < 4)
			model_put(&m0, pool, &a, 0, (uint32_t) (m0.n * 1031 % (PM_OLOG_MAX_RECORD + 1)), &err);
		model_put(&m0, pool, &a, 0, 100, &err);
		for (uint32_t i = 0; i < NLANES; i++)
		{
			lane_offs[i] = o->lane[i];
			for (uint64_t off = lane_of(pool, i)->head; off != 0; off = next_of(pool, off))
				sound_segments[nsound++] = off;
		}
		s0 = pm_pool_addr(pool, l0->head);
		s1 = pm_pool_addr(pool, s0->next);
		s1_head = pm_pool_addr(pool, l1->head);
		last_in_s0 = model_first(&m0, (s0->seq + 1) * SEG_DATA) - 1;
		last_in_s1 = model_first(&m0, (s1->seq + 1) * SEG_DATA) - 1;
		last_header = (uint64_t *) header_of(pool, l0, &m0, m0.n - 1);
		/* a length that takes the last record of segment 0 8 bytes past its end */
		crossing = SEG_DATA - start_of(model_end(&m0, last_in_s0), m0.lens[last_in_s0]) % SEG_DATA - 8;
		{
			damage		d[] = {
				{"no lanes", false, {dir_word}, {*dir_word - lanes}},
				{"65 lanes", false, {dir_word}, {*dir_word - lanes + 65}},
				{"a lane of at most 1 segment", true, {dir_word}, {lanes | UINT64_C(1) << 32}},
				{"a chain longer than the lanes' limit", true, {dir_word}, {lanes | UINT64_C(2) << 32}},
				{"a lane outside the pool", true, {&o->lane[0]}, {size}},
				{"a lane off its block", true, {&o->lane[0]}, {o->lane[0] + 4}},
				{"applied past the tail", false, {&l0->applied}, {l0->tail + 16}},
				{"reclaimed past applied", false, {&l0->reclaimed}, {l0->applied + 16}},
				{"a tail past the chain", true, {&l0->tail}, {l0->tail + 3 * SEG_DATA}},
				{"a tail inside a record", true, {&l0->tail}, {l0->tail - 8}},
				{"applied inside a record", false, {&l0->applied}, {model_end(&m0, m0.n - 1) + 8}},
				{"a tail past a segment's unused end", true, {&l0->tail}, {(s0->seq + 1) * SEG_DATA}},
				{"a chain past the segment after the tail's", false, {&l0->tail}, {m0.ends[last_in_s1]}},
				{"a chain short of the tail's segment", false, {&l1->tail, &l1->applied, &l1->reclaimed},
				{l1->tail + 2 * SEG_DATA, l1->tail + 2 * SEG_DATA, l1->tail + 2 * SEG_DATA}},
				{"no head", true, {&l0->head}, {0}},
				{"a head numbered past reclaimed", false, {&s1_head->seq}, {s1_head->seq + 1}},
				{"a segment out of sequence", true, {&s1->seq}, {s1->seq + 1}},
				{"a link outside the pool", true, {&s0->next}, {size}},
				{"a link off its block", true, {&s0->next}, {s0->next + 4}},
				{"a link to itself", true, {&s0->next}, {l0->head}},
				{"a link to the directory", true, {&s0->next}, {pm_pool_root(pool, PM_OLOG_ROOT)}},
				{"a record over the largest", true, {last_header, &l0->tail},
				{PM_OLOG_MAX_RECORD + 1, l0->tail - bytes_of(100) + bytes_of(PM_OLOG_MAX_RECORD + 1)}},
				{"a record past its segment's end", true, {(uint64_t *) header_of(pool, l0, &m0, last_in_s0)}, {crossing}},
				{"a record past the tail", true, {last_header}, {PM_OLOG_MAX_RECORD}},
				{"padding not zero", true, {last_header}, {UINT64_C(1) << 32 | 100}},
			};

			n = (int) (sizeof(d) / sizeof(d[0]));
			for (int i = 0; i < n; i++)
			{
				uint64_t	saved[3];
				uint64_t	corrupt = 0;
				pm_olog_cursor rc0;
				pm_errcode	rc;
				bool		inside;
				bool		read_failed;

				for (int j = 0; j < 3 && d[i].word[j] != NULL; j++)
				{
					saved[j] = *d[i].word[j];
					*d[i].word[j] = d[i].value[j];
				}
				if ((rc = pm_olog_validate(pool, &err)) != PM_ERR_CORRUPT && missed++ < 3)
					tap_diag("%s: validate says %s", d[i].what, pm_errcode_name(rc));
				inside = read_all_inside(pool, o, lane_offs, &corrupt);
				pm_olog_cursor_init(&rc0, l0->reclaimed);
				while (pm_olog_next(pool, o, 0, &rc0, l0->tail, &rec, &err))
					;
				read_failed = err.code == PM_ERR_CORRUPT;
				for (int j = 2; j >= 0; j--)
					if (d[i].word[j] != NULL)
						*d[i].word[j] = saved[j];
				if (!inside || read_failed != d[i].read_fails)
				{
					if (bad_reads++ < 3)
						tap_diag("%s: %s", d[i].what, !inside ? "a record read outside its segment or the pool" :
								 read_failed ? "the read says corrupt" : "the read does not say corrupt");
				}
				else if (pm_olog_validate(pool, &err) != PM_OK && bad_reads++ < 3)
					tap_diag("%s: repaired, the log does not validate: %s", d[i].what, err.msg);
			}
		}
		tap_ok(missed == 0, "%d kinds of damage to the directory, positions, chains and records: "
			   "validate refuses each", n);
		tap_ok(bad_reads == 0, "and a reader over them reads nothing outside the pool, and says corrupt "
			   "where the chain or a record is damaged");

		/* random damage to one or two of the words that say where things are */
		{
			uint64_t   *targets[2048];
			int			nt = 0;
			uint64_t	rng = 0x2545f4914f6cdd1d;
			uint64_t	corrupt_validate = 0;
			uint64_t	corrupt_reads = 0;
			int			outside = 0;

			targets[nt++] = dir_word;
			for (uint32_t i = 0; i < NLANES; i++)
			{
				pm_olog_lane *l = pm_pool_addr(pool, lane_offs[i]);

				targets[nt++] = &o->lane[i];
				targets[nt++] = &l->tail;
				targets[nt++] = &l->applied;
				targets[nt++] = &l->reclaimed;
				targets[nt++] = &l->head;
				for (uint64_t off = l->head; off != 0; off = next_of(pool, off))
				{
					pm_olog_segment *s = pm_pool_addr(pool, off);

					targets[nt++] = &s->seq;
					targets[nt++] = &s->next;
					for (int j = 0; j < 16; j++)
						targets[nt++] = &s->data[xorshift(&rng) % (SEG_DATA / 8)];
				}
			}
			for (uint64_t k = model_first(&m0, l0->reclaimed); k < m0.n && nt < 2046; k++)
			{
				targets[nt++] = (uint64_t *) header_of(pool, l0, &m0, k);
				targets[nt++] = (uint64_t *) header_of(pool, l0, &m0, k) + 1;
			}
			for (int round = 0; round < DAMAGE_ROUNDS; round++)
			{
				uint64_t   *w[2];
				uint64_t	saved[2];
				int			nw = 1 + (int) (xorshift(&rng) % 2);

				for (int j = 0; j < nw; j++)
				{
					uint64_t	r = xorshift(&rng);
					uint64_t	v;

					w[j] = targets[r % nt];
					saved[j] = *w[j];
					switch ((r >> 32) % 11)
					{
						case 0:
							v = 0;
							break;
						case 1:
							v = UINT64_MAX;
							break;
						case 2:
							v = saved[j] ^ UINT64_C(1) << (r >> 40) % 64;
							break;
						case 3:
							v = saved[j] + 8;
							break;
						case 4:
							v = saved[j] - 8;
							break;
						case 5:
							v = size - (r >> 40) % 3 * 8;
							break;
						case 6:
							v = saved[j] + SEG_DATA;
							break;
						case 7:
							v = saved[j] - SEG_DATA;
							break;
						case 8:
							v = *targets[(r >> 20) % nt];
							break;
						case 9:
							v = saved[j] ^ (uint64_t) PM_OLOG_SKIP;
							break;
						default:
							v = xorshift(&rng);
							break;
					}
					*w[j] = v;
				}
				corrupt_validate += pm_olog_validate(pool, &err) == PM_ERR_CORRUPT;
				if (!read_all_inside(pool, o, lane_offs, &corrupt_reads))
					outside++;
				for (int j = nw - 1; j >= 0; j--)
					*w[j] = saved[j];
			}
			tap_ok(outside == 0 && pm_olog_validate(pool, &err) == PM_OK &&
				   model_read(&m0, pool, 0, l0->reclaimed, l0->tail) == NULL,
				   "%d rounds of random damage to %d words (directory, positions, links, record headers, data): "
				   "validate refused %llu, reads ended corrupt %llu times, none read outside the pool",
				   DAMAGE_ROUNDS, nt, (unsigned long long) corrupt_validate, (unsigned long long) corrupt_reads);
		}
	}

	/* allocator recovery: a segment allocated but not linked, one unlinked but not freed */
	{
		orphans		f = {{0, 0}, false};
		pm_olog_segment *s;
		uint64_t	blocks;
		pm_errcode	rc;
		bool		ok;

		f.off[0] = pm_alloc_block(&a, PM_OLOG_SEGMENT, &err);
		s = pm_pool_addr(pool, f.off[0]);
		s->seq = 99;
		s->next = 0;
		/* a reclaim to lane 0's second segment whose head became durable, its frees not */
		f.off[1] = l0->head;
		s = pm_pool_addr(pool, ((pm_olog_segment *) pm_pool_addr(pool, l0->head))->next);
		if (l0->reclaimed < s->seq * SEG_DATA)
			l0->reclaimed = s->seq * SEG_DATA;
		if (l0->applied < l0->reclaimed)
			l0->applied = l0->reclaimed;
		l0->head = pm_pool_off(pool, s);
		ok = pm_olog_validate(pool, &err) == PM_OK;
		pm_alloc_recover_begin(&a);
		rc = pm_olog_mark(&a, pool, &err);
		pm_alloc_recover_end(&a);
		pm_alloc_foreach(&a, find_orphan, &f);
		blocks = 1 + NLANES + chain_length(pool, l0) + chain_length(pool, l1) + chain_length(pool, l2);
		ok &= rc == PM_OK && !f.allocated && blocks_in_use(&a) == blocks && pm_olog_validate(pool, &err) == PM_OK &&
			(why = model_read(&m0, pool, 0, l0->reclaimed, l0->tail)) == NULL &&
			model_read(&m2, pool, 2, l2->reclaimed, l2->tail) == NULL;
		/* and the lanes go on: lane 0 across another segment */
		for (int i = 0; ok && i < 40; i++)
			ok = model_put(&m0, pool, &a, 0, PM_OLOG_MAX_RECORD - 8 * i, &err) == PM_OK;
		ok &= (why = model_read(&m0, pool, 0, l0->reclaimed, l0->tail)) == NULL &&
			pm_olog_validate(pool, &err) == PM_OK;
		tap_ok(ok, "allocator recovery keeps the directory, the lanes and their chains (%llu blocks), frees a segment "
			   "never linked and one unlinked but not freed, and the log reads and takes records as before%s%s",
			   (unsigned long long) blocks, why != NULL ? ": " : "", why != NULL ? why : "");
	}
	pm_pool_close(pool);

	/* what an append costs as the segments between head and tail grow from 1 to 64 */
	{
		char		cost_path[600];
		pm_pool    *cp;
		pm_alloc	ca;
		double		ns[2][COST_SEGMENTS + 1];
		uint64_t	nw[2][COST_SEGMENTS + 1];
		uint64_t	hint_walks = 0;
		uint64_t	forced_walks = 0;
		uint64_t	forced_hops = 0;
		uint64_t	read_walks;
		pm_olog_cursor c;
		uint64_t	records = 0;
		bool		ok;
		char		line[1000];
		int			len = 0;

		snprintf(cost_path, sizeof(cost_path), "%s/cost.pm", dir);
		cp = harness_pool(cost_path, PM_MODE_EADR, 32 << 20, PM_KIND_TEST, NULL);
		pm_alloc_attach_pool(&ca, cp);
		ok = pm_olog_create(cp, &ca, 2, COST_SEGMENTS + 2, &err) == PM_OK &&
			append_costs(cp, &ca, 0, false, ns[0], nw[0]) &&
			append_costs(cp, &ca, 1, true, ns[1], nw[1]);
		for (int i = 1; i <= COST_SEGMENTS; i++)
		{
			hint_walks += nw[0][i];
			forced_walks += nw[1][i];
			forced_hops += nw[1][i] * i;
		}
		for (int i = 1; i <= COST_SEGMENTS; i *= 2)
			len += snprintf(line + len, sizeof(line) - len, " %d: %.0f/%.0f ns (%llu/%llu walks);",
							i, ns[0][i], ns[1][i], (unsigned long long) nw[0][i],
							(unsigned long long) nw[1][i]);
		tap_diag("reserve+append of %d bytes in eadr, by segments from head to tail, with the hint/walking "
				 "from the head as before:%s", COST_LEN, line);
		walks = 0;
		pm_olog_walk_hook = count_walk;
		pm_olog_cursor_init(&c, 0);
		while (pm_olog_next(cp, pm_olog_of(cp), 0, &c, pm_olog_lane_at(cp, pm_olog_of(cp), 0)->tail, &rec, &err))
			records++;
		pm_olog_walk_hook = NULL;
		read_walks = walks;
		ok &= err.code == PM_OK && pm_olog_validate(cp, &err) == PM_OK;
		tap_ok(ok && hint_walks == 1 && read_walks == 1,
			   "with the hint, %llu appends over 1 to %d segments walked from the head once (the first "
			   "reserve: no hint yet), against %llu walks of %llu segment hops in all without it; a cursor "
			   "read all %llu records with %llu walk", (unsigned long long) records, COST_SEGMENTS,
			   (unsigned long long) forced_walks, (unsigned long long) forced_hops,
			   (unsigned long long) records, (unsigned long long) read_walks);
		pm_pool_close(cp);
	}

	/* adr power failures at every persistence event of a workload, and a negative control */
	{
		char		cpath[600];
		crash_ctx	c = {NULL, {0}, false};
		uint64_t	events;
		uint64_t	skip_at = 0;
		int			points = 0;
		int			child_failures = 0;
		int			failures;

		snprintf(cpath, sizeof(cpath), "%s/crash.pm", dir);
		crash_model();
		for (uint64_t k = crash_prefill; k < crash_prefill + crash_steps; k++)
			if (start_of(cm.ends[k - 1], cm.lens[k]) == SEG_DATA && cm.ends[k - 1] <= SEG_DATA - 16)
				skip_at = cm.ends[k - 1];
		crash_report_map();
		pm_pool_close(harness_pool(cpath, PM_MODE_ADR, 16 << 20, PM_KIND_TEST, format_crash));
		events = crash_events(&c, cpath, work, crash_steps);
		tap_ok(events > 4 * crash_steps && skip_at != 0,
			   "the workload runs to its end: %llu records from position %llu, a skip header at %llu, "
			   "segment 1 filled exactly, into segment 2 (%llu persistence events)",
			   (unsigned long long) crash_steps, (unsigned long long) cm.ends[crash_prefill - 1],
			   (unsigned long long) skip_at, (unsigned long long) events);
		failures = crash_every_event(&c, cpath, work, image, crash_steps, events, 3, &points, &child_failures, false);
		tap_ok(failures == 0 && child_failures == 0,
			   "%d power failures (every event, 3 images each): the log validates, every acknowledged "
			   "record is there whole and in order, recovery frees what is unlinked, the lane goes on", points);

		c.tail_first = true;
		points = 0;
		events = crash_events(&c, cpath, work, 8);
		failures = crash_every_event(&c, cpath, work, image, 8, events, 1, &points, &child_failures, true);
		tap_ok(failures > 0 && child_failures == 0,
			   "negative control: a tail persisted before its record is caught (%d of %d power failures)",
			   failures, points);
	}
	tap_rmdir(dir);
	return tap_done();
}
