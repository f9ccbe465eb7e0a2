"""Training, evaluation and the comparison report (core, no ROS).

Method: Inami, Yamane, Sakaino, "Loss Function Considering Dead Zone for Neural Networks", arXiv 2402.00393.
"""

from __future__ import annotations

from .batched import MLPSpec, train_mlps
from .compare import CompareInputs, quick_config, run_compare
from .config import TrainConfig, load_train_config
from .evaluate import evaluate_model, evaluate_predictions, json_clean
from .fit import FitResult, Stacked, fit_method, stack_episodes, usable_fraction
from .sources import detect_simulator, fingerprint, resolve_urdf
from .trainer import TrainArrays, TrainInfo, train_mlp

__all__ = [
    "CompareInputs",
    "FitResult",
    "MLPSpec",
    "Stacked",
    "TrainArrays",
    "TrainConfig",
    "TrainInfo",
    "detect_simulator",
    "evaluate_model",
    "evaluate_predictions",
    "fingerprint",
    "fit_method",
    "json_clean",
    "load_train_config",
    "quick_config",
    "resolve_urdf",
    "run_compare",
    "stack_episodes",
    "train_mlp",
    "train_mlps",
    "usable_fraction",
]
