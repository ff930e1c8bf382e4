import asyncio
import sys

import pytest

from mtptui.transport import local
from mtptui.transport.errors import TransportError


async def test_streams_stdout_keeps_stderr_and_status():
    p = await local.start(["sh", "-c", "printf 'a\\nb\\n'; echo oops >&2; exit 4"])
    out = b""
    while data := await p.read():
        out += data
    assert out == b"a\nb\n"
    assert await p.wait() == 4
    assert p.stderr_text == "oops"
    await p.close()


async def test_close_stops_the_command():
    p = await local.start([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)"])
    out = b""
    while b"\n" not in out:
        data = await asyncio.wait_for(p.read(), 10)
        assert data, f"ended early: {out!r} {p.stderr_text!r}"
        out += data
    assert out == b"up\n"
    await asyncio.wait_for(p.close(), 5)
    assert p.proc.returncode is not None


async def test_missing_command_is_permanent():
    with pytest.raises(TransportError) as e:
        await local.start(["/nonexistent/journalctl"])
    assert e.value.permanent and "not found" in str(e.value)
