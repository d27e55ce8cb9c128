/* pm_index--0.3.0--0.4.0.sql: update from 0.3.0 (nbtree_pm on numeric, interval, inet, char(n), name) */

\echo Use "ALTER EXTENSION pm_index UPDATE TO '0.4.0'" to load this file. \quit

-- More types with wide keys (src/pg/ordered/ord_string.c), nbtree_pm only: btree's operators and
-- comparison functions.  cidr columns take inet_ops, as varchar ones take text_ops.
CREATE OPERATOR CLASS numeric_ops DEFAULT FOR TYPE numeric USING nbtree_pm AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
  FUNCTION 1 numeric_cmp(numeric, numeric);
CREATE OPERATOR CLASS interval_ops DEFAULT FOR TYPE interval USING nbtree_pm AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
  FUNCTION 1 interval_cmp(interval, interval);
CREATE OPERATOR CLASS inet_ops DEFAULT FOR TYPE inet USING nbtree_pm AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
  FUNCTION 1 network_cmp(inet, inet);
CREATE OPERATOR CLASS bpchar_ops DEFAULT FOR TYPE bpchar USING nbtree_pm AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
  FUNCTION 1 bpcharcmp(bpchar, bpchar);

-- name shares text's operator family, with btree's cross-type operators between the two.
CREATE OPERATOR CLASS name_ops DEFAULT FOR TYPE name USING nbtree_pm FAMILY text_ops AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
  FUNCTION 1 btnamecmp(name, name);
ALTER OPERATOR FAMILY text_ops USING nbtree_pm ADD
  OPERATOR 1 < (name, text), OPERATOR 2 <= (name, text), OPERATOR 3 = (name, text),
  OPERATOR 4 >= (name, text), OPERATOR 5 > (name, text),
  FUNCTION 1 (name, text) btnametextcmp(name, text),
  OPERATOR 1 < (text, name), OPERATOR 2 <= (text, name), OPERATOR 3 = (text, name),
  OPERATOR 4 >= (text, name), OPERATOR 5 > (text, name),
  FUNCTION 1 (text, name) bttextnamecmp(text, name);
