"""The thin rclpy nodes (the only ROS code of the package): sim_arm, excitation, recorder, feedforward_controller,
bag_replay, each a ``main`` entry point. Each node's parameter dataclass and file loader are ROS-free and live beside
the config they load (``control/feedforward_controller_params.py``, ``control/excitation_params.py``,
``sim/sim_arm_params.py``, ``sim/bag_replay_params.py``), so that no core module imports ``nodes``. ``_common``
declares parameters from those dataclasses and runs a node; ``graph_client`` is the short-lived client behind
``deadzone-id record`` and ``deadzone-id status``."""
