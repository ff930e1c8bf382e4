"""Speculation profiles: the built-ins and the user's `[profiles.NAME]`.

A profile says what the speculative flags of the server should be; `off` says there are none.
The built-ins are MTP through SGLang's NEXTN with topk 1, so draft tokens = steps + 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mtptui.control.launch import Context


class ProfileError(ValueError):
    """A profile that SGLang (or vLLM) would refuse, said in one line."""


@dataclass(frozen=True)
class Profile:
    name: str
    algorithm: str | None = None  # None: speculation off
    num_steps: int | None = None
    topk: int | None = None
    num_draft_tokens: int | None = None
    draft_model_path: str | None = None
    env: tuple[tuple[str, str], ...] = ()  # (NAME, value) pairs set in the drop-in's Environment=
    extra_args: tuple[str, ...] = ()  # more server arguments, each one argv item

    @property
    def on(self) -> bool:
        return self.algorithm is not None


def _mtp(n: int) -> Profile:
    return Profile(f"mtp{n}", algorithm="NEXTN", num_steps=n, topk=1, num_draft_tokens=n + 1)


BUILTINS: dict[str, Profile] = {"off": Profile("off"), **{f"mtp{n}": _mtp(n) for n in (1, 2, 3)}}


# vLLM's --speculative-config method for each algorithm name (MTP is vLLM's own word for NEXTN).
VLLM_METHODS = {"NEXTN": "mtp", "MTP": "mtp", "EAGLE": "eagle", "EAGLE3": "eagle3", "NGRAM": "ngram",
                "STANDALONE": "draft_model"}
_EAGLE_FAMILY = ("NEXTN", "EAGLE", "EAGLE3", "STANDALONE")
# SGLang logs NEXTN as EAGLE; with a Gemma 4 assistant draft (0.5.12+) both become FROZEN_KV_MTP.
_SAME = {"NEXTN": "EAGLE", "FROZEN_KV_MTP": "EAGLE", "MTP": "EAGLE"}
# topk > 1 with page size > 1 works on these attention backends only (SGLang 0.5.23's list).
PAGED_TOPK_BACKENDS = ("flashinfer", "fa3", "triton")


def resolve(name: str, user_profiles: Mapping[str, Profile]) -> Profile:
    """The profile called name: the user's `[profiles.NAME]` first, then the built-ins."""
    known = {**BUILTINS, **user_profiles}
    if name not in known:
        raise ProfileError(f"unknown profile {name!r} (known: {', '.join(known)})")
    return known[name]


def check_profile(profile: Profile, ctx: Context, engine: str) -> None:
    """Raises ProfileError when the server would refuse the profile at start (SGLang's own checks
    in ServerArgs, or what vLLM's --speculative-config cannot say), before anything is touched.

    One rule is stricter than SGLang: with topk 1 it silently changes the draft tokens to
    steps + 1, so a profile asking for anything else would never show what it asked for. Counts
    below 1 are refused for every algorithm. Rules that depend on what only the server knows (the
    model's architecture, the attention backend it picks itself) are left to the server."""
    p = profile
    counts = {"num_steps": p.num_steps, "topk": p.topk, "num_draft_tokens": p.num_draft_tokens}
    if not p.on:
        given = [k for k, v in {**counts, "draft_model_path": p.draft_model_path}.items() if v is not None]
        if given:
            raise ProfileError(f"profile {p.name} sets {', '.join(given)} but no algorithm")
        return
    for key, value in counts.items():
        if value is not None and value < 1:
            raise ProfileError(f"profile {p.name}: {key} must be at least 1, not {value}")
    algo = p.algorithm.upper()
    if engine == "vllm":
        _check_vllm(p, algo)
        return
    if algo in ("NGRAM", "STANDALONE", "DFLASH") and ctx.enable_dp_attention:
        raise ProfileError(f"profile {p.name}: SGLang refuses {algo} with DP attention "
                           f"(\"Currently {algo.lower()} speculative decoding does not support dp "
                           "attention.\")")
    if algo == "DFLASH":
        if not p.draft_model_path:
            raise ProfileError(f"profile {p.name}: DFLASH needs draft_model_path (SGLang: \"DFLASH "
                               "speculative decoding requires setting --speculative-draft-model-path.\")")
        for key in ("num_steps", "topk"):
            if counts[key] not in (None, 1):
                raise ProfileError(f"profile {p.name}: DFLASH runs with {key} 1 (SGLang would "
                                   f"silently change {counts[key]} to 1)")
        return
    if algo not in _EAGLE_FAMILY:
        return
    given = [k for k, v in counts.items() if v is not None]
    if given and len(given) < 3:
        raise ProfileError(f"profile {p.name}: num_steps, topk and num_draft_tokens go together, "
                           f"give all three or none (it gives {', '.join(given)})")
    if not given:
        return  # SGLang chooses all three for the model
    steps, topk, draft = p.num_steps, p.topk, p.num_draft_tokens
    backends = (ctx.attention_backend, ctx.decode_attention_backend, ctx.prefill_attention_backend)
    if topk > 1 and "trtllm_mha" in backends:
        raise ProfileError(f"profile {p.name}: the trtllm_mha attention backend needs topk 1 "
                           f"(SGLang: \"trtllm_mha backend only supports topk = 1 for speculative "
                           "decoding.\")")
    if topk == 1 and draft != steps + 1:
        raise ProfileError(f"profile {p.name}: with topk 1, draft tokens must be steps + 1 (SGLang "
                           f"would silently change {draft} to {steps + 1})")
    if topk > 1 and (ctx.page_size or 1) > 1 and ctx.attention_backend is not None \
            and ctx.attention_backend not in PAGED_TOPK_BACKENDS:
        raise ProfileError(f"profile {p.name}: topk {topk} with page size {ctx.page_size} works only "
                           f"on the {', '.join(PAGED_TOPK_BACKENDS)} attention backends, not "
                           f"{ctx.attention_backend} (SGLang: \"speculative_eagle_topk > 1 with "
                           "page_size > 1 is unstable\")")


def _check_vllm(p: Profile, algo: str) -> None:
    if algo not in VLLM_METHODS:
        raise ProfileError(f"profile {p.name}: vLLM has no speculative method for {p.algorithm} "
                           f"(it knows {', '.join(VLLM_METHODS)})")
    if p.topk not in (None, 1):
        raise ProfileError(f"profile {p.name}: vLLM's --speculative-config has no topk "
                           f"({p.topk}); it drafts one chain")
    if p.num_draft_tokens is not None and p.num_steps is not None \
            and p.num_draft_tokens != p.num_steps + 1:
        raise ProfileError(f"profile {p.name}: vLLM drafts num_steps tokens per step; "
                           "num_draft_tokens other than steps + 1 cannot be said to it")
    if algo in ("EAGLE", "EAGLE3", "STANDALONE") and not p.draft_model_path:
        raise ProfileError(f"profile {p.name}: vLLM needs draft_model_path for {algo}")


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
        return BUILTINS.get(f"mtp{n}", _mtp(n))
    return Profile(f"{algo.lower()}{n}", algorithm=algo, num_steps=n, topk=1, num_draft_tokens=n + 1,
                   draft_model_path=str(path) if path else None)


def same_algorithm(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return a is b
    return _SAME.get(a.upper(), a.upper()) == _SAME.get(b.upper(), b.upper())


def matches(profile: Profile, settings: Mapping[str, object]) -> bool:
    """Whether settings (from a `server_args=` line, or `launch.spec_flags`) show this profile: the
    same algorithm (NEXTN is logged as EAGLE) and every count the profile gives."""
    if not same_algorithm(profile.algorithm, settings.get("algorithm")):
        return False
    return all(want is None or settings.get(key) == want
               for key, want in (("num_steps", profile.num_steps), ("topk", profile.topk),
                                 ("num_draft_tokens", profile.num_draft_tokens)))
