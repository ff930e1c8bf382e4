"""The profile picker (`p`) says how a profile adapts: SGLang's adaptive steps, vLLM's schedule."""

from __future__ import annotations

from mtptui.config.profile import Profile
from mtptui.tui.screens.profiles import profile_summary


def test_the_profile_picker_says_how_a_profile_adapts():
    adaptive = Profile("a", algorithm="NEXTN", num_steps=3, topk=1, num_draft_tokens=4, adaptive=True)
    assert profile_summary(adaptive) == "NEXTN steps=3 topk=1 draft=4 adaptive"
    schedule = Profile("s", algorithm="NEXTN", num_steps=3, schedule=((1, 8, 3), (9, 64, 1), (65, 4096, 0)))
    assert profile_summary(schedule) == "NEXTN steps=3 schedule=1-8:3,9-64:1,65-4096:0"
