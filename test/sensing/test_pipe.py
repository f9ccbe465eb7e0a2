"""The sensing pipe (deadzone_id_ros.sensing.pipe): frames arrive whole and in order, a full pipe drops a sample
without blocking the writer and marks the next one as after a gap, and under simulated time the writer waits."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

from deadzone_id_ros.sensing.pipe import SampleReader, SampleWriter


@pytest.fixture
def pipe():
    """(read stream, write fd) of a fresh pipe; both closed at the end."""
    r, w = os.pipe()
    stream = os.fdopen(r, "rb")
    yield stream, w
    stream.close()
    try:
        os.close(w)
    except OSError:
        pass  # the writer closed it


def _sample(k: int, n: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(k)
    return rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)


def test_frames_arrive_whole_in_order_and_bit_for_bit(pipe):
    stream, w = pipe
    writer = SampleWriter(w, 3)
    writer.send_setup({"robot": "three_dof_arm", "joints": ("joint1", "joint2", "joint3")})
    q, dq, tau = _sample(1)
    assert writer.send(12, 345_000_000, 12.345, q, dq, tau, False)
    writer.send_model({"model": "learned", "model_path": "/tmp/pick"})
    q2, dq2, eff2 = _sample(2)
    assert writer.send(12, 346_000_000, 12.346, q2, dq2, eff2, True)
    writer.close()
    reader = SampleReader(stream)
    assert reader.read() == ("C", {"robot": "three_dof_arm", "joints": ("joint1", "joint2", "joint3")})
    kind, s = reader.read()
    assert kind == "S" and (s.sec, s.nanosec, s.t, s.is_effort, s.after_gap) == (12, 345_000_000, 12.345, False, False)
    assert np.array_equal(s.q, q) and np.array_equal(s.dq, dq) and np.array_equal(s.torque, tau)
    assert reader.read() == ("M", {"model": "learned", "model_path": "/tmp/pick"})  # before the next sample
    kind, s = reader.read()
    assert kind == "S" and s.is_effort and np.array_equal(s.torque, eff2) and s.t == 12.346
    assert reader.read() is None  # the end of the stream: the worker stops
    assert (writer.sent, writer.dropped) == (2, 0)


def test_a_full_pipe_drops_without_blocking_and_the_next_sample_says_so(pipe):
    stream, w = pipe
    writer = SampleWriter(w, 3)
    q, dq, tau = _sample(3)
    counts: list[int] = []

    def fill() -> None:  # nobody reads: the pipe fills up; a blocking write would hang here, not fail the test
        k = 0
        while writer.send(0, k, k * 1e-3, q, dq, tau, False) and k < 100_000:
            k += 1
        counts.append(k)

    thread = threading.Thread(target=fill, daemon=True)
    thread.start()
    thread.join(30)
    assert counts, "the writer blocked on a full pipe"
    sent = counts[0]
    assert 10 < sent < 100_000 and writer.dropped == 1
    assert not writer.send(0, sent + 1, 0.0, q, dq, tau, False) and writer.dropped == 2  # still full, still no wait
    reader = SampleReader(stream)
    for k in range(sent):  # the worker catches up: every frame written is whole
        kind, s = reader.read()
        assert kind == "S" and s.nanosec == k and not s.after_gap
    assert writer.send(1, 0, 1.0, q, dq, tau, False)
    kind, s = reader.read()
    assert kind == "S" and s.after_gap and s.sec == 1  # the sensor restarts its filters here
    assert writer.send(1, 1, 1.001, q, dq, tau, False)
    assert not reader.read()[1].after_gap


def test_under_simulated_time_the_writer_waits_and_loses_nothing(pipe):
    stream, w = pipe
    writer = SampleWriter(w, 3, block=True)
    q, dq, tau = _sample(4)
    n = 3000  # samples: far more than the pipe holds (PIPE_SIZE, 8 KiB: about 84 frames of 3 joints)
    got: list[int] = []

    def read_later() -> None:
        time.sleep(0.2)
        reader = SampleReader(stream)
        while (frame := reader.read()) is not None:
            got.append(frame[1].nanosec)

    thread = threading.Thread(target=read_later)
    thread.start()
    for k in range(n):
        assert writer.send(0, k, k * 1e-3, q, dq, tau, False)
    writer.close()
    thread.join(30)
    assert got == list(range(n)) and writer.dropped == 0


def test_a_sample_too_long_to_be_atomic_and_a_short_sample_are_refused(pipe):
    stream, w = pipe
    with pytest.raises(ValueError, match="more than PIPE_BUF"):
        SampleWriter(w, 200)
    writer = SampleWriter(w, 3)
    writer.send_setup(None)
    os.write(w, b"S\x05\x00\x00\x00abcde")  # a sample frame of 5 bytes: no joints in it
    reader = SampleReader(stream)
    reader.read()
    with pytest.raises(ValueError, match="not one of J joints"):
        reader.read()
