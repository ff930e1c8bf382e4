"""The dashboard's collector pacing: young collections between frames, the whole heap when no
key came in lately, and at the latest every few seconds whatever the keys."""

import gc

from mtptui.tui import gcpace
from mtptui.tui.gcpace import GcPacer


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_pacing_with_a_fake_clock():
    clock = Clock()
    p = GcPacer(clock)
    p.after_frame()
    assert (p.young, p.full) == (0, 0)  # nothing due yet
    clock.t += gcpace.YOUNG_EVERY_S + 1e-6
    p.after_frame()
    assert (p.young, p.full) == (1, 0)
    p.after_frame()
    assert p.young == 1  # not twice in one interval
    # a key just now: the whole heap waits, though it is due
    clock.t += gcpace.FULL_EVERY_S + 1e-6
    p.input()
    p.after_frame()
    assert p.full == 0 and p.young == 2
    clock.t += gcpace.QUIET_S + 1e-6
    p.after_frame()
    assert p.full == 1
    # keys all the time: the whole heap still at the latest interval
    young = p.young
    for _ in range(int(gcpace.FULL_AT_LATEST_S / 0.1) + 1):
        clock.t += 0.1
        p.input()
        p.after_frame()
    assert p.full == 2 and p.young > young


def test_start_freezes_what_exists_and_raises_thresholds():
    saved = gc.get_threshold()
    try:
        GcPacer().start()
        assert gc.get_threshold() == gcpace.THRESHOLDS
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*saved)


def test_the_whole_heap_goes_right_after_a_key_frame_when_due():
    clock = Clock()
    p = GcPacer(clock)
    clock.t += gcpace.FULL_EVERY_S / 2
    p.input()
    p.after_key_frame()
    assert p.full == 0  # not due yet
    clock.t += gcpace.FULL_EVERY_S / 2 + 1e-6
    p.input()
    p.after_frame()
    assert p.full == 0  # due, but a key just came in: a tick's frame leaves it
    p.after_key_frame()
    assert p.full == 1  # the key's own frame is drawn: now
