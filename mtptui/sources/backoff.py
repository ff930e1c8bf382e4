"""Reconnect delays: exponential, capped, with jitter so that many hosts lost at once (a switch
reboot) do not all come back in the same instant."""

from __future__ import annotations

import random


class Backoff:
    def __init__(self, initial: float = 0.5, cap: float = 30.0, factor: float = 2.0,
                 jitter: float = 0.5, rng: random.Random | None = None) -> None:
        if initial <= 0 or cap < initial or factor < 1 or not 0 <= jitter < 1:
            raise ValueError("backoff needs 0 < initial <= cap, factor >= 1, 0 <= jitter < 1")
        self.initial, self.cap, self.factor, self.jitter = initial, cap, factor, jitter
        self.rng = rng or random.Random()
        self.attempt = 0

    def next(self) -> float:
        """The delay before the next attempt: initial * factor^n, at most cap, minus up to
        `jitter` of itself at random (never more than the cap, never zero)."""
        base = min(self.cap, self.initial * self.factor ** min(self.attempt, 64))
        self.attempt += 1
        return base * (1 - self.jitter * self.rng.random())

    def reset(self) -> None:
        self.attempt = 0
