"""Inverse-dynamics models (core): the shared interface, MLPs and losses, the rigid-body baseline, artifacts, and the
runtime models a controller loads (:mod:`.runtime`).

Method: Inami, Yamane, Sakaino, "Loss Function Considering Dead Zone for Neural Networks", arXiv 2402.00393.
"""

from __future__ import annotations

from .artifact import export_onnx, load_artifact, save_artifact, sha256_file
from .base import InverseDynamicsModel, check_joint_arrays
from .losses import LOSSES, band_mse, conventional_keep, identify_band, masked_mse, mse
from .mlp import ACTIVATIONS, MLPConfig, MLPWeights, Standardizer, build_torch_mlp, mlp_from_torch, torch_from_mlp
from .predictor import METHODS, LearnedModel
from .rbd import RigidBodyModel, RigidBodyRegressor, fit_rigid_body
from .runtime import NominalRigidBodyModel, OnnxModel, ZeroModel, load_model

__all__ = [
    "ACTIVATIONS",
    "LOSSES",
    "METHODS",
    "InverseDynamicsModel",
    "LearnedModel",
    "MLPConfig",
    "MLPWeights",
    "NominalRigidBodyModel",
    "OnnxModel",
    "RigidBodyModel",
    "RigidBodyRegressor",
    "Standardizer",
    "ZeroModel",
    "band_mse",
    "build_torch_mlp",
    "check_joint_arrays",
    "conventional_keep",
    "export_onnx",
    "fit_rigid_body",
    "identify_band",
    "load_artifact",
    "load_model",
    "masked_mse",
    "mlp_from_torch",
    "mse",
    "save_artifact",
    "sha256_file",
    "torch_from_mlp",
]
