-- 0004_lz4.sql - large values compressed with lz4 instead of pglz.
--
-- A 1,000-tensor result is ~360 KB of json; PostgreSQL compresses every value over ~2 KB
-- when it stores it, and its default, pglz, took about half of the worker's finishing
-- UPDATE (measured on a 2-core VM: ~6 ms -> ~3.3 ms with lz4, submit-to-done p50
-- 41 -> 36 ms on the bench model). lz4 needs a server built with it (Debian's are, since
-- PostgreSQL 14); on one without, the columns keep the default and nothing else changes.
-- Existing values stay as they are; new ones use lz4.
DO $$
BEGIN
    ALTER TABLE plans
        ALTER COLUMN input SET COMPRESSION lz4,
        ALTER COLUMN result SET COMPRESSION lz4,
        ALTER COLUMN result_summary SET COMPRESSION lz4,
        ALTER COLUMN result_layout SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    RAISE NOTICE 'lz4 is not available: keeping the default compression';
END
$$;
