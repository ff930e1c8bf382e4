"""The hostile tier's longer run: `python bench/hostile_fuzz.py [EXAMPLES] [SEED]`.

tests/hostile/ in `make test` tries the same derandomized inputs every run; this draws fresh ones,
EXAMPLES per test (default 400), from SEED (default: a new one, printed first), and prints each
failure's minimal input with its `@reproduce_failure` blob. `--hypothesis-seed SEED` on pytest
replays a run. It prints how many inputs it tried; it asserts nothing itself (a failure is pytest's).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    examples = sys.argv[1] if len(sys.argv) > 1 else "400"
    seed = sys.argv[2] if len(sys.argv) > 2 else str(random.randrange(1 << 32))
    print(f"hostile fuzz: {examples} inputs per test, seed {seed}", flush=True)
    env = {**os.environ, "MTPTUI_HOSTILE": "long", "MTPTUI_HOSTILE_EXAMPLES": examples}
    return subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/hostile",
                            f"--hypothesis-seed={seed}"], cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
