"""A speculation profile as the config names one ([profiles.NAME]), and the built-in ones.
Whether a server accepts a profile is control/profiles.py's business, not the config's."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    name: str
    algorithm: str | None = None  # None: speculation off
    num_steps: int | None = None
    topk: int | None = None
    num_draft_tokens: int | None = None
    draft_model_path: str | None = None
    # Speculation that adapts inside the engine (control/profiles.py checks each engine's rules):
    # SGLang's --speculative-adaptive (0.5.11+: num_steps moves among tiers by the accept length),
    # with its tuning knobs' JSON file --speculative-adaptive-config; vLLM's per-batch-size
    # schedule, --speculative-config's num_speculative_tokens_per_batch_size: (first batch size,
    # last, K), K 0 meaning no speculation there (0.24+)
    adaptive: bool = False  # SGLang 0.5.11+: --speculative-adaptive (steps move among tiers by accept length)
    adaptive_config: str | None = None  # SGLang: --speculative-adaptive-config, its knobs' JSON file
    schedule: tuple[tuple[int, int, int], ...] = ()  # vLLM 0.24+: [[first bs, last bs, K], ...], K 0 is off
    env: tuple[tuple[str, str], ...] = ()  # (NAME, value) pairs set in the drop-in's Environment=
    extra_args: tuple[str, ...] = ()  # more server arguments, each one argv item

    @property
    def on(self) -> bool:
        return self.algorithm is not None


def mtp_profile(n: int) -> Profile:
    """MTP through SGLang's NEXTN with topk 1, so draft tokens = steps + 1."""
    return Profile(f"mtp{n}", algorithm="NEXTN", num_steps=n, topk=1, num_draft_tokens=n + 1)


BUILTINS: dict[str, Profile] = {"off": Profile("off"), **{f"mtp{n}": mtp_profile(n) for n in (1, 2, 3)}}
