"""Where the server's flags are in an ExecStart argv, what they say, and a profile applied."""

import json
import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mtptui.control.launch import (
    SPEC_KEYS,
    Context,
    Launch,
    LaunchError,
    apply_profile,
    context_of,
    find_launch,
    profile_flags,
    spec_flags,
)
from mtptui.control.profiles import BUILTINS, Profile, ProfileError

SGL = "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2"
VLLM_CONFIG = '{"method": "mtp", "num_speculative_tokens": 2}'


@pytest.mark.parametrize("command,launch", [
    (SGL, Launch("sglang", 3, "python -m sglang.launch_server")),
    ("/opt/venv/bin/python3.11 -u -X faulthandler -m sglang.launch_server --tp 2",
     Launch("sglang", 6, "python -m sglang.launch_server")),
    ("python -msglang.launch_server --tp 2", Launch("sglang", 2, "python -m sglang.launch_server")),
    ("python3 -um mtptui.sim --model-path m", Launch("sglang", 3, "python -m mtptui.sim")),
    ("/usr/local/bin/sglang serve --model-path m", Launch("sglang", 2, "sglang serve")),
    ("vllm serve Qwen/Qwen3-8B -tp 2", Launch("vllm", 2, "vllm serve")),
    ("python -m vllm.entrypoints.openai.api_server --model m",
     Launch("vllm", 3, "python -m vllm.entrypoints.openai.api_server")),
    ("env -i -u HOME --unset=X -C /tmp A=1 B=x=y python3 -m sglang.launch_server",
     Launch("sglang", 12, "python -m sglang.launch_server")),
    ("/usr/bin/env - X=Y vllm serve m", Launch("vllm", 5, "vllm serve")),
    ("nice -n 5 ionice -c2 -n 7 numactl --interleave=all -N 0 --localalloc taskset -c 0-7 stdbuf -oL "
     "python3 -m sglang.launch_server", Launch("sglang", 20, "python -m sglang.launch_server")),
    ("nice -10 python3 -m sglang.launch_server", Launch("sglang", 5, "python -m sglang.launch_server")),
    ("/usr/bin/docker run --rm -it --gpus all -e A=1 --env=B=2 -v /a:/b -p8000:8000 --shm-size 32g "
     "--ipc=host --name sgl lmsysorg/sglang:v0.5.8 python3 -m sglang.launch_server --tp 8",
     Launch("sglang", 21, "docker run: python -m sglang.launch_server")),
    ("docker --host unix:///run/d.sock container run --rm lmsysorg/sglang sglang serve --tp 2",
     Launch("sglang", 9, "docker run: sglang serve")),
    ("podman run --rm --device nvidia.com/gpu=all docker.io/vllm/vllm-openai:v0.9 --model m",
     Launch("vllm", 6, "podman run: vllm image entrypoint")),
    ("docker run --rm --entrypoint python3 lmsysorg/sglang -m sglang.launch_server --tp 2",
     Launch("sglang", 8, "docker run: python -m sglang.launch_server")),
    ("docker run --rm -- lmsysorg/sglang env A=1 python3 -m sglang.launch_server",
     Launch("sglang", 10, "docker run: python -m sglang.launch_server")),
])
def test_find_launch(command, launch):
    assert find_launch(shlex.split(command)) == launch


@pytest.mark.parametrize("command,message", [
    ("/bin/bash -c 'python3 -m sglang.launch_server'", r"no SGLang or vLLM launch command in ExecStart "
                                                        r"\(it runs /bin/bash -c …\)"),
    ("python3 /opt/serve.py --tp 2", r"it runs python3 /opt/serve.py"),
    ("python3 -c 'import sglang'", "it runs python3 -c"),
    ("python3 -m http.server", "it runs python3 -m"),
    ("env -S 'python3 -m sglang.launch_server'", "env -S"),
    ("nice -n 5", "nice runs no command"),
    ("docker ps", "is not `docker run`"),
    ("docker run --rm ubuntu:22.04", "runs its own entrypoint"),
    ("docker run --frobnicate x lmsysorg/sglang python3 -m sglang.launch_server",
     "cannot tell whether it takes a value"),
    ("docker run --rm", "names no image"),
    ("", "empty ExecStart"),
])
def test_no_launch(command, message):
    with pytest.raises(LaunchError, match=message):
        find_launch(shlex.split(command))


def sglang(flags: str) -> list[str]:
    return shlex.split(f"{SGL} {flags}")


@pytest.mark.parametrize("flags,settings", [
    ("", (None, None, None, None, None)),
    ("--speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 "
     "--speculative-num-draft-tokens 4", ("NEXTN", 3, 1, 4, None)),
    ("--speculative-algorithm=EAGLE3 --speculative-num-steps=5 --speculative-eagle-topk=8 "
     "--speculative-num-draft-tokens=32 --speculative-draft-model-path=/m/draft", ("EAGLE3", 5, 8, 32, "/m/draft")),
    ("--speculative-algorithm STANDALONE --speculative-draft-model Qwen/Qwen3-0.6B",
     ("STANDALONE", None, None, None, "Qwen/Qwen3-0.6B")),
    ("--speculative-algo NEXTN --speculative-eagle 1", ("NEXTN", None, 1, None, None)),  # argparse prefixes
    ("--speculative-num-steps 2 --speculative-num-steps 4", (None, 4, None, None, None)),  # last wins
    ("--speculative-num 2", (None, None, None, None, None)),  # ambiguous: SGLang refuses it
])
def test_spec_flags_sglang(flags, settings):
    keys = ("algorithm", "num_steps", "topk", "num_draft_tokens", "draft_model_path")
    assert spec_flags(sglang(flags)) == {**dict.fromkeys(SPEC_KEYS), **dict(zip(keys, settings))}


@pytest.mark.parametrize("argv,settings", [
    (["vllm", "serve", "m", "--speculative-config", VLLM_CONFIG], ("NEXTN", 2, None)),
    (["vllm", "serve", "m", '--speculative_config={"method":"eagle3","model":"d","num_speculative_tokens":3}'],
     ("EAGLE3", 3, "d")),
    (["vllm", "serve", "m", "--speculative-config.method", "ngram", "--speculative-config.num_speculative_tokens",
      "4"], ("NGRAM", 4, None)),
    (["vllm", "serve", "m", "--speculative-config", '{"method":"deepseek_mtp","num_speculative_tokens":1}'],
     ("NEXTN", 1, None)),
    (["vllm", "serve", "m", "--speculative-config", '{"model":"small","num_speculative_tokens":5}'],
     ("STANDALONE", 5, "small")),
    (["vllm", "serve", "m"], (None, None, None)),
])
def test_spec_flags_vllm(argv, settings):
    got = spec_flags(argv)
    assert (got["algorithm"], got["num_steps"], got["draft_model_path"]) == settings
    assert got["topk"] is None and got["num_draft_tokens"] is None


@pytest.mark.parametrize("argv,message", [
    (sglang("--speculative-num-steps three"), "--speculative-num-steps 'three' is not a whole number"),
    (sglang("--speculative-eagle-topk"), "--speculative-eagle-topk None is not a whole number"),
    (["vllm", "serve", "m", "--speculative-config", "{method: mtp}"], "is not JSON"),
    (["vllm", "serve", "m", "--speculative-config", "[1]"], "is not a JSON object"),
])
def test_spec_flags_errors(argv, message):
    with pytest.raises(LaunchError, match=message):
        spec_flags(argv)


def test_context_of():
    assert context_of(sglang("--dp 2 --enable-dp-attention --page-size 16 --attention-backend fa3 "
                             "--decode-attention-backend trtllm_mha")) == Context(
        model_path="Qwen/Qwen3-8B", tp=2, dp=2, enable_dp_attention=True, page_size=16,
        attention_backend="fa3", decode_attention_backend="trtllm_mha",
        flags_on=frozenset({"--enable-dp-attention"}))
    assert context_of(shlex.split("python3 -m mtptui.sim --model m --tp-size=4 --dp-size=4")) == Context(
        model_path="m", tp=4, dp=4)
    assert context_of(["vllm", "serve", "Qwen/Q", "-tp", "4", "--data_parallel_size", "2"]) == Context(
        model_path="Qwen/Q", tp=4, dp=2)
    assert context_of(shlex.split("python -m vllm.entrypoints.openai.api_server --model x")).model_path == "x"
    with pytest.raises(LaunchError, match="--page-size 'big'"):
        context_of(sglang("--page-size big"))


MTP3 = ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4"]


def test_apply_profile_sglang():
    argv = sglang("--speculative-algorithm EAGLE --speculative-num-steps=5 --enable-metrics "
                  "--speculative-eagle-topk 4 --speculative-draft-model-path /d --speculative-accept-threshold-single 0.9 "
                  "--speculative-num-draft-tokens=8 --port 30000")
    base = sglang("--enable-metrics --port 30000")
    assert apply_profile(argv, BUILTINS["mtp3"]) == base + MTP3
    assert apply_profile(argv, BUILTINS["off"]) == base
    p = Profile("eagle", algorithm="EAGLE3", num_steps=5, topk=8, num_draft_tokens=32,
                draft_model_path="/models/eagle3 draft", extra_args=("--max-running-requests", "64"))
    assert apply_profile(base, p)[len(base):] == [
        "--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "5", "--speculative-eagle-topk", "8",
        "--speculative-num-draft-tokens", "32", "--speculative-draft-model-path", "/models/eagle3 draft",
        "--max-running-requests", "64"]
    auto = Profile("auto", algorithm="NEXTN")
    assert apply_profile(base, auto) == base + ["--speculative-algorithm", "NEXTN"]


def test_apply_profile_vllm():
    argv = ["vllm", "serve", "m", "--speculative-config", VLLM_CONFIG, "-tp", "2",
            "--speculative_model", "old", "--num-speculative-tokens", "3"]
    assert apply_profile(argv, BUILTINS["off"]) == ["vllm", "serve", "m", "-tp", "2"]
    got = apply_profile(argv, BUILTINS["mtp3"])
    assert got[:5] == ["vllm", "serve", "m", "-tp", "2"]
    assert got[5] == "--speculative-config"
    assert json.loads(got[6]) == {"method": "mtp", "num_speculative_tokens": 3}
    assert got[6] == '{"method":"mtp","num_speculative_tokens":3}'
    eagle = Profile("e", algorithm="EAGLE", num_steps=2, draft_model_path="yuhuili/EAGLE-LLaMA3")
    assert json.loads(apply_profile(argv, eagle)[-1]) == {
        "method": "eagle", "num_speculative_tokens": 2, "model": "yuhuili/EAGLE-LLaMA3"}
    with pytest.raises(ProfileError, match="vLLM has no speculative method for DFLASH"):
        profile_flags(Profile("d", algorithm="DFLASH"), "vllm")


def test_off_drops_the_vllm_flags_that_need_speculation():
    # vLLM 0.32.0 refuses to start with --per-request-spec-decode-metrics and no speculative
    # config (vllm/config/vllm.py: "--per-request-spec-decode-metrics requires speculative
    # decoding to be enabled"); found by the engine tier when `spec HOST off` was rolled back
    argv = ["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "m",
            "--per-request-spec-decode-metrics", "summary", "--speculative-config", VLLM_CONFIG]
    assert apply_profile(argv, BUILTINS["off"]) == argv[:5]
    ngram = Profile("n", algorithm="NGRAM", num_steps=1)
    assert apply_profile(argv, ngram)[:7] == argv[:7]  # kept while speculation stays on


def test_a_vllm_retune_keeps_the_operators_keys_of_the_same_method():
    # the engine tier's unit: ngram with its own lookup bounds; mtptui's ngram1 changes only K
    # (vLLM 0.32 falls back to prompt_lookup 5/5 without a word when the keys go)
    argv = ["vllm", "serve", "m", "--speculative-config",
            '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4,"prompt_lookup_min":2}']
    got = json.loads(apply_profile(argv, Profile("ngram1", algorithm="NGRAM", num_steps=1))[-1])
    assert got == {"method": "ngram", "num_speculative_tokens": 1, "prompt_lookup_max": 4, "prompt_lookup_min": 2}
    eagle = Profile("e", algorithm="EAGLE3", num_steps=2, draft_model_path="d")
    assert json.loads(apply_profile(argv, eagle)[-1]) == {"method": "eagle3", "num_speculative_tokens": 2,
                                                            "model": "d"}  # another method: none of ngram's
    bad = ["vllm", "serve", "m", "--speculative-config", "{not json"]
    assert apply_profile(bad, BUILTINS["off"]) == bad[:3]


def test_apply_profile_inside_docker_and_image_entrypoint():
    # docker's own options are not the server's: only words after the launch command change
    argv = shlex.split("docker run --rm --speculative-future-option=1 -e SPEC=--speculative-algorithm "
                       "lmsysorg/sglang python3 -m sglang.launch_server --tp 2 --speculative-algorithm NEXTN")
    assert apply_profile(argv, BUILTINS["off"]) == argv[:-2]
    assert apply_profile(argv, BUILTINS["mtp3"]) == argv[:-2] + MTP3
    image = ["podman", "run", "vllm/vllm-openai", "--model", "m"]
    assert apply_profile(image, BUILTINS["mtp1"])[:5] == image


words = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@given(st.lists(words, max_size=8), st.sampled_from(sorted(BUILTINS)))
def test_apply_profile_keeps_other_words(extra, name):
    """Non-speculative words survive byte for byte and in order, whatever they hold."""
    plain = [w for w in extra if not w.startswith("-")]
    argv = [*shlex.split(SGL), *[x for w in plain for x in ("--served-model-name", w)]]
    with_spec = argv + MTP3
    got = apply_profile(with_spec, BUILTINS[name])
    assert got[:len(argv)] == argv
    assert got[len(argv):] == profile_flags(BUILTINS[name], "sglang")
    assert spec_flags(got)["num_steps"] == BUILTINS[name].num_steps


def test_flag_reader_knows_the_versions_abbreviations():
    """argparse takes a unique prefix: on 0.4.3-0.5.1 `--speculative-draft X` is the draft model
    path (so `]` keeps it); from 0.5.2 it is ambiguous (-model, -model-path, -model-revision)."""
    argv = sglang("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
                  "--speculative-num-draft-tokens 4 --speculative-draft /models/draft")
    assert spec_flags(argv, "0.4.9")["draft_model_path"] == "/models/draft"
    assert spec_flags(argv, "0.5.1")["draft_model_path"] == "/models/draft"
    assert spec_flags(argv, "0.5.2")["draft_model_path"] is None
    assert spec_flags(argv, None)["draft_model_path"] is None
    assert spec_flags(sglang("--speculative-draft-model d"), "0.5.2")["draft_model_path"] == "d"
    from mtptui.control.profiles import step
    assert step(spec_flags(argv, "0.4.9"), +1).draft_model_path == "/models/draft"


def test_old_vllm_flags_before_0_8_2():
    argv = ["vllm", "serve", "m", "--speculative-model", "old", "--num-speculative-tokens", "3"]
    assert spec_flags(argv)["draft_model_path"] == "old" and spec_flags(argv)["num_steps"] == 3
    eagle = Profile("e", algorithm="EAGLE", num_steps=2, draft_model_path="d")
    assert apply_profile(argv, eagle, "0.8.1")[3:] == ["--speculative-model", "d", "--num-speculative-tokens", "2"]
    ngram = apply_profile(argv, Profile("n", algorithm="NGRAM", num_steps=4), "0.8.1")
    assert ngram[3:5] == ["--speculative-model", "[ngram]"] and spec_flags(ngram)["algorithm"] == "NGRAM"
    with pytest.raises(ProfileError, match="before 0.8.2"):
        apply_profile(argv, BUILTINS["mtp3"], "0.8.1")
    assert json.loads(apply_profile(argv, BUILTINS["mtp3"], "0.10.2")[-1])["method"] == "deepseek_mtp"
    assert spec_flags(["vllm", "serve", "m", "--speculative-config", '{"method":"deepseek_mtp"}'])["algorithm"] == "NEXTN"


def test_vllm_short_spellings_are_read_and_replaced():
    # vLLM 0.19+ -sc; 0.22+ --spec-method/--spec-model/--spec-tokens, refused beside the same key
    # in --speculative-config (vllm/engine/arg_utils.py, "mutually exclusive"): a profile replaces them
    short = ["vllm", "serve", "m", "--spec-method", "eagle", "--spec-model", "d", "--spec-tokens", "3"]
    assert spec_flags(short)["algorithm"] == "EAGLE" and spec_flags(short)["draft_model_path"] == "d"
    assert spec_flags(["vllm", "serve", "m", "-sc", '{"method": "ngram", "num_speculative_tokens": 4}'])["num_steps"] == 4
    out = apply_profile(short + ["-sc", "{}"], BUILTINS["off"])
    assert out == ["vllm", "serve", "m"]
