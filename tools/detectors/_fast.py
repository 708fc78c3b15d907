"""The compiled kernel of the one-sweep scan (numba, optional extra ``fast``).

Per step (row) and rank (column) of a group of steps, one loop reads each value once and does
what the numpy route does in several passes over a chunk: the clip to the step's winsor band,
the spike comparison and count, the weighted block sum (weight 1 / the step's median), the
baseline's sums of squares, the winsorized raw sums of the baseline and late windows, and at the
end of each block of ``_BLOCK`` steps the block CUSUM. A loop over each block before it (a plain
streaming read that brings the block into cache) takes each step's maximum and its rank (NaN
ignored; ``_block_tops``), and ``_gather`` copies the rank sample of the per-step reference.

* **When it runs:** only when numba imports, the array is float32 with contiguous rows and it
  holds at least ``MIN_ELEMENTS`` values (``_scan._one_sweep``, relative mode). Smaller arrays
  take the numpy route: compiling costs about a second the first time on a machine, which a small
  investigation should never pay. ``FORENSIC_DETECTORS_NUMBA=0`` in the environment (or
  ``set_enabled(False)``) turns the kernel off; the numpy route is then used everywhere.
* **Compile cache:** ``cache=True`` (numba's cache folder: next to this file, else
  ``NUMBA_CACHE_DIR`` or the user's cache). When no folder is writable the kernel compiles in
  memory instead, every process, and the run goes on.
* **Single-threaded** (no ``parallel=True``): the benchmark's floor is one single-threaded numpy
  pass, and a multi-core kernel would flatter the ratio.

numba is imported here, lazily, on the first large scan: never by ``import forensic`` or by the
investigator on small arrays.
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np

MIN_ELEMENTS = 4_000_000
"""Arrays with fewer values (e.g. 1,024 ranks x 3,900 steps) take the numpy route."""

_BLOCK = 8  # must equal _scan._BLOCK
_RUN = 16  # must equal _scan._RUN
_AHEAD = 8  # rows of the rank sample prefetched ahead of the gather
_TILE = 512
"""Ranks per tile of the row maxima (``_block_tops``): the rank of a row's maximum is searched for
in one tile only."""

_state: dict = {
    "enabled": os.environ.get("FORENSIC_DETECTORS_NUMBA", "1") not in ("0", "false", "no"),
    "kernel": None,
    "error": None,
    "compile_s": None,
    "runs": 0,
}


def set_enabled(on: bool) -> bool:
    """Turn the compiled kernel on or off (tests run the detectors both ways); returns the old value."""
    old = _state["enabled"]
    _state["enabled"] = bool(on)
    return old


def enabled() -> bool:
    return bool(_state["enabled"])


def available() -> bool:
    """True when numba imports (it is compiled lazily, on the first call of ``kernel``)."""
    if not _state["enabled"]:
        return False
    if _state["error"] is not None:
        return False
    try:
        import numba  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - any import failure means: use numpy
        _state["error"] = f"{type(exc).__name__}: {exc}"
        return False
    return True


def use_for(y: np.ndarray) -> bool:
    """Whether the scan of ``y`` takes the compiled route (compiling the kernel on first use).

    A kernel that fails to compile is recorded (``info()["numba_error"]``) and the numpy route runs.
    """
    if not (
        y.size >= MIN_ELEMENTS
        and y.dtype == np.float32
        and y.ndim == 2
        and y.flags.c_contiguous
        and available()
    ):
        return False
    try:
        kernel()
    except Exception as exc:  # noqa: BLE001 - any compile failure means: use numpy
        _state["error"] = f"{type(exc).__name__}: {exc}"
        return False
    return True


def info() -> dict:
    """What the benchmark reports: whether the kernel is on, and its compile (or cache load) time."""
    return {
        "enabled": enabled(),
        "numba_error": _state["error"],
        "compile_s": _state["compile_s"],
        "min_elements": MIN_ELEMENTS,
        "runs": _state["runs"],
    }


def _group(
    y,
    i0,
    i1,
    lo,
    hi,
    cut,
    w,
    fill,
    base_end,
    late_start,
    baseline,
    cusum,
    inv_sig,
    off_step,
    row_nan,
    acc,
    exc,
    n_miss,
    wsum,
    bsum,
    bsq,
    c,
    cmax,
    wy_base,
    ny_base,
    wy_late,
    ny_late,
    n_clean,
    yi,
    top,
    top_rank,
    tmax,
):  # pragma: no cover
    """Pass B over rows i0:i1 of y (all on one side of the baseline), in blocks of _BLOCK rows from i0.

    A full block that does not straddle the start of the late window runs in ``_fast_block``
    (eight rows per pass over the ranks: each per-rank array is read and written once per block);
    a block with a NaN cell, a short block or a straddling one runs again, or only, row by row in
    ``_careful_block``. At the block's end the per-rank sums move to float64 and the block CUSUM
    advances.
    """
    n_r = y.shape[1]
    zero = np.float32(0.0)
    blk, sq, raw, spikes = acc[0], acc[1], acc[2], acc[3]
    s = i0
    while s < i1:
        e = min(s + _BLOCK, i1)
        fast = e - s == _BLOCK and not (s < late_start < e)
        n_nan = 1
        if fast:
            # the maxima first: a plain streaming read brings the block into cache for the fast loop
            # (a block with a missing cell gets its maxima again from _careful_block)
            _block_tops(y, yi, s, tmax, top, top_rank)
            n_nan = _fast_block(y, s, lo, hi, cut, w, acc)
            for r in range(n_r):
                exc[r] += np.int32(spikes[r])
        if n_nan:
            _careful_block(
                y,
                s,
                e,
                lo,
                hi,
                cut,
                w,
                fill,
                base_end,
                late_start,
                not fast,
                row_nan,
                blk,
                sq,
                exc,
                n_miss,
                wy_base,
                ny_base,
                wy_late,
                ny_late,
                top,
                top_rank,
            )
        else:
            for j in range(s, e):
                row_nan[j] = False
        clean = fast and n_nan == 0
        # one branch-free loop per case, so that each vectorizes
        if baseline:
            for r in range(n_r):
                b = blk[r]
                wsum[r] += b
                bsum[r] += b
                bsq[r] += sq[r]
        elif cusum:
            n_blk = np.float32(e - s)
            for r in range(n_r):
                b = blk[r]
                wsum[r] += b
                cc = c[r] + (b * inv_sig[r] - n_blk * off_step[r])
                cc = cc if cc > zero else zero
                c[r] = cc
                cm = cmax[r]
                cmax[r] = cc if cc > cm else cm
        else:
            for r in range(n_r):
                wsum[r] += blk[r]
        # a clean block adds _BLOCK to every rank's count: counted once here (n_clean), added to the
        # per-rank counts by the caller at the end
        if clean and s < base_end:
            for r in range(n_r):
                wy_base[r] += raw[r]
            n_clean[0] += _BLOCK
        if clean and s >= late_start:
            for r in range(n_r):
                wy_late[r] += raw[r]
            n_clean[1] += _BLOCK
        s = e


def _prefetch(a, i, j):  # pragma: no cover - replaced by llvm.prefetch when compiled (``_jit``)
    return None


def _careful_block(
    y,
    s,
    e,
    lo,
    hi,
    cut,
    w,
    fill,
    base_end,
    late_start,
    do_exc,
    row_nan,
    blk,
    sq,
    exc,
    n_miss,
    wy_base,
    ny_base,
    wy_late,
    ny_late,
    top,
    top_rank,
):  # pragma: no cover
    """Rows s:e row by row: a missing cell counts as typical (the step's median) in the sums and is
    left out of the raw window sums; the spike counts only when ``do_exc`` (not done by the fast loop).
    Also each row's maximum and its rank, NaN ignored, as ``_scan._row_max`` gives them."""
    n_r = y.shape[1]
    zero = np.float32(0.0)
    for r in range(n_r):
        blk[r] = zero
        sq[r] = zero
    for j in range(s, e):
        row = y[j]
        lo_j, hi_j, cut_j, w_j, f_j = lo[j], hi[j], cut[j], w[j], fill[j]
        nan = False
        n_nan = 0
        m = -np.inf
        at = -1
        in_base = j < base_end
        in_late = j >= late_start
        for r in range(n_r):
            v = row[r]
            if do_exc and v > cut_j:
                exc[r] += 1
            if v != v:
                nan = True
                n_nan += 1
                n_miss[r] += 1
                t = f_j
            else:
                if v > m:
                    m = v
                    at = r
                t = hi_j if v > hi_j else (lo_j if v < lo_j else v)
                if in_base:
                    wy_base[r] += t
                    ny_base[r] += 1
                if in_late:
                    wy_late[r] += t
                    ny_late[r] += 1
            x = w_j * t
            blk[r] += x
            sq[r] += x * x
        row_nan[j] = nan
        if n_nan == n_r:
            top[j] = np.nan
            top_rank[j] = -1
        else:
            if at < 0:  # every value is -inf or missing: numpy's argmax takes the first of those
                at = 0
                while row[at] == row[at] and row[at] != -np.inf:
                    at += 1
                m = -np.inf
            top[j] = m
            top_rank[j] = at


def _block_tops(y, yi, s, tmax, top, top_rank):  # pragma: no cover - numba
    """The maximum of rows s:s+8 (a block without missing cells) and its first rank, while the
    block is still in cache.

    ``yi`` is ``y`` seen as int32: a non-negative float orders like its bits read as a signed
    integer, and every negative float reads as a negative integer. Per tile of ``_TILE`` ranks one
    loop takes the eight rows' integer maxima (eight integer maximum reductions: they vectorize,
    where a float maximum without fast-math flags does not); per row the first tile that holds the
    row's maximum, then the first rank in it, give the rank, as numpy's argmax does. A row whose
    maximum is not positive (every value negative, or a zero that may be -0.0) is searched again
    as floats, rank by rank."""
    n_r = y.shape[1]
    n_t = -(-n_r // _TILE)
    least = np.int32(-2147483648)
    for i in range(n_t):
        a = i * _TILE
        b = min(n_r, a + _TILE)
        r0, r1, r2, r3 = yi[s, a:b], yi[s + 1, a:b], yi[s + 2, a:b], yi[s + 3, a:b]
        r4, r5, r6, r7 = yi[s + 4, a:b], yi[s + 5, a:b], yi[s + 6, a:b], yi[s + 7, a:b]
        m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = least
        for r in range(b - a):  # from 0 over row views: no negative-index wraparound, contiguous loads
            m0 = max(m0, r0[r])
            m1 = max(m1, r1[r])
            m2 = max(m2, r2[r])
            m3 = max(m3, r3[r])
            m4 = max(m4, r4[r])
            m5 = max(m5, r5[r])
            m6 = max(m6, r6[r])
            m7 = max(m7, r7[r])
        tmax[0, i], tmax[1, i], tmax[2, i], tmax[3, i] = m0, m1, m2, m3
        tmax[4, i], tmax[5, i], tmax[6, i], tmax[7, i] = m4, m5, m6, m7
    for k in range(_BLOCK):
        m = tmax[k, 0]
        for i in range(1, n_t):
            m = max(m, tmax[k, i])
        if m > 0:
            i = 0
            while tmax[k, i] != m:
                i += 1
            bits = yi[s + k]
            r = i * _TILE
            while bits[r] != m:
                r += 1
        else:
            row = y[s + k]
            r = 0
            for j in range(1, n_r):
                if row[j] > row[r]:
                    r = j
        top[s + k] = y[s + k, r]
        top_rank[s + k] = r


def _fast_block(y, s, lo, hi, cut, w, acc):  # pragma: no cover - numba
    """Rows s:s+8 in one loop over ranks: per rank the block's weighted, squared and raw clipped sums
    and its spike count, into the rows of ``acc`` (one output array and one input block: the loop
    vectorizes). Returns the count of ranks whose block sum is NaN (a NaN cell passes the clip and
    reaches the sum): the caller redoes the sums of a block that has any.

    The clip is written as two selects whose operand order is that of the x86 minimum and maximum
    (``h if h < v else v``: a NaN ``v`` falls through both), so each compiles to one instruction
    (lo < hi on every step the kernel sees); a spike adds one under a mask."""
    yb = y[s : s + 8]
    l0, l1, l2, l3, l4, l5, l6, l7 = (
        lo[s + 0],
        lo[s + 1],
        lo[s + 2],
        lo[s + 3],
        lo[s + 4],
        lo[s + 5],
        lo[s + 6],
        lo[s + 7],
    )
    h0, h1, h2, h3, h4, h5, h6, h7 = (
        hi[s + 0],
        hi[s + 1],
        hi[s + 2],
        hi[s + 3],
        hi[s + 4],
        hi[s + 5],
        hi[s + 6],
        hi[s + 7],
    )
    c0, c1, c2, c3, c4, c5, c6, c7 = (
        cut[s + 0],
        cut[s + 1],
        cut[s + 2],
        cut[s + 3],
        cut[s + 4],
        cut[s + 5],
        cut[s + 6],
        cut[s + 7],
    )
    w0, w1, w2, w3, w4, w5, w6, w7 = (
        w[s + 0],
        w[s + 1],
        w[s + 2],
        w[s + 3],
        w[s + 4],
        w[s + 5],
        w[s + 6],
        w[s + 7],
    )
    one, zero = np.float32(1.0), np.float32(0.0)
    for r in range(y.shape[1]):
        v = yb[0, r]
        t = h0 if h0 < v else v
        t = l0 if l0 > t else t
        x = w0 * t
        u = t
        a = x
        q = x * x
        e = one if v > c0 else zero
        v = yb[1, r]
        t = h1 if h1 < v else v
        t = l1 if l1 > t else t
        x = w1 * t
        u += t
        a += x
        q += x * x
        e = e + one if v > c1 else e
        v = yb[2, r]
        t = h2 if h2 < v else v
        t = l2 if l2 > t else t
        x = w2 * t
        u += t
        a += x
        q += x * x
        e = e + one if v > c2 else e
        v = yb[3, r]
        t = h3 if h3 < v else v
        t = l3 if l3 > t else t
        x = w3 * t
        u += t
        a += x
        q += x * x
        e = e + one if v > c3 else e
        v = yb[4, r]
        t = h4 if h4 < v else v
        t = l4 if l4 > t else t
        x = w4 * t
        u += t
        a += x
        q += x * x
        e = e + one if v > c4 else e
        v = yb[5, r]
        t = h5 if h5 < v else v
        t = l5 if l5 > t else t
        x = w5 * t
        u += t
        a += x
        q += x * x
        e = e + one if v > c5 else e
        v = yb[6, r]
        t = h6 if h6 < v else v
        t = l6 if l6 > t else t
        x = w6 * t
        u += t
        a += x
        q += x * x
        e = e + one if v > c6 else e
        v = yb[7, r]
        t = h7 if h7 < v else v
        t = l7 if l7 > t else t
        x = w7 * t
        u += t
        a += x
        q += x * x
        e = e + one if v > c7 else e
        acc[0, r] = a
        acc[1, r] = q
        acc[2, r] = u
        acc[3, r] = e
    n_nan = np.int64(0)
    for r in range(y.shape[1]):
        n_nan += np.int64(acc[0, r] != acc[0, r])
    return n_nan


def _gather(y, i0, i1, step, out):  # pragma: no cover - numba
    """Rows i0:i1 of the rank sample into ``out``: runs of ``_RUN`` adjacent ranks every ``step``
    ranks (``_scan._sample``'s columns, in its order), one whole cache line per run. The lines of
    the row ``_AHEAD`` rows on are prefetched (the hardware does not foresee this pattern)."""
    groups = out.shape[1] // _RUN
    n = i1 - i0
    for j in range(min(n, _AHEAD)):
        for g in range(groups):
            _prefetch(y, i0 + j, g * step)
    for j in range(n):
        if j + _AHEAD < n:
            for g in range(groups):
                _prefetch(y, i0 + j + _AHEAD, g * step)
        row = y[i0 + j]
        dst = out[j]
        for g in range(groups):
            src = row[g * step : g * step + _RUN]
            for q in range(_RUN):
                dst[g * _RUN + q] = src[q]
    return out


def kernel():
    """The compiled ``_group`` (compiled, or loaded from numba's cache, on the first call)."""
    if _state["kernel"] is None:
        import numba

        t0 = time.perf_counter()
        try:
            fn = _jit(numba, True)
        except RuntimeError:  # no writable cache location at all: compile in memory
            fn = _jit(numba, False)
        with warnings.catch_warnings():
            # an unwritable cache folder is a warning from numba: the kernel still compiles in memory
            warnings.simplefilter("ignore", numba.NumbaWarning)
            try:
                fn = _compile(fn)
            except (OSError, PermissionError):
                fn = _compile(_jit(numba, False))
        _state["compile_s"] = time.perf_counter() - t0
        _state["kernel"] = fn
    return _state["kernel"]


def _jit(numba, cache: bool):
    """``_group`` and its helpers, jitted afresh (the module's helper names are rebound to them)."""
    opts = {"cache": cache, "nogil": True, "error_model": "numpy"}
    g = globals()
    g["_prefetch"] = _prefetcher(numba)
    for name, py in _HELPERS.items():
        g[name] = numba.njit(**opts)(py)
    return numba.njit(**opts)(_group)


def _prefetcher(numba):
    """``llvm.prefetch`` of the cache line that holds ``a[i, j]`` (a hint: it never faults)."""
    from llvmlite import binding, ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    # the intrinsic's name carries its pointer type: opaque (LLVM 15 on) or i8* (numba 0.60's LLVM 14)
    name = "llvm.prefetch.p0" if binding.llvm_version_info[0] >= 15 else "llvm.prefetch.p0i8"

    def prefetch(typingctx, a, i, j):
        def codegen(context, builder, signature, args):
            aty = signature.args[0]
            arr = context.make_array(aty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aty, arr, [args[1], args[2]], wraparound=False)
            ptr = builder.bitcast(ptr, ir.IntType(8).as_pointer())
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, name)
            builder.call(fn, [ptr, i32(0), i32(2), i32(1)])  # a read, into the outer caches, of data
            return context.get_dummy_value()

        return types.void(a, i, j), codegen

    return intrinsic(prefetch)


def _compile(fn):
    f32, i64 = "float32[:]", "int64[:]"
    sig = (
        f"(float32[:, ::1], int64, int64, {f32}, {f32}, {f32}, {f32}, {f32}, int64, int64, boolean, boolean, "
        f"{f32}, {f32}, boolean[:], float32[:, ::1], int32[:], {i64}, float64[:], float64[:], "
        f"float64[:], {f32}, {f32}, float64[:], {i64}, float64[:], {i64}, {i64}, int32[:, ::1], float64[:], {i64}, "
        f"int32[:, ::1])"
    )
    fn.compile(sig)
    globals()["_gather"].compile("(float32[:, ::1], int64, int64, int64, float32[:, ::1])")
    return fn


_HELPERS = {
    "_fast_block": _fast_block,
    "_careful_block": _careful_block,
    "_block_tops": _block_tops,
    "_gather": _gather,
}
