/*
 * pmi_compat.h
 *	  The PostgreSQL majors pm_index builds against (15 to 18), and the names
 *	  that differ between them.
 *
 * The glue is written against the newest API.  Where an older major spells
 * the same thing differently, this header maps the new name onto the old one,
 * so that no other file carries a version test for a rename.  A version test
 * elsewhere marks a difference in behaviour, not in spelling.
 *
 * Include it through pm_index.h, or directly after postgres.h in a header
 * that needs a relation's file identity.
 */
#ifndef PMI_COMPAT_H
#define PMI_COMPAT_H

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 190000
#error "pm_index builds for PostgreSQL 15, 16, 17 and 18: set PG_CONFIG to one of their pg_config"
#endif

#if PG_VERSION_NUM >= 160000
#include "storage/relfilelocator.h"
#include "utils/relfilenumbermap.h"
#else
#include "storage/relfilenode.h"
#include "utils/relfilenodemap.h"

/*
 * PostgreSQL 16 renamed a relation's file identity (RelFileNode) to
 * RelFileLocator, its fields and the relcache and smgr members holding it.
 * The layout did not change: three Oids, which the WAL records carry as is.
 */
typedef RelFileNode RelFileLocator;
typedef RelFileNodeBackend RelFileLocatorBackend;
typedef Oid RelFileNumber;

#define spcOid spcNode
#define dbOid dbNode
#define relNumber relNode
#define locator node
#define rd_locator rd_node
#define smgr_rlocator smgr_rnode
#define RelFileLocatorEquals(a, b) RelFileNodeEquals(a, b)
#define RelFileLocatorBackendEquals(a, b) RelFileNodeBackendEquals(a, b)
#define RelFileLocatorBackendIsTemp(r) RelFileNodeBackendIsTemp(r)
#define RelidByRelfilenumber(spc, rel) RelidByRelfilenode(spc, rel)
#endif

/*
 * PostgreSQL 17 numbers a process by its slot in the proc array
 * (ProcNumber) where earlier majors had a separate BackendId; pm_index means
 * the slot wherever it indexes its own per-process arrays.
 */
#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"

#define PMI_PROCSIGNAL_TARGET(proc) GetNumberFromPGProc(proc)
#else
#include "storage/backendid.h"

typedef BackendId ProcNumber;

#define INVALID_PROC_NUMBER InvalidBackendId
#define MyProcNumber (MyProc->pgprocno)
#define GetNumberFromPGProc(proc) ((proc)->pgprocno)
#define GetTempNamespaceProcNumber(nsp) GetTempNamespaceBackendId(nsp)
#define PMI_PROCSIGNAL_TARGET(proc) ((proc)->backendId)
#endif

/* PostgreSQL 18 marks a function that does not return before its declaration. */
#if PG_VERSION_NUM < 180000
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * PostgreSQL 18: relpath() returns its path in a struct, a collation's
 * "C"-ness is a field of its locale, and a few functions were renamed or took
 * a parameter.
 */
#if PG_VERSION_NUM >= 180000
#define pmi_relpath(rlocator, fork) pstrdup(relpath(rlocator, fork).str)
#define pmi_collation_is_c(collid) (pg_newlocale_from_collation(collid)->collate_is_c)
#define pmi_vacuum_delay_point() vacuum_delay_point(false)
#else
#define pmi_relpath(rlocator, fork) relpath(rlocator, fork)
#define pmi_collation_is_c(collid) lc_collate_is_c(collid)
#define pmi_vacuum_delay_point() vacuum_delay_point()
#define ProcessStartupProcInterrupts() HandleStartupProcInterrupts()
#define ps_offset_am ps_offset
#endif

/* amestimateparallelscan's parameters: an access method's shared scan state can depend on them */
#if PG_VERSION_NUM >= 180000
#define PMI_ESTIMATEPARALLELSCAN_PARAMS Relation index, int nkeys, int norderbys
#elif PG_VERSION_NUM >= 170000
#define PMI_ESTIMATEPARALLELSCAN_PARAMS int nkeys, int norderbys
#else
#define PMI_ESTIMATEPARALLELSCAN_PARAMS void
#endif

#endif							/* PMI_COMPAT_H */
