"""`mtptui smoke HOST...`: does the server still answer right? One fixed chat request per host
through its OpenAI-compatible endpoint (over SSH a local port forwarded through the connection:
nothing is opened on the network), the answer checked for the expected text.

The prompt and the expected text are the config's [control] smoke_prompt and smoke_expect
(default "What is 15*23? Answer with the number only." expecting "345").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from mtptui.commands.live import add_host_args, quiet_asyncssh
from mtptui.config import load_config, ranges
from mtptui.printable import printable

EPILOG = """\
HOST as for `mtptui live`: a config name, or user@host[:port] with --unit. The server's port is
the host's http_port, else the unit's --port (SGLang's default 30000, vLLM's 8000).

--any-answer checks the server, not the model: any answer of at least one token passes, with its
tokens and speed (for a model that cannot do arithmetic: dummy weights, a base model).

exit codes: 0 every host passed; 3 a host answered without the expected text (or, with
--any-answer, with no token); 1 a host could not
be asked (server down, timeout, an error status, a malformed reply, SSH trouble); 2 bad arguments
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtptui smoke", description=__doc__, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_host_args(p)
    p.add_argument("--local", action="store_true", help="this machine's unit (no SSH); needs --unit")
    p.add_argument("--timeout", type=ranges.SMOKE_TIMEOUT, default=60.0, metavar="S", help="for the answer (default 60)")
    p.add_argument("--any-answer", action="store_true",
                   help="pass on any answer of at least one token (checks the server, not the model)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_intermixed_args(argv)  # options may come between the positionals
    from mtptui.commands.spec import build_controls

    config = load_config(args.config)
    controls = build_controls(args, list(args.hosts), config)
    quiet_asyncssh()
    expect = None if args.any_answer else config.control.smoke_expect
    results = asyncio.run(run_all(controls, config.control.smoke_prompt, expect, args.timeout))
    if args.json:
        print(json.dumps({"hosts": [r.to_json() for r in results]}, indent=2))
    else:
        for r in results:
            print(printable(r.line()), file=sys.stdout if r.result == "pass" else sys.stderr)
    codes = {r.exit_code for r in results}
    return 1 if 1 in codes else 3 if 3 in codes else 0


async def run_all(controls, prompt: str, expect: str | None, timeout: float) -> list:
    return list(await asyncio.gather(*(run_one(hc, prompt, expect, timeout) for hc in controls)))


async def run_one(hc, prompt: str, expect: str | None, timeout: float):
    from mtptui.prove.smoke import smoke_host

    try:
        return await smoke_host(hc, prompt, expect, timeout)
    finally:
        await hc.close()
