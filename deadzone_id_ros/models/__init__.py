"""Inverse-dynamics models (core): the shared interface, MLPs and losses, the rigid-body baseline, artifacts."""

from __future__ import annotations

from .base import InverseDynamicsModel

__all__ = ["InverseDynamicsModel"]
