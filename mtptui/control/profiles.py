"""Whether a server accepts a speculation profile (config/profile.py: the profiles themselves),
by its engine's and version's rules, and how each engine and version spells them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mtptui.config.profile import BUILTINS, Profile, mtp_profile

if TYPE_CHECKING:
    from mtptui.control.launch import Context


class ProfileError(ValueError):
    """A profile that SGLang (or vLLM) would refuse, said in one line."""


# vLLM's --speculative-config method for each algorithm name (MTP is vLLM's own word for NEXTN),
# as the newest vLLM spells it; `vllm_method` gives a version's spelling.
VLLM_METHODS = {"NEXTN": "mtp", "MTP": "mtp", "EAGLE": "eagle", "EAGLE3": "eagle3", "NGRAM": "ngram",
                "STANDALONE": "draft_model"}
_EAGLE_FAMILY = ("NEXTN", "EAGLE", "EAGLE3", "STANDALONE")
# SGLang logs NEXTN as EAGLE; with a Gemma 4 assistant draft (0.5.12+) both become FROZEN_KV_MTP.
_SAME = {"NEXTN": "EAGLE", "FROZEN_KV_MTP": "EAGLE", "MTP": "EAGLE"}
# topk > 1 with page size > 1 works on these attention backends only (SGLang 0.5.23's list).
PAGED_TOPK_BACKENDS = ("flashinfer", "fa3", "triton")

# --- the rules by version, read from each release's server_args.py (and, from 0.5.17,
# arg_groups/speculative_hook.py); tests/realcode runs those files and holds these to them ----
Version = tuple  # (0, 5, 12); None: unknown, and the newest rules apply
NEWEST_SGLANG = (0, 5, 23)
NEWEST_VLLM = (0, 33, 0)
# --speculative-algorithm's choices: the first version that has each algorithm. Up to 0.5.11 the
# choices are case-sensitive (argparse `choices=`); from 0.5.12 any name, upper-cased by SGLang.
SGLANG_ALGORITHMS = {"EAGLE": (0, 0), "NEXTN": (0, 4, 4), "EAGLE3": (0, 4, 5), "STANDALONE": (0, 5, 2),
                     "NGRAM": (0, 5, 3), "DFLASH": (0, 5, 11)}
_SGLANG_FREE_CHOICE = (0, 5, 12)
NGRAM_MAX_BFS_BREADTH = 10  # --speculative-ngram-max-bfs-breadth's default (0.5.3+): NGRAM's topk
# Speculation that adapts inside the engine: SGLang's --speculative-adaptive (0.5.11+), and vLLM's
# num_speculative_tokens_per_batch_size in --speculative-config (0.24.0+)
SGLANG_ADAPTIVE = (0, 5, 11)
VLLM_SCHEDULE = (0, 24, 0)
VLLM_SCHEDULE_DP_OFF = (0, 26, 0)  # from here vLLM drops a schedule with data parallel > 1
# What makes SGLang fall back to static steps with --speculative-adaptive (a warning,
# "speculative_adaptive disabled: <reason>. Falling back to static speculative params."; its
# adaptive_unsupported_reason, srt/speculative/adaptive_spec_params.py, 0.5.11-0.5.23): these
# flags, an algorithm other than EAGLE/EAGLE3 (NEXTN is EAGLE by then) and topk other than 1
# 0.5.11 adapts on spec v1 only, which its overlap scheduler replaces unless this is given (or
# SGLANG_ENABLE_SPEC_V2 is false); 0.5.12 adapts on spec v2 too
SGLANG_SPEC_V1_FLAG = "--disable-overlap-schedule"
SGLANG_ADAPTIVE_V2 = (0, 5, 12)
SGLANG_ADAPTIVE_OFF_FLAGS = {"--enable-dp-attention": "DP attention", "--enable-two-batch-overlap": "two-batch overlap",
                             "--enable-pdmux": "PD multiplexing", "--enable-multi-layer-eagle": "multi-layer EAGLE"}


def known_version(version: Version | str | None, engine: str = "sglang") -> tuple[Version, bool]:
    """(the version whose rules apply, whether it was known): unknown is the newest."""
    if isinstance(version, str):
        from mtptui.control.version import vtuple
        version = vtuple(version) or None
    if not version:
        return (NEWEST_VLLM if engine == "vllm" else NEWEST_SGLANG), False
    return tuple(version), True


def version_text(version: Version) -> str:
    return ".".join(str(n) for n in version)


def sglang_algorithms(version: Version | None) -> tuple[str, ...]:
    v, _ = known_version(version)
    return tuple(a for a, since in SGLANG_ALGORITHMS.items() if v >= since)


def sglang_paged_topk_backends(version: Version | None) -> tuple[str, ...] | None:
    """The attention backends that may run topk > 1 with page size > 1: None where the version
    has no such rule (0.4.9-0.5.1 allow it everywhere; 0.4.5-0.4.8 silently set topk 1)."""
    v, _ = known_version(version)
    if v < (0, 5, 2):
        return None
    if v < (0, 5, 6):
        return ("flashinfer",)
    if v < (0, 5, 13):
        return ("flashinfer", "fa3")
    return PAGED_TOPK_BACKENDS


def _silently_chains(version: Version) -> bool:
    """0.4.5-0.4.8: page size > 1 sets topk 1 (`speculative_eagle_topk is adjusted to 1`)."""
    return (0, 4, 5) <= version < (0, 4, 9)


def effective(flags: Mapping[str, object], ctx: Context, engine: str = "sglang") -> dict:
    """The speculation settings the server will actually run for flags (as `launch.spec_flags`
    gives them) on ctx's version: what verify is to expect. SGLang changes some counts itself:
    NGRAM's topk is --speculative-ngram-max-bfs-breadth (0.5.3+), 0.4.5-0.4.8 chain with page size
    > 1, and with topk 1 draft tokens are steps + 1."""
    out = dict(flags)
    algo = str(out.get("algorithm") or "").upper()
    if engine != "sglang" or not algo:
        return out
    v, _ = known_version(ctx.version)
    if v >= SGLANG_ADAPTIVE:  # the field is there: absent is off
        out["adaptive"] = bool(out.get("adaptive"))
    if algo == "NGRAM" and v >= (0, 5, 3):
        out["topk"] = ctx.ngram_max_bfs_breadth or NGRAM_MAX_BFS_BREADTH
        return out
    steps, topk = out.get("num_steps"), out.get("topk")
    if algo not in _EAGLE_FAMILY or not isinstance(steps, int) or not isinstance(topk, int):
        return out
    if _silently_chains(v) and (ctx.page_size or 1) > 1 and topk > 1:
        out["topk"] = topk = 1
    if topk == 1 and v >= (0, 4, 6):  # 0.4.5 keeps the draft tokens as given
        out["num_draft_tokens"] = steps + 1
    return out


def vllm_method(algorithm: str, version: Version | str | None) -> str:
    """vLLM's spelling of the method for algorithm on that version, or ProfileError: 0.9.0-0.10.x
    call MTP deepseek_mtp (0.11.0 brought "mtp"), and there is none before 0.9.0; eagle3 from
    0.9.1; 0.10.0-0.14.1 refuse draft_model; before 0.8.2 there is no --speculative-config at
    all (`profile_flags` writes the old --speculative-model then)."""
    v, _ = known_version(version, "vllm")
    algo = algorithm.upper()
    if algo not in VLLM_METHODS:
        raise ProfileError(f"vLLM has no speculative method for {algorithm} "
                           f"(it knows {', '.join(VLLM_METHODS)})")
    if algo in ("NEXTN", "MTP"):
        if v < (0, 9, 0):
            raise ProfileError(f"vLLM {version_text(v)} has no MTP method (deepseek_mtp came in 0.9.0)")
        return "deepseek_mtp" if v < (0, 11, 0) else "mtp"
    if algo == "EAGLE3" and v < (0, 9, 1):
        raise ProfileError(f"vLLM {version_text(v)} has no eagle3 method (it came in 0.9.1)")
    if algo == "STANDALONE" and (0, 10, 0) <= v < (0, 15, 0):
        raise ProfileError(f"vLLM {version_text(v)} refuses the draft_model method (0.10.0-0.14.1: "
                           "\"Speculative decoding with draft model is not supported yet.\")")
    return VLLM_METHODS[algo]


def vllm_algorithm(method: str) -> str:
    """The algorithm name for a vLLM method: every `*_mtp` (deepseek_mtp, qwen3_next_mtp, ...) and
    "mtp" are NEXTN."""
    m = method.lower()
    if m == "mtp" or m.endswith("_mtp"):
        return "NEXTN"
    by_method = {meth: a for a, meth in VLLM_METHODS.items() if a != "MTP"}
    return by_method.get(m, method.upper())


def resolve(name: str, user_profiles: Mapping[str, Profile]) -> Profile:
    """The profile called name: the user's `[profiles.NAME]` first, then the built-ins."""
    known = {**BUILTINS, **user_profiles}
    if name not in known:
        raise ProfileError(f"unknown profile {name!r} (known: {', '.join(known)})")
    return known[name]


def check_profile(profile: Profile, ctx: Context, engine: str) -> None:
    """Raises ProfileError when the server would refuse the profile at start (SGLang's own checks
    in ServerArgs, or what vLLM's --speculative-config cannot say), before anything is touched.
    The rules are those of ctx.version (the server's; None: the newest, SGLang 0.5.23).

    One rule is stricter than SGLang: with topk 1 it silently changes the draft tokens to
    steps + 1, so a profile asking for anything else would never show what it asked for. Counts
    below 1 are refused for every algorithm. Rules that depend on what only the server knows (the
    model's architecture, the attention backend it picks itself) are left to the server."""
    p = profile
    counts = {"num_steps": p.num_steps, "topk": p.topk, "num_draft_tokens": p.num_draft_tokens}
    if not p.on:
        _check_off(p, counts)
        return
    for key, value in counts.items():
        if value is not None and value < 1:
            raise ProfileError(f"profile {p.name}: {key} must be at least 1, not {value}")
    assert p.algorithm is not None  # an off profile was checked above
    algo = p.algorithm.upper()
    if engine == "vllm":
        _check_vllm(p, algo, ctx.version)
        _check_vllm_schedule(p, ctx)
        return
    version, known = known_version(ctx.version)
    said = f"SGLang {version_text(version)}" + ("" if known else " (version unknown: its rules)")
    _check_sglang_algorithm(p, algo, ctx, version, said)
    _check_sglang_adaptive(p, algo, ctx, version, said)
    if algo == "DFLASH":
        _check_dflash(p, ctx, version, said)
    elif algo == "NGRAM":
        _check_ngram(p, ctx, version)
    elif algo in _EAGLE_FAMILY:
        given = [k for k, v in counts.items() if v is not None]
        if given and len(given) < 3:
            raise ProfileError(f"profile {p.name}: num_steps, topk and num_draft_tokens go together, "
                               f"give all three or none (it gives {', '.join(given)})")
        if given:
            _check_eagle_counts(p, ctx, version, said)
        else:
            _check_eagle_auto(p, ctx, version)


def _check_off(p: Profile, counts: dict[str, int | None]) -> None:
    """A profile without an algorithm: any count or draft model it sets would be ignored."""
    given = [k for k, v in {**counts, "draft_model_path": p.draft_model_path, "adaptive": p.adaptive or None,
                            "adaptive_config": p.adaptive_config, "schedule": p.schedule or None}.items()
             if v is not None]
    if given:
        raise ProfileError(f"profile {p.name} sets {', '.join(given)} but no algorithm")


def _check_sglang_algorithm(p: Profile, algo: str, ctx: Context, version: Version, said: str) -> None:
    """The algorithm as such: one the version's choices know (up to 0.5.11, whose choices are
    fixed; from 0.5.12 SGLang takes any name and judges it itself), and not NGRAM or STANDALONE
    with DP attention."""
    algorithms = sglang_algorithms(version)
    if version < _SGLANG_FREE_CHOICE and algo not in algorithms:
        raise ProfileError(f"profile {p.name}: {said} has no speculative algorithm {p.algorithm} "
                           f"(it knows {', '.join(algorithms)})")
    if algo in ("NGRAM", "STANDALONE") and ctx.enable_dp_attention:
        raise ProfileError(f"profile {p.name}: SGLang refuses {algo} with DP attention "
                           f"(\"Currently {algo.lower()} speculative decoding does not support dp "
                           "attention.\")")


def _check_sglang_adaptive(p: Profile, algo: str, ctx: Context, version: Version, said: str) -> None:
    """--speculative-adaptive: a flag of 0.5.11+ (argparse refuses it before); with anything that
    makes SGLang fall back to static steps (SGLANG_ADAPTIVE_OFF_FLAGS, another algorithm, topk
    other than 1, or counts SGLang picks for the model) mtptui refuses it, as it refuses counts
    SGLang would silently change: the run would never show what was asked."""
    if p.schedule:
        raise ProfileError(f"profile {p.name}: schedule is vLLM's (num_speculative_tokens_per_batch_size); "
                           "SGLang adapts by itself with adaptive = true")
    if p.adaptive_config and not p.adaptive:
        raise ProfileError(f"profile {p.name}: adaptive_config without adaptive = true: SGLang reads "
                           "--speculative-adaptive-config only with --speculative-adaptive")
    if not p.adaptive:
        return
    if version < SGLANG_ADAPTIVE:
        raise ProfileError(f"profile {p.name}: {said} has no --speculative-adaptive (it came in "
                           f"{version_text(SGLANG_ADAPTIVE)})")
    why = adaptive_off_reason(algo, p.topk, ctx.flags_on)
    if why is None and version < SGLANG_ADAPTIVE_V2 and not _spec_v1(p, ctx):
        why = (f"{said} adapts only without its overlap scheduler (spec v2): add {SGLANG_SPEC_V1_FLAG} "
               "to the profile's extra_args")
    if why is None and p.num_steps is None:
        why = "SGLang picks the counts for the model itself (topk 4 for some): give num_steps, topk 1 and " \
              "num_draft_tokens"
    if why:
        raise ProfileError(f"profile {p.name}: SGLang would fall back to static steps with "
                           f"--speculative-adaptive: {why}")


def _spec_v1(p: Profile, ctx: Context) -> bool:
    """Whether the run uses spec v1 on 0.5.11: the overlap scheduler off, by flag or environment."""
    if SGLANG_SPEC_V1_FLAG in ctx.flags_on or SGLANG_SPEC_V1_FLAG in p.extra_args:
        return True
    return any(k == "SGLANG_ENABLE_SPEC_V2" and v.strip().lower() in ("0", "false", "no", "off") for k, v in p.env)


def adaptive_off_reason(algo: str | None, topk: object, flags: frozenset[str] | tuple[str, ...]) -> str | None:
    """Why SGLang runs --speculative-adaptive as static steps for these settings (its
    adaptive_unsupported_reason, as far as the flags tell), or None."""
    if _SAME.get((algo or "").upper(), (algo or "").upper()) not in ("EAGLE", "EAGLE3"):
        return f"{algo or 'no algorithm'} (only EAGLE, EAGLE3 and NEXTN adapt)"
    if topk not in (None, 1):
        return f"topk {topk} (only topk 1 adapts)"
    for flag, what in SGLANG_ADAPTIVE_OFF_FLAGS.items():
        if flag in flags:
            return f"{what} ({flag})"
    return None


def _paged_topk_refused(ctx: Context, version: Version) -> tuple[str, ...] | None:
    """Where SGLang refuses topk > 1 here, the backends it would run it on; else None. It refuses
    page size > 1 on a backend outside the version's list (one SGLang picks itself, none given,
    is not judged)."""
    allowed = sglang_paged_topk_backends(version)
    if allowed is not None and (ctx.page_size or 1) > 1 and ctx.attention_backend is not None \
            and ctx.attention_backend not in allowed:
        return allowed
    return None


def _check_eagle_auto(p: Profile, ctx: Context, version: Version) -> None:
    """An EAGLE-family profile without counts: SGLang chooses all three for the model (topk 4 for
    Llama and others), then applies the rules of _check_eagle_counts; where one would refuse a
    topk > 1, mtptui asks for the counts instead."""
    backends = (ctx.attention_backend, ctx.decode_attention_backend, ctx.prefill_attention_backend)
    paged = _paged_topk_refused(ctx, version) is not None
    if paged or ("trtllm_mha" in backends and version >= (0, 5, 0)):
        raise ProfileError(f"profile {p.name}: SGLang picks the counts for the model itself, and "
                           f"with {'page size ' + str(ctx.page_size) + ' on ' if paged else ''}"
                           f"{ctx.attention_backend if paged else 'trtllm_mha'} it refuses topk > 1: "
                           "give num_steps, topk and num_draft_tokens")


def _check_eagle_counts(p: Profile, ctx: Context, version: Version, said: str) -> None:
    """An EAGLE-family profile that gives all three counts."""
    steps, topk, draft = p.num_steps, p.topk, p.num_draft_tokens
    assert steps is not None and topk is not None and draft is not None  # all three given: the caller's case
    backends = (ctx.attention_backend, ctx.decode_attention_backend, ctx.prefill_attention_backend)
    if topk > 1 and "trtllm_mha" in backends:
        raise ProfileError(f"profile {p.name}: the trtllm_mha attention backend needs topk 1 "
                           f"(SGLang: \"trtllm_mha backend only supports topk = 1 for speculative "
                           "decoding.\")")
    if topk == 1 and draft != steps + 1:
        raise ProfileError(f"profile {p.name}: with topk 1, draft tokens must be steps + 1 (SGLang "
                           f"would silently change {draft} to {steps + 1})")
    allowed = _paged_topk_refused(ctx, version)
    if topk > 1 and allowed is not None:
        raise ProfileError(f"profile {p.name}: topk {topk} with page size {ctx.page_size} works only "
                           f"on the {', '.join(allowed)} attention backends, not "
                           f"{ctx.attention_backend}, on {said} (SGLang: \"speculative_eagle_topk > 1 "
                           "with page_size > 1 is unstable\")")


def _check_dflash(p: Profile, ctx: Context, version: Version, said: str) -> None:
    if not p.draft_model_path:
        raise ProfileError(f"profile {p.name}: DFLASH needs draft_model_path (SGLang: \"DFLASH "
                           "speculative decoding requires setting --speculative-draft-model-path.\")")
    if ctx.enable_dp_attention:
        if version < (0, 5, 23):
            raise ProfileError(f"profile {p.name}: {said} refuses DFLASH with DP attention "
                               "(\"Currently dflash speculative decoding does not support dp "
                               "attention.\"; 0.5.23 allows it with --enable-dp-lm-head)")
        if not ctx.enable_dp_lm_head:
            raise ProfileError(f"profile {p.name}: DFLASH with DP attention needs --enable-dp-lm-head "
                               "(SGLang: \"DFLASH with dp attention requires --enable-dp-lm-head.\")")
    for key in ("num_steps", "topk"):
        value = getattr(p, key)
        if value not in (None, 1):
            raise ProfileError(f"profile {p.name}: DFLASH runs with {key} 1 (SGLang would "
                               f"silently change {value} to 1)")


def _check_ngram(p: Profile, ctx: Context, version: Version) -> None:
    """NGRAM's topk is --speculative-ngram-max-bfs-breadth (default 10): a profile's topk other
    than that would be silently changed (mtptui refuses it, as for chains); with it above 1 and
    page size > 1 SGLang wants flashinfer."""
    breadth = ngram_breadth(p.extra_args) or NGRAM_MAX_BFS_BREADTH
    if p.topk is not None and p.topk != breadth:
        raise ProfileError(f"profile {p.name}: NGRAM's topk is --speculative-ngram-max-bfs-breadth "
                           f"({breadth}); SGLang would silently change {p.topk} to {breadth}")
    if breadth > 1 and (ctx.page_size or 1) > 1 and ctx.attention_backend is not None \
            and ctx.attention_backend != "flashinfer":
        raise ProfileError(f"profile {p.name}: NGRAM (topk {breadth}) with page size {ctx.page_size} "
                           f"works only on the flashinfer attention backend, not {ctx.attention_backend} "
                           "(SGLang: \"This combination is only supported for the 'flashinfer' "
                           "backend.\")")


def ngram_breadth(args: tuple[str, ...] | list[str]) -> int | None:
    """--speculative-ngram-max-bfs-breadth's value among args (the last one), or None."""
    out = None
    flag = "--speculative-ngram-max-bfs-breadth"
    for i, a in enumerate(args):
        value = a.split("=", 1)[1] if a.startswith(flag + "=") else (
            args[i + 1] if a == flag and i + 1 < len(args) else None)
        if value is not None:
            try:
                out = int(value)
            except ValueError:
                raise ProfileError(f"{flag} {value!r} is not a whole number") from None
    return out


def _check_vllm(p: Profile, algo: str, version: Version | None = None) -> None:
    try:
        vllm_method(algo, version)
    except ProfileError as e:
        raise ProfileError(f"profile {p.name}: {e}") from None
    if p.topk not in (None, 1):
        raise ProfileError(f"profile {p.name}: vLLM's --speculative-config has no topk "
                           f"({p.topk}); it drafts one chain")
    if p.num_draft_tokens is not None and p.num_steps is not None \
            and p.num_draft_tokens != p.num_steps + 1:
        raise ProfileError(f"profile {p.name}: vLLM drafts num_steps tokens per step; "
                           "num_draft_tokens other than steps + 1 cannot be said to it")
    if algo in ("EAGLE", "EAGLE3", "STANDALONE") and not p.draft_model_path:
        raise ProfileError(f"profile {p.name}: vLLM needs draft_model_path for {algo}")
    v, _ = known_version(version, "vllm")
    if algo == "EAGLE" and v < (0, 8, 5) and "eagle-" not in (p.draft_model_path or "").lower():
        # before 0.8.5 the method is what the draft's name says: EAGLE only with "eagle-" in it
        raise ProfileError(f"profile {p.name}: vLLM {version_text(v)} runs {p.draft_model_path} as a plain "
                           "draft model, not EAGLE: before 0.8.5 it takes a draft for EAGLE only when "
                           "its name has \"eagle-\" in it")
    if algo == "NGRAM" and v < (0, 8, 2) and not any(
            a.split("=", 1)[0].replace("_", "-") == "--ngram-prompt-lookup-max" for a in p.extra_args):
        raise ProfileError(f"profile {p.name}: vLLM {version_text(v)} refuses [ngram] without "
                           "--ngram-prompt-lookup-max (\"ngram_prompt_lookup_max=None must be > 0\"): "
                           "give it in the profile's extra_args")


def _check_vllm_schedule(p: Profile, ctx: Context) -> None:
    """vLLM's Dynamic SD, num_speculative_tokens_per_batch_size: on 0.24.0+, with the rules of its
    validate_and_normalize_dynamic_sd_schedule (vllm 0.32.0 v1/spec_decode/dynamic/utils.py:
    ranges of positive batch sizes, start <= end, K >= 0, none overlapping, the first from 1).
    Stricter than vLLM where it changes the run unasked: a K above num_speculative_tokens (vLLM
    clamps it), and data parallel above 1 (vLLM drops the schedule for static steps,
    VllmConfig._maybe_disable_dynamic_sd_for_data_parallel)."""
    if p.adaptive or p.adaptive_config:
        raise ProfileError(f"profile {p.name}: vLLM adapts by a schedule (schedule = [[first batch size, "
                           "last, K], ...]), not adaptive/adaptive_config (SGLang's)")
    if not p.schedule:
        return
    v, known = known_version(ctx.version, "vllm")
    if v < VLLM_SCHEDULE:
        raise ProfileError(f"profile {p.name}: vLLM {version_text(v)} has no num_speculative_tokens_per_batch_size "
                           f"(Dynamic SD came in {version_text(VLLM_SCHEDULE)}): it would run static steps")
    if not p.num_steps:
        raise ProfileError(f"profile {p.name}: a schedule needs num_steps (vLLM's num_speculative_tokens, "
                           "the most any range drafts)")
    end = 0
    for start, last, k in sorted(p.schedule):
        if start <= 0 or last < start:
            raise ProfileError(f"profile {p.name}: schedule range {start}-{last} is not a range of batch sizes "
                               "(vLLM: \"Batch-size range start must be <= end\", both positive)")
        if start <= end:
            raise ProfileError(f"profile {p.name}: schedule ranges overlap at {start} (vLLM: \"Batch-size "
                               "ranges must be non-overlapping and sorted.\")")
        if k > p.num_steps:
            raise ProfileError(f"profile {p.name}: schedule K {k} for {start}-{last} is above num_steps "
                               f"{p.num_steps}; vLLM would silently change it to {p.num_steps}")
        end = last
    if min(p.schedule)[0] != 1:
        raise ProfileError(f"profile {p.name}: the schedule's first range must start at batch size 1 (vLLM: "
                           "\"The first batch-size range must start at 1\")")
    if ctx.dp > 1 and v >= VLLM_SCHEDULE_DP_OFF:
        raise ProfileError(f"profile {p.name}: vLLM drops the schedule with data parallel {ctx.dp} and runs "
                           f"static num_speculative_tokens {p.num_steps} (\"Dynamic speculative decoding is "
                           "not supported with data parallelism\")")
    if ctx.dp > 1:
        raise ProfileError(f"profile {p.name}: vLLM {version_text(v)} runs the schedule with data parallel "
                           f"{ctx.dp}, where its ranks may pick different K and deadlock (0.26.0 drops it there)")


def step(current: Mapping[str, object], delta: int) -> Profile:
    """The profile one draft step fewer (delta -1) or more (+1) than the current settings (keys as
    `launch.spec_flags` or the server_args reader give them), for the `[` and `]` keys. Chains
    only (topk 1): steps ± 1 with draft tokens = steps + 1, algorithm and draft model kept."""
    algo = current.get("algorithm")
    if not algo:
        raise ProfileError("speculation is off: `s` turns it on, `p` picks a profile")
    algo = str(algo)
    steps, topk = current.get("num_steps"), current.get("topk")
    if algo.upper() not in _EAGLE_FAMILY:
        raise ProfileError(f"{algo} has no draft steps to change: `p` picks a profile")
    if not isinstance(steps, int):
        raise ProfileError("the server chooses the draft steps here: `p` picks a profile")
    if topk not in (None, 1):
        raise ProfileError(f"`[` and `]` change chains (topk 1), this is topk {topk}: `p` picks a profile")
    n = steps + delta
    if n < 1:
        raise ProfileError("already at 1 step; `s` turns speculation off")
    path = current.get("draft_model_path")
    if algo.upper() == "NEXTN" and not path:
        return BUILTINS.get(f"mtp{n}", mtp_profile(n))
    return Profile(f"{algo.lower()}{n}", algorithm=algo, num_steps=n, topk=1, num_draft_tokens=n + 1,
                   draft_model_path=str(path) if path else None)


def same_algorithm(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return a is b
    return _SAME.get(a.upper(), a.upper()) == _SAME.get(b.upper(), b.upper())


def matches(profile: Profile, settings: Mapping[str, object]) -> bool:
    """Whether settings (from a `server_args=` line, or `launch.spec_flags`) show this profile: the
    same algorithm (NEXTN is logged as EAGLE), every count the profile gives, and the same
    adaptive switch and schedule where the settings say them."""
    algorithm = settings.get("algorithm")
    if not same_algorithm(profile.algorithm, algorithm if isinstance(algorithm, str) else None):
        return False
    if not all(want is None or settings.get(key) == want
               for key, want in (("num_steps", profile.num_steps), ("topk", profile.topk),
                                 ("num_draft_tokens", profile.num_draft_tokens))):
        return False
    # how it adapts, where the settings say (a server or flags that know no such thing say None)
    adaptive, schedule = settings.get("adaptive"), settings.get("schedule")
    if isinstance(adaptive, bool) and adaptive != profile.adaptive:
        return False
    if not isinstance(schedule, (list, tuple)):
        return True
    return tuple(tuple(e) for e in schedule) == profile.schedule
