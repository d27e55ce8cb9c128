/* pm_index--0.9.0--0.10.0.sql: nvbtree_pm, the NVB-tree as an ordered index */

\echo Use "ALTER EXTENSION pm_index UPDATE TO '0.10.0'" to load this file. \quit

CREATE FUNCTION nvbtree_pm_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'nvbtree_pm_handler'
LANGUAGE C;

CREATE ACCESS METHOD nvbtree_pm TYPE INDEX HANDLER nvbtree_pm_handler;
COMMENT ON ACCESS METHOD nvbtree_pm IS 'ordered index whose every node lives in a persistent-memory pool, ready at start (NVB-tree)';

CREATE FUNCTION nvbtree_pm_check(index regclass, heapallindexed boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'nvbtree_pm_check'
LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION nvbtree_pm_check(regclass, boolean) IS
  'verify an nvbtree_pm index; with heapallindexed, also that every heap tuple is indexed';
REVOKE ALL ON FUNCTION nvbtree_pm_check(regclass, boolean) FROM PUBLIC;

-- every type nbtree_pm takes: strings, numeric and several columns in wide trees
SELECT pm_index_copy_operator_classes('nbtree_pm', 'nvbtree_pm');
