-- pm_index 0.7.0: the operator classes of an ordered access method come from one definition

\echo Use "ALTER EXTENSION pm_index UPDATE TO '0.7.0'" to load this file. \quit

-- The operator families and classes of access method source (of the types in types, or all), made
-- again for access method target: their names, defaults, operators, support functions and
-- cross-type members.  The ordered access methods answer btree's operators in btree's order, so
-- nbtree_pm's classes are the definition, and a new ordered access method's update script gives
-- it them with one call (with the types its keys hold).  A class's members are the operators and
-- functions that depend on it; the family's own (cross-type) members depend on the family.
CREATE FUNCTION pm_index_copy_operator_classes(source name, target name, types regtype[] DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $copy$
DECLARE
  source_am oid;
  family record;
  class record;
  members text;
BEGIN
  SELECT oid INTO source_am FROM pg_am WHERE amname = source AND amtype = 'i';
  IF source_am IS NULL OR NOT EXISTS (SELECT FROM pg_am WHERE amname = target AND amtype = 'i') THEN
    RAISE EXCEPTION 'index access method "%" does not exist',
      CASE WHEN source_am IS NULL THEN source ELSE target END
      USING ERRCODE = 'undefined_object';
  END IF;
  FOR family IN
    SELECT f.oid, f.opfname, f.opfnamespace::regnamespace AS nsp
      FROM pg_opfamily f
     WHERE f.opfmethod = source_am
       AND (types IS NULL OR EXISTS (SELECT FROM pg_opclass c WHERE c.opcfamily = f.oid AND c.opcintype = ANY (types)))
     ORDER BY f.opfname
  LOOP
    EXECUTE format('CREATE OPERATOR FAMILY %s.%I USING %I', family.nsp, family.opfname, target);
    FOR class IN
      SELECT c.oid, c.opcname, c.opcnamespace::regnamespace AS nsp, c.opcintype::regtype AS input_type,
             c.opcdefault, c.opckeytype
        FROM pg_opclass c
       WHERE c.opcfamily = family.oid AND (types IS NULL OR c.opcintype = ANY (types))
       ORDER BY c.opcname
    LOOP
      -- a class with no members of its own (a second class of a family for one type) says its
      -- storage type, which is the input type unless the source has another
      EXECUTE format('CREATE OPERATOR CLASS %s.%I %s FOR TYPE %s USING %I FAMILY %s.%I AS %s',
                     class.nsp, class.opcname, CASE WHEN class.opcdefault THEN 'DEFAULT' ELSE '' END,
                     class.input_type, target, family.nsp, family.opfname,
                     concat_ws(', ', @extschema@.pm_index_operator_class_members('pg_opclass'::regclass, class.oid, types),
                               'STORAGE ' || coalesce(nullif(class.opckeytype, 0), class.input_type)::regtype::text));
    END LOOP;
    members := @extschema@.pm_index_operator_class_members('pg_opfamily'::regclass, family.oid, types);
    IF members IS NOT NULL THEN
      EXECUTE format('ALTER OPERATOR FAMILY %s.%I USING %I ADD %s', family.nsp, family.opfname, target, members);
    END IF;
  END LOOP;
END
$copy$;

-- The members of an operator class or family (owner, a row of the catalog owner_catalog) between
-- types of types (any if NULL), as CREATE OPERATOR CLASS lists them; NULL if none.
CREATE FUNCTION pm_index_operator_class_members(owner_catalog regclass, owner oid, types regtype[])
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $members$
  SELECT string_agg(member, ', ' ORDER BY kind, number, lefttype, righttype)
    FROM (SELECT 1 AS kind, o.amopstrategy AS number, o.amoplefttype AS lefttype, o.amoprighttype AS righttype,
                 format('OPERATOR %s %s.%s (%s, %s)%s', o.amopstrategy, op.oprnamespace::regnamespace, op.oprname,
                        o.amoplefttype::regtype, o.amoprighttype::regtype,
                        CASE WHEN o.amoppurpose = 'o'
                             THEN format(' FOR ORDER BY %s.%I', sf.opfnamespace::regnamespace, sf.opfname) ELSE '' END) AS member
            FROM pg_amop o
            JOIN pg_operator op ON op.oid = o.amopopr
            LEFT JOIN pg_opfamily sf ON sf.oid = o.amopsortfamily
            JOIN pg_depend d ON d.classid = 'pg_amop'::regclass AND d.objid = o.oid
                            AND d.refclassid = owner_catalog AND d.refobjid = owner
           WHERE types IS NULL OR (o.amoplefttype = ANY (types) AND o.amoprighttype = ANY (types))
          UNION ALL
          SELECT 2, p.amprocnum, p.amproclefttype, p.amprocrighttype,
                 format('FUNCTION %s (%s, %s) %s', p.amprocnum, p.amproclefttype::regtype, p.amprocrighttype::regtype,
                        p.amproc::regprocedure)
            FROM pg_amproc p
            JOIN pg_depend d ON d.classid = 'pg_amproc'::regclass AND d.objid = p.oid
                            AND d.refclassid = owner_catalog AND d.refobjid = owner
           WHERE types IS NULL OR (p.amproclefttype = ANY (types) AND p.amprocrighttype = ANY (types))) m
$members$;

REVOKE ALL ON FUNCTION pm_index_copy_operator_classes(name, name, regtype[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION pm_index_operator_class_members(regclass, oid, regtype[]) FROM PUBLIC;
COMMENT ON FUNCTION pm_index_copy_operator_classes(name, name, regtype[]) IS
  'give an index access method the operator classes of another (for the extension''s update scripts)';
