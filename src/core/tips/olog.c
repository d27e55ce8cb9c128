/*
 * olog.c
 *	  The operation log of a pool; see olog.h, and README.md for the crash
 *	  and concurrency protocol.
 */
#include "olog.h"

#include <string.h>

#define SEG_DATA	((uint64_t) PM_OLOG_SEGMENT_DATA)
#define HEADER		((uint64_t) sizeof(pm_olog_header))

void		(*pm_olog_walk_hook) (const pm_olog_lane *l) = NULL;

_Static_assert(sizeof(pm_olog_lane) == 3 * PM_CACHELINE, "a lane's positions are three cache lines");
_Static_assert(sizeof(pm_olog_header) == 16 && PM_OLOG_SEGMENT_DATA % 8 == 0,
			   "records are whole words");
_Static_assert(sizeof(pm_olog_header) + PM_OLOG_MAX_RECORD <= PM_OLOG_SEGMENT_DATA,
			   "the largest record fits in a segment");

/* Bytes a record of len data bytes takes: its header, its data, padding to 8. */
static inline uint64_t
record_bytes(uint32_t len)
{
	return HEADER + ((uint64_t) len + 7) / 8 * 8;
}

/* Where a record of bytes bytes goes when the tail is at tail: there, or at the next segment's start. */
static inline uint64_t
record_start(uint64_t tail, uint64_t bytes)
{
	uint64_t	left = SEG_DATA - tail % SEG_DATA;

	return bytes <= left ? tail : tail + left;
}

/* Does off name a block of bytes bytes inside the pool's committed extent? */
static inline bool
block_ok(const pm_pool *pool, uint64_t off, uint64_t bytes)
{
	return pm_alloc_block_in_pool(pool, off, bytes);
}

static inline pm_olog_segment *
segment_at(const pm_pool *pool, uint64_t off)
{
	return (pm_olog_segment *) pm_pool_addr(pool, off);
}

/*
 * Walk a lane's chain from its head towards the segment numbered seq and
 * return it; or the chain's last segment if the chain ends before seq; or
 * NULL if the lane has no segment or its head is past seq.  *head_seq gets
 * the head's number.  A link that does not check out (a block outside the
 * pool, a number out of sequence, more than max_segments) ends the chain
 * there, so a damaged lane reads nothing outside the pool.
 *
 * A reclaimer may move the head and free the segments below it while the
 * walk reads them, and a freed segment may already be another's.  The
 * reclaimer stores the new head before it frees anything, so a walk after
 * which the head is still where it started, with the same number, read no
 * freed segment; any other walk is done again from the new head.
 */
static pm_olog_segment *
segment_walk(const pm_pool *pool, const pm_olog *o, const pm_olog_lane *l, uint64_t seq,
			 uint64_t *head_seq)
{
	for (;;)
	{
		uint64_t	head = pm_load(&l->head);
		uint64_t	off = head;
		pm_olog_segment *first = NULL;
		pm_olog_segment *found = NULL;
		uint64_t	first_seq = 0;

		if (pm_unlikely(pm_olog_walk_hook != NULL))
			pm_olog_walk_hook(l);
		for (uint32_t n = 0; n < o->max_segments && block_ok(pool, off, PM_OLOG_SEGMENT); n++)
		{
			pm_olog_segment *s = segment_at(pool, off);
			uint64_t	sseq = pm_load(&s->seq);

			if (n == 0)
			{
				first = s;
				first_seq = sseq;
			}
			if (sseq != first_seq + n || sseq > seq)
				break;
			found = s;
			if (sseq == seq)
				break;
			off = pm_load(&s->next);
		}
		if (pm_load(&l->head) == head && (first == NULL || pm_load(&first->seq) == first_seq))
		{
			*head_seq = first_seq;
			return found;
		}
	}
}

/*
 * The record at *pos, which lies in segment s, below upto: 1, *rec set and
 * *pos past the record; 0 where s's data end, *pos at the next segment's
 * start; -1 for a header that no writer of this format leaves (a record
 * past the segment or past upto, a length out of range, padding not zero).
 */
static int
record_read(const pm_olog_segment *s, uint64_t *pos, uint64_t upto, pm_olog_record *rec)
{
	uint64_t	off = *pos % SEG_DATA;
	const char *at = (const char *) s->data + off;
	pm_olog_header h;

	if (SEG_DATA - off >= HEADER)
	{
		/* one copy: a damaged pool's header is read once */
		memcpy(&h, at, sizeof(h));
		if (h.pad != 0)
			return -1;
		if (h.len != PM_OLOG_SKIP)
		{
			uint64_t	bytes;

			if (h.len > PM_OLOG_MAX_RECORD)
				return -1;
			bytes = record_bytes(h.len);
			if (bytes > SEG_DATA - off || bytes > upto - *pos)
				return -1;
			rec->host_pos = h.host_pos;
			rec->len = h.len;
			rec->data = at + HEADER;
			*pos += bytes;
			return 1;
		}
	}
	/* the tail never stops in a segment's unused end: a record follows it */
	if (SEG_DATA - off >= upto - *pos)
		return -1;
	*pos += SEG_DATA - off;
	return 0;
}

pm_errcode
pm_olog_create(pm_pool *pool, pm_alloc *a, uint32_t nlanes, uint32_t max_segments, pm_error *err)
{
	uint64_t	dir_off;
	pm_olog    *o;

	if (nlanes == 0 || nlanes > PM_OLOG_MAX_LANES || max_segments < PM_OLOG_MIN_SEGMENTS)
		return pm_error_set(err, PM_ERR_INVALID, 0,
							"pool file \"%s\": an operation log of %u lanes of at most %u segments",
							pool->path, nlanes, max_segments);
	if ((dir_off = pm_alloc_block(a, sizeof(pm_olog), err)) == 0)
		return err->code;
	o = pm_pool_addr(pool, dir_off);
	memset(o, 0, sizeof(*o));
	o->nlanes = nlanes;
	o->max_segments = max_segments;
	for (uint32_t i = 0; i < nlanes; i++)
	{
		uint64_t	off = pm_alloc_block(a, sizeof(pm_olog_lane), err);

		if (off == 0)
		{
			/* the blocks allocated so far are unreachable: allocator recovery frees them */
			return err->code;
		}
		memset(pm_pool_addr(pool, off), 0, sizeof(pm_olog_lane));
		pm_persist(&pool->persist, pm_pool_addr(pool, off), sizeof(pm_olog_lane));
		o->lane[i] = off;
	}
	pm_persist(&pool->persist, o, sizeof(*o));
	pm_pool_set_root(pool, PM_OLOG_ROOT, dir_off);
	return PM_OK;
}

/*
 * The writer's hint names the tail's segment (numbered tail / SEG_DATA).
 * The writer stores it only once that segment's link is durable: after a
 * reserve persists the link, when an append moves the tail onto a segment
 * a reserve linked, when a walk finds it.  It shares the tail's cache line,
 * so each persist of the tail makes a hint at least as new durable.  A
 * lane links one segment of each number in its life and frees it only
 * once reclaimed is past it, reclaimed, applied and the tail being
 * persisted in that order first; so no reclaim, before a crash or after,
 * frees the tail's segment.  After a crash the durable hint is from when
 * the durable tail was set or later, and names a block that was then the
 * lane's segment numbered as the tail was: if that block is now numbered
 * as the durable tail's segment, it is that segment, still linked (for it
 * to have been freed and reused, the durable tail would be past it); if
 * not, the writer walks.  tail_check, stored with it, guards what this
 * cannot: a damaged word (another lane's segment of the tail's number, a
 * block recovery freed); the hint is used only if the check is its offset
 * xor the lane's.
 */
static pm_olog_segment *
hint_segment(const pm_pool *pool, const pm_olog_lane *l, uint64_t lane_off, uint64_t tail)
{
	uint64_t	off = pm_load_relaxed(&l->tail_segment);
	pm_olog_segment *s;

	if (pm_load_relaxed(&l->tail_check) != (off ^ lane_off) ||
		!block_ok(pool, off, PM_OLOG_SEGMENT))
		return NULL;
	s = segment_at(pool, off);
	return pm_load(&s->seq) == tail / SEG_DATA ? s : NULL;
}

static void
hint_set(pm_olog_lane *l, uint64_t lane_off, uint64_t off)
{
	if (pm_load_relaxed(&l->tail_segment) == off &&
		pm_load_relaxed(&l->tail_check) == (off ^ lane_off))
		return;
	pm_store_relaxed(&l->tail_segment, off);
	pm_store_relaxed(&l->tail_check, off ^ lane_off);
}

/*
 * By the lane's writer: the tail's segment, or if it is not linked the
 * chain's last segment (NULL: none, or a chain that does not reach below the
 * tail), by the hint if it checks out, else by a walk that sets the hint.
 */
static pm_olog_segment *
tail_segment_find(const pm_pool *pool, const pm_olog *o, pm_olog_lane *l, uint64_t lane_off,
				  uint64_t tail)
{
	pm_olog_segment *s = hint_segment(pool, l, lane_off, tail);
	uint64_t	head_seq;

	if (pm_likely(s != NULL))
		return s;
	s = segment_walk(pool, o, l, tail / SEG_DATA, &head_seq);
	if (s != NULL && pm_load(&s->seq) == tail / SEG_DATA)
		hint_set(l, lane_off, pm_pool_off(pool, s));
	return s;
}

/*
 * The number of the lane's head segment, as the writer counts a lane's
 * segments from it; false if the head names no segment.  A reclaim may
 * free the head's segment as it is read: see segment_walk.
 */
static bool
head_seq_of(const pm_pool *pool, const pm_olog_lane *l, uint64_t *seq)
{
	for (;;)
	{
		uint64_t	head = pm_load(&l->head);
		const pm_olog_segment *s;

		if (!block_ok(pool, head, PM_OLOG_SEGMENT))
			return false;
		s = segment_at(pool, head);
		*seq = pm_load(&s->seq);
		if (pm_load(&l->head) == head && pm_load(&s->seq) == *seq)
			return true;
	}
}

static pm_errcode
chain_damaged(const pm_pool *pool, uint32_t lane, pm_error *err)
{
	return pm_error_set(err, PM_ERR_CORRUPT, 0,
						"pool file \"%s\": operation log lane %u has no segment chain to its tail",
						pool->path, lane);
}

pm_errcode
pm_olog_reserve(const pm_pool *pool, pm_alloc *a, const pm_olog *o, uint32_t lane, uint32_t len,
				pm_error *err)
{
	uint64_t	lane_off = pm_load(&o->lane[lane]);
	pm_olog_lane *l = (pm_olog_lane *) pm_pool_addr(pool, lane_off);
	uint64_t	tail;
	uint64_t	seq;
	uint64_t	head_seq;
	pm_olog_segment *last;
	pm_olog_segment *s;
	uint64_t   *link;
	uint64_t	off;

	if (len > PM_OLOG_MAX_RECORD)
		return pm_error_set(err, PM_ERR_INVALID, 0,
							"pool file \"%s\": an operation log record of %u bytes (at most %d)",
							pool->path, len, PM_OLOG_MAX_RECORD);
	tail = pm_load_relaxed(&l->tail);
	seq = record_start(tail, record_bytes(len)) / SEG_DATA;
	last = tail_segment_find(pool, o, l, lane_off, tail);
	if (last != NULL)
	{
		uint64_t	last_seq = pm_load(&last->seq);
		uint64_t	next = pm_load(&last->next);

		if (last_seq == seq)
			return PM_OK;
		/* the record starts the next segment, which an earlier reserve may have linked */
		if (last_seq + 1 == seq && next != 0 && block_ok(pool, next, PM_OLOG_SEGMENT) &&
			pm_load(&segment_at(pool, next)->seq) == seq)
			return PM_OK;
		/* else the chain must end just before the segment the record needs */
		if (last_seq + 1 != seq || next != 0)
			return chain_damaged(pool, lane, err);
	}
	else if (pm_load(&l->head) != 0 || seq != 0)
		return chain_damaged(pool, lane, err);

	if (last != NULL)
	{
		if (!head_seq_of(pool, l, &head_seq) || head_seq >= seq)
			return chain_damaged(pool, lane, err);
		if (seq - head_seq >= o->max_segments)
			return pm_error_set(err, PM_ERR_LIMIT, 0,
								"pool file \"%s\": operation log lane %u is full (%u segments)",
								pool->path, lane, o->max_segments);

		/*
		 * The head counted from may be a reclaimer's store not yet durable:
		 * make it so, or a crash could leave a chain of more than
		 * max_segments from the older head.
		 */
		pm_persist(&pool->persist, &l->head, sizeof(uint64_t));
	}
	if ((off = pm_alloc_block(a, PM_OLOG_SEGMENT, err)) == 0)
		return err->code;
	s = segment_at(pool, off);
	pm_store(&s->seq, seq);
	pm_store(&s->next, 0);
	pm_persist(&pool->persist, s, sizeof(*s));
	link = last == NULL ? &l->head : &last->next;
	pm_store(link, off);
	pm_persist(&pool->persist, link, sizeof(uint64_t));
	/* the link is durable: the hint may name the segment */
	if (seq == tail / SEG_DATA)
		hint_set(l, lane_off, off);
	return PM_OK;
}

uint64_t
pm_olog_append(const pm_pool *pool, const pm_olog *o, uint32_t lane, const void *data, uint32_t len,
			   uint64_t host_pos)
{
	uint64_t	lane_off = pm_load(&o->lane[lane]);
	pm_olog_lane *l = (pm_olog_lane *) pm_pool_addr(pool, lane_off);
	uint64_t	tail = pm_load_relaxed(&l->tail);
	uint64_t	bytes = record_bytes(len);
	uint64_t	at = record_start(tail, bytes);
	uint64_t	end = at + bytes;
	pm_olog_segment *s = tail_segment_find(pool, o, l, lane_off, tail);
	pm_olog_header *h;
	uint64_t	next;

	if (s == NULL || pm_load(&s->seq) != tail / SEG_DATA ||
		(at != tail && pm_load(&s->next) == 0))
		pm_fatal("pool file \"%s\": operation log lane %u appended to without a reserve",
				 pool->path, lane);
	if (at != tail)
	{
		/* the record starts the next segment: mark this one's end where a header fits */
		if (at - tail >= HEADER)
		{
			h = (pm_olog_header *) ((char *) s->data + tail % SEG_DATA);
			h->len = PM_OLOG_SKIP;
			h->pad = 0;
			h->host_pos = 0;
			pm_flush(&pool->persist, h, HEADER);
		}
		s = segment_at(pool, pm_load(&s->next));
	}
	h = (pm_olog_header *) ((char *) s->data + at % SEG_DATA);
	h->len = len;
	h->pad = 0;
	h->host_pos = host_pos;
	if (len > 0)
		memcpy(h + 1, data, len);
	memset((char *) (h + 1) + len, 0, bytes - HEADER - len);
	pm_flush(&pool->persist, h, bytes);
	pm_drain(&pool->persist);

	/*
	 * The hint follows the tail onto its segment (linked and durable: a
	 * reserve did it).  A tail that ends a segment whose next is not linked
	 * yet has no segment to name; the next reserve walks once.
	 */
	if (end % SEG_DATA != 0)
		hint_set(l, lane_off, pm_pool_off(pool, s));
	else if ((next = pm_load(&s->next)) != 0)
		hint_set(l, lane_off, next);
	/* the durability point: the record is durable before the tail names it */
	pm_store(&l->tail, end);
	pm_persist(&pool->persist, &l->tail, sizeof(uint64_t));
	return end;
}

/* Set *err to a damaged lane and return false. */
static bool
lane_damaged(const pm_pool *pool, uint32_t lane, uint64_t pos, pm_error *err)
{
	pm_error_set(err, PM_ERR_CORRUPT, 0,
				 "pool file \"%s\": operation log lane %u is damaged at position %llu",
				 pool->path, lane, (unsigned long long) pos);
	return false;
}

bool
pm_olog_next(const pm_pool *pool, const pm_olog *o, uint32_t lane, pm_olog_cursor *c,
			 uint64_t upto, pm_olog_record *rec, pm_error *err)
{
	uint64_t	lane_off;
	const pm_olog_lane *l;
	uint64_t	p = c->pos;
	uint64_t	off = c->segment;

	pm_assert(lane < PM_OLOG_MAX_LANES);
	lane_off = pm_load(&o->lane[lane]);
	if (!block_ok(pool, lane_off, sizeof(pm_olog_lane)))
		return lane_damaged(pool, lane, p, err);
	l = pm_pool_addr(pool, lane_off);

	/*
	 * What a walk bounds by the chain's length: the reader is at or above
	 * reclaimed, so its segment through upto's are all in one chain of at
	 * most max_segments.
	 */
	if (p < upto && (upto - 1) / SEG_DATA - p / SEG_DATA >= o->max_segments)
		return lane_damaged(pool, lane, p, err);
	while (p < upto)
	{
		const pm_olog_segment *s;
		int			r;

		if (off == 0)
		{
			uint64_t	head_seq;

			s = segment_walk(pool, o, l, p / SEG_DATA, &head_seq);
			if (s == NULL)
				return lane_damaged(pool, lane, p, err);
			off = pm_pool_off(pool, s);
		}
		else if (block_ok(pool, off, PM_OLOG_SEGMENT))
			s = segment_at(pool, off);
		else
			return lane_damaged(pool, lane, p, err);

		/*
		 * The cursor's segment, or one a link from it names: the caller
		 * keeps it from being freed, so a number other than p's is damage.
		 */
		if (pm_load(&s->seq) != p / SEG_DATA)
			return lane_damaged(pool, lane, p, err);
		r = record_read(s, &p, upto, rec);
		if (r < 0)
			return lane_damaged(pool, lane, p, err);

		/*
		 * At the segment's end the cursor moves on by its link, checked at
		 * the next read; if it is not linked yet (the tail ends the segment
		 * exactly), the next read walks.
		 */
		if (p % SEG_DATA == 0)
			off = pm_load(&s->next);
		if (r > 0)
		{
			c->pos = p;
			c->segment = off;
			return true;
		}
	}
	c->pos = p;
	c->segment = off;
	if (err != NULL)
		err->code = PM_OK;
	return false;
}

/* Move a lane position forward to upto, at most limit, and persist it. */
static void
advance(const pm_pool *pool, uint64_t *position, uint64_t upto, uint64_t limit)
{
	pm_assert(upto >= pm_load(position) && upto <= limit);
	pm_store(position, upto);
	pm_persist(&pool->persist, position, sizeof(uint64_t));
}

void
pm_olog_set_applied(const pm_pool *pool, const pm_olog *o, uint32_t lane, uint64_t upto)
{
	pm_olog_lane *l = pm_olog_lane_at(pool, o, lane);

	/* the tail read may be the writer's store not yet durable: applied must not pass a durable tail */
	pm_persist(&pool->persist, &l->tail, sizeof(uint64_t));
	advance(pool, &l->applied, upto, pm_load(&l->tail));
}

void
pm_olog_reclaim(const pm_pool *pool, pm_alloc *a, const pm_olog *o, uint32_t lane, uint64_t upto)
{
	pm_olog_lane *l = pm_olog_lane_at(pool, o, lane);
	uint64_t	first = pm_load(&l->head);
	uint64_t	keep = first;
	pm_error	err;

	/* likewise applied, the applier's */
	pm_persist(&pool->persist, &l->applied, sizeof(uint64_t));
	advance(pool, &l->reclaimed, upto, pm_load(&l->applied));
	if (first == 0)
		return;

	/*
	 * The new head: the segment of upto, or the last one linked if that is
	 * not linked yet (the tail ends a segment exactly).  The last segment is
	 * never freed, as the writer links the next one to it.
	 */
	for (uint64_t seq = pm_load(&segment_at(pool, first)->seq); seq < upto / SEG_DATA; seq++)
	{
		uint64_t	next = pm_load(&segment_at(pool, keep)->next);

		if (next == 0)
			break;
		keep = next;
	}
	if (keep == first)
		return;
	/* reclaimed is durable first, so the head is never past it */
	pm_store(&l->head, keep);
	pm_persist(&pool->persist, &l->head, sizeof(uint64_t));
	/* unreachable from here on: a crash leaves them unmarked, and allocator recovery frees them */
	while (first != keep)
	{
		uint64_t	next = pm_load(&segment_at(pool, first)->next);

		pm_free_block(a, first, &err);
		first = next;
	}
}

/* Lane i of the log against the pool: PM_OK or PM_ERR_CORRUPT. */
static pm_errcode
lane_validate(const pm_pool *pool, const pm_olog *o, uint32_t i, pm_error *err)
{
	uint64_t	off = pm_load(&o->lane[i]);
	const pm_olog_lane *l;
	uint64_t	tail;
	uint64_t	applied;
	uint64_t	reclaimed;
	uint64_t	pos;
	bool		applied_seen;
	uint64_t	seq = 0;
	uint32_t	n;

	if (!block_ok(pool, off, sizeof(pm_olog_lane)))
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\": operation log lane %u is outside the pool",
							pool->path, i);
	l = pm_pool_addr(pool, off);
	tail = pm_load(&l->tail);
	applied = pm_load(&l->applied);
	reclaimed = pm_load(&l->reclaimed);
	if (!(reclaimed <= applied && applied <= tail))
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\": operation log lane %u has positions out of order (%llu, %llu, %llu)",
							pool->path, i, (unsigned long long) reclaimed,
							(unsigned long long) applied, (unsigned long long) tail);

	/*
	 * The chain from the head: at most max_segments, numbered in sequence
	 * from at most the number of reclaimed's segment, through the segment
	 * of the last record, to at most the next one (a reserve links it
	 * before the append).  Every record from reclaimed to the tail is read
	 * as pm_olog_next would, and applied must be where one ends.
	 */
	pos = reclaimed;
	applied_seen = applied == reclaimed;
	off = pm_load(&l->head);
	for (n = 0; off != 0; n++)
	{
		const pm_olog_segment *s;
		pm_olog_record rec;

		if (n == o->max_segments || !block_ok(pool, off, PM_OLOG_SEGMENT))
			return pm_error_set(err, PM_ERR_CORRUPT, 0,
								"pool file \"%s\": operation log lane %u has a damaged segment chain",
								pool->path, i);
		s = segment_at(pool, off);
		if (n == 0 ? pm_load(&s->seq) > reclaimed / SEG_DATA : pm_load(&s->seq) != seq + 1)
			return pm_error_set(err, PM_ERR_CORRUPT, 0,
								"pool file \"%s\": operation log lane %u has a segment out of sequence",
								pool->path, i);
		seq = pm_load(&s->seq);
		while (pos < tail && pos / SEG_DATA == seq)
		{
			if (record_read(s, &pos, tail, &rec) < 0)
				return pm_error_set(err, PM_ERR_CORRUPT, 0,
									"pool file \"%s\": operation log lane %u has a damaged record at position %llu",
									pool->path, i, (unsigned long long) pos);
			applied_seen |= pos == applied;
		}
		off = pm_load(&s->next);
	}
	if (pos != tail || !applied_seen ||
		(tail != 0 && (n == 0 || seq < (tail - 1) / SEG_DATA)) ||
		(n > 0 && seq > (tail + SEG_DATA - 1) / SEG_DATA))
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\": operation log lane %u has a segment chain that does not match its positions",
							pool->path, i);
	return PM_OK;
}

pm_errcode
pm_olog_validate(const pm_pool *pool, pm_error *err)
{
	uint64_t	dir_off = pm_pool_root(pool, PM_OLOG_ROOT);
	const pm_olog *o;

	if (dir_off == 0)
		return PM_OK;
	if (!block_ok(pool, dir_off, sizeof(pm_olog)))
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" names an operation log at offset %llu, outside the pool",
							pool->path, (unsigned long long) dir_off);
	o = pm_pool_addr(pool, dir_off);
	if (o->nlanes == 0 || o->nlanes > PM_OLOG_MAX_LANES || o->max_segments < PM_OLOG_MIN_SEGMENTS)
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" has a damaged operation log directory",
							pool->path);
	for (uint32_t i = 0; i < o->nlanes; i++)
	{
		pm_errcode	rc = lane_validate(pool, o, i, err);

		if (rc != PM_OK)
			return rc;
	}
	return PM_OK;
}

pm_errcode
pm_olog_mark(pm_alloc *a, const pm_pool *pool, pm_error *err)
{
	const pm_olog *o;
	pm_errcode	rc;

	/* a pool the host did not write: nothing is followed before it checks out */
	if ((rc = pm_olog_validate(pool, err)) != PM_OK || (o = pm_olog_of(pool)) == NULL)
		return rc;
	rc = pm_alloc_mark(a, pm_pool_root(pool, PM_OLOG_ROOT), err);
	for (uint32_t i = 0; rc == PM_OK && i < o->nlanes && i < PM_OLOG_MAX_LANES; i++)
	{
		uint64_t	off = pm_load(&o->lane[i]);
		const pm_olog_lane *l;

		if (!block_ok(pool, off, sizeof(pm_olog_lane)))
			return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\": operation log lane %u is outside the pool",
								pool->path, i);
		if ((rc = pm_alloc_mark(a, off, err)) != PM_OK)
			break;
		l = pm_pool_addr(pool, off);
		off = pm_load(&l->head);
		for (uint32_t n = 0; rc == PM_OK && off != 0 && n < o->max_segments; n++)
		{
			if (!block_ok(pool, off, PM_OLOG_SEGMENT))
				return pm_error_set(err, PM_ERR_CORRUPT, 0,
									"pool file \"%s\": operation log lane %u has a damaged segment chain",
									pool->path, i);
			rc = pm_alloc_mark(a, off, err);
			off = pm_load(&segment_at(pool, off)->next);
		}
	}
	return rc;
}
