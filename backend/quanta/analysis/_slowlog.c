/*
 * The usual slow-log entry, read in C: most entries of a MySQL log have this one shape.
 *
 * PlainReader(event_type, connections, read_connection, epoch_time).scan(text, position,
 * limit, at_end, line, database) reads the entries that start at `position` and before
 * `limit` for as long as each has the shape that quanta.analysis.slowlog's _ENTRY_RE (or
 * _LAST_ENTRY_RE when `at_end`) matches with a plain Query_time line and plain meta lines,
 * the shape _Parser._read_whole_entry turns straight into an event:
 *
 *     [# Time: YYYY-MM-DDTHH:MM:SS[.ffffff]Z]
 *     [# User@Host: ...]
 *     # Query_time: N.N  Lock_time: N.N Rows_sent: N  Rows_examined: N
 *     [use DB;]
 *     SET timestamp=N;
 *     statement lines
 *
 * each line ending in \n, the entry ending where a line starts with "# Time:",
 * "# User@Host:" or "# Query_time:" (or at the end of the text when `at_end`), and builds the
 * event that method builds: `event_type(query, ts, query_time, lock_time, rows_sent,
 * rows_examined, None, database, user, host, line, attributes)`, with ts from
 * `epoch_time(stamp)`, the database carried over from `database` and each 'use' line,
 * and user, host and attributes from the `connections` cache of User@Host lines (filled by
 * `read_connection(line)` on a miss). It returns (events, end, line, database, last_iso):
 * the events, the offset and line number after the last one, the database in effect, and
 * the last '# Time:' value read (None if none), for the caller's clock.
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
    for (Py_ssize_t i = position; i <= last; i++) {
        if (PyUnicode_READ(text->kind, text->data, i) == ',' && starts_with(text, i, marker)) {
            return 1;
        }
    }
    return 0;
}

typedef struct {
    Span iso;
    Span user_host;
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

/* Whether YYYY-MM-DDTHH:MM:SS at `position` is a time datetime.fromisoformat accepts. */
static int valid_time(const Text *text, Py_ssize_t position) {
    static const int month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int year = number_at(text, position, 4), month = number_at(text, position + 5, 2);
    int day = number_at(text, position + 8, 2);
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > month_days[month - 1]) {
        return 0;
    }
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (month == 2 && day == 29 && !leap) {
        return 0;
    }
    return number_at(text, position + 11, 2) < 24 && number_at(text, position + 14, 2) < 60 &&
           number_at(text, position + 17, 2) < 60;
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
    i = entry->rows_examined.end;
    while (at(text, i) == ' ' || at(text, i) == '\t') {
        i++;
    }
    return at(text, i) == '\n' ? i + 1 : -1;
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

/* The statement's lines up to the next entry: the entry's end, or -1. */
static Py_ssize_t read_body(const Text *text, Py_ssize_t position, int at_end, Entry *entry) {
    Py_ssize_t i = position;
    for (;;) {
        if (i >= text->size) {
            if (!at_end || i == position) {
                return -1;
            }
            break;
        }
        if (at(text, i) == '#') {
            if (i == position || !(starts_with(text, i, "# Time:") ||
                                   starts_with(text, i, "# User@Host:") ||
                                   starts_with(text, i, "# Query_time:"))) {
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
    Py_ssize_t start = position, end = i;
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
    if (end == start) {
        return -1;
    }
    entry->query = (Span){start, end};
    return i;
}

/* One entry of the plain shape at `position`: 1, or 0 when it has another shape. */
static int read_entry(const Text *text, Py_ssize_t position, int at_end, Entry *entry) {
    *entry = (Entry){NO_SPAN, NO_SPAN, NO_SPAN, NO_SPAN, NO_SPAN, NO_SPAN, NO_SPAN, NO_SPAN,
                     NO_SPAN, 0, -1};
    Py_ssize_t i = position;
    if (starts_with(text, i, "# Time:")) {
        if ((i = read_iso_time(text, i, entry)) < 0) {
            return 0;
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
    if (!starts_with(text, i, "# Query_time:") || (i = read_query_time(text, i, entry)) < 0 ||
        at(text, i) == '#') { /* another header line: read with the general rules */
        return 0;
    }
    entry->lines++;
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

typedef struct {
    PyObject_HEAD
    PyObject *event_type;
    PyObject *connections;     /* {User@Host line: (user, host, attributes)} */
    PyObject *read_connection; /* line -> (user, host, attributes), caching it */
    PyObject *epoch_time;      /* SET timestamp value -> datetime, or None out of range */
    PyObject *stamp;           /* the last value given to epoch_time, and its answer */
    PyObject *stamp_time;
} PlainReader;

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

/* User, host and a copy of the attributes of a User@Host line; 0, or -1 on error. */
static int connection(PlainReader *self, const Text *text, Span line, PyObject **user,
                      PyObject **host, PyObject **attributes) {
    PyObject *key = substring(text, line);
    if (key == NULL) {
        return -1;
    }
    PyObject *known = PyDict_GetItemWithError(self->connections, key); /* borrowed */
    PyObject *owned = NULL;
    if (known == NULL && !PyErr_Occurred()) {
        known = owned = PyObject_CallOneArg(self->read_connection, key);
    }
    Py_DECREF(key);
    if (known == NULL) {
        return -1;
    }
    int status = -1;
    if (!PyTuple_Check(known) || PyTuple_GET_SIZE(known) != 3 ||
        !PyDict_Check(PyTuple_GET_ITEM(known, 2))) {
        PyErr_SetString(PyExc_TypeError, "read_connection must return (user, host, dict)");
    }
    else if ((*attributes = PyDict_Copy(PyTuple_GET_ITEM(known, 2))) != NULL) {
        *user = Py_NewRef(PyTuple_GET_ITEM(known, 0));
        *host = Py_NewRef(PyTuple_GET_ITEM(known, 1));
        status = 0;
    }
    Py_XDECREF(owned);
    return status;
}

/* The event of a read entry (a new reference), given its time; NULL on error. */
static PyObject *make_event(PlainReader *self, const Text *text, const Entry *entry,
                            PyObject *ts, PyObject *database, Py_ssize_t line) {
    PyObject *user = Py_None, *host = Py_None, *attributes;
    if (entry->user_host.start >= 0) {
        if (connection(self, text, entry->user_host, &user, &host, &attributes) < 0) {
            return NULL;
        }
    }
    else {
        attributes = PyDict_New();
        if (attributes == NULL) {
            return NULL;
        }
        Py_INCREF(user);
        Py_INCREF(host);
    }
    PyObject *args[12] = {
        substring(text, entry->query), Py_NewRef(ts), to_float(text, entry->query_time),
        to_float(text, entry->lock_time), to_int(text, entry->rows_sent),
        to_int(text, entry->rows_examined), Py_NewRef(Py_None), Py_NewRef(database), user,
        host, PyLong_FromSsize_t(line), attributes,
    };
    PyObject *event = NULL;
    int complete = 1;
    for (int k = 0; k < 12; k++) {
        complete &= args[k] != NULL;
    }
    if (complete) {
        event = PyObject_Vectorcall(self->event_type, args, 12, NULL);
    }
    for (int k = 0; k < 12; k++) {
        Py_XDECREF(args[k]);
    }
    return event;
}

static PyObject *scan(PlainReader *self, PyObject *args) {
    PyObject *string, *database;
    Py_ssize_t position, limit, line;
    int at_end;
    if (!PyArg_ParseTuple(args, "UnnpnO:scan", &string, &position, &limit, &at_end, &line,
                          &database)) {
        return NULL;
    }
    Text text = {string, PyUnicode_KIND(string), PyUnicode_DATA(string),
                 PyUnicode_GET_LENGTH(string)};
    if (position < 0 || limit > text.size) {
        PyErr_SetString(PyExc_ValueError, "position and limit must lie within the text");
        return NULL;
    }
    PyObject *events = PyList_New(0);
    if (events == NULL) {
        return NULL;
    }
    Py_INCREF(database);
    Span last_iso = NO_SPAN;
    Entry entry;
    while (position < limit && read_entry(&text, position, at_end, &entry)) {
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
        }
        PyObject *event = make_event(self, &text, &entry, ts, database, line);
        Py_DECREF(ts);
        if (event == NULL || PyList_Append(events, event) < 0) {
            Py_XDECREF(event);
            goto error;
        }
        Py_DECREF(event);
        if (entry.iso.start >= 0) {
            last_iso = entry.iso;
        }
        line += entry.lines;
        position = entry.end;
    }
    PyObject *iso = substring(&text, last_iso);
    if (iso == NULL) {
        goto error;
    }
    return Py_BuildValue("(NnnNN)", events, position, line, database, iso);
error:
    Py_DECREF(events);
    Py_DECREF(database);
    return NULL;
}

static int reader_init(PlainReader *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"event_type", "connections", "read_connection", "epoch_time", NULL};
    PyObject *event_type, *connections, *read_connection, *epoch_time;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!OO:PlainReader", names, &event_type,
                                     &PyDict_Type, &connections, &read_connection,
                                     &epoch_time)) {
        return -1;
    }
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
    Py_VISIT(self->stamp);
    Py_VISIT(self->stamp_time);
    return 0;
}

static int reader_clear(PlainReader *self) {
    Py_CLEAR(self->event_type);
    Py_CLEAR(self->connections);
    Py_CLEAR(self->read_connection);
    Py_CLEAR(self->epoch_time);
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
     "scan(text, position, limit, at_end, line, database)\n"
     "-> (events, end, line, database, last_iso)\n\n"
     "Read the usual entries from position on; see the module comment."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PlainReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "quanta.analysis._slowlog.PlainReader",
    .tp_basicsize = sizeof(PlainReader),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "PlainReader(event_type, connections, read_connection, epoch_time)",
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
    PyObject *created = PyModule_Create(&module);
    if (created != NULL && PyModule_AddObjectRef(created, "PlainReader",
                                                 (PyObject *)&PlainReaderType) < 0) {
        Py_CLEAR(created);
    }
    return created;
}
