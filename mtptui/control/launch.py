"""Where the server's flags sit in an ExecStart argv, what they say, and a profile applied to them.

The launch command is found behind the wrappers units put before it (`env`, `nice`, `ionice`,
`numactl`, `taskset`, `stdbuf`, `docker`/`podman run`); everything after it, to the end of argv,
is the server's arguments. Flags are read the way argparse reads them: `--x v` and `--x=v`, the
last one winning. SGLang's launch_server takes no positional argument, so a word after a flag that
does not start with "-" is that flag's value; vLLM's only positional is the model after `serve`.
mtptui's simulator (`python -m mtptui.sim`) counts as SGLang, its vLLM mode
(`python -m mtptui.sim.vllm_serve`) as vLLM.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mtptui.control.profiles import (
    SGLANG_ADAPTIVE_OFF_FLAGS,
    SGLANG_SPEC_V1_FLAG,
    Profile,
    ProfileError,
    Version,
    known_version,
    vllm_algorithm,
    vllm_method,
)
from mtptui.control.profiles import effective as _effective

_PYTHON = re.compile(r"python(\d+(\.\d+)*)?\Z")
_MODULES = {
    "sglang.launch_server": "sglang",
    "mtptui.sim": "sglang",
    "mtptui.sim.vllm_serve": "vllm",
    "vllm.entrypoints.openai.api_server": "vllm",
}
_SERVE = ("sglang", "vllm")  # `sglang serve`, `vllm serve`
# CPython's options that take a value (-c ends the options with code: not a launch).
_PYTHON_VALUED = "cmWX"
_NEGATIVE = re.compile(r"-\d")

# SGLang's speculative flags, for argparse's unambiguous-prefix rule: each version's own set
# (read from the real parsers: tests/realcode holds this table to them).
_SGLANG_SPEC = {
    "--speculative-algorithm": "algorithm",
    "--speculative-num-steps": "num_steps",
    "--speculative-eagle-topk": "topk",
    "--speculative-num-draft-tokens": "num_draft_tokens",
    "--speculative-draft-model-path": "draft_model_path",
    "--speculative-draft-model": "draft_model_path",  # alias (0.5.2+)
    "--speculative-adaptive": "adaptive",  # 0.5.11+, a switch
    "--speculative-adaptive-config": "adaptive_config",
}
# SGLang switches (argparse store_true) that the flag reader must not give the next word to
_SWITCHES = frozenset({"--speculative-adaptive", SGLANG_SPEC_V1_FLAG, *SGLANG_ADAPTIVE_OFF_FLAGS})
# vLLM's key of --speculative-config for a per-batch-size schedule (Dynamic SD, 0.24.0+)
VLLM_SCHEDULE_KEY = "num_speculative_tokens_per_batch_size"
_V = (0, 0)
_END = (99,)
# (flag after "--speculative-", first version that has it, first that no longer has it)
_SGLANG_SPEC_FLAGS: tuple[tuple[str, tuple, tuple], ...] = (
    *((f, _V, _END) for f in ("algorithm", "draft-model-path", "eagle-topk", "num-draft-tokens",
                             "num-steps")),
    *((f, (0, 4, 4), _END) for f in ("accept-threshold-acc", "accept-threshold-single", "token-map")),
    *((f, (0, 5, 2), _END) for f in ("draft-model", "draft-model-revision", "attention-mode")),
    *((f, (0, 5, 3), (0, 5, 10)) for f in ("ngram-branch-length", "ngram-min-match-window-size",
                                           "ngram-max-match-window-size")),
    *((f, (0, 5, 3), _END) for f in ("ngram-capacity", "ngram-match-type", "ngram-max-bfs-breadth",
                                     "ngram-min-bfs-breadth")),
    ("draft-load-format", (0, 5, 4), _END),
    ("moe-runner-backend", (0, 5, 5), _END),
    *((f, (0, 5, 7), _END) for f in ("draft-attention-backend", "draft-model-quantization",
                                     "moe-a2a-backend")),
    ("ngram-max-trie-depth", (0, 5, 10), _END),
    *((f, (0, 5, 11), _END) for f in ("adaptive", "adaptive-config", "dflash-block-size",
                                      "ngram-external-corpus-max-tokens", "ngram-external-corpus-path",
                                      "ngram-external-sam-budget")),
    ("dflash-draft-window-size", (0, 5, 11), (0, 5, 20)),
    ("skip-dp-mlp-sync", (0, 5, 11), (0, 5, 23)),
    ("draft-window-size", (0, 5, 12), _END),
    ("use-rejection-sampling", (0, 5, 14), _END),
    *((f, (0, 5, 16), _END) for f in ("dspark-align-verify-tokens-to-graph-tier", "dspark-block-size",
                                      "dspark-confidence-sts-path", "dspark-sps-table-path")),
    ("draft-kv-cache-dtype", (0, 5, 18), _END),
    ("dsa-topk-backend", (0, 5, 19), _END),
    ("domino-candidate-pool-size", (0, 5, 20), _END),
    ("draft-sink-size", (0, 5, 21), _END),
    *((f, (0, 5, 22), _END) for f in ("enable-w4a4-mxfp4-megamoe", "use-block-verification")),
)


def sglang_spec_flags(version: Version | str | None) -> tuple[str, ...]:
    """The `--speculative-*` option strings of that SGLang version's parser (None: the newest)."""
    v, _ = known_version(version)
    return tuple(f"--speculative-{f}" for f, since, until in _SGLANG_SPEC_FLAGS if since <= v < until)
_INT_KEYS = ("num_steps", "topk", "num_draft_tokens")
SPEC_KEYS = ("algorithm", "num_steps", "topk", "num_draft_tokens", "draft_model_path", "adaptive", "adaptive_config",
             "schedule")


class LaunchError(ValueError):
    """An argv in which mtptui cannot find or read the server's flags, said in one line."""


@dataclass(frozen=True)
class Launch:
    engine: str  # "sglang" or "vllm"
    index: int  # argv[index:] are the server's arguments
    kind: str  # which form matched, e.g. "python -m sglang.launch_server", "docker run: vllm serve"


@dataclass(frozen=True)
class Context:
    """What SGLang's speculation rules look at besides the speculative flags."""

    model_path: str | None = None
    tp: int = 1
    dp: int = 1
    enable_dp_attention: bool = False
    page_size: int | None = None  # None: not given (SGLang picks it)
    attention_backend: str | None = None
    decode_attention_backend: str | None = None
    prefill_attention_backend: str | None = None
    enable_dp_lm_head: bool = False
    ngram_max_bfs_breadth: int | None = None  # --speculative-ngram-max-bfs-breadth (NGRAM's topk)
    flags_on: frozenset[str] = frozenset()  # the switches adaptive speculation depends on that it gives
    version: tuple | None = None  # the server's version, (0, 5, 23); None: unknown (newest rules)


# --- finding the launch command --------------------------------------------------------------

def _name(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _python_module(argv: list[str], i: int) -> tuple[str, int] | None:
    """(module, index after it) when argv[i:] is `python [options] -m MODULE`."""
    j = i + 1
    while j < len(argv) and argv[j].startswith("-") and argv[j] not in ("-", "--"):
        word = argv[j]
        j += 1
        if word.startswith("--"):
            j += word == "--check-hash-based-pycs"
            continue
        for k, c in enumerate(word[1:], start=2):
            if c not in _PYTHON_VALUED:
                continue
            value = word[k:]
            if not value and j < len(argv):
                value, j = argv[j], j + 1
            if c == "c":
                return None
            if c == "m":
                return value, j
            break
    return None


def _launch_at(argv: list[str], i: int) -> tuple[str, int, str] | None:
    name = _name(argv[i])
    if _PYTHON.match(name):
        found = _python_module(argv, i)
        if found and found[0] in _MODULES:
            return _MODULES[found[0]], found[1], f"python -m {found[0]}"
    elif name in _SERVE and i + 1 < len(argv) and argv[i + 1] == "serve":
        return name, i + 2, f"{name} serve"
    return None


def _skip_options(argv: list[str], j: int, short_valued: str, long_valued: frozenset[str],
                  what: str) -> int:
    """The index of the first word after a getopt-style option list (a long option not in
    long_valued takes no value unless given with "=")."""
    while j < len(argv):
        word = argv[j]
        if word == "--":
            return j + 1
        if not word.startswith("-") or word == "-":
            return j
        j += 1
        if word.startswith("--"):
            j += "=" not in word and word[2:] in long_valued
            continue
        for k, c in enumerate(word[1:], start=2):
            if c in short_valued:
                j += not word[k:]
                break
    raise LaunchError(f"{what} runs no command")


def _env(argv: list[str], i: int) -> int:
    """`env [options] [-] [NAME=VALUE...] COMMAND`."""
    j = i + 1
    while j < len(argv) and argv[j].startswith("-"):
        word = argv[j]
        if word.startswith(("-S", "--split-string")):
            raise LaunchError("`env -S` splits one string into the command: mtptui cannot rewrite it")
        j += 2 if word in ("-u", "--unset", "-C", "--chdir") else 1
        if word in ("--", "-"):
            break
    while j < len(argv) and "=" in argv[j]:
        j += 1
    return j


def _taskset(argv: list[str], i: int) -> int:
    return _skip_options(argv, i + 1, "", frozenset(), "taskset") + 1  # the CPU mask, then the command


_WRAPPERS = {
    "env": _env,
    "nice": lambda a, i: _skip_options(a, i + 1, "n", frozenset({"adjustment"}), "nice"),
    "ionice": lambda a, i: _skip_options(
        a, i + 1, "cnpPu", frozenset({"class", "classdata", "pid", "pgid", "uid"}), "ionice"),
    "numactl": lambda a, i: _skip_options(
        a, i + 1, "iwNmCpP", frozenset({"interleave", "weighted-interleave", "membind", "cpunodebind",
                                        "physcpubind", "preferred", "preferred-many"}), "numactl"),
    "stdbuf": lambda a, i: _skip_options(a, i + 1, "ioe", frozenset({"input", "output", "error"}),
                                         "stdbuf"),
    "taskset": _taskset,
}

_DOCKER_SHORT_VALUED = "acehlmpuvw"
_DOCKER_BOOL = frozenset({
    "detach", "interactive", "tty", "rm", "privileged", "init", "publish-all", "read-only",
    "no-healthcheck", "oom-kill-disable", "quiet", "disable-content-trust", "help", "sig-proxy",
    "replace", "rmi", "no-hosts", "use-api-socket"})
_DOCKER_VALUED = frozenset({
    "add-host", "annotation", "attach", "blkio-weight", "blkio-weight-device", "cap-add", "cap-drop",
    "cgroup-parent", "cgroupns", "cidfile", "cpu-count", "cpu-percent", "cpu-period", "cpu-quota",
    "cpu-rt-period", "cpu-rt-runtime", "cpu-shares", "cpus", "cpuset-cpus", "cpuset-mems",
    "detach-keys", "device", "device-cgroup-rule", "device-read-bps", "device-read-iops",
    "device-write-bps", "device-write-iops", "dns", "dns-option", "dns-search", "domainname",
    "entrypoint", "env", "env-file", "expose", "gpus", "group-add", "health-cmd", "health-interval",
    "health-retries", "health-start-interval", "health-start-period", "health-timeout", "hostname",
    "ip", "ip6", "ipc", "isolation", "kernel-memory", "label", "label-file", "link", "link-local-ip",
    "log-driver", "log-opt", "mac-address", "memory", "memory-reservation", "memory-swap",
    "memory-swappiness", "mount", "name", "network", "net", "network-alias", "oom-score-adj", "pid",
    "pids-limit", "platform", "pod", "publish", "pull", "restart", "runtime", "secret",
    "security-opt", "shm-size", "stop-signal", "stop-timeout", "storage-opt", "sysctl", "tmpfs",
    "ulimit", "user", "userns", "uts", "volume", "volume-driver", "volumes-from", "workdir"})


def _container(argv: list[str], i: int) -> Launch:
    """`docker|podman [global options] [container] run [options] IMAGE [COMMAND...]`."""
    tool = _name(argv[i])
    j = _skip_options(argv, i + 1, "Hcl", frozenset({"host", "context", "config", "log-level"}), tool)
    if argv[j] == "container" and j + 1 < len(argv):
        j += 1
    if argv[j] != "run":
        raise LaunchError(f"`{tool} {argv[j]}` is not `{tool} run`: no server to find")
    j, entrypoint = _run_options(argv, j + 1, tool)
    if j < len(argv) and argv[j] == "--":
        j += 1
    if j >= len(argv):
        raise LaunchError(f"`{tool} run` names no image")
    image = argv[j]
    command = ([entrypoint] if entrypoint else []) + argv[j + 1:]
    if not command or command[0].startswith("-"):
        engine = next((e for e in _SERVE if e in image.lower()), None)
        if engine is None:
            raise LaunchError(f"{tool} image {image} runs its own entrypoint, which mtptui does not "
                              "know: put the launch command after the image")
        return Launch(engine, j + 1, f"{tool} run: {engine} image entrypoint")
    inner = _walk(command)
    shift = j + 1 - (1 if entrypoint else 0)
    return Launch(inner.engine, inner.index + shift, f"{tool} run: {inner.kind}")


def _run_options(argv: list[str], j: int, tool: str) -> tuple[int, str | None]:
    """Past `run`'s options: where the image (or `--`) is, and the --entrypoint given, if any. A long
    option mtptui does not know is refused, as it cannot tell whether the next word is its value."""
    entrypoint = None
    while j < len(argv) and argv[j].startswith("-") and argv[j] != "--":
        word = argv[j]
        j += 1
        if not word.startswith("--"):
            j += _short_value_words(word)
            continue
        name, eq, value = word[2:].partition("=")
        if name in _DOCKER_VALUED and not eq:
            value, j = (argv[j] if j < len(argv) else ""), j + 1
        elif not eq and name not in _DOCKER_VALUED and name not in _DOCKER_BOOL:
            raise LaunchError(f"`{tool} run {word}`: mtptui cannot tell whether it takes a value")
        if name == "entrypoint":
            entrypoint = value
    return j, entrypoint


def _short_value_words(word: str) -> int:
    """Words after a cluster of short options (`-it`, `-p8000:8000`, `-v X`) that are its value: 1
    where the first valued letter ends the cluster, else 0."""
    for k, c in enumerate(word[1:], start=2):
        if c in _DOCKER_SHORT_VALUED:
            return 0 if word[k:] else 1
    return 0


def _walk(argv: list[str]) -> Launch:
    i = 0
    while i < len(argv):
        found = _launch_at(argv, i)
        if found:
            return Launch(*found)
        name = _name(argv[i])
        if name in ("docker", "podman"):
            return _container(argv, i)
        if name not in _WRAPPERS:
            break
        i = _WRAPPERS[name](argv, i)
    shown = " ".join(argv[i:i + 2]) if i < len(argv) else " ".join(argv)
    raise LaunchError(f"no SGLang or vLLM launch command in ExecStart (it runs {shown} …)")


def find_launch(argv: list[str]) -> Launch:
    """Where the server's arguments start. Raises LaunchError naming what was found instead."""
    if not argv:
        raise LaunchError("empty ExecStart")
    return _walk(argv)


# --- reading the flags -----------------------------------------------------------------------

@dataclass(frozen=True)
class _Opt:
    name: str  # as written ("--speculative-num-steps"), before any "="
    value: str | None
    start: int
    end: int  # argv[start:end] is the option with its value


def _takes_next(argv: list[str], j: int) -> bool:
    return j < len(argv) and (not argv[j].startswith("-") or bool(_NEGATIVE.match(argv[j])))


def _options(argv: list[str], start: int) -> list[_Opt]:
    opts = []
    j = start
    while j < len(argv):
        word = argv[j]
        if not word.startswith("-") or word == "-" or _NEGATIVE.match(word):
            j += 1  # a positional (vLLM's model)
            continue
        name, eq, value = word.partition("=")
        if eq:
            opts.append(_Opt(name, value, j, j + 1))
            j += 1
        elif name not in _SWITCHES and _takes_next(argv, j + 1):
            opts.append(_Opt(name, argv[j + 1], j, j + 2))
            j += 2
        else:
            opts.append(_Opt(name, None, j, j + 1))
            j += 1
    return opts


# vLLM's shorter spellings of the speculative settings: -sc (0.19+) for --speculative-config, and
# (0.22+) one flag per key of it, refused beside the same key in --speculative-config
_VLLM_SHORT = {"-sc": "--speculative-config", "--spec-method": "--speculative-config.method",
               "--spec-model": "--speculative-config.model",
               "--spec-tokens": "--speculative-config.num-speculative-tokens"}


def _vllm_name(name: str) -> str:
    name = name.replace("_", "-")  # vLLM accepts --speculative_config too
    return _VLLM_SHORT.get(name, name)


def _sglang_flag(name: str, version: Version | str | None = None) -> str | None:
    """The full `--speculative-*` flag name stands for in that version's parser, with argparse's
    unambiguous-prefix rule (`--speculative-draft` is the draft model path on 0.4.3-0.5.1, and
    ambiguous from 0.5.2), or None."""
    if not name.startswith("--spec"):
        return None
    flags = sglang_spec_flags(version)
    if name in flags:
        return name
    hits = [f for f in flags if f.startswith(name)]
    keys = {_SGLANG_SPEC.get(f, f) for f in hits}
    if len(keys) == 1:
        return hits[0]
    return None


def _sglang_key(name: str, version: Version | str | None = None) -> str | None:
    """The spec key an SGLang flag sets, with argparse's unambiguous-prefix rule."""
    if name in _SGLANG_SPEC:
        return _SGLANG_SPEC[name]
    flag = _sglang_flag(name, version)
    return _SGLANG_SPEC.get(flag) if flag else None


def _int(name: str, value: str | float | None) -> int:
    """value (a flag's text, a JSON value) as a whole number, else LaunchError."""
    try:
        if value is not None:
            return int(value)
    except (TypeError, ValueError):
        pass
    raise LaunchError(f"{name} {value!r} is not a whole number")


def _vllm_spec(value: str | None) -> dict[str, Any]:
    try:
        config = json.loads(value or "")
    except ValueError:
        raise LaunchError(f"--speculative-config {value!r} is not JSON") from None
    if not isinstance(config, dict):
        raise LaunchError(f"--speculative-config {value!r} is not a JSON object")
    return config


def _vllm_config(opts: list) -> dict[str, Any]:
    """vLLM's speculative config as the options give it: --speculative-config's JSON, its dotted
    keys, or (before 0.8.2) --speculative-model with --num-speculative-tokens."""
    config: dict[str, Any] = {}
    for o in opts:
        name = _vllm_name(o.name)
        if name == "--speculative-config":
            config = _vllm_spec(o.value)
        elif name.startswith("--speculative-config."):
            config[name.split(".", 1)[1].replace("-", "_")] = o.value
        elif name == "--speculative-model":
            config["model"] = o.value
        elif name == "--num-speculative-tokens":
            config["num_speculative_tokens"] = o.value
    return config


def _from_vllm(config: dict[str, Any]) -> dict[str, Any]:
    out = dict.fromkeys(SPEC_KEYS)
    method = config.get("method")
    if isinstance(method, str):
        out["algorithm"] = vllm_algorithm(method)
    elif config.get("model") == "[ngram]":  # before 0.8.2: --speculative-model [ngram]
        out["algorithm"] = "NGRAM"
        config = {**config, "model": None}
    elif config:
        # vLLM's own defaults: a draft model without a method is a draft model, none is MTP.
        out["algorithm"] = "STANDALONE" if config.get("model") else "NEXTN"
    if config.get("num_speculative_tokens") is not None:
        out["num_steps"] = _int("num_speculative_tokens", config["num_speculative_tokens"])
    out["draft_model_path"] = config.get("model")
    out["schedule"] = _schedule(config.get(VLLM_SCHEDULE_KEY))
    return out


def _schedule(value: Any) -> tuple[tuple[int, int, int], ...] | None:
    """A --speculative-config schedule as a profile holds it (None: none, or not one vLLM reads)."""
    if not isinstance(value, list) or not value:
        return None
    try:
        return tuple((int(a), int(b), int(k)) for a, b, k in value)
    except (TypeError, ValueError):
        return None


def spec_flags(argv: list[str], version: Version | str | None = None) -> dict[str, Any]:
    """The speculation settings argv gives the server: keys algorithm, num_steps, topk,
    num_draft_tokens, draft_model_path (None when not given), read with that version's flags
    and abbreviations (None: the newest). vLLM's `--speculative-config` (before 0.8.2
    `--speculative-model` and `--num-speculative-tokens`) is mapped to the same keys (method →
    algorithm, num_speculative_tokens → num_steps, model → draft_model_path; no topk or draft
    tokens there)."""
    launch = find_launch(argv)
    opts = _options(argv, launch.index)
    if launch.engine == "vllm":
        return _from_vllm(_vllm_config(opts))
    out = dict.fromkeys(SPEC_KEYS)
    for o in opts:
        key = _sglang_key(o.name, version)
        if key == "adaptive":
            out[key] = True
        elif key:
            out[key] = _int(o.name, o.value) if key in _INT_KEYS else o.value
    return out


def context_of(argv: list[str], version: Version | str | None = None) -> Context:
    """The settings besides speculation that SGLang's speculation rules depend on; version (a
    tuple, a version string, or None: unknown) is the server's, whose rules apply."""
    if isinstance(version, str):
        v, known = known_version(version)
        version = v if known else None
    launch = find_launch(argv)
    opts = _options(argv, launch.index)
    if launch.engine == "vllm":
        values = {_vllm_name(o.name): o.value for o in opts}
        model = values.get("--model")
        if launch.index < len(argv) and not argv[launch.index].startswith("-"):
            model = argv[launch.index]
        tp = values.get("--tensor-parallel-size", values.get("-tp"))
        dp = values.get("--data-parallel-size", values.get("-dp"))
        return Context(model_path=model, tp=_int("--tensor-parallel-size", tp) if tp else 1,
                       dp=_int("--data-parallel-size", dp) if dp else 1, version=version)
    aliases = {"--model": "--model-path", "--tp": "--tp-size", "--dp": "--dp-size"}
    values = {}
    flags = set()
    for o in opts:
        name = aliases.get(o.name, o.name)
        name = _sglang_flag(name, version) or name
        values[name] = o.value
        flags.add(name)
    page = values.get("--page-size")
    breadth = values.get("--speculative-ngram-max-bfs-breadth")
    return Context(
        model_path=values.get("--model-path"),
        tp=_int("--tp-size", values["--tp-size"]) if values.get("--tp-size") else 1,
        dp=_int("--dp-size", values["--dp-size"]) if values.get("--dp-size") else 1,
        enable_dp_attention="--enable-dp-attention" in flags,
        page_size=_int("--page-size", page) if page is not None else None,
        attention_backend=values.get("--attention-backend"),
        decode_attention_backend=values.get("--decode-attention-backend"),
        prefill_attention_backend=values.get("--prefill-attention-backend"),
        enable_dp_lm_head="--enable-dp-lm-head" in flags,
        ngram_max_bfs_breadth=(_int("--speculative-ngram-max-bfs-breadth", breadth)
                               if breadth is not None else None),
        flags_on=frozenset(flags & (_SWITCHES - {"--speculative-adaptive"})),
        version=version,
    )


def effective_flags(argv: list[str], version: Version | str | None = None) -> dict[str, Any]:
    """The speculation settings the server of that version will actually run for argv (what
    verify expects): `spec_flags`, with the counts SGLang changes itself changed (NGRAM's topk
    from --speculative-ngram-max-bfs-breadth, chains with page size > 1 on 0.4.5-0.4.8, draft
    tokens = steps + 1 with topk 1)."""
    launch = find_launch(argv)
    return _effective(spec_flags(argv, version), context_of(argv, version), launch.engine)


ENGINE_NAMES = {"sglang": "SGLang", "vllm": "vLLM"}  # as the projects spell themselves

# Where each engine listens when the command line does not say (SGLang 30000, vLLM 8000).
DEFAULT_PORTS = {"sglang": 30000, "vllm": 8000}
_ANY_ADDRESS = ("", "0.0.0.0", "::", "[::]")


def listen_address(argv: list[str]) -> tuple[str, int]:
    """(address to connect to, port) of the server's HTTP side, from its `--host` and `--port`
    (the engine's defaults otherwise); a server on every address is reached on the loopback."""
    launch = find_launch(argv)
    values = {o.name: o.value for o in _options(argv, launch.index)}
    port = values.get("--port")
    host = values.get("--host") or "127.0.0.1"
    return ("127.0.0.1" if host in _ANY_ADDRESS else host.strip("[]"),
            _int("--port", port) if port is not None else DEFAULT_PORTS[launch.engine])


# --- applying a profile ----------------------------------------------------------------------

# vLLM flags that need speculation on: vLLM 0.32 refuses to start with them and without
# --speculative-config (`--per-request-spec-decode-metrics requires speculative decoding to be
# enabled`), so a profile that turns speculation off drops them too
_VLLM_NEEDS_SPEC = ("--per-request-spec-decode-metrics",)


def _is_spec(name: str, engine: str, on: bool = True) -> bool:
    """Whether applying a profile (`on`: one with speculation) replaces the flag."""
    if engine == "vllm":
        name = _vllm_name(name)
        return (name.startswith("--speculative-") or name == "--num-speculative-tokens"
                or (not on and name in _VLLM_NEEDS_SPEC))
    return name.startswith("--speculative-")


def profile_flags(profile: Profile, engine: str, version: Version | str | None = None,
                  operators: dict[str, Any] | None = None) -> list[str]:
    """The server arguments a profile adds (its extra_args last); none for `off`. Written as
    that version spells them (None: the newest): SGLang's algorithm upper-case (its choices are
    case-sensitive up to 0.5.11), vLLM's method name (deepseek_mtp before 0.11), and before
    vLLM 0.8.2, which has no --speculative-config, --speculative-model with --num-speculative-tokens.
    operators: vLLM's speculative config as the unit gave it: where the profile keeps its method,
    the keys the profile does not set (ngram's prompt_lookup_min/max, ...) are kept, so a retune
    changes only what it names (vLLM would otherwise fall back to its defaults unseen)."""
    out: list[str] = []
    algorithm = profile.algorithm  # None: off (profile.on)
    if algorithm is not None and engine == "vllm":
        v, _ = known_version(version, "vllm")
        if v < (0, 8, 2):
            return _old_vllm_flags(profile, algorithm, v) + list(profile.extra_args)
        try:
            method = vllm_method(algorithm, v)
        except ProfileError as e:
            raise ProfileError(f"profile {profile.name}: {e}") from None
        config: dict[str, Any] = {"method": method}
        if profile.num_steps is not None:
            config["num_speculative_tokens"] = profile.num_steps
        if profile.draft_model_path:
            config["model"] = profile.draft_model_path
        if profile.schedule:
            config[VLLM_SCHEDULE_KEY] = [list(e) for e in profile.schedule]
        old_method = (operators or {}).get("method")
        if isinstance(old_method, str) and vllm_algorithm(old_method) == vllm_algorithm(method):
            for key, value in (operators or {}).items():
                # a schedule is the profile's to give: one it does not give goes
                if key not in ("method", "num_speculative_tokens", VLLM_SCHEDULE_KEY) and key not in config:
                    config[key] = value
        out = ["--speculative-config", json.dumps(config, separators=(",", ":"))]
    elif algorithm is not None:
        out = ["--speculative-algorithm", algorithm.upper()]
        for flag, value in (("--speculative-num-steps", profile.num_steps),
                            ("--speculative-eagle-topk", profile.topk),
                            ("--speculative-num-draft-tokens", profile.num_draft_tokens),
                            ("--speculative-draft-model-path", profile.draft_model_path)):
            if value is not None:
                out += [flag, str(value)]
        if profile.adaptive:
            out.append("--speculative-adaptive")
        if profile.adaptive_config:
            out += ["--speculative-adaptive-config", profile.adaptive_config]
    return out + list(profile.extra_args)


def _old_vllm_flags(profile: Profile, algorithm: str, version: Version) -> list[str]:
    algo = algorithm.upper()
    if algo == "NGRAM":
        model = "[ngram]"
    elif algo in ("EAGLE", "STANDALONE") and profile.draft_model_path:
        model = profile.draft_model_path
    else:
        shown = ".".join(map(str, version))
        raise ProfileError(f"profile {profile.name}: vLLM {shown} (before 0.8.2: --speculative-model) "
                           f"cannot run {profile.algorithm}" + ("" if profile.draft_model_path or algo
                                                                in ("NEXTN", "MTP", "EAGLE3")
                                                                else " without draft_model_path"))
    out = ["--speculative-model", model]
    if profile.num_steps is not None:
        out += ["--num-speculative-tokens", str(profile.num_steps)]
    return out


def apply_profile(argv: list[str], profile: Profile, version: Version | str | None = None) -> list[str]:
    """argv with every speculative flag (and its value) removed and the profile's flags appended
    at the end, as that version (None: the newest) spells them; every other word kept as it
    was, in order."""
    launch = find_launch(argv)
    drop: set[int] = set()
    opts = _options(argv, launch.index)
    for o in opts:
        if _is_spec(o.name, launch.engine, profile.on):
            drop.update(range(o.start, o.end))
    kept = [w for k, w in enumerate(argv) if k not in drop]
    operators = None
    if launch.engine == "vllm" and profile.on:
        try:
            # its --speculative-config (JSON or dotted keys); the flags before 0.8.2 say no more than a profile
            operators = _vllm_config([o for o in opts if _vllm_name(o.name).startswith("--speculative-config")])
        except LaunchError:  # not JSON: replaced whole, as the preview shows
            operators = None
    flags = profile_flags(profile, launch.engine, version, operators)
    if operators and flags[:1] == ["--speculative-config"] and len(flags) == 2 and json.loads(flags[1]) == operators:
        return list(argv)  # the config the unit runs already (its keys in another order): nothing to change
    return kept + flags
