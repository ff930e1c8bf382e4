"""Speculation profiles: the built-ins and the user's `[profiles.NAME]`.

A profile says what the speculative flags of the server should be; `off` says there are none.
The built-ins are MTP through SGLang's NEXTN with topk 1, so draft tokens = steps + 1.
"""

from __future__ import annotations

from dataclasses import dataclass


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
