/* pm_index--0.4.0--0.5.0.sql: update from 0.4.0 (fbrtree_pm on circle and polygon, point <@ polygon and circle) */

\echo Use "ALTER EXTENSION pm_index UPDATE TO '0.5.0'" to load this file. \quit

-- GiST's circle_ops and poly_ops, strategy for strategy.  An entry is the value's bounding box;
-- the executor rechecks each with the operator, as it does for GiST (src/pg/fbrtree_pm/fbrpm_key.c).
CREATE OPERATOR CLASS circle_ops DEFAULT FOR TYPE circle USING fbrtree_pm AS
    OPERATOR 1 << (circle, circle),
    OPERATOR 2 &< (circle, circle),
    OPERATOR 3 && (circle, circle),
    OPERATOR 4 &> (circle, circle),
    OPERATOR 5 >> (circle, circle),
    OPERATOR 6 ~= (circle, circle),
    OPERATOR 7 @> (circle, circle),
    OPERATOR 8 <@ (circle, circle),
    OPERATOR 9 &<| (circle, circle),
    OPERATOR 10 <<| (circle, circle),
    OPERATOR 11 |>> (circle, circle),
    OPERATOR 12 |&> (circle, circle),
    OPERATOR 15 <-> (circle, point) FOR ORDER BY pg_catalog.float_ops;

CREATE OPERATOR CLASS poly_ops DEFAULT FOR TYPE polygon USING fbrtree_pm AS
    OPERATOR 1 << (polygon, polygon),
    OPERATOR 2 &< (polygon, polygon),
    OPERATOR 3 && (polygon, polygon),
    OPERATOR 4 &> (polygon, polygon),
    OPERATOR 5 >> (polygon, polygon),
    OPERATOR 6 ~= (polygon, polygon),
    OPERATOR 7 @> (polygon, polygon),
    OPERATOR 8 <@ (polygon, polygon),
    OPERATOR 9 &<| (polygon, polygon),
    OPERATOR 10 <<| (polygon, polygon),
    OPERATOR 11 |>> (polygon, polygon),
    OPERATOR 12 |&> (polygon, polygon),
    OPERATOR 15 <-> (polygon, point) FOR ORDER BY pg_catalog.float_ops;

-- point_ops: a point inside a polygon or a circle, GiST's strategies 48 and 68.
ALTER OPERATOR FAMILY point_ops USING fbrtree_pm ADD
    OPERATOR 48 <@ (point, polygon),
    OPERATOR 68 <@ (point, circle);
