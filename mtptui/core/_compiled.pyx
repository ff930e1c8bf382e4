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


# ---- what a frozen run's figures (below) still use: a sort, exact sums, the buckets' split --------

from libc.stdlib cimport malloc, free
from libc.stdint cimport uint64_t


cdef inline uint64_t bits(double v) nogil:
    cdef uint64_t u
    memcpy(&u, &v, 8)
    return u


cdef int _sort_values(array.array values) except -1:
    """Puts NaN-free doubles in order in place, equal ones (0.0 and -0.0) in the order they came:
    what sorted() gives (a stable sort), by a radix sort of their bits instead of comparisons."""
    cdef Py_ssize_t n = len(values), i, zeros = 0, z
    cdef double* v = values.data.as_doubles
    cdef uint64_t* key
    cdef uint64_t* tmp
    cdef uint64_t u
    cdef unsigned char* signs
    cdef Py_ssize_t[256] count
    cdef Py_ssize_t total, c
    cdef int shift, b
    if n < 2:
        return 0
    key = <uint64_t*>malloc(n * sizeof(uint64_t))
    tmp = <uint64_t*>malloc(n * sizeof(uint64_t))
    signs = <unsigned char*>malloc(n)
    if key == NULL or tmp == NULL or signs == NULL:
        free(key); free(tmp); free(signs)
        raise MemoryError()
    try:
        for i in range(n):
            if v[i] == 0.0:
                signs[zeros] = bits(v[i]) >> 63  # the zeros' signs, in the order they came
                zeros += 1
            u = bits(v[i])
            key[i] = ~u if u >> 63 else u | (1ULL << 63)  # orders like the doubles, -0.0 before 0.0
        for shift in range(0, 64, 8):
            for b in range(256):
                count[b] = 0
            for i in range(n):
                count[(key[i] >> shift) & 255] += 1
            if count[(key[0] >> shift) & 255] == n:
                continue  # every key has this byte: nothing moves
            total = 0
            for b in range(256):
                c = count[b]
                count[b] = total
                total += c
            for i in range(n):
                b = (key[i] >> shift) & 255
                tmp[count[b]] = key[i]
                count[b] += 1
            key, tmp = tmp, key
        z = -1
        for i in range(n):
            u = key[i]
            u = u & ~(1ULL << 63) if u >> 63 else ~u
            memcpy(&v[i], &u, 8)
            if z < 0 and v[i] == 0.0:
                z = i
        if zeros:  # the zeros lie together (-0.0 first): put their signs back in the order they came
            for i in range(zeros):
                v[z + i] = -0.0 if signs[i] else 0.0
    finally:
        free(key)
        free(tmp)
        free(signs)
    return 0


cdef array.array _DOUBLES = array.array("d")


cdef inline double _context_key(double t, double f, double r) noexcept nogil:
    if t != t:
        t = f
    return t / r if r >= 1 else NAN


from libc.math cimport isfinite, ldexp, nearbyint

DEF MAX_PARTIALS = 128


cdef bint _grow(double* p, int* count, double x) nogil:
    """Adds x to the partials p[:count] (Shewchuk's, as math.fsum keeps them); False when a sum
    overflows or the partials run out (the caller's own way handles those)."""
    cdef int i, j = 0
    cdef double y, hi, lo, t
    for i in range(count[0]):
        y = p[i]
        if fabs(x) < fabs(y):
            t = x
            x = y
            y = t
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            p[j] = lo
            j += 1
        x = hi
    if not isfinite(x) or j >= MAX_PARTIALS:
        return False
    p[j] = x
    count[0] = j + 1
    return True


# An exact sum made faster than with partials: each double a multiple of 2**-80 below 2**32 in
# size (what a log prints: throughputs, accept lens and rates) is an integer count of that unit,
# and up to 16,384 of them add in 128 bits without loss; the double nearest the sum (ties to
# even, as math.fsum rounds it) is then one conversion. Any other value: the partials' way.
cdef extern from *:
    ctypedef long long i128 "__int128"

DEF FIXED_BITS = 80  # the unit: 2**-80
DEF FIXED_TERMS = 16384  # each term below 2**112, their sum below 2**126


cdef inline bint _fixed_add(i128* s, double x) noexcept nogil:
    """Adds x to s (in units of 2**-80) exactly; False where x is no multiple of the unit below
    2**32 in size (or not finite)."""
    cdef uint64_t b, m
    cdef int e, shift
    cdef i128 t
    memcpy(&b, &x, 8)
    e = <int>((b >> 52) & 0x7FF)
    if e == 0:
        return x == 0.0  # a zero adds nothing; a subnormal is below the unit
    if e >= 1023 + 32:
        return False
    m = (b & ((<uint64_t>1 << 52) - 1)) | (<uint64_t>1 << 52)
    shift = e - 1075 + FIXED_BITS  # x is m * 2**(e - 1075)
    if shift >= 0:
        t = (<i128>m) << shift
    elif shift > -53 and not (m & ((<uint64_t>1 << -shift) - 1)):
        t = <i128>(m >> -shift)
    else:
        return False
    if b >> 63:
        s[0] -= t
    else:
        s[0] += t
    return True


cdef inline double _fixed_value(i128 s) noexcept nogil:
    """The double nearest s * 2**-80, ties to even (a 128-bit integer's conversion rounds so), as
    math.fsum gives the exact sum: +0.0 for none."""
    return ldexp(<double>s, -FIXED_BITS)


DEF MAX_BUCKETS = 16


cdef struct Split:
    int k
    Py_ssize_t[MAX_BUCKETS] lines
    Py_ssize_t[MAX_BUCKETS] gen_n
    Py_ssize_t[MAX_BUCKETS] accept_n
    int[MAX_BUCKETS] gen_count
    int[MAX_BUCKETS] accept_count
    double[MAX_BUCKETS * MAX_PARTIALS] gen_p
    double[MAX_BUCKETS * MAX_PARTIALS] accept_p
    # for means only (split_means, a frozen run's buckets): the sums in 128 bits (_fixed_add)
    # while every value fits, else again with partials (redo)
    bint fixed
    bint redo
    i128[MAX_BUCKETS] gen_s
    i128[MAX_BUCKETS] accept_s


cdef int _split_start(tuple bounds, Split* sp, double* lo, bint fixed=False) except -1:
    cdef int k = len(bounds), b
    if not 1 <= k <= MAX_BUCKETS:
        raise ValueError("from 1 to 16 buckets")
    sp.k = k
    sp.fixed, sp.redo = fixed, False
    for b in range(k):
        sp.gen_s[b] = sp.accept_s[b] = 0
    for b in range(k):
        lo[b] = bounds[b]
        if b and not lo[b] > lo[b - 1]:
            raise ValueError("bounds not in order")
        sp.lines[b] = sp.gen_n[b] = sp.accept_n[b] = 0
        sp.gen_count[b] = sp.accept_count[b] = 0
    return 0


cdef inline bint _split_line(Split* sp, const double* lo, double key, double g, double a) noexcept nogil:
    """One line into its bucket (the last bound at or below its key; none below the first, or
    for NaN); False when a value is not finite or a sum overflows."""
    cdef int b
    if not key >= lo[0]:
        return True
    b = sp.k - 1
    while key < lo[b]:
        b -= 1
    sp.lines[b] += 1
    if sp.fixed:
        if (g == g and not _fixed_add(&sp.gen_s[b], g)) or (a == a and not _fixed_add(&sp.accept_s[b], a)):
            sp.redo = True  # a value that does not fit: the caller splits again, with partials
            return True
        sp.gen_n[b] += g == g
        sp.accept_n[b] += a == a
        return True
    if g == g:
        if not isfinite(g) or not _grow(&sp.gen_p[b * MAX_PARTIALS], &sp.gen_count[b], g):
            return False
        sp.gen_n[b] += 1
    if a == a:
        if not isfinite(a) or not _grow(&sp.accept_p[b * MAX_PARTIALS], &sp.accept_count[b], a):
            return False
        sp.accept_n[b] += 1
    return True


cdef double _mean_of(double* p, int count, Py_ssize_t n) except? -1.0:
    return _tidy(_sum_partials(p, count) / <double>n) if n else NAN


cdef tuple _means(Split* sp):
    cdef int b
    cdef array.array means = array.clone(_DOUBLES, 2 * sp.k, False)
    cdef double* m = means.data.as_doubles
    for b in range(sp.k):
        if sp.fixed:
            m[2 * b] = _tidy(_fixed_value(sp.gen_s[b]) / <double>sp.gen_n[b]) if sp.gen_n[b] else NAN
            m[2 * b + 1] = _tidy(_fixed_value(sp.accept_s[b]) / <double>sp.accept_n[b]) if sp.accept_n[b] else NAN
        else:
            m[2 * b] = _mean_of(&sp.gen_p[b * MAX_PARTIALS], sp.gen_count[b], sp.gen_n[b])
            m[2 * b + 1] = _mean_of(&sp.accept_p[b * MAX_PARTIALS], sp.accept_count[b], sp.accept_n[b])
    return [sp.lines[b] for b in range(sp.k)], means


# -- a short run's statistics from its rows (valueset.FrozenRows) ---------------------------------
from libc.math cimport copysign, floor, fma
import builtins

_round = builtins.round  # Python's, for what _tidy leaves to it


cdef double _tidy(double x):
    """stats.tidy: round(x, 9) as Python rounds it (the decimal of 9 places nearest x, half to
    even, then the double nearest that decimal), without its trip through decimal digits where
    x * 10**9 is below 2**52: p = x * 1e9 rounded, plus fma's exact rest, is x * 10**9 exactly,
    so its nearest integer is known, and an integer over 1e9 divided once is the nearest double."""
    cdef double p, err, c, d
    if not fabs(x) < 4503599.0:  # 2**52 / 1e9, or not finite
        return _round(x, 9)
    p = x * 1e9
    err = fma(x, 1e9, -p)  # x * 10**9 - p, exact
    c = nearbyint(p)  # half to even: right unless p lies halfway and the rest tips it
    d = p - c  # exact: p and c are within 0.5 of each other, below 2**52
    if d == 0.5 and err > 0.0:
        c += 1.0
    elif d == -0.5 and err < 0.0:
        c -= 1.0
    if c == 0.0:
        return copysign(0.0, x)
    return c / 1e9


cdef bint _fsum(const double* v, Py_ssize_t n, double* out) noexcept nogil:
    """math.fsum of n finite doubles: their exact sum in 128 bits where it fits (_fixed_add), else
    by fsum's own algorithm (CPython's: the partials that _grow keeps, then their sum from the top
    with its half-even fix), so the same double; False where a value or a sum is not finite (the
    caller's own way handles those)."""
    cdef double[MAX_PARTIALS] p
    cdef int count = 0
    cdef Py_ssize_t k = 0
    cdef i128 s = 0
    if n <= FIXED_TERMS:
        while k < n and _fixed_add(&s, v[k]):
            k += 1
        if k == n:
            out[0] = _fixed_value(s)
            return True
    for k in range(n):
        if not _grow(p, &count, v[k]):
            return False
    out[0] = _sum_partials(p, count)
    return True


cdef double _sum_partials(double* p, int count) noexcept nogil:
    """The correctly rounded sum of the partials that _grow keeps (math.fsum's last step)."""
    cdef double x, y, hi = 0.0, lo = 0.0, yr
    if count > 0 and p[count - 1] == 0.0:
        count -= 1  # _grow leaves a sum of 0 on top, where fsum keeps none (its sign is fsum's +0.0)
    if count > 0:
        count -= 1
        hi = p[count]
        while count > 0:
            x = hi
            count -= 1
            y = p[count]
            hi = x + y
            yr = hi - x
            lo = y - yr
            if lo != 0.0:
                break
        if count > 0 and ((lo < 0.0 and p[count - 1] < 0.0) or (lo > 0.0 and p[count - 1] > 0.0)):
            y = lo * 2.0
            x = hi + y
            yr = x - hi
            if y == yr:
                hi = x
    return hi


cdef double _quantile(const double* s, Py_ssize_t n, double q) noexcept nogil:
    """stats.quantile over sorted values, in the same double operations."""
    cdef double pos = <double>(n - 1) * q
    cdef Py_ssize_t lo = <Py_ssize_t>floor(pos)
    cdef double a = s[lo]
    if lo + 1 >= n:
        return a
    return a + (s[lo + 1] - a) * (pos - <double>lo)


cdef object _describe_columns(array.array rows, Py_ssize_t k, Py_ssize_t m):
    if k < 1 or m > k or len(rows) % k:
        raise ValueError("describe_columns: rows are not whole rows of k")
    return _describe_rows(rows.data.as_doubles, len(rows) // k, k, m)


cdef object _describe_rows(const double* r, Py_ssize_t n_rows, Py_ssize_t k, Py_ssize_t m):
    """_describe_columns of n_rows rows of k doubles from r (1 <= k, m <= k)."""
    cdef Py_ssize_t i, c, n, j
    cdef array.array out = array.clone(_DOUBLES, 7 * m, False)
    cdef double* o = out.data.as_doubles
    cdef array.array col
    cdef double* s
    cdef double x, last, summed
    col = array.clone(_DOUBLES, n_rows, False)
    s = col.data.as_doubles
    for c in range(m):
        n = 0
        last = NAN
        for i in range(n_rows):
            x = r[i * k + c]
            if x == x:
                s[n] = x
                n += 1
                last = x
        if n == 0:
            for j in range(7):
                o[7 * c + j] = NAN
            continue
        if not _fsum(s, n, &summed):
            return None
        if n <= 32:  # a stable insertion sort: equal values (0.0, -0.0) keep their order, as sorted()'s
            for i in range(1, n):
                x = s[i]
                j = i - 1
                while j >= 0 and x < s[j]:
                    s[j + 1] = s[j]
                    j -= 1
                s[j + 1] = x
        else:
            array.resize(col, n)
            _sort_values(col)
            s = col.data.as_doubles
        o[7 * c] = n
        o[7 * c + 1] = _tidy(summed / n)
        o[7 * c + 2] = _tidy(_quantile(s, n, 0.5))
        o[7 * c + 3] = _tidy(_quantile(s, n, 0.9))
        o[7 * c + 4] = s[0]
        o[7 * c + 5] = s[n - 1]
        o[7 * c + 6] = last
        if n != n_rows:
            array.resize(col, n_rows)
            s = col.data.as_doubles
    return out


# -- a frozen run's statistics as JSON (valueset.FrozenRows.json) ---------------------------------
from libc.math cimport signbit
from libc.string cimport strlen

DEF REPR_MAX = 32  # float.__repr__ writes at most 24 characters


cdef Py_ssize_t _put(char* out, const char* s, Py_ssize_t n) noexcept nogil:
    memcpy(out, s, n)
    return n


# "00" to "99": two digits at a time, half the divisions
cdef bytes _PAIRS_TEXT = b"".join(b"%02d" % i for i in range(100))
cdef const char* _PAIRS = _PAIRS_TEXT


cdef inline void _put_pairs(uint64_t u, char* end, Py_ssize_t k) noexcept nogil:
    """Writes u's last k decimal digits (leading zeros too) ending before end."""
    cdef unsigned r
    while k >= 2:
        r = <unsigned>(u % 100) * 2
        u //= 100
        end -= 2
        end[0] = _PAIRS[r]
        end[1] = _PAIRS[r + 1]
        k -= 2
    if k:
        (end - 1)[0] = <char>(48 + u % 10)


cdef uint64_t[20] _POW10_INT  # 10**i
_POW10_INT[0] = 1
for _k in range(1, 20):
    _POW10_INT[_k] = _POW10_INT[_k - 1] * 10


cdef inline Py_ssize_t _put_decimal(uint64_t u, char* out) noexcept nogil:
    """Writes u's decimal digits at out; returns how many (at most 20)."""
    cdef Py_ssize_t n = 1
    while n < 20 and u >= _POW10_INT[n]:
        n += 1
    _put_pairs(u, out + n, n)
    return n


cdef Py_ssize_t _json_int(long long v, char* out) noexcept nogil:
    """Writes v in decimal (as int.__repr__ does) at out; returns the length (at most 20)."""
    if v < 0:
        out[0] = b'-'
        return 1 + _put_decimal(0 - <uint64_t>v, out + 1)  # the magnitude, LLONG_MIN's too
    return _put_decimal(<uint64_t>v, out)


# float.__repr__'s digits, the shortest that read back as the double, found as Ryu finds them
# (Ulf Adams, "Ryu: fast float-to-string conversion", PLDI 2018): the double's neighbours' halfway
# points scaled by a power of 10 with 128-bit products, the digits then cut while the interval
# still holds them. A run's JSON has some 25 doubles that are no tidy decimal (its comparisons);
# Python's search for them (dtoa) was 40% of the cost of writing the run.
cdef extern from *:
    ctypedef unsigned long long u128 "unsigned __int128"

DEF POW5_INV_BITS = 125
DEF POW5_BITS = 125
DEF POW5_INV_COUNT = 342
DEF POW5_COUNT = 326
cdef uint64_t _POW5_INV[POW5_INV_COUNT][2]  # 2**(bits(5**q) - 1 + 125) // 5**q + 1, low and high 64 bits
cdef uint64_t _POW5[POW5_COUNT][2]  # 5**i's top 125 bits


def _fill_pow5_tables():
    cdef int i
    cdef object pow5 = 1, inv, top  # Python's ints: exact
    for i in range(max(POW5_INV_COUNT, POW5_COUNT)):
        if i < POW5_INV_COUNT:
            inv = (1 << (pow5.bit_length() - 1 + POW5_INV_BITS)) // pow5 + 1
            _POW5_INV[i][0], _POW5_INV[i][1] = inv & 0xFFFFFFFFFFFFFFFF, inv >> 64
        if i < POW5_COUNT:
            shift = pow5.bit_length() - POW5_BITS
            top = pow5 >> shift if shift >= 0 else pow5 << -shift
            _POW5[i][0], _POW5[i][1] = top & 0xFFFFFFFFFFFFFFFF, top >> 64
        pow5 *= 5


_fill_pow5_tables()


cdef inline int _pow5bits(int e) noexcept nogil:  # ceil(log2(5**e)), 1 for e = 0
    return <int>((<uint64_t>e * 1217359) >> 19) + 1


cdef inline int _log10_pow2(int e) noexcept nogil:  # floor(log10(2**e))
    return <int>((<uint64_t>e * 78913) >> 18)


cdef inline int _log10_pow5(int e) noexcept nogil:  # floor(log10(5**e))
    return <int>((<uint64_t>e * 732923) >> 20)


cdef inline bint _times5(uint64_t v, int p) noexcept nogil:  # 5**p divides v
    cdef int count = 0
    while v % 5 == 0:
        v //= 5
        count += 1
    return count >= p


cdef inline uint64_t _mul_shift(uint64_t m, const uint64_t* mul, int j) noexcept nogil:
    cdef u128 b0 = <u128>m * mul[0]
    cdef u128 b2 = <u128>m * mul[1]
    return <uint64_t>(((b0 >> 64) + b2) >> (j - 64))


cdef inline uint64_t _mul_shift_all(uint64_t m2, const uint64_t* mul, int j, bint mm_shift, uint64_t* vp,
                                    uint64_t* vm) noexcept nogil:
    """The double's 4 * m2 and its interval's bounds (4 * m2 + 2, 4 * m2 - 1 or - 2), scaled."""
    vp[0] = _mul_shift(4 * m2 + 2, mul, j)
    vm[0] = _mul_shift(4 * m2 - 1 - mm_shift, mul, j)
    return _mul_shift(4 * m2, mul, j)


cdef Py_ssize_t _shortest(double x, char* out) noexcept nogil:
    """Writes finite, nonzero x as float.__repr__ writes it at out; returns the length."""
    cdef uint64_t bits_, mantissa, m2, mv, vr, vp, vm, output
    cdef int exponent, e2, e10, q, k, i, j, removed = 0, last = 0, length, point, n = 0, e
    cdef bint even, mm_shift, vm_zeros = False, vr_zeros = False, round_up = False
    cdef char[20] digits
    memcpy(&bits_, &x, 8)
    if bits_ >> 63:
        out[0] = b'-'
        n = 1
    mantissa = bits_ & ((<uint64_t>1 << 52) - 1)
    exponent = <int>((bits_ >> 52) & 0x7FF)
    if exponent == 0:
        e2 = 1 - 1023 - 52 - 2
        m2 = mantissa
    else:
        e2 = exponent - 1023 - 52 - 2
        m2 = (<uint64_t>1 << 52) | mantissa
    even = (m2 & 1) == 0
    mv = 4 * m2
    mm_shift = mantissa != 0 or exponent <= 1
    if e2 >= 0:
        q = _log10_pow2(e2) - (1 if e2 > 3 else 0)
        e10 = q
        k = POW5_INV_BITS + _pow5bits(q) - 1
        i = -e2 + q + k
        vr = _mul_shift_all(m2, _POW5_INV[q], i, mm_shift, &vp, &vm)
        if q <= 21:
            if mv % 5 == 0:
                vr_zeros = _times5(mv, q)
            elif even:
                vm_zeros = _times5(mv - 1 - mm_shift, q)
            else:
                vp -= _times5(mv + 2, q)
    else:
        q = _log10_pow5(-e2) - (1 if -e2 > 1 else 0)
        e10 = q + e2
        i = -e2 - q
        k = _pow5bits(i) - POW5_BITS
        j = q - k
        vr = _mul_shift_all(m2, _POW5[i], j, mm_shift, &vp, &vm)
        if q <= 1:
            vr_zeros = True
            if even:
                vm_zeros = mm_shift
            else:
                vp -= 1
        elif q < 63:
            vr_zeros = (mv & ((<uint64_t>1 << q) - 1)) == 0
    if vm_zeros or vr_zeros:  # the rare case: an exact halfway point, or the lower bound's trailing zeros
        while vp // 10 > vm // 10:
            vm_zeros = vm_zeros and vm % 10 == 0
            vr_zeros = vr_zeros and last == 0
            last = <int>(vr % 10)
            vr //= 10
            vp //= 10
            vm //= 10
            removed += 1
        if vm_zeros:
            while vm % 10 == 0:
                vr_zeros = vr_zeros and last == 0
                last = <int>(vr % 10)
                vr //= 10
                vp //= 10
                vm //= 10
                removed += 1
        if vr_zeros and last == 5 and vr % 2 == 0:
            last = 4  # a tie: to even
        output = vr + ((vr == vm and (not even or not vm_zeros)) or last >= 5)
    else:
        while vp // 10 > vm // 10:
            round_up = vr % 10 >= 5
            vr //= 10
            vp //= 10
            vm //= 10
            removed += 1
        output = vr + (vr == vm or round_up)
    e = e10 + removed  # x is output * 10**e, output's digits the fewest
    length = <int>_put_decimal(output, digits)
    point = length + e  # where the decimal point falls after the first digit
    if -4 < point <= 16:  # repr's fixed notation: 1e-4 up to 1e16
        if point <= 0:
            memcpy(out + n, b"0.", 2)
            memset(out + n + 2, b'0', -point)
            n += 2 - point
            memcpy(out + n, digits, length)
            return n + length
        if point >= length:
            memcpy(out + n, digits, length)
            memset(out + n + length, b'0', point - length)
            n += point
            memcpy(out + n, b".0", 2)
            return n + 2
        memcpy(out + n, digits, point)
        out[n + point] = b'.'
        memcpy(out + n + point + 1, digits + point, length - point)
        return n + length + 1
    out[n] = digits[0]
    n += 1
    if length > 1:
        out[n] = b'.'
        memcpy(out + n + 1, digits + 1, length - 1)
        n += length
    e = point - 1
    out[n] = b'e'
    out[n + 1] = b'-' if e < 0 else b'+'
    n += 2
    if e < 0:
        e = -e
    if e >= 100:
        out[n] = <char>(48 + e // 100)
        n += 1
    out[n] = <char>(48 + e // 10 % 10)
    out[n + 1] = <char>(48 + e % 10)
    return n + 2


cdef Py_ssize_t _json_double(double x, char* out):
    """Writes x as json.dumps writes a float (float.__repr__; NaN, Infinity, -Infinity) at out;
    returns the length. Where x is the double nearest a decimal of 9 places below 10**6 in size
    (what stats.tidy makes, and what a log prints), that decimal is its repr: no two decimals of
    at most 15 digits are the same double, so none shorter reads back as x; written from its
    digits, without the search for the shortest; any other, its shortest digits (_shortest)."""
    cdef double a = fabs(x), c
    if x == 0.0:
        return _put(out, "-0.0", 4) if signbit(x) else _put(out, "0.0", 3)
    if a >= 1e-4 and a < 1e6:  # written in fixed notation, as repr writes from 1e-4 up to 1e16
        c = nearbyint(a * 1e9)
        if c / 1e9 == a:
            return _put_fixed(<uint64_t>c, 1000000000, 9, x < 0, out)
    elif a >= 1e6 and a < 8589934592.0:  # 2**33: a time of day since 1970, to the microsecond
        # a decimal of 6 places: a double's rounding interval here is narrower than 1e-6, so
        # no other decimal of 6 places or fewer (none shorter) reads back as the same double
        c = nearbyint(a * 1e6)
        if c / 1e6 == a:
            return _put_fixed(<uint64_t>c, 1000000, 6, x < 0, out)
    if not isfinite(x):
        if x != x:
            return _put(out, "NaN", 3)
        return _put(out, "Infinity", 8) if x > 0 else _put(out, "-Infinity", 9)
    return _shortest(x, out)  # (n is 0 here: the sign is its to write)


cdef inline Py_ssize_t _put_fixed(uint64_t k, uint64_t scale, Py_ssize_t places, bint negative,
                                  char* out) noexcept nogil:
    """k / scale (scale 10**places) as repr writes it in fixed notation: the sign, the whole part,
    `.` and the fraction's digits without its trailing zeros (one 0 for none); returns the length."""
    cdef Py_ssize_t n = 0
    cdef uint64_t frac = k % scale
    if negative:
        out[0] = b'-'
        n = 1
    n += _put_decimal(k // scale, out + n)
    out[n] = b'.'
    n += 1
    if frac == 0:
        out[n] = b'0'
        return n + 1
    while frac % 10 == 0:
        frac //= 10
        places -= 1
    _put_pairs(frac, out + n + places, places)
    return n + places


# What comes before each statistic of valueset._STAT_KEYS in its JSON, one after another
_STAT_PREFIXES = (b'{"n": ', b', "mean": ', b', "p50": ', b', "p90": ', b', "min": ', b', "max": ', b', "last": ')
cdef bytes _STAT_TEXT = b"".join(_STAT_PREFIXES)
cdef Py_ssize_t[8] _STAT_AT  # where each begins in _STAT_TEXT (and where the last ends)
_STAT_AT[0] = 0
for _k in range(7):
    _STAT_AT[_k + 1] = _STAT_AT[_k] + len(_STAT_PREFIXES[_k])


def json_double(double x):
    """_json_double as text, for the test that holds it to json.dumps."""
    cdef char[REPR_MAX] out
    return PyUnicode_DecodeASCII(out, _json_double(x, out), NULL)


# -- an epoch of `summary --json`, compared, as its JSON text (summary._text) ----------------------
from libc.stdlib cimport realloc
from _json import encode_basestring_ascii as _ascii

from cpython.bytes cimport PyBytes_FromStringAndSize

cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    const char* PyUnicode_AsUTF8AndSize(object o, Py_ssize_t* size) except NULL
    long long PyLong_AsLongLongAndOverflow(object o, int* overflow) except? -1
    bint PyUnicode_IS_ASCII(object o)


cdef bint[256] _AS_IS  # the characters json writes as they are: printable ASCII but the quote and the backslash
for _k in range(256):
    _AS_IS[_k] = 0x20 <= _k <= 0x7e and _k != 34 and _k != 92


@cython.final  # its methods called in C, inlined
cdef class _Text:
    """An ASCII text written piece by piece into one buffer that grows."""
    cdef char* p
    cdef Py_ssize_t n, size
    cdef object encode  # json's encoder, for a value of a kind not written here

    def __cinit__(self):
        self.size = 4096
        self.n = 0
        self.p = <char*>malloc(self.size)
        if self.p == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.p)

    cdef inline int room(self, Py_ssize_t k) except -1:
        if self.n + k <= self.size:
            return 0
        return self._grow(k)

    cdef int _grow(self, Py_ssize_t k) except -1:
        cdef char* q
        while self.n + k > self.size:
            self.size *= 2
        q = <char*>realloc(self.p, self.size)
        if q == NULL:
            raise MemoryError()
        self.p = q
        return 0

    cdef inline int put(self, const char* s, Py_ssize_t k) except -1:
        self.room(k)
        memcpy(self.p + self.n, s, k)
        self.n += k
        return 0

    cdef int text(self, str s) except -1:
        """A str that is JSON already (what json writes is ASCII)."""
        cdef Py_ssize_t k
        if not PyUnicode_IS_ASCII(s):  # done() takes the text for ASCII unchecked
            raise ValueError("a JSON text here is ASCII")
        cdef const char* c = PyUnicode_AsUTF8AndSize(s, &k)
        return self.put(c, k)

    cdef int string(self, str s) except -1:
        """s as json.dumps writes a str (encode_basestring_ascii): one of printable ASCII without
        a quote or a backslash copied between its quotes, any other escaped by json's own; most
        keys and values are the first kind, and the call into json cost as much as the rest of
        an epoch's text."""
        cdef Py_ssize_t k, i
        cdef const unsigned char* c
        if PyUnicode_IS_ASCII(s):
            c = <const unsigned char*>PyUnicode_AsUTF8AndSize(s, &k)
            for i in range(k):
                if not _AS_IS[c[i]]:  # a control, DEL, `"`, `\`
                    break
            else:
                self.room(k + 2)
                self.p[self.n] = 34
                memcpy(self.p + self.n + 1, c, k)
                self.p[self.n + k + 1] = 34
                self.n += k + 2
                return 0
        return self.text(_ascii(s))

    cdef int value(self, object v) except -1:
        """v as json.dumps writes it: the kinds of a document here (None, bools, ints, floats, str,
        dicts of str keys, lists, tuples) written here, any other by `encode` (json's)."""
        cdef bint first = True
        cdef int overflow
        cdef long long i
        if v is None:
            return self.put("null", 4)
        if v is True:
            return self.put("true", 4)
        if v is False:
            return self.put("false", 5)
        t = type(v)
        if t is float:
            self.room(REPR_MAX)
            self.n += _json_double(v, self.p + self.n)
            return 0
        if t is str:
            return self.string(v)
        if t is int:
            i = PyLong_AsLongLongAndOverflow(v, &overflow)
            if overflow:
                return self.text(int.__repr__(v))
            self.room(24)
            self.n += _json_int(i, self.p + self.n)
            return 0
        if t is dict and all([type(k) is str for k in <dict>v]):
            self.put("{", 1)
            for k, x in (<dict>v).items():
                self.key(k, first)
                first = False
                self.value(x)
            return self.put("}", 1)
        if t is list or t is tuple:
            self.put("[", 1)
            for x in v:
                if not first:
                    self.put(", ", 2)
                first = False
                self.value(x)
            return self.put("]", 1)
        return self.text(self.encode(v))

    cdef int item(self, const char* before, object v) except -1:
        """What comes before a value (its key, in JSON), then the value."""
        self.put(before, strlen(before))
        return self.value(v)

    cdef int key(self, str k, bint first) except -1:
        if not first:
            self.put(", ", 2)
        self.string(k)
        return self.put(": ", 2)

    cdef str done(self):
        """The text: ASCII, as everything written here is, copied once, not checked again."""
        text = PyUnicode_New(self.n, 127)
        memcpy(PyUnicode_DATA(text), self.p, self.n)
        return text


DEF DELTA_MIN = 10  # compare.DELTA_MIN_BATCHES (checked when the kit is made)
# the places among compare.EpochRow's fields (checked when the kit is made) of those read here
DEF ROW_ACCEPT_LEN = 8
DEF ROW_ACCEPT_RATE = 9
DEF ROW_GEN_PER_DP = 12
DEF ROW_GEN_TOTAL = 13
DEF ROW_MIN_BATCHES = 14
DEF ROW_VS_PREVIOUS = 15
DEF ROW_VS_BASELINE = 16
DEF ROW_MATCHED = 18
DEF ROW_STOPS_PAYING_FROM = 19


cdef int _delta(_Text out, object d, _Slots at) except -1:
    """compare.Delta.to_json(), or null (at: Delta's slots)."""
    if d is None:
        return out.put("null", 4)
    out.item('{"epoch": ', at.get(d, 0))
    out.item(', "label": ', at.get(d, 1))
    out.item(', "gen_throughput": ', at.get(d, 2))
    out.item(', "change": ', at.get(d, 3))
    return out.put("}", 1)


cdef int _buckets(_Text out, list buckets, bint below, _Slots at) except -1:
    """[compare.BucketRow.to_json(), ...], each with its below_baseline for a context scale (at:
    BucketRow's slots)."""
    cdef bint first = True
    out.put("[", 1)
    for b in buckets:
        if not first:
            out.put(", ", 2)
        first = False
        out.put("{", 1)
        out.key(at.get(b, 0), True)
        out.value(at.get(b, 1))
        out.item(', "decode": ', at.get(b, 2))
        out.item(', "gen_throughput": ', at.get(b, 3))
        out.item(', "accept_len": ', at.get(b, 4))
        out.item(', "vs_previous": ', at.get(b, 5))
        out.item(', "vs_baseline": ', at.get(b, 6))
        if below:
            out.item(', "below_baseline": ', at.get(b, 7))
        out.put("}", 1)
    return out.put("]", 1)


def json_lines(values, encode):
    """b"".join((json.dumps(v) + "\n").encode() for v in values): the texts of EventLog's
    file. encode: json's encoder, for a value of a kind not written here."""
    cdef _Text out = _Text()
    out.encode = encode
    for v in values:
        out.value(v)
        out.put("\n", 1)
    return PyBytes_FromStringAndSize(out.p, out.n)


# the keys compare.compared() sets over an epoch's, in its order
_COMPARED = ("host_totals", "vs_previous", "vs_baseline", "by_load", "by_context", "stops_paying_from")
_WRITTEN_AT = {k: i for i, k in enumerate(_COMPARED + ("ranks",))}  # what epoch_json writes from row or ranks


def epoch_json(dict doc, row, str ranks, encode):
    """json.dumps(compare.compared(doc, row)) with doc's `ranks` given as their JSON text
    (summary._encode_with): written from the row's fields, without the dicts compared() makes.
    encode: json's encoder, for a value of a kind not written here (a setting's list)."""
    cdef _Text out = _Text()
    out.encode = encode
    cdef bint first = True
    cdef dict per_dp
    cdef _Kit kit = _kit()
    cdef _Slots of = kit.epoch_row  # the row's fields read in their places
    out.put("{", 1)
    cdef int at
    keys = list(doc)
    keys.extend([k for k in _COMPARED if k not in doc])
    for k in keys:
        out.key(k, first)
        first = False
        at = _WRITTEN_AT.get(k, -1)  # one lookup, not a comparison with each of them
        if at == -1:
            out.value(doc[k])
        elif at == 0:  # host_totals
            per_dp = of.get(row, ROW_GEN_PER_DP)
            gen_total, min_batches = of.get(row, ROW_GEN_TOTAL), of.get(row, ROW_MIN_BATCHES)
            out.item('{"accept_len": ', of.get(row, ROW_ACCEPT_LEN))
            out.item(', "accept_rate": ', of.get(row, ROW_ACCEPT_RATE))
            out.item(', "gen_throughput": ', gen_total)
            out.put(', "gen_throughput_per_dp": {', 28)
            for i, (g, v) in enumerate(per_dp.items()):
                out.key(g, i == 0)
                out.value(v)
            out.item('}, "dp_groups": ', len(per_dp))
            out.item(', "min_batches": ', min_batches)
            out.item(', "comparable": ', gen_total is not None and min_batches >= DELTA_MIN)  # EpochRow.comparable
            out.put("}", 1)
        elif at == 1:
            _delta(out, of.get(row, ROW_VS_PREVIOUS), kit.delta)
        elif at == 2:
            _delta(out, of.get(row, ROW_VS_BASELINE), kit.delta)
        elif at == 3 or at == 4:  # EpochRow.by_load, .by_context
            _buckets(out, (<dict>of.get(row, ROW_MATCHED)).get(kit.LOAD_KEY if at == 3 else kit.CONTEXT_KEY, []),
                     at == 4, kit.bucket_row)
        elif at == 5:
            out.value(of.get(row, ROW_STOPS_PAYING_FROM))
        else:  # ranks
            out.text(ranks)
    out.put("}", 1)
    return out.done()


cdef int _stats_into(_Text out, const double* st, Py_ssize_t m, tuple keys) except -1:
    """What stats_json writes, into out."""
    cdef Py_ssize_t i, j
    cdef const char* text = _STAT_TEXT
    cdef bytes key
    out.room(2 + m * (2 + 7 * (12 + REPR_MAX) + 2))
    out.put("{", 1)
    for i in range(m):
        key = keys[i]
        if i:
            out.put(", ", 2)
        out.put(key, len(key))
        if st[7 * i] != st[7 * i]:
            out.put("null", 4)
            continue
        for j in range(7):
            out.put(text + _STAT_AT[j], _STAT_AT[j + 1] - _STAT_AT[j])
            out.room(32)
            if j == 0:
                out.n += _json_int(<long long>st[7 * i], out.p + out.n)
            else:
                out.n += _json_double(st[7 * i + j], out.p + out.n)
        out.put("}", 1)
    return out.put("}", 1)


def stats_json(array.array stats, tuple keys):
    """json.dumps of valueset.FrozenRows.describe(): each metric's key (`keys`: its JSON and `: `,
    as bytes), then its statistics from stats (7 doubles a metric: n, mean, p50, p90, min, max,
    last; NaN: none, `null`), the same text to the byte, without a dict or a float made."""
    cdef _Text out = _Text()
    if len(stats) != 7 * len(keys):
        raise ValueError("stats_json: 7 statistics a metric")
    _stats_into(out, stats.data.as_doubles, len(keys), keys)
    return out.done()


# -- runs that are over: their ranks' JSON, their comparison, their packing -------------------------
import dataclasses
from operator import attrgetter



cdef extern from "structmember.h":
    ctypedef struct PyMemberDef:
        int type
        Py_ssize_t offset
        int flags
    int T_OBJECT_EX
    int READONLY

cdef extern from "Python.h":
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member
    object PyType_GenericAlloc(type t, Py_ssize_t nitems)

from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from types import MemberDescriptorType

DEF MAX_SLOTS = 32


cdef class _Slots:
    """Where each of these fields of a class with __slots__ lives in its objects: an object made
    here (allocated as object.__new__ allocates it) has them set as `obj.field = v` sets them, and
    read, without the look-up of each field by name (some 10 instructions, not 150: 10,000 runs
    thawed, compared and written set and read 2,000,000)."""
    cdef type cls
    cdef tuple names
    cdef Py_ssize_t[MAX_SLOTS] at

    def __init__(self, cls, names):
        cdef PyMemberDef* m
        if len(names) > MAX_SLOTS:
            raise ImportError(f"{cls.__name__}: too many fields")
        if cls.__new__ is not object.__new__ or getattr(cls, "__abstractmethods__", None):
            raise ImportError(f"{cls.__name__} is made otherwise than by object.__new__")
        self.cls, self.names = cls, tuple(names)
        for i, name in enumerate(names):
            d = next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__), None)
            if type(d) is not MemberDescriptorType or not issubclass(cls, d.__objclass__):
                raise ImportError(f"{cls.__name__}.{name} is not a slot")
            m = (<PyMemberDescrObject*><PyObject*>d).d_member
            if m.type != T_OBJECT_EX or m.flags & READONLY:
                raise ImportError(f"{cls.__name__}.{name} is not a slot to set")
            self.at[i] = m.offset

    cdef object make(self):
        """An object of the class with none of its fields set yet (as __init__ finds it): what
        object.__new__ makes, without its checks of the call."""
        return PyType_GenericAlloc(self.cls, 0)

    cdef inline object get(self, object obj, Py_ssize_t i):
        """obj's i-th field, read in its place where obj is of the class (else by its name)."""
        cdef PyObject* v
        if type(obj) is self.cls:
            v = (<PyObject**>((<char*><PyObject*>obj) + self.at[i]))[0]
            if v != NULL:
                return <object>v
        return getattr(obj, self.names[i])

    cdef inline int put(self, object obj, Py_ssize_t i, object v) except -1:
        """obj's i-th field set to v: obj one that make() made."""
        cdef PyObject** p = <PyObject**>((<char*><PyObject*>obj) + self.at[i])
        cdef PyObject* old = p[0]
        Py_INCREF(v)
        p[0] = <PyObject*>v
        Py_XDECREF(old)
        return 0


DEF RANKS_KEPT = 4096  # ranks, or sets of them, whose DP group or order _Kit keeps (a log has a few)


cdef class _Kit:
    """What these functions read of the Python modules that import this one, imported once, when
    first asked."""
    cdef readonly object compare, rank_key, Epoch, FrozenRows, FrozenBuckets, SCALES, CONTEXT, EPOCH_METRICS
    cdef readonly object LOAD_KEY, CONTEXT_KEY  # the json_key of loadmatch's LOAD and CONTEXT (EpochRow.by_load, .by_context)
    cdef readonly object Rows, Buckets, running_keys, context_keys  # what freeze_figures() reads in C
    # what _kept_rows() and _kept_buckets() set as FrozenRows._keep and FrozenBuckets._keep do
    cdef object shared, nan, no_sets, no_rows, no_sums, no_bucket_rows
    cdef object names_in, metrics_in, kept_names  # the last names and metrics kept: (names, metrics, nans) shared
    cdef dict dp_groups, rank_orders  # rank -> compare.dp_group(rank); ranks -> in rank_key's order
    cdef readonly object others  # the getter of an Epoch's fields but per_rank and matched
    cdef readonly tuple epoch_fields
    cdef readonly Py_ssize_t at  # per_rank's place among Epoch's fields (matched follows)
    cdef Py_ssize_t at_accept_len, at_accept_rate, at_gen  # those metrics' places among EPOCH_METRICS
    # where the fields of what is made here live (_Slots), in the order the functions set them
    cdef _Slots epoch, epoch_row, bucket_row, delta, frozen_rows, frozen_buckets

    def __init__(self):
        from mtptui.core import compare, epochs, loadmatch, valueset
        if compare.DELTA_MIN_BATCHES != DELTA_MIN:
            raise ImportError("compare.DELTA_MIN_BATCHES is not the one built in")
        # what frozen_row, _delta_of and _bucket_row set, in this order, as each __init__ does
        made = {compare.Delta: ("index", "label", "gen_total", "change"),
                compare.BucketRow: ("name", "label", "decode", "gen_throughput", "accept_len", "vs_previous",
                                    "vs_baseline", "below_baseline"),
                compare.EpochRow: ("host", "index", "start", "end", "label", "reason", "decode_batches", "spec_off",
                                   "accept_len", "accept_rate", "gen_per_rank", "gen_mean", "gen_per_dp", "gen_total",
                                   "min_batches", "vs_previous", "vs_baseline", "short_before", "matched",
                                   "stops_paying_from", "ended")}
        for cls, fields in made.items():
            if tuple(f.name for f in dataclasses.fields(cls)) != fields or hasattr(cls, "__post_init__"):
                raise ImportError(f"compare.{cls.__name__}'s fields are not the ones built in")
        self.delta, self.bucket_row, self.epoch_row = [_Slots(cls, fields) for cls, fields in made.items()]
        names = [f.name for f in dataclasses.fields(epochs.Epoch)]
        if hasattr(epochs.Epoch, "__post_init__"):
            raise ImportError("Epoch's __init__ does more than set its fields (thaw_epochs sets them)")
        self.at = names.index("per_rank")
        if names[self.at + 1] != "matched":
            raise ImportError("Epoch's fields: matched must follow per_rank")
        self.others = attrgetter(*[n for n in names if n not in ("per_rank", "matched")])
        self.epoch_fields = tuple(names)  # thaw_epochs sets them in this order, as Epoch's __init__ does
        self.epoch = _Slots(epochs.Epoch, names)
        self.frozen_rows = _Slots(valueset.FrozenRows, _FROZEN_ROWS)
        self.frozen_buckets = _Slots(loadmatch.FrozenBuckets, _FROZEN_BUCKETS)
        self.compare, self.rank_key, self.Epoch = compare, epochs.rank_key, epochs.Epoch
        self.FrozenRows, self.FrozenBuckets = valueset.FrozenRows, loadmatch.FrozenBuckets
        self.SCALES, self.CONTEXT, self.EPOCH_METRICS = loadmatch.SCALES, loadmatch.CONTEXT, epochs.EPOCH_METRICS
        self.at_accept_len, self.at_accept_rate, self.at_gen = [epochs.EPOCH_METRICS.index(m) for m in (
            "accept_len", "accept_rate", "gen_throughput")]
        self.LOAD_KEY, self.CONTEXT_KEY = loadmatch.LOAD.json_key, loadmatch.CONTEXT.json_key
        self.Rows, self.Buckets = valueset.Rows, loadmatch.Buckets
        self.running_keys, self.context_keys = loadmatch._running_keys, loadmatch.context_keys
        self.shared, self.nan = valueset._shared, valueset.NAN
        self.no_sets, self.no_rows = valueset._NO_SETS, valueset._NO_ROWS
        self.no_sums, self.no_bucket_rows = loadmatch._NO_SUMS, loadmatch._NO_ROWS
        self.dp_groups, self.rank_orders = {}, {}


# the slots _kept_rows() and _kept_buckets() set, in this order
_FROZEN_ROWS = ("stats", "names", "metrics", "nans", "tally", "_sets", "buf", "limit")
_FROZEN_BUCKETS = ("scale", "decode", "means", "gen", "accept", "buf", "rows", "rows_of")


cdef object _kept_rows(_Kit kit, names, metrics, stats, bint tally):
    """FrozenRows.kept(names, metrics, stats, tally), made in C: the slots FrozenRows._keep sets,
    set to the same (tests/unit/test_compiled_compare.py holds the two to it): some 300
    instructions, not the 5k or more of a call into Python, per rank of 10,000 runs."""
    cdef _Slots at = kit.frozen_rows
    if names != kit.names_in or metrics != kit.metrics_in:  # each live rank's names are a tuple of its own
        kit.kept_names = (kit.shared(names), kit.shared(metrics), kit.shared((kit.nan,) * len(names)))
        kit.names_in, kit.metrics_in = names, metrics
    kept = <tuple>kit.kept_names
    rows = at.make()
    at.put(rows, 0, stats)
    at.put(rows, 1, kept[0])
    at.put(rows, 2, kept[1])
    at.put(rows, 3, kept[2])
    at.put(rows, 4, tally)
    at.put(rows, 5, kit.no_sets)
    at.put(rows, 6, kit.no_rows)
    at.put(rows, 7, 0)
    return rows


cdef object _kept_buckets(_Kit kit, scale, decode, means):
    """FrozenBuckets.kept(scale, decode, means), made in C as _kept_rows() makes rows."""
    cdef _Slots at = kit.frozen_buckets
    b = at.make()
    at.put(b, 0, scale)
    at.put(b, 1, decode)
    at.put(b, 2, means)
    at.put(b, 3, kit.no_sums)
    at.put(b, 4, kit.no_sums)
    at.put(b, 5, kit.no_bucket_rows)
    at.put(b, 6, kit.no_bucket_rows)
    at.put(b, 7, ())
    return b


cdef _Kit _the_kit = None


cdef _Kit _kit():
    global _the_kit
    if _the_kit is None:
        _the_kit = _Kit()
    return _the_kit


cdef dict _METRIC_KEYS = {}  # metrics -> each one's JSON and `: `, as bytes


def ranks_json(dict per_rank):
    """Epoch.ranks_json() of these ranks, in rank_key's order (_in_rank_order), each one's rows
    FrozenRows: each rank's JSON, then its statistics as stats_json writes them; None where a
    rank's rows are not frozen (Python then)."""
    cdef _Text out = _Text()
    cdef bint first = True
    cdef array.array stats
    cdef _Kit kit = _kit()
    frozen_rows = kit.FrozenRows
    out.put("{", 1)
    for rank in _in_rank_order(kit, per_rank):
        rows = per_rank[rank]
        if type(rows) is not frozen_rows:
            return None
        metrics = rows.metrics
        keys = _METRIC_KEYS.get(metrics)
        if keys is None:
            keys = _METRIC_KEYS[metrics] = tuple([_ascii(m).encode() + b": " for m in metrics])
        stats = rows.stats
        if len(stats) != 7 * len(keys):
            return None
        out.key(rank, first)
        first = False
        _stats_into(out, stats.data.as_doubles, len(keys), keys)
    out.put("}", 1)
    return out.done()


cdef object _sum = sum


cdef object _pooled(list ns, list means):
    """compare.pooled_mean of ranks' (n, mean): the same arithmetic, Python's own sum()."""
    cdef Py_ssize_t k = len(means), i
    cdef long long n = 0
    if k == 1:
        return means[0]
    for i in range(k):
        n += <long long>ns[i]
    if not n:
        return None
    return _sum([<double>means[i] * <double><long long>ns[i] for i in range(k)]) / <double>n


cdef object _change(object decode, object gen, object other):
    """compare._bucket_change."""
    if other is None or other.gen_throughput is None or decode < DELTA_MIN or gen is None:
        return None
    return gen / other.gen_throughput - 1


cdef object _delta_of(object gen_total, bint comparable, object other):
    """compare._delta."""
    if other is None or gen_total is None or not comparable or not other.gen_total:
        return None
    cdef _Slots at = _kit().delta
    d = at.make()  # made as its __init__ makes it (a slotted dataclass: its fields set)
    at.put(d, 0, other.index)
    at.put(d, 1, other.label)
    at.put(d, 2, other.gen_total)
    at.put(d, 3, gen_total / other.gen_total - 1)
    return d


cdef object _bucket_row(_Kit kit, name, label, decode, gen, acc, vs_previous, vs_baseline, bint below):
    """compare.BucketRow(...), made as its __init__ makes it (a slotted dataclass: its fields set):
    a few per run, each pass."""
    cdef _Slots at = kit.bucket_row
    b = at.make()
    at.put(b, 0, name)
    at.put(b, 1, label)
    at.put(b, 2, decode)
    at.put(b, 3, gen)
    at.put(b, 4, acc)
    at.put(b, 5, vs_previous)
    at.put(b, 6, vs_baseline)
    at.put(b, 7, below)
    return b


def frozen_row(state, epoch, str label, ended):
    """state.row(epoch.to_json(brief=True)) (compare.Comparison) for a run that is over, read
    from its figures as kept (valueset.FrozenRows, loadmatch.FrozenBuckets), without its brief
    form made: the same row, and the same state after it. None (nothing changed) for an epoch
    that is not over, or kept otherwise: Python's row() then."""
    cdef const double* st
    cdef double n_
    cdef Py_ssize_t gi, ai, ri, i, j
    cdef _Slots at
    cdef bint spec_off, comparable, first, below, in_context
    cdef _Kit kit = _kit()
    # typed: their get() a C call, not a method's (a run's pass makes some 30 of them)
    cdef dict groups, previous, baseline, decoded, previous_bucket, baseline_bucket
    cmp = kit.compare
    if not epoch.frozen:
        return None
    per_rank = epoch.per_rank
    metrics = kit.EPOCH_METRICS
    for rows in per_rank.values():
        if type(rows) is not kit.FrozenRows or rows.metrics != metrics:
            return None
    matched = epoch.matched
    scales = kit.SCALES
    if len(matched) != len(scales):
        return None
    for i in range(len(scales)):
        if type(matched[i]) is not kit.FrozenBuckets or matched[i].scale is not scales[i]:
            return None
    ai, ri, gi = kit.at_accept_len, kit.at_accept_rate, kit.at_gen  # their places among EPOCH_METRICS
    host = epoch.host
    gen_per_rank = {}
    groups = {}  # DP group -> ([n], [mean]) of its ranks' gen throughput
    al_n, al_m, ar_n, ar_m = [], [], [], []
    for rank in _in_rank_order(kit, per_rank):
        st = (<array.array>per_rank[rank].stats).data.as_doubles
        n_ = st[7 * gi]
        if n_ == n_:
            gen_per_rank[rank] = st[7 * gi + 1]
            group = kit.dp_groups.get(rank)
            if group is None:
                group = cmp.dp_group(rank)
                if len(kit.dp_groups) < RANKS_KEPT:
                    kit.dp_groups[rank] = group
            g = groups.get(group)
            if g is None:
                g = groups[group] = ([], [])
            (<list>g[0]).append(<long long>n_)
            (<list>g[1]).append(st[7 * gi + 1])
        n_ = st[7 * ai]
        if n_ == n_:
            al_n.append(<long long>n_)
            al_m.append(st[7 * ai + 1])
        n_ = st[7 * ri]
        if n_ == n_:
            ar_n.append(<long long>n_)
            ar_m.append(st[7 * ri + 1])
    per_dp = {}
    min_batches = None
    for name, g in groups.items():
        m = _pooled(g[0], g[1])
        if m is not None:
            per_dp[name] = m
        count = _sum(g[0])
        if min_batches is None or count < min_batches:
            min_batches = count
    if min_batches is None:
        min_batches = 0
    accept_len = _pooled(al_n, al_m)
    accept_rate = _pooled(ar_n, ar_m)
    batches = epoch.batches
    spec_off = label == "spec off" or (label == "settings unknown" and batches > 0
                                       and accept_len is None and accept_rate is None)
    gen_total = _sum(per_dp.values()) if per_dp else None
    comparable = gen_total is not None and min_batches >= DELTA_MIN
    previous, baseline, decoded = state.previous, state.baseline, state.decoded
    short_before = None
    last = decoded.get(host)
    if last is not None and not last.comparable:
        short_before = (last.index, last.min_batches)
    at = kit.epoch_row
    row = at.make()  # its fields set in their order, as its __init__ sets them (_Kit checks them)
    at.put(row, 0, host)
    at.put(row, 1, epoch.index)
    at.put(row, 2, epoch.start)
    at.put(row, 3, epoch.end)
    at.put(row, 4, label)
    at.put(row, 5, epoch.reason)
    at.put(row, 6, batches)
    at.put(row, 7, spec_off)
    at.put(row, 8, accept_len)
    at.put(row, 9, accept_rate)
    at.put(row, 10, gen_per_rank)
    at.put(row, 11, _sum(gen_per_rank.values()) / len(gen_per_rank) if gen_per_rank else None)
    at.put(row, 12, per_dp)
    at.put(row, 13, gen_total)
    at.put(row, 14, min_batches)
    at.put(row, 15, _delta_of(gen_total, comparable, previous.get(host)))
    at.put(row, 16, _delta_of(gen_total, comparable, baseline.get(host)))
    at.put(row, 17, short_before)
    row_matched = {}
    at.put(row, 18, row_matched)
    at.put(row, 19, None)
    at.put(row, 20, ended)
    if gen_total is not None:
        decoded[host] = row
    previous_bucket, baseline_bucket = state.previous_bucket, state.baseline_bucket
    stops = None  # compare.stops_paying_from of the context buckets, as they are made
    for i in range(len(scales)):
        scale = scales[i]
        in_context = scale is kit.CONTEXT
        frozen = matched[i]
        means = frozen.means
        decode = frozen.decode
        name = scale.name
        buckets = row_matched[scale.json_key] = []
        for j, (blabel, _) in enumerate(scale.buckets):
            d = decode[j]
            if not d:
                continue
            gen, acc = means[2 * j], means[2 * j + 1]
            if gen is not None and gen != gen:
                gen = None
            if acc is not None and acc != acc:
                acc = None
            key = (host, name, blabel)
            base = _change(d, gen, baseline_bucket.get(key))
            below = not spec_off and base is not None and base < 0
            bucket = _bucket_row(kit, name, blabel, d, gen, acc, _change(d, gen, previous_bucket.get(key)), base, below)
            buckets.append(bucket)
            if in_context and base is not None:  # the first below the baseline from which all are
                if not below:
                    stops = None
                elif stops is None:
                    stops = blabel
            if gen and d >= DELTA_MIN:  # BucketRow.comparable
                previous_bucket[key] = bucket
                if spec_off:
                    baseline_bucket[key] = bucket
    at.put(row, 19, stops)
    if comparable:
        previous[host] = row
        if spec_off:
            baseline[host] = row
    return row


cdef list _in_rank_order(_Kit kit, dict per_rank):
    """sorted(per_rank, key=rank_key), kept per set of ranks as they came: every run of a
    server has the same few."""
    ranks = tuple(per_rank)
    order = kit.rank_orders.get(ranks)
    if order is None:
        order = sorted(ranks, key=kit.rank_key)
        if len(kit.rank_orders) < RANKS_KEPT:
            kit.rank_orders[ranks] = order
    return order


# -- a parallel reader's runs that are over, packed to cross (EpochTracker.__getstate__) -------------
cdef bint _plain(object e, _Kit kit):
    """A run that is over whose figures pack: FrozenRows of one kind for every rank, FrozenBuckets
    of C's means for each scale in order."""
    cdef Py_ssize_t i
    if not e.frozen:
        return False
    names = metrics = None
    for rows in e.per_rank.values():
        if type(rows) is not kit.FrozenRows:
            return False
        if names is None:
            names, metrics = rows.names, rows.metrics
        elif rows.names != names or rows.metrics != metrics:
            return False
        stats = rows.stats
        if type(stats) is not array.array or (<array.array>stats).ob_descr.typecode != b'd' or len(stats) != 7 * len(metrics):
            return False
    matched, scales = e.matched, kit.SCALES
    if len(matched) != len(scales):
        return False
    for i in range(len(scales)):
        b = matched[i]
        means = b.means
        if (type(b) is not kit.FrozenBuckets or b.scale is not scales[i] or type(means) is not array.array
                or (<array.array>means).ob_descr.typecode != b'd'):
            return False
        if len(b.decode) != len(scales[i].buckets) or len(b.means) != 2 * len(b.decode):
            return False
    return True


cdef inline int _append_doubles(array.array dst, array.array src) except -1:
    """dst.extend(src), both of doubles (_plain checks src), copied whole."""
    return array.extend_buffer(dst, src.data.as_chars, len(src))


def pack_epochs(list eps):
    """A host's epochs as (items, stats, decode lines, means): each run that is over as a tuple of
    its other fields and its ranks (_plain), its figures in the three arrays for all; any other
    epoch as it is. Pickled, 5,000 runs cross several times faster than as their objects."""
    cdef _Kit kit = _kit()
    others = kit.others
    items = []
    cdef array.array stats = array.array("d"), decode = array.array("q"), means = array.array("d")
    cdef Py_ssize_t at, i
    for e in eps:
        if not _plain(e, kit):
            items.append(e)
            continue
        per_rank = e.per_rank
        names = metrics = ()
        for rows in per_rank.values():
            names, metrics = rows.names, rows.metrics
            _append_doubles(stats, rows.stats)
        for b in e.matched:
            lines = b.decode
            at = len(decode)
            array.resize_smart(decode, at + len(lines))
            for i in range(len(lines)):
                decode.data.as_longlongs[at + i] = lines[i]
            _append_doubles(means, b.means)
        items.append(others(e) + (tuple(per_rank), names, metrics))
    return items, stats, decode, means


def thaw_epochs(tuple packed):
    """pack_epochs()'s epochs, each as it was (FrozenRows.kept, FrozenBuckets.kept), made in C:
    each Epoch's fields set in their order, as its __init__ sets them."""
    cdef _Kit kit = _kit()
    cdef _Slots slots = kit.epoch
    cdef Py_ssize_t at = kit.at
    scales = kit.SCALES
    items, stats, decode, means = packed
    cdef array.array st = stats, dc = decode, mn = means
    cdef Py_ssize_t s_at = 0, d_at = 0, m_at = 0, w, k, n, f, j
    cdef tuple item
    out = []
    for it in items:
        if type(it) is not tuple:
            out.append(it)
            continue
        item = it
        n = len(item) - 3  # (no index from the end here: wraparound is off)
        ranks, names, metrics = item[n], item[n + 1], item[n + 2]
        w = 7 * len(metrics)
        per_rank = {}
        for rank in ranks:
            per_rank[rank] = _kept_rows(kit, names, metrics, _doubles_at(st, s_at, w), False)
            s_at += w
        matched = []
        for scale in scales:
            k = len(scale.buckets)
            matched.append(_kept_buckets(kit, scale, [dc.data.as_longlongs[d_at + j] for j in range(k)],
                                         _doubles_at(mn, m_at, 2 * k)))
            d_at += k
            m_at += 2 * k
        e = slots.make()
        for f in range(at):
            slots.put(e, f, item[f])
        slots.put(e, at, per_rank)
        slots.put(e, at + 1, tuple(matched))
        for f in range(at, n):
            slots.put(e, f + 2, item[f])
        out.append(e)
    return out


cdef array.array _doubles_at(array.array src, Py_ssize_t at, Py_ssize_t n):
    """src[at:at + n], of doubles, copied in C."""
    cdef array.array out = array.clone(_DOUBLES, n, False)
    memcpy(out.data.as_doubles, src.data.as_doubles + at, n * sizeof(double))
    return out


# -- a run frozen once it is over (Epoch.freeze) ----------------------------------------------------
def freeze_figures(dict per_rank, tuple matched):
    """Epoch.freeze()'s figures, ({rank: FrozenRows(rows)}, (FrozenBuckets(b), ...)), the same to
    the bit, in one call: a short run's ranks and buckets, whose lines all wait in their buffers,
    described and averaged straight from those (describe_columns, split_means' pass: no column
    copied out), and kept as thaw_epochs() keeps them (FrozenRows.kept, FrozenBuckets.kept); any
    other frozen by those classes. 10,000 runs freeze twice as fast."""
    cdef _Kit kit = _kit()
    ranks = {}
    for rank, rows in per_rank.items():
        ranks[rank] = _frozen_rows(rows, kit)
    return ranks, tuple([_frozen_buckets(b, kit) for b in matched])


cdef object _frozen_rows(rows, _Kit kit):
    cdef array.array stats
    if type(rows) is kit.Rows:
        buf, sets = rows.buf, rows._sets
        if type(buf) is array.array and len(buf) and (sets is None or not _any_counted(sets)):
            names, metrics = rows.names, rows.metrics
            stats = _describe_columns(buf, len(names), len(metrics))
            if stats is not None:
                return _kept_rows(kit, names, metrics, stats, rows.tally)
    return kit.FrozenRows(rows)


cdef bint _any_counted(dict sets) except -1:
    for v in sets.values():
        if v.n:
            return True
    return False


cdef object _frozen_buckets(b, _Kit kit):
    """FrozenBuckets(b); in C for a short run's (its lines all in its rows, of whole rows, the
    scale's keys either of loadmatch's)."""
    cdef array.array rows
    cdef const double* starts[1]
    cdef Py_ssize_t counts[1]
    if type(b) is not kit.Buckets:
        return kit.FrozenBuckets(b)
    rows_, scale, names = b.rows, b.scale, b.rows_of
    keys = scale.keys
    if (type(rows_) is not array.array or not len(rows_) or len(b.buf) or any(b.decode)
            or not (keys is kit.context_keys or keys is kit.running_keys) or not names or len(rows_) % len(names)):
        return kit.FrozenBuckets(b)
    rows = rows_
    starts[0], counts[0] = rows.data.as_doubles, len(rows) // len(names)
    frozen = _split_rows(kit, scale, names, starts, counts, 1)
    # a field it lacks (FrozenBuckets says so), a value not finite or a sum that overflows: Python's way
    return kit.FrozenBuckets(b) if frozen is None else frozen


cdef object _split_rows(_Kit kit, scale, tuple names, const double** starts, const Py_ssize_t* counts,
                        Py_ssize_t spans):
    """FrozenBuckets of this scale (one of loadmatch's keys) of the rows (of `names`) of spans in
    turn, counts[i] rows from starts[i], as _frozen_buckets() splits them; None where a field is
    missing, a value is not finite or a sum overflows."""
    cdef Split sp
    cdef double[MAX_BUCKETS] lo
    cdef const double* r
    cdef Py_ssize_t k = len(names), n_rows = 0, i, j, at_key, at_tokens = 0, at_full = 0, at_gen, at_accept
    cdef double key
    cdef bint context = scale.keys is kit.context_keys
    fields, n = scale.row, len(scale.fields)
    try:
        if context:  # (tokens, full, running): loadmatch.context_keys'
            at_tokens, at_full, at_key = names.index(fields[0]), names.index(fields[1]), names.index(fields[2])
        else:  # running: its own key
            at_key = names.index(fields[0])
        at_gen, at_accept = names.index(fields[n]), names.index(fields[n + 1])
    except ValueError:
        return None
    for j in range(spans):
        n_rows += counts[j]
    for fixed in (n_rows <= FIXED_TERMS, False):  # the sums in 128 bits where they fit, else partials
        _split_start(scale.bounds, &sp, lo, fixed)
        for j in range(spans):
            r = starts[j]
            for i in range(counts[j]):
                key = (_context_key(r[at_tokens], r[at_full], r[at_key]) if context else r[at_key])
                if not _split_line(&sp, lo, key, r[at_gen], r[at_accept]):
                    return None
                r += k
        if not sp.redo:
            break
    decode, means = _means(&sp)
    return _kept_buckets(kit, scale, decode, means)


DEF MAX_SPANS = 256  # series of a run frozen from their rows (a host's ranks)


def freeze_rows(list spans, tuple names, tuple metrics, tuple matched):
    """freeze_figures() of a run whose rows all wait in its series' row buffers, read there, none
    handed over: spans, (rank, rows, at) a series each with rows, its run's rows rows[at:] (whole
    rows of `names`; its metrics first), in the order the series hand theirs over. The figures
    are freeze_figures()'s of the run had each rank been handed its rows (Rows of these metrics,
    Rows.add_rows) and its Buckets all of them in turn (Buckets.add_rows), to the bit: a bucket's
    sums are exact in any order. matched: the run's Buckets, holding no lines. None where anything
    is otherwise (no spans or too many, a value not finite): then they are handed over (Python's way)."""
    cdef _Kit kit = _kit()
    cdef const double* starts[MAX_SPANS]
    cdef Py_ssize_t counts[MAX_SPANS]
    cdef Py_ssize_t k = len(names), m = len(metrics), i = 0, at, size
    cdef array.array rows
    if not spans or len(spans) > MAX_SPANS or not 1 <= m <= k or tuple(names[:m]) != metrics:
        return None
    for b in matched:
        if type(b) is not kit.Buckets or len(b.rows) or len(b.buf) or any(b.decode):
            return None
        if not (b.scale.keys is kit.context_keys or b.scale.keys is kit.running_keys):
            return None
    ranks = {}
    for rank, rows_, at_ in spans:
        if type(rows_) is not array.array:
            return None
        rows, at = rows_, at_
        size = len(rows)
        if (<array.array>rows).ob_descr.typecode != b'd' or at < 0 or at >= size or at % k or size % k:
            return None
        starts[i], counts[i] = rows.data.as_doubles + at, (size - at) // k
        stats = _describe_rows(starts[i], counts[i], k, m)
        if stats is None or rank in ranks:
            return None
        ranks[rank] = _kept_rows(kit, names, metrics, stats, False)
        i += 1
    frozen = []
    for b in matched:
        f = _split_rows(kit, b.scale, names, starts, counts, i)
        if f is None:
            return None
        frozen.append(f)
    return ranks, tuple(frozen)

