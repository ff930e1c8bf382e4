"""JSON as `summary --json` writes it, through orjson: one home for its options.

orjson checks keys that are not strings only when asked (OPT_NON_STR_KEYS), and the asking costs
some 40% of its time on an epoch's document. A key that is not a string is rare (a setting of the
log's read as a number, the services of a host that is None), so a document is written without
the option first, and with it where orjson refuses a key: the bytes are the same either way.
"""

from __future__ import annotations

import orjson

# a figure that numpy made is written as a float
_PLAIN = orjson.OPT_SERIALIZE_NUMPY
# a key that is not a string is written as json.dumps wrote it (None as "null", 1 as "1")
_ANY_KEYS = orjson.OPT_NON_STR_KEYS | _PLAIN


def dumps(doc: object, newline: bool = False) -> bytes:
    """doc as JSON (with a newline after it: `newline`)."""
    extra = orjson.OPT_APPEND_NEWLINE if newline else 0
    try:
        return orjson.dumps(doc, option=_PLAIN | extra)
    except TypeError:  # orjson.JSONEncodeError: a key that is not a string (or what none can write)
        return orjson.dumps(doc, option=_ANY_KEYS | extra)
