-- pm_index_copy_operator_classes: the operator classes of an ordered access method made from
-- nbtree_pm's.  A copy must equal its source in every family, class, default, member and
-- member's owner (class or family); restricted to the fixed-width types it must give what
-- phast_pm has.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;

-- an access method's operator families and classes, one line per fact, with no OID
CREATE FUNCTION pg_temp.classes(am name) RETURNS SETOF text
LANGUAGE sql AS $$
  SELECT format('family %s', f.opfname)
    FROM pg_opfamily f JOIN pg_am a ON a.oid = f.opfmethod WHERE a.amname = am
  UNION ALL
  SELECT format('class %s of family %s for %s, default %s, storage %s', c.opcname, f.opfname,
                c.opcintype::regtype, c.opcdefault, c.opckeytype::regtype)
    FROM pg_opclass c JOIN pg_opfamily f ON f.oid = c.opcfamily JOIN pg_am a ON a.oid = c.opcmethod
   WHERE a.amname = am
  UNION ALL
  SELECT format('%s %s (dependency %s): operator %s %s, purpose %s, order by %s', d.refclassid::regclass,
                coalesce((SELECT opcname FROM pg_opclass WHERE oid = d.refobjid AND d.refclassid = 'pg_opclass'::regclass),
                         (SELECT opfname FROM pg_opfamily WHERE oid = d.refobjid AND d.refclassid = 'pg_opfamily'::regclass)),
                d.deptype, o.amopstrategy, o.amopopr::regoperator, o.amoppurpose, o.amopsortfamily)
    FROM pg_amop o JOIN pg_am a ON a.oid = o.amopmethod
    JOIN pg_depend d ON d.classid = 'pg_amop'::regclass AND d.objid = o.oid
                    AND d.refclassid IN ('pg_opclass'::regclass, 'pg_opfamily'::regclass)
   WHERE a.amname = am
  UNION ALL
  SELECT format('%s %s (dependency %s): function %s (%s, %s) %s', d.refclassid::regclass,
                coalesce((SELECT opcname FROM pg_opclass WHERE oid = d.refobjid AND d.refclassid = 'pg_opclass'::regclass),
                         (SELECT opfname FROM pg_opfamily WHERE oid = d.refobjid AND d.refclassid = 'pg_opfamily'::regclass)),
                d.deptype, p.amprocnum, p.amproclefttype::regtype, p.amprocrighttype::regtype, p.amproc::regprocedure)
    FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_am a ON a.oid = f.opfmethod
    JOIN pg_depend d ON d.classid = 'pg_amproc'::regclass AND d.objid = p.oid
                    AND d.refclassid IN ('pg_opclass'::regclass, 'pg_opfamily'::regclass)
   WHERE a.amname = am
$$;

-- what one access method has and the other lacks (no rows: the same)
CREATE FUNCTION pg_temp.differences(a name, b name) RETURNS TABLE (only_in name, fact text)
LANGUAGE sql AS $$
  (SELECT a, x FROM pg_temp.classes(a) x EXCEPT ALL SELECT a, x FROM pg_temp.classes(b) x)
  UNION ALL
  (SELECT b, x FROM pg_temp.classes(b) x EXCEPT ALL SELECT b, x FROM pg_temp.classes(a) x)
  ORDER BY 1, 2
$$;

CREATE ACCESS METHOD pm_copy_ordered TYPE INDEX HANDLER nbtree_pm_handler;
SELECT pm_index_copy_operator_classes('nbtree_pm', 'pm_copy_ordered');
SELECT count(*) > 100 AS facts_compared FROM pg_temp.classes('nbtree_pm');
SELECT * FROM pg_temp.differences('nbtree_pm', 'pm_copy_ordered');

-- restricted to phast_pm's types: phast_pm's classes
CREATE ACCESS METHOD pm_copy_fixed TYPE INDEX HANDLER phast_pm_handler;
SELECT pm_index_copy_operator_classes('nbtree_pm', 'pm_copy_fixed',
       ARRAY(SELECT c.opcintype::regtype FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
              WHERE a.amname = 'phast_pm'));
SELECT * FROM pg_temp.differences('phast_pm', 'pm_copy_fixed');
-- (and the comparison sees a difference where there is one)
SELECT count(*) > 0 AS differs FROM pg_temp.differences('nbtree_pm', 'pm_copy_fixed');

-- errors: an unknown access method, classes the target has already, and not a superuser
SELECT pm_index_copy_operator_classes('no_such_am', 'pm_copy_ordered');
SELECT pm_index_copy_operator_classes('nbtree_pm', 'no_such_am');
SELECT pm_index_copy_operator_classes('nbtree_pm', 'pm_copy_ordered');
CREATE ROLE pm_copy_nobody;
SET ROLE pm_copy_nobody;
SELECT pm_index_copy_operator_classes('nbtree_pm', 'pm_copy_ordered');
RESET ROLE;
DROP ROLE pm_copy_nobody;

DROP ACCESS METHOD pm_copy_ordered CASCADE;
DROP ACCESS METHOD pm_copy_fixed CASCADE;
