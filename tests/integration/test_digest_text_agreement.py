"""performance_schema DIGEST_TEXT and slow-log text of one statement get one fingerprint.

design.md promises one query_id per query whichever source saw it. This runs over three hundred
statements of the shapes applications send, on a MariaDB of its own, then for each one reads
the DIGEST_TEXT the server computed (``events_statements_history_long``) and the text its slow
log recorded, and checks that :func:`fingerprint` maps both to the same text. Every
disagreement is reported at once, with both inputs and both fingerprints.

It also pins what becomes of a DIGEST_TEXT the server cut short
(``performance_schema_max_digest_length``), as the fingerprint module docstring describes.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pymysql
import pytest
from pymysql.connections import Connection
from pymysql.cursors import Cursor

from quanta.analysis.fingerprint import fingerprint, query_id
from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.slowlog import SlowLogEvent, parse_slow_log
from tests.analysis.test_quoted_names import statement_cases
from tests.fixtures.servers import MariaDBServer, OwnMariaDB, started_mariadb
from tests.helpers import wait_until

services = pytest.mark.services

# Room for every statement of the test in the history, whatever the server would autosize.
HISTORY_ARGS = ("--performance-schema-events-statements-history-long-size=10000",)
# The server writes a slow-log entry after it has answered the client: the last may lag.
SLOW_LOG_WAIT = 10.0
# Statements of their own that every session starts with: pymysql's 'SET NAMES' on connect,
# and run_statements' query for the connection's ids.
SESSION_PREAMBLE = 2

SETUP = (
    "CREATE DATABASE app",
    "CREATE DATABASE app2",
    """CREATE TABLE app.users (
        id INT AUTO_INCREMENT PRIMARY KEY,
        name VARCHAR(50) NOT NULL,
        email VARCHAR(100),
        status VARCHAR(10) NOT NULL DEFAULT 'new',
        score INT DEFAULT 0,
        flags BIT(8) DEFAULT b'0',
        created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
        KEY idx_status (status),
        KEY idx_name (name)
    )""",
    """CREATE TABLE app.orders (
        id INT AUTO_INCREMENT PRIMARY KEY,
        user_id INT NOT NULL,
        total DECIMAL(10, 2) NOT NULL,
        status VARCHAR(10) NOT NULL,
        created_at DATETIME NOT NULL,
        KEY idx_user (user_id)
    )""",
    "CREATE TABLE app.counters (name VARCHAR(20) PRIMARY KEY, n INT NOT NULL)",
    "CREATE TABLE app.docs (id INT PRIMARY KEY, body TEXT, j JSON, FULLTEXT KEY ft_body (body))",
    "CREATE TABLE app2.audit (id INT AUTO_INCREMENT PRIMARY KEY, msg VARCHAR(100))",
    # Columns and a table named like keywords that have another spelling in DIGEST_TEXT.
    "CREATE TABLE app.kw (`fields` INT, `replica` INT, `replicas` INT, `io_thread` INT,"
    " `relay_thread` INT, `sql_tsi_day` INT, `session_user` INT, `some` INT, `mid` INT,"
    " `substr` INT, `std` INT, `variance` INT)",
    "CREATE TABLE app.replica (id INT)",
    "INSERT INTO app.users (name, email, status, score, created_at) VALUES"
    " ('alice', 'a@example.com', 'active', 10, '2024-01-05 10:00:00'),"
    " ('bob', NULL, 'new', -3, '2024-02-01 00:00:00'),"
    " ('carol', 'c@example.com', 'active', 7, NOW())",
    "INSERT INTO app.orders (user_id, total, status, created_at) VALUES"
    " (1, 12.50, 'paid', '2024-03-01'), (1, 99.00, 'new', '2024-03-02'),"
    " (2, 5.25, 'paid', NOW()), (3, 150.00, 'void', NOW())",
    "INSERT INTO app.docs VALUES (1, 'hello world', '{\"a\": 1, \"b\": [1, 2]}'),"
    " (2, 'goodbye moon', '{\"a\": 2}')",
    """CREATE PROCEDURE app.refresh(IN x INT)
    BEGIN
        UPDATE app.counters SET n = n + x WHERE name = 'refresh';
    END""",
    "CREATE FUNCTION app.double_it(x INT) RETURNS INT DETERMINISTIC RETURN x * 2",
)

# What applications send, run in this order on one connection whose database is `app`.
SHAPES: tuple[str, ...] = (
    # Lookups; spacing, case, backticks and qualified names.
    "SELECT * FROM users WHERE id = 1",
    "select * from users where id=2",
    "SELECT   id,name\n  FROM users\n WHERE\tid = 3",
    "SELECT id, name FROM users WHERE name = 'alice'",
    "SELECT `id`, `name` FROM `users` WHERE `id` = 1",
    "SELECT * FROM `app`.`users` WHERE `app`.`users`.`id` = 1",
    "SELECT * FROM app2.audit WHERE id = 1",
    "SELECT 1 FROM DUAL WHERE 1 = 1",
    # Joins and subqueries.
    "SELECT u.name, o.total FROM users u JOIN orders o ON o.user_id = u.id WHERE o.total > 10",
    "SELECT u.name, COUNT(o.id) FROM users u LEFT JOIN orders o ON o.user_id = u.id"
    " GROUP BY u.name HAVING COUNT(o.id) > 1",
    "SELECT * FROM users u INNER JOIN orders o USING (id) WHERE u.id < 3",
    "SELECT * FROM users u STRAIGHT_JOIN orders o ON o.user_id = u.id",
    "SELECT * FROM users u RIGHT OUTER JOIN orders o ON o.user_id = u.id",
    "SELECT * FROM users NATURAL JOIN orders",
    "SELECT * FROM users CROSS JOIN orders LIMIT 1",
    "SELECT * FROM users, orders WHERE orders.user_id = users.id AND users.id = 1",
    "SELECT * FROM orders WHERE user_id IN (SELECT id FROM users WHERE status = 'active')",
    "SELECT * FROM users WHERE EXISTS (SELECT 1 FROM orders WHERE orders.user_id = users.id)",
    "SELECT EXISTS(SELECT 1 FROM orders WHERE user_id = 1)",
    "SELECT * FROM (SELECT user_id, SUM(total) AS s FROM orders GROUP BY user_id) AS t"
    " WHERE t.s > 10",
    "SELECT name, (SELECT COUNT(*) FROM orders WHERE user_id = users.id) AS n FROM users",
    "SELECT * FROM orders WHERE total > ALL (SELECT total FROM orders WHERE status = 'new')",
    "SELECT * FROM orders WHERE total = ANY (SELECT total FROM orders WHERE status = 'paid')",
    # IN lists of one and many values, rows, BETWEEN, LIKE, REGEXP.
    "SELECT * FROM users WHERE id IN (1)",
    "SELECT * FROM users WHERE id IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)",
    "SELECT * FROM users WHERE name IN ('alice', 'bob')",
    "SELECT * FROM users WHERE id NOT IN (1, 2)",
    "SELECT * FROM orders WHERE total IN (1.5, -2, 0x10)",
    "SELECT * FROM users WHERE id IN (-1, -2) OR score IN (+3)",
    "SELECT * FROM users WHERE id IN ('', NULL)",
    "SELECT * FROM users WHERE id IN (1 + 1, 2)",
    "SELECT * FROM users WHERE id IN (1, (SELECT 2))",
    "SELECT * FROM users u WHERE (u.id, u.status) IN ((1, 'active'), (2, 'new'))",
    "SELECT * FROM users WHERE (id, score) = (1, 10)",
    "SELECT * FROM users WHERE ROW(id, score) = ROW(1, 10)",
    "SELECT * FROM orders WHERE created_at BETWEEN '2024-01-01' AND '2024-12-31 23:59:59'",
    "SELECT * FROM users WHERE score BETWEEN -5 AND 5",
    "SELECT * FROM users WHERE score NOT BETWEEN 1 AND 2",
    "SELECT * FROM users WHERE name LIKE 'al%'",
    "SELECT * FROM users WHERE name NOT LIKE '%x!%%' ESCAPE '!'",
    "SELECT * FROM users WHERE name REGEXP '^a' OR name RLIKE 'b$'",
    "SELECT * FROM users WHERE name SOUNDS LIKE 'alice'",
    # ORDER BY, LIMIT, GROUP BY.
    "SELECT * FROM users ORDER BY id LIMIT 10",
    "SELECT * FROM users ORDER BY id LIMIT 5, 10",
    "SELECT * FROM users ORDER BY id LIMIT 10 OFFSET 5",
    "SELECT * FROM users ORDER BY name ASC, id DESC",
    "SELECT * FROM users ORDER BY name DESC LIMIT 1",
    "SELECT * FROM users ORDER BY FIELD(id, 3, 1, 2)",
    "SELECT * FROM users ORDER BY RAND() LIMIT 1",
    "SELECT * FROM users LIMIT ROWS EXAMINED 100",
    "SELECT * FROM users ORDER BY id OFFSET 1 ROWS FETCH FIRST 2 ROWS ONLY",
    "SELECT * FROM users ORDER BY id FETCH FIRST 1 ROW WITH TIES",
    "SELECT status, COUNT(*), SUM(total), AVG(total), MIN(total), MAX(total) FROM orders"
    " GROUP BY status ORDER BY 2 DESC",
    "SELECT status, COUNT(*) FROM orders GROUP BY status WITH ROLLUP",
    "SELECT status, COUNT(*) FROM users GROUP BY 1 ORDER BY NULL",
    "SELECT COUNT(*), COUNT(DISTINCT user_id) FROM orders",
    "SELECT DISTINCT status FROM orders",
    "SELECT DISTINCTROW status FROM orders",
    "SELECT GROUP_CONCAT(name ORDER BY name SEPARATOR ',') FROM users",
    "SELECT SQL_CALC_FOUND_ROWS * FROM users LIMIT 1",
    "SELECT FOUND_ROWS()",
    # Functions, including the keywords DIGEST_TEXT spells another way.
    "SELECT NOW(), CURRENT_TIMESTAMP, CURRENT_TIMESTAMP(), DATABASE(), USER(), VERSION()",
    "SELECT CURDATE(), CURRENT_DATE, CURRENT_DATE(), CURTIME(), UTC_TIMESTAMP()",
    "SELECT LOCALTIME, LOCALTIME(), LOCALTIMESTAMP, SYSDATE(), UTC_DATE, UTC_TIME()",
    "SELECT SESSION_USER(), SYSTEM_USER(), CURRENT_USER, CURRENT_USER(), USER()",
    "SELECT * FROM orders WHERE created_at > DATE_ADD(NOW(), INTERVAL -1 DAY)",
    "SELECT DATE_SUB(created_at, INTERVAL 2 HOUR), created_at + INTERVAL 1 MONTH FROM orders",
    "SELECT * FROM orders WHERE created_at > NOW() - INTERVAL 7 DAY",
    "SELECT * FROM users WHERE created_at >= CURDATE() AND created_at < CURRENT_DATE"
    " + INTERVAL 1 DAY",
    "SELECT DATE_FORMAT(created_at, '%Y-%m'), YEAR(created_at), TIMESTAMPDIFF(SECOND,"
    " created_at, NOW()) FROM users",
    "SELECT TIMESTAMPADD(MINUTE, 5, NOW()), DATE_ADD(NOW(), INTERVAL '1:30' HOUR_MINUTE),"
    " DATE_ADD(NOW(), INTERVAL 1 YEAR_MONTH), ADDDATE(NOW(), 1), SUBDATE(NOW(), INTERVAL 1 WEEK)",
    "SELECT EXTRACT(YEAR FROM created_at), TRIM(LEADING 'x' FROM name),"
    " POSITION('a' IN name), SUBSTRING(name FROM 2 FOR 3) FROM users",
    "SELECT CAST(total AS CHAR), CAST('12' AS UNSIGNED), CONVERT(name, CHAR(10)),"
    " CONVERT('x' USING utf8mb4) FROM orders JOIN users ON users.id = orders.user_id",
    "SELECT CAST(score AS DECIMAL(10, 2)), CAST(score AS SIGNED INTEGER) FROM users",
    "SELECT CAST(name AS CHAR CHARACTER SET utf8mb4), CAST(name AS CHARACTER(5)) FROM users",
    "SELECT CAST('2024-01-01' AS DATETIME(6)), CAST('2024-01-01' AS DATE), CONVERT('1', DATE)",
    "SELECT CHAR(65 USING utf8mb4), CHAR(65, 66)",
    "SELECT CASE WHEN total > 100 THEN 'big' WHEN total > 10 THEN 'mid' ELSE 'small' END"
    " FROM orders",
    "SELECT CASE status WHEN 'new' THEN 1 ELSE 0 END AS is_new FROM orders",
    "SELECT COALESCE(email, name, 'none'), IFNULL(email, ''), IF(score > 0, 'pos', 'neg'),"
    " NULLIF(score, 0) FROM users",
    "SELECT SUBSTRING(name, 1, 3), SUBSTR(name, 2), MID(name, 1, 2), LEFT(name, 2),"
    " CONCAT(name, '-', id), CONCAT_WS(',', name, email) FROM users",
    "SELECT CHAR_LENGTH(name), CHARACTER_LENGTH(name), LENGTH(name), UPPER(name) FROM users",
    "SELECT ROUND(total, 2), FLOOR(total), CEIL(total), ABS(-total), GREATEST(1, 2),"
    " LEAST(3, 4) FROM orders",
    "SELECT STD(score), STDDEV(score), STDDEV_POP(score), STDDEV_SAMP(score), VARIANCE(score),"
    " VAR_POP(score), VAR_SAMP(score), BIT_AND(score), BIT_OR(score) FROM users",
    "SELECT JSON_EXTRACT(j, '$.a'), JSON_VALUE(j, '$.b[0]') FROM docs"
    " WHERE JSON_CONTAINS(j, '1', '$.a')",
    "SELECT * FROM docs WHERE MATCH(body) AGAINST ('hello' IN BOOLEAN MODE)",
    "SELECT * FROM docs WHERE MATCH(body) AGAINST ('hello' WITH QUERY EXPANSION)",
    "SELECT double_it(21), app.double_it(2)",
    "SELECT HEX(flags), BIN(3), OCT(8) FROM users",
    "SELECT ST_AsText(ST_GeomFromText('POINT(1 1)'))",
    "SELECT UUID() IS NOT NULL, RAND(1) < 2",
    "SELECT CONVERT_TZ(NOW(), '+00:00', 'SYSTEM'), GET_FORMAT(DATE, 'USA'), WEIGHT_STRING('a')",
    "SELECT name COLLATE utf8mb4_bin FROM users",
    "SELECT name FROM users WHERE name = BINARY 'alice'",
    # Operators, unary minus, negative numbers.
    "SELECT -total, - total, -1, - 1, 5 - -3, 5-3 FROM orders",
    "SELECT - -1, +1, ~1, !1, -(1), 1--1",
    "SELECT * FROM orders WHERE total > -5.5 AND total < +100",
    "SELECT 1 + 2 * 3 / 4 % 5 DIV 2, 7 MOD 2",
    "SELECT score & 1, score | 2, score ^ 3, ~score, score << 1, score >> 1 FROM users",
    "SELECT 1 = 1, 'a' = 'a', 1 IN (1) = TRUE",
    "SELECT * FROM users WHERE id != 1",
    "SELECT * FROM users WHERE id <> 1",
    "SELECT * FROM users WHERE id <=> NULL",
    "SELECT * FROM users WHERE id >= 1 AND id <= 5 AND score < 9 AND score > -9",
    "SELECT * FROM users WHERE status = 'a' AND (score > 1 OR score < -1)",
    "SELECT * FROM users WHERE NOT (id = 1) AND !(score = 2)",
    "SELECT * FROM users WHERE id = 1 && score = 2 || score IS NULL",
    "SELECT * FROM users WHERE id = 1 XOR score = 2",
    "SELECT * FROM users WHERE id = (1)",
    "SELECT * FROM users WHERE ((id = 1))",
    # Literals: numbers, hex, bit, strings with escapes, introducers, NULL, TRUE and FALSE.
    "SELECT 1e3, 1.5e-3, .5, 3., 1.0",
    "SELECT 1E3, 1.E3, .5e3, 0x0a",
    "SELECT * FROM users WHERE score = 1.0",
    "SELECT 0xFF, x'4142', X'4142', b'0101', 0b11, B'1'",
    "SELECT * FROM users WHERE id = 0x01",
    "SELECT 'it''s', 'it\\'s', \"dq\", 'back\\\\slash', ''",
    'SELECT "it""s", \'a\\\\\'',
    "SELECT 'a' 'b', 'c'",
    "SELECT _utf8mb4'x', N'y', _latin1'z', _binary'w'",
    "SELECT _binary 0x41, _utf8mb4 X'41', _latin1 b'1', _binary'x' 'y'",
    "SELECT 'x' COLLATE utf8mb4_bin, _utf8mb4 'y' COLLATE utf8mb4_general_ci",
    "SELECT * FROM users WHERE name = _utf8mb4 'x' COLLATE utf8mb4_bin",
    "SELECT * FROM users WHERE name = 'José' OR name = '日本'",
    "SELECT * FROM users WHERE created_at > TIMESTAMP '2024-01-01 00:00:00'"
    " OR created_at > DATE '2024-01-01'",
    "SELECT name AS \"alias\", name AS 'alias2', name alias3 FROM users",
    "SELECT NULL, TRUE, FALSE",
    "SELECT * FROM users WHERE email IS NULL AND name IS NOT NULL",
    "SELECT * FROM users WHERE (status = 'x') IS TRUE OR (score = 1) IS NOT FALSE",
    # Keywords used as names.
    "SELECT fields, replica, replicas, io_thread, relay_thread, sql_tsi_day, session_user, mid,"
    " substr, std, variance FROM kw",
    "SELECT `fields`, `replica`, `session_user` FROM kw",
    "SELECT some FROM kw",
    "SELECT * FROM replica",
    # User and system variables.
    "SET @uid = 5",
    "SELECT * FROM users WHERE id = @uid",
    "SELECT * FROM users WHERE id IN (@uid, 1)",
    "SELECT * FROM users WHERE id IN (1, @uid)",
    "SET @a = 1, @b = 'x'",
    "SET @a = @b",
    "SET @x := NULL",
    "SELECT @rownum := 0",
    "SELECT id, name INTO @a, @b FROM users LIMIT 1",
    "SELECT @a, @b, @a + 1, -@a",
    "SELECT 1, @a",
    "SELECT @a, 1",
    "SELECT 1, @a, 2",
    "SELECT @@version, @@session.sql_mode, @@GLOBAL.max_connections, @@autocommit",
    "SET @@session.autocommit = 1",
    # Comments of every kind, executable comments, hints.
    "SELECT /* block comment */ id FROM users",
    "SELECT id FROM users -- line comment",
    "SELECT id FROM users # hash comment",
    "/* leading comment */ SELECT 1",
    "SELECT id\n/* comment line */\nFROM users\n-- another\nWHERE id = 1",
    "SELECT 1 -- comment\n, 2",
    "SELECT/**/1",
    "SELECT /*+ NO_RANGE_OPTIMIZATION(users) */ id FROM users",
    "SELECT /*!40001 SQL_NO_CACHE */ id FROM users",
    "SELECT /*!50000 DISTINCT */ status FROM users",
    "SELECT /*M!100100 1, */ 2",
    "SELECT /*!99999 1, */ 2",
    "SELECT SQL_NO_CACHE id FROM users",
    "SELECT HIGH_PRIORITY SQL_SMALL_RESULT id FROM users",
    "SELECT * FROM users FORCE INDEX (PRIMARY) WHERE id > 1",
    "SELECT * FROM users USE INDEX (idx_status) WHERE status = 'new'",
    "SELECT * FROM users IGNORE INDEX (idx_name) WHERE name > 'a'",
    # Set operations, CTEs, window functions, table value constructors.
    "SELECT id FROM users WHERE id = 1 UNION SELECT id FROM users WHERE id = 2",
    "SELECT id FROM users WHERE id = 1 UNION DISTINCT SELECT id FROM users WHERE id = 2",
    "SELECT id FROM users UNION ALL SELECT user_id FROM orders",
    "SELECT id FROM users WHERE id = 1 UNION ALL SELECT id FROM users WHERE id = 2"
    " UNION ALL SELECT id FROM users WHERE id = 3",
    "(SELECT id FROM users ORDER BY id LIMIT 1) UNION (SELECT user_id FROM orders LIMIT 2)",
    "SELECT id FROM users INTERSECT SELECT user_id FROM orders",
    "SELECT id FROM users EXCEPT SELECT user_id FROM orders",
    "WITH recent AS (SELECT * FROM orders WHERE total > 10)"
    " SELECT user_id, COUNT(*) FROM recent GROUP BY user_id",
    "WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 5)"
    " SELECT * FROM seq",
    "SELECT id, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY total DESC) FROM orders",
    "SELECT id, SUM(total) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM orders",
    "SELECT id, SUM(total) OVER (PARTITION BY user_id ORDER BY created_at"
    " RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM orders",
    "SELECT id, RANK() OVER w, LAG(total, 1) OVER w FROM orders WINDOW w AS (ORDER BY total)",
    "VALUES (1, 2), (3, 4)",
    "SELECT * FROM (VALUES (1), (2)) AS v",
    # Locking reads.
    "SELECT * FROM users WHERE id = 1 FOR UPDATE",
    "SELECT * FROM users WHERE id = 1 LOCK IN SHARE MODE",
    "SELECT * FROM users WHERE id = 1 FOR UPDATE NOWAIT",
    "SELECT * FROM users WHERE id = 1 FOR UPDATE SKIP LOCKED",
    "SELECT * FROM users WHERE id = 1 FOR UPDATE WAIT 5",
    # INSERT, REPLACE, UPDATE, DELETE.
    "INSERT INTO app2.audit (msg) VALUES ('one')",
    "INSERT INTO app2.audit (msg) VALUES ('a'), ('b'), ('c')",
    "INSERT INTO app2.audit (msg) VALUES (-1), (-2)",
    "INSERT INTO app2.audit (msg) VALUE ('value form')",
    "INSERT INTO app2.audit SET msg = 'set form'",
    "INSERT INTO app2.audit VALUES (NULL, 'n')",
    "INSERT INTO app2.audit (id, msg) VALUES (DEFAULT, CONCAT('x', 1))",
    "INSERT INTO app2.audit (id, msg) VALUES (NULL, 'x'), (NULL, NOW())",
    "INSERT INTO app2.audit (msg) VALUES (NOW()), ('y')",
    "INSERT INTO app2.audit (msg) VALUES (DEFAULT)",
    "INSERT INTO app2.audit () VALUES ()",
    "INSERT INTO app2.audit (msg) VALUES (@a), (@b)",
    "INSERT INTO app2.audit (id, msg) VALUES (@a, 'x')",
    "INSERT LOW_PRIORITY INTO app2.audit (msg) VALUES ('lp')",
    "INSERT INTO app2.audit (msg) VALUES ('r') RETURNING id, msg",
    "INSERT INTO counters (name, n) VALUES ('hits', 1) ON DUPLICATE KEY UPDATE n = n + 1",
    "INSERT INTO counters (name, n) VALUES ('a', 1), ('b', 2) ON DUPLICATE KEY UPDATE"
    " n = VALUES(n)",
    "INSERT INTO counters (name, n) VALUES ('q', 1) ON DUPLICATE KEY UPDATE n = VALUE(n)",
    "INSERT INTO counters (name, n) SELECT 'z', 1 ON DUPLICATE KEY UPDATE n = n + 1",
    "INSERT IGNORE INTO counters VALUES ('a', 9)",
    "INSERT INTO counters (name, n) SELECT CONCAT('u', id), score FROM users WHERE id < 3",
    "INSERT INTO users (name, email, status, score, created_at)"
    " VALUES ('dave', NULL, 'new', -1, NOW())",
    "REPLACE INTO counters (name, n) VALUES ('c', 3)",
    "REPLACE INTO counters SET name = 'd', n = 4",
    "REPLACE INTO counters VALUES ('e', 5), ('f', 6)",
    "REPLACE INTO counters (name, n) SELECT 'w', 2",
    "UPDATE users SET score = score + 1 WHERE id = 1",
    "UPDATE users SET email = NULL, score = DEFAULT WHERE id = 3",
    "UPDATE users u JOIN orders o ON o.user_id = u.id SET u.score = u.score + 1"
    " WHERE o.status = 'paid'",
    "UPDATE users SET status = 'x' WHERE id IN (1, 2) ORDER BY id LIMIT 1",
    "UPDATE users SET score = score + 1 ORDER BY id DESC LIMIT 2",
    "UPDATE users SET name = CONCAT(name, '') WHERE id BETWEEN 1 AND 2",
    "UPDATE LOW_PRIORITY IGNORE users SET score = -score WHERE id = 2",
    "DELETE FROM app2.audit WHERE id > 100 LIMIT 10",
    "DELETE FROM app2.audit ORDER BY id DESC LIMIT 1",
    "DELETE a FROM app2.audit a JOIN users u ON u.name = a.msg WHERE u.id = 999",
    "DELETE FROM a USING app2.audit AS a JOIN users u ON u.name = a.msg WHERE u.id < 0",
    "DELETE QUICK IGNORE FROM app2.audit WHERE id < 0",
    "DELETE FROM app2.audit WHERE msg = 'r' RETURNING id",
    "DELETE FROM counters WHERE name IN ('a', 'b') AND n >= 0",
    # Session settings.
    "SET NAMES utf8mb4",
    "SET NAMES 'utf8mb4'",
    "SET NAMES utf8mb4 COLLATE utf8mb4_general_ci",
    "SET CHARACTER SET utf8mb4",
    "SET SESSION sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'",
    "SET @@SESSION.sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'",
    "SET autocommit = 1",
    "SET time_zone = '+00:00'",
    "SET SESSION wait_timeout = 600, SESSION interactive_timeout = 600",
    "SET GLOBAL max_connections = 151",
    "SET STATEMENT max_statement_time = 10 FOR SELECT COUNT(*) FROM users",
    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    "SET TRANSACTION READ ONLY",
    # Transactions.
    "BEGIN",
    "UPDATE counters SET n = n + 1 WHERE name = 'c'",
    "COMMIT",
    "START TRANSACTION",
    "SELECT n FROM counters WHERE name = 'c' FOR UPDATE",
    "ROLLBACK",
    "START TRANSACTION READ ONLY",
    "COMMIT",
    "BEGIN WORK",
    "SAVEPOINT sp1",
    "ROLLBACK TO SAVEPOINT sp1",
    "RELEASE SAVEPOINT sp1",
    "COMMIT WORK",
    # Procedures, prepared statements, DO.
    "CALL refresh(1)",
    "CALL app.refresh(2)",
    "CALL refresh(@a)",
    "CALL app.refresh",
    "PREPARE stmt FROM 'SELECT * FROM users WHERE id = ?'",
    "EXECUTE stmt USING @uid",
    "DEALLOCATE PREPARE stmt",
    "DO 1",
    "DO SLEEP(0)",
    # SHOW, EXPLAIN, administration and DDL.
    "SHOW TABLES",
    "SHOW TABLES LIKE 'us%'",
    "SHOW FULL TABLES FROM app2",
    "SHOW DATABASES",
    "SHOW SCHEMAS",
    "SHOW SCHEMAS LIKE 'app%'",
    "SHOW VARIABLES LIKE 'max_conn%'",
    "SHOW GLOBAL STATUS LIKE 'Threads%'",
    "SHOW STATUS LIKE 'Com_select'",
    "SHOW SESSION VARIABLES WHERE Variable_name = 'autocommit'",
    "SHOW CREATE TABLE users",
    "SHOW CREATE PROCEDURE refresh",
    "SHOW INDEX FROM users",
    "SHOW INDEXES FROM users",
    "SHOW KEYS FROM users",
    "SHOW COLUMNS FROM users",
    "SHOW FULL COLUMNS FROM users",
    "SHOW FIELDS FROM users",
    "SHOW TABLE STATUS LIKE 'users'",
    "SHOW OPEN TABLES FROM app",
    "SHOW FULL PROCESSLIST",
    "SHOW WARNINGS",
    "SHOW ERRORS",
    "SHOW COUNT(*) WARNINGS",
    "SHOW ENGINE INNODB STATUS",
    "SHOW ENGINES",
    "SHOW STORAGE ENGINES",
    "SHOW PLUGINS",
    "SHOW TRIGGERS",
    "SHOW EVENTS",
    "SHOW PROCEDURE STATUS WHERE Db = 'app'",
    "SHOW FUNCTION STATUS LIKE 'double%'",
    "SHOW CHARACTER SET LIKE 'utf8%'",
    "SHOW CHARSET LIKE 'utf8%'",
    "SHOW COLLATION WHERE Charset = 'utf8mb4' AND Collation LIKE '%bin'",
    "SHOW PROFILES",
    "SHOW GRANTS",
    "SHOW GRANTS FOR CURRENT_USER",
    "SHOW REPLICA STATUS",
    "SHOW SLAVE STATUS",
    "SHOW ALL SLAVES STATUS",
    "SHOW MASTER STATUS",
    "SHOW BINLOG STATUS",
    "EXPLAIN SELECT * FROM users WHERE id = 1",
    "EXPLAIN EXTENDED SELECT * FROM users WHERE id = 1",
    "EXPLAIN PARTITIONS SELECT * FROM users WHERE id = 1",
    "EXPLAIN FORMAT=JSON SELECT * FROM users WHERE id = 1",
    "EXPLAIN UPDATE users SET score = 1 WHERE id = 1",
    "ANALYZE SELECT * FROM users WHERE id = 1",
    "ANALYZE FORMAT=JSON SELECT * FROM users WHERE id = 1",
    "DESCRIBE users",
    "DESCRIBE users name",
    "DESC users",
    "ANALYZE TABLE users",
    "CHECK TABLE users",
    "CHECKSUM TABLE users",
    "OPTIMIZE TABLE app2.audit",
    "LOCK TABLES users READ",
    "UNLOCK TABLES",
    "FLUSH TABLES",
    "FLUSH PRIVILEGES",
    "FLUSH STATUS",
    "KILL QUERY 999999",
    "CREATE USER 'probe'@'%' IDENTIFIED BY 'secret'",
    "GRANT SELECT ON app.* TO 'probe'@'%'",
    "SHOW GRANTS FOR 'probe'@'%'",
    "DROP USER 'probe'@'%'",
    "CREATE TEMPORARY TABLE tmp_ids (id INT PRIMARY KEY)",
    "INSERT INTO tmp_ids SELECT id FROM users",
    "DROP TEMPORARY TABLE tmp_ids",
    "CREATE INDEX idx_created ON orders (created_at)",
    "ALTER TABLE orders DROP INDEX idx_created",
    "CREATE VIEW v_active AS SELECT id, name FROM users WHERE status = 'active'",
    "SELECT * FROM v_active WHERE id > 0",
    "DROP VIEW v_active",
    "CREATE SEQUENCE seq1",
    "SELECT NEXTVAL(seq1), NEXT VALUE FOR seq1, LASTVAL(seq1), PREVIOUS VALUE FOR seq1",
    "SELECT SETVAL(seq1, 100)",
    "DROP SEQUENCE seq1",
    "CREATE TABLE t_copy LIKE users",
    "CREATE TABLE t_sel AS SELECT id, name FROM users WHERE id < 3",
    "ALTER TABLE t_copy ADD COLUMN extra INT DEFAULT 0 AFTER id, ADD INDEX idx_extra (extra)",
    "ALTER TABLE t_copy MODIFY extra BIGINT UNSIGNED NOT NULL DEFAULT 1",
    "RENAME TABLE t_sel TO t_sel2",
    "DROP TABLE IF EXISTS t_copy, t_sel2",
    "CREATE TABLE t_types (id INTEGER PRIMARY KEY, a DEC(5, 2), b FLOAT4, c FLOAT8, d INT1,"
    " e INT8, f MIDDLEINT, g VARCHARACTER(5), h CHARACTER VARYING(5),"
    " i VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',"
    " KEY k_i (i(5)))",
    "DROP TABLE t_types",
    "TRUNCATE TABLE app2.audit",
    "USE app2",
    "SELECT COUNT(*) FROM audit",
    "USE app",
    # A statement the server refuses, and a trailing semicolon.
    "SELECT * FROM no_such_table WHERE id = 1",
    "SELECT * FROM users WHERE id = 1;",
)

# Statements with quoted names (issue 24), and the fingerprint each must get on every path.
QUOTED_CASES = statement_cases()

# Where the slow log does not hold the text that was sent.
SLOW_LOG_TEXT = {
    # MariaDB turns a versioned comment newer than itself into a plain one in what it logs.
    "SELECT /*!99999 1, */ 2": "SELECT /* 99999 1, */ 2",
    # The slow log writes the statement EXECUTE ran, with its values; performance_schema
    # digests the EXECUTE statement itself.
    "EXECUTE stmt USING @uid": "SELECT * FROM users WHERE id = 5",
}
# Statements whose two sources record different statements: no common fingerprint possible.
DIFFERENT_STATEMENTS = frozenset(("EXECUTE stmt USING @uid",))

# A digest of 64 bytes of tokens: long statements are cut, short ones fit.
TRUNCATING_ARGS = (
    *HISTORY_ARGS,
    "--max-digest-length=64",
    "--performance-schema-max-digest-length=64",
)
TRUNCATION_SETUP = (
    "CREATE TABLE test.users (id INT PRIMARY KEY, name VARCHAR(20), email VARCHAR(50),"
    " status VARCHAR(10), score INT, created_at DATETIME)",
    "CREATE TABLE test.orders (id INT PRIMARY KEY, user_id INT, total INT)",
)
FITS = (
    "SELECT * FROM users WHERE id = 1",
    "SELECT name FROM users WHERE id IN (1, 2, 3) ORDER BY name LIMIT 10",
    "INSERT INTO orders (id, user_id, total) VALUES (1, 1, 10), (2, 1, 20)",
)
# Each is cut; the first two only differ after the cut, so performance_schema merges them.
CUT = (
    "SELECT id, name, email, status, score, created_at FROM users WHERE id = 1 AND name = 'x'",
    "SELECT id, name, email, status, score, created_at FROM users WHERE score > 3",
    "SELECT * FROM users u JOIN orders o ON o.user_id = u.id JOIN orders o2 ON o2.user_id = u.id",
    "SELECT CONCAT(name, '-', id), CONCAT(name, '-', id), CONCAT(name, '-', id) FROM users",
)


@dataclass(frozen=True)
class Observed:
    """One statement as the client sent it and as both sources recorded it."""

    sent: str
    digest_text: str | None
    slow_text: str

    def mismatch(self) -> str | None:
        """Describe the disagreement between the two fingerprints, if any."""
        if self.digest_text is None:
            return f"no DIGEST_TEXT for {self.sent!r}"
        from_digest = fingerprint(self.digest_text)
        from_slow = fingerprint(self.slow_text)
        if from_digest == from_slow:
            return None
        return (
            f"sent:        {self.sent!r}\n"
            f"DIGEST_TEXT: {self.digest_text!r}\n"
            f"  -> {from_digest!r}\n"
            f"slow log:    {self.slow_text!r}\n"
            f"  -> {from_slow!r}"
        )


@dataclass(frozen=True)
class Session:
    """What identifies one connection's statements in each source, and what it sent."""

    connection_id: int  # the slow log's Thread_id
    thread_id: int  # performance_schema's THREAD_ID
    sent: list[str]


def run_statements(server: MariaDBServer, statements: Sequence[str], database: str) -> Session:
    """Run statements on one new connection and return what identifies them.

    A statement the server refuses is kept: both sources record it anyway.
    """
    conn = server.connect(database)
    with contextlib.closing(conn), conn.cursor() as cursor:
        # Asked while connected: performance_schema forgets a thread when it disconnects.
        cursor.execute(
            "SELECT PROCESSLIST_ID, THREAD_ID FROM performance_schema.threads"
            " WHERE PROCESSLIST_ID = CONNECTION_ID()"
        )
        connection_id, thread_id = cursor.fetchone() or (0, 0)
        for statement in statements:
            with contextlib.suppress(pymysql.err.MySQLError):
                cursor.execute(statement)
                cursor.fetchall()
    return Session(int(connection_id), int(thread_id), list(statements))


def digest_texts(control: Connection[Cursor], thread_id: int) -> list[tuple[str, str | None]]:
    """Return (SQL_TEXT, DIGEST_TEXT) of the top-level statements of one thread, in order."""
    with control.cursor() as cursor:
        cursor.execute(
            "SELECT SQL_TEXT, DIGEST_TEXT"
            " FROM performance_schema.events_statements_history_long"
            " WHERE THREAD_ID = %s"
            # Statements run inside a stored procedure nest under the CALL.
            " AND (NESTING_EVENT_TYPE IS NULL OR NESTING_EVENT_TYPE <> 'STATEMENT')"
            " ORDER BY EVENT_ID",
            (thread_id,),
        )
        # pymysql allows multi-statements, so 'SELECT 1;' is a SELECT and an empty statement
        # after the ';', which has no text.
        return [(text, digest) for text, digest in cursor.fetchall() if text is not None]


def slow_log_events(path: Path, connection_id: int, count: int) -> list[SlowLogEvent]:
    """Return the slow-log events of one connection, waiting until ``count`` are written."""
    deadline = time.monotonic() + SLOW_LOG_WAIT
    while True:
        with path.open("rb") as lines:
            events = [
                event
                for event in parse_slow_log(lines)
                if event.attributes.get("Thread_id") == connection_id
            ]
        if len(events) >= count or time.monotonic() > deadline:
            return events
        time.sleep(0.05)


def _at_least(rows: list[tuple[str, str | None]], count: int) -> list[tuple[str, str | None]]:
    return rows if len(rows) >= count else []


def observe(server: MariaDBServer, statements: Sequence[str], database: str) -> list[Observed]:
    """Run statements and pair each one's DIGEST_TEXT with its slow-log text."""
    session = run_statements(server, statements, database)
    expected = SESSION_PREAMBLE + len(statements)
    with contextlib.closing(server.connect()) as control:
        # The server records a statement's history row after answering its client, as it
        # writes the slow log: the last statement's row can still be on its way.
        history = wait_until(
            lambda: _at_least(digest_texts(control, session.thread_id), expected),
            SLOW_LOG_WAIT,
            f"{expected} statements in events_statements_history_long",
        )[SESSION_PREAMBLE:]
    events = slow_log_events(server.slow_log_path, session.connection_id, expected)[
        SESSION_PREAMBLE:
    ]
    # Pairing is by position: first make sure both sources hold exactly what was sent.
    assert [text for text, _ in history] == [s.rstrip(";") for s in statements]
    assert [event.query for event in events] == [
        SLOW_LOG_TEXT.get(s, s.rstrip(";")) for s in statements
    ]
    return [
        Observed(sent=sent, digest_text=digest, slow_text=event.query)
        for sent, (_, digest), event in zip(statements, history, events, strict=True)
    ]


@pytest.fixture(scope="module")
def own_server() -> Iterator[MariaDBServer]:
    """A MariaDB of this module's own, with SETUP run."""
    with started_mariadb(HISTORY_ARGS) as own:
        run_statements(own.server, SETUP, "test")
        yield own.server


@pytest.fixture(scope="module")
def observed(own_server: MariaDBServer) -> list[Observed]:
    """SHAPES as both sources of the module's MariaDB recorded them."""
    return observe(own_server, SHAPES, "app")


@pytest.fixture(scope="module")
def quoted_observed(own_server: MariaDBServer) -> list[Observed]:
    """The statements of quoted_names.txt as both sources recorded them."""
    return observe(own_server, [case.sql for case in QUOTED_CASES], "app")


@pytest.fixture(scope="module")
def truncated() -> Iterator[tuple[list[Observed], list[Observed]]]:
    """FITS and CUT as a MariaDB with a 64-byte digest recorded them."""
    own: OwnMariaDB
    with started_mariadb(TRUNCATING_ARGS) as own:
        run_statements(own.server, TRUNCATION_SETUP, "test")
        yield observe(own.server, FITS, "test"), observe(own.server, CUT, "test")


@services
def test_enough_statement_shapes(observed: list[Observed]) -> None:
    assert len(observed) == len(SHAPES) >= 300
    assert len({fingerprint(o.slow_text) for o in observed}) >= 250


@services
def test_digest_text_and_slow_log_text_have_one_fingerprint(observed: list[Observed]) -> None:
    compared = [o for o in observed if o.sent not in DIFFERENT_STATEMENTS]
    mismatches = [m for o in compared if (m := o.mismatch()) is not None]
    assert not mismatches, (
        f"{len(mismatches)} of {len(compared)} statements get two fingerprints:\n\n"
        + "\n\n".join(mismatches)
    )


@services
def test_one_query_id_per_statement(observed: list[Observed]) -> None:
    ids = {
        o.sent: (query_id(fingerprint(o.digest_text or "")), query_id(fingerprint(o.slow_text)))
        for o in observed
        if o.sent not in DIFFERENT_STATEMENTS
    }
    assert {sent: pair for sent, pair in ids.items() if pair[0] != pair[1]} == {}


def query_ids_by_path(o: Observed) -> dict[str, str]:
    """The query_id a statement gets on each path to the server."""
    agent = Fingerprinter()
    return {
        "slow-log events": query_id(fingerprint(o.slow_text)),
        "agent buckets": agent(fingerprint(o.slow_text))[1],  # the server fingerprints again
        "performance_schema": query_id(fingerprint(o.digest_text or "")),
    }


@services
def test_quoted_names_get_one_query_id_on_every_path(quoted_observed: list[Observed]) -> None:
    assert len(quoted_observed) == len(QUOTED_CASES) >= 35
    wrong = {
        o.sent: (o.digest_text, ids)
        for o, case in zip(quoted_observed, QUOTED_CASES, strict=True)
        if set((ids := query_ids_by_path(o)).values()) != {query_id(case.expected)}
    }
    assert wrong == {}


@services
def test_every_statement_keeps_its_query_id_on_the_agent_path(observed: list[Observed]) -> None:
    compared = [o for o in observed if o.sent not in DIFFERENT_STATEMENTS]
    split = {o.sent: ids for o in compared if len(set((ids := query_ids_by_path(o)).values())) > 1}
    assert split == {}


@services
def test_execute_is_digested_as_itself_and_logged_as_what_it_ran(
    observed: list[Observed],
) -> None:
    (execute,) = [o for o in observed if o.sent == "EXECUTE stmt USING @uid"]
    assert execute.digest_text == "EXECUTE `stmt` USING @? "
    assert fingerprint(execute.digest_text) == "execute stmt using @?"
    assert fingerprint(execute.slow_text) == "select * from users where id=?"


@services
def test_statements_that_fit_the_digest_still_agree(
    truncated: tuple[list[Observed], list[Observed]],
) -> None:
    fits, _ = truncated
    assert [o.mismatch() for o in fits] == [None] * len(FITS)


@services
def test_truncated_digest_text_is_fingerprinted_as_the_prefix_it_is(
    truncated: tuple[list[Observed], list[Observed]],
) -> None:
    _, cut = truncated
    # MariaDB cuts without a mark: the text ends after the last token that fitted.
    assert [o.digest_text for o in cut] == [
        "SELECT ID , NAME , `email` , STATUS , `score` , `created_at` FROM `users` WHERE ",
        "SELECT ID , NAME , `email` , STATUS , `score` , `created_at` FROM `users` WHERE ",
        "SELECT * FROM `users` `u` JOIN `orders` `o` ON `o` . `user_id` = `u` ",
        "SELECT `CONCAT` ( NAME , ? , ID ) , `CONCAT` ( NAME , ? , ID ) , `CONCAT` ",
    ]
    assert [fingerprint(o.digest_text or "") for o in cut] == [
        "select id, name, email, status, score, created_at from users where",
        "select id, name, email, status, score, created_at from users where",
        "select * from users u join orders o on o.user_id=u",
        "select concat(name, ?, id), concat(name, ?, id), concat",
    ]
    for o in cut:
        from_digest = fingerprint(o.digest_text or "")
        full = fingerprint(o.slow_text)
        # One query_id of its own, stable, that never passes for the complete statement.
        assert fingerprint(from_digest) == from_digest
        assert query_id(from_digest) != query_id(full)
        # The names and keywords it keeps are the beginning of the complete statement's.
        kept = re.findall(r"\w+", from_digest)
        assert re.findall(r"\w+", full)[: len(kept)] == kept
