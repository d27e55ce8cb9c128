/*
 * epoch.h
 *	  Epoch-based reclamation whose participants are processes (or threads)
 *	  sharing one memory region.
 *
 * A domain lives in shared memory: a global epoch and one slot per
 * participant.  A slot holds the participant's owner token, the epoch it
 * entered at (0 while quiescent) and its limbo ring of retired blocks.
 * A block retired at epoch e is freed once every active participant entered
 * at an epoch > e.  A participant that dies leaves a slot whose owner is no
 * longer alive: the first participant that finds the epoch blocked by it
 * clears the slot's reader state, and its limbo is then drained by whoever
 * reclaims next.  See README.md.
 */
#ifndef PM_EPOCH_H
#define PM_EPOCH_H

#include "pm_common.h"

typedef struct pm_epoch_domain pm_epoch_domain;

/* Called to free a retired block; space and tag are the caller's. */
typedef void (*pm_epoch_free_fn) (void *ctx, uint32_t space, uint32_t tag, uint64_t off);

/* Is the participant with this owner token still alive? */
typedef bool (*pm_epoch_alive_fn) (uint64_t owner);

typedef struct pm_epoch_handle
{
	pm_epoch_domain *dom;
	int			slot;			/* -1 when not registered */
	uint64_t	owner;
	int			nesting;		/* enter/exit nest in one participant */
	pm_epoch_free_fn free_fn;
	void	   *free_ctx;
	pm_epoch_alive_fn alive_fn;
	/*
	 * Retirements the slot's full ring could not take while this participant
	 * was inside a section, in retirement order (malloc'd; epoch.c's
	 * entries).  Waiting there could wait for this participant itself.
	 */
	void	   *overflow;
	uint32_t	noverflow;
	uint32_t	overflow_cap;
} pm_epoch_handle;

extern size_t pm_epoch_domain_size(int nslots, int limbo_capacity);
extern void pm_epoch_domain_init(void *mem, int nslots, int limbo_capacity);

/* The default liveness test: the token is a pid, kill(pid, 0) tells. */
extern bool pm_epoch_pid_alive(uint64_t owner);

/*
 * Register as a participant: claim slot preferred_slot if >= 0 (the host's
 * own process number), else any free slot.  The token must be non-zero and
 * unique among live participants.
 */
extern pm_errcode pm_epoch_register(pm_epoch_domain *dom, uint64_t owner,
									int preferred_slot, pm_epoch_free_fn free_fn,
									void *free_ctx, pm_epoch_alive_fn alive_fn,
									pm_epoch_handle *h, pm_error *err);

/*
 * Leave the domain; pending retirements stay in the slot and are drained
 * later, those beyond its ring first waited for and freed here.
 */
extern void pm_epoch_unregister(pm_epoch_handle *h);

extern void pm_epoch_enter(pm_epoch_handle *h);
extern void pm_epoch_exit(pm_epoch_handle *h);

/* Retire a block that is no longer reachable; freed when no reader can see it. */
extern void pm_epoch_retire(pm_epoch_handle *h, uint32_t space, uint32_t tag, uint64_t off);

/* Advance the epoch if possible and free what is safe; returns blocks freed. */
extern int	pm_epoch_reclaim(pm_epoch_handle *h);

/* Retire-and-wait until every block this participant retired is freed. */
extern void pm_epoch_drain(pm_epoch_handle *h);

extern uint64_t pm_epoch_current(const pm_epoch_domain *dom);
extern uint64_t pm_epoch_pending(const pm_epoch_domain *dom);

#endif							/* PM_EPOCH_H */
