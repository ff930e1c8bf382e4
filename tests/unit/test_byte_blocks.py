"""sources/file.byte_blocks: a plain file's bytes in blocks of whole lines, whatever the block size."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mtptui.sources.file import byte_blocks


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.integers(0, 300), max_size=30), newline=st.booleans(), cut=st.tuples(st.integers(0, 30), st.integers(0, 30)),
       block=st.sampled_from([1, 2, 7, 64, 1 << 18]))
def test_blocks_are_the_bytes_in_whole_lines(tmp_path_factory, lines, newline, cut, block):
    data = b"\n".join(b"x" * k for k in lines) + (b"\n" if newline and lines else b"")
    path = tmp_path_factory.mktemp("blocks") / "log"
    path.write_bytes(data)
    bounds = [0] + [i + 1 for i, c in enumerate(data) if c == 10 and i + 1 < len(data)] + [len(data)]
    a, b = sorted(bounds[min(k, len(bounds) - 1)] for k in cut)
    out = list(byte_blocks(str(path), a, b, block))
    assert b"".join(out) == data[a:b]
    assert all(out)
    assert all(piece.endswith(b"\n") for piece in out[:-1])
