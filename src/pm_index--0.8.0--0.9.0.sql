/* pm_index--0.8.0--0.9.0.sql: hash_pm, equality over the hash operator classes */

\echo Use "ALTER EXTENSION pm_index UPDATE TO '0.9.0'" to load this file. \quit

CREATE FUNCTION hash_pm_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'hash_pm_handler'
LANGUAGE C;

CREATE ACCESS METHOD hash_pm TYPE INDEX HANDLER hash_pm_handler;
COMMENT ON ACCESS METHOD hash_pm IS 'hash index whose table lives in a persistent-memory pool, written through an operation log (TIPS)';

CREATE FUNCTION hash_pm_check(index regclass, heapallindexed boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'hash_pm_check'
LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION hash_pm_check(regclass, boolean) IS
  'verify a hash_pm index; with heapallindexed, also that every heap tuple is indexed';
REVOKE ALL ON FUNCTION hash_pm_check(regclass, boolean) FROM PUBLIC;

-- The hash access method's operator families and classes of the built-in types, each with the
-- same name, operators (strategy 1) and hash functions (support function 1), cross-type
-- operators included: every type hash indexes, hash_pm indexes, with the same semantics.
DO $hash_pm$
DECLARE
  f record;
  c record;
  m record;
BEGIN
  FOR f IN SELECT opf.oid, opf.opfname
             FROM pg_opfamily opf JOIN pg_am am ON am.oid = opf.opfmethod
            WHERE am.amname = 'hash' AND opf.opfnamespace = 'pg_catalog'::regnamespace
            ORDER BY opf.opfname LOOP
    EXECUTE format('CREATE OPERATOR FAMILY %I USING hash_pm', f.opfname);
    FOR c IN SELECT opc.opcname, opc.opcintype::regtype AS type, opc.opcdefault,
                    op.amopopr::regoperator AS opr, pr.amproc::regprocedure AS proc
               FROM pg_opclass opc
               JOIN pg_amop op ON op.amopfamily = f.oid AND op.amoplefttype = opc.opcintype
                              AND op.amoprighttype = opc.opcintype AND op.amopstrategy = 1
               JOIN pg_amproc pr ON pr.amprocfamily = f.oid AND pr.amproclefttype = opc.opcintype
                                AND pr.amprocrighttype = opc.opcintype AND pr.amprocnum = 1
              WHERE opc.opcfamily = f.oid AND opc.opcnamespace = 'pg_catalog'::regnamespace
              ORDER BY opc.opcname LOOP
      -- a second class of a type (network_ops: inet_ops, cidr_ops) shares the first's members
      EXECUTE format('CREATE OPERATOR CLASS %I %s FOR TYPE %s USING hash_pm FAMILY %I AS %s',
                     c.opcname, CASE WHEN c.opcdefault THEN 'DEFAULT' ELSE '' END, c.type,
                     f.opfname,
                     CASE WHEN EXISTS (SELECT 1 FROM pg_opclass o2 JOIN pg_am a2 ON a2.oid = o2.opcmethod
                                        WHERE a2.amname = 'hash_pm' AND o2.opcintype = c.type
                                          AND o2.opcfamily = (SELECT oid FROM pg_opfamily
                                                               WHERE opfname = f.opfname
                                                                 AND opfmethod = a2.oid))
                          THEN format('STORAGE %s', c.type)
                          ELSE format('OPERATOR 1 %s, FUNCTION 1 %s', c.opr, c.proc) END);
    END LOOP;
    -- what no class of the family brought: cross-type operators, functions of their types
    FOR m IN SELECT format('OPERATOR 1 %s', op.amopopr::regoperator) AS member
               FROM pg_amop op
              WHERE op.amopfamily = f.oid AND op.amopstrategy = 1
                AND NOT EXISTS (SELECT 1 FROM pg_amop o2 JOIN pg_opfamily f2 ON f2.oid = o2.amopfamily
                                 WHERE f2.opfname = f.opfname
                                   AND f2.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'hash_pm')
                                   AND o2.amopopr = op.amopopr)
             UNION ALL
             SELECT format('FUNCTION 1 (%s, %s) %s', pr.amproclefttype::regtype,
                           pr.amprocrighttype::regtype, pr.amproc::regprocedure)
               FROM pg_amproc pr
              WHERE pr.amprocfamily = f.oid AND pr.amprocnum = 1
                AND NOT EXISTS (SELECT 1 FROM pg_amproc p2 JOIN pg_opfamily f2 ON f2.oid = p2.amprocfamily
                                 WHERE f2.opfname = f.opfname
                                   AND f2.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'hash_pm')
                                   AND p2.amproclefttype = pr.amproclefttype
                                   AND p2.amprocrighttype = pr.amprocrighttype) LOOP
      EXECUTE format('ALTER OPERATOR FAMILY %I USING hash_pm ADD %s', f.opfname, m.member);
    END LOOP;
  END LOOP;
END
$hash_pm$;
