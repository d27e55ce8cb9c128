-- What the installed pm_index provides. Every object is optional here: the demo must work at each
-- stage of the project (no access method yet, no inspection functions yet).
\set ON_ERROR_STOP 1
\set QUIET 1
\pset pager off
SET client_min_messages = warning;
\echo
\echo '=== extension'
\dx :ext

SELECT to_regprocedure('pm_index_version()') IS NOT NULL AS has_version,
       to_regprocedure('pm_index_pools()') IS NOT NULL AS has_pools \gset
\if :has_version
SELECT pm_index_version();
\else
\echo '(no pm_index_version() yet)'
\endif
\if :has_pools
SELECT * FROM pm_index_pools();
\else
\echo '(no pm_index_pools() yet)'
\endif

\echo '=== access methods and operator classes of pm_index'
SELECT am.amname AS access_method, opc.opcname AS opclass, opc.opcintype::regtype AS type,
       opc.opcdefault AS "default"
  FROM pg_am am
  LEFT JOIN pg_opclass opc ON opc.opcmethod = am.oid
 WHERE am.amname IN ('nbtree_pm', 'fbrtree_pm')
 ORDER BY 1, 3, 2;
