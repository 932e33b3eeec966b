"""e2e_rel_sqlite: Debian's sqlite3 running a scripted workload (a table,
10,000 inserts in one transaction, an index, aggregate and indexed
queries) under heapscope: the same stdout, exit status and database bytes
as without it; a complete profile of more than 10,000 allocations.
"""
import shutil

import hstest
import rltest

SCRIPT = """
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL);
BEGIN;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000)
INSERT INTO t(name, v) SELECT 'name-' || (x * 7919 % 10007), x * 0.5 FROM c;
COMMIT;
CREATE INDEX t_name ON t(name);
SELECT count(*), sum(v), min(name), max(name) FROM t;
SELECT id, name FROM t WHERE name = 'name-42';
SELECT substr(name, 1, 6) AS k, count(*) FROM t GROUP BY k ORDER BY k LIMIT 5;
SELECT group_concat(id) FROM (SELECT id FROM t WHERE name LIKE 'name-99%' ORDER BY id LIMIT 20);
PRAGMA integrity_check;
"""


def main(t):
    sqlite3 = shutil.which("sqlite3")
    if not sqlite3:
        raise hstest.HsError("sqlite3 is not installed (Makefile DEB_PACKAGES)")
    r = rltest.run_both(t, [sqlite3, "w.db"], "sqlite.hsp", stdin=SCRIPT.encode(),
                        outputs=["w.db"])
    t.eq("sqlite3 exit status", 0, r.rc)
    t.true("the count is in the output", b"10000|" in r.stdout, r.text()[:200])
    rltest.check_profile(t, r.out, 10000)


if __name__ == "__main__":
    hstest.main(main)
