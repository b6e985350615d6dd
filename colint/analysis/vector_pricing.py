"""Vectorized GEMM pricing for searches over many variants (`colint suggest`, `colint pareto`): the time
model of colint.analysis.gemm_model over numpy arrays, priced once per distinct (M, N, K)."""

from __future__ import annotations

from colint.analysis.gemm_model import estimate_arrays
from colint.analysis.ops_moe import grouped_model


def estimate_unique(m, n, k, dtype, profile, out_dtype, grouped: bool = False):
    """estimate_arrays on the unique (M, N, K) triples only, scattered back (the vectorized pricing of
    `colint suggest` and `colint pareto`: many variants share most GEMM shapes; ``grouped``: routed
    experts' grouped GEMM, colint.analysis.ops_moe)."""
    import numpy as np

    (um, im), (un, inn), (uk, ik) = (np.unique(a, return_inverse=True) for a in (m, n, k))
    key = (im.astype(np.int64) * un.size + inn) * uk.size + ik  # one integer per (M, N, K): a fast 1-D unique
    ukey, inverse = np.unique(key, return_inverse=True)
    k_i = ukey % uk.size
    n_i = (ukey // uk.size) % un.size
    m_i = ukey // (uk.size * un.size)
    r = estimate_arrays(
        um[m_i],
        un[n_i],
        uk[k_i],
        dtype,
        profile,
        out_dtype,
        standalone=False,
        model=grouped_model(profile) if grouped else None,
    )
    return np.asarray(r["estimate_s"], dtype=np.float64)[inverse.reshape(-1)]
