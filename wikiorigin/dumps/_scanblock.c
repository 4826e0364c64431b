/* The compiled core of the page-creation scan (wikiorigin.dumps.stubs; driven by scanner.py).
 *
 * scan_block(buf, start, stop) walks the pages in buf[start:stop], which holds whole
 * <page>...</page> elements of a MediaWiki XML export, without the GIL, and returns
 * (pages, column buffers..., error): Arrow-ready packed little-endian buffers of titles
 * (UTF-8 data with entities decoded, int32 offsets), namespaces (int32), page ids (int64),
 * redirect flags (bitmap), revisions and imported revisions (int32), the earliest time of
 * all revisions (int64 ms since the epoch, UTC) with its revision id and validity bitmap,
 * the same for local (not imported) revisions; broken, a list of (offset, page id, message)
 * of the pages with a structural break (left out of the buffers, the scan goes on after them);
 * error is None or (offset, page id, message). The pages before an error are in the buffers.
 *
 * A structural break is an element not closed where the next one starts: a <page> opening
 * inside a page (its </page> lost), a <title> between revisions (the </page> and the <page>
 * of two pages lost), a <revision> inside a revision, a </revision> or </page> without its
 * opening tag, a <contributor> not closed in its revision, a <title>, <ns>, <id>,
 * <timestamp> or <username> whose text runs into the next tag. Reading on would give a page
 * the revisions of the next one, or keep markup in a title, so such a page is reported and
 * skipped; the next one is read as usual. The checks ride on the searches the walk makes
 * anyway (a page's or a revision's end is found by the tail its opening and closing tags
 * share, "page>" and "revision>", so a tag that must not be there costs one more compare),
 * so they cost next to nothing.
 *
 * A revision is imported when its contributor's <username> holds '>' (written "&gt;" by
 * MediaWiki). Ties on the timestamp go to the first revision in the file. Revision text is
 * skipped by the search for the revision's end (16 or 32 bytes at a time): dumps escape '<'
 * inside text, so tags cannot occur there.
 * Same rules as the Python path (_pyscan.py, _breaks.py); tests check both against mwxml. The
 * imported-revision rule is also written in creation.py, oracle.py and testing/stubs.py
 * (listed in creation.py): change them together.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define WIDE_SEARCH 1  /* AVX2, where the processor has it (checked when the module loads) */
#endif

#define LIT(s) s, (sizeof(s) - 1)

/* Whether n bytes are equal: a loop the compiler unrolls where n is known (a memcmp call
 * costs more than these few bytes). */
static inline int same(const char *a, const char *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* The first byte c in [p, end), as memchr: the next tag is a few bytes away as a rule, so the
 * first 64 bytes are looked at here (16 at a time with SSE2), without a call. */
static inline const char *next_byte(const char *p, const char *end, char c) {
    const char *near = end - p > 64 ? p + 64 : end;
#if defined(__SSE2__)
    const __m128i v = _mm_set1_epi8(c);
    while (near - p >= 16) {
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), v));
        if (m) return p + __builtin_ctz(m);
        p += 16;
    }
#endif
    for (; p < near; p++)
        if (*p == c) return p;
    return p < end ? memchr(p, c, (size_t)(end - p)) : NULL;
}

/* Tags are short and near: the first byte, then compare (memmem's setup costs more than the
 * search here). */
static inline const char *find(const char *p, const char *end, const char *needle, size_t n) {
    while (p + n <= end) {
        p = next_byte(p, end - n + 1, needle[0]);
        if (p == NULL) return NULL;
        if (same(p + 1, needle + 1, n - 1)) return p;
        p++;
    }
    return NULL;
}

/* The first needle (n >= 2 bytes) in [p, end). With SSE2, 16 places at a time (with AVX2,
 * 32): those where the needle's first and last bytes both stand are compared whole; the rest
 * (and every place without SSE2) goes to find(). A page or a revision is skipped this way at
 * memory speed, not '<' by '<'. */
static const char *search_sse2(const char *p, const char *end, const char *needle, size_t n) {
#if defined(__SSE2__)
    const __m128i first = _mm_set1_epi8(needle[0]), last = _mm_set1_epi8(needle[n - 1]);
    while (end - p >= (ptrdiff_t)(n + 15)) {  /* both loads lie before end */
        __m128i a = _mm_loadu_si128((const __m128i *)p);
        __m128i b = _mm_loadu_si128((const __m128i *)(p + n - 1));
        unsigned mask = (unsigned)_mm_movemask_epi8(
            _mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, last)));
        while (mask) {
            unsigned i = (unsigned)__builtin_ctz(mask);
            if (same(p + i + 1, needle + 1, n - 2)) return p + i;
            mask &= mask - 1;
        }
        p += 16;
    }
#endif
    return find(p, end, needle, n);
}

#ifdef WIDE_SEARCH
static int have_avx2;

__attribute__((target("avx2")))
static const char *search_avx2(const char *p, const char *end, const char *needle, size_t n) {
    const __m256i first = _mm256_set1_epi8(needle[0]), last = _mm256_set1_epi8(needle[n - 1]);
    while (end - p >= (ptrdiff_t)(n + 31)) {  /* both loads lie before end */
        __m256i a = _mm256_loadu_si256((const __m256i *)p);
        __m256i b = _mm256_loadu_si256((const __m256i *)(p + n - 1));
        unsigned mask = (unsigned)_mm256_movemask_epi8(
            _mm256_and_si256(_mm256_cmpeq_epi8(a, first), _mm256_cmpeq_epi8(b, last)));
        while (mask) {
            unsigned i = (unsigned)__builtin_ctz(mask);
            if (same(p + i + 1, needle + 1, n - 2)) return p + i;
            mask &= mask - 1;
        }
        p += 32;
    }
    return search_sse2(p, end, needle, n);
}
#endif

static const char *search(const char *p, const char *end, const char *needle, size_t n) {
#ifdef WIDE_SEARCH
    if (have_avx2) return search_avx2(p, end, needle, n);
#endif
    return search_sse2(p, end, needle, n);
}

/* The first "<name>" or "</name>" that starts at or after p, found by its common tail
 * "name>" (suffix, n bytes); *closing: 0 for "<name>", 1 for "</name>". The tails come in
 * the order of the tags, so this is the first of the two tags as find2 gives it. */
static const char *find_tag(const char *p, const char *end, const char *suffix, size_t n,
                            int *closing) {
    const char *q = p + 1;
    while (q < end && (q = search(q, end, suffix, n)) != NULL) {
        if (q[-1] == '<') { *closing = 0; return q - 1; }
        if (q - 2 >= p && q[-1] == '/' && q[-2] == '<') { *closing = 1; return q - 2; }
        q++;
    }
    return NULL;
}

/* The first of two tags (both start with '<') from p; *which: 0 for a, 1 for b. One memchr
 * pass, so looking for a tag that must not be there costs one more compare per '<'. */
static const char *find2(const char *p, const char *end, const char *a, size_t na,
                         const char *b, size_t nb, int *which) {
    while (p < end) {
        p = next_byte(p, end, '<');
        if (p == NULL) return NULL;
        size_t left = (size_t)(end - p);
        if (left >= na && same(p + 1, a + 1, na - 1)) { *which = 0; return p; }
        if (left >= nb && same(p + 1, b + 1, nb - 1)) { *which = 1; return p; }
        p++;
    }
    return NULL;
}

/* whether the closing tag stands at p */
static int closed_at(const char *p, const char *end, const char *close, size_t n) {
    return (size_t)(end - p) >= n && same(p, close, n);
}

/* The number before the next '<': 1 read, 0 not a number, -1 a number past 64 bits (the same
 * rule as _breaks.py's in_range: its magnitude over 2^63 - 1). */
static int parse_int(const char *p, const char *end, long long *out) {
    int neg = 0, any = 0, over = 0;
    long long v = 0;
    if (p < end && *p == '-') { neg = 1; p++; }
    for (; p < end && *p >= '0' && *p <= '9'; p++, any = 1) {
        int d = *p - '0';
        if (v > (LLONG_MAX - d) / 10) over = 1;
        else v = v * 10 + d;
    }
    if (!any || p >= end || *p != '<') return 0;
    if (over) return -1;
    *out = neg ? -v : v;
    return 1;
}

/* A page id: digits only (no sign), as parse_int reads them. */
static int parse_id(const char *p, const char *end, long long *out) {
    return p < end && *p == '-' ? 0 : parse_int(p, end, out);
}

/* the text of <tag>...</tag> starting the search at p; returns 0 when absent */
static int element(const char *p, const char *end, const char *open, size_t n_open,
                   const char **text, const char **text_end) {
    const char *s = find(p, end, open, n_open);
    if (!s) return 0;
    s += n_open;
    const char *e = next_byte(s, end, '<');
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

/* A growable byte buffer (the columns are built as packed little-endian arrays). */
typedef struct {
    char *data;
    size_t len, cap;
} Buf;

static int grow(Buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra) cap *= 2;
    char *d = realloc(b->data, cap);
    if (d == NULL) return 0;
    b->data = d;
    b->cap = cap;
    return 1;
}

static int put(Buf *b, const void *v, size_t n) {
    if (!grow(b, n)) return 0;
    memcpy(b->data + b->len, v, n);
    b->len += n;
    return 1;
}

/* one bit per page, Arrow's order (least significant bit first) */
static int put_bit(Buf *b, size_t index, int bit) {
    if (index % 8 == 0) {
        char zero = 0;
        if (!put(b, &zero, 1)) return 0;
    }
    if (bit) b->data[index / 8] |= (char)(1 << (index % 8));
    return 1;
}

enum { TITLES, OFFSETS, NS, IDS, REDIRECT, REVS, IMPORTED, ALL_MS, ALL_RID, ALL_VALID,
       LOCAL_MS, LOCAL_RID, LOCAL_VALID, N_COLUMNS };

typedef struct {
    Py_ssize_t offset;      /* of the page in the buffer */
    long long page_id;      /* -1 when unknown */
    const char *message;    /* NULL: no error */
    const char *found, *found_end;  /* the text at fault (a timestamp, a number), quoted after it */
} ScanError;

/* A page left out for a structural break: "<what> not closed where <seen> starts", or
 * <what> alone when seen is empty. */
typedef struct {
    Py_ssize_t offset;      /* of the break in the buffer */
    long long page_id;      /* -1 when unknown */
    const char *what;
    char seen[32];          /* the tag found instead, NUL-terminated */
} Broken;

static void set_broken(Broken *b, const char *base, const char *at, const char *end,
                       const char *what) {
    b->offset = at - base;
    b->what = what;
    size_t n = 0;
    if (what[0] == '<' && at < end && *at == '<') {  /* the tag standing there, to its '>' */
        while (n < sizeof(b->seen) - 1 && at + n < end && at[n] != '>' && at[n] != '\n') n++;
        if (at + n < end && at[n] == '>' && n < sizeof(b->seen) - 1) n++;
        memcpy(b->seen, at, n);
    }
    b->seen[n] = 0;
}

/* Whether the <contributor> right after a revision's timestamp names an imported user
 * (its <username> holds '>', which MediaWiki writes as "&gt;"): 1 or 0, -1 when the
 * <username> or the <contributor> is not closed (*unclosed names it, *cursor points where
 * the next tag starts). Moves *cursor past what was read. */
static int contributor_is_imported(const char *ts_e, const char *page_end, const char **cursor,
                                   const char **unclosed) {
    const char *c = find(ts_e, page_end, LIT("<contributor"));
    if (c == NULL || c - ts_e > 64) return 0;  /* not this revision's: look no further */
    const char *c_close = next_byte(c, page_end, '>');
    if (c_close == NULL) return 0;
    *cursor = c_close;
    if (c_close[-1] == '/') return 0;  /* <contributor deleted="deleted" /> */
    /* MediaWiki writes <username> (or <ip>) first inside <contributor> */
    const char *u = c_close + 1, *ue;
    while (u < page_end && (*u == ' ' || *u == '\n' || *u == '\t' || *u == '\r')) u++;
    if (page_end - u > 10 && same(u, LIT("<username>"))) {
        u += 10;
        ue = next_byte(u, page_end, '<');
        if (ue == NULL) return 0;
    } else {
        /* </contributor>, unless this revision ends first (then it was lost) */
        int which;
        const char *c_end = find2(c_close, page_end, LIT("</contributor>"), LIT("</revision>"), &which);
        if (c_end == NULL) return 0;
        *cursor = c_end;
        if (which == 1) { *unclosed = "<contributor>"; return -1; }
        if (!element(c_close, c_end, LIT("<username>"), &u, &ue)) return 0;
    }
    *cursor = ue;
    if (!closed_at(ue, page_end, LIT("</username>"))) { *unclosed = "<username>"; return -1; }
    /* '>' may also stand unescaped in element text */
    return next_byte(u, ue, '>') != NULL || find(u, ue, LIT("&gt;")) != NULL;
}

/* Walk the revisions of one page from its first <revision>. A structural break goes to
 * *brk (and ends the walk), other damage to *err. */
static void scan_revisions(const char *base, const char *r, const char *page_end,
                           int32_t *revisions, int32_t *imported, Earliest *all,
                           Earliest *local, ScanError *err, Broken *brk) {
    while (r) {
        /* One forward pass: <id>, <timestamp>, <contributor>, then </revision> from there. */
        const char *rid_s, *rid_e, *ts, *ts_e;
        long long rid, ms;
        int closing;
        if (!element(r + 10, page_end, LIT("<id>"), &rid_s, &rid_e) ||
            !element(rid_e, page_end, LIT("<timestamp>"), &ts, &ts_e) ||
            /* they stand at the head of a revision (after <parentid> at most); found
             * further on, or past the revision's end, they belong to a later revision */
            rid_s - r > 64 || ts - rid_e > 256 || find(rid_e, ts, LIT("revision>")) != NULL) {
            err->message = "a <revision> without <id> or <timestamp>";
            return;
        }
        if (!closed_at(rid_e, page_end, LIT("</id>"))) {
            set_broken(brk, base, rid_e, page_end, "<id>");
            return;
        }
        if (!closed_at(ts_e, page_end, LIT("</timestamp>"))) {
            set_broken(brk, base, ts_e, page_end, "<timestamp>");
            return;
        }
        int rid_read = parse_int(rid_s, page_end, &rid);
        if (rid_read <= 0) {
            err->message = rid_read ? "a revision <id> out of range" : "a <revision> without <id> or <timestamp>";
            if (rid_read) { err->found = rid_s; err->found_end = rid_e; }
            return;
        }
        const char *cursor = ts_e, *unclosed = NULL;
        int is_imported = contributor_is_imported(ts_e, page_end, &cursor, &unclosed);
        if (is_imported < 0) {
            set_broken(brk, base, cursor, page_end, unclosed);
            return;
        }
        /* </revision>, unless a <revision> starts first (this one's end was lost) */
        const char *r_end = find_tag(cursor, page_end, LIT("revision>"), &closing);
        if (r_end == NULL || !closing) {
            set_broken(brk, base, r_end ? r_end : page_end, page_end + 7, "<revision>");
            return;
        }
        if (ts_e - ts != 20 || !parse_timestamp(ts, &ms)) {
            err->message = "malformed <timestamp>";
            err->found = ts;
            err->found_end = ts_e;
            return;
        }
        (*revisions)++;
        consider(all, ms, rid);
        if (is_imported) (*imported)++;
        else consider(local, ms, rid);
        /* the next <revision>: as a rule right after this one, across whitespace */
        const char *q = r_end + 11;
        while (q < page_end && (*q == ' ' || *q == '\n' || *q == '\t' || *q == '\r')) q++;
        if (closed_at(q, page_end, LIT("<revision>"))) { r = q; continue; }
        /* else: a </revision> first is one whose <revision> was lost; a <title> between
         * revisions is the head of the next page, whose </page> and <page> were lost */
        r = find_tag(q, page_end, LIT("revision>"), &closing);
        if (r != NULL && closing) {
            set_broken(brk, base, r, page_end, "a </revision> without its <revision>");
            return;
        }
        const char *title = find(q, r ? r : page_end, LIT("<title>"));
        if (title != NULL) {
            set_broken(brk, base, title, page_end, "<page>");
            return;
        }
    }
}

/* The text of <tag> (after p, before end) and whether it is closed: 1 read, 0 absent,
 * -1 not closed (*text_end is where the next tag starts). */
static int head_field(const char *p, const char *end, const char *open, size_t n_open,
                      const char *close, size_t n_close, const char **text, const char **text_end) {
    if (!element(p, end, open, n_open, text, text_end)) return 0;
    return closed_at(*text_end, end, close, n_close) ? 1 : -1;
}

/* Walk the pages in [p, block_end); no Python calls, so it runs without the GIL. Pages
 * with a structural break go to *broken and are left out. */
static size_t scan(const char *base, const char *p, const char *block_end, Buf *col,
                   Buf *broken, ScanError *err) {
    size_t pages = 0;
    int32_t offset = 0;
    if (!put(&col[OFFSETS], &offset, 4)) { err->message = "out of memory"; return 0; }
    while (p < block_end) {
        Broken brk = {0, -1, NULL, {0}};
        int closing;
        /* the next <page>; a </page> first closes a page whose <page> was lost */
        const char *page = find_tag(p, block_end, LIT("page>"), &closing);
        if (!page) break;
        if (closing) {
            const char *id_s, *id_e;
            long long lost_id;
            set_broken(&brk, base, page, block_end, "a </page> without its <page>");
            if (element(p, page, LIT("<id>"), &id_s, &id_e) && parse_id(id_s, page, &lost_id) > 0)
                brk.page_id = lost_id;
            if (!put(broken, &brk, sizeof brk)) { err->message = "out of memory"; break; }
            p = page + 7;
            continue;
        }
        err->offset = page - base;
        err->page_id = -1;
        /* </page>, unless a <page> starts first (this one's end was lost) */
        const char *page_end = find_tag(page + 6, block_end, LIT("page>"), &closing);
        if (!page_end) { err->message = "a <page> without </page> in the block"; break; }
        int lost_end = !closing;  /* a <page> came first */
        const char *t = NULL, *te = NULL, *ns_s = NULL, *ns_e = NULL, *id_s = NULL, *id_e = NULL;
        long long ns = 0, page_id = -1;
        /* <title> comes first in a page */
        const char *h = page + 6;
        while (h < page_end && (*h == ' ' || *h == '\n' || *h == '\t' || *h == '\r')) h++;
        int got_t = closed_at(h, page_end, LIT("<title>"))
            ? head_field(h, page_end, LIT("<title>"), LIT("</title>"), &t, &te) : 0;
        /* read on after a break in the head: the report names the page id */
        int got_ns = got_t ? head_field(te, page_end, LIT("<ns>"), LIT("</ns>"), &ns_s, &ns_e) : 0;
        int got_id = got_ns ? head_field(ns_e, page_end, LIT("<id>"), LIT("</id>"), &id_s, &id_e) : 0;
        int id_read = got_id > 0 ? parse_id(id_s, page_end, &page_id) : 0;
        if (id_read > 0) brk.page_id = page_id;
        else page_id = -1;
        if (lost_end) set_broken(&brk, base, page_end, block_end, "<page>");
        else if (got_t < 0) set_broken(&brk, base, te, page_end, "<title>");
        else if (got_ns < 0) set_broken(&brk, base, ns_e, page_end, "<ns>");
        else if (got_id < 0) set_broken(&brk, base, id_e, page_end, "<id>");
        if (brk.what) {
            if (!put(broken, &brk, sizeof brk)) { err->message = "out of memory"; break; }
            p = lost_end ? page_end : page_end + 7;
            continue;
        }
        if (id_read < 0) {
            err->message = "a page <id> out of range";
            err->found = id_s;
            err->found_end = id_e;
            break;
        }
        int ns_read = got_id ? parse_int(ns_s, page_end, &ns) : 0;
        if (ns_read == 0 || page_id < 0) {
            err->message = "expected <page> with <title>, <ns>, <id>";
            break;
        }
        err->page_id = page_id;
        if (ns_read < 0 || ns < INT32_MIN || ns > INT32_MAX) {
            err->message = "a <ns> out of range";
            err->found = ns_s;
            err->found_end = ns_e;
            break;
        }
        /* the first <revision>; a </revision> first is one whose <revision> was lost */
        const char *first_rev = find_tag(id_e, page_end, LIT("revision>"), &closing);
        if (first_rev != NULL && closing) {
            set_broken(&brk, base, first_rev, page_end, "a </revision> without its <revision>");
            if (!put(broken, &brk, sizeof brk)) { err->message = "out of memory"; break; }
            p = page_end + 7;
            continue;
        }
        const char *head_end = first_rev ? first_rev : page_end;
        int redirect = find(id_e, head_end, LIT("<redirect")) != NULL;

        int32_t revisions = 0, imported = 0;
        Earliest all = {0, 0, 0}, local = {0, 0, 0};
        scan_revisions(base, first_rev, page_end, &revisions, &imported, &all, &local, err, &brk);
        if (err->message) break;
        if (brk.what) {
            if (!put(broken, &brk, sizeof brk)) { err->message = "out of memory"; break; }
            p = page_end + 7;
            continue;
        }
        /* the title, its entities decoded (UTF-8 is checked by the caller) */
        if (!grow(&col[TITLES], (size_t)(te - t))) { err->message = "out of memory"; break; }
        col[TITLES].len += (size_t)unescape(t, te, col[TITLES].data + col[TITLES].len);
        if (col[TITLES].len > INT32_MAX) { err->message = "titles exceed 2 GB in a block"; break; }
        offset = (int32_t)col[TITLES].len;
        int32_t ns32 = (int32_t)ns;
        long long zero = 0;
        int ok = put(&col[OFFSETS], &offset, 4) && put(&col[NS], &ns32, 4) &&
                 put(&col[IDS], &page_id, 8) && put_bit(&col[REDIRECT], pages, redirect) &&
                 put(&col[REVS], &revisions, 4) && put(&col[IMPORTED], &imported, 4) &&
                 put(&col[ALL_MS], all.set ? &all.ms : &zero, 8) &&
                 put(&col[ALL_RID], all.set ? &all.rid : &zero, 8) &&
                 put_bit(&col[ALL_VALID], pages, all.set) &&
                 put(&col[LOCAL_MS], local.set ? &local.ms : &zero, 8) &&
                 put(&col[LOCAL_RID], local.set ? &local.rid : &zero, 8) &&
                 put_bit(&col[LOCAL_VALID], pages, local.set);
        if (!ok) { err->message = "out of memory"; break; }
        pages++;
        p = page_end + 7;
    }
    return pages;
}

static PyObject *broken_list(const Buf *broken) {
    size_t n = broken->len / sizeof(Broken);
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (list == NULL) return NULL;
    for (size_t i = 0; i < n; i++) {
        const Broken *b = (const Broken *)broken->data + i;
        PyObject *msg = b->seen[0]
            ? PyUnicode_FromFormat("%s not closed where %s starts", b->what, b->seen)
            : PyUnicode_FromString(b->what);
        PyObject *item = msg ? Py_BuildValue("(nLN)", b->offset, b->page_id, msg) : NULL;
        if (item == NULL) { Py_DECREF(list); return NULL; }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

static PyObject *error_object(const ScanError *err) {
    if (err->message == NULL) Py_RETURN_NONE;
    if (err->found == NULL) return Py_BuildValue("(nLs)", err->offset, err->page_id, err->message);
    Py_ssize_t n = err->found_end - err->found > 40 ? 40 : err->found_end - err->found;
    PyObject *found = PyBytes_FromStringAndSize(err->found, n);
    if (found == NULL) return NULL;
    PyObject *msg = PyUnicode_FromFormat("%s %R", err->message, found);
    Py_DECREF(found);
    if (msg == NULL) return NULL;
    return Py_BuildValue("(nLN)", err->offset, err->page_id, msg);
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
    Buf col[N_COLUMNS], broken = {NULL, 0, 0};
    memset(col, 0, sizeof(col));
    ScanError err = {0, -1, NULL, NULL, NULL};
    size_t pages;
    Py_BEGIN_ALLOW_THREADS  /* the decompressor's thread goes on meanwhile */
    pages = scan(base, base + start, base + stop, col, &broken, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);

    /* the result, item by item: at the first that cannot be made, what was made is released
     * and NULL returned with Python's error set (a tuple frees the items it holds) */
    PyObject *result = PyTuple_New(N_COLUMNS + 3), *item = NULL;
    for (int i = 0; result != NULL && i < N_COLUMNS + 3; i++) {
        if (i == 0) item = PyLong_FromSize_t(pages);
        else if (i <= N_COLUMNS)
            item = PyBytes_FromStringAndSize(col[i - 1].data ? col[i - 1].data : "", (Py_ssize_t)col[i - 1].len);
        else item = i == N_COLUMNS + 1 ? broken_list(&broken) : error_object(&err);
        if (item == NULL) Py_CLEAR(result);
        else PyTuple_SET_ITEM(result, i, item);
    }
    for (int i = 0; i < N_COLUMNS; i++) free(col[i].data);
    free(broken.data);
    return result;
}

static PyMethodDef methods[] = {
    {"scan_block", scan_block, METH_VARARGS,
     "scan_block(buf, start, stop) -> columns of the pages in buf[start:stop], the broken pages, an error"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_scanblock", "Compiled core of the page-creation scan.", -1, methods,
};

PyMODINIT_FUNC PyInit__scanblock(void) {
#ifdef WIDE_SEARCH
    __builtin_cpu_init();
    have_avx2 = __builtin_cpu_supports("avx2");
#endif
    return PyModule_Create(&module);
}
