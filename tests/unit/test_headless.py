"""The headless packages never import Textual: proved in a fresh interpreter."""

import subprocess
import sys

HEADLESS = [
    "mtptui.core.ingest", "mtptui.core.store", "mtptui.core.summary", "mtptui.core.parse",
    "mtptui.sources.file", "mtptui.core.parallel", "mtptui.sources.base", "mtptui.commands.summary",
    "mtptui.cli", "mtptui.tui.keytable", "mtptui.export.state", "mtptui.export.collector",
    "mtptui.commands.export", "mtptui.sources.follow",
]
OPTIONAL = ["mtptui.core.alerts", "mtptui.sources.journal", "mtptui.sources.ssh", "mtptui.sources.local",
            "mtptui.sources.replay", "mtptui.sources.process", "mtptui.transport.ssh", "mtptui.transport.local",
            "mtptui.control", "mtptui.sim", "mtptui.sim.cli", "mtptui.config"]


def test_headless_packages_do_not_import_textual():
    code = (
        "import importlib, importlib.util, sys\n"
        f"for name in {HEADLESS!r}: importlib.import_module(name)\n"
        f"for name in {OPTIONAL!r}:\n"
        "    if importlib.util.find_spec(name) is not None: importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(len(bad)); print(bad[:5])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0] == "0", out
