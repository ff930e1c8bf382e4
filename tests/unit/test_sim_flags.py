"""The simulator takes sglang.launch_server's flags and refuses bad ones the way SGLang does
(reference §3), so a bad restart can be tested against it."""

import pytest

from mtptui.core.parse.events import server_args as read_server_args
from mtptui.sim import cli, flags
from mtptui.sim.scenario import config_from_argv, nextn

QWEN = ["--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4"]


def run(argv, capsys):
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.err


@pytest.mark.parametrize("extra,message", [
    (["--speculative-eagle-max-draft", "4"], "error: unrecognized arguments: --speculative-eagle-max-draft 4"),
    (["--speculative-algorithm", "NEXTN", "--speculative-eagle-topk", "1"],
     "assert self.speculative_eagle_topk is None and self.speculative_num_draft_tokens is None\nAssertionError"),
    (["--speculative-algorithm", "NEXTN", "--speculative-num-draft-tokens", "4"],
     "assert self.speculative_eagle_topk is None and self.speculative_num_draft_tokens is None"),
    (["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3"],
     "TypeError: '>' not supported between instances of 'NoneType' and 'int'"),
    (["--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", "Qwen/Qwen3-0.6B", "--dp", "4",
      "--enable-dp-attention"], "ValueError: Currently standalone speculative decoding does not support dp attention."),
    (["--speculative-algorithm", "NGRAM", "--dp", "2", "--enable-dp-attention"],
     "ValueError: Currently ngram speculative decoding does not support dp attention."),
    (["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "5", "--speculative-eagle-topk", "4",
      "--speculative-num-draft-tokens", "8", "--attention-backend", "trtllm_mha"],
     "ValueError: trtllm_mha backend only supports topk = 1 for speculative decoding."),
    (["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "5", "--speculative-eagle-topk", "4",
      "--speculative-num-draft-tokens", "8", "--page-size", "16", "--attention-backend", "torch_native"],
     "ValueError: speculative_eagle_topk > 1 with page_size > 1 is unstable"),
    (["--speculative-algorithm", "nextn", "--sim-version", "0.5.8"],
     "argument --speculative-algorithm: invalid choice: 'nextn'"),
    (["--speculative-algorithm", "NGRAM", "--sim-version", "0.4.9"], "invalid choice: 'NGRAM'"),
    (["--enable-metrics-for-all-schedulers", "--sim-version", "0.5.3"],
     "unrecognized arguments: --enable-metrics-for-all-schedulers"),
    (["--speculative-draft", "x", "--sim-version", "0.5.8"], "ambiguous option: --speculative-draft"),
    (["--sim-fault", "meteor"], "unknown fault 'meteor'"),
])
def test_bad_flags_exit_2_with_sglangs_message(extra, message, capsys):
    code, err = run(QWEN + extra, capsys)
    assert code == 2
    assert message in err


def test_model_path_is_required(capsys):
    code, err = run(["--tp", "4"], capsys)
    assert code == 2 and "the following arguments are required: --model-path" in err


def test_help_exits_0(capsys):
    assert cli.main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Not a real server" in out and "--sim-scenario" in out


def test_nextn_becomes_eagle_and_topk1_forces_draft():
    cfg = config_from_argv(QWEN + ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
                                   "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "8"])
    a = cfg.args
    assert (a["speculative_algorithm"], a["speculative_num_steps"], a["speculative_eagle_topk"],
            a["speculative_num_draft_tokens"]) == ("EAGLE", 3, 1, 4)
    assert any("adjusted to speculative_num_steps + 1" in w for w in cfg.warnings)
    assert a["max_running_requests"] == 48
    assert cfg.requested_algorithm == "NEXTN"


@pytest.mark.parametrize("model,version,triplet", [
    ("meta-llama/Llama-3.1-8B-Instruct", "0.5.12", (5, 4, 8)),
    ("deepseek-ai/DeepSeek-V3", "0.4.9", (3, 1, 4)),
    ("Qwen/Qwen3-8B", "0.5.4", (5, 4, 8)),
    ("Qwen/Qwen3-8B", "0.5.8", (3, 1, 4)),
])
def test_auto_chosen_steps_topk_draft(model, version, triplet):
    cfg = config_from_argv(["--model-path", model, "--speculative-algorithm", "EAGLE", "--sim-version", version])
    a = cfg.args
    assert (a["speculative_num_steps"], a["speculative_eagle_topk"], a["speculative_num_draft_tokens"]) == triplet


def test_mtp_checkpoint_sets_the_draft_path_to_the_model():
    cfg = config_from_argv(["--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8"] + nextn(3))
    assert cfg.args["speculative_draft_model_path"] == "deepseek-ai/DeepSeek-V3"


def test_algorithm_is_case_insensitive_from_0512():
    cfg = config_from_argv(QWEN + ["--speculative-algorithm", "nextn", "--speculative-num-steps", "1",
                                   "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "2"])
    assert cfg.args["speculative_algorithm"] == "EAGLE"


def test_server_args_line_reads_back_as_the_settings():
    """The dashboard reads the settings from `server_args=ServerArgs(...)` with the core's regex."""
    cfg = config_from_argv(QWEN + nextn(3) + ["--decode-log-interval", "20", "--sim-load", "steady"])
    text = "server_args=" + flags.server_args_repr(cfg.args)
    assert "sim" not in text  # the simulator's own options never show up as SGLang's
    assert read_server_args(text) == flags.spec_truth(cfg.args) == {
        "algorithm": "EAGLE", "num_steps": 3, "topk": 1, "num_draft_tokens": 4, "draft_model_path": None,
        "model_path": "Qwen/Qwen3.5-122B-A10B", "tp_size": 4, "dp_size": 1, "enable_dp_attention": False,
        "decode_log_interval": 20}


@pytest.mark.parametrize("extra,version,adapts,warned", [
    (["--speculative-adaptive"], "0.5.12", True, None),
    (["--speculative-adaptive", "--tp", "4", "--dp", "2", "--enable-dp-attention"], "0.5.12", False,
     "enable_dp_attention=True is not supported"),
    (["--speculative-adaptive"], "0.5.10", None, None),  # no such flag before 0.5.11: refused below
])
def test_the_simulator_adapts_as_sglang_does(extra, version, adapts, warned, capsys):
    """--speculative-adaptive (0.5.11+), dropped to static steps where SGLang drops it, with its
    warning (adaptive_unsupported_reason, sglang 0.5.12 srt/speculative/adaptive_spec_params.py)."""
    argv = QWEN + nextn(3) + extra + ["--sim-version", version]
    if adapts is None:
        code, err = run(argv, capsys)
        assert code == 2 and "--speculative-adaptive" in err
        return
    cfg = config_from_argv(argv)
    assert read_server_args("server_args=" + flags.server_args_text(version, cfg.args))["adaptive"] is adapts
    said = [w for w in cfg.warnings if "speculative_adaptive disabled" in w]
    assert (warned is None and not said) or (warned and warned in said[0] and "Falling back to static" in said[0])


def test_speculation_off_reads_as_none():
    cfg = config_from_argv(QWEN)
    assert read_server_args("server_args=" + flags.server_args_repr(cfg.args))["algorithm"] is None


def test_mamba_fields_need_054(capsys):
    code, err = run(QWEN + ["--sim-version", "0.5.3", "--sim-hybrid", "mamba"], capsys)
    assert code == 2 and "0.5.4+" in err


def test_scenario_errors_are_one_line(capsys, tmp_path):
    assert cli.main(["--sim-scenario", "nope", "--write-log", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown scenario 'nope'" in err
    assert cli.main(["--sim-scenario", "mtp-on-tp4"]) == 2
    assert "needs --write-log" in capsys.readouterr().err
    assert cli.main(["--sim-scenario", "mtp-on-tp4", "--write-log", str(tmp_path / "no" / "dir" / "x.log")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write" in err


def test_scenario_list(capsys):
    assert cli.main(["--sim-scenario", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("mtp-on-tp4", "mtp-off-baseline", "mtp-toggle-restarts", "dp-attention-8",
                 "incident-oom-crashloop", "incident-acceptance-collapse", "old-format-0.4.9", "vllm-eagle"):
        assert name in out


def test_offline_write_log_of_given_flags(tmp_path, capsys):
    out = tmp_path / "run.log"
    truth = tmp_path / "truth.jsonl"
    code = cli.main(QWEN + nextn(1) + ["--write-log", str(out), "--duration", "20", "--sim-envelope", "json",
                                      "--sim-truth", str(truth), "--sim-startup-seconds", "5"])
    assert code == 0
    lines = out.read_text().splitlines()
    assert len(lines) == len(truth.read_text().splitlines()) > 50
    assert all(line.startswith('{ "__CURSOR" : ') for line in lines)
    text = out.read_text()
    assert "--write-log" not in text and "--sim-truth" not in text  # the journal shows the server's argv
    assert "speculative_num_steps=1" in text


# ---- the server_args line by version (issue 18) ----------------------------------------------------
# sglang/srt/entrypoints/engine.py (Engine._launch_subprocesses): 0.5.18 `logger.info(f"{server_args=}")`,
# the dataclass repr; 0.5.19 `logger.info(f"server_args={server_args.resolved_dict()}")` and 0.5.23
# `f"server_args={_server_args_for_logging(server_args)}"` (resolved_dict(), secrets redacted): a dict.


@pytest.mark.parametrize("v,form", [((0, 4, 9), "ServerArgs("), ((0, 5, 12), "ServerArgs("), ((0, 5, 18), "ServerArgs("),
                                    ((0, 5, 19), "{'model_path': "), ((0, 5, 23), "{'model_path': ")])
def test_the_server_args_form_changes_at_0519(v, form):
    a = config_from_argv(QWEN + nextn(3)).args
    text = flags.server_args_text(v, a)
    assert text.startswith(form)
    assert text == (repr(a) if v >= (0, 5, 19) else flags.server_args_repr(a))


@pytest.mark.parametrize("version,form", [("0.5.12", "ServerArgs(model_path="), ("0.5.19", "{'model_path': "),
                                          ("0.5.23", "{'model_path': ")])
def test_an_offline_run_logs_its_versions_form_and_it_reads_back(version, form, tmp_path):
    import ast

    from mtptui.core.parse import LineParser

    log = tmp_path / "run.log"
    argv = QWEN + nextn(3) + ["--sim-version", version, "--duration", "5"]
    assert cli.main(argv + ["--write-log", str(log)]) == 0
    starts = [ln for ln in log.read_text().splitlines() if "server_args=" in ln]
    assert len(starts) == 1
    text = starts[0].split("server_args=", 1)[1]
    assert text.startswith(form)
    cfg = config_from_argv(argv)
    if form.startswith("{"):
        assert ast.literal_eval(text) == cfg.args  # the repr of a plain dict, as resolved_dict() prints
    parsed = LineParser().parse(starts[0])
    assert parsed.record.kind == "spec_config" and parsed.record.data == flags.spec_truth(cfg.args)


@pytest.mark.parametrize("algo,version,message", [
    ("DSPARK", "0.5.12", "Unknown speculative algorithm name: DSPARK"),
    ("DSPARK", "0.5.19", "DSPARK is not simulated by mtptui"),
    ("UNO", "0.5.19", "Unknown speculative algorithm name: UNO"),
    ("UNO", "0.5.23", "UNO is not simulated by mtptui"),
])
def test_newer_algorithms_are_known_from_their_version(algo, version, message, capsys):
    code, err = run(QWEN + ["--speculative-algorithm", algo, "--sim-version", version], capsys)
    assert code == 2 and message in err


def test_version_flags_as_the_real_parsers_have_them():
    """0.5.2 brought the --speculative-draft-model alias, -revision and -attention-mode; 0.5.3 the
    ngram flags; 0.4.x has a fixed --attention-backend list (no trtllm_mha)."""
    from mtptui.sim import flags as f
    names = lambda v: {s for a in f.build_parser(v)._actions for s in a.option_strings}  # noqa: E731
    assert "--speculative-draft-model-revision" not in names("0.4.9")
    assert {"--speculative-draft-model", "--speculative-attention-mode",
            "--speculative-ngram-max-bfs-breadth"} <= names("0.5.3")
    with pytest.raises(SystemExit):
        f.build_parser("0.4.9").parse_args(["--model-path", "m", "--attention-backend", "trtllm_mha"])


@pytest.mark.parametrize("version,backend,refused", [
    ("0.5.3", "fa3", True), ("0.5.8", "fa3", False), ("0.5.12", "triton", True), ("0.5.19", "triton", False),
])
def test_paged_topk_backends_by_version(version, backend, refused):
    from mtptui.sim import flags as f
    argv = ["--model-path", "m", "--page-size", "16", "--attention-backend", backend, "--sim-version", version,
            "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "5", "--speculative-eagle-topk", "4",
            "--speculative-num-draft-tokens", "8"]
    ns = f.build_parser(version).parse_args(argv)
    if refused:
        with pytest.raises(f.ServerArgsError):
            f.resolve(ns)
    else:
        f.resolve(ns)


def test_ngram_topk_is_the_bfs_breadth():
    """0.5.3+: `speculative_eagle_topk = speculative_ngram_max_bfs_breadth` (default 10)."""
    from mtptui.sim import flags as f
    base = ["--model-path", "m", "--speculative-algorithm", "NGRAM", "--sim-version", "0.5.12"]
    assert f.resolve(f.build_parser("0.5.12").parse_args(base)).args["speculative_eagle_topk"] == 10
    four = base + ["--speculative-ngram-max-bfs-breadth", "4", "--speculative-eagle-topk", "1"]
    assert f.resolve(f.build_parser("0.5.12").parse_args(four)).args["speculative_eagle_topk"] == 4
    paged = base + ["--page-size", "16", "--attention-backend", "fa3"]
    with pytest.raises(f.ServerArgsError):
        f.resolve(f.build_parser("0.5.12").parse_args(paged))
