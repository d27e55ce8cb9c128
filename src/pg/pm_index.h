/*
 * pm_index.h
 *	  Declarations shared by the PostgreSQL glue of pm_index (src/pg).
 *
 * src/pg is the only place that includes both PostgreSQL headers and the
 * core's; the core's errors become ereports here.
 */
#ifndef PM_INDEX_PG_H
#define PM_INDEX_PG_H

#include "postgres.h"

#include "storage/relfilenode.h"

#include "alloc.h"
#include "epoch.h"
#include "pool.h"

#define PMI_POOL_SUFFIX ".pmpool"

/* GUCs */
extern char *pmi_pool_dir_guc;
extern int	pmi_persistence_guc;
extern int	pmi_dram_tier_mb;

/* State in PostgreSQL shared memory: fixed at startup, rebuilt after a crash-restart. */
typedef struct PmIndexShared
{
	uint32		nslots;			/* epoch participant slots */
	Size		epoch_offset;	/* from the start of this struct */
	Size		arena_offset;
	Size		arena_size;
} PmIndexShared;

extern PmIndexShared *pmi_shared;

/* pm_index.c */
extern const char *pmi_pool_dir(void);
extern pm_epoch_handle *pmi_epoch(void);
extern pm_alloc *pmi_dram(void);
extern void pmi_report_core_error(int elevel, const pm_error *err) pg_attribute_cold;

/* pool_registry.c */
extern char *pmi_pool_path(RelFileNode rnode);
extern bool pmi_parse_pool_name(const char *name, RelFileNode *rnode);
extern bool pmi_relfilenode_exists(RelFileNode rnode);
extern void pmi_ensure_pool_dir(void);
extern pm_pool *pmi_pool_open(RelFileNode rnode);
extern void pmi_pool_forget(RelFileNode rnode);
extern int	pmi_sweep_orphans(void);

PGDLLEXPORT void pmi_sweeper_main(Datum arg);

#endif							/* PM_INDEX_PG_H */
