"""One fused pass over a step-major (S, R) array that feeds every per-rank detector.

The detectors need the same few things: a per-step reference (the typical rank's value, a robust
spread), the last arrival of each step, and per-rank running sums. Computing them in one sweep over
the array, in step chunks of about 2 MB that stay in cache (pass A then pass B on each chunk, so
the array is read from memory once), keeps the whole suite within a few times the cost of reading
the array once, with no full-size temporaries and reused chunk buffers:

* pass A, per step (rows): the median and quartiles over ranks come from a sample of at most
  ``_REF_SAMPLE`` ranks spread evenly over the fleet (all ranks below that: exact). Any error of
  the sampled median is a common offset of the step that cancels in every comparison between
  ranks; the maximum and its rank (the last arrival) are taken over all ranks, exactly.
* pass B, per rank (columns, in time order): a winsorized running sum (a robust location that is a
  single reduction, unlike a per-rank median, which would need a transpose and a partition), the
  count of steps above a high per-step cut (spikes), baseline moments, and a one-sided CUSUM. Per
  block of ``_BLOCK`` steps the normalized sum is one BLAS vector-matrix product (weights 1 / the
  step's median), float32 within a chunk and float64 across chunks. The CUSUM recursion is sequential in time, so it advances per block of ``_BLOCK`` steps, vectorized
  over ranks (S / 8 small numpy calls). That block CUSUM is only a screen: ranks that come near the
  threshold are re-run exactly, step by step, on their own columns (``exact_cusum``), so flags and
  onsets are per step.

"typical" is the per-step median over ranks. In relative mode values are y / median (1.0 = typical,
1.03 = 3% slower than the typical rank); in additive mode y - median (0 = typical).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from forensic.tools.detectors import _fast
from forensic.tools.detectors._stats import IQR_TO_SIGMA, bonferroni_z, cusum_threshold

_REF_SAMPLE = 1024
_DUR_SAMPLE = 64
_STEP_TIME_ROWS = 4096  # rows of the duration sample per batch (1 MB at 64 ranks)
_BLOCK = 8
CUSUM_CLIP = 4.0
_RUN = 16
_CHUNK_BYTES = 2 << 20  # a chunk, its clipped copy and its flags stay in cache between the steps
_MAX_CHUNK_ROWS = 248  # exceedance counts per chunk fit in uint8


@dataclass(frozen=True)
class ScanConfig:
    """Knobs shared by the batch scan and the streaming detectors (see models for meanings)."""

    relative: bool = True
    alpha: float = 0.01
    min_effect: float = 0.01
    winsor_z: float = 3.0
    spike_z: float = 4.0
    cusum_k: float = 0.5
    baseline_fraction: float = 0.2
    baseline_steps: int | None = None
    min_baseline_steps: int = 8

    @property
    def typical(self) -> float:
        return 1.0 if self.relative else 0.0

    def n_baseline(self, n_steps: int) -> int:
        if self.baseline_steps is not None:
            return int(min(max(self.baseline_steps, 1), n_steps))
        return int(min(n_steps, max(1, round(self.baseline_fraction * n_steps))))


@dataclass
class Scan:
    """Everything the per-rank detectors read, from one pass over the array."""

    cfg: ScanConfig
    n_steps: int
    n_ranks: int
    # per step (S,)
    center: np.ndarray
    """median over ranks, in the input's units (seconds for compute)"""
    sigma: np.ndarray
    """robust spread over ranks in normalized units, floored"""
    top: np.ndarray
    """maximum over ranks (the last arrival's value)"""
    top_rank: np.ndarray
    """column of the maximum, -1 where the step has no value"""
    valid: np.ndarray
    step_time: np.ndarray | None
    lo: np.ndarray
    hi: np.ndarray
    cut: np.ndarray
    """per-step spike cut, normalized units (+inf on invalid steps)"""
    # per rank (R,)
    n_valid: np.ndarray
    wmean: np.ndarray
    """winsorized mean of the normalized value over the rank's valid steps"""
    exceed: np.ndarray
    base_mu: np.ndarray
    base_sigma: np.ndarray
    cusum_screen: np.ndarray
    """maximum of the block-level CUSUM (a lower bound of the exact per-step one, up to block effects)"""
    base_mean_y: np.ndarray
    late_mean_y: np.ndarray
    # scalars
    n_baseline: int
    sigma_pool: float
    k_eff: float
    h: float
    cusum_enabled: bool


def _ref_cols(n_ranks: int, m: int) -> slice:
    if n_ranks <= m:
        return slice(None)
    return slice(0, None, -(-n_ranks // m))


def _sample(blk: np.ndarray, m: int) -> np.ndarray:
    """A contiguous (k, <=m) float32 copy of an evenly spread sample of the chunk's columns.

    The sample is taken as runs of ``_RUN`` adjacent ranks spread evenly over the fleet, so the
    copy moves whole cache lines (a one-in-16 gather would touch every line of the row) and every
    rack is represented.
    """
    k, r = blk.shape
    if r <= m:
        return np.array(blk, dtype=np.float32)
    step = _run_step(r, m)
    if blk.dtype != np.float32 or blk.strides[1] != 4 or step is None:
        return np.array(blk[:, _ref_cols(r, m)], dtype=np.float32)
    groups = m // _RUN
    view = np.lib.stride_tricks.as_strided(
        blk, shape=(k, groups, _RUN), strides=(blk.strides[0], step * 4, 4), writeable=False
    )
    return view.reshape(k, groups * _RUN)


def _run_step(r: int, m: int) -> int | None:
    """Columns from one run of the sample to the next (``_sample``'s layout), None when ``r`` ranks
    are too few for runs of ``_RUN`` (the sample is then every ``_ref_cols`` column)."""
    if r <= m:
        return None
    step = r // (m // _RUN)
    return step if step >= _RUN else None


def _chunk_rows(n_cols: int) -> int:
    k = max(_BLOCK, min(_MAX_CHUNK_ROWS, _CHUNK_BYTES // max(1, 4 * n_cols)))
    return k - k % _BLOCK


def _row_quartiles(sub: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """25th, 50th and 75th percentiles per row, ignoring NaN (nearest rank; median averaged).

    A full SIMD sort of the sample is several times faster than a multi-kth partition.
    """
    s = sub if sub.flags.c_contiguous and sub.flags.writeable else np.array(sub)
    s.sort(axis=1)  # NaN sorts last
    m = sub.shape[1]
    rows = np.arange(sub.shape[0])
    if np.isnan(s[:, -1]).any():
        n = m - np.isnan(s).sum(axis=1)
    else:
        n = np.full(sub.shape[0], m)
    nn = np.maximum(n, 1) - 1
    q1 = s[rows, (0.25 * nn).astype(np.int64)].astype(np.float64)
    med = 0.5 * (s[rows, nn // 2].astype(np.float64) + s[rows, (nn + 1) // 2])
    q3 = s[rows, np.ceil(0.75 * nn).astype(np.int64)].astype(np.float64)
    empty = n == 0
    for a in (q1, med, q3):
        a[empty] = np.nan
    return q1, med, q3


def _row_max(chunk: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-row max and its column, NaN-aware only where a row holds NaN (argmax stops at NaN)."""
    am = chunk.argmax(axis=1)
    rows = np.arange(chunk.shape[0])
    top = chunk[rows, am].astype(np.float64)
    has_nan = np.isnan(top)
    if has_nan.any():
        sub = chunk[has_nan]
        allnan = np.isnan(sub).all(axis=1)
        filled = np.where(np.isnan(sub), -np.inf, sub)
        a2 = filled.argmax(axis=1)
        am[has_nan] = np.where(allnan, -1, a2)
        top[has_nan] = np.where(allnan, np.nan, filled[np.arange(sub.shape[0]), a2])
    return top, am.astype(np.int64), has_nan


class _RowStats:
    """Per-step (row) results of pass A, filled chunk by chunk."""

    def __init__(self, s_n: int) -> None:
        self.center = np.empty(s_n)
        self.q1 = np.empty(s_n)
        self.q3 = np.empty(s_n)
        self.top = np.empty(s_n)
        self.top_rank = np.empty(s_n, dtype=np.int64)
        self.row_nan = np.empty(s_n, dtype=bool)
        self.step_time: np.ndarray | None = None  # after the sweep: step_times(duration)

    def fill(self, y: np.ndarray, i0: int, i1: int) -> None:
        self.fill_reference(y, i0, i1)
        self.fill_max(y, i0, i1)

    def fill_reference(self, y: np.ndarray, i0: int, i1: int, sample: np.ndarray | None = None) -> None:
        """Quartiles from the rank sample (reads a sixteenth of the rows).

        ``sample``: the rows' rank sample already gathered (``_FastGroups.sample``), else ``_sample``.
        """
        sub = _sample(y[i0:i1], _REF_SAMPLE) if sample is None else sample
        self.q1[i0:i1], self.center[i0:i1], self.q3[i0:i1] = _row_quartiles(sub)

    def fill_max(self, y: np.ndarray, i0: int, i1: int) -> None:
        """The maximum over all ranks and its rank (reads every value of the rows)."""
        self.top[i0:i1], self.top_rank[i0:i1], self.row_nan[i0:i1] = _row_max(y[i0:i1])


def _pass_a(y: np.ndarray) -> _RowStats:
    s_n, r_n = y.shape
    rows = _RowStats(s_n)
    k = _chunk_rows(r_n)
    for i0 in range(0, s_n, k):
        rows.fill(y, i0, min(s_n, i0 + k))
    return rows


def cusum_params(cfg: ScanConfig, n_ranks: int, n_baseline: int, n_monitored: int) -> tuple[float, float]:
    """(k_eff, h) of the per-rank CUSUM.

    The baseline mean of each rank is itself estimated from n_baseline steps; the reference value
    allows for its worst error over the fleet (Bonferroni over ranks), so that a clean rank's drift
    stays at or below -k, and h is set for that drift at ARL0 = steps * ranks / alpha.
    """
    k_eff = cfg.cusum_k + bonferroni_z(cfg.alpha, n_ranks) / math.sqrt(max(n_baseline, 1))
    h = cusum_threshold(max(n_monitored, 1) * max(n_ranks, 1) / cfg.alpha, cfg.cusum_k)
    return k_eff, h


def step_bands(center: np.ndarray, q1: np.ndarray, q3: np.ndarray, cfg: ScanConfig):
    """Per-step validity, robust sigma (normalized, floored), winsor band and spike cut."""
    tau = cfg.typical
    with np.errstate(invalid="ignore", divide="ignore"):
        valid = np.isfinite(center) & ((center > 0) if cfg.relative else True)
        spread = (q3 - q1) * IQR_TO_SIGMA
        sigma = spread / center if cfg.relative else spread
    # A floor keeps a perfectly uniform fleet (zero spread) from turning rounding into z-scores.
    floor = (
        1e-4 if cfg.relative else max(1e-12, 1e-6 * float(np.nanmedian(np.abs(center)) if valid.any() else 0))
    )
    sigma = np.where(valid & np.isfinite(sigma), np.maximum(sigma, floor), np.nan)
    band = np.maximum(cfg.winsor_z * sigma, 2.0 * cfg.min_effect)
    cut = np.where(valid, tau + np.maximum(cfg.spike_z * sigma, cfg.min_effect), np.inf)
    return valid, sigma, tau - band, tau + band, cut, floor


def _chunks(s_n: int, n_b: int, k: int) -> list[tuple[int, int, bool]]:
    """Step chunks in time order: the baseline window, then the rest (a chunk never straddles n_b)."""
    out = [(i0, min(n_b, i0 + k), True) for i0 in range(0, n_b, k)]
    return out + [(i0, min(s_n, i0 + k), False) for i0 in range(n_b, s_n, k)]


def scan(y: np.ndarray, duration: np.ndarray | None = None, cfg: ScanConfig = ScanConfig()) -> Scan:
    """Both passes over ``y`` (S, R) (float32 preferred; other dtypes are converted per chunk).

    In relative mode pass A and pass B run chunk by chunk in one sweep, so each chunk is read from
    memory once and worked on while it is in cache. A step with no usable median (all missing,
    or a median <= 0) needs its neighbours' medians, which may lie in chunks not read yet: the
    sweep then stops and the two passes run one after the other (as in additive mode, whose
    spread floor is a median over all steps).
    """
    y = np.asarray(y)
    if y.ndim != 2:
        raise ValueError(f"expected a (steps, ranks) array, got shape {y.shape}")
    s_n, r_n = y.shape
    tau = cfg.typical
    n_b = cfg.n_baseline(s_n)
    n_mon = s_n - n_b
    cusum_enabled = n_b >= cfg.min_baseline_steps and n_mon >= 1 and r_n >= 1
    k_eff, h = cusum_params(cfg, r_n, n_b, n_mon)

    done = _one_sweep(y, cfg, n_b, cusum_enabled, k_eff, h) if cfg.relative else None
    if done is None:
        rows = _pass_a(y)
        valid, sigma, lo, hi, cut, floor = step_bands(rows.center, rows.q1, rows.q3, cfg)
        base_sig = sigma[:n_b][np.isfinite(sigma[:n_b])]
        sigma_pool = (
            float(np.median(base_sig))
            if base_sig.size
            else float(np.nanmedian(sigma))
            if valid.any()
            else floor
        )
        st = _PassB(y, cfg, n_b, cusum_enabled, k_eff, h)
        st.set_rows(0, s_n, rows.center, valid, rows.row_nan, lo, hi, cut, fill=_fill(rows.center, valid))
        st.sigma_pool = sigma_pool
        st.run()
    else:
        rows, valid, sigma, lo, hi, cut, st = done
    if duration is not None:
        rows.step_time = step_times(duration)
    top_rank = np.where(valid, rows.top_rank, -1)
    n_valid = s_n - st.n_miss
    with np.errstate(invalid="ignore", divide="ignore"):
        wmean = (st.wsum - tau * st.n_miss) / np.maximum(n_valid, 1)
    wmean[n_valid == 0] = np.nan
    return Scan(
        cfg=cfg,
        n_steps=s_n,
        n_ranks=r_n,
        center=rows.center,
        sigma=sigma,
        top=rows.top,
        top_rank=top_rank,
        valid=valid,
        step_time=rows.step_time,
        lo=lo,
        hi=hi,
        cut=cut,
        n_valid=n_valid,
        wmean=wmean,
        exceed=st.exceed,
        base_mu=st.mu,
        base_sigma=st.sig,
        cusum_screen=st.cmax,
        base_mean_y=st.wy_base / np.maximum(st.ny_base, 1),
        late_mean_y=st.wy_late / np.maximum(st.ny_late, 1),
        n_baseline=n_b,
        sigma_pool=st.sigma_pool,
        k_eff=k_eff,
        h=h,
        cusum_enabled=cusum_enabled,
    )


def _fill(center: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per-step median, a step nobody logged borrowing its neighbours' (its cells count as typical)."""
    c = np.where(valid, center, np.nan)
    if valid.all():
        return c
    ok = np.flatnonzero(valid)
    return np.interp(np.arange(c.size), ok, c[ok]) if ok.size else np.ones(c.size)


def _one_sweep(y, cfg, n_b, cusum_enabled, k_eff, h):
    """Pass A and pass B chunk by chunk (relative mode); None when a step has no usable median.

    The per-step reference (sample quartiles, bands) is computed for groups of chunks at once
    (up to ``_MAX_CHUNK_ROWS`` steps: it reads a sixteenth of the rows, and larger batches cost
    fewer small numpy calls); the row maximum and pass B then run per chunk, while it is in cache
    (numpy), or per block of ``_BLOCK`` steps in one compiled call per group (``_FastGroups``).
    """
    s_n, r_n = y.shape
    rows = _RowStats(s_n)
    valid = np.empty(s_n, dtype=bool)
    sigma, lo, hi, cut = (np.empty(s_n) for _ in range(4))
    st = _PassB(y, cfg, n_b, cusum_enabled, k_eff, h)
    fast = _FastGroups(y, st, rows) if _fast.use_for(y) else None
    closed = False
    ref_end = 0
    chunks = _chunks(s_n, n_b, _chunk_rows(r_n))
    for n_c, (i0, i1, baseline) in enumerate(chunks):
        if not baseline and not closed:
            st.sigma_pool = float(np.median(sigma[:n_b]))
            st.close_baseline()
            closed = True
        if i0 >= ref_end:
            # the reference for this chunk and the next ones on the same side of the baseline
            ref_end = i1
            for _, j1, b in chunks[n_c + 1 :]:
                if b != baseline or j1 - i0 > _MAX_CHUNK_ROWS:
                    break
                ref_end = j1
            rows.fill_reference(y, i0, ref_end, None if fast is None else fast.sample(i0, ref_end))
            v, sg, lw, hh, c, _ = step_bands(
                rows.center[i0:ref_end], rows.q1[i0:ref_end], rows.q3[i0:ref_end], cfg
            )
            if not v.all():
                return None
            valid[i0:ref_end], sigma[i0:ref_end], lo[i0:ref_end], hi[i0:ref_end], cut[i0:ref_end] = (
                v,
                sg,
                lw,
                hh,
                c,
            )
            st.set_rows(
                i0, ref_end, rows.center[i0:ref_end], v, None, lw, hh, c, fill=rows.center[i0:ref_end]
            )
            if fast is not None:
                fast.run(i0, ref_end, baseline)  # the row maximum and pass B of the whole group
        if fast is None:
            rows.fill_max(y, i0, i1)
            st.messy[i0:i1] = rows.row_nan[i0:i1]  # every step is valid here
            st.chunk(i0, i1, baseline)
    if not closed:
        st.sigma_pool = float(np.median(sigma[:n_b]))
        st.close_baseline()
    if fast is not None:
        st.exceed += fast.exc
        st.ny_base += fast.n_clean[0]
        st.ny_late += fast.n_clean[1]
    return rows, valid, sigma, lo, hi, cut, st


class _FastGroups:
    """Pass B of groups of chunks in the compiled kernel (``_fast``), one call per group; the kernel
    also takes each step's maximum and its rank (pass A's last arrival), block by block while the
    block is in cache, and gathers the rank sample of the group's reference (``sample``).

    Blocks of ``_BLOCK`` steps start at each chunk's first step, as in numpy.
    """

    def __init__(self, y: np.ndarray, st: _PassB, rows: _RowStats) -> None:
        r_n = y.shape[1]
        self.y, self.st, self.rows = y, st, rows
        self.kernel = _fast.kernel()
        _fast._state["runs"] += 1  # scans that took the compiled route (the benchmark reports it)
        self.acc = np.zeros((4, r_n), dtype=np.float32)  # the kernel's per-block sums (see _fast._group)
        self.exc = np.zeros(r_n, dtype=np.int32)
        self.n_clean = np.zeros(2, dtype=np.int64)  # steps of clean blocks in the baseline and late windows
        self.none = np.zeros(r_n, dtype=np.float32)
        self.tmax = np.empty((_BLOCK, -(-r_n // _fast._TILE)), dtype=np.int32)  # per-tile row maxima (bits)
        self.yi = y.view(np.int32)
        self.step = _run_step(r_n, _REF_SAMPLE)
        # the rank sample gathered by compiled code where _sample would take its strided view
        self.sbuf = (
            np.empty((_MAX_CHUNK_ROWS, _REF_SAMPLE // _RUN * _RUN), dtype=np.float32)
            if self.step is not None
            else None
        )

    def sample(self, i0: int, i1: int) -> np.ndarray | None:
        """``_sample(y[i0:i1], _REF_SAMPLE)``'s values, in a reused buffer (None: use ``_sample``)."""
        if self.sbuf is None:
            return None
        return _fast._gather(self.y, i0, i1, self.step, self.sbuf[: i1 - i0])

    def run(self, i0: int, i1: int, baseline: bool) -> None:
        st, rows = self.st, self.rows
        s_n = self.y.shape[0]
        closed = hasattr(st, "inv_sig")
        inv_sig = st.inv_sig if closed else self.none
        off_step = st.off_step if closed else self.none
        cusum = bool(st.cusum_enabled and not baseline and closed)
        # One call for the whole group: its chunks are whole (a multiple of _BLOCK steps) but for
        # the last one, so blocks from i0 start where blocks from each chunk's first step would.
        self.kernel(
            self.y,
            i0,
            i1,
            st.lo_y[:, 0],
            st.hi_y[:, 0],
            st.cut_y[:, 0],
            st.w,
            st.fill[:, 0],
            st.n_b,
            s_n - st.n_late,
            baseline,
            cusum,
            inv_sig,
            off_step,
            rows.row_nan,
            self.acc,
            self.exc,
            st.n_miss,
            st.wsum,
            st.bsum,
            st.bsq,
            st.c,
            st.cmax,
            st.wy_base,
            st.ny_base,
            st.wy_late,
            st.ny_late,
            self.n_clean,
            self.yi,
            rows.top,
            rows.top_rank,
            self.tmax,
        )


class _PassB:
    """Per-rank accumulation over step chunks, in time order (the CUSUM needs the order).

    Per chunk: one clip into a reused buffer (the winsorized values), one comparison for the
    spike counts, and per block of ``_BLOCK`` steps one weighted sum over steps (a BLAS
    vector-matrix product with weights 1 / the step's median: the block's normalized sum, no
    normalized copy of the chunk). Sums are accumulated in float32 within a chunk and in float64
    across chunks.
    """

    def __init__(self, y, cfg, n_b, cusum_enabled, k_eff, h):
        s_n, r_n = y.shape
        self.y, self.cfg, self.n_b, self.k_eff, self.h = y, cfg, n_b, k_eff, h
        self.cusum_enabled = cusum_enabled
        self.sigma_pool = math.nan
        f32 = np.float32
        # per step, set by set_rows before the step's chunk runs
        self.fill = np.empty((s_n, 1), dtype=f32)
        self.center = np.empty(s_n)
        self.w = np.empty(s_n, dtype=f32)
        self.lo_y = np.empty((s_n, 1), dtype=f32)
        self.hi_y = np.empty((s_n, 1), dtype=f32)
        self.cut_y = np.empty((s_n, 1), dtype=f32)
        self.messy = np.empty(s_n, dtype=bool)
        self.n_miss = np.zeros(r_n, dtype=np.int64)
        self.wsum = np.zeros(r_n)
        self.bsum = np.zeros(r_n)
        self.bsq = np.zeros(r_n)
        self.exceed = np.zeros(r_n, dtype=np.int64)
        self.cmax = np.zeros(r_n, dtype=f32)
        self.c = np.zeros(r_n, dtype=f32)
        self.zeros = np.zeros(r_n, dtype=f32)
        self.mu = np.full(r_n, cfg.typical)
        self.sig = np.ones(r_n)
        self.n_late = n_b
        self.wy_base = np.zeros(r_n)
        self.wy_late = np.zeros(r_n)
        self.ny_base = np.zeros(r_n, dtype=np.int64)
        self.ny_late = np.zeros(r_n, dtype=np.int64)
        k = _chunk_rows(r_n)
        self.t = np.empty((k, r_n), dtype=f32)
        self.b = np.empty((k, r_n), dtype=bool)
        self.blocks = np.empty((-(-k // _BLOCK), r_n), dtype=f32)
        self._lengths: dict[int, np.ndarray] = {}

    def set_rows(self, i0, i1, center, valid, row_nan, lo, hi, cut, fill) -> None:
        """Per-step bounds of rows i0:i1 in the input's units (the clip runs on the raw chunk)."""
        rel = self.cfg.relative
        c = np.where(valid, center, np.nan)
        self.fill[i0:i1, 0] = fill
        self.center[i0:i1] = fill
        with np.errstate(divide="ignore"):
            self.w[i0:i1] = 1.0 / fill if rel else 1.0
        self.lo_y[i0:i1, 0] = lo * c if rel else lo + c
        self.hi_y[i0:i1, 0] = hi * c if rel else hi + c
        self.cut_y[i0:i1, 0] = np.where(valid, cut * c if rel else cut + c, np.inf)
        if row_nan is not None:
            self.messy[i0:i1] = row_nan | ~valid

    def run(self) -> None:
        s_n = self.y.shape[0]
        chunks = _chunks(s_n, self.n_b, _chunk_rows(self.y.shape[1]))
        for i0, i1, baseline in chunks:
            if not baseline and not hasattr(self, "inv_sig"):
                self.close_baseline()
            self.chunk(i0, i1, baseline)
        if not hasattr(self, "inv_sig"):
            self.close_baseline()

    def chunk(self, i0: int, i1: int, baseline: bool) -> None:
        n = i1 - i0
        s_n = self.y.shape[0]
        yb = self.y[i0:i1]
        if yb.dtype != np.float32:
            yb = yb.astype(np.float32)
        t = self.t[:n]
        np.clip(yb, self.lo_y[i0:i1], self.hi_y[i0:i1], out=t)
        miss = np.isnan(t) if self.messy[i0:i1].any() else None
        if miss is not None:
            self.n_miss += miss.sum(axis=0)
        # Winsorized means of the raw values over the baseline and the late window: does every
        # rank's own compute move when the job slows down (shared) or only the fleet's tail?
        for w0, w1, acc, cnt in (
            (0, self.n_b, self.wy_base, self.ny_base),
            (s_n - self.n_late, s_n, self.wy_late, self.ny_late),
        ):
            a0, a1 = max(i0, w0), min(i1, w1)
            if a0 < a1:
                part = t[a0 - i0 : a1 - i0]
                if miss is None:
                    acc += part.sum(axis=0)
                    cnt += a1 - a0
                else:
                    acc += np.nansum(part, axis=0)
                    cnt += (~np.isnan(part)).sum(axis=0)
        if miss is not None:
            # a missing cell counts as typical: no evidence either way
            np.copyto(t, np.broadcast_to(self.fill[i0:i1], t.shape), where=miss)
        bsel = self.b[:n]
        np.greater(yb, self.cut_y[i0:i1], out=bsel)
        self.exceed += np.add.reduce(bsel.view(np.uint8), axis=0, dtype=np.uint8)

        # Normalized sums over blocks of steps: sum_s t_s / c_s (relative) or sum_s (t_s - c_s)
        # (additive), one vector-matrix product per block.
        nb = -(-n // _BLOCK)
        blocks = self.blocks[:nb]
        w = self.w[i0:i1]
        for j in range(nb):
            np.matmul(w[j * _BLOCK : (j + 1) * _BLOCK], t[j * _BLOCK : (j + 1) * _BLOCK], out=blocks[j])
        lengths = self._lengths.get(n)
        if lengths is None:
            lengths = self._lengths[n] = np.minimum(_BLOCK, n - _BLOCK * np.arange(nb)).astype(np.float32)
        if not self.cfg.relative:
            cs = np.add.reduceat(self.center[i0:i1], np.arange(0, n, _BLOCK))
            blocks -= cs.astype(np.float32)[:, None]
        total = blocks.sum(axis=0)
        self.wsum += total
        if baseline:
            # the baseline moments set every later CUSUM increment; the streaming detectors
            # compute them the same way, per step
            self.bsum += total
            # the clipped chunk is not needed any more: normalize it in place for the squares
            if self.cfg.relative:
                t *= w[:, None]
            else:
                t -= self.fill[i0:i1]
            self.bsq += np.einsum("ij,ij->j", t, t)
        elif self.cusum_enabled:
            self._cusum(blocks, lengths)

    def close_baseline(self) -> None:
        n_b = max(self.n_b, 1)
        mu = self.bsum / n_b
        var = np.maximum(self.bsq / n_b - mu * mu, 0.0)
        self.mu = mu
        # Never more sensitive than the fleet: a rank whose own baseline happened to be quiet is
        # standardized by the fleet's per-step spread.
        self.sig = np.maximum(np.sqrt(var), self.sigma_pool)
        self.inv_sig = (1.0 / self.sig).astype(np.float32)
        self.off_step = (self.mu / self.sig + self.k_eff).astype(np.float32)
        self.off_block = (_BLOCK * (self.mu / self.sig + self.k_eff)).astype(np.float32)

    def _cusum(self, blocks: np.ndarray, lengths: np.ndarray) -> None:
        # standardized block increments, in place: sum over the block of (x - mu)/sigma - k_eff,
        # = blocks / sigma - L * (mu / sigma + k_eff) with the per-rank term computed once
        z = blocks
        z *= self.inv_sig
        if lengths[-1] == _BLOCK:
            z -= self.off_block
        else:
            z -= lengths[:, None] * self.off_step
        c, cmax, zeros = self.c, self.cmax, self.zeros
        for row in z:
            np.add(c, row, out=c)
            np.maximum(c, zeros, out=c)  # an array, not the scalar 0: numpy's fast path
            np.maximum(cmax, c, out=cmax)


def screen_margin(k_eff: float) -> float:
    """How far below h a block-level CUSUM may sit while the per-step one crosses h.

    The block CUSUM can only reset at block ends and is read only there: on average that costs
    about half a block of drift plus a couple of standard deviations of a block's random walk.
    """
    return 0.5 * _BLOCK * k_eff + 2.0 * math.sqrt(_BLOCK)


def columns(y: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """(m, S) float32 copy of the columns ``idx`` of ``y`` (the exact follow-up on a few ranks)."""
    return np.ascontiguousarray(np.asarray(y[:, idx], dtype=np.float32).T)


def normalize(yc: np.ndarray, sc: Scan, clip: bool) -> np.ndarray:
    """Columns (m, S) in normalized units; winsorized like the scan when ``clip``; NaN kept."""
    c = np.where(sc.valid, sc.center, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        x = yc / c if sc.cfg.relative else yc - c
        if clip:
            x = np.clip(x, sc.lo, sc.hi)
    return x


def exact_cusum(yc: np.ndarray, sc: Scan, idx: np.ndarray) -> dict[str, np.ndarray]:
    """Per-step CUSUM on candidate columns (m, S), as the streaming detectors run it.

    The block screen sums unclipped increments, so it sits above this clipped CUSUM for any
    upward excursion: the screen can only add candidates, never hide a rank that crosses here.

    Lindley's recursion C_t = max(0, C_{t-1} + u_t) equals S_t - min(0, min_{j<=t} S_j) with S
    the cumulative sum of u, so it vectorizes as a cumsum and a running minimum. The onset is the
    last time the CUSUM sat at zero before the alarm: where the shift began. Returns ``stat`` (max
    C), ``alarm`` and ``onset`` (step indices, -1 when no alarm) and ``c_alarm`` (C at the alarm).
    """
    n_b = sc.n_baseline
    x = normalize(yc, sc, clip=True)[:, n_b:]
    x = np.where(np.isnan(x), sc.cfg.typical, x)
    # one step moves the CUSUM by at most CUSUM_CLIP sigmas: a single hiccup is not a shift
    u = np.clip((x - sc.base_mu[idx, None]) / sc.base_sigma[idx, None], -CUSUM_CLIP, CUSUM_CLIP) - sc.k_eff
    s = np.cumsum(u, axis=1)
    runmin = np.minimum(np.minimum.accumulate(s, axis=1), 0.0)
    c = s - runmin
    m, n = s.shape
    if n == 0:
        none = np.full(m, -1)
        return {"stat": np.zeros(m), "alarm": none, "onset": none, "c_alarm": np.zeros(m)}
    over = c > sc.h
    hit = over.any(axis=1)
    alarm = np.where(hit, over.argmax(axis=1), -1)
    pos = np.arange(n)
    # the running minimum is attained where the CUSUM was last zero; the shift starts one later
    at_min = (s == runmin) & (pos[None, :] <= np.maximum(alarm, 0)[:, None])
    last = np.where(at_min.any(axis=1), n - 1 - at_min[:, ::-1].argmax(axis=1), -1)
    c_alarm = np.where(hit, c[np.arange(m), np.maximum(alarm, 0)], 0.0)
    return {
        "stat": c.max(axis=1),
        "alarm": np.where(hit, n_b + alarm, -1),
        "onset": np.where(hit, n_b + last + 1, -1),
        "c_alarm": c_alarm,
    }


def step_times(duration: np.ndarray) -> np.ndarray:
    """Median duration over (a sample of) ranks per step: the step time every rank shares.

    In batches of ``_STEP_TIME_ROWS`` rows: a few large numpy calls (the scan takes it after its
    sweep, which does not need it)."""
    s_n, r_n = duration.shape
    dcols = _ref_cols(r_n, _DUR_SAMPLE)
    out = np.empty(s_n)
    k = _STEP_TIME_ROWS
    for i0 in range(0, s_n, k):
        out[i0 : i0 + k] = _row_quartiles(np.array(duration[i0 : i0 + k, dcols], dtype=np.float32))[1]
    return out
