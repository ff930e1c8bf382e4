"""summary --json's JSON (core/jsontext.py): written without orjson's check of keys first, and
with it where a key is not a string; the bytes are those the check gives either way."""

import numpy as np
import orjson
import pytest

from mtptui.core.jsontext import dumps

CHECKED = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


@pytest.mark.parametrize("doc", [
    {"host": "h", "ranks": {"TP0": {"n": 3, "mean": 2.5}}, "spec": {"num_steps": 3}},
    {None: {"gen_throughput": 10.0}, "gpu-h1": {}},  # services of a host that is None
    {"spec": {"levels": {1: "a", 2.5: "b", False: "c"}}},  # a setting of the log's read with number keys
    {"figure": np.float64(1.25), "list": [np.int64(3)], "nested": [{"x": {None: 1}}]},
    [1, "two", None, 3.5e300],
])
def test_the_bytes_are_those_of_orjson_that_checks_every_key(doc):
    assert dumps(doc) == orjson.dumps(doc, option=CHECKED)
    assert dumps(doc, newline=True) == orjson.dumps(doc, option=CHECKED | orjson.OPT_APPEND_NEWLINE)


def test_what_none_can_write_still_fails():
    with pytest.raises(TypeError):
        dumps({"x": object()})
