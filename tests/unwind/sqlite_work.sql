-- sqlite_work.sql - what test_unwind_gdb.sh has sqlite3 do: tables,
-- indexes, a view, queries; its heap holds the page cache and the schema.
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, val REAL, data BLOB);
CREATE INDEX t_name ON t(name);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000)
INSERT INTO t SELECT x, 'name-' || x, x * 1.5, zeroblob(x % 300) FROM c;
CREATE TABLE u AS SELECT id % 17 AS k, sum(val) AS s FROM t GROUP BY id % 17;
CREATE VIEW v AS SELECT name, val FROM t WHERE val > 100;
SELECT count(*), sum(length(data)) FROM t WHERE name LIKE 'name-1%';
SELECT group_concat(name) FROM (SELECT name FROM v ORDER BY val DESC LIMIT 20);
SELECT k, s FROM u ORDER BY s DESC LIMIT 3;
