"""Force sensing over DDS (issue 34): sim_arm in lockstep pushes the bundled arm's tip with a known force; the
feedforward_controller's ~/contact flips within the target delay of the push, counted in simulated time by the
stamps of the states the estimate was computed from; the force_estimator node sees the same from /joint_states."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO, executable, wait_for_progress
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool

from deadzone_id_ros.stamps import stamp_to_s

pytestmark = pytest.mark.integration

PARAMS = str(REPO / "config" / "feedforward_controller.yaml")
SIM_PARAMS = str(REPO / "config" / "sim_arm.yaml")
PUSH_START = 1.0  # [s of simulated time]
TARGET_DELAY = 0.020  # [s] the detection target for pushes of 1 N or more
SENSING = ["-p", "sensing:=true", "-p", "sensing_velocity_threshold:=[0.02, 0.02, 0.02]",
           "-p", "sensing_threshold:=[0.1, 0.15, 0.1]",
           "-p", "sensing_frame:=link3", "-p", "sensing_point:=[0.0, 0.0, 0.22]"]


def test_contact_flips_within_the_target_delay_when_sim_arm_pushes(processes, ros_probe):
    probe = ros_probe
    flags: list[bool] = []
    states: dict[str, list[tuple[float, np.ndarray]]] = {"ffc": [], "est": [], "truth": []}
    probe.listen("/feedforward_controller/contact", Bool, qos=10000, keep=lambda m: flags.append(m.data))
    for key, topic in (("ffc", "/feedforward_controller/contact_state"), ("est", "/force_estimator/contact_state"),
                       ("truth", "/sim_arm/true_external_torque")):
        probe.listen(topic, JointState, qos=10000,
                     keep=lambda m, k=key: states[k].append((stamp_to_s(m.header.stamp), np.array(m.effort))))
    sensing = probe.listen("/diagnostics", DiagnosticArray, qos=10,
                           keep=lambda m: {kv.key: kv.value for st in m.status if st.name.endswith("sensing")
                                           for kv in st.values})
    ctl = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                           "-p", "mode:=ctc_dob", "-p", "model_friction:=true", "-p", "use_sim_time:=true",
                           "-p", "diagnostics_rate:=20.0", *SENSING], "ffc")
    est = processes.start([executable("force_estimator"), "--ros-args", "-p", "use_sim_time:=true", *SENSING],
                          "est")
    # the probe must hear both nodes' contact topics before simulated time starts: a lockstep run goes as fast as
    # the controller answers, and a subscription matched late (DDS discovery) misses the push's first samples
    heard = [sub for sub in probe.node.subscriptions if sub.topic_name.endswith(("/contact", "/contact_state"))]
    assert len(heard) == 3, [sub.topic_name for sub in probe.node.subscriptions]
    assert probe.spin(60.0, until=lambda: all(sub.get_publisher_count() > 0 for sub in heard)), (
        [(sub.topic_name, sub.get_publisher_count()) for sub in heard], processes.log(ctl) + processes.log(est))
    sim = processes.start([executable("sim_arm"), "--ros-args", "--params-file", SIM_PARAMS,
                           "-p", "clock_mode:=sim", "-p", "lockstep:=true", "-p", "push_link:=link3",
                           "-p", "push_point:=[0.0, 0.0, 0.22]", "-p", "push_direction:=[1.0, 0.0, 0.0]",
                           "-p", "push_local:=true", "-p", "push_magnitude:=3.0", "-p", f"push_start:={PUSH_START}",
                           "-p", "push_duration:=5.0",
                           "-p", "wait_for_subscriber_nodes:=[feedforward_controller, force_estimator]"], "sim")

    def log() -> str:
        return processes.log(ctl) + processes.log(sim) + processes.log(est)

    end = PUSH_START + 0.3
    wait_for_progress(lambda: (probe.spin(0.05), bool(states["ffc"]) and states["ffc"][-1][0] > end)[1],
                      lambda: states["ffc"][-1][0] if states["ffc"] else None, period=0.0, log=log)
    # the truth topic is the simulator's own, matched whenever discovery gets there: the push acts for 5 s
    probe.spin(30.0, until=lambda: bool(states["est"]) and states["est"][-1][0] > end and bool(sensing)
               and bool(states["truth"]) and states["truth"][-1][0] > end)
    truth = {round(t, 6): tau for t, tau in states["truth"]}
    assert max(np.abs(tau).max() for t, tau in truth.items() if t > PUSH_START) > 0.3, log()  # the push acts
    for key in ("ffc", "est"):
        heard_from = states[key][0][0] if states[key] else None
        assert heard_from is not None and heard_from < PUSH_START - 0.1, f"{key}: first state heard at {heard_from} s"
        before = [t for t, excess in states[key] if t < PUSH_START and np.any(excess > 0)]
        assert not before, f"{key}: contact before the push at {before[:5]}\n{log()}"
        onset = next((t for t, excess in states[key] if t >= PUSH_START and np.any(excess > 0)), None)
        assert onset is not None, f"{key}: no contact within {end - PUSH_START} s of the push\n{log()}"
        assert onset - PUSH_START <= TARGET_DELAY, f"{key}: detected {1e3 * (onset - PUSH_START):.1f} ms late\n{log()}"
    assert False in flags and True in flags and flags.index(True) > 0, flags[:10]
    assert sensing[-1]["contact threshold [N*m]"] == "[0.1, 0.15, 0.1]", sensing[-1]
    # the diagnostics count the contact where the flag rises (with sensing_confirm 2, a sample after its onset stamp)
    probe.spin(10.0, until=lambda: any(int(d.get("contacts", "0")) >= 1 for d in sensing))
    assert any(int(d.get("contacts", "0")) >= 1 for d in sensing), sensing[-3:]
