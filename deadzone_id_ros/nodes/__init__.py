"""The thin rclpy nodes (the only ROS code of the package): sim_arm, excitation, recorder, feedforward_controller,
bag_replay, each a ``main`` entry point, with its parameter dataclass and file loader beside it in a ROS-free
``<node>_params.py``; ``_common`` declares parameters from those dataclasses and runs a node; ``graph_client`` is the
short-lived client behind ``deadzone-id record`` and ``deadzone-id status``."""
