"""The registry of methods: one entry per method, read by training, evaluation and the artifact loader; adding a
method is one entry and (for a new loss) one Loss class."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from deadzone_id_ros.models import LOSSES, METHODS, Loss, Method, get_method, register_loss, register_method

torch.set_num_threads(1)


def test_registry_holds_the_six_methods_with_their_parts_and_losses():
    assert list(METHODS) == ["masked", "conventional", "mse_all", "band", "rbd", "hybrid"]
    parts = {n: (m.rigid_body, m.learned, m.loss, m.rows) for n, m in METHODS.items()}
    assert parts == {"masked": (False, True, "masked", "all"), "conventional": (False, True, "mse", "all_moving"),
                     "mse_all": (False, True, "mse", "all"), "band": (False, True, "band", "all"),
                     "rbd": (True, False, None, "all"), "hybrid": (True, True, "masked", "all")}


def test_usable_fraction_follows_rows_and_loss():
    r = np.array([[1, 1], [1, 0], [0, 0], [1, 1]], dtype=bool)
    assert get_method("masked").usable_fraction(r) == 5 / 8  # moving pairs
    assert get_method("rbd").usable_fraction(r) == 5 / 8
    assert get_method("conventional").usable_fraction(r) == 2 / 4  # samples with every joint moving
    assert get_method("mse_all").usable_fraction(r) == 1.0
    assert get_method("band").usable_fraction(r) == 1.0


def test_registry_errors():
    with pytest.raises(ValueError, match="method = 'nope' must be one of"):
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
        assert fit.info["loss"] == "masked_l1_test" and fit.info["steps"] == 60
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
