"""Size: an experiment of 10^4 runs x 11 rules x 3 deltas stays under 20 MB (synthetic records of the shape of
Wang, Yang, You (2022) Figure 1: K = 20 arms, k = 5, four rules that run once per delta; nothing is simulated)."""

from __future__ import annotations

import numpy as np
import pytest
from experiment_helpers import fill_synthetic

from allocopt.experiments import Store, load_spec, store_status

pytest.importorskip("pyarrow")

FIGURE_1_RULES = ["kkt-ts", "dt-ts", "bts", "track-and-stop", "ocba-balanced", "ocba-unbalanced", "lucb", "kl-lucb",
                  "kl-elimination", "ugape", "uniform"]
SEPARATE = ("lucb", "kl-lucb", "kl-elimination", "ugape")  # their own stopping rules: one run per delta


def fill_figure_1_shape(folder, n_runs: int):
    """A store of Figure 1's shape with ``n_runs`` synthetic replications per rule; its status."""
    spec = load_spec({"name": "size", "seed": 1, "n_runs": n_runs, "chunk_size": 100,
                      "instances": [{"name": "figure 1", "theta": list(1.0 - np.arange(20) / 20.0), "k": 5,
                                     "variance": 0.25}],
                      "rules": [{"name": name} for name in FIGURE_1_RULES],
                      "fixed_confidence": {"delta": [0.1, 0.01, 0.001]}})
    with Store.lock(folder):
        store = Store.for_run(folder, spec)
    # stopping times lognormal around 5000 (Figure 1's E[tau] at delta = 0.1 is 4500 to 35000), growing with
    # log(1/delta); counts of the 20 arms that add up to them; about one wrong answer in 500
    fill_synthetic(store, np.random.default_rng(8), scales={name: 5000.0 for name in FIGURE_1_RULES},
                   separate=SEPARATE)
    return store_status(store)


LIMIT = 20 * 10**6 / (10_000 * 11 * 3)  # bytes per record of 20 MB over 10^4 x 11 x 3 records: 60.6


def test_the_bytes_per_record_of_a_tenth_of_the_experiment(tmp_path):
    # the files are per chunk of 100 replications, so a tenth of the runs has the bytes per record of the whole
    status = fill_figure_1_shape(tmp_path / "store", 1000)
    assert status.chunks_done == status.chunks == 110
    per_record = status.bytes / (1000 * 11 * 3)
    print(f"{status.bytes} bytes for {1000 * 11 * 3} records: {per_record:.1f} bytes per record")
    assert per_record < LIMIT


@pytest.mark.slow
def test_ten_thousand_runs_of_eleven_rules_at_three_deltas_stay_under_20_megabytes(tmp_path):
    status = fill_figure_1_shape(tmp_path / "store", 10_000)
    assert status.chunks_done == status.chunks == 1100
    print(f"{status.bytes} bytes for {10_000 * 11 * 3} records: {status.bytes / (10_000 * 11 * 3):.1f} bytes per "
          "record")
    assert status.bytes < 20 * 10**6
