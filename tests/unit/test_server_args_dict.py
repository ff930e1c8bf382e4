"""The speculation settings from SGLang's start line in both of its forms (issue 18).

Up to 0.5.18 `sglang/srt/entrypoints/engine.py` (Engine._launch_subprocesses) logs
`logger.info(f"{server_args=}")`: the dataclass repr, `server_args=ServerArgs(model_path='m', ...)`.
From 0.5.19 the same place logs `logger.info(f"server_args={server_args.resolved_dict()}")`, and
0.5.23 `f"server_args={_server_args_for_logging(server_args)}"` (resolved_dict() with the watermark
secrets redacted): the repr of a plain dict, `server_args={'model_path': 'm', ...}`, every field
flat (0.5.23 assembles ServerArgs from the `arg_groups/fields/*` namespaces into one msgspec
struct), nested records expanded to dicts. Both under the main process's logger format
`[%(asctime)s] %(message)s` (`utils/common.py` configure_logger).

data/sglang-0.5.23-server_args.log is one such line, made from the 0.5.23 wheel
(`pip download --no-deps sglang==0.5.23`): ServerArgs(model_path='deepseek-ai/DeepSeek-V3',
speculative_algorithm='EAGLE', speculative_num_steps=3, speculative_eagle_topk=1,
speculative_num_draft_tokens=4, tp_size=8) built from the wheel's own `srt/server_args.py` (its
torch and model-config imports stubbed, so unresolved: defaults where resolution would fill in),
printed as `"server_args=" + repr(msgspec.structs.asdict(args))`: all 546 fields in 0.5.23's order,
about 18 KB.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtptui.core import compiled
from mtptui.core.ingest import Ingest
from mtptui.core.parse import LineParser, events
from mtptui.core.parse.events import classify, server_args
from mtptui.core.summary import Summary
from mtptui.sim import flags
from mtptui.sim.scenario import config_from_argv, nextn

DATA = Path(__file__).parent / "data"
REAL_0_5_23 = (DATA / "sglang-0.5.23-server_args.log").read_text().rstrip("\n")
SETTINGS_0_5_23 = {"model_path": "deepseek-ai/DeepSeek-V3", "tp_size": 8, "dp_size": 1, "enable_dp_attention": False,
                   "decode_log_interval": 40, "algorithm": "EAGLE", "draft_model_path": None, "num_steps": 3,
                   "topk": 1, "num_draft_tokens": 4, "adaptive": False, "enable_two_batch_overlap": False}
QWEN = ["--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4"]


def field_by_field(msg: str) -> dict:
    """What the reader makes of a dict-form line it cannot read whole: the `'key': value` items."""
    return {events._SPEC_KEYS[k]: events._value(v) for k, v in events._ITEM.findall(msg)}


# ---- the real line --------------------------------------------------------------------------------


def test_the_0_5_23_line_is_a_spec_config_with_its_settings():
    assert REAL_0_5_23.startswith("[2026-03-09 16:00:00] server_args={'model_path': 'deepseek-ai/DeepSeek-V3', ")
    kind, data = classify(REAL_0_5_23)
    assert kind == "spec_config" and data == SETTINGS_0_5_23
    assert field_by_field(REAL_0_5_23) == SETTINGS_0_5_23  # read whole or item by item: the same


def test_the_0_5_23_line_reads_through_the_parser_in_a_journal_export():
    parsed = LineParser().parse("Mar 09 16:00:00 gpu-a python3[10]: " + REAL_0_5_23)
    assert parsed.record.kind == "spec_config" and parsed.record.data == SETTINGS_0_5_23
    assert parsed.line.host == "gpu-a"


@pytest.mark.parametrize("cut", [100, 2000, 9000, 15000, len(REAL_0_5_23) - 1])
def test_a_line_cut_short_gives_the_settings_before_the_cut(cut):
    """journald splits a line longer than its LineMax (48K by default), and a copy may be cut:
    what lies before the cut is still read, item by item."""
    line = REAL_0_5_23[:cut]
    head = line[:line.rfind(", '")]  # the last item may be cut inside its value
    want = {name: SETTINGS_0_5_23[name] for key, name in events._SPEC_KEYS.items() if f"'{key}': " in head}
    got = server_args(line)
    assert {k: got[k] for k in want} == want
    assert classify(line)[0] == "spec_config"


# ---- both forms, the same settings -----------------------------------------------------------------


ARGVS = [
    QWEN + nextn(3),
    QWEN,
    QWEN + ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/models/it's \\ draft",
            "--speculative-num-steps", "5", "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8"],
    ["--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8", "--dp", "8", "--enable-dp-attention",
     "--decode-log-interval", "10"] + nextn(1),
]


@pytest.mark.parametrize("argv", ARGVS, ids=["nextn3", "off", "quoted-draft-path", "dp-attention"])
@pytest.mark.parametrize("version", ["0.5.12", "0.5.19", "0.5.23"])
def test_the_repr_and_the_dict_give_the_same_settings(argv, version):
    a = config_from_argv(argv + ["--sim-version", version]).args
    old = server_args("[2026-03-09 16:00:00] server_args=" + flags.server_args_repr(a))
    new = server_args("[2026-03-09 16:00:00] server_args=" + repr(a))
    assert old == new == flags.spec_truth(a)
    assert list(old) == list(new)  # and in the same order (the summary's JSON keeps it)


def test_a_value_that_is_no_literal_leaves_the_rest_read_item_by_item():
    """A field whose repr Python cannot read back (an enum, inf) makes literal_eval fail: the
    settings still come, item by item, and equal what the whole dict gives."""
    a = config_from_argv(QWEN + nextn(3)).args
    whole = server_args("server_args=" + repr(a))
    for odd in ("<Backend.FULL: 'full'>", "inf", "nan", "LoRARef(name='x')", "PosixPath('/x')"):
        text = "server_args=" + repr(a)[:-1] + f", 'odd_field': {odd}}}"
        assert events._dict_settings(text[len("server_args="):]) is None
        assert server_args(text) == whole


def test_nested_dicts_lists_and_sets_are_read_whole_and_only_the_top_level_counts():
    d = {"model_path": "m", "cuda_graph_config": {"decode": {"backend": "full", "max_bs": None, "bs": [1, 2, 4]},
                                                 "prefill": {"backend": "disabled", "tp_size": 99}},
         "lora_paths": [{"lora_name": "a", "tp_size": 98}], "enabled_ops": {"x", "y"}, "empty": set(),
         "json_model_override_args": '{"tp_size": 97}', "quote": "it's \"both\"", "tp_size": 2,
         "speculative_algorithm": "EAGLE", "speculative_num_steps": 3, "mem_fraction_static": 0.85,
         "speculative_accept_threshold_single": 1e-05, "enable_dp_attention": True, "dp_size": 2}
    assert server_args("server_args=" + repr(d)) == {"model_path": "m", "tp_size": 2, "algorithm": "EAGLE",
                                                     "num_steps": 3, "enable_dp_attention": True, "dp_size": 2}


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=30))
_keys = st.sampled_from(sorted(events._SPEC_KEYS) + ["tokenizer_path", "host", "port", "x"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_keys, _scalars, max_size=14))
def test_any_dict_of_scalars_reads_whole_as_item_by_item(d):
    text = "server_args=" + repr({"model_path": "m", **d})
    want = {events._SPEC_KEYS[k]: v for k, v in {"model_path": "m", **d}.items() if k in events._SPEC_KEYS}
    got = server_args(text)
    assert got == want and list(got) == list(want)
    # item by item, unless a string holds `, 'key': ` itself (repr quotes a `'` with `"`)
    if not any(isinstance(v, str) and "'" in v for v in d.values()):
        assert field_by_field(text) == want


# ---- what is not a start line, and hostile input ---------------------------------------------------


@pytest.mark.parametrize("msg", ["server_args={}", "server_args={1: 2}", "server_args=", "a server_args= line",
                                 "server_args=[{'model_path': 'm'}]", "server_args={{{{"])
def test_what_is_not_a_start_line_is_no_spec_config(msg):
    assert classify(msg) is None


HOSTILE = {
    "10 MB of items, no end": "server_args={" + "'model_path': 'x', " * 550_000,
    "10 MB of items with an end": "server_args={" + "'tp_size': 3, " * 700_000 + "}",
    "a 10 MB string": "server_args={'model_path': '" + "a" * 10_000_000 + "', 'tp_size': 2}",
    "deep nesting": "server_args={'a': " + "[" * 200_000 + "]" * 200_000 + ", 'tp_size': 2}",
    "deep nesting, unbalanced": "server_args={'a': " + "{'b': " * 100_000,
    "binary": "server_args={'model_path': '\x00\xff\udcff\x1b[0m', 'tp_size': 2, '\x00': \x01}",
    "unbalanced": "server_args={'model_path': 'm', 'tp_size': 2, 'x': {'y': [1, 2}",
    "an unclosed string": "server_args={'model_path': 'm, 'tp_size': 2}",
    "a huge int": "server_args={'tp_size': " + "9" * 100_000 + ", 'dp_size': 2}",
    "a huge exponent": "server_args={'tp_size': 1e99999999, 'dp_size': 2}",
    "quotes without end": "server_args={" + ", 'model_path': \"" * 300_000,
    "escapes without end": "server_args={'model_path': '" + "\\'" * 1_000_000,
    "code, not a literal": "server_args={'tp_size': __import__('os').system('false'), 'dp_size': 2}",
    "a call in a nested value": "server_args={'a': {'b': print('x')}, 'dp_size': 2}",
}


@pytest.mark.parametrize("msg", list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_lines_neither_raise_nor_run_code(msg, capsys):
    got = server_args(msg)
    assert isinstance(got, dict)
    assert all(isinstance(v, (str, int, float, bool, type(None))) for v in got.values())
    hit = classify(msg)
    assert hit is None or hit[0] == "spec_config"
    parsed = LineParser().parse("[2026-03-09 16:00:00] " + msg)
    assert parsed is not None
    assert capsys.readouterr().out == ""  # nothing was evaluated


def test_hostile_values_give_what_can_be_read():
    assert server_args(HOSTILE["a 10 MB string"]) == {"model_path": "a" * 10_000_000, "tp_size": 2}
    assert server_args(HOSTILE["a huge int"]) == {"dp_size": 2}
    assert server_args(HOSTILE["code, not a literal"]) == {"dp_size": 2}
    assert server_args(HOSTILE["unbalanced"]) == {"model_path": "m", "tp_size": 2}


# ---- the compiled lane, and summary's epochs --------------------------------------------------------


def _journal(version: str, runs: list[list[str]]) -> list[str]:
    """A journal export (short) of runs, each a systemd start, the start line as `version` prints
    it, and decode lines."""
    lines, t = [], 0
    for argv in runs:
        a = config_from_argv(QWEN + argv + ["--sim-version", version]).args
        spec = a["speculative_algorithm"] is not None
        lines.append(f"Mar 09 16:{t:02d}:00 gpu-a systemd[1]: Started sglang-qwen.service - SGLang.")
        lines.append(f"Mar 09 16:{t:02d}:01 gpu-a python3[{10 + t}]: [2026-03-09 16:{t:02d}:01] server_args="
                     + flags.server_args_text(version, a))
        for k in range(3):
            acc = f"accept len: 2.{80 + k}, accept rate: 0.60, " if spec else ""
            lines.append(f"Mar 09 16:{t:02d}:1{k} gpu-a python3[{10 + t}]: [2026-03-09 16:{t:02d}:1{k} TP0] Decode batch, "
                         f"#running-req: 8, #token: 100, token usage: 0.10, {acc}cuda graph: True, "
                         f"gen throughput (token/s): {1000 + 900 * spec + k * 10}.00, #queue-req: 0")
        t += 1
    return lines


RUNS = [[], nextn(3), [], nextn(2)]




def _summary_json(feed) -> str:
    summary = Summary()
    ingest = Ingest(summary)
    feed(ingest)
    return json.dumps(summary.to_json(ingest.counts.to_json()))


@pytest.mark.skipif(not compiled.BUILT, reason="the compiled hot path was not built (no C compiler at install)")
def test_the_compiled_lane_reads_dict_lines_as_the_python_path(monkeypatch):
    lines = _journal("0.5.23", RUNS) + [REAL_0_5_23] + [HOSTILE[k] for k in ("unbalanced", "a huge int", "code, not a literal")]
    lines += _journal("0.5.12", RUNS[:2])
    block = ("\n".join(lines) + "\n").encode()
    fast_block = _summary_json(lambda i: i.feed_block(block))
    fast_lines = _summary_json(lambda i: i.feed_many(lines))
    monkeypatch.setattr(compiled, "ENABLED", False)
    slow = _summary_json(lambda i: i.feed_many(lines))
    assert fast_block == fast_lines == slow
    doc = json.loads(slow)
    assert sum(e["kind"] == "spec_config" for e in doc["events"]) == 4 + 1 + 3 + 2


def test_the_simulator_dict_is_a_python_literal():
    a = config_from_argv(QWEN + nextn(3) + ["--sim-version", "0.5.23"]).args
    assert ast.literal_eval(flags.server_args_text("0.5.23", a)) == a
