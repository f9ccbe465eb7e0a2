"""Multi-layer perceptron f(q, dq, ddq) -> tau with input/output standardization (core, no ROS).

The network sees standardized inputs ``(x - in_mean) / in_std`` and predicts standardized torques; the statistics
come from the training split and travel with the weights (:class:`MLPWeights`), so a saved model reproduces its
predictions exactly. Training uses torch (:func:`build_torch_mlp`); inference uses a plain numpy forward pass
(:meth:`MLPWeights.forward`) that is cheap for one sample per control tick.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "ACTIVATIONS",
    "MLPConfig",
    "MLPWeights",
    "Standardizer",
    "build_torch_mlp",
    "mlp_from_torch",
    "torch_from_mlp",
]

#: Activation names accepted by :class:`MLPConfig` (torch module name, numpy implementation).
ACTIVATIONS: tuple[str, ...] = ("elu", "relu", "silu", "tanh")


def _np_activation(name: str, x: np.ndarray) -> np.ndarray:
    if name == "relu":
        return np.maximum(x, 0.0)
    if name == "tanh":
        return np.tanh(x)
    if name == "silu":
        return x / (1.0 + np.exp(-x))
    if name == "elu":
        return np.where(x > 0, x, np.expm1(np.minimum(x, 0.0)))
    raise ValueError(f"activation = {name!r} must be one of {list(ACTIVATIONS)}")


@dataclass(frozen=True)
class MLPConfig:
    """Architecture of the MLP.

    Attributes:
        hidden_sizes: widths of the hidden layers, e.g. (256, 256) (depth = len(hidden_sizes)); each >= 1.
        activation: one of :data:`ACTIVATIONS`.
    """

    hidden_sizes: tuple[int, ...] = (256, 256)
    activation: str = "relu"

    def __post_init__(self) -> None:
        if len(self.hidden_sizes) == 0:
            raise ValueError("hidden_sizes is empty; give at least one hidden layer width")
        for i, w in enumerate(self.hidden_sizes):
            if not isinstance(w, int) or isinstance(w, bool) or w < 1:
                raise ValueError(f"hidden_sizes[{i}] = {w!r} must be a positive integer")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation = {self.activation!r} must be one of {list(ACTIVATIONS)}")


@dataclass(frozen=True)
class Standardizer:
    """Per-column affine normalization ``(x - mean) / std``.

    Attributes:
        mean: (D,) column means (units of the data).
        std: (D,) column standard deviations; columns with std below 1e-12 (constant) use 1.
    """

    mean: np.ndarray
    std: np.ndarray

    @classmethod
    def fit(cls, x: np.ndarray, mask: np.ndarray | None = None) -> Standardizer:
        """Fit on x: (N, D); with ``mask`` (N, D) bool, each column uses only its True entries.

        Raises:
            ValueError: x is not 2-D, or the mask shape differs from x.
        """
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2:
            raise ValueError(f"x must be 2-D (N, D), got shape {x.shape}")
        if mask is None:
            mean, std = (
                x.mean(axis=0) if len(x) else np.zeros(x.shape[1]),
                x.std(axis=0) if len(x) else np.ones(x.shape[1]),
            )
        else:
            mask = np.asarray(mask, dtype=bool)
            if mask.shape != x.shape:
                raise ValueError(f"mask must have the shape of x {x.shape}, got {mask.shape}")
            n = np.maximum(mask.sum(axis=0), 1)
            mean = (x * mask).sum(axis=0) / n
            std = np.sqrt((((x - mean) ** 2) * mask).sum(axis=0) / n)
        std = np.where(std > 1e-12, std, 1.0)
        return cls(np.asarray(mean, dtype=np.float64), np.asarray(std, dtype=np.float64))


@dataclass(frozen=True)
class MLPWeights:
    """A trained MLP as plain arrays: everything needed to predict, save and export it.

    Attributes:
        weights: per layer (out, in) matrices, float32.
        biases: per layer (out,) vectors, float32.
        activation: hidden-layer activation (see :data:`ACTIVATIONS`); the output layer is linear.
        x_norm: input standardizer, D = 3J inputs [q (rad), dq (rad/s), ddq (rad/s²)].
        y_norm: output standardizer, J torques [N·m].
    """

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    activation: str
    x_norm: Standardizer
    y_norm: Standardizer

    def __post_init__(self) -> None:
        if len(self.weights) != len(self.biases) or not self.weights:
            raise ValueError(f"need as many weight matrices as bias vectors (>= 1), got {len(self.weights)} and "
                             f"{len(self.biases)}")
        prev = self.weights[0].shape[1]
        for k, (w, b) in enumerate(zip(self.weights, self.biases)):
            if w.ndim != 2 or w.shape[1] != prev or b.shape != (w.shape[0],):
                raise ValueError(f"layer {k}: weight {w.shape} / bias {b.shape} do not chain from width {prev}")
            prev = w.shape[0]
        if self.x_norm.mean.shape != (self.n_inputs,) or self.y_norm.mean.shape != (self.n_outputs,):
            raise ValueError(f"normalization shapes {self.x_norm.mean.shape}/{self.y_norm.mean.shape} do not match "
                             f"the network ({self.n_inputs} in, {self.n_outputs} out)")
        _np_activation(self.activation, np.zeros(1))
        # float64 copies for the inference path, normalization folded into the first and last layers (once).
        w64 = [np.ascontiguousarray(w.T, dtype=np.float64) for w in self.weights]
        b64 = [b.astype(np.float64) for b in self.biases]
        w64[0] = w64[0] / self.x_norm.std[:, None]
        b64[0] = b64[0] - self.x_norm.mean @ w64[0]
        w64[-1] = w64[-1] * self.y_norm.std[None, :]
        b64[-1] = b64[-1] * self.y_norm.std + self.y_norm.mean
        object.__setattr__(self, "_w64", w64)
        object.__setattr__(self, "_b64", b64)
        object.__setattr__(self, "_relu", self.activation == "relu")

    @property
    def n_inputs(self) -> int:
        """Input width D (= 3J)."""
        return int(self.weights[0].shape[1])

    @property
    def n_outputs(self) -> int:
        """Output width J."""
        return int(self.weights[-1].shape[0])

    @property
    def hidden_sizes(self) -> tuple[int, ...]:
        """Widths of the hidden layers."""
        return tuple(int(w.shape[0]) for w in self.weights[:-1])

    def forward(self, x: np.ndarray) -> np.ndarray:
        """Predict from raw inputs x: (N, D) or (D,) [q, dq, ddq] -> (N, J) or (J,) torque [N·m] (numpy, float64)."""
        w64, b64 = self._w64, self._b64  # type: ignore[attr-defined]
        h = x
        for k in range(len(w64) - 1):
            h = h @ w64[k]
            h += b64[k]
            if self._relu:  # type: ignore[attr-defined]
                np.maximum(h, 0.0, out=h)
            else:
                h = _np_activation(self.activation, h)
        h = h @ w64[-1]
        h += b64[-1]
        return h

    def arrays(self, prefix: str = "mlp.") -> dict[str, np.ndarray]:
        """Flat name -> array mapping for saving (``{prefix}layer{k}.weight``, ..., normalization)."""
        out: dict[str, np.ndarray] = {}
        for k, (w, b) in enumerate(zip(self.weights, self.biases)):
            out[f"{prefix}layer{k}.weight"] = w
            out[f"{prefix}layer{k}.bias"] = b
        out[f"{prefix}x_mean"], out[f"{prefix}x_std"] = self.x_norm.mean, self.x_norm.std
        out[f"{prefix}y_mean"], out[f"{prefix}y_std"] = self.y_norm.mean, self.y_norm.std
        return out

    @classmethod
    def from_arrays(
        cls, arrays: dict[str, np.ndarray], n_layers: int, activation: str, prefix: str = "mlp."
    ) -> MLPWeights:
        """Inverse of :meth:`arrays`; raises KeyError naming a missing array, ValueError on inconsistent shapes."""
        ws = tuple(np.asarray(arrays[f"{prefix}layer{k}.weight"], dtype=np.float32) for k in range(n_layers))
        bs = tuple(np.asarray(arrays[f"{prefix}layer{k}.bias"], dtype=np.float32) for k in range(n_layers))
        return cls(
            ws,
            bs,
            activation,
            Standardizer(np.asarray(arrays[f"{prefix}x_mean"], float), np.asarray(arrays[f"{prefix}x_std"], float)),
            Standardizer(np.asarray(arrays[f"{prefix}y_mean"], float), np.asarray(arrays[f"{prefix}y_std"], float)),
        )


def build_torch_mlp(n_inputs: int, n_outputs: int, config: MLPConfig):
    """Return a torch ``nn.Sequential``: Linear/activation blocks of ``config.hidden_sizes``, then a linear output.

    Initialization is torch's default (Kaiming-uniform), drawn from torch's global RNG (seed it first).
    """
    import torch.nn as nn

    act = {"relu": nn.ReLU, "tanh": nn.Tanh, "silu": nn.SiLU, "elu": nn.ELU}[config.activation]
    layers: list = []
    prev = n_inputs
    for w in config.hidden_sizes:
        layers += [nn.Linear(prev, w), act()]
        prev = w
    layers.append(nn.Linear(prev, n_outputs))
    return nn.Sequential(*layers)


def mlp_from_torch(net, activation: str, x_norm: Standardizer, y_norm: Standardizer) -> MLPWeights:
    """Copy the Linear layers of a torch ``nn.Sequential`` (from :func:`build_torch_mlp`) into :class:`MLPWeights`."""
    import torch.nn as nn

    lin = [m for m in net if isinstance(m, nn.Linear)]
    return MLPWeights(
        tuple(m.weight.detach().cpu().numpy().astype(np.float32).copy() for m in lin),
        tuple(m.bias.detach().cpu().numpy().astype(np.float32).copy() for m in lin),
        activation, x_norm, y_norm,
    )


def torch_from_mlp(mlp: MLPWeights):
    """Rebuild a torch module mapping raw inputs (N, D) to torques (N, J), normalization included (for ONNX export)."""
    import torch
    import torch.nn as nn

    net = build_torch_mlp(mlp.n_inputs, mlp.n_outputs, MLPConfig(mlp.hidden_sizes, mlp.activation))
    lin = [m for m in net if isinstance(m, nn.Linear)]
    with torch.no_grad():
        for m, w, b in zip(lin, mlp.weights, mlp.biases):
            m.weight.copy_(torch.from_numpy(np.asarray(w, dtype=np.float32)))
            m.bias.copy_(torch.from_numpy(np.asarray(b, dtype=np.float32)))

    class _Normalized(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net
            self.register_buffer("x_mean", torch.tensor(mlp.x_norm.mean, dtype=torch.float32))
            self.register_buffer("x_std", torch.tensor(mlp.x_norm.std, dtype=torch.float32))
            self.register_buffer("y_mean", torch.tensor(mlp.y_norm.mean, dtype=torch.float32))
            self.register_buffer("y_std", torch.tensor(mlp.y_norm.std, dtype=torch.float32))

        def forward(self, x):
            return self.net((x - self.x_mean) / self.x_std) * self.y_std + self.y_mean

    return _Normalized().eval()
