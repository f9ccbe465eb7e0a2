"""``deadzone-id sense``: external torque, contact and the dead-zone band of every estimator against the simulator's
true external torque (:mod:`.run`), its typed results (:mod:`.results`) and report (:mod:`.report`)."""

from .report import markdown, write_sense
from .results import EstimatorFigures, FalseContact, PushFigure, SenseResults
from .run import ESTIMATORS, SenseSettings, run_sense

__all__ = ["ESTIMATORS", "EstimatorFigures", "FalseContact", "PushFigure", "SenseResults", "SenseSettings", "markdown",
           "run_sense", "write_sense"]
