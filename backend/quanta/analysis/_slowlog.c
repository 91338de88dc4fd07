/*
 * The usual slow-log entry, read in C: most entries of a log have one of a few shapes.
 *
 * PlainReader(event_type, connections, read_connection, epoch_time, typed).scan(text,
 * position, limit, at_end, line, database) reads the entries that start at `position` and
 * before `limit` for as long as each has the usual shape of one of the flavours the parser
 * knows (MySQL 5.7 / 8.x with or without log_slow_extra, Percona Server with
 * log_slow_verbosity=full, MariaDB with query_plan,innodb,explain):
 *
 *     [# Time: YYYY-MM-DDTHH:MM:SS[.ffffff]Z  or  # Time: YYMMDD H:MM:SS[.f]]
 *     [# User@Host: ...]
 *     ['#' lines of "Key: value" pairs, '# explain:' lines, '#' lines without pairs]
 *     # Query_time: N.N  Lock_time: N.N Rows_sent: N  Rows_examined: N [Key: value ...]
 *     ['#' lines of "Key: value" pairs, '# explain:' lines, '#' lines without pairs]
 *     [use DB;]
 *     SET timestamp=N;
 *     statement lines  or  # administrator command: C;  (then the next entry at once)
 *
 * and builds the event quanta.analysis.slowlog's line-by-line parser builds: attributes
 * typed as slowlog._typed types them (the usual forms here, any other by calling `typed`),
 * Rows_affected and Schema as that parser takes them, the '# explain:' lines joined.
 * A pair line must have exactly the form _PAIR_RE reads the same way ("Key: value" pairs
 * separated by blanks, ASCII values): anything else is left to the Python reader.
 *
 * Each line ends in \n, the entry ends where a line starts with "# Time:", "# User@Host:"
 * or "# Query_time:" (or at the end of the text when `at_end`); the event is
 * `event_type(query, ts, query_time, lock_time, rows_sent, rows_examined, rows_affected,
 * database, user, host, line, attributes)`, with ts from `epoch_time(stamp)`, the database
 * carried over from `database`, each 'use' line and Schema pair, and user, host and the
 * first attributes from the `connections` cache of User@Host lines (filled by
 * `read_connection(line)` on a miss). It returns (events, count, end, line, database,
 * last_time): the events and the number of entries read, the offset and line number after
 * the last one, the database in effect, and the last '# Time:' value read (None if none;
 * the ISO value, or the whole line of the other form), for the caller's clock.
 *
 * scan(..., sink) builds no events: it appends each one's fields (slowlog.SINK_COLUMNS) to
 * the columns `sink.groups[literal_mask(query)]`, or those `sink.classify(query)` returns
 * for a statement the groups do not know, is not ASCII or is a percona-toolkit checksum
 * query (told by a comment the mask drops: fingerprinter.cache_key gives it no key). The
 * offline digest aggregates whole columns at once this way. A group is COLUMNS lists, then
 * optionally a dict of attribute columns: the numeric and Yes/No values of the entry's
 * header pairs are appended to its lists by attribute name. An entry with such attributes
 * whose group has no such dict is made an event instead, the last of the scan's events
 * (`count` counts it too). A group whose last element is a list instead of that dict (the
 * agent's minute folder) gets each entry's attributes appended to it, the dict the event
 * would have had (None when its header has none): a column aligned with the others, so an
 * entry with attributes needs no event. A `max_count` above 0 stops the scan after that
 * many entries.
 *
 * It stops at the first entry of any other shape, or that it is not sure of (anything the
 * expression could read differently, a '# Time:' that is not a valid date, an entry
 * without SET timestamp or whose timestamp is out of range, which need the caller's
 * clock), and leaves it to the Python reader: stopping early is always correct, so every
 * test that compares the block reader with the line-by-line parser checks this code too.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    PyObject *object;
    int kind;
    const void *data;
    Py_ssize_t size;
} Text;

static Py_UCS4 at(const Text *text, Py_ssize_t position) {
    return position < text->size ? PyUnicode_READ(text->kind, text->data, position) : 0;
}

static int starts_with(const Text *text, Py_ssize_t position, const char *prefix) {
    for (Py_ssize_t i = 0; prefix[i] != '\0'; i++) {
        if (position + i >= text->size ||
            PyUnicode_READ(text->kind, text->data, position + i) != (Py_UCS4)(unsigned char)prefix[i]) {
            return 0;
        }
    }
    return 1;
}

/* The offset of the next \n at or after `position`, or -1. */
static Py_ssize_t find_newline(const Text *text, Py_ssize_t position) {
    if (position >= text->size) {
        return -1;
    }
    if (text->kind == PyUnicode_1BYTE_KIND) {
        const char *start = (const char *)text->data;
        const char *found = memchr(start + position, '\n', (size_t)(text->size - position));
        return found == NULL ? -1 : found - start;
    }
    for (Py_ssize_t i = position; i < text->size; i++) {
        if (PyUnicode_READ(text->kind, text->data, i) == '\n') {
            return i;
        }
    }
    return -1;
}

static int is_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; }

/* \w on ASCII text. */
static int is_word_char(Py_UCS4 c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static Py_ssize_t skip_digits(const Text *text, Py_ssize_t position) {
    while (is_digit(at(text, position))) {
        position++;
    }
    return position;
}

/* [ \t]+ : the offset after the run, or -1 when there is none. */
static Py_ssize_t skip_blanks(const Text *text, Py_ssize_t position) {
    Py_ssize_t i = position;
    while (at(text, i) == ' ' || at(text, i) == '\t') {
        i++;
    }
    return i > position ? i : -1;
}

/* A span of the text: [start, end). */
typedef struct {
    Py_ssize_t start;
    Py_ssize_t end;
} Span;

static const Span NO_SPAN = {-1, -1};

/* [0-9]+ followed by `then` (a character, or 0 for none): the digits' span. */
static Span digits_then(const Text *text, Py_ssize_t position, Py_UCS4 then) {
    Py_ssize_t end = skip_digits(text, position);
    if (end == position || (then != 0 && at(text, end) != then)) {
        return NO_SPAN;
    }
    return (Span){position, end};
}

/* [0-9]+\.[0-9]+ */
static Span decimal(const Text *text, Py_ssize_t position) {
    Span whole = digits_then(text, position, '.');
    if (whole.start < 0) {
        return NO_SPAN;
    }
    Span fraction = digits_then(text, whole.end + 1, 0);
    return fraction.start < 0 ? NO_SPAN : (Span){position, fraction.end};
}

/* "[ \t]+NAME[ \t]+" before a value: the value's offset, or -1. */
static Py_ssize_t field(const Text *text, Py_ssize_t position, const char *name) {
    position = skip_blanks(text, position);
    if (position < 0 || !starts_with(text, position, name)) {
        return -1;
    }
    return skip_blanks(text, position + (Py_ssize_t)strlen(name));
}

/* A line that is blank up to its \n (or the end of the text): [^\S\n]*(\n|$) */
static int blank_line(const Text *text, Py_ssize_t position) {
    for (Py_ssize_t i = position; i < text->size; i++) {
        Py_UCS4 c = PyUnicode_READ(text->kind, text->data, i);
        if (c == '\n') {
            return 1;
        }
        if (!Py_UNICODE_ISSPACE(c)) {
            return 0;
        }
    }
    return 1;
}

/* Whether the line [position, end) contains ", Version: " (a server's start banner). */
static int has_version(const Text *text, Py_ssize_t position, Py_ssize_t end) {
    static const char marker[] = ", Version: ";
    Py_ssize_t last = end - (Py_ssize_t)(sizeof marker - 1);
    if (text->kind == PyUnicode_1BYTE_KIND) {
        const char *data = (const char *)text->data;
        for (Py_ssize_t i = position; i <= last; i++) {
            const char *comma = memchr(data + i, ',', (size_t)(last - i + 1));
            if (comma == NULL) {
                return 0;
            }
            i = comma - data;
            if (memcmp(comma, marker, sizeof marker - 1) == 0) {
                return 1;
            }
        }
        return 0;
    }
    for (Py_ssize_t i = position; i <= last; i++) {
        if (PyUnicode_READ(text->kind, text->data, i) == ',' && starts_with(text, i, marker)) {
            return 1;
        }
    }
    return 0;
}

typedef struct {
    Span iso;
    Span time_line; /* a MariaDB / old MySQL '# Time: YYMMDD H:MM:SS' line, without its \n */
    Span user_host;
    Span header;        /* the '#' lines from the first after User@Host to the meta lines */
    Span rows_affected; /* the value of a Rows_affected pair */
    Span schema;        /* the value of a Schema pair (NO_SPAN: none, or no value) */
    int has_schema;
    int explains;       /* '# explain:' lines */
    Span query_time;
    Span lock_time;
    Span rows_sent;
    Span rows_examined;
    Span use_line;
    Span stamp;
    Span query;
    Py_ssize_t lines;
    Py_ssize_t end;
} Entry;

/* The number written by `count` digits at `position`. */
static int number_at(const Text *text, Py_ssize_t position, int count) {
    int value = 0;
    for (int k = 0; k < count; k++) {
        value = value * 10 + (int)(at(text, position + k) - '0');
    }
    return value;
}

/* Whether a date and time are one datetime accepts. */
static int valid_date_time(int year, int month, int day, int hour, int minute, int second) {
    static const int month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > month_days[month - 1]) {
        return 0;
    }
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (month == 2 && day == 29 && !leap) {
        return 0;
    }
    return hour < 24 && minute < 60 && second < 60;
}

/* Whether YYYY-MM-DDTHH:MM:SS at `position` is a time datetime.fromisoformat accepts. */
static int valid_time(const Text *text, Py_ssize_t position) {
    return valid_date_time(number_at(text, position, 4), number_at(text, position + 5, 2),
                           number_at(text, position + 8, 2), number_at(text, position + 11, 2),
                           number_at(text, position + 14, 2), number_at(text, position + 17, 2));
}

/* "# Time: YYMMDD[ \t]+H:MM:SS[.f]" (MariaDB, MySQL before 5.7) with a valid time, then
 * blanks: the line's end, or -1 for any other form. */
static Py_ssize_t read_old_time(const Text *text, Py_ssize_t position, Entry *entry) {
    Py_ssize_t i = skip_blanks(text, position + 7), start = i;
    if (i < 0 || skip_digits(text, i) != i + 6) {
        return -1;
    }
    Py_ssize_t hour = skip_blanks(text, i + 6);
    if (hour < 0) {
        return -1;
    }
    Py_ssize_t colon = skip_digits(text, hour);
    if (colon == hour || colon - hour > 2 || at(text, colon) != ':' ||
        skip_digits(text, colon + 1) != colon + 3 || at(text, colon + 3) != ':' ||
        skip_digits(text, colon + 4) != colon + 6) {
        return -1;
    }
    if (!valid_date_time(2000 + number_at(text, i, 2), number_at(text, i + 2, 2),
                         number_at(text, i + 4, 2), number_at(text, hour, (int)(colon - hour)),
                         number_at(text, colon + 1, 2), number_at(text, colon + 4, 2))) {
        return -1;
    }
    i = colon + 6;
    if (at(text, i) == '.') {
        Py_ssize_t digits_end = skip_digits(text, i + 1);
        if (digits_end == i + 1 || digits_end - (i + 1) > 6) {
            return -1;
        }
        i = digits_end;
    }
    for (; i < text->size && at(text, i) != '\n'; i++) {
        if (at(text, i) != ' ' && at(text, i) != '\t') {
            return -1;
        }
    }
    if (i >= text->size || start < 0) {
        return -1;
    }
    entry->time_line = (Span){position, i};
    return i + 1;
}

/* "# Time: ISO Z" with a valid date: the line's end, or -1 for any other form. */
static Py_ssize_t read_iso_time(const Text *text, Py_ssize_t position, Entry *entry) {
    Py_ssize_t i = skip_blanks(text, position + 7);
    if (i < 0) {
        return -1;
    }
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    Py_ssize_t start = i;
    for (int k = 0; shape[k] != '\0'; k++, i++) {
        Py_UCS4 c = at(text, i);
        if (shape[k] == 'd' ? !is_digit(c) : c != (Py_UCS4)(unsigned char)shape[k]) {
            return -1;
        }
    }
    if (!valid_time(text, start)) {
        return -1;
    }
    if (at(text, i) == '.') {
        Py_ssize_t digits_end = skip_digits(text, i + 1);
        if (digits_end == i + 1 || digits_end - (i + 1) > 6) {
            return -1;
        }
        i = digits_end;
    }
    entry->iso = (Span){start, i};
    if (at(text, i) != 'Z') {
        return -1;
    }
    for (i++; i < text->size && at(text, i) != '\n'; i++) {
        if (!Py_UNICODE_ISSPACE(at(text, i))) {
            return -1;
        }
    }
    return i < text->size ? i + 1 : -1;
}

static int is_letter(Py_UCS4 c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static int span_is(const Text *text, Span span, const char *name) {
    return (Py_ssize_t)strlen(name) == span.end - span.start && starts_with(text, span.start, name);
}

/* The next "Key: value" pair of a header line from *position on, as slowlog._PAIR_RE's
 * findall reads it: 1 with its key and value (NO_SPAN: the key has none), 0 at the end of
 * the line (*position then after its \n), -1 where the expression could read the line
 * differently than this strict form (text between pairs, a value that is not ASCII or is
 * followed by other white space, no \n): such a line is left to the Python reader. */
static int next_pair(const Text *text, Py_ssize_t *position, Span *key, Span *value) {
    Py_ssize_t i = *position;
    while (at(text, i) == ' ' || at(text, i) == '\t') {
        i++;
    }
    if (at(text, i) == '\n') {
        *position = i + 1;
        return 0;
    }
    Py_ssize_t k = i;
    if (!is_letter(at(text, k))) {
        return -1;
    }
    while (is_word_char(at(text, k))) {
        k++;
    }
    if (at(text, k) != ':') {
        return -1;
    }
    *key = (Span){i, k};
    *value = NO_SPAN;
    i = k + 1;
    if (at(text, i) == '\n') {
        *position = i;
        return 1;
    }
    if (at(text, i) != ' ' && at(text, i) != '\t') {
        return -1;
    }
    while (at(text, i) == ' ' || at(text, i) == '\t') {
        i++;
    }
    if (at(text, i) == '\n') {
        *position = i;
        return 1;
    }
    /* (?![A-Za-z][A-Za-z0-9_]*:(?:\s|$)): the next key, the value-less key's neighbour */
    if (is_letter(at(text, i))) {
        Py_ssize_t e = i;
        while (is_word_char(at(text, e))) {
            e++;
        }
        if (at(text, e) == ':' && (e + 1 >= text->size || Py_UNICODE_ISSPACE(at(text, e + 1)))) {
            *position = i;
            return 1;
        }
    }
    Py_ssize_t e = i;
    while (e < text->size && at(text, e) > ' ' && at(text, e) < 127) {
        e++;
    }
    Py_UCS4 c = at(text, e);
    if (c != ' ' && c != '\t' && c != '\n') {
        return -1;
    }
    *value = (Span){i, e};
    *position = e;
    return 1;
}

/* Whether [position, the line's \n) holds no ':' (no pair: the line changes nothing). */
static int no_pairs(const Text *text, Py_ssize_t position) {
    for (Py_ssize_t i = position; i < text->size; i++) {
        Py_UCS4 c = at(text, i);
        if (c == '\n') {
            return 1;
        }
        if (c == ':') {
            return 0;
        }
    }
    return 0;
}

/* The pairs of a header line from `position` on, checked and their Rows_affected and Schema
 * noted: the next line's offset, or -1. The fields the Query_time line gives are refused
 * anywhere else (the line reader would take them from there). */
static Py_ssize_t check_pairs(const Text *text, Py_ssize_t position, Entry *entry) {
    Span key, value;
    int found;
    while ((found = next_pair(text, &position, &key, &value)) == 1) {
        if (span_is(text, key, "Query_time") || span_is(text, key, "Lock_time") ||
            span_is(text, key, "Rows_sent") || span_is(text, key, "Rows_examined")) {
            return -1;
        }
        if (span_is(text, key, "Rows_affected")) {
            if (value.start < 0 || digits_then(text, value.start, 0).end != value.end) {
                return -1;
            }
            entry->rows_affected = value;
        }
        else if (span_is(text, key, "Schema")) {
            entry->has_schema = 1;
            entry->schema = value;
        }
    }
    return found == 0 ? position : -1;
}

/* "# Query_time: N.N  Lock_time: N.N Rows_sent: N  Rows_examined: N" : the next line. */
static Py_ssize_t read_query_time(const Text *text, Py_ssize_t position, Entry *entry) {
    Py_ssize_t i = skip_blanks(text, position + 13);
    if (i < 0 || (entry->query_time = decimal(text, i)).start < 0) {
        return -1;
    }
    i = field(text, entry->query_time.end, "Lock_time:");
    if (i < 0 || (entry->lock_time = decimal(text, i)).start < 0) {
        return -1;
    }
    i = field(text, entry->lock_time.end, "Rows_sent:");
    if (i < 0 || (entry->rows_sent = digits_then(text, i, 0)).start < 0) {
        return -1;
    }
    i = field(text, entry->rows_sent.end, "Rows_examined:");
    if (i < 0 || (entry->rows_examined = digits_then(text, i, 0)).start < 0) {
        return -1;
    }
    return check_pairs(text, entry->rows_examined.end, entry);
}

/* "[use DB;\n]SET timestamp=N;\n": the offset after it, or -1. */
static Py_ssize_t read_meta(const Text *text, Py_ssize_t position, Entry *entry) {
    Py_ssize_t i = position;
    if (starts_with(text, i, "use ")) {
        Py_ssize_t newline = find_newline(text, i);
        if (newline < 0 || at(text, newline - 1) != ';') {
            return -1;
        }
        entry->use_line = (Span){i, newline};
        i = newline + 1;
    }
    if (!starts_with(text, i, "SET timestamp=")) {
        return -1; /* an entry without it takes its time from the caller's clock */
    }
    entry->stamp = digits_then(text, i + 14, ';');
    if (entry->stamp.start < 0 || at(text, entry->stamp.end + 1) != '\n') {
        return -1;
    }
    i = entry->stamp.end + 2;
    /* What the expression would still read as meta (or a blank first line): not plain. */
    if (starts_with(text, i, "use ") || starts_with(text, i, "SET timestamp=") ||
        starts_with(text, i, "SET insert_id=") || starts_with(text, i, "SET last_insert_id=") ||
        blank_line(text, i)) {
        return -1;
    }
    return i;
}

/* Whether a line starting at `position` begins the next entry: "# Time:", "# User@Host:" or
 * "# Query_time:". */
static int starts_entry(const Text *text, Py_ssize_t position) {
    return starts_with(text, position, "# Time:") || starts_with(text, position, "# User@Host:") ||
           starts_with(text, position, "# Query_time:");
}

/* [start, end) without the white space around it, then without the ';' the server appends
 * and the white space before that: the statement's span (empty when nothing is left). */
static Span statement_span(const Text *text, Py_ssize_t start, Py_ssize_t end) {
    while (start < end && Py_UNICODE_ISSPACE(at(text, start))) {
        start++;
    }
    while (end > start && Py_UNICODE_ISSPACE(at(text, end - 1))) {
        end--;
    }
    if (end > start && at(text, end - 1) == ';') {
        end--;
        while (end > start && Py_UNICODE_ISSPACE(at(text, end - 1))) {
            end--;
        }
    }
    return (Span){start, end};
}

/* "# administrator command: Quit;" (Ping, ...) where a statement would begin: the line
 * reader takes the line without its "# " as the statement. Only when the next entry begins
 * on the next line (or the text ends there): the entry's end, or -1. */
static Py_ssize_t read_admin_command(const Text *text, Py_ssize_t position, int at_end,
                                     Entry *entry) {
    Py_ssize_t newline = find_newline(text, position);
    if (newline < 0) {
        return -1;
    }
    Py_ssize_t next = newline + 1;
    if (next >= text->size ? !at_end : !starts_entry(text, next)) {
        return -1;
    }
    entry->query = statement_span(text, position + 2, newline);
    entry->lines++;
    return entry->query.end > entry->query.start ? next : -1;
}

/* The statement's lines up to the next entry: the entry's end, or -1. */
static Py_ssize_t read_body(const Text *text, Py_ssize_t position, int at_end, Entry *entry) {
    Py_ssize_t i = position;
    if (starts_with(text, i, "# administrator command:")) {
        return read_admin_command(text, position, at_end, entry);
    }
    for (;;) {
        if (i >= text->size) {
            if (!at_end || i == position) {
                return -1;
            }
            break;
        }
        if (at(text, i) == '#') {
            if (i == position || !starts_entry(text, i)) {
                return -1;
            }
            break;
        }
        if (starts_with(text, i, "Tcp") || starts_with(text, i, "TCP") ||
            starts_with(text, i, "Time")) {
            return -1;
        }
        Py_ssize_t newline = find_newline(text, i);
        if (newline < 0 || has_version(text, i, newline)) {
            return -1;
        }
        entry->lines++;
        i = newline + 1;
    }
    /* body.strip(), then without the ';' the server appends, then rstrip() again. */
    entry->query = statement_span(text, position, i);
    return entry->query.end > entry->query.start ? i : -1;
}

/* The '#' lines after User@Host up to the meta lines: pair lines, the Query_time line and
 * '# explain:' lines, each checked: the offset after them, or -1. */
static Py_ssize_t read_header(const Text *text, Py_ssize_t position, Entry *entry) {
    Py_ssize_t i = position;
    int query_time = 0;
    entry->header.start = i;
    while (at(text, i) == '#') {
        Py_ssize_t next;
        if (starts_with(text, i, "# Query_time:")) {
            if (query_time) {
                return -1; /* a second one begins another entry */
            }
            query_time = 1;
            next = read_query_time(text, i, entry);
        }
        else if (starts_with(text, i, "# explain:")) {
            next = find_newline(text, i);
            next = next < 0 ? -1 : next + 1;
            entry->explains++;
        }
        else if (starts_with(text, i, "# Time:") || starts_with(text, i, "# User@Host:") ||
                 starts_with(text, i, "# administrator command:") ||
                 starts_with(text, i, "# Warnings")) {
            return -1;
        }
        else if (no_pairs(text, i + 1)) {
            next = find_newline(text, i) + 1;
        }
        else {
            next = check_pairs(text, i + 1, entry);
        }
        if (next <= 0) {
            return -1;
        }
        entry->lines++;
        i = next;
    }
    entry->header.end = i;
    return query_time ? i : -1;
}

/* One entry of the usual shape at `position`: 1, or 0 when it has another shape. */
static int read_entry(const Text *text, Py_ssize_t position, int at_end, Entry *entry) {
    *entry = (Entry){NO_SPAN, NO_SPAN, NO_SPAN, NO_SPAN, NO_SPAN, NO_SPAN, 0, 0, NO_SPAN,
                     NO_SPAN, NO_SPAN, NO_SPAN, NO_SPAN, NO_SPAN, NO_SPAN, 0, -1};
    Py_ssize_t i = position;
    if (starts_with(text, i, "# Time:")) {
        Py_ssize_t iso = read_iso_time(text, i, entry);
        if ((i = iso >= 0 ? iso : read_old_time(text, i, entry)) < 0) {
            return 0;
        }
        if (iso < 0) {
            entry->iso = NO_SPAN;
        }
        entry->lines++;
    }
    if (starts_with(text, i, "# User@Host:")) {
        Py_ssize_t newline = find_newline(text, i);
        if (newline < 0) {
            return 0;
        }
        entry->user_host = (Span){i, newline + 1};
        entry->lines++;
        i = newline + 1;
    }
    if ((i = read_header(text, i, entry)) < 0) {
        return 0;
    }
    Py_ssize_t body = read_meta(text, i, entry);
    if (body < 0) {
        return 0;
    }
    entry->lines += 1 + (entry->use_line.start >= 0);
    entry->end = read_body(text, body, at_end, entry);
    return entry->end >= 0;
}

static PyObject *substring(const Text *text, Span span) {
    if (span.start < 0) {
        Py_RETURN_NONE;
    }
    return PyUnicode_Substring(text->object, span.start, span.end);
}

/* Digits (and a '.') of the text as a C string in `buffer`, or NULL if it is too long. */
static const char *ascii(const Text *text, Span span, char *buffer, size_t size) {
    Py_ssize_t length = span.end - span.start;
    if ((size_t)length >= size) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < length; i++) {
        buffer[i] = (char)at(text, span.start + i);
    }
    buffer[length] = '\0';
    return buffer;
}

/* float() of a [0-9]+\.[0-9]+ span, as Python's float(str) reads it. */
static PyObject *to_float(const Text *text, Span span) {
    /* Up to 15 digits the value is an exact integer over an exact power of ten, and IEEE
     * division rounds their quotient correctly: what float() gives, without its parser. */
    static const double powers_of_ten[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                           1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    if (span.end - span.start <= 16) {
        int64_t digits = 0;
        int decimals = -1;
        for (Py_ssize_t i = span.start; i < span.end; i++) {
            Py_UCS4 c = at(text, i);
            if (c == '.') {
                decimals = 0;
                continue;
            }
            digits = digits * 10 + (int64_t)(c - '0');
            decimals += decimals >= 0;
        }
        return PyFloat_FromDouble((double)digits / powers_of_ten[decimals]);
    }
    char buffer[128];
    const char *digits = ascii(text, span, buffer, sizeof buffer);
    if (digits == NULL) { /* absurdly long: let Python read it */
        PyObject *string = substring(text, span);
        PyObject *value = string == NULL ? NULL : PyFloat_FromString(string);
        Py_XDECREF(string);
        return value;
    }
    double value = PyOS_string_to_double(digits, NULL, NULL);
    return value == -1.0 && PyErr_Occurred() ? NULL : PyFloat_FromDouble(value);
}

/* int() of a [0-9]+ span. */
static PyObject *to_int(const Text *text, Span span) {
    if (span.end - span.start <= 18) { /* fits a long long: no string to parse */
        long long value = 0;
        for (Py_ssize_t i = span.start; i < span.end; i++) {
            value = value * 10 + (long long)(at(text, i) - '0');
        }
        return PyLong_FromLongLong(value);
    }
    char buffer[128];
    const char *digits = ascii(text, span, buffer, sizeof buffer);
    if (digits == NULL) {
        PyObject *string = substring(text, span);
        PyObject *value = string == NULL ? NULL : PyLong_FromUnicodeObject(string, 10);
        Py_XDECREF(string);
        return value;
    }
    return PyLong_FromString(digits, NULL, 10);
}

/* Whether the text of `span` equals the str `string`. */
static int span_equals(const Text *text, Span span, PyObject *string) {
    Py_ssize_t length = span.end - span.start;
    if (!PyUnicode_Check(string) || PyUnicode_GET_LENGTH(string) != length) {
        return 0;
    }
    int kind = PyUnicode_KIND(string);
    const void *data = PyUnicode_DATA(string);
    for (Py_ssize_t i = 0; i < length; i++) {
        if (PyUnicode_READ(kind, data, i) != at(text, span.start + i)) {
            return 0;
        }
    }
    return 1;
}

/* The database of a 'use' line, as slowlog._use_database reads it: the name's span. */
static Span use_database(const Text *text, Span line) {
    Py_ssize_t start = line.start + 4, end = line.end;
    while (end > start && Py_UNICODE_ISSPACE(at(text, end - 1))) {
        end--;
    }
    while (end > start && at(text, end - 1) == ';') {
        end--;
    }
    while (start < end && Py_UNICODE_ISSPACE(at(text, start))) {
        start++;
    }
    while (end > start && Py_UNICODE_ISSPACE(at(text, end - 1))) {
        end--;
    }
    while (start < end && at(text, start) == '`') {
        start++;
    }
    while (end > start && at(text, end - 1) == '`') {
        end--;
    }
    return (Span){start, end};
}

/* Attribute names remembered: the entries of a log name the same ones in the same order. */
#define KEYS 64

typedef struct {
    PyObject_HEAD
    PyObject *event_type;
    PyObject *connections;     /* {User@Host line: (user, host, attributes)} */
    PyObject *read_connection; /* line -> (user, host, attributes), caching it */
    PyObject *epoch_time;      /* SET timestamp value -> datetime, or None out of range */
    PyObject *typed;           /* (key, value) -> the attribute's value: slowlog._typed */
    PyObject *keys[KEYS];      /* the attribute names of the last entry, in order */
    PyObject *stamp;           /* the last value given to epoch_time, and its answer */
    PyObject *stamp_time;
} PlainReader;

/* quanta.analysis._literal_mask.literal_mask: a sink's groups are keyed by it. */
static PyObject *literal_mask;

/* The values an entry gives a sink's columns, in this order (SlowLogEvent's fields up to
 * host): query, ts, query_time, lock_time, rows_sent, rows_examined, rows_affected (None),
 * db, user, host. */
#define COLUMNS 10

static int ends_with(const Text *text, Span span, const char *suffix) {
    Py_ssize_t length = (Py_ssize_t)strlen(suffix);
    return span.end - span.start >= length && starts_with(text, span.end - length, suffix);
}

/* Whether a value holds only characters of slowlog's _INT_RE and _FLOAT_RE: [0-9.eE+-]. */
static int numeric_characters(const Text *text, Span span) {
    for (Py_ssize_t i = span.start; i < span.end; i++) {
        Py_UCS4 c = at(text, i);
        if (!is_digit(c) && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') {
            return 0;
        }
    }
    return 1;
}

static PyObject *flag(const Text *text, Span value) {
    if (span_is(text, value, "Yes") || span_is(text, value, "YES") || span_is(text, value, "yes")) {
        Py_RETURN_TRUE;
    }
    if (span_is(text, value, "No") || span_is(text, value, "NO") || span_is(text, value, "no")) {
        Py_RETURN_FALSE;
    }
    return NULL;
}

/* A header value typed as slowlog._typed types it (a new reference, NULL on error): the
 * usual forms here, any other by calling it. */
static PyObject *typed_value(PlainReader *self, const Text *text, Span key, Span value) {
    if (value.start < 0) {
        return PyUnicode_New(0, 0);
    }
    if (span_is(text, key, "InnoDB_trx_id") || span_is(text, key, "Log_slow_rate_type")) {
        return substring(text, value);
    }
    int is_decimal = decimal(text, value.start).end == value.end;
    if (ends_with(text, key, "_time") || ends_with(text, key, "_wait")) {
        if (is_decimal) {
            PyObject *seconds = to_float(text, value);
            if (seconds != NULL && (span_is(text, key, "Pages_read_time") ||
                                    span_is(text, key, "Engine_time"))) {
                Py_SETREF(seconds, PyFloat_FromDouble(PyFloat_AS_DOUBLE(seconds) / 1000));
            }
            return seconds;
        }
    }
    else {
        PyObject *yes_no = flag(text, value);
        if (yes_no != NULL) {
            return yes_no;
        }
        if (digits_then(text, value.start, 0).end == value.end) {
            return to_int(text, value);
        }
        if (is_decimal) {
            return to_float(text, value);
        }
    }
    if (!numeric_characters(text, value)) {
        return substring(text, value); /* no number _typed would read: the text */
    }
    PyObject *name = substring(text, key), *string = substring(text, value), *result = NULL;
    if (name != NULL && string != NULL) {
        result = PyObject_CallFunctionObjArgs(self->typed, name, string, NULL);
    }
    Py_XDECREF(name);
    Py_XDECREF(string);
    return result;
}

/* Where a header line's pairs begin (after the Query_time line's own fields), or -1 for a
 * line without pairs ('# explain:', no ':'). */
static Py_ssize_t pairs_start(const Text *text, Py_ssize_t line, const Entry *entry) {
    if (starts_with(text, line, "# Query_time:")) {
        return entry->rows_examined.end;
    }
    if (starts_with(text, line, "# explain:") || no_pairs(text, line + 1)) {
        return -1;
    }
    return line + 1;
}

/* The str of the attribute name `key`, the `ordinal`th of its entry (a new reference):
 * the same object as the last entry's, when it is the same name. */
static PyObject *attribute_name(PlainReader *self, const Text *text, Span key, int ordinal) {
    if (ordinal < KEYS && self->keys[ordinal] != NULL &&
        span_equals(text, key, self->keys[ordinal])) {
        return Py_NewRef(self->keys[ordinal]);
    }
    PyObject *name = substring(text, key);
    if (name != NULL && ordinal < KEYS) {
        Py_XSETREF(self->keys[ordinal], Py_NewRef(name));
    }
    return name;
}

/* Give each attribute of the entry's header lines (but the event's own fields) to `add`:
 * 0, or -1 on error. */
typedef int (*AttributeSink)(PyObject *target, PyObject *key, PyObject *value);

static int each_attribute(PlainReader *self, const Text *text, const Entry *entry,
                          AttributeSink add, PyObject *target) {
    Py_ssize_t line = entry->header.start;
    int ordinal = 0;
    while (line < entry->header.end) {
        Py_ssize_t next = find_newline(text, line) + 1, position = pairs_start(text, line, entry);
        Span key, value;
        while (position >= 0 && next_pair(text, &position, &key, &value) == 1) {
            if (span_is(text, key, "Rows_affected") || span_is(text, key, "Schema")) {
                continue;
            }
            PyObject *name = attribute_name(self, text, key, ordinal++);
            PyObject *typed = name == NULL ? NULL : typed_value(self, text, key, value);
            int status = typed == NULL ? -1 : add(target, name, typed);
            Py_XDECREF(name);
            Py_XDECREF(typed);
            if (status < 0) {
                return -1;
            }
        }
        line = next;
    }
    return 0;
}

/* The '# explain:' lines' text, each stripped, joined by \n (a new reference). */
static PyObject *explain_text(const Text *text, const Entry *entry) {
    PyObject *lines = PyList_New(0);
    if (lines == NULL) {
        return NULL;
    }
    for (Py_ssize_t line = entry->header.start; line < entry->header.end;
         line = find_newline(text, line) + 1) {
        if (!starts_with(text, line, "# explain:")) {
            continue;
        }
        Py_ssize_t start = line + 10, end = find_newline(text, line);
        while (start < end && Py_UNICODE_ISSPACE(at(text, start))) {
            start++;
        }
        while (end > start && Py_UNICODE_ISSPACE(at(text, end - 1))) {
            end--;
        }
        PyObject *part = PyUnicode_Substring(text->object, start, end);
        if (part == NULL || PyList_Append(lines, part) < 0) {
            Py_XDECREF(part);
            Py_DECREF(lines);
            return NULL;
        }
        Py_DECREF(part);
    }
    PyObject *separator = PyUnicode_FromString("\n");
    PyObject *joined = separator == NULL ? NULL : PyUnicode_Join(separator, lines);
    Py_XDECREF(separator);
    Py_DECREF(lines);
    return joined;
}

static int set_attribute(PyObject *attributes, PyObject *key, PyObject *value) {
    return PyDict_SetItem(attributes, key, value);
}

/* A sink's attribute columns take the numbers (and flags): the digest sums nothing else. */
static int append_attribute(PyObject *columns, PyObject *key, PyObject *value) {
    if (PyUnicode_Check(value)) {
        return 0;
    }
    PyObject *column = PyDict_GetItemWithError(columns, key); /* borrowed */
    if (column == NULL) {
        if (PyErr_Occurred()) {
            return -1;
        }
        column = PyList_New(0);
        int status = column == NULL ? -1 : PyDict_SetItem(columns, key, column);
        Py_XDECREF(column);
        if (status < 0) {
            return -1;
        }
    }
    return PyList_Check(column) ? PyList_Append(column, value) : -1;
}

/* Whether the entry's header gives attributes (beyond the event's own fields). */
static int has_attributes(const Text *text, const Entry *entry) {
    if (entry->explains > 0) {
        return 1;
    }
    for (Py_ssize_t line = entry->header.start; line < entry->header.end;
         line = find_newline(text, line) + 1) {
        Py_ssize_t position = pairs_start(text, line, entry);
        Span key, value;
        while (position >= 0 && next_pair(text, &position, &key, &value) == 1) {
            if (!span_is(text, key, "Rows_affected") && !span_is(text, key, "Schema")) {
                return 1;
            }
        }
    }
    return 0;
}

/* The attributes of an event: its connection's, then its header's, then 'explain'. */
static int add_attributes(PlainReader *self, const Text *text, const Entry *entry,
                          PyObject *attributes) {
    if (each_attribute(self, text, entry, set_attribute, attributes) < 0) {
        return -1;
    }
    if (entry->explains == 0) {
        return 0;
    }
    PyObject *explain = explain_text(text, entry);
    int status = explain == NULL ? -1 : PyDict_SetItemString(attributes, "explain", explain);
    Py_XDECREF(explain);
    return status;
}

/* The event time of a SET timestamp value (a new reference; None: out of range). */
static PyObject *stamp_time(PlainReader *self, const Text *text, Span span) {
    if (self->stamp == NULL || !span_equals(text, span, self->stamp)) {
        PyObject *stamp = substring(text, span);
        PyObject *time = stamp == NULL ? NULL : PyObject_CallOneArg(self->epoch_time, stamp);
        if (time == NULL) {
            Py_XDECREF(stamp);
            return NULL;
        }
        Py_XSETREF(self->stamp, stamp);
        Py_XSETREF(self->stamp_time, time);
    }
    return Py_NewRef(self->stamp_time);
}

/* The cached (user, host, attributes) of a User@Host line: a new reference, NULL on error. */
static PyObject *connection(PlainReader *self, const Text *text, Span line) {
    PyObject *key = substring(text, line);
    if (key == NULL) {
        return NULL;
    }
    PyObject *known = PyDict_GetItemWithError(self->connections, key); /* borrowed */
    if (known != NULL) {
        Py_INCREF(known);
    }
    else if (!PyErr_Occurred()) {
        known = PyObject_CallOneArg(self->read_connection, key);
    }
    Py_DECREF(key);
    if (known != NULL && (!PyTuple_Check(known) || PyTuple_GET_SIZE(known) != 3 ||
                          !PyDict_Check(PyTuple_GET_ITEM(known, 2)))) {
        PyErr_SetString(PyExc_TypeError, "read_connection must return (user, host, dict)");
        Py_CLEAR(known);
    }
    return known;
}

/* User and host of an entry (new references; None without a User@Host line), and its
 * connection tuple (a new reference, or NULL without one); -1 on error. */
static int user_and_host(PlainReader *self, const Text *text, const Entry *entry,
                         PyObject **user, PyObject **host, PyObject **known) {
    *known = NULL;
    if (entry->user_host.start < 0) {
        *user = Py_NewRef(Py_None);
        *host = Py_NewRef(Py_None);
        return 0;
    }
    if ((*known = connection(self, text, entry->user_host)) == NULL) {
        return -1;
    }
    *user = Py_NewRef(PyTuple_GET_ITEM(*known, 0));
    *host = Py_NewRef(PyTuple_GET_ITEM(*known, 1));
    return 0;
}

/* The SlowLogEvent fields of an entry but line and attributes, in order (new references,
 * NULL where one could not be made); -1 when none were made. */
static int event_fields(PlainReader *self, const Text *text, const Entry *entry, PyObject *ts,
                        PyObject *database, PyObject *fields[COLUMNS], PyObject **known) {
    PyObject *user, *host;
    if (user_and_host(self, text, entry, &user, &host, known) < 0) {
        return -1;
    }
    PyObject *values[COLUMNS] = {
        substring(text, entry->query), Py_NewRef(ts), to_float(text, entry->query_time),
        to_float(text, entry->lock_time), to_int(text, entry->rows_sent),
        to_int(text, entry->rows_examined),
        entry->rows_affected.start < 0 ? Py_NewRef(Py_None) : to_int(text, entry->rows_affected),
        Py_NewRef(database), user,
        host,
    };
    memcpy(fields, values, sizeof values);
    return 0;
}

static void release(PyObject **objects, int count) {
    for (int k = 0; k < count; k++) {
        Py_XDECREF(objects[k]);
    }
}

static int all_made(PyObject **objects, int count) {
    for (int k = 0; k < count; k++) {
        if (objects[k] == NULL) {
            return 0;
        }
    }
    return 1;
}

/* The event of a read entry (a new reference), given its time; NULL on error. */
static PyObject *make_event(PlainReader *self, const Text *text, const Entry *entry,
                            PyObject *ts, PyObject *database, Py_ssize_t line) {
    PyObject *args[COLUMNS + 2], *known;
    if (event_fields(self, text, entry, ts, database, args, &known) < 0) {
        return NULL;
    }
    args[COLUMNS] = PyLong_FromSsize_t(line);
    args[COLUMNS + 1] = known == NULL ? PyDict_New() : PyDict_Copy(PyTuple_GET_ITEM(known, 2));
    Py_XDECREF(known);
    if (args[COLUMNS + 1] != NULL && add_attributes(self, text, entry, args[COLUMNS + 1]) < 0) {
        Py_CLEAR(args[COLUMNS + 1]);
    }
    PyObject *event = NULL;
    if (all_made(args, COLUMNS + 2)) {
        event = PyObject_Vectorcall(self->event_type, args, COLUMNS + 2, NULL);
    }
    release(args, COLUMNS + 2);
    return event;
}

/* Whether an ASCII statement holds a percona-toolkit checksum comment,
 * fingerprint.PT_CHECKSUM_RE: /\*\w+\.\w+:[0-9]/[0-9]\*\/ */
static int has_checksum_comment(PyObject *query) {
    Text text = {query, PyUnicode_KIND(query), PyUnicode_DATA(query),
                 PyUnicode_GET_LENGTH(query)};
    for (Py_ssize_t i = 0; i + 1 < text.size; i++) {
        if (at(&text, i) != '/' || at(&text, i + 1) != '*') {
            continue;
        }
        Py_ssize_t j = i + 2, start = j;
        while (is_word_char(at(&text, j))) {
            j++;
        }
        if (j == start || at(&text, j) != '.') {
            continue;
        }
        start = ++j;
        while (is_word_char(at(&text, j))) {
            j++;
        }
        if (j > start && starts_with(&text, j, ":") && is_digit(at(&text, j + 1)) &&
            at(&text, j + 2) == '/' && is_digit(at(&text, j + 3)) &&
            starts_with(&text, j + 4, "*/")) {
            return 1;
        }
    }
    return 0;
}

/* The columns (COLUMNS lists, then optionally a dict of attribute columns) an entry's values go to: sink.groups[its literal
 * mask] (a borrowed reference), else sink.classify(query) (a new one, in *owned). */
static PyObject *group_of(PyObject *query, PyObject *groups, PyObject *classify,
                          PyObject **owned) {
    *owned = NULL;
    PyObject *key = PyObject_CallOneArg(literal_mask, query);
    if (key == NULL) {
        return NULL;
    }
    PyObject *group = NULL;
    /* No key (not ASCII) or a checksum query (decided by a comment the key drops): ask. */
    if (key != Py_None && !has_checksum_comment(query)) {
        group = PyDict_GetItemWithError(groups, key);
    }
    Py_DECREF(key);
    if (group == NULL && !PyErr_Occurred()) {
        group = *owned = PyObject_CallOneArg(classify, query);
    }
    if (group != NULL &&
        (!PyList_Check(group) ||
         (PyList_GET_SIZE(group) != COLUMNS &&
          (PyList_GET_SIZE(group) != COLUMNS + 1 ||
           (!PyDict_Check(PyList_GET_ITEM(group, COLUMNS)) &&
            !PyList_Check(PyList_GET_ITEM(group, COLUMNS))))))) {
        PyErr_SetString(PyExc_TypeError, "a sink's columns must be lists and a dict");
        Py_CLEAR(*owned);
        return NULL;
    }
    return group;
}

/* Append an entry's values to its group's columns: 0, 1 when the group has no attribute
 * columns and the entry has attributes (nothing appended: the entry becomes an event), -1
 * on error. */
static int add_to_columns(PlainReader *self, const Text *text, const Entry *entry,
                          PyObject *ts, PyObject *database, PyObject *groups,
                          PyObject *classify) {
    PyObject *fields[COLUMNS], *known;
    if (event_fields(self, text, entry, ts, database, fields, &known) < 0) {
        return -1;
    }
    int status = -1;
    PyObject *owned = NULL;
    PyObject *group = all_made(fields, COLUMNS)
                          ? group_of(fields[0], groups, classify, &owned)
                          : NULL;
    PyObject *extra = group != NULL && PyList_GET_SIZE(group) == COLUMNS + 1
                          ? PyList_GET_ITEM(group, COLUMNS)
                          : NULL;
    int with_attributes = extra != NULL && PyDict_Check(extra);
    int with_attribute_list = extra != NULL && PyList_Check(extra);
    if (group != NULL && extra == NULL && has_attributes(text, entry)) {
        status = 1; /* a sink without attribute columns: the caller yields this one */
    }
    else if (group != NULL) {
        status = 0;
        for (int k = 0; k < COLUMNS && status == 0; k++) {
            PyObject *column = PyList_GET_ITEM(group, k);
            status = PyList_Check(column) ? PyList_Append(column, fields[k]) : -1;
        }
        if (status == 0 && with_attributes) {
            status = each_attribute(self, text, entry, append_attribute, extra);
        }
        else if (status == 0 && with_attribute_list) {
            /* The event's attributes, as make_event gives them (None when its header has
             * none: a connection's alone, ip and Thread_id, are no metric). */
            PyObject *attributes = NULL;
            if (has_attributes(text, entry)) {
                attributes = known == NULL ? PyDict_New()
                                           : PyDict_Copy(PyTuple_GET_ITEM(known, 2));
                if (attributes != NULL && add_attributes(self, text, entry, attributes) < 0) {
                    Py_CLEAR(attributes);
                }
            }
            else {
                attributes = Py_NewRef(Py_None);
            }
            status = attributes == NULL ? -1 : PyList_Append(extra, attributes);
            Py_XDECREF(attributes);
        }
        if (status < 0 && !PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "a sink's columns must be a list of lists");
        }
    }
    Py_XDECREF(owned);
    Py_XDECREF(known);
    release(fields, COLUMNS);
    return status;
}

static PyObject *scan(PlainReader *self, PyObject *args) {
    PyObject *string, *database, *sink = Py_None, *groups = NULL, *classify = NULL;
    Py_ssize_t position, limit, line, max_count = 0;
    int at_end;
    if (!PyArg_ParseTuple(args, "UnnpnO|On:scan", &string, &position, &limit, &at_end, &line,
                          &database, &sink, &max_count)) {
        return NULL;
    }
    Text text = {string, PyUnicode_KIND(string), PyUnicode_DATA(string),
                 PyUnicode_GET_LENGTH(string)};
    if (position < 0 || limit > text.size) {
        PyErr_SetString(PyExc_ValueError, "position and limit must lie within the text");
        return NULL;
    }
    if (sink != Py_None) {
        groups = PyObject_GetAttrString(sink, "groups");
        classify = groups == NULL ? NULL : PyObject_GetAttrString(sink, "classify");
        if (classify == NULL || !PyDict_Check(groups)) {
            if (classify != NULL) {
                PyErr_SetString(PyExc_TypeError, "sink.groups must be a dict");
            }
            Py_XDECREF(groups);
            Py_XDECREF(classify);
            return NULL;
        }
    }
    PyObject *events = PyList_New(0);
    if (events == NULL) {
        Py_XDECREF(groups);
        Py_XDECREF(classify);
        return NULL;
    }
    Py_INCREF(database);
    Py_ssize_t count = 0;
    Span last_iso = NO_SPAN;
    Entry entry;
    while (position < limit && (max_count <= 0 || count < max_count) &&
           read_entry(&text, position, at_end, &entry)) {
        PyObject *ts = stamp_time(self, &text, entry.stamp);
        if (ts == NULL) {
            goto error;
        }
        if (ts == Py_None) { /* out of range: the event takes the caller's clock */
            Py_DECREF(ts);
            break;
        }
        if (entry.use_line.start >= 0) {
            /* A 'use' line naming no database changes nothing (slowlog._carry_database). */
            Span name = use_database(&text, entry.use_line);
            if (name.end > name.start && !span_equals(&text, name, database)) {
                PyObject *named = substring(&text, name);
                if (named == NULL) {
                    Py_DECREF(ts);
                    goto error;
                }
                Py_SETREF(database, named);
            }
            else if (name.end == name.start && entry.has_schema) {
                goto schema;
            }
        }
        else if (entry.has_schema) {
        schema:; /* the database of a 'Schema:' pair, as slowlog._carry_database takes it */
            if (entry.schema.start < 0) {
                Py_SETREF(database, Py_NewRef(Py_None));
            }
            else if (!span_equals(&text, entry.schema, database)) {
                PyObject *named = substring(&text, entry.schema);
                if (named == NULL) {
                    Py_DECREF(ts);
                    goto error;
                }
                Py_SETREF(database, named);
            }
        }
        int status = groups == NULL
                         ? 1
                         : add_to_columns(self, &text, &entry, ts, database, groups, classify);
        int declined = groups != NULL && status == 1;
        if (status == 1) { /* no sink, or one without attribute columns: an event */
            PyObject *event = make_event(self, &text, &entry, ts, database, line);
            status = event == NULL ? -1 : PyList_Append(events, event);
            Py_XDECREF(event);
        }
        Py_DECREF(ts);
        if (status < 0) {
            goto error;
        }
        count++;
        if (entry.iso.start >= 0) {
            last_iso = entry.iso;
        }
        else if (entry.time_line.start >= 0) {
            last_iso = entry.time_line;
        }
        line += entry.lines;
        position = entry.end;
        if (declined) {
            break; /* the event goes to the caller before the sink takes any later one */
        }
    }
    Py_XDECREF(groups);
    Py_XDECREF(classify);
    PyObject *iso = substring(&text, last_iso);
    if (iso == NULL) {
        Py_DECREF(events);
        Py_DECREF(database);
        return NULL;
    }
    return Py_BuildValue("(NnnnNN)", events, count, position, line, database, iso);
error:
    Py_XDECREF(groups);
    Py_XDECREF(classify);
    Py_DECREF(events);
    Py_DECREF(database);
    return NULL;
}

static int reader_init(PlainReader *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"event_type", "connections", "read_connection", "epoch_time",
                            "typed", NULL};
    PyObject *event_type, *connections, *read_connection, *epoch_time, *typed;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!OOO:PlainReader", names, &event_type,
                                     &PyDict_Type, &connections, &read_connection,
                                     &epoch_time, &typed)) {
        return -1;
    }
    Py_XSETREF(self->typed, Py_NewRef(typed));
    Py_XSETREF(self->event_type, Py_NewRef(event_type));
    Py_XSETREF(self->connections, Py_NewRef(connections));
    Py_XSETREF(self->read_connection, Py_NewRef(read_connection));
    Py_XSETREF(self->epoch_time, Py_NewRef(epoch_time));
    Py_CLEAR(self->stamp);
    Py_CLEAR(self->stamp_time);
    return 0;
}

static int reader_traverse(PlainReader *self, visitproc visit, void *arg) {
    Py_VISIT(self->event_type);
    Py_VISIT(self->connections);
    Py_VISIT(self->read_connection);
    Py_VISIT(self->epoch_time);
    Py_VISIT(self->typed);
    Py_VISIT(self->stamp);
    Py_VISIT(self->stamp_time);
    return 0;
}

static int reader_clear(PlainReader *self) {
    Py_CLEAR(self->event_type);
    Py_CLEAR(self->connections);
    Py_CLEAR(self->read_connection);
    Py_CLEAR(self->epoch_time);
    Py_CLEAR(self->typed);
    for (int k = 0; k < KEYS; k++) {
        Py_CLEAR(self->keys[k]);
    }
    Py_CLEAR(self->stamp);
    Py_CLEAR(self->stamp_time);
    return 0;
}

static void reader_dealloc(PlainReader *self) {
    PyObject_GC_UnTrack(self);
    reader_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef reader_methods[] = {
    {"scan", (PyCFunction)scan, METH_VARARGS,
     "scan(text, position, limit, at_end, line, database, sink=None, max_count=0)\n"
     "-> (events, count, end, line, database, last_iso)\n\n"
     "Read the usual entries from position on; see the module comment."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PlainReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "quanta.analysis._slowlog.PlainReader",
    .tp_basicsize = sizeof(PlainReader),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "PlainReader(event_type, connections, read_connection, epoch_time, typed)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)reader_init,
    .tp_dealloc = (destructor)reader_dealloc,
    .tp_traverse = (traverseproc)reader_traverse,
    .tp_clear = (inquiry)reader_clear,
    .tp_methods = reader_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "quanta.analysis._slowlog",
    "The usual slow-log entry (slowlog._ENTRY_RE's plain form) read in C.", -1, NULL, NULL,
    NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__slowlog(void) {
    if (PyType_Ready(&PlainReaderType) < 0) {
        return NULL;
    }
    if (literal_mask == NULL) {
        PyObject *masks = PyImport_ImportModule("quanta.analysis._literal_mask");
        literal_mask = masks == NULL ? NULL : PyObject_GetAttrString(masks, "literal_mask");
        Py_XDECREF(masks);
        if (literal_mask == NULL) {
            return NULL;
        }
    }
    PyObject *created = PyModule_Create(&module);
    if (created != NULL && PyModule_AddObjectRef(created, "PlainReader",
                                                 (PyObject *)&PlainReaderType) < 0) {
        Py_CLEAR(created);
    }
    return created;
}
