"""GPU samples: `nvidia-smi`'s CSV (or AMD's `amd-smi`/`rocm-smi` CSV) read into `GpuSample`s, GPUs
mapped to TP ranks, and energy per generated token over a span. Pure: the source (sources/gpus.py)
hands the bytes and the time they came; nothing here runs a command.

The query is fixed (`QUERY`), so a line is always index, name, then seven figures. The name is not
quoted in csv mode and nothing forbids a comma in it, so the name is whatever lies between the first
field and the last seven. A figure the GPU does not report reads `[N/A]`, `[Not Supported]` (or, on
old drivers, `N/A`, `[Unknown Error]`): absent, never zero (a laptop card that cannot read its power
is not drawing 0 W).

AMD's tools write a header naming their columns, so their lines are read by those names
(`AmdStream`)."""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

FIELDS = ("index", "name", "utilization.gpu", "memory.used", "memory.total", "power.draw",
          "power.limit", "temperature.gpu", "clocks.sm")
QUERY = "--query-gpu=" + ",".join(FIELDS)
INTERVAL_MS = 1000
# argv, never a string: the source hands it to transport as is
ARGV = ("nvidia-smi", QUERY, "--format=csv,noheader,nounits", "-lms", str(INTERVAL_MS))
_FIGURES = len(FIELDS) - 2
# a real line is under 200 characters; a longer one is not nvidia-smi's and is not split
MAX_LINE = 1024


@dataclass(frozen=True, slots=True)
class GpuSample:
    """One GPU at one moment. Memory in MiB, power in W, temperature in °C, clock in MHz; None where
    the tool said it could not read it."""
    t: float
    index: int
    name: str
    util: float | None = None
    mem_used: float | None = None
    mem_total: float | None = None
    power: float | None = None
    power_limit: float | None = None
    temp: float | None = None
    sm_clock: float | None = None

    def to_json(self) -> dict[str, object]:
        return {"t": self.t, "index": self.index, "name": self.name, "util": self.util,
                "mem_used": self.mem_used, "mem_total": self.mem_total, "power": self.power,
                "power_limit": self.power_limit, "temp": self.temp, "sm_clock": self.sm_clock}

    @classmethod
    def from_json(cls, d: dict[str, object]) -> GpuSample | None:
        """A record file's entry back into a sample; None for one that is damaged."""
        try:
            t, index, name = d["t"], d["index"], d["name"]
            if not isinstance(t, (int, float)) or not isinstance(index, int) or not isinstance(name, str):
                return None
            figs = {k: d.get(k) for k in ("util", "mem_used", "mem_total", "power", "power_limit",
                                           "temp", "sm_clock")}
            if any(v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)))
                   for v in figs.values()):
                return None
            return cls(float(t), index, name, **{k: None if v is None else float(v)  # type: ignore[arg-type]
                                                 for k, v in figs.items()})
        except (KeyError, TypeError):
            return None


def _figure(text: str) -> float | None:
    s = text.strip()
    if not s or s.startswith("[") or s.upper() == "N/A":
        return None
    # without `nounits` the tool writes "45 %", "1234 MiB", "250.00 W": the number comes first
    head = s.split(" ", 1)[0]
    try:
        v = float(head)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def parse_line(line: str, t: float) -> GpuSample | None:
    """One line of the query's output, or None for one that is not (blank, cut short, a header, an
    error message such as "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA
    driver")."""
    if len(line) > MAX_LINE:
        return None
    parts = line.strip().split(",")
    if len(parts) < len(FIELDS):
        return None
    idx = parts[0].strip()
    if not idx.isdigit() or not idx.isascii():
        return None
    name = ",".join(parts[1:len(parts) - _FIGURES]).strip()
    if not name or not name.isprintable():
        return None
    figs = [_figure(p) for p in parts[len(parts) - _FIGURES:]]
    if all(f is None for f in figs):
        return None  # a header line, or a GPU that answers nothing
    return GpuSample(t, int(idx), name, *figs)


# AMD: `amd-smi monitor` (ROCm 6.1 on; its CSV keys unchanged since) loops itself with `-w`, but it
# is Python writing to a pipe, block-buffered: PYTHONUNBUFFERED makes each second's rows come as
# printed. rocm-smi (older ROCm) has no loop: the source runs it again each interval.
AMD_SMI_ARGV = ("env", "PYTHONUNBUFFERED=1", "amd-smi", "monitor", "-p", "-t", "-u", "-v", "--csv",
                "-w", str(INTERVAL_MS // 1000))
ROCM_SMI_ARGV = ("rocm-smi", "--showuse", "--showmeminfo", "vram", "--showpower", "--showmaxpower",
                 "--showtemp", "--showproductname", "--csv")
AMD_NAME = "AMD GPU"  # amd-smi monitor names no model
_MIB = 1 / (1 << 20)


def _amd_columns(header: list[str]) -> dict[str, tuple[int, float]] | None:
    """A header line of amd-smi's or rocm-smi's CSV -> figure -> (column, scale); None for a line
    that is neither tool's header."""
    low = [h.strip().lower() for h in header]
    at = {h: i for i, h in enumerate(low)}
    out: dict[str, tuple[int, float]] = {}
    if "gpu" in at and low[0] in ("gpu", "timestamp"):
        # amd-smi monitor: power W, temperatures °C, gfx %, clocks MHz, VRAM MB (MiB: the library
        # divides bytes by 1024²)
        for fig, col in (("index", "gpu"), ("util", "gfx"), ("mem_used", "vram_used"),
                         ("mem_total", "vram_total"), ("power", "power_usage"),
                         ("temp", "hotspot_temperature"), ("sm_clock", "gfx_clock")):
            if col in at:
                out[fig] = (at[col], 1.0)
        return out
    if low[0] == "device":
        # rocm-smi: memory in bytes; power named for its kind ("Average"/"Current Socket")
        for i, h in enumerate(low):
            if h == "gpu use (%)":
                out["util"] = (i, 1.0)
            elif h == "vram total used memory (b)":
                out["mem_used"] = (i, _MIB)
            elif h == "vram total memory (b)":
                out["mem_total"] = (i, _MIB)
            elif h == "max graphics package power (w)":
                out["power_limit"] = (i, 1.0)
            elif h.endswith("graphics package power (w)"):
                out["power"] = (i, 1.0)
            elif h == "temperature (sensor junction) (c)":
                out["temp"] = (i, 1.0)  # the hotspot, as amd-smi's, where the card has it
            elif h == "temperature (sensor edge) (c)":
                out.setdefault("temp", (i, 1.0))
            elif h == "card series":
                out["name"] = (i, 1.0)
        out["index"] = (0, 1.0)
        return out
    return None


def parse_amd_row(row: list[str], cols: dict[str, tuple[int, float]], t: float) -> GpuSample | None:
    """One data row of amd-smi's or rocm-smi's CSV read by its header's columns."""
    def cell(fig: str) -> str | None:
        c = cols.get(fig)
        return row[c[0]].strip() if c is not None and c[0] < len(row) else None

    idx = cell("index") or ""
    idx = idx[4:] if idx.lower().startswith("card") else idx  # rocm-smi's `card0`
    if not idx.isdigit() or not idx.isascii():
        return None
    name = cell("name") or ""
    figs: dict[str, float | None] = {}
    for fig in ("util", "mem_used", "mem_total", "power", "power_limit", "temp", "sm_clock"):
        text = cell(fig)
        v = _figure(text) if text is not None else None
        figs[fig] = None if v is None else v * cols[fig][1]
    if all(v is None for v in figs.values()):
        return None
    return GpuSample(t, int(idx), name if name and name.isprintable() and name.upper() != "N/A" else AMD_NAME,
                     **figs)


class GpuStream:
    """Bytes as they arrive from `nvidia-smi -lms` into samples: a line cut between two chunks is
    joined, one cut for good (the link dropped) is thrown away at `reset()`, and a flood without a
    newline is dropped rather than held. Every line that was not a sample is counted."""

    def __init__(self) -> None:
        self._buf = b""
        self._skipping = False  # inside a line already longer than MAX_LINE
        self.bad = 0
        self.samples = 0

    def feed(self, data: bytes, t: float) -> list[GpuSample]:
        out: list[GpuSample] = []
        buf = self._buf + data
        lines = buf.split(b"\n")
        self._buf = lines.pop()
        for raw in lines:
            if self._skipping:
                self._skipping = False
                self.bad += 1
                continue
            self._take(raw, t, out)
        if len(self._buf) > MAX_LINE:
            self._buf = b""
            self._skipping = True
        return out

    def _take(self, raw: bytes, t: float, out: list[GpuSample]) -> None:
        if not raw.strip():
            return
        s = parse_line(raw.decode("utf-8", "replace"), t)
        if s is None:
            self.bad += 1
        else:
            self.samples += 1
            out.append(s)

    def reset(self) -> None:
        """The stream ended: a partial last line is not a sample."""
        if self._buf.strip() or self._skipping:
            self.bad += 1
        self._buf = b""
        self._skipping = False


class AmdStream(GpuStream):
    """amd-smi's or rocm-smi's CSV: each header line (amd-smi's watch writes one a second) sets
    the columns its rows are read by; a row before any header is not read."""

    def __init__(self) -> None:
        super().__init__()
        self._cols: dict[str, tuple[int, float]] | None = None

    def _take(self, raw: bytes, t: float, out: list[GpuSample]) -> None:
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            return
        row = next(csv.reader([text]), [])
        cols = _amd_columns(row) if row else None
        if cols is not None:
            self._cols = cols
            return
        s = parse_amd_row(row, self._cols, t) if self._cols is not None and len(text) <= MAX_LINE else None
        if s is None:
            self.bad += 1
        else:
            self.samples += 1
            out.append(s)


def parse_amd_text(text: str, t: float = 0.0) -> list[GpuSample]:
    """Every sample of one whole amd-smi or rocm-smi CSV output."""
    st = AmdStream()
    return st.feed(text.encode() + b"\n", t)


def parse_text(text: str, t: float = 0.0) -> list[GpuSample]:
    """Every sample of a whole output (one `nvidia-smi` run without `-l`)."""
    return [s for s in (parse_line(ln, t) for ln in text.splitlines()) if s is not None]


def visible_devices(value: str | None) -> list[int] | None:
    """CUDA_VISIBLE_DEVICES as physical indices, in the order CUDA numbers them; None where it is
    unset or names GPUs by UUID or MIG id (no index to match nvidia-smi's with). An empty value hides
    every GPU."""
    if value is None:
        return None
    out = []
    for part in value.split(","):
        p = part.strip()
        if not p:
            continue
        if not p.isdigit():
            return None
        n = int(p)
        if n in out:
            break  # CUDA stops at a repeated index
        out.append(n)
    return out


def rank_gpus(tp_size: int, *, base_gpu_id: int = 0, gpu_id_step: int = 1,
              visible: Sequence[int] | None = None) -> dict[str, int]:
    """Each TP rank's physical GPU index: SGLang puts rank i on device base_gpu_id + i*gpu_id_step
    (its server_args), counted among the visible devices. This assumes nvidia-smi's order (PCI bus)
    is CUDA's: true where CUDA_DEVICE_ORDER=PCI_BUS_ID, and on the usual servers of identical GPUs.
    A rank whose device is past the visible list is left out rather than guessed."""
    out = {}
    for r in range(max(0, tp_size)):
        dev = base_gpu_id + r * gpu_id_step
        if visible is None:
            out[f"TP{r}"] = dev
        elif 0 <= dev < len(visible):
            out[f"TP{r}"] = visible[dev]
    return out


def _integral(points: Iterable[tuple[float, float]], t0: float, t1: float) -> tuple[float, float]:
    """The trapezoid integral of (t, v) points, sorted by t, over [t0, t1], and the time it covers:
    a gap wider than GAP between two points is not filled (the tool or the link stopped)."""
    total = covered = 0.0
    prev: tuple[float, float] | None = None
    for t, v in points:
        if prev is not None:
            a, b = max(prev[0], t0), min(t, t1)
            if b > a and t - prev[0] <= GAP:
                total += (prev[1] + v) / 2 * (b - a)
                covered += b - a
        prev = (t, v)
    return total, covered


GAP = 10.0  # s: ten missed samples of -lms 1000


def host_power(samples: Iterable[GpuSample]) -> list[tuple[float, float]]:
    """A host's power, summed over its GPUs at each moment a sample set came, in time order. A
    moment where some GPU has no power reading is left out (a sum without it would read low)."""
    by_t: dict[float, list[float | None]] = {}
    for s in samples:
        by_t.setdefault(s.t, []).append(s.power)
    return [(t, sum(p for p in ps if p is not None)) for t, ps in sorted(by_t.items())
            if ps and all(p is not None for p in ps)]


@dataclass(frozen=True, slots=True)
class Energy:
    joules: float
    tokens: float
    seconds: float  # the span both the power and the token rate cover

    @property
    def per_token(self) -> float | None:
        return self.joules / self.tokens if self.tokens > 0 else None


def energy_per_token(power: Sequence[tuple[float, float]], gen: Sequence[tuple[float, float]],
                     t0: float, t1: float) -> Energy | None:
    """Joules per generated token over [t0, t1]: power (W, summed over the GPUs) integrated over
    time, divided by the generated tokens (the batch lines' gen throughput, tok/s, integrated over
    the same span). Only the time both cover counts, so a span where the GPUs went unread does not
    charge its tokens nothing. None where they share no time."""
    if t1 <= t0 or len(power) < 2 or len(gen) < 2:
        return None
    lo = max(t0, power[0][0], gen[0][0])
    hi = min(t1, power[-1][0], gen[-1][0])
    if hi <= lo:
        return None
    joules, pc = _integral(power, lo, hi)
    tokens, gc = _integral(gen, lo, hi)
    if pc <= 0 or gc <= 0:
        return None
    # scale each to the shared span where one has a gap the other does not
    span = hi - lo
    return Energy(joules * span / pc, tokens * span / gc, span)


def epoch_gpus(samples: Sequence[GpuSample], start: float, end: float | None,
               gen_throughput: float | None) -> dict[str, object] | None:
    """An epoch's GPUs as `summary` and the compare screen give them: how many, their mean
    utilisation and the host's mean power over the samples inside it, and joules per generated
    token. The epoch's gen throughput is the mean of its decode lines (summary keeps no series of
    it), so the tokens are that rate over the span the power covers. None without samples in it."""
    inside = [s for s in samples if s.t >= start and (end is None or s.t <= end)]
    if not inside:
        return None
    power = host_power(inside)
    utils = [s.util for s in inside if s.util is not None]
    out: dict[str, object] = {
        "gpus": len({s.index for s in inside}),
        "util_mean": round(sum(utils) / len(utils), 1) if utils else None,
        "power_mean_w": round(sum(p for _, p in power) / len(power), 1) if power else None,
        "joules_per_token": None,
    }
    if power and len(power) >= 2 and gen_throughput:
        t0, t1 = power[0][0], power[-1][0]
        e = energy_per_token(power, [(t, gen_throughput) for t, _ in power], t0, t1)
        if e is not None and e.per_token is not None:
            out["joules_per_token"] = round(e.per_token, 4)
    return out


class GpuHistory:
    """A host's recent samples for the dashboard: the newest per GPU at a moment, within STALE of
    it (a GPU that stopped answering drops off rather than showing its last figures as now)."""

    STALE = 10.0

    def __init__(self, keep: int = 4096) -> None:
        from collections import deque

        self.samples: deque[GpuSample] = deque(maxlen=keep)

    def add(self, samples: Iterable[GpuSample]) -> None:
        self.samples.extend(samples)

    def at(self, t: float | None = None) -> list[GpuSample]:
        """The newest sample of each GPU at or before t (None: the newest of all), by index."""
        newest: dict[int, GpuSample] = {}
        for s in reversed(self.samples):
            if t is not None and s.t > t:
                continue
            if s.index not in newest:
                newest[s.index] = s
        if not newest:
            return []
        top = max(s.t for s in newest.values())
        return sorted((s for s in newest.values() if s.t >= top - self.STALE), key=lambda s: s.index)


_RANK_TOKEN = re.compile(r"^(DP|PP|TP)(\d{1,4})$")
HELD = 0.3  # of its memory: a GPU that serves a rank holds its weights and KV pool (mem_fraction_static)


def rank_devices(labels: Iterable[str], spec: Mapping[str, object], placement: Mapping[str, object] | None,
                 visible: Sequence[int] | None) -> dict[str, int]:
    """Each rank label's physical GPU index, for the ranks an SGLang server's settings place: spec
    is its server_args settings (tp_size, dp_size, enable_dp_attention), placement that line's
    base_gpu_id / gpu_id_step / nnodes (core/parse/events.placement_args: a field its version
    lacks is its default), visible its CUDA_VISIBLE_DEVICES (visible_devices: None where unset).
    As SGLang's launch does: TP rank t of PP stage p on device base + p*tp_size + t*step; without
    DP attention, DP replica d from base + d*tp_size*step. Left out, never guessed: a server over
    several nodes, a label whose rank the settings do not account for, DP over PP (versions
    differ there), a device past the visible list; no placement (vLLM, a line cut short): none."""
    tp, dp = spec.get("tp_size"), spec.get("dp_size", 1)
    if placement is None or not isinstance(tp, int) or not isinstance(dp, int) or tp < 1 or dp < 1:
        return {}
    base, step, nodes = (placement.get("base_gpu_id", 0), placement.get("gpu_id_step", 1),
                         placement.get("nnodes", 1))
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (base, step, nodes)) or nodes != 1:
        return {}
    assert isinstance(base, int) and isinstance(step, int)
    replicas = dp > 1 and not spec.get("enable_dp_attention")
    out: dict[str, int] = {}
    for label in labels:
        toks: dict[str, int] = {}
        for word in label.split():
            m = _RANK_TOKEN.match(word)
            if m is not None:
                toks[m.group(1)] = int(m.group(2))
        t, p, d = toks.get("TP"), toks.get("PP", 0), toks.get("DP")
        if t is None:
            if tp != 1:
                continue  # a label without its TP rank (vLLM's engine line) is not one GPU's
            t = 0
        if t >= tp:
            continue
        offset = p * tp
        if replicas:
            if d is None or d >= dp or p:
                continue
            offset += d * tp * step
        got = rank_gpus(t + 1, base_gpu_id=base + offset, gpu_id_step=step, visible=visible).get(f"TP{t}")
        if got is not None:
            out[label] = got
    return out


def placement_holds(devices: Mapping[str, int], samples: Sequence[GpuSample]) -> bool:
    """Whether the GPUs read agree with a mapping: every mapped GPU is among them and holds at
    least HELD of its memory where it reports it. One set where the mapping cannot see it (an
    EnvironmentFile=, a wrapper script's CUDA_VISIBLE_DEVICES) puts the ranks on GPUs that read
    idle: then no rank is shown on any GPU, rather than a wrong one."""
    by_index = {s.index: s for s in samples}
    for gpu in set(devices.values()):
        s = by_index.get(gpu)
        if s is None:
            return False
        if s.mem_used is not None and s.mem_total and s.mem_used < HELD * s.mem_total:
            return False
    return bool(devices)
