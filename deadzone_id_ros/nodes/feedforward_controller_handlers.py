"""The feedforward controller node's services and parameter callback: ``~/reset``, live parameters, ``~/swap_model``.

A base class of :class:`~deadzone_id_ros.nodes.feedforward_controller.FeedforwardControllerNode` (split off its module
to keep each file short); the behaviour is documented in that module's docstring.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from rcl_interfaces.msg import SetParametersResult
from rcl_interfaces.srv import SetParametersAtomically
from rclpy.clock import Clock
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_srvs.srv import Trigger

from ..control.model_swap import MODEL_FIELDS
from .feedforward_controller_parameters import split_request

if TYPE_CHECKING:
    from rclpy.timer import Timer

    from ..control import ControllerConfig, FeedforwardController
    from ..control.feedforward_controller_params import ControllerNodeConfig
    from ..control.reference_pipeline import ReferencePipeline
    from ..stamps import EpochSeconds
    from .feedforward_controller_parameters import ModelSwapper

__all__ = ["ControllerHandlers"]


class ControllerHandlers(Node):
    """``~/reset``, the set-parameters callback and ``~/swap_model`` of the feedforward controller node."""

    controller: FeedforwardController
    config: ControllerConfig
    node_config: ControllerNodeConfig
    debug_decimation: int
    _pipeline: ReferencePipeline
    _swapper: ModelSwapper
    _time: EpochSeconds
    _steady: Clock
    _watchdog_timer: Timer

    def _on_watchdog(self) -> None:  # pragma: no cover - the node defines it
        raise NotImplementedError

    def _report_watchdog(self) -> None:  # pragma: no cover - the node defines it
        raise NotImplementedError

    def _on_reset(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        """~/reset (std_srvs/Trigger): leave the safe state; refused (success false, with the reason) while a joint
        is outside its position limits."""
        fault = self.controller.status.fault
        reason = self.controller.reset_fault()
        response.success = not reason
        if not reason and fault:
            self._pipeline.clear()  # references sent before the reset: dropped with the reference
        if reason:
            response.message = f"reset refused: {reason}"
            self.get_logger().error(response.message)
        elif fault:
            response.message = (f"fault cleared after the state of t = {self._time.text(self.controller.last_stamp)} "
                                "s; holding the current position until a new reference arrives")
            self.get_logger().warning(f"{response.message} (was: {fault})")
        else:
            response.message = "no fault latched"
        self._report_watchdog()
        return response

    def _on_set_parameters(self, params: list) -> SetParametersResult:
        """Validate a set-parameters request as a whole and apply it live, or refuse it with the reason (answered
        and logged: the node's log says why a ``ros2 param set`` did nothing)."""
        result = self._apply_parameters(params)
        if not result.successful:
            self.get_logger().warning(f"parameters refused: {result.reason}")
        return result

    def _apply_parameters(self, params: list) -> SetParametersResult:
        """The work of :meth:`_on_set_parameters`."""
        core, node, reason = split_request(params)
        if reason:
            return SetParametersResult(successful=False, reason=reason)
        try:
            new_config = dataclasses.replace(self.config, **core)
            new_node_config = dataclasses.replace(self.node_config, **node)
            if (core or node) and self._swapper.busy:
                return SetParametersResult(successful=False, reason="a model swap is in progress (~/swap_model)")
            if any(getattr(new_config, f) != getattr(self.config, f) for f in MODEL_FIELDS):
                reason = self._swapper.swap(new_config)  # the control loop waits (~/swap_model: it does not)
                if reason:
                    return SetParametersResult(successful=False, reason=reason)
            self.controller.update_config(new_config)
        except (TypeError, ValueError) as err:
            return SetParametersResult(successful=False, reason=str(err))
        if new_config.watchdog_timeout != self.config.watchdog_timeout:
            self.destroy_timer(self._watchdog_timer)
            self._watchdog_timer = self.create_timer(new_config.watchdog_timeout / 5.0, self._on_watchdog,
                                                     clock=self._steady)
        self.config, self.node_config = new_config, new_node_config
        self.debug_decimation = new_node_config.debug_decimation
        if core or node:
            applied = ", ".join(f"{k} = {v!r}" for k, v in sorted({**core, **node}.items()))
            self.get_logger().info(f"parameters applied: {applied}")
        return SetParametersResult(successful=True)

    async def _on_swap_model(self, request: SetParametersAtomically.Request,
                             response: SetParametersAtomically.Response) -> SetParametersAtomically.Response:
        """~/swap_model (rcl_interfaces/SetParametersAtomically with model parameters only): load and check the model
        in a worker thread while control goes on, install it between ticks, then set the parameters to it; answers
        successful, or not with the reason (the old model keeps running)."""
        config, changes, reason = await self._swapper.serve(self.config, request.parameters)
        if not reason:  # the parameters say which model runs (no second swap: self.config has it already)
            self.config = config
            self.set_parameters([Parameter(k, value=v) for k, v in changes.items()])
        response.result = SetParametersResult(successful=not reason, reason=reason)
        return response
