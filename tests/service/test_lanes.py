"""The two priority classes of long work: interactive before background, background held
to its slots, bounded queues, cancelled waiters, and a metric each."""

from __future__ import annotations

import asyncio

import pytest

from gameai.service.errors import Busy
from gameai.service.lanes import BACKGROUND, INTERACTIVE, Lanes
from gameai.service.metrics import Metrics


def sample(metrics: Metrics, name: str, lane: str) -> float:
    value = metrics.registry.get_sample_value(name, {"lane": lane})
    return 0.0 if value is None else value


def test_a_freed_slot_goes_to_interactive_work_first() -> None:
    order: list[str] = []

    async def main() -> None:
        lanes = Lanes(Metrics(), slots=1, background_slots=1)
        hold = asyncio.Event()

        async def work(lane: str, name: str, wait: asyncio.Event | None = None) -> None:
            async with lanes.slot(lane):
                order.append(name)
                if wait is not None:
                    await wait.wait()
        first = asyncio.create_task(work(BACKGROUND, "batch 1", hold))
        await asyncio.sleep(0.01)
        queued = [asyncio.create_task(work(BACKGROUND, "batch 2")),
                  asyncio.create_task(work(INTERACTIVE, "hint")),
                  asyncio.create_task(work(BACKGROUND, "batch 3")),
                  asyncio.create_task(work(INTERACTIVE, "review"))]
        await asyncio.sleep(0.01)
        assert lanes.waiting(BACKGROUND) == 2 and lanes.waiting(INTERACTIVE) == 2
        hold.set()
        await asyncio.gather(first, *queued)
    asyncio.run(main())
    assert order == ["batch 1", "hint", "review", "batch 2", "batch 3"]


def test_background_work_holds_at_most_its_slots() -> None:
    async def main() -> None:
        lanes = Lanes(Metrics(), slots=2, background_slots=1)
        hold = asyncio.Event()
        started: list[str] = []

        async def work(lane: str, name: str) -> None:
            async with lanes.slot(lane):
                started.append(name)
                await hold.wait()
        tasks = [asyncio.create_task(work(BACKGROUND, "b1")),
                 asyncio.create_task(work(BACKGROUND, "b2")),
                 asyncio.create_task(work(INTERACTIVE, "i1"))]
        await asyncio.sleep(0.01)
        assert sorted(started) == ["b1", "i1"]  # the second batch waits for the first
        assert lanes.running == {INTERACTIVE: 1, BACKGROUND: 1}
        hold.set()
        await asyncio.gather(*tasks)
        assert lanes.running == {INTERACTIVE: 0, BACKGROUND: 0}
    asyncio.run(main())


def test_full_queues_refuse_and_each_class_is_measured() -> None:
    metrics = Metrics()

    async def main() -> None:
        lanes = Lanes(metrics, slots=1, queue={INTERACTIVE: 1, BACKGROUND: 1})
        hold = asyncio.Event()

        async def work(lane: str) -> None:
            async with lanes.slot(lane, field="boards"):
                await hold.wait()
        tasks = [asyncio.create_task(work(INTERACTIVE)), asyncio.create_task(work(INTERACTIVE)),
                 asyncio.create_task(work(BACKGROUND))]
        await asyncio.sleep(0.01)
        assert sample(metrics, "gameai_lane_running", INTERACTIVE) == 1
        assert sample(metrics, "gameai_lane_waiting", INTERACTIVE) == 1
        assert sample(metrics, "gameai_lane_waiting", BACKGROUND) == 1
        with pytest.raises(Busy) as refused:
            async with lanes.slot(BACKGROUND, field="boards"):
                pass
        assert refused.value.field == "boards"
        assert sample(metrics, "gameai_lane_refused_total", BACKGROUND) == 1
        hold.set()
        await asyncio.gather(*tasks)
    asyncio.run(main())
    assert sample(metrics, "gameai_lane_wait_seconds_count", INTERACTIVE) == 2
    assert sample(metrics, "gameai_lane_wait_seconds_count", BACKGROUND) == 1
    assert sample(metrics, "gameai_lane_waiting", BACKGROUND) == 0


def test_a_cancelled_waiter_leaves_the_queue_and_passes_on_its_turn() -> None:
    async def main() -> None:
        lanes = Lanes(Metrics(), slots=1)
        hold = asyncio.Event()
        done: list[str] = []

        async def work(lane: str, name: str, wait: asyncio.Event | None = None) -> None:
            async with lanes.slot(lane):
                done.append(name)
                if wait is not None:
                    await wait.wait()
        first = asyncio.create_task(work(INTERACTIVE, "first", hold))
        await asyncio.sleep(0.01)
        gone = asyncio.create_task(work(INTERACTIVE, "gone"))
        after = asyncio.create_task(work(BACKGROUND, "after"))
        await asyncio.sleep(0.01)
        gone.cancel()
        await asyncio.sleep(0.01)
        assert lanes.waiting(INTERACTIVE) == 0
        hold.set()
        await asyncio.gather(first, after)
        assert done == ["first", "after"] and lanes.running[INTERACTIVE] == 0
    asyncio.run(main())
