/* The compiled core of the page-creation scan (wikiorigin.dumps.stubs).
 *
 * scan_block(buf, start, stop) walks the pages in buf[start:stop], which holds whole
 * <page>...</page> elements of a MediaWiki XML export, and returns columns (lists):
 *
 *   titles (raw escaped bytes), namespaces, page ids, redirect flags, revisions,
 *   imported revisions, earliest timestamp of all revisions and its revision id,
 *   earliest timestamp of local (not imported) revisions and its revision id,
 *   and an error: None, or (byte offset, page id or -1, message).
 *
 * A revision is imported when its contributor's <username> holds '>' (written "&gt;" by
 * MediaWiki). Ties on the timestamp go to the first revision in the file. Revision text is
 * skipped with memchr: dumps escape '<' inside text, so tags cannot occur there.
 * Same rules as the Python path in stubs.py; tests check both against mwxml.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define LIT(s) s, (sizeof(s) - 1)

/* Tags are short and near: memchr for the first byte, then compare (memmem's setup costs
 * more than the search here). */
static const char *find(const char *p, const char *end, const char *needle, size_t n) {
    const char first = needle[0];
    while (p + n <= end) {
        p = memchr(p, first, (size_t)(end - p - n + 1));
        if (p == NULL) return NULL;
        if (memcmp(p + 1, needle + 1, n - 1) == 0) return p;
        p++;
    }
    return NULL;
}

static int parse_int(const char *p, const char *end, long long *out) {
    int neg = 0, any = 0;
    long long v = 0;
    if (p < end && *p == '-') { neg = 1; p++; }
    while (p < end && *p >= '0' && *p <= '9') { v = v * 10 + (*p - '0'); p++; any = 1; }
    if (!any || p >= end || *p != '<') return 0;
    *out = neg ? -v : v;
    return 1;
}

/* the text of <tag>...</tag> starting the search at p; returns 0 when absent */
static int element(const char *p, const char *end, const char *open, size_t n_open,
                   const char **text, const char **text_end) {
    const char *s = find(p, end, open, n_open);
    if (!s) return 0;
    s += n_open;
    const char *e = memchr(s, '<', (size_t)(end - s));
    if (!e) return 0;
    *text = s;
    *text_end = e;
    return 1;
}

typedef struct {
    const char *ts;      /* 20 bytes, or NULL */
    long long rid;
} Earliest;

static void consider(Earliest *best, const char *ts, size_t n, long long rid) {
    if (best->ts == NULL || memcmp(ts, best->ts, n) < 0) {
        best->ts = ts;
        best->rid = rid;
    }
}

static int append_new(PyObject *list, PyObject *item) {
    if (item == NULL) return -1;
    int rc = PyList_Append(list, item);
    Py_DECREF(item);
    return rc;
}

static PyObject *error_tuple(Py_ssize_t offset, long long page_id, const char *msg) {
    return Py_BuildValue("(nLs)", offset, page_id, msg);
}

/* "malformed <timestamp> b'...'" with (up to 40 bytes of) what was found */
static PyObject *timestamp_error(Py_ssize_t offset, long long page_id, const char *ts,
                                 const char *ts_end) {
    Py_ssize_t n = ts_end - ts > 40 ? 40 : ts_end - ts;
    PyObject *found = PyBytes_FromStringAndSize(ts, n);
    if (found == NULL) return NULL;
    PyObject *msg = PyUnicode_FromFormat("malformed <timestamp> %R", found);
    Py_DECREF(found);
    if (msg == NULL) return NULL;
    return Py_BuildValue("(nLN)", offset, page_id, msg);
}

static PyObject *scan_block(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start, stop;
    if (!PyArg_ParseTuple(args, "y*nn", &view, &start, &stop)) return NULL;
    if (start < 0 || stop > view.len || start > stop) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "scan_block: start/stop out of range");
        return NULL;
    }
    const char *base = (const char *)view.buf;
    const char *p = base + start, *block_end = base + stop;

    PyObject *cols[10];
    for (int i = 0; i < 10; i++) cols[i] = PyList_New(0);
    PyObject *error = Py_None;
    Py_INCREF(error);

    while (p < block_end) {
        const char *page = find(p, block_end, LIT("<page>"));
        if (!page) break;
        const char *page_end = find(page, block_end, LIT("</page>"));
        if (!page_end) {
            Py_DECREF(error);
            error = error_tuple(page - base, -1, "a <page> without </page> in the block");
            break;
        }
        const char *t, *te, *ns_s, *ns_e, *id_s, *id_e;
        long long ns, page_id;
        if (!element(page, page_end, LIT("<title>"), &t, &te) ||
            !element(te, page_end, LIT("<ns>"), &ns_s, &ns_e) ||
            !element(ns_e, page_end, LIT("<id>"), &id_s, &id_e) ||
            !parse_int(ns_s, page_end, &ns) || !parse_int(id_s, page_end, &page_id)) {
            Py_DECREF(error);
            error = error_tuple(page - base, -1, "expected <page> with <title>, <ns>, <id>");
            break;
        }
        const char *first_rev = find(id_e, page_end, LIT("<revision>"));
        const char *head_end = first_rev ? first_rev : page_end;
        int redirect = find(id_e, head_end, LIT("<redirect")) != NULL;

        long long revisions = 0, imported = 0;
        Earliest all = {NULL, 0}, local = {NULL, 0};
        const char *r = first_rev;
        const char *bad = NULL, *bad_ts = NULL, *bad_ts_end = NULL;
        while (r) {
            const char *r_end = find(r, page_end, LIT("</revision>"));
            if (!r_end) { bad = "a <revision> without </revision>"; break; }
            const char *rid_s, *rid_e, *ts, *ts_e;
            long long rid;
            if (!element(r, r_end, LIT("<id>"), &rid_s, &rid_e) || !parse_int(rid_s, r_end, &rid) ||
                !element(rid_e, r_end, LIT("<timestamp>"), &ts, &ts_e)) {
                bad = "a <revision> without <id> or <timestamp>";
                break;
            }
            if (ts_e - ts != 20) { bad_ts = ts; bad_ts_end = ts_e; break; }
            int is_imported = 0;
            const char *c = find(ts_e, r_end, LIT("<contributor"));
            if (c) {
                const char *c_close = memchr(c, '>', (size_t)(r_end - c));
                if (c_close && c_close[-1] != '/') {
                    const char *c_end = find(c_close, r_end, LIT("</contributor>"));
                    const char *u, *ue;
                    if (c_end && element(c_close, c_end, LIT("<username>"), &u, &ue)) {
                        /* '>' may stand unescaped in element text */
                        const char *gt = memchr(u, '>', (size_t)(ue - u));
                        is_imported = gt != NULL || find(u, ue, LIT("&gt;")) != NULL;
                    }
                }
            }
            revisions++;
            consider(&all, ts, 20, rid);
            if (is_imported) imported++;
            else consider(&local, ts, 20, rid);
            r = find(r_end, page_end, LIT("<revision>"));
        }
        if (bad || bad_ts) {
            Py_DECREF(error);
            error = bad ? error_tuple(page - base, page_id, bad)
                        : timestamp_error(page - base, page_id, bad_ts, bad_ts_end);
            break;
        }
        if (append_new(cols[0], PyBytes_FromStringAndSize(t, te - t)) < 0 ||
            append_new(cols[1], PyLong_FromLongLong(ns)) < 0 ||
            append_new(cols[2], PyLong_FromLongLong(page_id)) < 0 ||
            append_new(cols[3], PyBool_FromLong(redirect)) < 0 ||
            append_new(cols[4], PyLong_FromLongLong(revisions)) < 0 ||
            append_new(cols[5], PyLong_FromLongLong(imported)) < 0)
            goto fail;
        if (all.ts) {
            if (append_new(cols[6], PyBytes_FromStringAndSize(all.ts, 20)) < 0 ||
                append_new(cols[7], PyLong_FromLongLong(all.rid)) < 0)
                goto fail;
        } else if (PyList_Append(cols[6], Py_None) < 0 || PyList_Append(cols[7], Py_None) < 0) {
            goto fail;
        }
        if (local.ts) {
            if (append_new(cols[8], PyBytes_FromStringAndSize(local.ts, 20)) < 0 ||
                append_new(cols[9], PyLong_FromLongLong(local.rid)) < 0)
                goto fail;
        } else if (PyList_Append(cols[8], Py_None) < 0 || PyList_Append(cols[9], Py_None) < 0) {
            goto fail;
        }
        p = page_end + 7;
    }
    PyBuffer_Release(&view);
    if (error == NULL) goto fail_released;
    return Py_BuildValue("(NNNNNNNNNNN)", cols[0], cols[1], cols[2], cols[3], cols[4], cols[5],
                         cols[6], cols[7], cols[8], cols[9], error);
fail:
    PyBuffer_Release(&view);
fail_released:
    for (int i = 0; i < 10; i++) Py_XDECREF(cols[i]);
    Py_XDECREF(error);
    return NULL;
}

static PyMethodDef methods[] = {
    {"scan_block", scan_block, METH_VARARGS,
     "scan_block(buf, start, stop) -> columns of the pages in buf[start:stop], and an error"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_scanblock", "Compiled core of the page-creation scan.", -1, methods,
};

PyMODINIT_FUNC PyInit__scanblock(void) { return PyModule_Create(&module); }
