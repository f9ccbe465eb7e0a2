"""The registry of methods: one entry per method, read by training, evaluation and the artifact loader; adding a
method is one entry and (for a new loss) one Loss class."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from deadzone_id_ros.models import LOSSES, METHODS, Loss, Method, get_method, register_loss, register_method

torch.set_num_threads(1)


def test_registry_holds_the_methods_and_baselines_with_their_parts_and_losses():
    assert list(METHODS) == ["masked", "conventional", "mse_all", "band", "rbd", "hybrid", "rbd_consistent",
                             "rbd_friction", "hybrid_joint", "hybrid_mse_all", "hybrid_joint_mse_all",
                             "hybrid_history", "hybrid_history_mse_all", "constant", "gravity"]
    parts = {n: (m.rigid_body, m.learned, m.loss, m.rows) for n, m in METHODS.items()}
    assert parts == {"masked": (False, True, "masked", "all"), "conventional": (False, True, "mse", "all_moving"),
                     "mse_all": (False, True, "mse", "all"), "band": (False, True, "band", "all"),
                     "rbd": (True, False, None, "all"), "hybrid": (True, True, "masked", "all"),
                     "rbd_consistent": (True, False, None, "all"), "rbd_friction": (True, False, None, "all"),
                     "hybrid_joint": (True, True, "masked", "all"), "hybrid_mse_all": (True, True, "mse", "all"),
                     "hybrid_joint_mse_all": (True, True, "mse", "all"),
                     "hybrid_history": (True, True, "masked", "all"),
                     "hybrid_history_mse_all": (True, True, "mse", "all"), "constant": (False, False, None, "all"),
                     "gravity": (True, False, None, "all")}
    assert [m.name for m in METHODS.values() if m.has_network and not m.learned] == ["constant"]
    assert sorted(METHODS.values(), key=lambda m: m.simplicity)[0].name == "constant"


def test_an_opt_in_method_runs_only_when_named():
    from deadzone_id_ros.models.methods import resolve_methods

    default = [m.name for m in resolve_methods(None)]
    assert "rbd_consistent" not in default and {"masked", "constant", "gravity"} <= set(default)
    assert [m.name for m in resolve_methods(["rbd_consistent"])] == ["rbd_consistent"]
    # "default" stands for the default set, in a list with opt-in methods; a name given twice counts once
    both = [m.name for m in resolve_methods(["default", "hybrid_history", "rbd"])]
    assert both == [*default, "hybrid_history"]
    with pytest.raises(ValueError, match="unknown method"):
        resolve_methods(["defaults"])


def test_usable_fraction_follows_rows_and_loss():
    r = np.array([[1, 1], [1, 0], [0, 0], [1, 1]], dtype=bool)
    assert get_method("masked").usable_fraction(r) == 5 / 8  # moving pairs
    assert get_method("rbd").usable_fraction(r) == 5 / 8
    assert get_method("conventional").usable_fraction(r) == 2 / 4  # samples with every joint moving
    assert get_method("mse_all").usable_fraction(r) == 1.0
    assert get_method("band").usable_fraction(r) == 1.0


def test_registry_errors():
    with pytest.raises(ValueError, match=r"unknown method\(s\) \['nope'\]; choose from \['masked'"):
        get_method("nope")
    with pytest.raises(ValueError, match="already registered"):
        register_method(Method("masked", rigid_body=False, loss="masked"))
    with pytest.raises(ValueError, match="neither a rigid body nor a loss"):
        Method("empty", rigid_body=False, loss=None)
    with pytest.raises(ValueError, match="loss = 'huber' must be one of"):
        Method("x", rigid_body=False, loss="huber")
    with pytest.raises(ValueError, match="rows = 'some'"):
        Method("x", rigid_body=False, loss="mse", rows="some")
    with pytest.raises(ValueError, match="already registered"):
        register_loss("mse")(Loss)
    with pytest.raises(ValueError, match="baseline = 'median'"):
        Method("x", rigid_body=False, loss=None, baseline="median")
    with pytest.raises(ValueError, match="a baseline learns nothing"):
        Method("x", rigid_body=False, loss="mse", baseline="mean")
    with pytest.raises(ValueError, match="identification = 'lmi'"):
        Method("x", rigid_body=True, loss=None, identification="lmi")
    with pytest.raises(ValueError, match="gravity baseline is the URDF's rigid body"):
        Method("x", rigid_body=True, loss=None, baseline="gravity")


def test_a_new_method_is_one_entry_and_one_loss_class(sim_dataset_small):
    """The "Adding a method" example of docs/extending.md: a masked L1 loss, registered, fitted and loaded by name."""
    from deadzone_id_ros.training import TrainConfig, fit_method

    @register_loss("masked_l1_test")
    class MaskedL1(Loss):
        def sums(self, pred, target, mask):
            m = mask.to(pred.dtype)
            return (m * (pred - target).abs()).sum(), m.sum()

    try:
        register_method(Method("l1_test", rigid_body=False, loss="masked_l1_test"))
        train, val, dz = sim_dataset_small
        cfg = TrainConfig(hidden_sizes=(16, 16), max_steps=60, eval_interval=20, batch_size=256, progress=False)
        fit = fit_method("l1_test", train, val, dz, cfg)
        assert fit.model.method == "l1_test" and fit.model.mlp is not None
        assert fit.usable_fraction == pytest.approx(float(train.r.mean()))
        assert fit.info.loss == "masked_l1_test" and fit.info.steps == 60
    finally:
        METHODS.pop("l1_test", None)
        LOSSES.pop("masked_l1_test", None)


@pytest.fixture(scope="module")
def sim_dataset_small():
    from deadzone_id_ros.data.dataset import dataset_from_recordings
    from deadzone_id_ros.data.deadzone import fit_dead_zone
    from deadzone_id_ros.sim.offline import simulate
    from deadzone_id_ros.training.fit import stack_episodes

    eps = dataset_from_recordings([simulate(4.0, seed=s) for s in (1, 2)]).episodes
    dz = fit_dead_zone(eps[:1])
    return stack_episodes(eps[:1], dz), stack_episodes(eps[1:], dz), dz
