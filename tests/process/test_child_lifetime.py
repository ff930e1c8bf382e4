"""Children mtptui starts (the demo's simulator, a local journalctl -f) die with it, even when it
is killed without a chance to clean up (a closed terminal, SIGKILL)."""

import os
import signal
import subprocess
import sys
import textwrap
import time

DRIVER = textwrap.dedent("""
    import asyncio, sys
    from mtptui.sources.process import ProcessSource

    class Feed:
        def lines(self, raw, host): pass
        def status(self, st):
            if st.state == "streaming":
                print("started", flush=True)
        def dropped(self, n, reason, host): pass

    src = ProcessSource([sys.executable, "-c", "import time; print('child', flush=True); time.sleep(120)"])
    async def main():
        task = asyncio.ensure_future(src.run(Feed()))
        while src.pid is None:
            await asyncio.sleep(0.05)
        print(src.pid, flush=True)
        await task
    asyncio.run(main())
""")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie has died; only its parent has not reaped it yet
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] != "Z"


def test_the_child_dies_when_mtptui_is_killed():
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], stdout=subprocess.PIPE, text=True)
    try:
        lines = [driver.stdout.readline().strip() for _ in range(2)]
        child = int(next(x for x in lines if x.isdigit()))
        assert alive(child)
        driver.send_signal(signal.SIGKILL)  # no cleanup of its own can run
        driver.wait(5)
        deadline = time.monotonic() + 5
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(child), "the child outlived mtptui"
    finally:
        driver.kill()
