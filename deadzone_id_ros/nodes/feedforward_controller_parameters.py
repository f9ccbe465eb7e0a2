"""Set-parameters requests and model swaps of the feedforward_controller node.

:func:`split_request` sorts a request into the changes of the node's two configurations; :class:`ModelSwapper` loads
and checks the model a configuration names and swaps it into the running controller, either in the calling thread
(a set-parameters request: the control loop waits for the load) or in a worker thread while the control loop goes on
(the ``~/swap_model`` service), and keeps the outcome for the log and /diagnostics.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rclpy.parameter import Parameter
from rclpy.task import Future

from ..control import ControllerConfig, FeedforwardController, swap_configured_model
from ..control.feedforward_controller_params import PARAMETER_RANGES, ControllerNodeConfig
from ..control.model_swap import MODEL_FIELDS, SwapVerdict
from ..sensing.sensor import SENSING_RANGES
from ._common import check_range, parameter_value

if TYPE_CHECKING:
    from rcl_interfaces.msg import Parameter as ParameterMsg
    from rclpy.impl.rcutils_logger import RcutilsLogger

__all__ = ["ModelSwapper", "split_request"]

_CORE = frozenset(f.name for f in dataclasses.fields(ControllerConfig))
_NODE = frozenset(f.name for f in dataclasses.fields(ControllerNodeConfig))


def split_request(params: Iterable[Parameter]) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(changes of :class:`ControllerConfig`, changes of :class:`ControllerNodeConfig`, "" or why the request is
    refused) for ``params`` (rclpy Parameters: ``name``, ``value``). Values come as the dataclass fields take them
    (tuples, floats); a value outside its range (:data:`PARAMETER_RANGES`; the sensing ones: :data:`SENSING_RANGES`)
    refuses the request, naming it. Other parameters (use_sim_time, ...) are rclpy's business and left out."""
    core: dict[str, Any] = {}
    node: dict[str, Any] = {}
    for p in params:
        if p.name not in _CORE and p.name not in _NODE:
            continue
        value = p.value
        if not isinstance(value, (str, bool, int, float)) and value is not None:
            value = list(value)
        reason = check_range(p.name, value, PARAMETER_RANGES.get(p.name) or SENSING_RANGES.get(p.name))
        if reason:
            return {}, {}, reason
        cls = ControllerConfig if p.name in _CORE else ControllerNodeConfig
        try:
            (core if cls is ControllerConfig else node)[p.name] = parameter_value(cls, p.name, value)
        except ValueError as err:
            return {}, {}, str(err)
    return core, node, ""


class ModelSwapper:
    """Swaps the model of a running controller and remembers the outcome.

    Args:
        controller: the node's controller.
        logger: the node's logger (an accepted swap is logged as info, a refused one as an error).

    Attributes:
        report: the last swap's outcome for /diagnostics ("swapped to ..." / "refused ..."; "" before any).
        busy: a swap runs in a worker thread now (the node refuses other parameter changes meanwhile).
    """

    def __init__(self, controller: FeedforwardController, logger: RcutilsLogger) -> None:
        self.controller = controller
        self.logger = logger
        self.report = ""
        self.busy = False

    def swap(self, config: ControllerConfig) -> str:
        """Load the model ``config`` names, check it and swap it in, in the calling thread; "" when accepted, else
        the reason the request fails with."""
        c0 = time.perf_counter()
        verdict = swap_configured_model(self.controller, config)
        return self._outcome(config, verdict, time.perf_counter() - c0)

    async def swap_in_worker(self, config: ControllerConfig) -> str:
        """:meth:`swap` in a worker thread, awaited (the executor runs the control callbacks meanwhile; the model is
        installed by one assignment, between two ticks as a tick sees it). Refused while another one runs."""
        if self.busy:
            return "model swap refused: another model swap is in progress"
        done: Future[tuple[SwapVerdict, float]] = Future()

        def work() -> None:
            c0 = time.perf_counter()
            verdict = swap_configured_model(self.controller, config)
            done.set_result((verdict, time.perf_counter() - c0))

        self.busy = True
        try:
            threading.Thread(target=work, name="model_swap", daemon=True).start()
            result = await done
        finally:
            self.busy = False
        assert result is not None  # set_result is the thread's last act
        return self._outcome(config, *result)

    async def serve(self, config: ControllerConfig, params: Iterable[ParameterMsg]
                    ) -> tuple[ControllerConfig, dict[str, Any], str]:
        """A ``~/swap_model`` request: ``params`` (rcl_interfaces Parameter messages) set model fields only
        (:data:`.model_swap.MODEL_FIELDS`) of ``config`` (the node's); swapped in a worker thread
        (:meth:`swap_in_worker`). Returns (the new config, the changes {name: value}, "" or why it was refused)."""
        core, node, reason = split_request(Parameter.from_parameter_msg(p) for p in params)
        others = sorted(set(core) - set(MODEL_FIELDS)) + sorted(node)
        if not reason and others:
            reason = f"~/swap_model takes only {list(MODEL_FIELDS)}, not {others}"
        if reason:
            return config, core, reason
        try:
            new = dataclasses.replace(config, **core)
        except (TypeError, ValueError) as err:
            return config, core, str(err)
        return new, core, await self.swap_in_worker(new)

    def _outcome(self, config: ControllerConfig, verdict: SwapVerdict, seconds: float) -> str:
        took = f"{1e3 * seconds:.1f} ms"
        target = f"model {config.model!r}" + (f" from {config.model_path}" if config.model_path else "")
        if verdict.accepted:
            self.report = f"swapped to {target} ({took}): {verdict.reason}"
            self.logger.info(f"model {self.report}")
            return ""
        self.report = f"refused {target} ({took}); the previous model keeps running: {verdict.reason}"
        self.logger.error(f"model swap {self.report}")
        return f"model swap refused: {verdict.reason}"
