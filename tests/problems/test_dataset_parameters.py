"""Bad dataset parameters fail in get_data with a ValueError that names the
parameter, before any expensive work (download, reference solve)."""
import pytest

from conftest import component

BAD_PARAMETERS = [
    ("regression", {"radius": 0.0}, "radius"),
    ("regression", {"radius": -1.0}, "radius"),
    ("regression", {"source": "mnist"}, "source"),
    ("regression", {"loss": "huber"}, "loss"),
    ("regression", {"n_samples": 2}, "n_samples"),
    ("dictionary_learning", {"delta": 0.0}, "delta"),
    ("dictionary_learning", {"n_old_atoms": 60}, "n_old_atoms"),
    ("dictionary_learning", {"n_samples": 0}, "n_samples"),
    ("hyper_cleaning", {"corruption": 1.0}, "corruption"),
    ("hyper_cleaning", {"corruption": -0.1}, "corruption"),
    ("hyper_cleaning", {"c": 0.0}, "c must"),
    ("hyper_cleaning", {"c": -1.0}, "c must"),
    ("hyper_cleaning", {"source": "cifar10"}, "source"),
    ("hyper_cleaning", {"n_train": 0}, "n_train"),
    ("hyper_cleaning", {"n_val": -5}, "n_val"),
    ("hyper_cleaning", {"n_test": 0}, "n_test"),
    ("hyper_cleaning", {"reduction": "median"}, "reduction"),
    ("hyper_cleaning", {"n_train": 1500, "n_val": 400},
     "n_train \\+ n_val \\+ n_test"),
    ("hyper_cleaning", {"source": "mnist", "n_test": 20000}, "n_test"),
    ("matrix_completion", {"n": 0}, "n must"),
    ("matrix_completion", {"rank": 30, "n": 20}, "rank"),
    ("matrix_completion", {"noise": 1.0}, "noise"),
    ("matrix_completion", {"p_observed": 0.0}, "p_observed"),
    ("matrix_completion", {"delta": 0.0}, "delta"),
    ("matrix_completion", {"lambda1": -0.1}, "lambda1"),
    ("matrix_completion", {"lambda2": 0.0}, "lambda2"),
    ("matrix_completion", {"split": "halves"}, "split"),
    ("matrix_completion", {"reduction": "total"}, "reduction"),
    ("matrix_completion", {"random_state": -1}, "random_state"),
    ("quadratic", {"mu": 0.0}, "mu must be a finite number > 0"),
    ("quadratic", {"mu": -1.0}, "mu must be a finite number > 0"),
    ("quadratic", {"mu": 6.0, "L": 5.0}, "mu must be <= L"),
    ("quadratic", {"constraint": "l1_ball"}, "constraint must be one of"),
    ("quadratic", {"radius": 0.0}, "radius must be a finite number > 0"),
    ("quadratic", {"radius": -2.0}, "radius"),
    ("quadratic", {"noise": 1.0}, r"noise must be in \[0.0, 1.0\)"),
    ("quadratic", {"noise": -0.1}, "noise"),
    ("quadratic", {"n_samples": 0}, "n_samples must be an integer"),
    ("quadratic", {"dim_x": 0}, "dim_x"),
    ("quadratic", {"dim_y": 2.5}, "dim_y"),
    ("quadratic", {"cross_norm": 0.0}, "cross_norm"),
    ("quadratic", {"upper_reg": 0.0}, "upper_reg"),
    ("quadratic", {"random_state": -1}, "random_state"),
    ("coreset_toy", {"mu_g": 0.0}, "mu_g"),
    ("coreset_toy", {"mu_g": 1.0, "L_g": 0.5}, "L_g"),
]


@pytest.mark.parametrize("name, params, match", BAD_PARAMETERS)
def test_bad_dataset_parameters_are_rejected(name, params, match, monkeypatch,
                                             tmp_path):
    Dataset = component("dataset", name)
    if hasattr(Dataset, "_mnist_dir"):
        # checked before the (here missing) MNIST files are looked for
        monkeypatch.setattr(Dataset, "_mnist_dir", lambda self: tmp_path)
    with pytest.raises(ValueError, match=match):
        Dataset.get_instance(**params).get_data()
