"""Model swap at run time over DDS (issue 23 item 2): a feedforward_controller process in lockstep with sim_arm takes a
new model without a restart, from ~/swap_model (loaded in a worker thread) or a set-parameters request; a refused
one leaves the old model running (the request fails with the reason, which the log and /diagnostics show) and the
commands go on, counted in simulated time."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO, executable, wait_for_progress
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rcl_interfaces.srv import GetParameters, SetParametersAtomically
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from deadzone_id_ros.stamps import stamp_to_s

pytestmark = pytest.mark.integration

NAMES = ("joint1", "joint2", "joint3")
PARAMS = str(REPO / "config" / "feedforward_controller.yaml")
SIM_PARAMS = str(REPO / "config" / "sim_arm.yaml")
LIMITS = np.array([4.0, 10.0, 5.0])  # URDF effort limits of the bundled arm [N m]
RATE = 20.0  # torque rate limit [N m/s]: 0.02 N m per 1 ms tick, a fifth of the two models' difference on joint2


def _artifacts(tmp_path):
    """(wrong joints, effort in mA, a good identified rigid body): model artifacts as `deadzone-id train` writes."""
    from deadzone_id_ros.data.deadzone import DeadZone
    from deadzone_id_ros.models import LearnedModel, RigidBodyRegressor, fit_rigid_body, save_artifact
    from deadzone_id_ros.models.mlp import MLPWeights, Standardizer
    from deadzone_id_ros.resources import default_urdf
    from deadzone_id_ros.sim import SimArm

    def mlp_model(names):
        mlp = MLPWeights((np.zeros((3, 9), np.float32),), (np.zeros(3, np.float32),), "tanh",
                         Standardizer(np.zeros(9), np.ones(9)), Standardizer(np.full(3, 0.1), np.ones(3)))
        return LearnedModel(names, "masked", mlp=mlp, dead_zone=DeadZone(tuple(names), None, np.full(3, 0.01),
                                                                         np.full(3, 0.02)))

    wrong = save_artifact(mlp_model(("joint1", "joint2", "elbow")), tmp_path / "elbow", onnx=False).path
    current = save_artifact(mlp_model(NAMES), tmp_path / "current", onnx=False,
                            training_data={"effort_units": {j: "mA" for j in NAMES}}).path
    rng = np.random.default_rng(0)
    q, dq, ddq = rng.normal(size=(3, 300, 3))
    q = np.array([0.0, 0.3, 0.6]) + 0.3 * q  # inside the joint limits (beyond them MuJoCo adds limit forces)
    rbd = fit_rigid_body(RigidBodyRegressor(default_urdf().read_text(), NAMES), q, dq, ddq,
                         SimArm().inverse_dynamics(q, dq, ddq, friction=True))
    good = save_artifact(LearnedModel(NAMES, "rbd", rbd=rbd, dead_zone=DeadZone(NAMES, None, np.full(3, 0.01),
                                                                                   np.full(3, 0.02))),
                         tmp_path / "good", onnx=False).path
    return wrong, current, good


def test_a_running_controller_refuses_bad_models_keeps_controlling_and_takes_a_good_one(processes, ros_probe,
                                                                                        tmp_path):
    wrong, current, good = _artifacts(tmp_path)
    probe = ros_probe
    stamps: list[float] = []  # simulated time of each /joint_states [s]
    # histories of 10 s at 1 kHz: in lockstep nothing waits for this probe, and one that falls behind on a busy
    # machine must lose nothing
    probe.listen("/joint_states", JointState, qos=10000, keep=lambda m: stamps.append(stamp_to_s(m.header.stamp)))
    commands = probe.listen("/effort_controller/commands", Float64MultiArray, qos=10000, keep=lambda m: list(m.data))
    statuses = probe.listen("/diagnostics", DiagnosticArray, qos=10, keep=lambda m: m.status[0])
    stamped = probe.listen("/feedforward_controller/command_stamped", JointState, qos=10000,
                           keep=lambda m: (stamp_to_s(m.header.stamp), np.array(m.effort)))
    sim = processes.start([executable("sim_arm"), "--ros-args", "--params-file", SIM_PARAMS,
                           "-p", "clock_mode:=sim", "-p", "lockstep:=true"], "sim")
    ctl = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                           "-p", "mode:=ctc_dob", "-p", "use_sim_time:=true", "-p", "diagnostics_rate:=20.0",
                           "-p", "stamped_command:=true", "-p", f"torque_rate_limit:={[RATE] * 3}"], "ffc")

    def log() -> str:
        return processes.log(ctl) + processes.log(sim)

    def run_for(seconds: float) -> np.ndarray:
        """Spin until the controller has answered ``seconds`` [s] more of simulated time (lockstep: only answered
        states advance it); fail only when that stops advancing. Returns the torques it sent for the states of that
        window, (n, 3) [N m] from ~/command_stamped, counted by their stamps in simulated time: a count of the
        commands the probe happened to take meanwhile would count how far behind a busy probe is (under load one
        run took 328 in 0.5 s while the controller answered every state)."""
        while not (stamps and commands and stamped):  # every subscription of the probe matched
            probe.spin(0.05)
        start = stamped[-1][0]
        end = start + seconds
        wait_for_progress(lambda: (probe.spin(0.02), stamped[-1][0] > end)[1], lambda: stamped[-1][0], period=0.0,
                          log=log)
        return np.array([tau for t, tau in stamped if start < t <= end])

    def set_model(service: str, **values) -> tuple[bool, str]:
        """Ask ~/swap_model or the parameter service (same request type) for the model ``values``."""
        request = SetParametersAtomically.Request(
            parameters=[Parameter(k, value=v).to_parameter_msg() for k, v in values.items()])
        result = probe.call(SetParametersAtomically, f"/feedforward_controller/{service}", request, timeout=30.0,
                            log=log).result
        return result.successful, result.reason

    def latest_status() -> DiagnosticStatus:
        n = len(statuses)
        probe.spin(30.0, until=lambda: len(statuses) > n + 1)  # one published after the request was answered
        return statuses[-1]

    run_for(0.2)  # past the start (the probe's subscriptions match one after the other)
    assert len(run_for(0.5)) >= 450, log()  # controlling, ~1 command per simulated ms
    for service, path, why in (("swap_model", wrong, "missing from the model ['joint3'], not controlled ['elbow']"),
                               ("set_parameters_atomically", current, "not N·m")):
        ok, reason = set_model(service, model="learned", model_path=str(path))
        assert not ok and reason.startswith("model swap refused: ") and why in reason, reason
        assert f"model swap refused model 'learned' from {path}" in processes.log(ctl)
        status = latest_status()
        values = {kv.key: kv.value for kv in status.values}
        assert status.level == DiagnosticStatus.WARN and why in status.message, status
        assert values["model"] == "rbd" and values["model_path"] == "" and why in values["model_swap"], values
        sent = commands[-1]
        window = run_for(0.5)  # control goes on with the old model: ~1 command per simulated ms, within the limits
        assert len(window) >= 450, f"{len(window)} commands in 0.5 s of simulated time after the refusal\n{log()}"
        assert np.all(np.abs(window) <= LIMITS) and np.all(np.isfinite(window)), sent
    ok, reason = set_model("swap_model", model="learned", kp=[1.0, 1.0, 1.0])
    assert not ok and "~/swap_model takes only" in reason and "not ['kp']" in reason, reason
    ok, reason = set_model("swap_model", model="learned", model_path=str(good))
    assert ok, reason
    got = probe.call(GetParameters, "/feedforward_controller/get_parameters",
                     GetParameters.Request(names=["model", "model_path"]), log=log).values
    assert [got[0].string_value, got[1].string_value] == ["learned", str(good)]  # the parameters say which runs
    assert f"model swapped to model 'learned' from {good}" in processes.log(ctl), processes.log(ctl)
    status = latest_status()
    values = {kv.key: kv.value for kv in status.values}
    assert values["model"] == "learned" and values["model_path"] == str(good), values
    assert values["model_swap"].startswith("swapped to") and "accepted" in values["model_swap"], values
    window = run_for(0.5)
    assert len(window) >= 450, log()
    assert abs(window[-1][1]) > 0.5  # holding joint2 against gravity with the learned model
    # the rate limit held across every swap and refusal: no step beyond RATE * min(dt, rate_limit_max_period)
    t, tau = np.array([s for s, _ in stamped]), np.array([e for _, e in stamped])
    assert len(t) > 2000 and np.all(np.diff(t) > 0), "~/command_stamped lost commands or went back"
    allowed = RATE * np.minimum(np.diff(t), 0.002)[:, None]
    assert np.all(np.abs(np.diff(tau, axis=0)) <= allowed + 1e-9), np.abs(np.diff(tau, axis=0)).max()
    assert processes.stop(ctl) == 0, processes.log(ctl)
    processes.stop(sim)
