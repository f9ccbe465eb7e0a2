"""The sensor's samples over a pipe, for a force sensor in a process of its own (core, no ROS).

A 1 kHz controller in Python that also senses force pays for the estimate and its five topics in every tick
(docs/sensing.md: about as much again as the control law, and more on a loaded machine), so on a busy machine it
answers late. ros2_control's controllers hand such work to a non-real-time thread (realtime_tools'
RealtimePublisher); in Python a thread still holds the interpreter lock, so the controller hands each sample to a
process of its own instead (:mod:`deadzone_id_ros.nodes.sensing_worker`). This module is the channel: a stream of
frames, each ``kind`` (1 byte), ``length`` (4 bytes, little endian) and the payload.

- ``b"C"`` (first, once): the pickled setup the worker builds its sensor from.
- ``b"S"``: one sample: stamp (sec, nanosec), t [s], a flags byte (bit 0: ``torque`` is the measured effort in the
  sensor's effort unit, else the command held since the previous state [N·m]; bit 1: samples were dropped just before
  this one, and the estimators take the longer interval as a missed state), then q [rad], dq [rad/s] and torque,
  (J,) float64 each.
- ``b"M"``: the pickled model fields after a model swap (:data:`deadzone_id_ros.control.model_swap.MODEL_FIELDS`).

The writer never blocks the control loop unless told to: a sample that does not fit in the pipe (the worker is
behind; the pipe holds :data:`PIPE_SIZE` bytes) is dropped and counted, and the next one that fits carries the gap
flag. Every frame after the first is
shorter than PIPE_BUF (4096 bytes on Linux), so a write puts all of it in the pipe or none of it (POSIX), and a
dropped frame leaves the stream whole. Under simulated time (``block=True``) the writer waits instead: nothing real
runs on the clock, and a lockstep simulation then waits for the sensor as for the controller.
"""

from __future__ import annotations

import errno
import fcntl
import os
import pickle
import select
import struct
import time
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

__all__ = ["PIPE_BUF", "PIPE_SIZE", "SampleFrame", "SampleReader", "SampleWriter"]

#: bytes a pipe write puts in whole or not at all (POSIX's minimum; Linux's value)
PIPE_BUF = 4096
#: bytes the pipe holds (asked of the kernel where it can be set): about 80 samples of 3 joints, so a worker that
#: falls behind works on samples at most about 80 ms old at 1 kHz and the rest are dropped, instead of 64 KiB
#: (Linux's default, about 0.7 s) of stale ones
PIPE_SIZE = 8192
_HEAD = struct.Struct("<cI")
_SAMPLE = struct.Struct("<iIdB")
#: flag bits of a sample
EFFORT, GAP = 1, 2


@dataclass(frozen=True)
class SampleFrame:
    """One sample as the worker reads it.

    Attributes:
        sec, nanosec: the stamp of the /joint_states message it came from.  t: the same stamp [s] on the sensor's
            clock.  q, dq, torque: (J,) [rad], [rad/s], and the measured effort (``is_effort``, the sensor's effort
            unit) or the held command [N·m].  after_gap: samples were dropped just before this one.
    """

    sec: int
    nanosec: int
    t: float
    q: np.ndarray
    dq: np.ndarray
    torque: np.ndarray
    is_effort: bool
    after_gap: bool


class SampleWriter:
    """The controller's end of the channel: frames into the pipe's write end ``fd`` (which it owns from here on).

    Args:
        fd: the write end of a pipe (a file descriptor).  n_joints: J.
        block: wait for room in the pipe (simulated time) instead of dropping a sample that does not fit.

    Raises:
        ValueError: n_joints < 1, or a sample frame of J joints would not be atomic (longer than :data:`PIPE_BUF`).
    """

    def __init__(self, fd: int, n_joints: int, block: bool = False) -> None:
        if n_joints < 1:
            raise ValueError(f"n_joints = {n_joints} must be >= 1")
        size = _HEAD.size + _SAMPLE.size + 3 * 8 * n_joints
        if size > PIPE_BUF:
            raise ValueError(f"a sample of {n_joints} joints takes {size} bytes, more than PIPE_BUF ({PIPE_BUF}): "
                             "it could be split in the pipe")
        self.fd, self.n_joints, self.block = fd, n_joints, block
        os.set_blocking(fd, block)
        if hasattr(fcntl, "F_SETPIPE_SZ"):  # Linux; elsewhere the system's size
            try:
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
            except OSError:
                pass  # not a pipe (a test's file) or refused: the default size
        self._sample = struct.Struct(f"<cI{_SAMPLE.format[1:]}{3 * n_joints}d")
        #: samples written, samples dropped because the pipe was full (the reader was behind)
        self.sent = 0
        self.dropped = 0
        self._gap = False
        self._pending_model: bytes | None = None
        self.closed = False

    def send_setup(self, setup: object, timeout: float = 60.0) -> None:
        """Write the first frame, the pickled ``setup``, waiting up to ``timeout`` [s] for room whatever ``block``
        says (it is written before the first sample, and may be longer than PIPE_BUF).

        Raises:
            BrokenPipeError: the reader is gone.  TimeoutError: the reader took less than the whole frame in time.
        """
        payload = pickle.dumps(setup)
        data = _HEAD.pack(b"C", len(payload)) + payload
        view = memoryview(data)
        deadline = time.monotonic() + timeout
        while view:
            try:
                view = view[os.write(self.fd, view):]
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"the sensing worker took {len(data) - len(view)} of the {len(data)} bytes "
                                       f"of its setup in {timeout:g} s") from None
                select.select([], [self.fd], [], min(left, 1.0))

    def send_model(self, fields: dict[str, object]) -> None:
        """Queue the model fields of a swap; written before the next sample that fits.

        Raises:
            ValueError: the frame would be longer than PIPE_BUF (a model path of about 4000 characters).
        """
        payload = pickle.dumps(dict(fields))
        frame = _HEAD.pack(b"M", len(payload)) + payload
        if len(frame) > PIPE_BUF:
            raise ValueError(f"the model frame takes {len(frame)} bytes, more than PIPE_BUF ({PIPE_BUF})")
        self._pending_model = frame

    def send(self, sec: int, nanosec: int, t: float, q: np.ndarray, dq: np.ndarray, torque: np.ndarray,
             is_effort: bool) -> bool:
        """Write one sample (arguments as :class:`SampleFrame`'s); False when it was dropped (pipe full).

        Raises:
            BrokenPipeError: the reader is gone.  struct.error: an array that is not (J,).
        """
        if self._pending_model is not None and not self._write(self._pending_model):
            self.dropped += 1  # the model frame must go first; this sample waits for nothing
            self._gap = True
            return False
        self._pending_model = None
        flags = (EFFORT if is_effort else 0) | (GAP if self._gap else 0)
        frame = self._sample.pack(b"S", self._sample.size - _HEAD.size, sec, nanosec, t, flags, *q.tolist(),
                                  *dq.tolist(), *torque.tolist())
        if self._write(frame):
            self.sent += 1
            self._gap = False
            return True
        self.dropped += 1
        self._gap = True
        return False

    def _write(self, frame: bytes) -> bool:
        """The whole frame into the pipe (True), or nothing (False: full, non-blocking)."""
        try:
            os.write(self.fd, frame)
        except BlockingIOError:
            return False
        except OSError as err:
            if err.errno == errno.EPIPE:
                raise BrokenPipeError(errno.EPIPE, "the sensing worker's pipe is closed") from err
            raise
        return True

    def close(self) -> None:
        """Close the write end: the reader sees the end of the stream."""
        if not self.closed:
            self.closed = True
            os.close(self.fd)


class SampleReader:
    """The worker's end of the channel: frames from a binary stream (the pipe's read end).

    Args:
        stream: a binary stream (e.g. ``sys.stdin.buffer``).

    Raises:
        ValueError (from :meth:`read`): a frame of unknown kind, or a sample of another joint count.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.n_joints: int | None = None

    def _exact(self, n: int) -> bytes | None:
        data = self.stream.read(n)
        if data is None or len(data) < n:
            return None
        return data

    def read(self) -> tuple[str, object] | None:
        """The next frame as (kind, value): ("C", the setup), ("S", a :class:`SampleFrame`), ("M", the model
        fields); None at the end of the stream (the writer closed it or exited)."""
        head = self._exact(_HEAD.size)
        if head is None:
            return None
        kind, length = _HEAD.unpack(head)
        payload = self._exact(length) if length else b""
        if payload is None:
            return None
        if kind in (b"C", b"M"):
            return kind.decode(), pickle.loads(payload)
        if kind != b"S":
            raise ValueError(f"sensing pipe: unknown frame kind {kind!r}")
        n3 = (length - _SAMPLE.size) // 8
        if n3 < 3 or n3 % 3 or (self.n_joints is not None and n3 != 3 * self.n_joints):
            raise ValueError(f"sensing pipe: a sample of {length} bytes is not one of "
                             f"{self.n_joints if self.n_joints is not None else 'J'} joints")
        sec, nanosec, t, flags = _SAMPLE.unpack_from(payload)
        values = np.frombuffer(payload, dtype="<f8", offset=_SAMPLE.size).astype(float)
        n = n3 // 3
        return "S", SampleFrame(sec, nanosec, t, values[:n], values[n:2 * n], values[2 * n:],
                                bool(flags & EFFORT), bool(flags & GAP))
