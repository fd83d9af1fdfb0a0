-- rows.sql - the database bench/realprogs.sh has sqlite3 load (issue 31):
-- run once, untraced, into a scratch database whose .dump (CREATE TABLE,
-- one INSERT a row, CREATE INDEX) is the text the traced sqlite3 reads,
-- as a database is restored from its dump. ROWS rows (the count in the
-- recursive CTE below) of an integer key, two texts, a real and a
-- category, with an index on two columns so the load also sorts.
CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT NOT NULL, note TEXT,
	price REAL, category INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
INSERT INTO item SELECT i, printf('item-%07d-%x', i, (i * 2654435761) % 4294967296),
	CASE WHEN i % 3 THEN printf('note %d of category %d', i, i % 97) END,
	(i % 10007) / 100.0, i % 97 FROM n;
CREATE INDEX item_category ON item(category, name);
