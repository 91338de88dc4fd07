"""Which function calls an example may hold before it is sent to a monitored server.

EXPLAIN evaluates constant and deterministic expressions while optimising, so any call in
an example may run even when the statement is only explained. A call is accepted only when
its name is on :data:`ALLOWED_FUNCTIONS`: built-in functions of MySQL and MariaDB that read
their arguments and nothing else (string, numeric, date and time, JSON, aggregate, window,
cast and control-flow functions). Anything else may be a stored function or a UDF (which
can run any statement with the monitoring account's privileges) and is refused.
:data:`DENIED_FUNCTIONS` names built-ins that are refused on purpose, with the reason.

A built-in name resolves to the built-in only when ``(`` follows it directly and it is not
qualified by a database or quoted: ``COUNT (x)`` or ``db.concat(x)`` may call a stored
function of that name, so those forms are refused by the classifier.

Example:
    >>> "concat" in ALLOWED_FUNCTIONS, "sleep" in ALLOWED_FUNCTIONS
    (True, False)
"""

from __future__ import annotations

__all__ = [
    "ALLOWED_FUNCTIONS",
    "CAST_TYPES",
    "DENIED_FUNCTIONS",
    "PAREN_KEYWORDS",
    "SUBQUERY_QUANTIFIERS",
]


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STRING = _names("""
    ascii bin bit_length char char_length character_length charset coercibility collation
    concat concat_ws crc32 elt export_set field find_in_set format from_base64 hex insert
    instr lcase left length locate lower lpad ltrim make_set md5 mid octet_length oct ord
    position quote regexp_instr regexp_replace regexp_substr repeat replace reverse right
    rpad rtrim sha sha1 sha2 soundex space strcmp substr substring substring_index to_base64
    trim ucase unhex upper weight_string compress uncompress uncompressed_length
""")
_NUMERIC = _names("""
    abs acos asin atan atan2 ceil ceiling conv cos cot degrees exp floor greatest least ln
    log log10 log2 mod pi pow power radians rand round sign sin sqrt tan truncate bit_count
""")
_DATE_TIME = _names("""
    adddate addtime convert_tz curdate current_date current_time current_timestamp curtime
    date date_add date_format date_sub datediff day dayname dayofmonth dayofweek dayofyear
    extract from_days from_unixtime get_format hour last_day localtime localtimestamp
    makedate maketime microsecond minute month monthname now period_add period_diff quarter
    sec_to_time second str_to_date subdate subtime sysdate time time_format time_to_sec
    timediff timestamp timestampadd timestampdiff to_days to_seconds unix_timestamp utc_date
    utc_time utc_timestamp week weekday weekofyear year yearweek
""")
_JSON = _names("""
    json_array json_array_append json_array_insert json_contains json_contains_path
    json_depth json_extract json_insert json_keys json_length json_merge json_merge_patch
    json_merge_preserve json_object json_quote json_remove json_replace json_search json_set
    json_type json_unquote json_valid json_value json_arrayagg json_objectagg
""")
_AGGREGATE_WINDOW = _names("""
    avg bit_and bit_or bit_xor count group_concat max min std stddev stddev_pop stddev_samp
    sum var_pop var_samp variance
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value
    nth_value
""")
_CONTROL_CAST = _names("""
    if ifnull nullif coalesce isnull interval cast convert
""")
_MISC = _names("""
    inet_aton inet_ntoa inet6_aton inet6_ntoa is_ipv4 is_ipv6 is_ipv4_compat is_ipv4_mapped
    uuid database schema user current_user session_user system_user version connection_id
    found_rows row_count default values last_insert_id
    st_astext st_geomfromtext st_contains st_within st_intersects
    st_distance st_x st_y mbrcontains mbrwithin mbrintersects
""")
ALLOWED_FUNCTIONS = (
    _STRING | _NUMERIC | _DATE_TIME | _JSON | _AGGREGATE_WINDOW | _CONTROL_CAST | _MISC
)

_ERROR_CHANNEL = "shows the data it reads in its error message (any table, to a viewer)"
_LOCKS = "takes, tests or releases user locks"
_REPLICATION_WAIT = "waits for replication on purpose"
_SEQUENCE = "changes or reads a sequence's state"
DENIED_FUNCTIONS: dict[str, str] = {
    "extractvalue": _ERROR_CHANNEL,
    "updatexml": _ERROR_CHANNEL,
    "load_file": "reads files on the database host",
    "sleep": "waits on purpose",
    "benchmark": "burns CPU on purpose",
    "get_lock": _LOCKS,
    "release_lock": _LOCKS,
    "release_all_locks": _LOCKS,
    "is_free_lock": _LOCKS,
    "is_used_lock": _LOCKS,
    "master_pos_wait": _REPLICATION_WAIT,
    "source_pos_wait": _REPLICATION_WAIT,
    "master_gtid_wait": _REPLICATION_WAIT,
    "wait_for_executed_gtid_set": _REPLICATION_WAIT,
    "wait_until_sql_thread_after_gtids": _REPLICATION_WAIT,
    "nextval": _SEQUENCE,
    "lastval": _SEQUENCE,
    "setval": _SEQUENCE,
    "currval": _SEQUENCE,
}

# Quantifiers of a subquery, accepted before "(" only when a SELECT follows: ANY (SELECT ...).
SUBQUERY_QUANTIFIERS = frozenset(("any", "some"))
# Reserved words that may stand before "(" (with or without a space) without calling a
# function the server looks up by name: clauses, operators, subquery and row syntax, index
# hints, and built-ins that are reserved words. The server parses each through its grammar,
# so no stored function or UDF can be reached through one (checked on MariaDB 10.11, where
# non-reserved words such as ESCAPE, COLUMNS, AGAINST or SQL_NO_CACHE do call one). A name
# that is not here resolves to a built-in only when "(" follows it directly.
PAREN_KEYWORDS = _names("""
    select from where and or xor not in exists on using as join inner outer cross natural
    straight_join union all distinct distinctrow values row when then else case between
    like rlike regexp by having partition with index key update match binary
    if left right char insert replace mod div interval repeat convert database default
    current_date current_time current_timestamp current_user localtime localtimestamp
    utc_date utc_time utc_timestamp
""")
# Type names with a length, accepted before "(" only right after AS: CAST(x AS DECIMAL(9,2)).
CAST_TYPES = _names("""
    varbinary nchar varchar decimal dec numeric float double real int integer datetime
""")
