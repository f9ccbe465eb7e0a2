"""Training, evaluation and the comparison report (core, no ROS).

Method: Inami, Yamane, Sakaino, "Loss Function Considering Dead Zone for Neural Networks", arXiv 2402.00393.
"""

from __future__ import annotations

from .compare import quick_config, run_compare
from .config import TrainConfig, load_train_config
from .evaluate import evaluate_model, evaluate_predictions, json_clean
from .fit import FitResult, Stacked, fit_method, stack_episodes, usable_fraction
from .pipeline import MethodRun, PreparedData, TrainingInputs, prepare_data, run_method, train_one
from .results import ClosedLoopResult, CompareReport, DemoReport, MethodResult
from .sources import detect_simulator, fingerprint, resolve_urdf
from .trainer import EarlyStopping, MLPSpec, TrainArrays, TrainInfo, train_mlp, train_mlps

__all__ = [
    "ClosedLoopResult",
    "CompareReport",
    "DemoReport",
    "EarlyStopping",
    "FitResult",
    "MLPSpec",
    "MethodResult",
    "MethodRun",
    "PreparedData",
    "Stacked",
    "TrainArrays",
    "TrainConfig",
    "TrainInfo",
    "TrainingInputs",
    "detect_simulator",
    "evaluate_model",
    "evaluate_predictions",
    "fingerprint",
    "fit_method",
    "json_clean",
    "load_train_config",
    "prepare_data",
    "quick_config",
    "resolve_urdf",
    "run_compare",
    "run_method",
    "stack_episodes",
    "train_mlp",
    "train_mlps",
    "train_one",
    "usable_fraction",
]
