"""Inverse-dynamics models (core): the shared interface, MLPs and losses, the rigid-body baseline, artifacts, and the
runtime models a controller loads (:mod:`.runtime`).

Method: Inami, Yamane, Sakaino, "Loss Function Considering Dead Zone for Neural Networks", arXiv 2402.00393.
"""

from __future__ import annotations

from .artifact import export_onnx, load_artifact, save_artifact, sha256_file
from .base import InverseDynamicsModel, check_joint_arrays
from .losses import (
    LOSSES,
    BandLoss,
    Loss,
    MaskedLoss,
    MSELoss,
    conventional_keep,
    identify_band,
    make_loss,
    register_loss,
)
from .methods import Method, get_method, register_method
from .mlp import ACTIVATIONS, MLPConfig, MLPWeights, Standardizer, build_torch_mlp, mlp_from_torch, torch_from_mlp
from .predictor import METHODS, LearnedModel
from .rbd import RigidBodyModel, RigidBodyRegressor, fit_rigid_body
from .runtime import NominalRigidBodyModel, OnnxModel, ZeroModel, load_model

__all__ = [
    "ACTIVATIONS",
    "LOSSES",
    "METHODS",
    "BandLoss",
    "InverseDynamicsModel",
    "LearnedModel",
    "Loss",
    "MLPConfig",
    "MSELoss",
    "MaskedLoss",
    "Method",
    "MLPWeights",
    "NominalRigidBodyModel",
    "OnnxModel",
    "RigidBodyModel",
    "RigidBodyRegressor",
    "Standardizer",
    "ZeroModel",
    "build_torch_mlp",
    "check_joint_arrays",
    "conventional_keep",
    "export_onnx",
    "fit_rigid_body",
    "get_method",
    "identify_band",
    "load_artifact",
    "load_model",
    "make_loss",
    "mlp_from_torch",
    "register_loss",
    "register_method",
    "save_artifact",
    "sha256_file",
    "torch_from_mlp",
]
