"""deadzone_id_ros: inverse-dynamics learning with the dead-zone loss, and feedforward control for ROS 2.

Method: Inami, Yamane, Sakaino, "Loss Function Considering Dead Zone for Neural Networks", arXiv 2402.00393 (2024).

Layout (the ROS-free core never imports rclpy):

- ``robot``     robot description (URDF joints, limits) and rigid-body dynamics helpers (pinocchio)
- ``sim``       the MuJoCo arm with dead zones (core)
- ``data``      bags -> aligned arrays, dead-zone masks, splits, inspect/convert (core)
- ``models``    MLP, losses, rigid-body baseline, model artifacts, fast inference, runtime models (core)
- ``training``  training loops, evaluation, comparison report (core)
- ``control``   computed-torque control, disturbance observer, safety, trajectories (core)
- ``realtime``  SCHED_FIFO priority, locked memory and CPU affinity of a node process, as ros2_control_node's
- ``launching`` the YAML launch-file runner used where ``ros2 launch`` is not installed
- ``experiments`` compare, closed-loop comparison, soak, demo reports: each with its results and report (core)
- ``engine``    where coarse cells run: in-process, or as Ray tasks (Ray, an optional extra, imported only there)
- ``jsonrecord`` typed results read back from the JSON their ``to_dict`` wrote (``from_dict``; core)
- ``nodes``     thin rclpy adapters, one executable per module (their parameter dataclasses and loaders,
                ``*_params``, are ROS-free and live in ``control`` and ``sim``)
- ``cli``       the ``deadzone-id`` command
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
