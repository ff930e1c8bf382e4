"""A real vLLM as an operator runs it: a systemd unit in a container host (tests/integration/hosts),
its venv and model bind-mounted read-only from the cache (vllm_env.py), and the traffic a test drives
at its OpenAI API from this machine.

The unit is the operator's own: a plain ExecStart with `--speculative-config JSON`, the environment
vLLM's CPU build needs, and `VLLM_LOG_STATS_INTERVAL=2` (vLLM's own setting: its stats lines every
2 s rather than 10, so a test sees a few intervals in seconds). Everything mtptui does to it goes
through mtptui's command line, over SSH, as a user runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from contextlib import contextmanager
from pathlib import Path

UNIT = "vllm-tiny"
PORT = 8000
STATS_INTERVAL_S = 2
# ngram with a short lookup: a dummy model's looping output is matched from the first repeats
NGRAM = {"method": "ngram", "prompt_lookup_max": 4, "prompt_lookup_min": 2}
# what vLLM's CPU build needs to run here, and its stats lines every STATS_INTERVAL_S
ENVIRONMENT = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind", "HF_HUB_OFFLINE": "1",
               "VLLM_LOG_STATS_INTERVAL": str(STATS_INTERVAL_S), "PYTHONUNBUFFERED": "1"}
REPETITIVE = "the program the program the program the program the program"


def ngram(k: int) -> dict:
    return {**NGRAM, "num_speculative_tokens": k}


class Engine:
    def __init__(self, host, root: Path) -> None:
        self.h = host
        self.root = root
        self.port = PORT  # its HTTP side: where the host's address serves it
        self.model = str(root / "model")
        self.python = str(root / "venv" / "bin" / "python")

    # --- the unit --------------------------------------------------------------------------------

    def argv(self, spec: dict | None, extra: tuple[str, ...] = ()) -> list[str]:
        argv = [self.python, "-m", "vllm.entrypoints.openai.api_server", "--model", self.model,
                "--load-format", "dummy", "--enforce-eager", "--host", "0.0.0.0", "--port", str(self.port),
                "--max-model-len", "2048", "--per-request-spec-decode-metrics", "summary", *extra]
        if spec is not None:
            argv += ["--speculative-config", json.dumps(spec, separators=(",", ":"))]
        return argv

    def unit_text(self, spec: dict | None, extra: tuple[str, ...] = (), env: dict | None = None,
                  service: str = "") -> str:
        words = []
        for w in self.argv(spec, extra):
            # systemd's quoting: a JSON word in single quotes (it has no single quote in it)
            words.append(f"'{w}'" if any(c in w for c in ' "{}') else w)
        environment = {**ENVIRONMENT, **(env or {})}
        env_lines = "".join(f"Environment={k}={v}\n" for k, v in environment.items())
        return ("[Unit]\nDescription=vLLM (CPU build, tiny dummy-weight model) for mtptui's engine tier\n"
                f"[Service]\n{env_lines}ExecStart={' '.join(words)}\nLogRateLimitIntervalSec=0\n"
                f"TimeoutStopSec=30\n{service}")

    def install(self, spec: dict | None, *, extra: tuple[str, ...] = (), env: dict | None = None,
                service: str = "", wait: bool = True, start: bool = True) -> None:
        """The unit as the operator wrote it (mtptui's drop-ins removed), started afresh, unless it
        runs exactly that already (a start of vLLM costs tens of seconds of the tier's CPU).
        start False: written and loaded, not started (the next start is mtptui's)."""
        text = self.unit_text(spec, extra, env, service)
        if start and self.runs(text):
            return
        subprocess.run(self.h.ssh_argv(f"cat > /etc/systemd/system/{UNIT}.service"), input=text, text=True,
                       check=True, capture_output=True)
        self.h.ssh(f"rm -rf /etc/systemd/system/{UNIT}.service.d; systemctl daemon-reload; "
                   f"systemctl reset-failed {UNIT} 2>/dev/null; " + (f"systemctl restart {UNIT}" if start else "true"))
        if wait and start:
            self.wait_ready()

    def runs(self, text: str) -> bool:
        """The unit's file is this text, with no drop-in, loaded as written, and its server answers."""
        here = self.h.ssh(f"cat /etc/systemd/system/{UNIT}.service; ls /etc/systemd/system/{UNIT}.service.d "
                          "2>/dev/null; systemctl show --property=NeedDaemonReload --value " + UNIT, check=False).stdout
        return here == text + "no\n" and self.state() == "active" and self.healthy()

    def state(self) -> str:
        return self.h.ssh(["systemctl", "is-active", UNIT], check=False).stdout.strip()

    def exec_start(self) -> str:
        out = self.h.ssh(["systemctl", "show", "--property=ExecStart", "--value", UNIT]).stdout
        return out.split("argv[]=", 1)[1].split(" ; ", 1)[0]

    def journal(self, since: float | None = None, output: str = "cat") -> str:
        argv = ["journalctl", f"--unit={UNIT}", f"--output={output}", "--no-pager", "--all"]
        if since is not None:
            argv.append(f"--since=@{int(since) - 1}")
        return self.h.ssh(argv, timeout=120).stdout

    def cursor(self) -> str:
        """Where the unit's journal stands now (journalctl --show-cursor)."""
        out = self.h.ssh(["journalctl", f"--unit={UNIT}", "--lines=1", "--show-cursor", "--no-pager"],
                         check=False).stdout
        return out.rsplit("-- cursor: ", 1)[-1].strip() if "-- cursor: " in out else ""

    # --- its HTTP side -----------------------------------------------------------------------------

    def url(self, path: str) -> str:
        return f"http://{self.h.address}:{self.port}{path}"

    def get(self, path: str, timeout: float = 10) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(self.url(path), timeout=timeout) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace")
        except OSError as e:
            return 0, str(e)

    def healthy(self) -> bool:
        return self.get("/health", 3)[0] == 200

    def wait_ready(self, timeout: float = 300) -> float:
        """Seconds until /health answers 200; fails with the unit's last lines when it does not."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.healthy():
                return time.monotonic() - t0
            if self.state() == "failed":
                break
            time.sleep(1)
        tail = "\n".join(self.journal().splitlines()[-15:])
        raise AssertionError(f"vLLM not ready ({self.state()}) after {time.monotonic() - t0:.0f} s:\n{tail}")

    def complete(self, prompt: str = REPETITIVE, *, max_tokens: int = 48, temperature: float = 0.0,
                 timeout: float = 120) -> dict:
        body = json.dumps({"model": self.model, "prompt": prompt, "max_tokens": max_tokens,
                           "temperature": temperature}).encode()
        req = urllib.request.Request(self.url("/v1/completions"), body, {"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read())

    @contextmanager
    def traffic(self, *, concurrency: int = 2, temperature: float = 0.0, max_tokens: int = 48):
        """Requests sent without pause while the block runs (repetitive prompts: at temperature 0
        ngram accepts nearly every draft, at 1 few). Yields a dict of counts: sent, failed."""
        stop = threading.Event()
        counts = {"sent": 0, "failed": 0}

        def loop() -> None:
            while not stop.is_set():
                try:
                    self.complete(max_tokens=max_tokens, temperature=temperature, timeout=30)
                    counts["sent"] += 1
                except (OSError, ValueError):
                    counts["failed"] += 1
                    stop.wait(0.5)

        threads = [threading.Thread(target=loop, daemon=True) for _ in range(concurrency)]
        for t in threads:
            t.start()
        try:
            yield counts
        finally:
            stop.set()
            for t in threads:
                t.join(35)

    # --- mtptui, as a user runs it ---------------------------------------------------------------

    def config(self, tmp_path: Path, control: str = "[control]\nwait_timeout = 300\n") -> str:
        keys = self.h.cluster.keys
        text = (f'[[hosts]]\nname = "engine"\naddress = "{self.h.address}"\nuser = "root"\n'
                f'identity = "{keys.identity}"\nknown_hosts = "{keys.known_hosts}"\n'
                f'ssh_config = "/dev/null"\nunit = "{UNIT}"\nconnect_timeout = 5\n'
                "keepalive_interval = 1\nkeepalive_count_max = 3\n\n"
                '[profiles.ngram1]\nalgorithm = "NGRAM"\nnum_steps = 1\n\n'
                '[profiles.ngram3]\nalgorithm = "NGRAM"\nnum_steps = 3\n\n'
                '[profiles.draft3]\nalgorithm = "STANDALONE"\nnum_steps = 3\n'
                f'draft_model_path = "{self.model}"\n\n' + control)
        p = tmp_path / f"config-{uuid.uuid4().hex[:6]}.toml"
        p.write_text(text)
        return str(p)


def mtptui(*args: str, audit: Path | None = None, timeout: float = 600,
           input: str | None = None) -> subprocess.CompletedProcess:
    """`python -m mtptui ARGS` as a user runs it (no terminal)."""
    env = dict(os.environ)
    if audit is not None:
        env["MTPTUI_AUDIT_LOG"] = str(audit)
    return subprocess.run([sys.executable, "-m", "mtptui", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL)


class Pane:
    """mtptui in a real terminal: a tmux pane of its own tmux server (-L), read back as text."""

    def __init__(self, argv: list[str], width: int = 160, height: int = 48, env: dict | None = None) -> None:
        import shlex

        self.sock = f"mtptui-engine-{uuid.uuid4().hex[:8]}"
        # pytest exports COLUMNS and LINES to children; Rich would believe them over the pane
        self.env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")} | (env or {})
        r = self._tmux("new-session", "-d", "-x", str(width), "-y", str(height), "-s", "t", shlex.join(argv))
        assert r.returncode == 0, r.stderr

    def _tmux(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True, timeout=10,
                              env=self.env)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "t").stdout

    def wait_for(self, check, timeout: float = 60.0) -> str:
        """The screen once check(screen) holds (a text, or a function of the screen)."""
        ok = check if callable(check) else (lambda s: check in s)
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if ok(screen):
                return screen
            time.sleep(0.3)
        raise AssertionError(f"{check!r} never held; the screen was:\n{screen}")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "t", *keys)

    def close(self) -> None:
        self._tmux("kill-server")
