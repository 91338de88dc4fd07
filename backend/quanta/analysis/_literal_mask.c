/*
 * The fingerprint cache key, in C: every statement of a log is masked before its cache lookup.
 *
 * literal_mask(sql) returns what quanta.analysis.fingerprinter's _MASK_RE.sub(_mask, sql)
 * returns, for a statement that is pure ASCII, and None for any other: the regular
 * expression stays the reference (and handles non-ASCII text, where \w, \s, \d and \b have
 * their Unicode meaning); tests compare the two on every fingerprint case and on random
 * statements. Each match_* function below is one alternative of that expression, written
 * as the deterministic scan its possessive quantifiers make it; a function returns the end
 * of its match or -1.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* Markers, as in fingerprinter._MARKERS. */
#define SINGLE_QUOTED '\x00'
#define DOUBLE_QUOTED '\x01'
#define ONE_NUMBER '\x02'
#define NUMBER_LIST '\x04'
#define MORE_ROWS '\x05'

typedef struct {
    const char *data;
    Py_ssize_t size;
} Text;

static int at(const Text *text, Py_ssize_t position) {
    return position < text->size ? (unsigned char)text->data[position] : -1;
}

/* \s on ASCII text, as Python's re reads it (str.isspace: \x1c-\x1f too). */
static int is_space(int c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }

/* \w on ASCII text. */
static int is_word(int c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static Py_ssize_t skip_spaces(const Text *text, Py_ssize_t position) {
    while (is_space(at(text, position))) {
        position++;
    }
    return position;
}

/* The offset of the first "*" "/" at or after `from`, or -1. */
static Py_ssize_t find_comment_end(const Text *text, Py_ssize_t from) {
    for (Py_ssize_t i = from; i + 1 < text->size; i++) {
        if (text->data[i] == '*' && text->data[i + 1] == '/') {
            return i + 2;
        }
    }
    return -1;
}

static Py_ssize_t line_end(const Text *text, Py_ssize_t position) {
    const char *newline = memchr(text->data + position, '\n', (size_t)(text->size - position));
    return newline == NULL ? text->size : newline - text->data;
}

/* '[^'\\]*+(?:(?:\\.|'')[^'\\]*+)*+' with `quote` for ' (or " for the double-quoted form). */
static Py_ssize_t match_string(const Text *text, Py_ssize_t position, char quote) {
    Py_ssize_t i = position + 1;
    for (;;) {
        while (i < text->size && text->data[i] != quote && text->data[i] != '\\') {
            i++;
        }
        if (i >= text->size) {
            return -1;
        }
        if (text->data[i] == '\\') {
            if (i + 1 >= text->size) {
                return -1;
            }
            i += 2;
        }
        else if (at(text, i + 1) == quote) {
            i += 2; /* a doubled quote: the possessive loop keeps it */
        }
        else {
            return i + 1;
        }
    }
}

/* (?![\w$.]) */
static int number_may_end(const Text *text, Py_ssize_t position) {
    int c = at(text, position);
    return !(is_word(c) || c == '$' || c == '.');
}

/* (?:[eE][+-]?\d++)?+ */
static Py_ssize_t skip_exponent(const Text *text, Py_ssize_t position) {
    int c = at(text, position);
    if (c != 'e' && c != 'E') {
        return position;
    }
    Py_ssize_t i = position + 1;
    if (at(text, i) == '+' || at(text, i) == '-') {
        i++;
    }
    if (!is_digit(at(text, i))) {
        return position;
    }
    while (is_digit(at(text, i))) {
        i++;
    }
    return i;
}

/*
 * The number alternatives of fingerprinter._NUMBER, lookbehind aside:
 * 0x[0-9a-f]++ | 0b[01]++ | \d++(?:\.\d*+)?+EXPONENT | \.\d++EXPONENT, then (?![\w$.]).
 * The alternation is not atomic, so a form whose end fails the lookahead gives way to the
 * next one; at most one of them can succeed at a position.
 */
static Py_ssize_t match_number(const Text *text, Py_ssize_t position) {
    int c = at(text, position);
    Py_ssize_t i;
    if (c == '0' && (at(text, position + 1) == 'x' || at(text, position + 1) == 'b')) {
        int hex = at(text, position + 1) == 'x';
        i = position + 2;
        for (;;) {
            int digit = at(text, i);
            int valid = hex ? (is_digit(digit) || (digit >= 'a' && digit <= 'f'))
                            : (digit == '0' || digit == '1');
            if (!valid) {
                break;
            }
            i++;
        }
        if (i > position + 2 && number_may_end(text, i)) {
            return i;
        }
    }
    if (is_digit(c)) {
        i = position;
        while (is_digit(at(text, i))) {
            i++;
        }
        if (at(text, i) == '.') {
            i++;
            while (is_digit(at(text, i))) {
                i++;
            }
        }
        i = skip_exponent(text, i);
        return number_may_end(text, i) ? i : -1;
    }
    if (c == '.' && is_digit(at(text, position + 1))) {
        i = position + 1;
        while (is_digit(at(text, i))) {
            i++;
        }
        i = skip_exponent(text, i);
        return number_may_end(text, i) ? i : -1;
    }
    return -1;
}

/* (?<=[\s(,=<>!+\-*\/%|&^~:;]) */
static int number_may_start(const Text *text, Py_ssize_t position) {
    if (position == 0) {
        return 0;
    }
    int c = (unsigned char)text->data[position - 1];
    return is_space(c) || (c != 0 && strchr("(,=<>!+-*/%|&^~:;", c) != NULL);
}

/* One row of a VALUES list: \((?:[^()'"`/\#\-]++|-(?!-)|STRING)*+\) */
static Py_ssize_t match_row(const Text *text, Py_ssize_t position) {
    if (at(text, position) != '(') {
        return -1;
    }
    Py_ssize_t i = position + 1;
    for (;;) {
        int c = at(text, i);
        if (c < 0) {
            return -1;
        }
        if (c == '-') {
            if (at(text, i + 1) == '-') {
                break;
            }
            i++;
        }
        else if (c == '\'' || c == '"') {
            Py_ssize_t end = match_string(text, i, (char)c);
            if (end < 0) {
                break;
            }
            i = end;
        }
        else if (strchr("()`/#", c) != NULL) {
            break;
        }
        else {
            i++;
        }
    }
    return at(text, i) == ')' ? i + 1 : -1;
}

/*
 * \b[vV][aA][lL][uU][eE][sS]?\s*+ROW(?:\s*+,\s*+ROW)++ ; *first_row_end is where the first
 * row ends.
 */
static Py_ssize_t match_values(const Text *text, Py_ssize_t position, Py_ssize_t *first_row_end) {
    if (position > 0 && is_word((unsigned char)text->data[position - 1])) {
        return -1;
    }
    static const char word[] = "value";
    Py_ssize_t i = position;
    for (int k = 0; word[k] != '\0'; k++, i++) {
        int c = at(text, i);
        if (c < 0 || (c | 0x20) != word[k]) {
            return -1;
        }
    }
    if (at(text, i) == 's' || at(text, i) == 'S') {
        i++;
    }
    Py_ssize_t end = match_row(text, skip_spaces(text, i));
    if (end < 0) {
        return -1;
    }
    *first_row_end = end;
    int more_rows = 0;
    for (;;) {
        Py_ssize_t next = skip_spaces(text, end);
        if (at(text, next) != ',') {
            break;
        }
        Py_ssize_t row_end = match_row(text, skip_spaces(text, next + 1));
        if (row_end < 0) {
            break;
        }
        end = row_end;
        more_rows = 1;
    }
    return more_rows ? end : -1;
}

/* A comment that leaves no trace: /\*(?!!|[mM]!).*?\*\/ */
static Py_ssize_t match_comment(const Text *text, Py_ssize_t position) {
    if (at(text, position + 1) != '*') {
        return -1;
    }
    int c = at(text, position + 2);
    if (c == '!' || ((c == 'm' || c == 'M') && at(text, position + 3) == '!')) {
        return -1;
    }
    return find_comment_end(text, position + 2);
}

/* What stays verbatim in the key: `..`, an executable comment, # and -- line comments. */
static Py_ssize_t match_kept(const Text *text, Py_ssize_t position) {
    switch (at(text, position)) {
    case '`': {
        const char *close = memchr(text->data + position + 1, '`',
                                   (size_t)(text->size - position - 1));
        return close == NULL ? -1 : close - text->data + 1;
    }
    case '/':
        return at(text, position + 1) == '*' ? find_comment_end(text, position + 2) : -1;
    case '#':
        return line_end(text, position);
    case '-':
        return at(text, position + 1) == '-' ? line_end(text, position) : -1;
    default:
        return -1;
    }
}

static void mask_into(const Text *text, char *out, Py_ssize_t *length);

/* Mask text[start:end] as a statement of its own, appending to out. */
static void mask_part(const Text *text, Py_ssize_t start, Py_ssize_t end, char *out,
                      Py_ssize_t *length) {
    Text part = {text->data + start, end - start};
    mask_into(&part, out, length);
}

static void mask_into(const Text *text, char *out, Py_ssize_t *length) {
    Py_ssize_t i = 0;
    while (i < text->size) {
        int c = (unsigned char)text->data[i];
        Py_ssize_t end = -1;
        if (c == 'v' || c == 'V') {
            Py_ssize_t first_row_end;
            end = match_values(text, i, &first_row_end);
            if (end >= 0) {
                /* Later rows are dropped by the fingerprint whatever they hold. */
                mask_part(text, i, first_row_end, out, length);
                out[(*length)++] = MORE_ROWS;
                i = end;
                continue;
            }
        }
        else if (c == '/' || c == '`' || c == '#' || c == '-') {
            end = c == '/' ? match_comment(text, i) : -1;
            if (end >= 0) {
                i = end; /* '\x03': a comment leaves one marker */
                out[(*length)++] = '\x03';
                continue;
            }
            end = match_kept(text, i);
            if (end >= 0) {
                memcpy(out + *length, text->data + i, (size_t)(end - i));
                *length += end - i;
                i = end;
                continue;
            }
        }
        else if (c == '\'' || c == '"') {
            end = match_string(text, i, (char)c);
            if (end >= 0) {
                out[(*length)++] = c == '\'' ? SINGLE_QUOTED : DOUBLE_QUOTED;
                i = end;
                continue;
            }
        }
        else if ((is_digit(c) || c == '.') && number_may_start(text, i)) {
            end = match_number(text, i);
            if (end >= 0) {
                int numbers = 1;
                for (;;) { /* (?:\s*+,\s*+NUMBER)++: after ',' or a blank, a number may start */
                    Py_ssize_t next = skip_spaces(text, end);
                    if (at(text, next) != ',') {
                        break;
                    }
                    Py_ssize_t number_end = match_number(text, skip_spaces(text, next + 1));
                    if (number_end < 0) {
                        break;
                    }
                    end = number_end;
                    numbers++;
                }
                out[(*length)++] = numbers > 1 ? NUMBER_LIST : ONE_NUMBER;
                i = end;
                continue;
            }
        }
        out[(*length)++] = (char)c;
        i++;
    }
}

static PyObject *literal_mask(PyObject *Py_UNUSED(module), PyObject *sql) {
    if (!PyUnicode_Check(sql)) {
        PyErr_SetString(PyExc_TypeError, "literal_mask() takes a str");
        return NULL;
    }
    if (!PyUnicode_IS_ASCII(sql)) {
        Py_RETURN_NONE;
    }
    Text text = {(const char *)PyUnicode_1BYTE_DATA(sql), PyUnicode_GET_LENGTH(sql)};
    /* A match is never replaced by more than it spans, so the key fits in the input's size. */
    char *out = PyMem_Malloc((size_t)text.size + 1);
    if (out == NULL) {
        return PyErr_NoMemory();
    }
    Py_ssize_t length = 0;
    mask_into(&text, out, &length);
    PyObject *result = PyUnicode_New(length, 127);
    if (result != NULL) {
        memcpy(PyUnicode_1BYTE_DATA(result), out, (size_t)length);
    }
    PyMem_Free(out);
    return result;
}

static PyMethodDef methods[] = {
    {"literal_mask", literal_mask, METH_O,
     "literal_mask(sql) -> str | None\n\n"
     "The fingerprint cache key of an ASCII statement, None for any other; see the module "
     "comment."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "quanta.analysis._literal_mask",
    "The fingerprint cache key (fingerprinter.literal_mask) in C.", -1, methods, NULL, NULL,
    NULL, NULL,
};

PyMODINIT_FUNC PyInit__literal_mask(void) { return PyModule_Create(&module); }
