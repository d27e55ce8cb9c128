/*
 * pmi_xlog.h
 *	  The WAL records of the pm_index resource manager: their format, the
 *	  functions that write them (pmi_wal.c) and the replay's (pmi_redo.c).
 */
#ifndef PMI_XLOG_H
#define PMI_XLOG_H

#include "access/rmgr.h"
#include "pmi_compat.h"

#include "pmi_amapi.h"

/*
 * RM_EXPERIMENTAL_ID until an id is reserved on the PostgreSQL wiki's list
 * of custom resource managers.
 */
#define PMI_RMGR_ID			RM_EXPERIMENTAL_ID

#define XLOG_PMI_CREATE		0x00	/* an empty pool: the header, then the
									 * pool's UUID */
#define XLOG_PMI_ENTRIES	0x10	/* a build's entries */
#define XLOG_PMI_INSERT		0x20
#define XLOG_PMI_DELETE		0x30
#define XLOG_PMI_COPY		0x40	/* the header (node: the copy's), the
									 * source's node, move */

/*
 * Every record starts with this; entries follow, each a uint32 length and
 * the bytes log_entry made (unaligned).
 */
typedef struct PmiWalHeader
{
	RelFileLocator node;
	uint16		kind;			/* the pool header's structure kind */
	uint16		nentries;
} PmiWalHeader;

/* entries per record at most (a batch of more is logged in several) */
#define PMI_WAL_MAX_ENTRIES	PG_UINT16_MAX

extern bool pmi_debug_wal_error;
extern void pmi_log_create(Relation index, const PmiAmOps *ops, pm_pool *pool);
extern void pmi_insert_logged(Relation index, PmiIndex *h, const void *entry,
							  PmiEntryChangeFn insert);
extern int	pmi_delete_logged(Relation index, const PmiAmOps *ops, const pm_pool *pool,
							  void *state, const void *entries, int n);
extern void pmi_log_copy(RelFileLocatorBackend from, RelFileLocatorBackend to, bool move);
extern void pmi_log_build_entries(Relation index, const PmiAmOps *ops, const pm_pool *pool,
								  const void *entries, int n);

/* pmi_redo.c */
extern void pmi_redo_init(void);

/* pmi_redo.c */
extern void pmi_redo_init(void);

#endif							/* PMI_XLOG_H */
