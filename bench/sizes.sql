-- bench/sizes: one table per key type, btree and nbtree_pm (and phast_pm where it takes the type)
-- on identical rows, and a markdown table of their sizes.  :rows rows, random order.
CREATE EXTENSION pm_index;
CREATE COLLATION sizes_icu (provider = icu, locale = 'und');
SET maintenance_work_mem = '256MB';
CREATE TABLE k_int8 AS SELECT (random() * 9e18)::int8 AS k FROM generate_series(1, :rows);
CREATE TABLE k_uuid AS SELECT gen_random_uuid() AS k FROM generate_series(1, :rows);
-- e-mail-like strings of 20 to 30 bytes
CREATE TABLE k_email_c AS
  SELECT ('user' || (random() * 1e9)::int8 || '@example' || (random() * 100)::int || '.org') COLLATE "C" AS k
    FROM generate_series(1, :rows);
CREATE TABLE k_email_icu AS SELECT k COLLATE sizes_icu AS k FROM k_email_c;
CREATE TABLE k_md5_c AS SELECT md5(random()::text) COLLATE "C" AS k FROM generate_series(1, :rows);
SELECT format('CREATE INDEX %1$s_%2$s ON %1$s USING %2$s (k)', t, am)
  FROM unnest('{k_int8,k_uuid,k_email_c,k_email_icu,k_md5_c}'::text[]) t,
       unnest('{btree,nbtree_pm,phast_pm}'::text[]) am
 WHERE am <> 'phast_pm' OR t = 'k_int8' \gexec

CREATE TEMP TABLE key_bytes (t text, o int, bytes numeric);
INSERT INTO key_bytes VALUES ('k_int8', 1, 8), ('k_uuid', 2, 16);
INSERT INTO key_bytes SELECT 'k_email_c', 3, avg(octet_length(k)) FROM k_email_c;
INSERT INTO key_bytes SELECT 'k_email_icu', 4, avg(octet_length(k)) FROM k_email_icu;
INSERT INTO key_bytes SELECT 'k_md5_c', 5, avg(octet_length(k)) FROM k_md5_c;

-- a markdown table (psql 15 has no markdown format)
\pset tuples_only on
\pset format unaligned
SELECT format('%s rows; pm_index: its pool (pm_index_size) and, beside it, its DRAM tier', :rows);
SELECT '| key | key bytes | btree MB | nbtree_pm MB | ratio | + DRAM MB | btree B/entry | nbtree_pm B/entry | leaves (1 KiB) |'
UNION ALL SELECT '|---|---:|---:|---:|---:|---:|---:|---:|---:|'
UNION ALL (SELECT format('| %s | %s | %s | %s | %sx | %s | %s | %s | %s |', replace(t, 'k_', ''), round(bytes, 1),
                         round(pg_relation_size(t || '_btree') / 1048576.0, 1),
                         round(pm_index_size(t || '_nbtree_pm') / 1048576.0, 1),
                         round(pm_index_size(t || '_nbtree_pm')::numeric / pg_relation_size(t || '_btree'), 2),
                         round(st.dram_bytes / 1048576.0, 1),
                         round(pg_relation_size(t || '_btree')::numeric / st.entries, 1),
                         round(pm_index_size(t || '_nbtree_pm')::numeric / st.entries, 1), st.leaves)
             FROM key_bytes, LATERAL pm_index_stats(t || '_nbtree_pm') st ORDER BY o)
UNION ALL (SELECT format('| int8, phast_pm | 8 | %s | %s | %sx | %s | %s | %s | %s |',
                         round(pg_relation_size('k_int8_btree') / 1048576.0, 1),
                         round(pm_index_size('k_int8_phast_pm') / 1048576.0, 1),
                         round(pm_index_size('k_int8_phast_pm')::numeric / pg_relation_size('k_int8_btree'), 2),
                         round(st.dram_bytes / 1048576.0, 1),
                         round(pg_relation_size('k_int8_btree')::numeric / st.entries, 1),
                         round(pm_index_size('k_int8_phast_pm')::numeric / st.entries, 1), st.leaves)
             FROM pm_index_stats('k_int8_phast_pm') st);
