"""Multi-layer perceptron f(q, dq, ddq) -> tau with input/output standardization (core, no ROS).

A continuous joint (no position limit) enters the network on the circle: its angle q_j is replaced by sin q_j and
cos q_j is appended after the angles (:func:`circle_features`), so the model is 2π-periodic in q_j, in training, in
the numpy forward pass and in the ONNX graph alike; the network's raw input stays [q, dq, ddq] (3J).

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
    "block_masks",
    "build_torch_mlp",
    "circle_features",
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


def circle_features(x: np.ndarray, n_joints: int, circular: tuple[int, ...]) -> np.ndarray:
    """The network's features of raw inputs x: (N, 3J) or (3J,) [q (rad), dq (rad/s), ddq (rad/s²)].

    For each joint index c in ``circular`` (continuous joints), q_c is replaced by sin q_c and cos q_c is inserted
    after the J angle columns: features (N, 3J + C) = [q with sin, cos q_circular, dq, ddq]. Without circular
    joints x is returned as it is.

    Raises:
        ValueError: the last dimension of x is not 3J, or an index is outside [0, J).
    """
    if not circular:
        return x
    x = np.asarray(x, dtype=np.float64)
    if x.shape[-1] != 3 * n_joints:
        raise ValueError(f"x must have {3 * n_joints} columns [q, dq, ddq] for {n_joints} joints; got {x.shape}")
    c = list(circular)
    if min(c) < 0 or max(c) >= n_joints:
        raise ValueError(f"circular joint indices {c} must lie in [0, {n_joints})")
    q = x[..., :n_joints].copy()
    qc = x[..., c]
    q[..., c] = np.sin(qc)
    return np.concatenate([q, np.cos(qc), x[..., n_joints:]], axis=-1)


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
        x_norm: input standardizer of the D = 3J + C features (:func:`circle_features` of [q (rad), dq (rad/s),
            ddq (rad/s²)]).
        y_norm: output standardizer, J torques [N·m].
        circular: indices (C,) of the continuous joints, which enter as (sin q, cos q); () for none.
        extra_inputs: E raw inputs after [q, dq, ddq], passed on as they are (the per-joint residual's rigid-body
            torques, E = J); the raw input is then 3J + E wide and the features 3J + C + E.
    """

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    activation: str
    x_norm: Standardizer
    y_norm: Standardizer
    circular: tuple[int, ...] = ()
    extra_inputs: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "circular", tuple(int(c) for c in self.circular))
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
        J, C, E = self.n_outputs, len(self.circular), self.extra_inputs
        if (self.n_inputs != 3 * J + C + E or len(set(self.circular)) != C
                or any(not 0 <= c < J for c in self.circular)):
            extra = f" + {E} extra" if E else ""
            raise ValueError(f"network of {self.n_inputs} inputs and {J} outputs with circular joints "
                             f"{list(self.circular)}: needs 3J + C = {3 * J + C}{extra} inputs and indices in "
                             f"[0, {J})")
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
        """Width D of the first layer (= 3J + C + E features; the raw input is 3J + E wide)."""
        return int(self.weights[0].shape[1])

    @property
    def n_raw_inputs(self) -> int:
        """Width of the raw input [q, dq, ddq, extra inputs] (= 3J + E)."""
        return 3 * self.n_outputs + self.extra_inputs

    @property
    def n_outputs(self) -> int:
        """Output width J."""
        return int(self.weights[-1].shape[0])

    @property
    def hidden_sizes(self) -> tuple[int, ...]:
        """Widths of the hidden layers."""
        return tuple(int(w.shape[0]) for w in self.weights[:-1])

    def forward(self, x: np.ndarray) -> np.ndarray:
        """Predict from raw inputs x: (N, 3J + E) or (3J + E,) [q, dq, ddq, extra inputs] -> (N, J) or (J,) torque
        [N·m] (numpy, float64); continuous joints go through :func:`circle_features` first."""
        w64, b64 = self._w64, self._b64  # type: ignore[attr-defined]
        if self.circular and self.extra_inputs:
            k = 3 * self.n_outputs
            h = np.concatenate([circle_features(x[..., :k], self.n_outputs, self.circular), x[..., k:]], axis=-1)
        else:
            h = circle_features(x, self.n_outputs, self.circular) if self.circular else x
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
        cls, arrays: dict[str, np.ndarray], n_layers: int, activation: str, prefix: str = "mlp.",
        circular: tuple[int, ...] = (), extra_inputs: int = 0,
    ) -> MLPWeights:
        """Inverse of :meth:`arrays` (``circular`` and ``extra_inputs`` are kept in model.json); raises KeyError
        naming a missing array, ValueError on inconsistent shapes."""
        ws = tuple(np.asarray(arrays[f"{prefix}layer{k}.weight"], dtype=np.float32) for k in range(n_layers))
        bs = tuple(np.asarray(arrays[f"{prefix}layer{k}.bias"], dtype=np.float32) for k in range(n_layers))
        return cls(
            ws,
            bs,
            activation,
            Standardizer(np.asarray(arrays[f"{prefix}x_mean"], float), np.asarray(arrays[f"{prefix}x_std"], float)),
            Standardizer(np.asarray(arrays[f"{prefix}y_mean"], float), np.asarray(arrays[f"{prefix}y_std"], float)),
            circular,
            extra_inputs,
        )

    @classmethod
    def constant(cls, value: np.ndarray, n_features: int, circular: tuple[int, ...] = ()) -> MLPWeights:
        """A network whose output is ``value`` (J,) [N·m] for every input: one hidden unit, every weight zero, the
        output bias the value (the constant baseline; it saves, loads and exports to ONNX as any network).

        Args:
            value: (J,) the constant torques.  n_features: D = 3J + C.  circular: as the attribute.
        """
        value = np.asarray(value, dtype=np.float64)
        J = len(value)
        zero = Standardizer(np.zeros(n_features), np.ones(n_features))
        return cls((np.zeros((1, n_features), np.float32), np.zeros((J, 1), np.float32)),
                   (np.zeros(1, np.float32), np.zeros(J, np.float32)), "relu", zero,
                   Standardizer(value, np.ones(J)), circular)


def block_masks(blocks: tuple[tuple[int, ...], ...], hidden_sizes: tuple[int, ...], n_inputs: int) -> list[np.ndarray]:
    """Per layer, the (out, in) 0/1 mask of a network made of J separate sub-networks, one per output: sub-network j
    reads only the input columns ``blocks[j]``, owns hidden units [j h_k, (j + 1) h_k) of each hidden layer k
    (h_k = width / J) and writes output j (the per-joint residual: joint j's own state and rigid-body torque).

    Raises:
        ValueError: no block, a hidden width not divisible by J, or a column outside [0, n_inputs).
    """
    J = len(blocks)
    if J == 0 or any(w % J for w in hidden_sizes):
        raise ValueError(f"hidden widths {list(hidden_sizes)} must be multiples of the {J} blocks")
    if any(not 0 <= c < n_inputs for b in blocks for c in b):
        raise ValueError(f"block columns {[list(b) for b in blocks]} must lie in [0, {n_inputs})")
    widths = [*hidden_sizes, J]
    masks, prev = [], None
    for w in widths:
        m = np.zeros((w, n_inputs if prev is None else prev))
        h = w // J
        for j in range(J):
            rows = slice(j * h, (j + 1) * h)
            if prev is None:
                m[rows, list(blocks[j])] = 1.0
            else:
                p = prev // J
                m[rows, j * p:(j + 1) * p] = 1.0
        masks.append(m)
        prev = w
    return masks


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


def mlp_from_torch(net, activation: str, x_norm: Standardizer, y_norm: Standardizer,
                   circular: tuple[int, ...] = (), extra_inputs: int = 0) -> MLPWeights:
    """Copy the Linear layers of a torch ``nn.Sequential`` (from :func:`build_torch_mlp`) into :class:`MLPWeights`."""
    import torch.nn as nn

    lin = [m for m in net if isinstance(m, nn.Linear)]
    return MLPWeights(
        tuple(m.weight.detach().cpu().numpy().astype(np.float32).copy() for m in lin),
        tuple(m.bias.detach().cpu().numpy().astype(np.float32).copy() for m in lin),
        activation, x_norm, y_norm, circular, extra_inputs,
    )


def torch_from_mlp(mlp: MLPWeights):
    """Rebuild a torch module mapping raw inputs (N, 3J + E) to torques (N, J), normalization and the continuous joints'
    (sin q, cos q) included (for ONNX export: the graph holds Sin/Cos, so it is 2π-periodic in those joints)."""
    import torch
    import torch.nn as nn

    net = build_torch_mlp(mlp.n_inputs, mlp.n_outputs, MLPConfig(mlp.hidden_sizes, mlp.activation))
    lin = [m for m in net if isinstance(m, nn.Linear)]
    with torch.no_grad():
        for m, w, b in zip(lin, mlp.weights, mlp.biases):
            m.weight.copy_(torch.from_numpy(np.asarray(w, dtype=np.float32)))
            m.bias.copy_(torch.from_numpy(np.asarray(b, dtype=np.float32)))

    n_joints, circular = mlp.n_outputs, list(mlp.circular)
    on = np.zeros(n_joints, np.float32)
    on[circular] = 1.0
    on_circle, circle_idx = torch.tensor(on), torch.tensor(circular, dtype=torch.int64)

    class _Normalized(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net
            self.register_buffer("x_mean", torch.tensor(mlp.x_norm.mean, dtype=torch.float32))
            self.register_buffer("x_std", torch.tensor(mlp.x_norm.std, dtype=torch.float32))
            self.register_buffer("y_mean", torch.tensor(mlp.y_norm.mean, dtype=torch.float32))
            self.register_buffer("y_std", torch.tensor(mlp.y_norm.std, dtype=torch.float32))

        def forward(self, x):
            if circular:  # continuous joints: q -> sin q in place, cos q appended after the angles
                q = x[:, :n_joints]
                q = q * (1.0 - on_circle) + torch.sin(q) * on_circle
                x = torch.cat([q, torch.cos(torch.index_select(x, 1, circle_idx)), x[:, n_joints:]], dim=1)
            return self.net((x - self.x_mean) / self.x_std) * self.y_std + self.y_mean

    return _Normalized().eval()
