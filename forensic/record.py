"""Per-rank step telemetry from inside the training job: the input of ``job_steps``.

A training loop calls the recorder each step; torch is optional::

    from forensic.record import StepRecorder

    rec = StepRecorder("/shared/job-42/forensic", model=model, checksum_every=100)   # rank etc. from torchrun's env
    for step, batch in enumerate(loader):
        with rec.step(step) as s:
            loss = train_step(batch)     # forward, backward
            s.compute_done()             # this rank's own work ends here, before it waits for the others
            optimizer.step()             # (the all-reduce / barrier happens in here or before)
            s.loss = float(loss)
    rec.close()

Per rank it appends rows to ``<out>/steps-rank<NNNNN>.csv`` in the spec's ``job/steps.csv`` format
(``step,rank,start_unix,duration_s,compute_s,loss,grad_norm,param_checksum`` then ``host,local_gpu``,
which ``forensic collect --job-dir`` turns into the rank placement). Ranks never share a file; the
bundle reader merges them. ``compute_s`` is the time to :meth:`Step.compute_done`: measured with
CUDA events on the current stream when torch and CUDA are present (GPU time, not the time the CPU
took to enqueue it), else a wall-clock span. A parameter checksum every N steps (CRC32 over the
replica's bytes) lets ``job_steps`` find a replica that silently diverged.

With ``textfile_dir`` it also writes Prometheus gauges and a step-duration histogram per rank in
node_exporter's textfile-collector format (``forensic_step_*``), replaced atomically at most every
``textfile_interval_s`` seconds and on close.

Adapters: :func:`lightning_callback` (PyTorch Lightning) and :func:`hf_callback` (Hugging Face
``Trainer``) import their framework only when called. The recorder never raises into the training
loop for a telemetry problem after it has started: a failed write is counted and reported by
:attr:`StepRecorder.errors`, and the run goes on.
"""

from __future__ import annotations

import os
import socket
import time
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from forensic.names import HOST_NAME_MAX, is_host_name

__all__ = ["Step", "StepRecorder", "hf_callback", "lightning_callback", "param_checksum"]

HEADER = (
    "step",
    "rank",
    "start_unix",
    "duration_s",
    "compute_s",
    "loss",
    "grad_norm",
    "param_checksum",
    "host",
    "local_gpu",
)
#: Upper bounds (seconds) of the step-duration histogram.
BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def param_checksum(params: Any) -> str:
    """CRC32 (hex) over a replica's parameters: a torch module, an iterable of tensors/arrays, or bytes.

    Replicas of one data-parallel group hold the same bytes after the optimizer step, so their
    checksums agree exactly; one that differs with no error anywhere is silent data corruption.
    """
    if isinstance(params, (bytes, bytearray, memoryview)):
        return f"{zlib.crc32(params) & 0xFFFFFFFF:08x}"
    if hasattr(params, "parameters") and callable(params.parameters):
        params = params.parameters()
    crc = 0
    for p in params if isinstance(params, Iterable) else [params]:
        if hasattr(p, "detach"):  # a torch tensor: copy to host memory once
            p = p.detach().cpu().contiguous().numpy()
        data = p.tobytes() if hasattr(p, "tobytes") else bytes(memoryview(p))
        crc = zlib.crc32(data, crc)
    return f"{crc & 0xFFFFFFFF:08x}"


def _cuda_timer() -> Any:
    """torch.cuda when the job has imported torch and a GPU is present, else None.

    torch is never imported here: a job that does not use it must not pay seconds of import time.
    """
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        return torch.cuda if torch.cuda.is_available() else None
    except Exception:  # a broken driver must not stop training
        return None


class Step:
    """One step of one rank: a context manager from :meth:`StepRecorder.step`."""

    __slots__ = ("_rec", "step", "loss", "grad_norm", "_t0", "_wall0", "_t_compute", "_ev0", "_ev1")

    def __init__(self, rec: StepRecorder, step: int) -> None:
        self._rec = rec
        self.step = step
        #: Set by the loop when it has them; written as empty cells otherwise.
        self.loss: float | None = None
        self.grad_norm: float | None = None
        self._t_compute: float | None = None
        # CUDA events (torch.cuda.Event) when the recorder times compute on the GPU.
        self._ev0: Any = None
        self._ev1: Any = None

    def __enter__(self) -> Step:
        rec = self._rec
        self._wall0 = rec._clock()
        self._t0 = rec._perf()
        if rec._cuda is not None:
            self._ev0 = rec._cuda.Event(enable_timing=True)
            self._ev0.record()
        return self

    def compute_done(self) -> None:
        """Mark the end of this rank's own work, before it waits at the step's collective."""
        if self._rec._cuda is not None:
            self._ev1 = self._rec._cuda.Event(enable_timing=True)
            self._ev1.record()
        self._t_compute = self._rec._perf()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        rec = self._rec
        duration = rec._perf() - self._t0
        compute: float | None = None
        if self._ev1 is not None and self._ev0 is not None:
            try:
                self._ev1.synchronize()  # after the collective: the work is done, this does not stall
                compute = self._ev0.elapsed_time(self._ev1) / 1000.0
            except Exception:
                compute = None
        if compute is None and self._t_compute is not None:
            compute = self._t_compute - self._t0
        if exc_type is None:  # a step that raised did not happen: nothing is recorded for it
            rec._record(self, self._wall0, duration, compute)


class StepRecorder:
    """Records this rank's steps. One instance per process; safe to use without torch."""

    def __init__(
        self,
        out_dir: str | os.PathLike[str] | None,
        *,
        rank: int | None = None,
        host: str | None = None,
        local_gpu: int | None = None,
        model: Any = None,
        checksum_every: int = 0,
        flush_every: int = 1,
        textfile_dir: str | os.PathLike[str] | None = None,
        textfile_interval_s: float = 5.0,
        job: str | None = None,
        cuda: bool | None = None,
        clock: Callable[[], float] = time.time,
        perf: Callable[[], float] = time.perf_counter,
    ) -> None:
        env = os.environ
        self.rank = int(rank if rank is not None else env.get("RANK", env.get("SLURM_PROCID", "0")))
        self.local_gpu = int(
            local_gpu if local_gpu is not None else env.get("LOCAL_RANK", env.get("SLURM_LOCALID", self.rank))
        )
        self.host = host or socket.gethostname()
        self.job = job or env.get("FORENSIC_JOB", "")
        if self.rank < 0 or self.local_gpu < 0:
            raise ValueError("rank and local_gpu must be >= 0")
        if not is_host_name(self.host):
            raise ValueError(
                f"host {self.host!r} is not a valid host name (up to {HOST_NAME_MAX} characters: "
                "dot-separated labels of letters, digits, - and _)"
            )
        if checksum_every < 0 or flush_every < 1:
            raise ValueError("checksum_every must be >= 0 and flush_every >= 1")
        if checksum_every and model is None:
            raise ValueError("checksum_every needs model= (a module or parameters to checksum)")
        if out_dir is None and textfile_dir is None:
            raise ValueError("give out_dir (steps CSV), textfile_dir (Prometheus), or both")
        self.model = model
        self.checksum_every = checksum_every
        self.flush_every = flush_every
        self._clock, self._perf = clock, perf
        self._cuda = _cuda_timer() if cuda is not False else None
        if cuda is True and self._cuda is None:
            raise ValueError("cuda=True but torch with a CUDA device is not available")
        #: Rows or metric files that could not be written (the run goes on; see the module docstring).
        self.errors = 0
        self.path: Path | None = None
        self._fh = None
        self._pending = 0
        if out_dir is not None:
            d = Path(out_dir)
            d.mkdir(parents=True, exist_ok=True)
            self.path = d / f"steps-rank{self.rank:05d}.csv"
            self._fh = open(self.path, "a", encoding="utf-8", buffering=1 << 16)
            if self._fh.tell() == 0:
                self._fh.write(",".join(HEADER) + "\n")
                self._fh.flush()
        self._textfile = (
            Path(textfile_dir) / f"forensic_steps_rank{self.rank:05d}.prom" if textfile_dir else None
        )
        if self._textfile is not None:
            self._textfile.parent.mkdir(parents=True, exist_ok=True)
        # Prometheus scrapes every 15-60 s: rewriting the file every step would cost more than the step's telemetry.
        self.textfile_interval_s = textfile_interval_s
        self._textfile_at = float("-inf")
        self._last: tuple[int, float, float, float | None] | None = None
        self._hist = [0] * (len(BUCKETS) + 1)
        self._hist_sum = 0.0
        self._count = 0

    def step(self, step: int) -> Step:
        """A context manager around one step; call :meth:`Step.compute_done` inside it."""
        return Step(self, int(step))

    def _record(self, s: Step, start: float, duration: float, compute: float | None) -> None:
        checksum = ""
        if self.checksum_every and s.step % self.checksum_every == 0:
            try:
                checksum = param_checksum(self.model)
            except Exception:
                self.errors += 1
        self._count += 1
        if self._fh is not None:
            row = (
                str(s.step),
                str(self.rank),
                f"{start:.6f}",
                f"{duration:.6f}",
                "" if compute is None else f"{compute:.6f}",
                _num(s.loss),
                _num(s.grad_norm),
                checksum,
                self.host,
                str(self.local_gpu),
            )
            try:
                self._fh.write(",".join(row) + "\n")
                self._pending += 1
                if self._pending >= self.flush_every:
                    self._fh.flush()
                    self._pending = 0
            except OSError:
                self.errors += 1
        if self._textfile is not None:
            i = next((k for k, b in enumerate(BUCKETS) if duration <= b), len(BUCKETS))
            self._hist[i] += 1
            self._hist_sum += duration
            self._last = (s.step, start, duration, compute)
            now = self._perf()
            if now - self._textfile_at >= self.textfile_interval_s:
                self._textfile_at = now
                self._write_textfile(*self._last)

    def _write_textfile(self, step: int, start: float, duration: float, compute: float | None) -> None:
        assert self._textfile is not None  # called only when the recorder writes a textfile
        labels = f'job="{_label(self.job)}",rank="{self.rank}",host="{self.host}",gpu="{self.local_gpu}"'
        lines = [
            "# HELP forensic_step_duration_seconds Wall time of this rank's last recorded step.",
            "# TYPE forensic_step_duration_seconds gauge",
            f"forensic_step_duration_seconds{{{labels}}} {duration:.6f}",
            "# HELP forensic_step_compute_seconds This rank's own work in its last step, before the collective.",
            "# TYPE forensic_step_compute_seconds gauge",
        ]
        if compute is not None:
            lines.append(f"forensic_step_compute_seconds{{{labels}}} {compute:.6f}")
        lines += [
            "# HELP forensic_step_start_timestamp_seconds Start of this rank's last recorded step.",
            "# TYPE forensic_step_start_timestamp_seconds gauge",
            f"forensic_step_start_timestamp_seconds{{{labels}}} {start:.6f}",
            "# HELP forensic_step_number Number of this rank's last recorded step.",
            "# TYPE forensic_step_number gauge",
            f"forensic_step_number{{{labels}}} {step}",
            "# HELP forensic_step_duration_histogram_seconds Step wall times of this rank.",
            "# TYPE forensic_step_duration_histogram_seconds histogram",
        ]
        acc = 0
        for b, n in zip(BUCKETS, self._hist[:-1], strict=True):  # the last count is the +Inf bucket's
            acc += n
            lines.append(f'forensic_step_duration_histogram_seconds_bucket{{{labels},le="{b}"}} {acc}')
        lines.append(f'forensic_step_duration_histogram_seconds_bucket{{{labels},le="+Inf"}} {self._count}')
        lines.append(f"forensic_step_duration_histogram_seconds_sum{{{labels}}} {self._hist_sum:.6f}")
        lines.append(f"forensic_step_duration_histogram_seconds_count{{{labels}}} {self._count}")
        tmp = self._textfile.with_name(self._textfile.name + ".tmp")
        try:
            tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
            os.replace(tmp, self._textfile)  # the collector never reads half a file
        except OSError:
            self.errors += 1

    def close(self) -> None:
        if self._textfile is not None and self._last is not None:
            self._write_textfile(*self._last)
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError:
                self.errors += 1
            self._fh = None

    def __enter__(self) -> StepRecorder:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _num(v: float | None) -> str:
    if v is None:
        return ""
    try:
        return f"{float(v):.6g}"
    except (TypeError, ValueError):
        return ""


def _label(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


# -- framework adapters ---------------------------------------------------------------------------
def lightning_callback(out_dir: str | os.PathLike[str] | None, **kwargs: Any) -> Any:
    """A PyTorch Lightning ``Callback`` that records every training batch as a step.

    Compute ends at ``on_after_backward`` (under DDP, gradient all-reduce overlaps backward, so this
    slightly overstates compute for every rank alike; the straggler still stands out).
    """
    try:
        from lightning.pytorch import Callback
    except ImportError:
        try:
            from pytorch_lightning import Callback
        except ImportError:
            raise ImportError("lightning_callback needs PyTorch Lightning (pip install lightning)") from None

    class ForensicLightningCallback(Callback):
        def __init__(self) -> None:
            self.recorder: StepRecorder | None = None
            self._step: Step | None = None

        def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
            if self.recorder is None:
                kw = {
                    "rank": trainer.global_rank,
                    "local_gpu": trainer.local_rank,
                    "model": pl_module,
                    **kwargs,
                }
                self.recorder = StepRecorder(out_dir, **kw)

        def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int) -> None:
            assert self.recorder is not None, "Lightning calls setup before the first batch"
            self._step = self.recorder.step(trainer.global_step).__enter__()

        def on_after_backward(self, trainer: Any, pl_module: Any) -> None:
            if self._step is not None:
                self._step.compute_done()

        def on_train_batch_end(
            self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int
        ) -> None:
            if self._step is not None:
                loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
                try:
                    self._step.loss = float(loss) if loss is not None else None
                except (TypeError, ValueError):
                    pass
                self._step.__exit__(None, None, None)
                self._step = None

        def teardown(self, trainer: Any, pl_module: Any, stage: str) -> None:
            if self.recorder is not None:
                self.recorder.close()

    return ForensicLightningCallback()


def hf_callback(out_dir: str | os.PathLike[str] | None, **kwargs: Any) -> Any:
    """A Hugging Face ``TrainerCallback`` that records every optimizer step.

    The Trainer has no hook between backward and the collective, so ``compute_s`` comes from CUDA
    events only when the model calls :meth:`Step.compute_done` itself; otherwise it is left empty.
    """
    try:
        from transformers import TrainerCallback
    except ImportError:
        raise ImportError("hf_callback needs Hugging Face transformers (pip install transformers)") from None

    class ForensicTrainerCallback(TrainerCallback):
        def __init__(self) -> None:
            self.recorder: StepRecorder | None = None
            self._step: Step | None = None

        def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
            if self.recorder is None:
                opts = {
                    "rank": state.process_index if hasattr(state, "process_index") else args.process_index,
                    "local_gpu": max(0, int(getattr(args, "local_rank", 0) or 0)),
                    "model": model,
                    **kwargs,
                }
                self.recorder = StepRecorder(out_dir, **opts)

        def on_step_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            assert self.recorder is not None, "the Trainer calls on_train_begin before the first step"
            self._step = self.recorder.step(state.global_step).__enter__()

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if self._step is not None:
                self._step.__exit__(None, None, None)
                self._step = None

        def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if self.recorder is not None:
                self.recorder.close()

    return ForensicTrainerCallback()
