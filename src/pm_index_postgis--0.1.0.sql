-- pm_index_postgis: fbrtree_pm indexes on PostGIS geometry.  A separate extension so that
-- pm_index installs without PostGIS; CREATE EXTENSION pm_index_postgis once both are there.
\echo Use "CREATE EXTENSION pm_index_postgis" to load this file. \quit

-- The strategy numbers of PostGIS's gist_geometry_ops_2d.  Entries are the values' 2-D
-- bounding boxes (support function 1); the operators compare boxes rounded to float4, so
-- fbrtree_pm compares them the same way, exactly, as GiST does.  For a column declared
-- geometry(Point, srid), points are stored exactly and rebuilt (functions 2 and 3) for
-- index-only scans.
CREATE OPERATOR CLASS geometry_ops_2d DEFAULT FOR TYPE geometry USING fbrtree_pm AS
    OPERATOR 1 << ,
    OPERATOR 2 &< ,
    OPERATOR 3 && ,
    OPERATOR 4 &> ,
    OPERATOR 5 >> ,
    OPERATOR 6 ~= ,
    OPERATOR 7 ~ ,
    OPERATOR 8 @ ,
    OPERATOR 9 &<| ,
    OPERATOR 10 <<| ,
    OPERATOR 11 |>> ,
    OPERATOR 12 |&> ,
    OPERATOR 13 <-> FOR ORDER BY pg_catalog.float_ops,
    OPERATOR 14 <#> FOR ORDER BY pg_catalog.float_ops,
    FUNCTION 1 box(geometry),
    FUNCTION 2 st_makepoint(float8, float8),
    FUNCTION 3 st_setsrid(geometry, integer);
