"""`python -m mtptui.sim ARGS`: the same as `mtptui sim ARGS`, importing nothing outside the
standard library (the integration hosts run it with a bare python3)."""

import sys

from mtptui.sim.cli import main

sys.exit(main())
