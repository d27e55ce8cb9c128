-- pm_index_postgis 0.2.0: fbrtree_pm on geography and on n-D geometry.
\echo Use "ALTER EXTENSION pm_index_postgis UPDATE TO '0.2.0'" to load this file. \quit

-- The operators and strategy numbers of PostGIS's gist_geography_ops and gist_geometry_ops_nd.
-- Support function 4 is PostGIS's own GiST compress function: an entry is the box GiST would
-- store for the value (geography: geocentric, 3-D; geometry: up to 4-D, X Y Z M).  The executor
-- rechecks every entry and every distance with the operator (src/pg/fbrtree_pm/fbrpm_key.c).
CREATE OPERATOR CLASS geography_ops DEFAULT FOR TYPE geography USING fbrtree_pm AS
    OPERATOR 3 && ,
    OPERATOR 13 <-> FOR ORDER BY pg_catalog.float_ops,
    FUNCTION 4 geography_gist_compress(internal);

CREATE OPERATOR CLASS geometry_ops_nd FOR TYPE geometry USING fbrtree_pm AS
    OPERATOR 3 &&& ,
    OPERATOR 6 ~~= ,
    OPERATOR 7 ~~ ,
    OPERATOR 8 @@ ,
    OPERATOR 13 <<->> FOR ORDER BY pg_catalog.float_ops,
    OPERATOR 20 |=| FOR ORDER BY pg_catalog.float_ops,
    FUNCTION 4 geometry_gist_compress_nd(internal);
