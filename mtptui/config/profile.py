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
    env: tuple[tuple[str, str], ...] = ()  # (NAME, value) pairs set in the drop-in's Environment=
    extra_args: tuple[str, ...] = ()  # more server arguments, each one argv item

    @property
    def on(self) -> bool:
        return self.algorithm is not None


def mtp_profile(n: int) -> Profile:
    """MTP through SGLang's NEXTN with topk 1, so draft tokens = steps + 1."""
    return Profile(f"mtp{n}", algorithm="NEXTN", num_steps=n, topk=1, num_draft_tokens=n + 1)


BUILTINS: dict[str, Profile] = {"off": Profile("off"), **{f"mtp{n}": mtp_profile(n) for n in (1, 2, 3)}}
