"""The prefixes that real deployments put before SGLang's batch lines, other than its default.

SGLang's own prefix (`[2026-03-09 16:03:25 DP3 TP3 EP3] `, sglang.PREFIX) takes the fast path.
What else is seen in the wild, and read here:
- a Ray actor's decoration before it, `(SGLangEngine pid=41820) ` or `(SGLangEngine pid=111711,
  ip=10.15.36.1) `, from RL frameworks that run engines as actors: each actor is an engine of
  its own, so its identity goes into the rank label (`pid=41820 TP0`, `pid=111711@10.15.36.1
  TP0`): one series per engine, wherever the lines were read (a source's host names the machine
  whose log it reads, not the engines in it);
- any other logging format (Python logging's `%(asctime)s [%(levelname)s] %(name)s: `, `[gpu=0] `,
  a rank inside a file-and-line bracket, a container runtime's or syslog's stamp): whatever
  precedes the head, its rank tokens and its stamp are read wherever they are.
"""

from __future__ import annotations

import re

# `(SGLangEngine pid=41820) `, `(SGLangEngine pid=111711, ip=10.15.36.1) `, Ray's colour removed
_ACTOR = re.compile(r"\(([A-Za-z_][\w.-]*) pid=(\d+)(?:, ip=([0-9A-Fa-f.:]+))?\) ?")
# Ray folds repeated lines into the first one, with this at its end
_REPEATED = re.compile(r" ?\[repeated \d+x across cluster\]$")

# SGLang's rank names (reference §2) and old versions' `gpu=N`, as whole tokens of the prefix
_RANK = re.compile(r"(?<![\w=.:-])((?:DP|PP|ATTN_CP|MOE_DP|TP|EP)-?\d+|gpu=\d+)(?![\w=.:-])")
_MONTH = r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
# A stamp: a date (ISO) or a month and day (syslog) or nothing, then the time of day, its fraction
# (`.123` or Python logging's `,123`) and a zone
_TIME = r"(\d\d:\d\d:\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?(?![\w:])"
_STAMP = re.compile(r"(?<![\w:.-])(?:(\d{4}-\d\d-\d\d)[ T]|" + _MONTH + r" ([ \d]\d) )?" + _TIME)
_DATED = re.compile(r"(?<![\w:.-])(\d{4}-\d\d-\d\d)[ T]" + _TIME)

# What a prefix's stamp gives
FULL, TIME_ONLY, MONTH_DAY, NO_STAMP = "full", "time", "month-day", "none"


def actor(text: str) -> tuple[str, int] | None:
    """(engine token, where the rest begins) for a Ray actor's prefix at the start, else None."""
    m = _ACTOR.match(text)
    if m is None:
        return None
    _, pid, ip = m.groups()
    return (f"pid={pid}" if ip is None else f"pid={pid}@{ip}"), m.end()


def without_repeat_note(text: str) -> str:
    """A line that Ray folded others into, without the note saying so (the values are the first
    line's: the others are gone from the log)."""
    if text.endswith("cluster]"):
        return _REPEATED.sub("", text)
    return text


def head_at(text: str) -> int:
    """Where a batch head (`Decode batch`, `Prefill batch`) begins: at the start of the text or
    after a separator (a space, `:` as in Python's `INFO:name:message`, a bracket); else -1. A
    head inside a word or a dotted name, a quotation or an assignment (`text='Decode batch, ...'`)
    is none."""
    first = -1
    for head in ("Decode batch", "Prefill batch"):
        i = text.find(head)
        while i > 0 and (text[i - 1].isalnum() or text[i - 1] in "'\"=_."):
            i = text.find(head, i + 1)
        if i >= 0 and (first < 0 or i < first):
            first = i
    return first


def read(prefix: str) -> tuple[str, tuple]:
    """(rank tokens, stamp) of the text before a head. The stamp is (FULL, date, hms, fraction,
    zone), (TIME_ONLY, None, hms, fraction, None), (MONTH_DAY, 'Mar 09', hms, fraction, None) or
    (NO_STAMP,); a dated stamp wins over the others, the first one over later ones."""
    rank = " ".join(_RANK.findall(prefix)) if "P" in prefix or "=" in prefix else ""
    m = _STAMP.search(prefix)
    if m is None:
        return rank, (NO_STAMP,)
    date, month, day, hms, frac, zone = m.groups()
    if date:
        return rank, (FULL, date, hms, frac, zone)
    dated = _DATED.search(prefix, m.end())
    if dated is not None:
        return rank, (FULL, *dated.groups())
    if month:
        return rank, (MONTH_DAY, f"{month} {day}", hms, frac, None)
    return rank, (TIME_ONLY, None, hms, frac, None)
