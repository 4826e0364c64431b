/* The compiled screen of the one Wikidata pass (wikiorigin.dumps.wikidata, read_items_and_places).
 *
 * screen(buf, pos, end, wanted, number) walks the lines of buf[pos:end] and returns
 * (candidates, lines, number): the lines that may be kept, as (line number, id or None, line,
 * where P131 or P17 is first named, less one: 0 at least), the entity lines counted, and the number of the last line.
 * The rules are _py_screen's in wikidata.py, line for line (the tests compare both on
 * generated and damaged lines):
 *
 * - the id is the first match of "id"\s*:\s*"([QPL][0-9]+)" lying whole in the line's first
 *   PREFIX bytes; it is the entity's own only when no '{' stands between the line's second
 *   byte and it (an id after a '{' belongs to a nested object);
 * - a line with its own id is a candidate when it names P131" or P17" anywhere, or its id is
 *   in ``wanted`` (a set of bytes); ``named`` is one before the first of them (0 at least);
 * - a line without its own id is a candidate, stripped of ASCII white space, unless it is
 *   empty, "[" or "]" (it is parsed whole, to find its id or to report it);
 *
 * Most lines are neither: they cost a memchr for their end, a memmem for the id and a search
 * for the properties (SSE2), not a Python object each.
 */
#define _GNU_SOURCE
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define PREFIX 400

static int is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* The id's [start, end) within [line, limit) and where its match starts ("id"), or 0. */
static int find_id(const unsigned char *line, const unsigned char *limit, const unsigned char **match,
                   const unsigned char **start, const unsigned char **end) {
    const unsigned char *at = line;
    while (at < limit) {
        const unsigned char *key = memmem(at, (size_t)(limit - at), "\"id\"", 4);
        if (key == NULL) return 0;
        const unsigned char *p = key + 4;
        while (p < limit && is_space(*p)) p++;
        if (p < limit && *p == ':') {
            p++;
            while (p < limit && is_space(*p)) p++;
            if (p < limit && *p == '"') {
                p++;
                const unsigned char *id = p;
                if (p < limit && (*p == 'Q' || *p == 'P' || *p == 'L')) {
                    p++;
                    const unsigned char *digits = p;
                    while (p < limit && is_digit(*p)) p++;
                    if (p > digits && p < limit && *p == '"') {
                        *match = key;
                        *start = id;
                        *end = p;
                        return 1;
                    }
                }
            }
        }
        at = key + 1;
    }
    return 0;
}

static int names_prop(const unsigned char *p, const unsigned char *stop) {
    return (stop - p >= 5 && memcmp(p, "P131\"", 5) == 0) || (stop - p >= 4 && memcmp(p, "P17\"", 4) == 0);
}

/* One before the first P131" or P17" in [line, stop) (0 at least), or -1. Sixteen positions at
 * a time where SSE2 is there: a 'P', a '1' after it and a '"' three or four bytes on. */
static Py_ssize_t named_at(const unsigned char *line, const unsigned char *stop) {
    const unsigned char *s = line;
#if defined(__SSE2__)
    const __m128i P = _mm_set1_epi8('P'), one = _mm_set1_epi8('1'), quote = _mm_set1_epi8('"');
    while (stop - s >= 20) {
        __m128i at = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)s), P);
        __m128i next = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + 1)), one);
        __m128i q3 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + 3)), quote);
        __m128i q4 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + 4)), quote);
        unsigned mask = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_and_si128(at, next), _mm_or_si128(q3, q4)));
        while (mask) {
            const unsigned char *p = s + __builtin_ctz(mask);
            if (names_prop(p, stop)) {
                Py_ssize_t where = (p - line) - 1;
                return where > 0 ? where : 0;
            }
            mask &= mask - 1;
        }
        s += 16;
    }
#endif
    for (; s < stop; s++) {
        if (*s == 'P' && names_prop(s, stop)) {
            Py_ssize_t where = (s - line) - 1;
            return where > 0 ? where : 0;
        }
    }
    return -1;
}

static int add(PyObject *list, Py_ssize_t number, PyObject *qid, const unsigned char *line, Py_ssize_t len,
               Py_ssize_t named) {
    PyObject *text = PyBytes_FromStringAndSize((const char *)line, len);
    if (text == NULL) return -1;
    PyObject *item = Py_BuildValue("(nONn)", number, qid, text, named);
    if (item == NULL) return -1;
    int failed = PyList_Append(list, item);
    Py_DECREF(item);
    return failed;
}

static PyObject *screen(PyObject *self, PyObject *args) {
    PyObject *data, *wanted;
    Py_ssize_t pos, end, number;
    if (!PyArg_ParseTuple(args, "SnnOn", &data, &pos, &end, &wanted, &number)) return NULL;
    if (!PyAnySet_Check(wanted)) {
        PyErr_SetString(PyExc_TypeError, "screen: wanted must be a set of bytes");
        return NULL;
    }
    if (pos < 0 || end > PyBytes_GET_SIZE(data) || pos > end) {
        PyErr_SetString(PyExc_ValueError, "screen: pos and end outside the buffer");
        return NULL;
    }
    const unsigned char *buf = (const unsigned char *)PyBytes_AS_STRING(data);
    PyObject *found = PyList_New(0);
    Py_ssize_t lines = 0;
    if (found == NULL) goto failed;
    while (pos < end) {
        const unsigned char *line = buf + pos;
        const unsigned char *nl = memchr(line, '\n', (size_t)(end - pos));
        const unsigned char *stop = nl != NULL ? nl : buf + end;
        number++;
        const unsigned char *limit = line + PREFIX < stop ? line + PREFIX : stop;
        const unsigned char *key, *id_start, *id_end;
        if (find_id(line, limit, &key, &id_start, &id_end) &&
            (key <= line + 1 || memchr(line + 1, '{', (size_t)(key - (line + 1))) == NULL)) {
            lines++;
            Py_ssize_t named = named_at(line, stop);
            int keep = named >= 0;
            PyObject *qid = PyBytes_FromStringAndSize((const char *)id_start, id_end - id_start);
            if (qid == NULL) goto failed;
            if (!keep) {
                keep = PySet_Contains(wanted, qid);
                if (keep < 0) {
                    Py_DECREF(qid);
                    goto failed;
                }
                named = 0;
            }
            int failed = keep ? add(found, number, qid, line, stop - line, named) : 0;
            Py_DECREF(qid);
            if (failed) goto failed;
        } else {
            const unsigned char *a = line, *b = stop;
            while (a < b && is_space(*a)) a++;
            while (b > a && is_space(b[-1])) b--;
            if (!(b == a || (b - a == 1 && (*a == '[' || *a == ']')))) {
                lines++;
                if (add(found, number, Py_None, a, b - a, 0)) goto failed;
            }
        }
        pos = (stop - buf) + 1;
    }
    return Py_BuildValue("(Nnn)", found, lines, number);
failed:
    Py_XDECREF(found);
    return NULL;
}

static PyMethodDef methods[] = {
    {"screen", screen, METH_VARARGS,
     "screen(buf, pos, end, wanted, number) -> (candidates, entity lines, last line number)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_screen", "Compiled screen of the one Wikidata pass.", -1, methods,
};

PyMODINIT_FUNC PyInit__screen(void) { return PyModule_Create(&module); }
