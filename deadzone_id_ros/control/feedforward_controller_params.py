"""Parameters of the feedforward_controller node (ROS-free: no rclpy import, so the loader works without ROS).

The parameter file (config/feedforward_controller.yaml) holds two configs: the control law,
:class:`deadzone_id_ros.control.ControllerConfig`, and the node-only :class:`ControllerNodeConfig` below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..config import check_positive, load_node_configs
from ..realtime import check_realtime
from .config import DOB_DISCRETIZATIONS, FEEDFORWARD_VELOCITIES, MODEL_KINDS, MODES, ControllerConfig

__all__ = ["LIVE_PARAMETERS", "PARAMETER_CHOICES", "PARAMETER_RANGES", "ControllerNodeConfig",
           "load_controller_config"]

#: The allowed values of the node's string parameters that take one of a few (``ros2 param describe`` shows them).
PARAMETER_CHOICES: dict[str, tuple[str, ...]] = {
    "mode": MODES,
    "model": MODEL_KINDS,
    "feedforward_velocity": FEEDFORWARD_VELOCITIES,
    "dob_discretization": DOB_DISCRETIZATIONS,
}

# Range of every numeric parameter of the node, (lo, hi) inclusive, in the field's unit (per-joint lists: each value).
# The ranges bound what a user may type; the config dataclasses check the finer rules (> 0, the DOB cutoff bound).
PARAMETER_RANGES: dict[str, tuple[float, float]] = {
    "friction_velocity": (1e-6, 10.0),
    "kp": (0.0, 1e7),
    "kd": (0.0, 1e4),
    "nominal_inertia": (1e-6, 1e3),
    "dob_cutoff": (0.0, 1e6),
    "control_rate": (0.0, 1e5),  # 0: the robot profile's
    "armature": (0.0, 1e3),
    "frictionloss": (0.0, 1e4),
    "damping": (0.0, 1e4),
    "effort_limit": (0.0, 1e5),
    "effort_limit_scale": (0.0, 1.0),
    "torque_rate_limit": (0.0, 1e7),
    "watchdog_timeout": (1e-4, 10.0),
    "watchdog_hold_time": (0.0, 60.0),
    "rate_limit_max_period": (1e-5, 1.0),
    "tracking_error_limit": (1e-4, 10.0),
    "position_limit_margin": (0.0, 1.0),
    "fault_hold_time": (0.0, 60.0),
    "diagnostics_rate": (0.0, 100.0),
    "debug_decimation": (0, 1_000_000),
    "wait_for_subscribers": (0, 100),
    "wait_for_reference_publishers": (0, 100),
    "watchdog_steady_timeout": (1e-3, 60.0),
    "thread_priority": (0, 99),
    "sensing_worker_priority": (0, 99),
    "sensing_worker_wait_for_subscribers": (0, 100),
    "reference_lead": (1e-4, 1.0),
}

# Parameters a running node applies when set (validated first; a bad value is refused with the reason). Every other
# parameter is read-only: it shapes what the node built at start (model, joints, publishers, timers).
LIVE_PARAMETERS = ("kp", "kd", "nominal_inertia", "dob_cutoff", "dob_discretization", "feedforward_velocity",
                   "effort_limit_scale",
                   "torque_rate_limit", "watchdog_timeout", "watchdog_hold_time", "rate_limit_max_period",
                   "tracking_error_limit", "position_limit_margin", "fault_hold_time", "debug_decimation",
                   "watchdog_steady_timeout")


@dataclass(frozen=True)
class ControllerNodeConfig:
    """ROS-side settings of the feedforward_controller node.

    Attributes:
        command_joint_names: (J,) joint order of /effort_controller/commands (the effort controller's joint list);
            must hold the same joints as ``joint_names`` (any order; mapped by name). Required (no default): a
            robot profile's ``command_joints`` (:func:`deadzone_id_ros.robot_configs.controller_node_config`).
        diagnostics_rate: /diagnostics publication rate [Hz], in (0, 100].
        debug_decimation: publish ~/torque_parts every this many ticks; 0 disables it.
        stamped_command: also publish ~/command_stamped (sensor_msgs/JointState, effort = every command, stamped
            with the /joint_states message it answers and carrying its q_d in position, or with the watchdog's time)
            for latency measurement and soak checks.
        watchdog_steady_timeout: steady-clock backstop of the watchdog [s]: no /joint_states for this long in
            wall time starts the watchdog even when the ROS clock (simulated time, /clock) has stopped.
        thread_priority: SCHED_FIFO priority (1..99) of the node's threads, as ros2_control_node's
            ``thread_priority``; 0 keeps normal scheduling. Refused by the kernel: a warning, normal scheduling.
        lock_memory: mlockall(MCL_CURRENT | MCL_FUTURE) at start (no page faults in the loop); refused: a warning.
        cpu_affinity: CPUs the node's threads may run on (empty: any CPU); refused: a warning.
        reference_lead: a ~/reference message takes effect this long after it arrives [s] (controller clock): the
            time a worker thread has to prepare it off the control thread
            (:class:`deadzone_id_ros.control.reference_pipeline.ReferencePipeline`).
        wait_for_subscribers: answer no /joint_states until /effort_controller/commands has this many matched
            subscribers (a lockstep simulation: the simulator and the recorder, so that the recording holds every
            command; the simulator holds time until the first answer). 0 (default): command at once, as on real
            hardware, where a controller never waits on a recorder.
        wait_for_reference_publishers: and until ~/reference has this many matched publishers (a lockstep
            simulation: the excitation), so that simulated time does not run on while the reference's publisher is
            still starting (the rest before the motion then depends on start-up order and machine load: a live run
            of the learning loop kept 98 training samples of 4 s instead of half). 0 (default): no wait.
        sensing_worker: with ``sensing``, run the force sensor in a process of its own, fed one sample per tick
            through a pipe, instead of in the control loop (:mod:`deadzone_id_ros.nodes.sensing_worker`; the same
            topics and diagnostics). Default false: in the loop.
        sensing_worker_priority: the worker's SCHED_FIFO priority (1..99, below ``thread_priority``), or 0
            (default): normal scheduling.
        sensing_worker_wait_for_subscribers: under ``use_sim_time``, the controller starts (subscribes to
            /joint_states) only once the worker's ~/external_torque has this many matched subscribers (a run
            recording the forces: 1, the recorder), at most
            :data:`~deadzone_id_ros.nodes.sensing_worker.SUBSCRIBER_TIMEOUT` s; a lockstep simulator holds time until
            then, so no estimate is published before the recorder hears it. The worker's topics are discovered apart
            from the controller's: a lockstep recording once lost its first 0.41 s of forces. 0 (default): no wait;
            in wall time it never waits.

    Raises:
        ValueError: a bad value; the message names the field and the value.
    """

    command_joint_names: tuple[str, ...] = field(kw_only=True)
    diagnostics_rate: float = 5.0
    debug_decimation: int = 10
    stamped_command: bool = False
    watchdog_steady_timeout: float = 2.0
    thread_priority: int = 0
    lock_memory: bool = False
    cpu_affinity: tuple[int, ...] = ()
    reference_lead: float = 0.02
    wait_for_subscribers: int = 0
    wait_for_reference_publishers: int = 0
    sensing_worker: bool = False
    sensing_worker_priority: int = 0
    sensing_worker_wait_for_subscribers: int = 0

    def __post_init__(self) -> None:
        check_realtime(self.thread_priority, self.lock_memory, self.cpu_affinity)
        if len(set(self.command_joint_names)) != len(self.command_joint_names):
            raise ValueError(f"command_joint_names has duplicates: {list(self.command_joint_names)}")
        check_positive("diagnostics_rate", self.diagnostics_rate)
        if self.diagnostics_rate > 100:
            raise ValueError(f"diagnostics_rate = {self.diagnostics_rate} must be <= 100 Hz")
        check_positive("debug_decimation", self.debug_decimation, integer=True, allow_zero=True)
        if not isinstance(self.stamped_command, bool):
            raise ValueError(f"stamped_command = {self.stamped_command!r} must be true or false")
        check_positive("watchdog_steady_timeout", self.watchdog_steady_timeout)
        check_positive("reference_lead", self.reference_lead)
        for name in ("wait_for_subscribers", "wait_for_reference_publishers", "sensing_worker_wait_for_subscribers"):
            check_positive(name, getattr(self, name), integer=True, allow_zero=True)
        if not isinstance(self.sensing_worker, bool):
            raise ValueError(f"sensing_worker = {self.sensing_worker!r} must be true or false")
        p = self.sensing_worker_priority
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= 99:
            raise ValueError(f"sensing_worker_priority = {p!r} must be an integer in [0, 99] (0: normal scheduling)")
        if p and p >= self.thread_priority:
            raise ValueError(f"sensing_worker_priority = {p} must be below thread_priority = {self.thread_priority}, "
                             "or 0: a sensing worker must never preempt the control loop")


def load_controller_config(
    path: str | Path | None = None, overrides: dict | None = None, robot: str | None = None
) -> tuple[ControllerConfig, ControllerNodeConfig]:
    """Load the controller configs from a parameter file (default: the bundled config/feedforward_controller.yaml).

    Args:
        path: parameter file in ROS 2 format; None for the bundled default.
        overrides: parameter name -> value applied on top of the file.
        robot: robot profile (a shipped name or a profile file; else the file's or the overrides' ``robot``
            key, else the bundled arm) whose values fill the joints, URDF and per-joint values the file
            leaves out (:func:`deadzone_id_ros.robot.defaults.fill_required`); the file's own values win.

    Raises:
        FileNotFoundError: the file does not exist.
        ConfigError: malformed YAML, an unknown key or a bad value (names the file and key).
    """
    from ..robot.defaults import fill_required

    return load_node_configs(ControllerConfig, ControllerNodeConfig, "feedforward_controller",
                             "feedforward_controller.yaml", path,
                             {**(overrides or {}), **({"robot": robot} if robot else {})},
                             fill=fill_required)
