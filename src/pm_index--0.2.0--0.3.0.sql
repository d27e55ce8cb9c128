/* pm_index--0.2.0--0.3.0.sql: update from 0.2.0 (nbtree_pm on uuid, bytea and text) */

\echo Use "ALTER EXTENSION pm_index UPDATE TO '0.3.0'" to load this file. \quit

-- Types whose keys are byte strings longer than 8 bytes (wide keys, src/pg/ordered/ord_string.c):
-- nbtree_pm only, text in the "C" collation.  btree's operators and comparison functions.
DO $wide$
DECLARE
  c record;
BEGIN
  FOR c IN SELECT * FROM (VALUES ('uuid_ops', 'uuid', 'uuid_cmp'), ('bytea_ops', 'bytea', 'byteacmp'),
                                 ('text_ops', 'text', 'bttextcmp')) v(opclass, type, cmp) LOOP
    EXECUTE format('CREATE OPERATOR CLASS %I DEFAULT FOR TYPE %s USING nbtree_pm AS
                      OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
                      FUNCTION 1 %s(%2$s, %2$s)', c.opclass, c.type, c.cmp);
  END LOOP;
END
$wide$;
