"""A command line's process that ends without freeing what its command made one by one: the
process's business, so it lives with the commands, not in the core."""

from __future__ import annotations

import gc
import os
import sys

# What a command leaves to the end of its process (kept_to_exit): the process then ends without
# freeing it (exit_now), where it is the command line's own process (cli.run says so).
_kept: list[object] = []
_process_ends_after = False


def command_line_process() -> None:
    """This process ends when its command returns (cli.run: the `mtptui` command, python -m
    mtptui): what the command keeps (kept_to_exit) may be left to its end."""
    global _process_ends_after
    _process_ends_after = True


def kept_to_exit(*objects: object) -> None:
    """Leaves these objects to the end of the process, not freed one by one when the command
    returns (10,000 runs of `summary` are some 200,000 objects: 30 ms once all is written), where
    the process ends with the command (command_line_process); anywhere else (a test that calls the
    command's main()), nothing. Every object alive then is moved out of the cycle collector's
    reach too (gc.freeze): the collector, on again once the command's without_cycle_collector
    ends, would otherwise pass over all that was made while it was off (10,000 runs: 35 ms at
    exit) and find nothing the process would not drop anyway."""
    if _process_ends_after:
        _kept.extend(objects)
        gc.freeze()


def keeping() -> bool:
    """Whether the command left something to the end of its process (kept_to_exit): its output
    must then be flushed before exit_now(), which flushes nothing."""
    return bool(_kept)


def exit_now(code: int) -> None:
    """Ends the process with this exit code: without freeing what was kept (os._exit: stdout
    flushed before, cli.run) when something was, else as sys.exit does."""
    if not _kept:
        raise SystemExit(code)
    try:
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(code)
