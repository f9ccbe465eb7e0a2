"""Training and evaluation (core, no ROS); the comparison experiment and its report are in
:mod:`deadzone_id_ros.experiments`.

Method: Inami, Yamane, Sakaino, "Loss Function Considering Dead Zone for Neural Networks", arXiv 2402.00393.
"""

from __future__ import annotations

from .config import TrainConfig, load_train_config
from .evaluate import evaluate_model, evaluate_predictions, json_clean
from .fit import FitResult, Stacked, predict_stacked, stack_episodes, usable_fraction
from .pipeline import MethodRun, PreparedData, TrainingInputs, prepare_data, run_method, train_one
from .planner import SharedFits, fit_method, plan_method, plan_methods
from .sources import detect_simulator, fingerprint, resolve_urdf
from .trainer import EarlyStopping, MLPSpec, TrainArrays, TrainInfo, train_mlp, train_mlps

__all__ = [
    "EarlyStopping",
    "FitResult",
    "MLPSpec",
    "MethodRun",
    "PreparedData",
    "SharedFits",
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
    "plan_method",
    "plan_methods",
    "predict_stacked",
    "prepare_data",
    "resolve_urdf",
    "run_method",
    "stack_episodes",
    "train_mlp",
    "train_mlps",
    "train_one",
    "usable_fraction",
]
