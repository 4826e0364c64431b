/* The compiled core of the page-creation scan (wikiorigin.dumps.stubs).
 *
 * scan_block(buf, start, stop) walks the pages in buf[start:stop], which holds whole
 * <page>...</page> elements of a MediaWiki XML export, and returns columns (lists):
 *
 *   titles (str, entities decoded), namespaces, page ids, redirect flags, revisions,
 *   imported revisions, earliest time of all revisions (ms since the epoch, UTC) and its
 *   revision id, earliest time of local (not imported) revisions and its revision id,
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

/* Decode the entities MediaWiki writes in XML text (&amp; &lt; &gt; &quot; &#039; and other
 * numeric references) into out (as long as the input); returns the decoded length. */
static Py_ssize_t unescape(const char *s, const char *e, char *out) {
    char *o = out;
    while (s < e) {
        if (*s != '&') { *o++ = *s++; continue; }
        const char *semi = memchr(s, ';', (size_t)(e - s) > 12 ? 12 : (size_t)(e - s));
        size_t n = semi ? (size_t)(semi - s + 1) : 0;
        if (n == 5 && memcmp(s, "&amp;", 5) == 0) { *o++ = '&'; s += 5; continue; }
        if (n == 4 && memcmp(s, "&lt;", 4) == 0) { *o++ = '<'; s += 4; continue; }
        if (n == 4 && memcmp(s, "&gt;", 4) == 0) { *o++ = '>'; s += 4; continue; }
        if (n == 6 && memcmp(s, "&quot;", 6) == 0) { *o++ = '"'; s += 6; continue; }
        if (n == 6 && memcmp(s, "&apos;", 6) == 0) { *o++ = '\''; s += 6; continue; }
        if (n >= 4 && s[1] == '#') {
            unsigned long cp = 0;
            int hex = s[2] == 'x' || s[2] == 'X', ok = 1;
            for (const char *d = s + 2 + hex; d < semi; d++) {
                int v = (*d >= '0' && *d <= '9') ? *d - '0'
                      : hex && (*d | 32) >= 'a' && (*d | 32) <= 'f' ? (*d | 32) - 'a' + 10 : -1;
                if (v < 0 || cp > 0x10FFFF) { ok = 0; break; }
                cp = cp * (hex ? 16 : 10) + (unsigned long)v;
            }
            if (ok && cp > 0 && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF)) {
                if (cp < 0x80) *o++ = (char)cp;
                else if (cp < 0x800) { *o++ = (char)(0xC0 | (cp >> 6)); *o++ = (char)(0x80 | (cp & 0x3F)); }
                else if (cp < 0x10000) {
                    *o++ = (char)(0xE0 | (cp >> 12)); *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
                    *o++ = (char)(0x80 | (cp & 0x3F));
                } else {
                    *o++ = (char)(0xF0 | (cp >> 18)); *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
                    *o++ = (char)(0x80 | ((cp >> 6) & 0x3F)); *o++ = (char)(0x80 | (cp & 0x3F));
                }
                s = semi + 1;
                continue;
            }
        }
        *o++ = *s++;  /* not a reference we know: keep it as it is */
    }
    return o - out;
}

static PyObject *title_object(const char *s, const char *e) {
    if (memchr(s, '&', (size_t)(e - s)) == NULL)
        return PyUnicode_DecodeUTF8(s, e - s, "strict");
    char stack[512];
    char *buf = (e - s) <= (Py_ssize_t)sizeof(stack) ? stack : PyMem_Malloc((size_t)(e - s));
    if (buf == NULL) return PyErr_NoMemory();
    Py_ssize_t n = unescape(s, e, buf);
    PyObject *title = PyUnicode_DecodeUTF8(buf, n, "strict");
    if (buf != stack) PyMem_Free(buf);
    return title;
}

static int digits(const char *p, int n, int *out) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        v = v * 10 + (p[i] - '0');
    }
    *out = v;
    return 1;
}

/* Milliseconds since the epoch of "YYYY-MM-DDTHH:MM:SSZ"; 0 when malformed. */
static int parse_timestamp(const char *t, long long *ms) {
    int y, mo, d, h, mi, s;
    if (t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' || t[19] != 'Z')
        return 0;
    if (!digits(t, 4, &y) || !digits(t + 5, 2, &mo) || !digits(t + 8, 2, &d) ||
        !digits(t + 11, 2, &h) || !digits(t + 14, 2, &mi) || !digits(t + 17, 2, &s))
        return 0;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return 0;
    /* days from civil (Howard Hinnant's algorithm) */
    int yy = y - (mo <= 2);
    long long era = (yy >= 0 ? yy : yy - 399) / 400;
    long long yoe = yy - era * 400;
    long long doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    long long days = era * 146097 + doe - 719468;
    *ms = ((days * 24 + h) * 60 + mi) * 60000LL + s * 1000LL;
    return 1;
}

typedef struct {
    int set;
    long long ms, rid;
} Earliest;

static void consider(Earliest *best, long long ms, long long rid) {
    if (!best->set || ms < best->ms) {
        best->set = 1;
        best->ms = ms;
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
        Earliest all = {0, 0, 0}, local = {0, 0, 0};
        const char *r = first_rev;
        const char *bad = NULL, *bad_ts = NULL, *bad_ts_end = NULL;
        while (r) {
            /* One forward pass: <id>, <timestamp>, <contributor> (which MediaWiki writes right
             * after the timestamp), then </revision> from there. */
            const char *rid_s, *rid_e, *ts, *ts_e;
            long long rid;
            if (!element(r, page_end, LIT("<id>"), &rid_s, &rid_e) ||
                !parse_int(rid_s, page_end, &rid) ||
                !element(rid_e, page_end, LIT("<timestamp>"), &ts, &ts_e)) {
                bad = "a <revision> without <id> or <timestamp>";
                break;
            }
            const char *cursor = ts_e, *c = find(ts_e, page_end, LIT("<contributor"));
            if (c && c - ts_e > 64) c = NULL;  /* not this revision's: look no further */
            int is_imported = 0;
            if (c) {
                const char *c_close = memchr(c, '>', (size_t)(page_end - c));
                if (c_close) {
                    cursor = c_close;
                    const char *c_end = c_close[-1] == '/' ? NULL
                                        : find(c_close, page_end, LIT("</contributor>"));
                    const char *u, *ue;
                    if (c_end) {
                        cursor = c_end;
                        if (element(c_close, c_end, LIT("<username>"), &u, &ue)) {
                            /* '>' may stand unescaped in element text */
                            is_imported = memchr(u, '>', (size_t)(ue - u)) != NULL ||
                                          find(u, ue, LIT("&gt;")) != NULL;
                        }
                    }
                }
            }
            /* <id> and <timestamp> stand at the head of a revision (after <parentid> at
             * most); found further on, they belong to a later revision */
            if (rid_s - r > 64 || ts - rid_e > 256) {
                bad = "a <revision> without <id> or <timestamp>";
                break;
            }
            const char *r_end = find(cursor, page_end, LIT("</revision>"));
            if (!r_end) { bad = "a <revision> without </revision>"; break; }
            const char *next = find(r_end, page_end, LIT("<revision>"));
            long long ms;
            if (ts_e - ts != 20 || !parse_timestamp(ts, &ms)) { bad_ts = ts; bad_ts_end = ts_e; break; }
            revisions++;
            consider(&all, ms, rid);
            if (is_imported) imported++;
            else consider(&local, ms, rid);
            r = next;
        }
        if (bad || bad_ts) {
            Py_DECREF(error);
            error = bad ? error_tuple(page - base, page_id, bad)
                        : timestamp_error(page - base, page_id, bad_ts, bad_ts_end);
            break;
        }
        PyObject *title = title_object(t, te);
        if (title == NULL) {
            PyErr_Clear();
            Py_DECREF(error);
            error = error_tuple(page - base, page_id, "a <title> that is not UTF-8");
            break;
        }
        if (append_new(cols[0], title) < 0 ||
            append_new(cols[1], PyLong_FromLongLong(ns)) < 0 ||
            append_new(cols[2], PyLong_FromLongLong(page_id)) < 0 ||
            append_new(cols[3], PyBool_FromLong(redirect)) < 0 ||
            append_new(cols[4], PyLong_FromLongLong(revisions)) < 0 ||
            append_new(cols[5], PyLong_FromLongLong(imported)) < 0)
            goto fail;
        if (all.set) {
            if (append_new(cols[6], PyLong_FromLongLong(all.ms)) < 0 ||
                append_new(cols[7], PyLong_FromLongLong(all.rid)) < 0)
                goto fail;
        } else if (PyList_Append(cols[6], Py_None) < 0 || PyList_Append(cols[7], Py_None) < 0) {
            goto fail;
        }
        if (local.set) {
            if (append_new(cols[8], PyLong_FromLongLong(local.ms)) < 0 ||
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
