-- The ordered access methods pm_index provides: those of its extension that can order. The
-- tests that every ordered access method must pass run once per row.
SELECT a.amname
  FROM pg_am a
  JOIN pg_depend d ON d.classid = 'pg_am'::regclass AND d.objid = a.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pm_index'
 WHERE pg_indexam_has_property(a.oid, 'can_order')
 ORDER BY a.amname;
