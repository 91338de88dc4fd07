/*
 * Decoding of stored latency histograms, in C: reads merge thousands of them per request.
 *
 * merge_encoded(bins, data) adds the buckets of one encoded histogram (the format written by
 * quanta.analysis.histogram.LatencyHistogram.to_bytes) to the dict `bins` and returns
 * (zero_count, total, minimum, maximum); minimum and maximum are None when the histogram is
 * empty. It raises ValueError with the messages of the pure-Python decoder, which stays the
 * reference (LatencyHistogram._merge_encoded_python) and is what tests compare this with.
 * `bins` is only changed when the whole encoding is valid.
 *
 * add_values(bins, values) adds durations to `bins` as LatencyHistogram.add_many does and
 * returns (zero_count, count, minimum, maximum) of the values (minimum and maximum None when
 * there are none), for the histogram to add to its own.
 *
 * encode(bins, zero_count, count, minimum, maximum) returns what LatencyHistogram.to_bytes
 * returns for a histogram with those fields (the Python encoder stays the reference); it
 * raises OverflowError where a value exceeds 64 bits, which the Python encoder reports.
 *
 * pt_bucket_counts(counts, values) counts numbers in pt-query-digest's buckets as
 * quanta.analysis.ptstats.Buckets.add_many does (ptstats.bucket_index, the reference, per
 * value) and returns True; it returns False, counting nothing, when a value is not a finite
 * float or an int a float holds, for the reference to handle it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define FORMAT_VERSION 1
#define VARINT_PAYLOAD 0x7F
#define VARINT_MORE 0x80
#define VARINT_SHIFT 7
#define MAX_VARINT_BYTES 10
#define MIN_MAX_BYTES 16 /* two little-endian IEEE doubles */
#define BUCKETS_PER_DECADE 116 /* histogram.BUCKETS_PER_DECADE */
#define ZERO_THRESHOLD 1e-9    /* histogram.ZERO_THRESHOLD */

typedef struct {
    const unsigned char *data;
    Py_ssize_t size;
    Py_ssize_t position;
} Reader;

static PyObject *corrupt(const char *format, ...) {
    char message[160];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    PyErr_Format(PyExc_ValueError, "latency histogram: %s", message);
    return NULL;
}

static int truncated(const Reader *reader) {
    corrupt("truncated: %zd bytes end inside a field", reader->size);
    return -1;
}

/* One varint, as _read_varint: shortest form, at most 64 bits, at most 10 bytes. */
static int read_varint(Reader *reader, const char *what, uint64_t *value) {
    Py_ssize_t start = reader->position;
    uint64_t result = 0;
    for (int index = 0; index < MAX_VARINT_BYTES; index++) {
        if (reader->position >= reader->size) {
            return truncated(reader);
        }
        unsigned char byte = reader->data[reader->position++];
        uint64_t payload = byte & VARINT_PAYLOAD;
        int shift = VARINT_SHIFT * index;
        /* Bits past the 64th: the value exceeds 64 bits (the tenth byte holds one bit). */
        if (shift == 63 ? payload > 1 : (shift > 63 && payload != 0)) {
            if (!(byte & VARINT_MORE)) {
                corrupt("%s at byte %zd: varint exceeds 64 bits", what, start);
                return -1;
            }
        }
        else {
            result |= payload << shift;
        }
        if (!(byte & VARINT_MORE)) {
            if (byte == 0 && index) {
                corrupt("%s at byte %zd: varint not in its shortest form", what, start);
                return -1;
            }
            *value = result;
            return 0;
        }
    }
    corrupt("%s at byte %zd: varint longer than %d bytes", what, start, MAX_VARINT_BYTES);
    return -1;
}

static double read_double(const unsigned char *bytes) {
    /* The stored doubles are little-endian, as is every platform this runs on; check it. */
    double value;
    memcpy(&value, bytes, sizeof value);
    return value;
}

/* Add count to bins[key]; the dict keeps Python ints, which do not overflow. */
static int add_to_bin(PyObject *updates, int64_t key, uint64_t count) {
    PyObject *key_object = PyLong_FromLongLong(key);
    PyObject *count_object = PyLong_FromUnsignedLongLong(count);
    if (key_object == NULL || count_object == NULL) {
        Py_XDECREF(key_object);
        Py_XDECREF(count_object);
        return -1;
    }
    PyObject *known = PyDict_GetItemWithError(updates, key_object); /* borrowed */
    int status;
    if (known != NULL) {
        PyObject *sum = PyNumber_Add(known, count_object);
        status = sum == NULL ? -1 : PyDict_SetItem(updates, key_object, sum);
        Py_XDECREF(sum);
    }
    else {
        status = PyErr_Occurred() ? -1 : PyDict_SetItem(updates, key_object, count_object);
    }
    Py_DECREF(key_object);
    Py_DECREF(count_object);
    return status;
}

/* The buckets as {key: count}; a gap of 0 repeats a key, whose counts are then added. */
static PyObject *decode_buckets(Reader *reader, uint64_t bucket_count, uint64_t *total) {
    PyObject *buckets = PyDict_New();
    if (buckets == NULL) {
        return NULL;
    }
    int64_t key = 0;
    for (uint64_t number = 0; number < bucket_count; number++) {
        uint64_t step, count;
        if (number == 0) {
            if (read_varint(reader, "first bucket index", &step) < 0) {
                goto error;
            }
            key = (step & 1) ? -(int64_t)(step >> 1) - 1 : (int64_t)(step >> 1);
        }
        else {
            if (read_varint(reader, "bucket index gap", &step) < 0) {
                goto error;
            }
            key += (int64_t)step;
        }
        if (read_varint(reader, "bucket count", &count) < 0) {
            goto error;
        }
        if (*total + count < *total) {
            /* Python ints have no such limit: the caller falls back to the Python decoder. */
            PyErr_SetString(PyExc_OverflowError, "bucket counts add up past 64 bits");
            goto error;
        }
        *total += count;
        if (add_to_bin(buckets, key, count) < 0) {
            goto error;
        }
    }
    return buckets;
error:
    Py_DECREF(buckets);
    return NULL;
}

static PyObject *merge_encoded(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *bins;
    Py_buffer buffer;
    if (!PyArg_ParseTuple(args, "O!y*:merge_encoded", &PyDict_Type, &bins, &buffer)) {
        return NULL;
    }
    Reader reader = {buffer.buf, buffer.len, 1};
    PyObject *result = NULL, *buckets = NULL;
    if (buffer.len == 0 || reader.data[0] != FORMAT_VERSION) {
        if (buffer.len == 0) {
            corrupt("no data");
        }
        else {
            corrupt("unsupported format version %d", reader.data[0]);
        }
        goto done;
    }
    uint64_t bucket_count, zero_count, total;
    if (read_varint(&reader, "bucket count", &bucket_count) < 0 ||
        read_varint(&reader, "zero count", &zero_count) < 0) {
        goto done;
    }
    PyObject *lowest = Py_None, *highest = Py_None;
    double extremes[2] = {0.0, 0.0};
    int has_extremes = bucket_count || zero_count;
    if (has_extremes) {
        if (reader.size - reader.position < MIN_MAX_BYTES) {
            truncated(&reader);
            goto done;
        }
        extremes[0] = read_double(reader.data + reader.position);
        extremes[1] = read_double(reader.data + reader.position + MIN_MAX_BYTES / 2);
        reader.position += MIN_MAX_BYTES;
    }
    total = zero_count;
    buckets = decode_buckets(&reader, bucket_count, &total);
    if (buckets == NULL) {
        goto done;
    }
    if (reader.position != reader.size) {
        corrupt("%zd trailing bytes", reader.size - reader.position);
        goto done;
    }
    /* Valid: only now touch the caller's dict. */
    PyObject *key, *count;
    Py_ssize_t position = 0;
    while (PyDict_Next(buckets, &position, &key, &count)) {
        PyObject *known = PyDict_GetItemWithError(bins, key);
        if (known == NULL && PyErr_Occurred()) {
            goto done;
        }
        PyObject *sum = known == NULL ? Py_NewRef(count) : PyNumber_Add(known, count);
        int status = sum == NULL ? -1 : PyDict_SetItem(bins, key, sum);
        Py_XDECREF(sum);
        if (status < 0) {
            goto done;
        }
    }
    if (has_extremes) {
        result = Py_BuildValue("(KKdd)", (unsigned long long)zero_count,
                               (unsigned long long)total, extremes[0], extremes[1]);
    }
    else {
        result = Py_BuildValue("(KKOO)", (unsigned long long)zero_count,
                               (unsigned long long)total, lowest, highest);
    }
done:
    Py_XDECREF(buckets);
    PyBuffer_Release(&buffer);
    return result;
}

static PyObject *add_values(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *bins, *values;
    if (!PyArg_ParseTuple(args, "O!O:add_values", &PyDict_Type, &bins, &values)) {
        return NULL;
    }
    PyObject *sequence = PySequence_Fast(values, "add_values() takes a sequence of durations");
    if (sequence == NULL) {
        return NULL;
    }
    Py_ssize_t size = PySequence_Fast_GET_SIZE(sequence);
    PyObject **items = PySequence_Fast_ITEMS(sequence);
    double lowest = 0.0, highest = 0.0;
    Py_ssize_t zeros = 0;
    for (Py_ssize_t index = 0; index < size; index++) {
        double value = PyFloat_AsDouble(items[index]);
        if (value == -1.0 && PyErr_Occurred()) {
            Py_DECREF(sequence);
            return NULL;
        }
        if (index == 0 || value < lowest) {
            lowest = value;
        }
        if (index == 0 || value > highest) {
            highest = value;
        }
        if (value > ZERO_THRESHOLD) {
            /* floor(log10(x) * BUCKETS_PER_DECADE), as histogram._bucket_key computes it. */
            int64_t key = (int64_t)floor(log10(value) * BUCKETS_PER_DECADE);
            if (add_to_bin(bins, key, 1) < 0) {
                Py_DECREF(sequence);
                return NULL;
            }
        }
        else {
            zeros++;
        }
    }
    Py_DECREF(sequence);
    if (size == 0) {
        return Py_BuildValue("(nnOO)", zeros, size, Py_None, Py_None);
    }
    return Py_BuildValue("(nndd)", zeros, size, lowest, highest);
}

typedef struct {
    int64_t key;
    uint64_t count;
} Bucket;

static int by_key(const void *a, const void *b) {
    int64_t left = ((const Bucket *)a)->key, right = ((const Bucket *)b)->key;
    return (left > right) - (left < right);
}

static void write_varint(unsigned char *out, Py_ssize_t *length, uint64_t value) {
    while (value > VARINT_PAYLOAD) {
        out[(*length)++] = (unsigned char)((value & VARINT_PAYLOAD) | VARINT_MORE);
        value >>= VARINT_SHIFT;
    }
    out[(*length)++] = (unsigned char)value;
}

static void write_double(unsigned char *out, Py_ssize_t *length, double value) {
    memcpy(out + *length, &value, sizeof value); /* little-endian, as read_double */
    *length += (Py_ssize_t)sizeof value;
}

/* The buckets of `bins`, sorted by key; NULL with an exception on a bad or huge entry. */
static Bucket *sorted_buckets(PyObject *bins, Py_ssize_t *size) {
    *size = PyDict_GET_SIZE(bins);
    Bucket *buckets = PyMem_Malloc(sizeof(Bucket) * (size_t)(*size > 0 ? *size : 1));
    if (buckets == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    PyObject *key, *count;
    Py_ssize_t position = 0, index = 0;
    while (PyDict_Next(bins, &position, &key, &count)) {
        buckets[index].key = PyLong_AsLongLong(key);
        buckets[index].count = PyLong_AsUnsignedLongLong(count);
        if (PyErr_Occurred()) {
            PyMem_Free(buckets);
            return NULL;
        }
        index++;
    }
    qsort(buckets, (size_t)*size, sizeof(Bucket), by_key);
    return buckets;
}

static PyObject *encode(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *bins, *zero_object, *count_object;
    double minimum, maximum;
    if (!PyArg_ParseTuple(args, "O!O!O!dd:encode", &PyDict_Type, &bins, &PyLong_Type,
                          &zero_object, &PyLong_Type, &count_object, &minimum, &maximum)) {
        return NULL;
    }
    uint64_t zero_count = PyLong_AsUnsignedLongLong(zero_object);
    int has_values = PyObject_IsTrue(count_object);
    if (PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t size;
    Bucket *buckets = sorted_buckets(bins, &size);
    if (buckets == NULL) {
        return NULL;
    }
    /* Version, two varints, two doubles, then at most two 10-byte varints a bucket. */
    unsigned char *out = PyMem_Malloc((size_t)(1 + 2 * MAX_VARINT_BYTES + MIN_MAX_BYTES +
                                               size * 2 * MAX_VARINT_BYTES));
    if (out == NULL) {
        PyMem_Free(buckets);
        return PyErr_NoMemory();
    }
    Py_ssize_t length = 0;
    out[length++] = FORMAT_VERSION;
    write_varint(out, &length, (uint64_t)size);
    write_varint(out, &length, zero_count);
    if (has_values) {
        /* + 0.0 turns -0.0 into 0.0, as to_bytes does. */
        write_double(out, &length, minimum + 0.0);
        write_double(out, &length, maximum + 0.0);
    }
    for (Py_ssize_t index = 0; index < size; index++) {
        if (index == 0) {
            int64_t first = buckets[0].key; /* zigzag */
            write_varint(out, &length,
                         first >= 0 ? (uint64_t)first * 2 : (uint64_t)(-(first + 1)) * 2 + 1);
        }
        else {
            write_varint(out, &length, (uint64_t)(buckets[index].key - buckets[index - 1].key));
        }
        write_varint(out, &length, buckets[index].count);
    }
    PyObject *result = PyBytes_FromStringAndSize((const char *)out, length);
    PyMem_Free(out);
    PyMem_Free(buckets);
    return result;
}

/* ptstats.BUCKET_SIZE, NUM_BUCKETS, MIN_BUCKET */
#define PT_BUCKET_SIZE 1.05
#define PT_NUM_BUCKETS 1000
#define PT_MIN_BUCKET 0.000001

static PyObject *pt_bucket_counts(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *counts, *values;
    if (!PyArg_ParseTuple(args, "O!O:pt_bucket_counts", &PyDict_Type, &counts, &values)) {
        return NULL;
    }
    PyObject *sequence = PySequence_Fast(values, "pt_bucket_counts() takes a sequence");
    if (sequence == NULL) {
        return NULL;
    }
    /* ptstats._BASE_LOG and _BASE_OFFSET, computed by the same libm calls as math.log. */
    const double base_log = log(PT_BUCKET_SIZE);
    const double base_offset = fabs(1 - log(PT_MIN_BUCKET) / base_log);
    uint64_t tally[PT_NUM_BUCKETS] = {0};
    Py_ssize_t size = PySequence_Fast_GET_SIZE(sequence);
    PyObject **items = PySequence_Fast_ITEMS(sequence);
    for (Py_ssize_t index = 0; index < size; index++) {
        PyObject *item = items[index];
        double value;
        if (PyFloat_CheckExact(item)) {
            value = PyFloat_AS_DOUBLE(item);
        }
        else if (PyLong_CheckExact(item)) {
            value = PyLong_AsDouble(item); /* what math.log reads of an int that fits */
            if (value == -1.0 && PyErr_Occurred()) {
                PyErr_Clear();
                Py_DECREF(sequence);
                Py_RETURN_FALSE;
            }
        }
        else {
            Py_DECREF(sequence);
            Py_RETURN_FALSE;
        }
        if (!isfinite(value)) {
            Py_DECREF(sequence);
            Py_RETURN_FALSE;
        }
        /* bucket_index: min(NUM_BUCKETS - 1, int(_BASE_OFFSET + log(value) / _BASE_LOG)) */
        Py_ssize_t bucket = 0;
        if (value >= PT_MIN_BUCKET) {
            double position = base_offset + log(value) / base_log;
            bucket = position >= PT_NUM_BUCKETS - 1 ? PT_NUM_BUCKETS - 1 : (Py_ssize_t)position;
        }
        tally[bucket]++;
    }
    Py_DECREF(sequence);
    for (Py_ssize_t bucket = 0; bucket < PT_NUM_BUCKETS; bucket++) {
        if (tally[bucket] != 0 && add_to_bin(counts, bucket, tally[bucket]) < 0) {
            return NULL;
        }
    }
    Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
    {"merge_encoded", merge_encoded, METH_VARARGS,
     "merge_encoded(bins, data) -> (zero_count, total, minimum, maximum)\n\n"
     "Add an encoded latency histogram's buckets to bins; see the module comment."},
    {"add_values", add_values, METH_VARARGS,
     "add_values(bins, values) -> (zero_count, count, minimum, maximum)\n\n"
     "Add durations to bins as LatencyHistogram.add_many does; see the module comment."},
    {"pt_bucket_counts", pt_bucket_counts, METH_VARARGS,
     "pt_bucket_counts(counts, values) -> bool\n\n"
     "Count values in pt-query-digest's buckets; see the module comment."},
    {"encode", encode, METH_VARARGS,
     "encode(bins, zero_count, count, minimum, maximum) -> bytes\n\n"
     "LatencyHistogram.to_bytes of a histogram with these fields; see the module comment."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "quanta.analysis._histogram",
    "Decoding and encoding of stored latency histograms, in C.", -1, methods, NULL, NULL, NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__histogram(void) {
#if PY_BIG_ENDIAN
    PyErr_SetString(PyExc_ImportError, "stored histograms are little-endian");
    return NULL;
#else
    return PyModule_Create(&module_definition);
#endif
}
