/* pm_index--0.5.0--0.6.0.sql: update from 0.5.0 */

\echo Use "ALTER EXTENSION pm_index UPDATE TO '0.6.0'" to load this file. \quit

-- ---- nbtree_pm pattern operator classes ----
-- btree's text_pattern_ops, varchar_pattern_ops and bpchar_pattern_ops: the strings ordered by
-- their bytes whatever the column's collation (src/pg/ordered/ord_key.c family_orders_bytes), so
-- that LIKE 'abc%' and ~ '^abc' get an index range in any collation
-- (src/pg/ordered/ord_planner.c).  As btree's, varchar_pattern_ops is a class for text of the
-- same family.
CREATE OPERATOR FAMILY text_pattern_ops USING nbtree_pm;
CREATE OPERATOR CLASS text_pattern_ops FOR TYPE text USING nbtree_pm FAMILY text_pattern_ops AS
  OPERATOR 1 ~<~, OPERATOR 2 ~<=~, OPERATOR 3 =, OPERATOR 4 ~>=~, OPERATOR 5 ~>~,
  FUNCTION 1 bttext_pattern_cmp(text, text);
CREATE OPERATOR CLASS varchar_pattern_ops FOR TYPE text USING nbtree_pm FAMILY text_pattern_ops AS
  STORAGE text;
CREATE OPERATOR FAMILY bpchar_pattern_ops USING nbtree_pm;
CREATE OPERATOR CLASS bpchar_pattern_ops FOR TYPE bpchar USING nbtree_pm FAMILY bpchar_pattern_ops AS
  OPERATOR 1 ~<~, OPERATOR 2 ~<=~, OPERATOR 3 =, OPERATOR 4 ~>=~, OPERATOR 5 ~>~,
  FUNCTION 1 btbpchar_pattern_cmp(bpchar, bpchar);
-- ---- end of nbtree_pm pattern operator classes ----
