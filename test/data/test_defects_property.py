"""Property: whatever defects a JointState stream carries (missing joints, NaN, duplicates, zero or reversed stamps,
resets, constant velocity, empty fields, joints split across publishers), the data set builder returns either a
clean data set or a DataError, never a traceback (issue 11, "Done when")."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from data_helpers import T0, write_joint_state_bag
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from deadzone_id_ros.data.dataset import load_dataset
from deadzone_id_ros.errors import DataError

NAMES = ("a", "b", "c")
V_MAX = 4.0  # the joints' velocity limit [rad/s]: the generator never moves a joint faster


@st.composite
def streams(draw):
    """A 3-joint JointState stream (message dicts) with a random mix of injected defects, and the defects."""
    n = draw(st.integers(30, 240))
    rate = draw(st.sampled_from([100.0, 200.0, 500.0]))
    seed = draw(st.integers(0, 2**31 - 1))
    defects = draw(st.fixed_dictionaries({
        k: st.booleans() for k in ("missing", "nan", "duplicate", "zero", "reverse", "reset", "constant_vel",
                                   "empty_vel", "empty_effort", "split")}))
    rng = np.random.default_rng(seed)
    step = int(round(1e9 / rate))
    freq, amp = rng.uniform(0.2, 1.5, 3), rng.uniform(0.05, 1.0, 3)
    amp = np.minimum(amp, V_MAX / (2 * np.pi * freq))  # |dq| <= V_MAX
    t_true = np.arange(n) * step
    reset_at = int(rng.integers(max(8, n // 4), n)) if defects["reset"] else n  # a large backward jump
    if defects["reset"]:
        t_true[reset_at:] -= t_true[reset_at]  # the clock restarts (two runs appended)
    msgs = []
    for k in range(n):
        ts = t_true[k] * 1e-9 + (100.0 if k >= reset_at else 0.0)  # the second run starts elsewhere
        q = amp * np.sin(2 * np.pi * freq * ts + np.arange(3))
        dq = amp * 2 * np.pi * freq * np.cos(2 * np.pi * freq * ts + np.arange(3))
        msgs.append({"t": T0 + int(t_true[k]), "log": T0 + k * step, "name": list(NAMES), "position": q,
                     "velocity": np.full(3, 1.0) if defects["constant_vel"] else dq, "effort": 2 * q + 1})
    for k in rng.choice(n, size=max(1, n // 20), replace=False).tolist():
        m = msgs[k]
        if defects["missing"]:
            keep = [i for i in range(3) if i != k % 3]
            m.update(name=[NAMES[i] for i in keep], **{f: np.asarray(m[f])[keep] for f in ("position", "velocity",
                                                                                          "effort")})
        if defects["nan"]:
            m["position"] = np.where(np.arange(len(m["position"])) == 0, np.nan, m["position"])
        if defects["zero"]:
            m["t"] = 0
        if defects["empty_effort"]:
            m["effort"] = []
    if defects["empty_vel"]:
        for m in msgs:
            m["velocity"] = []
    if defects["reverse"]:
        for k in range(1, n - 1, 7):  # messages received out of order (the log time keeps the arrival order)
            (msgs[k], msgs[k + 1]) = ({**msgs[k + 1], "log": msgs[k]["log"]}, {**msgs[k], "log": msgs[k + 1]["log"]})
    if defects["duplicate"]:
        for k in sorted(rng.choice(n, size=max(1, n // 10), replace=False).tolist(), reverse=True):
            msgs.insert(k, dict(msgs[k]))
    if defects["split"]:
        split = []
        for m in msgs:
            for sel in ([i for i, nm in enumerate(m["name"]) if nm != "c"], [i for i, nm in enumerate(m["name"])
                                                                             if nm == "c"]):
                if sel:
                    split.append({**m, "name": [m["name"][i] for i in sel],
                                  **{f: np.asarray(m[f])[sel] if len(m[f]) else [] for f in ("position", "velocity",
                                                                                          "effort")}})
        msgs = split
    return msgs, defects


# no shrinking: a failing example is printed as generated (shrinking bag-writing examples takes minutes)
@settings(max_examples=40, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate], derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(streams())
def test_builder_returns_clean_data_or_a_clear_error(stream):
    msgs, defects = stream
    with tempfile.TemporaryDirectory() as tmp:
        bag = write_joint_state_bag(Path(tmp) / "bag", msgs)
        try:
            ds = load_dataset([bag])
        except DataError as err:
            assert str(err).startswith(str(bag)), err  # a clear error names the bag
            return
    rep = ds.report
    assert ds.episodes and ds.num_samples == rep.samples == sum(len(e) for e in ds.episodes)
    for ep in ds.episodes:
        j = len(ds.joint_names)
        assert ep.q.shape == ep.dq.shape == ep.ddq.shape == ep.tau.shape == (len(ep), j)
        assert np.all(np.diff(ep.t) > 0) and np.allclose(np.diff(ep.t), ep.dt)  # monotonic, uniform time
        for arr in (ep.q, ep.dq, ep.ddq, ep.tau):
            assert np.all(np.isfinite(arr))
        # no neighbour jump beyond what the velocity limit allows in one period (linear interpolation of samples
        # cannot be steeper than the samples themselves)
        assert np.abs(np.diff(ep.q, axis=0)).max(initial=0.0) <= V_MAX * ep.dt * 1.001 + 1e-12, str(defects)
    # every repair is counted
    if defects["reset"] and not defects["zero"] and rep.bags[str(bag)].time_source == "header":
        assert rep.resets_split >= 1 or rep.short_segments_dropped >= 1
    if defects["duplicate"] and not defects["split"]:
        assert rep.duplicates_dropped + rep.same_stamp_conflicts_dropped >= 1
    if defects["zero"] and not defects["split"]:
        assert rep.zero_stamps_dropped + int(bool(rep.log_time_fallback)) >= 1
    if defects["nan"] or (defects["missing"] and not defects["split"]):
        # the spoilt messages are dropped (as NaN, unmatched, zero-stamped, duplicate), merged with their neighbours
        # (messages lacking joints look like split publishers), or their joint is skipped
        assert (rep.nan_samples_dropped + rep.messages_merged + rep.merge_unmatched + rep.zero_stamps_dropped
                + rep.duplicates_dropped + rep.same_stamp_conflicts_dropped + rep.short_segments_dropped
                + len(rep.bags[str(bag)].joints_skipped)) >= 1
    if defects["constant_vel"] and rep.velocity_source[str(bag)] == "message":
        # a constant velocity field was kept only where it is the derivative of q (a nearly straight stretch)
        for ep in ds.episodes:
            g = np.gradient(ep.q, ep.dt, axis=0)
            assert np.abs(ep.dq - g).max() <= 0.3 * max(1.0, float(np.abs(g).max())), str(defects)
    if defects["split"]:
        assert rep.messages_merged >= 1
