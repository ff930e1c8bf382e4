# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled hot path of `summary` (see compiled.py): the common lines of SGLang's logs read in
C, the values of batch lines written straight into the rows of the summary's series, no object
made per line.

What it reads, exactly as LineParser.parse reads it (tests/unit/test_compiled.py, test_lane_envelopes.py and
test_fast_general.py hold it to that):
- a batch line, raw or in journald's `short(-precise)`, `short-iso(-precise)`, `short-monotonic` or `json`
  envelope, syslog's (RFC 3164: short's shape behind a priority; RFC 5424), Docker's json-file or
  Kubernetes' CRI (a zoned one, all but short's, short-monotonic's and RFC 3164's, is the clock of its
  lines, as parse's `line.zoned`: their time is the envelope's), or behind a Ray actor's decoration, with
  SGLang's prefix (parse/__init__.py's _FAST: the same shapes, written out below), and a body of a
  layout that the Python fast path reads (sglang.layout_of), in plain numbers (`12`, `-3`, `0.75`);
- any other line with SGLang's prefix that is no batch line cut short: ordinary text (counted),
  or, when it has a word of an event (events.WORDS), what events.classify makes of it, handed to
  the sink; its date noted as parse() notes it.
It stops at anything else (and at any line with a control character or a non-ASCII one; in a
json line, at a MESSAGE (Docker's `log`), __REALTIME_TIMESTAMP (`time`) or _HOSTNAME that is no plain
string of printable ASCII (an escape but \\", \\\\ and a last \\n, a byte array, null), given twice or
missing (the host may be), or a line that is not exactly one object of strings and nulls; at a stamp
that no clock shows); the caller parses that line in Python and scans on after it.

Numbers: an integer of up to 15 digits is exact as a double; a decimal of up to 15 digits is its
digits (exact) over a power of ten (exact), one correctly rounded division: the double float()
gives.
"""

cimport cython
from cpython cimport array
from libc.math cimport fabs, fmod
from libc.string cimport memchr, memcmp, memcpy, memset

from mtptui.core.parse import events, sglang
from mtptui.core.parse.limits import MAX_LINE
from mtptui.core.records import DECODE, PREFILL, TIME, Event

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)
    void* PyUnicode_DATA(object o)
    object PyUnicode_DecodeASCII(const char* s, Py_ssize_t size, const char* errors)
    object PyUnicode_DecodeUTF8(const char* s, Py_ssize_t size, const char* errors)

KINDS = (DECODE, PREFILL)

DEF MAX_FIELDS = 64
DEF MAX_COLUMNS = 16
DEF MAX_DIGITS = 15
DEF KEY_SIZE = 256  # host, engine and rank of a series, as the table keys them
DEF SLOTS = 1024  # the table of series (a power of two); cleared when half full

cdef double NAN = float("nan")
cdef double INF = float("inf")
cdef double[MAX_DIGITS + 1] POW10
cdef int _k
POW10[0] = 1.0
for _k in range(1, MAX_DIGITS + 1):
    POW10[_k] = POW10[_k - 1] * 10.0

cdef const char* MONTHS = b"JanFebMarAprMayJunJulAugSepOctNovDec"

cdef enum:
    T_INT = 0
    T_FLOAT = 1
    T_GRAPH = 2


cdef inline bint digit(char c) nogil:
    return c'0' <= c <= c'9'


cdef inline int two(const char* s) nogil:
    return (s[0] - c'0') * 10 + (s[1] - c'0')


cdef long long days_from_civil(long long y, int m, int d) nogil:
    """Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm); a day
    past the month's end runs into the next month, as calendar.timegm's does."""
    y -= m <= 2
    cdef long long era = (y if y >= 0 else y - 399) // 400
    cdef long long yoe = y - era * 400
    cdef long long doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5
    cdef long long doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468 + d - 1


cdef struct Line:
    Py_ssize_t size
    Py_ssize_t host0, host1  # journald's host; host0 < 0 without an envelope
    Py_ssize_t eng0, eng1, ip0, ip1  # a Ray actor's pid and ip; eng0 < 0 without one
    Py_ssize_t stamp  # the prefix's `YYYY-MM-DD HH:MM:SS`
    Py_ssize_t rank0, rank1
    Py_ssize_t msg  # after the prefix
    Py_ssize_t body  # after a batch head
    int kind  # 0 decode, 1 prefill, -1 no batch head
    double ts  # NAN for a stamp that is no time
    int env_sod  # the envelope's second of the day; -1 without an envelope
    bint zoned  # the envelope's time is the line's (short-iso, json): env_ts
    bint escaped  # a json MESSAGE with \\" or \\\\ in it (ordinary text only: _other)
    double env_ts
    Py_ssize_t cur0, cur1  # a json line's __CURSOR; cur0 < 0 without one


cdef inline bint two_clocks(double ts, int env_sod) nogil:
    """Whether a stamp and its envelope's second of the day are a quarter hour or more apart
    (half of parse.CLOCK_STEP_S): the server's clock is another zone's than the envelope's."""
    cdef double d = fabs(fmod(ts, 86400.0) - env_sod)
    if d > 43200.0:
        d = 86400.0 - d
    return d >= 450.0


cdef Py_ssize_t envelope(const char* s, Py_ssize_t n, Line* ln) nogil:
    """The end of journald's `short` envelope at the start (`Mar 09 16:00:00[.123] host
    tag[pid]: `), or 0 when there is none."""
    cdef Py_ssize_t p, q
    cdef int i
    if n < 20 or s[3] != c' ':
        return 0
    for i in range(12):
        if s[0] == MONTHS[3 * i] and s[1] == MONTHS[3 * i + 1] and s[2] == MONTHS[3 * i + 2]:
            break
    else:
        return 0
    if not ((s[4] == c' ' or digit(s[4])) and digit(s[5]) and s[6] == c' ' and digit(s[7]) and digit(s[8])
            and s[9] == c':' and digit(s[10]) and digit(s[11]) and s[12] == c':' and digit(s[13])
            and digit(s[14])):
        return 0
    p = 15
    if s[p] == c'.':
        q = p + 1
        while q < n and digit(s[q]) and q - p <= 6:
            q += 1
        if q == p + 1 or q - p > 7:
            return 0
        p = q
    if p >= n or s[p] != c' ':
        return 0
    ln.env_sod = (two(s + 7) * 60 + two(s + 10)) * 60 + two(s + 13)
    return host_and_tag(s, n, p + 1, ln)


cdef Py_ssize_t host_and_tag(const char* s, Py_ssize_t n, Py_ssize_t p, Line* ln) nogil:
    """After an envelope's stamp and its space: `host tag[pid]: ` (envelope.py's `(\\S+)
    [^\\s\\[:]+(?:\\[\\d+\\])?: ?`), the end of it, or 0."""
    cdef Py_ssize_t q = p
    while q < n and s[q] > c' ':
        q += 1
    if q == p or q >= n or s[q] != c' ':
        return 0
    ln.host0, ln.host1 = p, q
    p = q + 1
    q = p
    while q < n and s[q] > c' ' and s[q] != c'[' and s[q] != c':':
        q += 1
    if q == p or q >= n:
        return 0
    if s[q] == c'[':
        q += 1
        p = q
        while q < n and digit(s[q]):
            q += 1
        if q == p or q >= n or s[q] != c']':
            return 0
        q += 1
    if q >= n or s[q] != c':':
        return 0
    q += 1
    if q < n and s[q] == c' ':
        q += 1
    return q


cdef inline int days_in(long long y, int m) nogil:
    if m == 2:
        return 29 if (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)) else 28
    return 30 if m == 4 or m == 6 or m == 9 or m == 11 else 31


cdef long long MAX_EXACT_US = (<long long>1) << 53  # microseconds are exact as a double below this


cdef Py_ssize_t iso_envelope(const char* s, Py_ssize_t n, Line* ln) nogil:
    """The end of journald's `short-iso(-precise)` envelope at the start (`2026-03-09T16:00:00[.123456]
    (Z|+00:00|+0000) host tag[pid]: `), its time in ln.env_ts as envelope.py's (datetime.fromisoformat's
    timestamp(): whole microseconds over a million), or 0 when there is none or its stamp is no time
    there (the Python path reads that line)."""
    cdef Py_ssize_t p = 19, q
    cdef long long year, days, us = 0, total
    cdef int month, day, hh, mm, ss, zh, zm, k
    if n < 26:
        return 0
    if not (digit(s[0]) and digit(s[1]) and digit(s[2]) and digit(s[3]) and s[4] == c'-' and digit(s[5])
            and digit(s[6]) and s[7] == c'-' and digit(s[8]) and digit(s[9]) and s[10] == c'T'
            and digit(s[11]) and digit(s[12]) and s[13] == c':' and digit(s[14]) and digit(s[15])
            and s[16] == c':' and digit(s[17]) and digit(s[18])):
        return 0
    if s[p] == c'.':
        q = p + 1
        while q < n and digit(s[q]) and q - p <= 6:
            us = us * 10 + (s[q] - c'0')
            q += 1
        if q == p + 1 or q - p > 7 or (q < n and digit(s[q])):
            return 0
        for k in range(<int>(q - p - 1), 6):
            us *= 10
        p = q
    if p >= n:
        return 0
    if s[p] == c'Z':
        zh = zm = 0
        p += 1
    elif s[p] == c'+' or s[p] == c'-':
        if n - p < 6 or not (digit(s[p + 1]) and digit(s[p + 2])):
            return 0
        zh = two(s + p + 1)
        q = p + 3
        if s[q] == c':':
            q += 1
        if n - q < 2 or not (digit(s[q]) and digit(s[q + 1])):
            return 0
        zm = two(s + q)
        if s[p] == c'-':
            zh, zm = -zh, -zm
        p = q + 2
    else:
        return 0
    if p >= n or s[p] != c' ':
        return 0
    year = two(s) * 100 + two(s + 2)
    month, day, hh, mm, ss = two(s + 5), two(s + 8), two(s + 11), two(s + 14), two(s + 17)
    if not (year >= 1 and 1 <= month <= 12 and 1 <= day <= days_in(year, month) and hh < 24 and mm < 60
            and ss < 60 and -24 < zh < 24 and -60 < zm < 60):
        return 0  # fromisoformat refuses it (or may read it its own way): the Python path's to read
    days = days_from_civil(year, month, day)
    total = (((days * 24 + hh) * 60 + mm) * 60 + ss - (zh * 60 + zm) * 60) * 1000000 + us
    if not -MAX_EXACT_US < total < MAX_EXACT_US:
        return 0
    ln.env_ts = <double>total / 1e6
    ln.zoned = True
    return host_and_tag(s, n, p + 1, ln)


cdef inline Py_ssize_t json_ws(const char* s, Py_ssize_t n, Py_ssize_t p) nogil:
    while p < n and (s[p] == c' ' or s[p] == c'\t' or s[p] == c'\n' or s[p] == c'\r'):
        p += 1
    return p


cdef inline bint hex_digit(char c) nogil:
    return digit(c) or (c'a' <= c <= c'f') or (c'A' <= c <= c'F')


cdef extern from *:
    """
    /* The first byte of 16 that a JSON string's scan must look at (a quote, a backslash, a control
       character, DEL or no ASCII), as a bit mask; SSE2 where the compiler has it. */
    #if defined(__SSE2__)
    #include <emmintrin.h>
    static inline int mtptui_special16(const char* s) {
        __m128i x = _mm_loadu_si128((const __m128i*)s);
        __m128i m = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')), _mm_cmpeq_epi8(x, _mm_set1_epi8(0x5c))),
            _mm_or_si128(_mm_cmplt_epi8(x, _mm_set1_epi8(0x20)), _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f))));
        return _mm_movemask_epi8(m);
    }
    #else
    static inline int mtptui_special16(const char* s) {
        int m = 0, i;
        for (i = 0; i < 16; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == '"' || c == 0x5c || c < 0x20 || c >= 0x7f) m |= 1 << i;
        }
        return m;
    }
    #endif
    static inline int mtptui_lowest(int m) {
    #if defined(__GNUC__)
        return __builtin_ctz((unsigned)m);
    #else
        int i = 0;
        while (!(m & 1)) { m >>= 1; i++; }
        return i;
    #endif
    }
    """
    int mtptui_special16(const char* s) nogil
    int mtptui_lowest(int m) nogil


cdef enum:
    S_QUOTE = 1  # a \" or \\ in it
    S_NEWLINE = 2  # it ends in the escape \\n (envelope.clean takes that newline off a message)
    S_OTHER = 4  # any other escape, DEL or no ASCII


cdef Py_ssize_t json_string(const char* s, Py_ssize_t n, Py_ssize_t p, int* flags) nogil:
    """The end (the closing quote) of a JSON string whose text begins at p, or -1 for one that
    json.loads refuses (a control character, a bad escape, no end). flags: what is in it (S_*, 0
    for printable ASCII without an escape: its text is its bytes). A message with S_QUOTE only is
    ordinary text whose words are its bytes' (no word holds either)."""
    cdef unsigned char c
    cdef int m
    flags[0] = 0
    while p < n:
        if n - p >= 16:  # 16 bytes at a time to the next one to look at
            m = mtptui_special16(s + p)
            if m == 0:
                p += 16
                continue
            p += mtptui_lowest(m)
        c = <unsigned char>s[p]
        if c == c'"':
            return p
        if c < 32:
            return -1
        if c == c'\\':
            p += 1
            if p >= n:
                return -1
            c = <unsigned char>s[p]
            if c == c'"' or c == c'\\':
                flags[0] |= S_QUOTE
            elif c == c'n' and p + 1 < n and s[p + 1] == c'"':
                flags[0] |= S_NEWLINE
            else:
                flags[0] |= S_OTHER
            if c == c'u':
                if n - p < 5 or not (hex_digit(s[p + 1]) and hex_digit(s[p + 2]) and hex_digit(s[p + 3])
                                     and hex_digit(s[p + 4])):
                    return -1
                p += 4
            elif not (c == c'"' or c == c'\\' or c == c'/' or c == c'b' or c == c'f' or c == c'n' or c == c'r'
                      or c == c't'):
                return -1
        elif c > 126:
            flags[0] |= S_OTHER
        p += 1
    return -1


cdef Py_ssize_t rfc3339(const char* s, Py_ssize_t n, Py_ssize_t p, double* ts) nogil:
    """The end of an RFC 3339 stamp at p (timeparse.RFC3339: `2026-03-09T16:03:25[.123456789](Z|+01:00|
    +0100)`), its time in ts as timeparse.instant gives it (the second as calendar.timegm's, plus the
    fraction's digits over their power of ten, less the zone's offset, in that order); 0 for no such
    stamp or one that no clock shows (ymd_hms' None)."""
    cdef const char* t = s + p
    cdef Py_ssize_t q = p + 19, f
    cdef long long frac = 0
    cdef int year, month, day, hh, mm, ss, digits = 0, off = 0
    if n - p < 20:
        return 0
    if not (digit(t[0]) and digit(t[1]) and digit(t[2]) and digit(t[3]) and t[4] == c'-' and digit(t[5])
            and digit(t[6]) and t[7] == c'-' and digit(t[8]) and digit(t[9]) and t[10] == c'T'
            and digit(t[11]) and digit(t[12]) and t[13] == c':' and digit(t[14]) and digit(t[15])
            and t[16] == c':' and digit(t[17]) and digit(t[18])):
        return 0
    if s[q] == c'.':
        f = q + 1
        while f < n and digit(s[f]):
            if f - q > 9:
                return 0
            frac = frac * 10 + (s[f] - c'0')
            f += 1
        digits = <int>(f - q - 1)
        if digits == 0:
            return 0
        q = f
    if q >= n:
        return 0
    if s[q] == c'Z':
        q += 1
    elif s[q] == c'+' or s[q] == c'-':
        if n - q < 5 or not (digit(s[q + 1]) and digit(s[q + 2])):
            return 0
        f = q + 3
        if s[f] == c':':
            f += 1
        if n - f < 2 or not (digit(s[f]) and digit(s[f + 1])):
            return 0
        off = (two(s + q + 1) * 60 + two(s + f)) * 60
        if s[q] == c'-':
            off = -off
        q = f + 2
    else:
        return 0
    year = two(t) * 100 + two(t + 2)
    month, day, hh, mm, ss = two(t + 5), two(t + 8), two(t + 11), two(t + 14), two(t + 17)
    if not (year >= 1 and 1 <= month <= 12 and 1 <= day <= 31 and hh < 24 and mm < 60 and ss < 62):
        return 0
    ts[0] = <double>(((days_from_civil(year, month, day) * 24 + hh) * 60 + mm) * 60 + ss)
    if digits:
        ts[0] += <double>frac / POW10[digits]
    ts[0] -= <double>off
    return q


cdef Py_ssize_t cri_envelope(const char* s, Py_ssize_t n, Line* ln) nogil:
    """The end of a Kubernetes CRI line's envelope at the start (`2026-03-09T16:03:25.123456789Z stdout F `,
    envelope._CRI: P, a part of a longer line, reads as F does), its time in ln.env_ts; or 0."""
    cdef Py_ssize_t p = rfc3339(s, n, 0, &ln.env_ts)
    if p == 0 or n - p < 10 or not (memcmp(s + p, b" stdout ", 8) == 0 or memcmp(s + p, b" stderr ", 8) == 0):
        return 0
    if not ((s[p + 8] == c'F' or s[p + 8] == c'P') and s[p + 9] == c' '):
        return 0
    ln.zoned = True
    return p + 10


cdef inline Py_ssize_t token_end(const char* s, Py_ssize_t n, Py_ssize_t p) nogil:
    """The end of a run of printable ASCII from p (a regex's \\S+, stricter: it stops at a control
    character or a byte of no ASCII, which the Python path must read)."""
    while p < n and c' ' < s[p] <= 126:
        p += 1
    return p


cdef Py_ssize_t syslog_envelope(const char* s, Py_ssize_t n, Line* ln) nogil:
    """The end of a syslog envelope at the start (envelope.EnvelopeReader._syslog): a priority
    (`<14>`), then either journald's `short` shape (RFC 3164: the same reading as short's) or RFC
    5424's (`1 stamp host app procid msgid SD `: the stamp's time is the line's, `-` is no host);
    or 0."""
    cdef Py_ssize_t p = 1, q, k
    cdef int i
    while p < n and p < 4 and digit(s[p]):
        p += 1
    if p == 1 or p >= n or s[p] != c'>':
        return 0
    p += 1
    q = envelope(s + p, n - p, ln)
    if q:
        ln.host0 += p
        ln.host1 += p
        return p + q
    ln.host0 = ln.env_sod = -1  # what the try at short's shape left
    # RFC 5424: `1 `, then the stamp, the host and three more tokens, each ended by one space
    if n - p < 2 or s[p] != c'1' or s[p + 1] != c' ':
        return 0
    p += 2
    q = token_end(s, n, p)
    if q == p or q >= n or s[q] != c' ' or rfc3339(s, q, p, &ln.env_ts) != q:
        return 0
    p = q + 1
    q = token_end(s, n, p)
    if q == p or q >= n or s[q] != c' ':
        return 0
    if not (q - p == 1 and s[p] == c'-'):
        ln.host0, ln.host1 = p, q
    p = q + 1
    for i in range(3):
        q = token_end(s, n, p)
        if q == p or q >= n or s[q] != c' ':
            return 0
        p = q + 1
    # the structured data: `-` or one or more `[...]`, then a space or none
    if p >= n:
        return 0
    if s[p] == c'-':
        p += 1
    elif s[p] == c'[':
        q = p
        while q < n and s[q] == c'[':
            k = q + 1
            while k < n and s[k] != c']':
                if s[k] < c' ' or s[k] > 126:
                    return 0  # envelope.clean would have read it otherwise
                k += 1
            if k >= n:
                break  # no end to this one: the data ends before it
            q = k + 1
        if q == p:
            return 0
        p = q
    else:
        return 0
    if p < n and s[p] == c' ':
        p += 1
    ln.zoned = True
    return p


cdef Py_ssize_t monotonic_envelope(const char* s, Py_ssize_t n, Line* ln) nogil:
    """The end of journald's `short-monotonic` envelope at the start (`[  371.469140] host tag[pid]: `,
    envelope._MONOTONIC: seconds since boot, which give the line no time; its host), or 0."""
    cdef Py_ssize_t p = 1, q
    while p < n and s[p] == c' ':
        p += 1
    q = p
    while q < n and digit(s[q]):
        q += 1
    if q == p or n - q < 9 or s[q] != c'.':
        return 0
    for p in range(q + 1, q + 7):
        if not digit(s[p]):
            return 0
    if s[q + 7] != c']' or s[q + 8] != c' ':
        return 0
    return host_and_tag(s, n, q + 9, ln)


cdef enum:
    J_MESSAGE = 1
    J_REALTIME = 2
    J_HOSTNAME = 4
    J_LOG = 8  # Docker's json-file: its message ...
    J_TIME = 16  # ... and its stamp
    J_CURSOR = 32  # journald's __CURSOR: an entry read before is left to the parser (parse/cursors.py)


cdef Py_ssize_t json_envelope(const char* s, Py_ssize_t n, Line* ln) nogil:
    """A journald json line (`{"__CURSOR":"...","MESSAGE":"...",...}`, its fields in any order, with or
    without spaces): where its MESSAGE's text begins (ln.size: where it ends, before a last `\\n`,
    which envelope.clean takes off), its time from __REALTIME_TIMESTAMP (microseconds over a million,
    as envelope.from_json's int / 1_000_000) and its host from _HOSTNAME (None without one). Without a
    MESSAGE, a Docker json-file line (`{"log":"...\\n","stream":"stdout","time":"2026-...Z"}`, as
    envelope._from_docker reads it): its `log`, the time of its RFC 3339 `time`, no host. 0 for any
    line the lane leaves to the Python path: not exactly one object whose values are strings or null,
    or one of the fields named here given twice, null, not a plain string (an escape, non-ASCII, a
    byte array; a message may hold \\" and \\\\), the time not 1 to 16 digits or no stamp, or no
    message or time."""
    cdef Py_ssize_t p, k0, k1, v0, v1, m0 = 0, m1 = 0, t0 = 0, t1 = 0, h0 = -1, h1 = -1, l0 = 0, l1 = 0
    cdef Py_ssize_t d0 = 0, d1 = 0
    cdef int seen = 0, which, flags, mflags = 0, lflags = 0
    cdef long long us = 0
    if n < 2 or s[0] != c'{':
        return 0
    p = json_ws(s, n, 1)
    while True:
        if p >= n or s[p] != c'"':
            return 0
        k0 = p + 1
        k1 = json_string(s, n, k0, &flags)
        if k1 < 0 or flags:
            return 0  # an escaped key may spell one of them
        which = 0
        if k1 - k0 == 7 and memcmp(s + k0, b"MESSAGE", 7) == 0:
            which = J_MESSAGE
        elif k1 - k0 == 20 and memcmp(s + k0, b"__REALTIME_TIMESTAMP", 20) == 0:
            which = J_REALTIME
        elif k1 - k0 == 9 and memcmp(s + k0, b"_HOSTNAME", 9) == 0:
            which = J_HOSTNAME
        elif k1 - k0 == 3 and memcmp(s + k0, b"log", 3) == 0:
            which = J_LOG
        elif k1 - k0 == 4 and memcmp(s + k0, b"time", 4) == 0:
            which = J_TIME
        elif k1 - k0 == 8 and memcmp(s + k0, b"__CURSOR", 8) == 0:
            which = J_CURSOR
        p = json_ws(s, n, k1 + 1)
        if p >= n or s[p] != c':':
            return 0
        p = json_ws(s, n, p + 1)
        if p >= n:
            return 0
        if s[p] == c'"':
            v0 = p + 1
            v1 = json_string(s, n, v0, &flags)
            if v1 < 0:
                return 0
            if which:
                if seen & which:
                    return 0
                seen |= which
                if which == J_MESSAGE or which == J_LOG:
                    if flags & S_OTHER:
                        return 0
                    if which == J_MESSAGE:
                        m0, m1, mflags = v0, v1, flags
                    else:
                        l0, l1, lflags = v0, v1, flags
                elif flags:
                    return 0
                elif which == J_REALTIME:
                    t0, t1 = v0, v1
                elif which == J_HOSTNAME:
                    h0, h1 = v0, v1
                elif which == J_CURSOR:
                    ln.cur0, ln.cur1 = v0, v1
                else:
                    d0, d1 = v0, v1
            p = v1 + 1
        elif n - p >= 4 and memcmp(s + p, b"null", 4) == 0 and not which:
            p += 4
        else:
            return 0
        p = json_ws(s, n, p)
        if p >= n:
            return 0
        if s[p] == c',':
            p = json_ws(s, n, p + 1)
        elif s[p] == c'}':
            p += 1
            break
        else:
            return 0
    if json_ws(s, n, p) != n:
        return 0
    if not (seen & J_MESSAGE):  # envelope.from_json: no MESSAGE, a `log` string: Docker's
        if not (seen & J_LOG) or not (seen & J_TIME) or rfc3339(s, d1, d0, &ln.env_ts) != d1:
            return 0
        ln.zoned = True
        ln.escaped = (lflags & S_QUOTE) != 0
        ln.size = l1 - 2 if lflags & S_NEWLINE else l1
        return l0
    if not (seen & J_REALTIME):
        return 0
    if t1 == t0 or t1 - t0 > 16:
        return 0
    for p in range(t0, t1):
        if not digit(s[p]):
            return 0
        us = us * 10 + (s[p] - c'0')
    if us >= MAX_EXACT_US:
        return 0
    ln.env_ts = <double>us / 1e6
    ln.zoned = True
    ln.host0, ln.host1 = h0, h1
    ln.escaped = (mflags & S_QUOTE) != 0
    ln.size = m1 - 2 if mflags & S_NEWLINE else m1
    return m0


cdef inline bint word_char(char c) nogil:
    return digit(c) or (c'A' <= c <= c'Z') or (c'a' <= c <= c'z') or c == c'_'


cdef Py_ssize_t actor(const char* s, Py_ssize_t n, Line* ln) nogil:
    """The end of a Ray actor's decoration (`(SGLangEngine pid=41820, ip=10.15.36.1) `, as
    prefix.actor reads it), or 0."""
    cdef Py_ssize_t p = 1, q
    if n < 2 or not ((c'A' <= s[1] <= c'Z') or (c'a' <= s[1] <= c'z') or s[1] == c'_'):
        return 0
    while p < n and (word_char(s[p]) or s[p] == c'.' or s[p] == c'-'):
        p += 1
    if n - p < 6 or memcmp(s + p, b" pid=", 5) != 0:
        return 0
    p += 5
    q = p
    while q < n and digit(s[q]):
        q += 1
    if q == p:
        return 0
    ln.eng0, ln.eng1 = p, q
    if n - q >= 5 and memcmp(s + q, b", ip=", 5) == 0:
        p = q + 5
        q = p
        while q < n and (digit(s[q]) or (c'A' <= s[q] <= c'F') or (c'a' <= s[q] <= c'f') or s[q] == c'.'
                         or s[q] == c':'):
            q += 1
        if q == p:
            return 0
        ln.ip0, ln.ip1 = p, q
    if q >= n or s[q] != c')':
        return 0
    q += 1
    if q < n and s[q] == c' ':
        q += 1
    return q


cdef bint prefix(const char* s, Py_ssize_t p, Line* ln) nogil:
    """SGLang's prefix at p (`[2026-03-09 16:00:00.123 DP0 TP0] `) and a batch head after it,
    as _FAST reads them; False when there is no such prefix."""
    cdef Py_ssize_t n = ln.size, q
    cdef const char* t
    cdef int year, month, day, hh, mm, ss
    if n - p < 21 or s[p] != c'[':
        return False
    t = s + p + 1
    if not (digit(t[0]) and digit(t[1]) and digit(t[2]) and digit(t[3]) and t[4] == c'-' and digit(t[5])
            and digit(t[6]) and t[7] == c'-' and digit(t[8]) and digit(t[9]) and t[10] == c' '
            and digit(t[11]) and digit(t[12]) and t[13] == c':' and digit(t[14]) and digit(t[15])
            and t[16] == c':' and digit(t[17]) and digit(t[18])):
        return False
    ln.stamp = p + 1
    q = p + 20
    # milliseconds: exactly three digits (the regex takes none when a fourth follows)
    cdef int millis = -1
    if n - q >= 4 and s[q] == c'.' and digit(s[q + 1]) and digit(s[q + 2]) and digit(s[q + 3]) and not digit(s[q + 4]):
        millis = (s[q + 1] - c'0') * 100 + two(s + q + 2)
        q += 4
    ln.rank0 = q + 1
    while q < n and s[q] == c' ':
        p = q + 1
        while p < n and ((c'A' <= s[p] <= c'Z') or s[p] == c'_'):
            p += 1
        if p == q + 1:
            return False
        if p < n and s[p] == c'-':
            p += 1
        q = p
        while q < n and digit(s[q]):
            q += 1
        if q == p:
            return False
    if q >= n or s[q] != c']':
        return False
    ln.rank1 = q if q > ln.rank0 else ln.rank0
    q += 1
    if q < n and s[q] == c' ':
        q += 1
    ln.msg = q
    # the time, as timeparse.instant gives it
    year = two(t) * 100 + two(t + 2)
    month, day, hh, mm, ss = two(t + 5), two(t + 8), two(t + 11), two(t + 14), two(t + 17)
    if year >= 1 and 1 <= month <= 12 and 1 <= day <= 31 and hh < 24 and mm < 60 and ss < 62:
        ln.ts = <double>(((days_from_civil(year, month, day) * 24 + hh) * 60 + mm) * 60 + ss)
        if millis >= 0:
            ln.ts += millis / 1000.0
    else:
        ln.ts = NAN
    # a batch head: `Decode batch` or `Prefill batch`, ` [N]`, `.` or `,`, a space
    ln.kind = -1
    if n - q >= 13 and memcmp(s + q, b"Decode batch", 12) == 0:
        ln.kind, q = 0, q + 12
    elif n - q >= 14 and memcmp(s + q, b"Prefill batch", 13) == 0:
        ln.kind, q = 1, q + 13
    else:
        return True
    if n - q >= 2 and s[q] == c' ' and s[q + 1] == c'[':
        p = q + 2
        while p < n and digit(s[p]):
            p += 1
        if p == q + 2 or p >= n or s[p] != c']':
            ln.kind = -1
            return True
        q = p + 1
    if q >= n or (s[q] != c',' and s[q] != c'.'):
        ln.kind = -1
        return True
    q += 1
    if q < n and s[q] == c' ':
        q += 1
    ln.body = q
    return True


cdef class Layout:
    """One body layout (its keys in order) as read for one kind of batch: where each value goes."""
    cdef int n
    cdef bytes keys  # every `key: `, one after another
    cdef int[MAX_FIELDS] key_at
    cdef int[MAX_FIELDS] key_len
    cdef int[MAX_FIELDS] types
    cdef int[MAX_FIELDS] cols  # the column of the row, or -1 (a field the sink does not take)
    cdef double[MAX_FIELDS] lo  # the range a server can print (sglang.field_range): outside it,
    cdef double[MAX_FIELDS] hi  # the line goes to the Python path, which counts it malformed

    def __init__(self, tuple keys, tuple columns):
        cdef int i
        if len(keys) > MAX_FIELDS:
            raise ValueError("too many fields")
        self.n = len(keys)
        packed = []
        at = 0
        for i, key in enumerate(keys):
            field = sglang.fast_field(key)
            if field is None:
                raise ValueError(key)
            name, typ = field
            self.types[i] = T_GRAPH if typ == "graph" else T_INT if typ == "int" else T_FLOAT
            self.cols[i] = columns.index(name) if name in columns else -1
            self.lo[i], self.hi[i] = sglang.field_range(name)
            text = (key + ": ").encode("ascii")
            self.key_at[i], self.key_len[i] = at, len(text)
            at += len(text)
            packed.append(text)
        self.keys = b"".join(packed)

    cdef bint read(self, const char* s, Py_ssize_t p, Py_ssize_t end, double* row, int* graph):
        """Reads the body s[p:end] into row (and graph: 1, 0, or -1 when absent); False when it
        is not this layout in the plain forms."""
        cdef int i, digits, frac, neg, typ
        cdef const char* keys = <const char*>self.keys
        cdef Py_ssize_t klen
        cdef double v
        cdef long long m
        for i in range(self.n):
            klen = self.key_len[i]
            if end - p < klen or s[p] != keys[self.key_at[i]] or memcmp(s + p, keys + self.key_at[i], klen) != 0:
                return False
            p += klen
            typ = self.types[i]
            if typ == T_GRAPH:
                if end - p >= 4 and memcmp(s + p, b"True", 4) == 0:
                    graph[0] = 1
                    p += 4
                elif end - p >= 5 and memcmp(s + p, b"False", 5) == 0:
                    graph[0] = 0
                    p += 5
                else:
                    return False
            else:
                neg = 0
                if p < end and s[p] == c'-':
                    neg = 1
                    p += 1
                m = 0
                digits = 0
                frac = -1
                while p < end:
                    if digit(s[p]):
                        m = m * 10 + (s[p] - c'0')
                        digits += 1
                        if digits > MAX_DIGITS:
                            return False
                        if frac >= 0:
                            frac += 1
                    elif s[p] == c'.' and frac < 0 and typ == T_FLOAT and digits > 0:
                        frac = 0
                    else:
                        break
                    p += 1
                if digits == 0 or frac == 0:
                    return False
                if typ == T_INT:
                    v = <double>(-m if neg else m)
                else:
                    v = <double>m
                    if frac > 0:
                        v = v / POW10[frac]
                    if neg:
                        v = -v
                if not (self.lo[i] <= v <= self.hi[i]):  # a negative count, an accept rate of 1.5 ...
                    return False
                if self.cols[i] >= 0:
                    row[self.cols[i]] = v
            # between fields `, `; after the last: `, `, `,` or nothing, then a newline or nothing
            if i < self.n - 1:
                if end - p < 2 or s[p] != c',' or s[p + 1] != c' ':
                    return False
                p += 2
        if p < end and s[p] == c',':
            p += 1
            if p < end and s[p] == c' ':
                p += 1
        if p < end and s[p] == c'\n':
            p += 1
        return p == end


cdef class Acc:
    """A series' rows of one kind of batch as the lane adds them; counts wait here for flush()."""
    cdef bytes key
    cdef object series
    cdef int kind  # 0 decode, 1 prefill
    cdef array.array buf
    cdef Py_ssize_t limit
    cdef object fold
    cdef Py_ssize_t n
    cdef Py_ssize_t graph_off
    cdef Py_ssize_t graph_on
    cdef double first
    cdef double last
    cdef bint dirty


@cython.auto_pickle(False)
cdef class Lane:
    """scan() reads the lines it can and returns where it stopped; flush() hands the waiting
    counts to the series (before anything else reaches the sink, and at the end)."""
    cdef object dates  # the parser's LogDate
    cdef object sink
    cdef tuple columns  # per kind: the names of the row's columns
    cdef list table  # SLOTS entries: Acc or None, by the hash of their key
    cdef int used
    cdef list layouts  # per kind: the layouts seen, the last one read first
    cdef list dirty
    # words that make a line more than ordinary text (an event's, `batch`), by their first letter
    cdef bytes words
    cdef int[64] word_at
    cdef int[64] word_len
    cdef int[256] first
    cdef int[256] last
    cdef double last_ts
    cdef bint pending
    cdef object date  # the date of the last full stamp, as this scan began
    cdef public Py_ssize_t batches
    cdef public Py_ssize_t unparsed
    cdef public Py_ssize_t events
    cdef int batch_word
    cdef int traceback_word
    cdef tuple word_names
    # per kind: the row's column for the line's time and for its cuda graph (1, 0, NaN), or -1
    cdef int[2] time_col
    cdef int[2] graph_col
    cdef object host  # the host the lines are read for (a source's name for it), or None: the envelope's
    cdef object cursors  # the parser's: the journald entries read lately (parse/cursors.py)

    def __init__(self, parser, sink, tuple decode_columns, tuple prefill_columns):
        if len(decode_columns) > MAX_COLUMNS or len(prefill_columns) > MAX_COLUMNS:
            raise ValueError("too many columns")
        self.dates = parser.dates
        self.cursors = parser.cursors
        self.sink = sink
        sink.lane = self
        self.columns = (decode_columns, prefill_columns)
        for k, cols in enumerate(self.columns):
            self.time_col[k] = cols.index(TIME) if TIME in cols else -1
            self.graph_col[k] = cols.index("graph") if "graph" in cols else -1
        self.table = [None] * SLOTS
        self.used = 0
        self.layouts = [[], []]
        self.dirty = []
        words = sorted(w.encode("ascii") for w in events.WORDS + ("batch",))
        if len(words) > 64:
            raise ValueError("too many words")
        self.words = b"".join(words)
        self.batch_word = words.index(b"batch")
        self.traceback_word = words.index(b"Traceback")
        self.word_names = tuple(w.decode() for w in words)
        at = 0
        for c in range(256):
            self.first[c] = self.last[c] = 0
        for k, w in enumerate(words):
            self.word_at[k], self.word_len[k] = at, len(w)
            at += len(w)
            if self.first[w[0]] == self.last[w[0]]:
                self.first[w[0]] = k
            self.last[w[0]] = k + 1
        self.pending = False
        self.host = None
        self.batches = 0
        self.unparsed = 0
        self.events = 0

    def scan(self, list lines, Py_ssize_t i, host=None):
        """Reads lines[i:] up to the first one it cannot read; returns its index (or the end).
        `host`: the host they are read for, whatever their envelope says (as parse()'s host)."""
        cdef Py_ssize_t n = len(lines), size
        cdef const char* s
        if host != self.host:  # the series are another host's: look them up afresh
            self.flush()
            self.table = [None] * SLOTS
            self.used = 0
            self.host = host
        self.date = self.dates.date
        while i < n:
            line = lines[i]
            if type(line) is not str or not PyUnicode_IS_ASCII(line):
                break
            s = <const char*>PyUnicode_DATA(line)
            size = len(<str>line)
            if size and s[size - 1] == c'\n':
                size -= 1  # the line's end, when a text stream leaves it on
            if not self._read(s, size):
                break
            i += 1
        return i

    def scan_bytes(self, bytes data, Py_ssize_t pos):
        """Reads the lines of data (UTF-8, a newline after each but maybe the last) from pos up to
        the first one it cannot read; returns where that one begins (or the end)."""
        cdef const char* s = <const char*>data
        cdef Py_ssize_t n = len(data)
        cdef const char* end
        if self.host is not None:
            self.flush()
            self.table = [None] * SLOTS
            self.used = 0
            self.host = None
        self.date = self.dates.date
        while pos < n:
            end = <const char*>memchr(s + pos, c'\n', n - pos)
            if not self._read(s + pos, (end - s if end != NULL else n) - pos):
                break
            pos = end - s + 1 if end != NULL else n
        return pos

    cdef bint _read(self, const char* s, Py_ssize_t size):
        """Reads one line (without its newline): False when the Python path must read it."""
        cdef Py_ssize_t k, p, filled
        cdef Line ln
        cdef Acc acc
        cdef Layout lay
        cdef double[MAX_COLUMNS] row
        cdef int graph, ncols
        cdef object cursor = None
        if size > MAX_LINE:
            return False
        ln.size = size
        ln.host0 = ln.eng0 = ln.ip0 = ln.env_sod = ln.cur0 = -1
        ln.zoned = ln.escaped = False
        p = envelope(s, size, &ln)
        if p == 0 and size:
            if s[0] == c'(':
                p = actor(s, size, &ln)
            elif s[0] == c'{':
                p = json_envelope(s, size, &ln)
            elif digit(s[0]):
                p = iso_envelope(s, size, &ln)
                if p == 0:  # the two shapes exclude each other: a tag ends in `:`, CRI's stream in ` `
                    ln.host0 = -1
                    ln.zoned = False
                    p = cri_envelope(s, size, &ln)
            elif s[0] == c'<':
                p = syslog_envelope(s, size, &ln)
            elif s[0] == c'[':
                p = monotonic_envelope(s, size, &ln)
                if p == 0:  # SGLang's own prefix at the start: the shapes exclude each other
                    ln.host0 = -1
                    p = -1
            else:
                p = -1  # no envelope: SGLang's prefix at the start, or nothing the lane reads
            if p == 0:
                return False
            if p < 0:
                p = 0
        size = ln.size  # a json line's message ends before the line does (or its last `\\n`)
        if ln.cur0 >= 0:
            cursor = PyUnicode_DecodeASCII(s + ln.cur0, ln.cur1 - ln.cur0, NULL)
            if cursor in self.cursors:
                return False  # read before: the parser drops and counts it
        if not prefix(s, p, &ln) or ln.ts != ln.ts:
            return False
        if ln.zoned:
            ln.ts = ln.env_ts  # a zoned envelope is the clock of its lines (LineParser._stamp_time)
        elif ln.env_sod >= 0 and two_clocks(ln.ts, ln.env_sod):
            return False  # the server's stamp is read on the envelope's clock by LineParser
        if not 0.0 <= ln.ts < 253402300800.0:
            return False  # outside 1970-9999 (ingest.FIRST_TS, END_TS): dropped and counted by the Python path
        if ln.kind < 0:
            if not self._other(s, &ln):
                return False
        elif ln.escaped:
            return False
        else:
            ncols = len(<tuple>self.columns[ln.kind])
            for k in range(ncols):
                row[k] = NAN
            graph = -1
            lay = None
            for layout in <list>self.layouts[ln.kind]:
                if (<Layout>layout).read(s, ln.body, size, row, &graph):
                    lay = <Layout>layout
                    break
            if lay is None:
                lay = self._learn_layout(ln.kind, s, size, ln.body)
                if lay is None:
                    return False
                for k in range(ncols):
                    row[k] = NAN
                graph = -1
                if not lay.read(s, ln.body, size, row, &graph):
                    return False
            acc = self._acc(s, &ln)
            if acc is None:
                return False
            if self.time_col[ln.kind] >= 0:
                row[self.time_col[ln.kind]] = ln.ts
            if self.graph_col[ln.kind] >= 0:
                row[self.graph_col[ln.kind]] = NAN if graph < 0 else <double>graph
            filled = len(acc.buf)
            array.resize_smart(acc.buf, filled + ncols)
            for k in range(ncols):
                acc.buf.data.as_doubles[filled + k] = row[k]
            acc.n += 1
            if graph == 0:
                acc.graph_off += 1
            elif graph == 1:
                acc.graph_on += 1
            if ln.ts < acc.first:
                acc.first = ln.ts
            if ln.ts > acc.last:
                acc.last = ln.ts
            if not acc.dirty:
                acc.dirty = True
                self.dirty.append(acc)
            self.last_ts = ln.ts
            self.pending = True
            self.batches += 1
        # the date of the last full stamp, for year-less and time-only stamps, as parse() keeps it
        # (not behind a zoned envelope, whose time is the line's: _stamp_time reads no stamp there)
        if not ln.zoned and (len(<str>self.date) != 10
                             or memcmp(<const char*>PyUnicode_DATA(self.date), s + ln.stamp, 10) != 0):
            self.dates.note(PyUnicode_DecodeASCII(s + ln.stamp, 10, NULL))
            self.date = self.dates.date
        if ln.kind >= 0 and filled + ncols >= acc.limit:
            self.flush()  # a fold hands the counts over to the epoch
            acc.fold()
        if cursor is not None:
            self.cursors.add(cursor)
        return True

    cdef bint _other(self, const char* s, Line* ln):
        """A line with SGLang's prefix and no batch head, as parse() reads it (_fast_other): ordinary
        text (counted here) or, with a word of one, an event (handed to the sink); False for a
        batch line cut short or after a further prefix, a Ray actor's event (its repeat note is
        cut first), a control or non-ASCII character."""
        cdef Py_ssize_t q = ln.msg, n = ln.size
        cdef const char* words = <const char*>self.words
        cdef int w
        cdef unsigned char c
        cdef unsigned long long found = 0  # the words seen, a bit each
        if q >= n or s[q] == c'D' or s[q] == c'P':
            return False
        while q < n:
            c = <unsigned char>s[q]
            if c < 32 or c > 126:
                return False
            for w in range(self.first[c], self.last[c]):
                if n - q >= self.word_len[w] and memcmp(s + q, words + self.word_at[w], self.word_len[w]) == 0:
                    if w == self.batch_word:
                        return False
                    found |= 1ULL << w
            q += 1
        if found:
            if ln.eng0 >= 0 or ln.escaped or found >> self.traceback_word & 1:
                return False  # a traceback's first line: the parser gathers its lines (LineParser.block)
            msg = PyUnicode_DecodeASCII(s + ln.msg, n - ln.msg, NULL)
            hit = events.classify(msg, {self.word_names[w] for w in range(len(self.word_names)) if found >> w & 1})
            if hit is not None:
                host = self.host if self.host is not None else (
                    PyUnicode_DecodeASCII(s + ln.host0, ln.host1 - ln.host0, NULL) if ln.host0 >= 0 else None)
                rank = PyUnicode_DecodeASCII(s + ln.rank0, ln.rank1 - ln.rank0, NULL)
                self.events += 1
                self.sink.add_event(Event(hit[0], ln.ts, host, msg, rank, hit[1]))
                return True
        self.unparsed += 1
        return True

    cdef Acc _acc(self, const char* s, Line* ln):
        """The rows of the series (host, engine and rank) and kind of a batch line."""
        cdef char[KEY_SIZE] key
        cdef Py_ssize_t size = 0, part
        cdef unsigned long long h = 14695981039346656037ULL
        cdef Py_ssize_t slot, k
        cdef Acc acc
        part = (ln.host1 - ln.host0 if ln.host0 >= 0 else 0) + (ln.eng1 - ln.eng0 if ln.eng0 >= 0 else 0) \
            + (ln.ip1 - ln.ip0 if ln.ip0 >= 0 else 0) + (ln.rank1 - ln.rank0) + 5
        if part > KEY_SIZE:
            return None
        key[0] = <char>(c'0' + ln.kind + (2 if ln.host0 >= 0 else 0) + (4 if ln.eng0 >= 0 else 0) + (8 if ln.ip0 >= 0 else 0))
        size = 1
        if ln.host0 >= 0:
            memcpy(key + size, s + ln.host0, ln.host1 - ln.host0)
            size += ln.host1 - ln.host0
        key[size] = c' '
        size += 1
        if ln.eng0 >= 0:
            memcpy(key + size, s + ln.eng0, ln.eng1 - ln.eng0)
            size += ln.eng1 - ln.eng0
        key[size] = c' '
        size += 1
        if ln.ip0 >= 0:
            memcpy(key + size, s + ln.ip0, ln.ip1 - ln.ip0)
            size += ln.ip1 - ln.ip0
        key[size] = c' '
        size += 1
        memcpy(key + size, s + ln.rank0, ln.rank1 - ln.rank0)
        size += ln.rank1 - ln.rank0
        for k in range(size):
            h = (h ^ <unsigned char>key[k]) * 1099511628211ULL
        slot = h & (SLOTS - 1)
        while True:
            found = self.table[slot]
            if found is None:
                break
            acc = <Acc>found
            if len(acc.key) == size and memcmp(<const char*>acc.key, key, size) == 0:
                return acc
            slot = (slot + 1) & (SLOTS - 1)
        if self.used >= SLOTS // 2:
            self.flush()
            self.table = [None] * SLOTS
            self.used = 0
            return self._acc(s, ln)
        acc = self._new_acc(s, ln)
        acc.key = key[:size]
        self.table[slot] = acc
        self.used += 1
        return acc

    cdef Acc _new_acc(self, const char* s, Line* ln):
        host = self.host if self.host is not None else (
            PyUnicode_DecodeASCII(s + ln.host0, ln.host1 - ln.host0, NULL) if ln.host0 >= 0 else None)
        rank = PyUnicode_DecodeASCII(s + ln.rank0, ln.rank1 - ln.rank0, NULL)
        if ln.eng0 >= 0:  # a Ray actor's engine leads the rank, as prefix.actor names it
            engine = "pid=" + PyUnicode_DecodeASCII(s + ln.eng0, ln.eng1 - ln.eng0, NULL)
            if ln.ip0 >= 0:
                engine += "@" + PyUnicode_DecodeASCII(s + ln.ip0, ln.ip1 - ln.ip0, NULL)
            rank = engine + " " + rank if rank else engine
        series = self.sink.lane_series(ln.ts, host, rank)
        acc = Acc()
        acc.series, acc.kind = series, ln.kind
        acc.buf, acc.limit, acc.fold = series.lane_rows(KINDS[ln.kind])
        acc.first, acc.last = INF, -INF
        return acc

    def flush(self):
        """Hands the counts of the lines read since the last flush to their series, and the
        time of the last one to the sink (sync_time)."""
        cdef Acc acc
        for acc in self.dirty:
            acc.series.lane_add(KINDS[acc.kind], acc.n, acc.graph_off, acc.graph_on, acc.first, acc.last)
            acc.n = acc.graph_off = acc.graph_on = 0
            acc.first, acc.last = INF, -INF
            acc.dirty = False
        self.dirty.clear()
        self.sync_time()

    def sync_time(self):
        """Tells the sink the time of the last line read, if one was read since it was last told
        (before the sink takes a record or event from the Python path, which comes after it)."""
        if self.pending:
            self.sink.lane_time(self.last_ts)
            self.pending = False

    cdef Layout _learn_layout(self, int kind, const char* s, Py_ssize_t size, Py_ssize_t pos):
        """The layout of a body that the Python fast path reads, else None."""
        keys = sglang.layout_of(KINDS[kind], PyUnicode_DecodeUTF8(s, size, "replace"), pos)
        if keys is None:
            return None
        try:
            lay = Layout(keys, self.columns[kind])
        except ValueError:
            return None
        layouts = <list>self.layouts[kind]
        layouts.insert(0, lay)
        if len(layouts) > 8:
            layouts.pop()
        return lay

