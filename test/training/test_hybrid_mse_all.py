"""The mse_all twins of the hybrids (issue 35: is the dead-zone loss worth it on the best learned method?):
``hybrid_mse_all`` and ``hybrid_joint_mse_all`` are planned exactly as ``hybrid`` and ``hybrid_joint`` (same rigid
body, rows, inputs, residual targets, architecture) except the loss: plain MSE on every (sample, joint) pair instead
of the dead-zone mask. Opt-in: the default comparison does not fit them."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.data.deadzone import fit_dead_zone
from deadzone_id_ros.models.losses import MaskedLoss, MSELoss
from deadzone_id_ros.models.methods import get_method, resolve_methods
from deadzone_id_ros.models.rbd import RigidBodyRegressor
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.training.fit import stack_episodes
from deadzone_id_ros.training.planner import SharedFits, plan_method

TWINS = {"hybrid_mse_all": "hybrid", "hybrid_joint_mse_all": "hybrid_joint"}


@pytest.fixture(scope="module")
def shared(sim_dataset):
    """Shared fits of one simulated split (rigid body identified once, on the training run's moving pairs)."""
    eps = sim_dataset.episodes
    dz = fit_dead_zone(eps[:1])
    train, val = stack_episodes(eps[:1], dz), stack_episodes(eps[1:], dz)
    return SharedFits(train, val, dz, RigidBodyRegressor(default_urdf().read_text(), train.joint_names, 0.01))


@pytest.mark.parametrize(("twin", "masked"), sorted(TWINS.items()))
def test_mse_all_twin_plans_like_its_masked_hybrid_except_the_loss(shared, twin, masked):
    a, b = get_method(twin), get_method(masked)
    assert (a.rigid_body, a.per_joint, a.rows, a.identification) == (b.rigid_body, b.per_joint, b.rows,
                                                                    b.identification)
    assert (a.loss, b.loss) == ("mse", "masked") and not a.by_default and b.by_default
    assert a.needs.mask is False and b.needs.mask is True and a.needs.residual and a.needs.rigid_body == "required"
    [pa], [pb] = plan_method(twin, [0], shared), plan_method(masked, [0], shared)
    assert pa.rbd is pb.rbd is shared.rbd and pa.rbd is not None
    sa, sb = pa.spec, pb.spec
    assert sa is not None and sb is not None
    assert isinstance(sa.loss, MSELoss) and isinstance(sb.loss, MaskedLoss) and not isinstance(sa.loss, MaskedLoss)
    assert (sa.hidden_sizes, sa.weight_decay, sa.blocks, sa.extra_inputs, sa.circular, sa.seed) == (
        sb.hidden_sizes, sb.weight_decay, sb.blocks, sb.extra_inputs, sb.circular, sb.seed)
    assert (sa.hidden_sizes != ()) == (masked == "hybrid_joint")  # the per-joint architecture is kept
    for xa, xb in ((sa.train, sb.train), (sa.val, sb.val)):
        assert xa is not None and xb is not None
        assert np.array_equal(xa.x, xb.x) and np.array_equal(xa.y, xb.y)  # same rows, inputs, residual targets
        assert xa.r.all() and np.array_equal(xb.r, shared.train.r if xb is sb.train else shared.val.r)
        assert not xb.r.all()  # the split has stuck pairs: the two losses do see different pairs
    assert (pa.info.loss, pb.info.loss) == ("mse", "masked")
    assert pa.usable_fraction == 1.0 and pb.usable_fraction == pytest.approx(float(shared.train.r.mean()))


def test_mse_all_twins_are_opt_in_and_drawn_apart():
    from deadzone_id_ros.experiments.compare.plots import method_colour

    default = [m.name for m in resolve_methods(None)]
    assert not set(TWINS) & set(default) and set(TWINS.values()) <= set(default)
    assert [m.name for m in resolve_methods(list(TWINS))] == list(TWINS)
    hybrids = [*TWINS, *TWINS.values()]
    assert len({method_colour(m) for m in hybrids}) == len(hybrids)  # one plot can show all four
