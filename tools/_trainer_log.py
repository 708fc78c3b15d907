"""What a trainer says about itself: input-pipeline stalls, storage trouble, its own configuration
and throughput across restarts. Read from the same job logs as NCCL and the PyTorch watchdog.

- **Input stalls**, in the wordings of several frameworks and storage clients (each pattern names
  where it comes from). Time outside compute is not always communication: when the trainer itself
  says it waited for data, the input pipeline is the lead.
- **Explained slowdowns.** A relaunch with a larger global batch or a longer sequence makes every
  step longer while the work per second is unchanged. The trainer prints its configuration at
  start; comparing the first and the last configuration, and the throughput it reports in tokens
  (or samples) per second, tells a reconfiguration from a fault.

Patterns are bounded (no unbounded repeats) and matched line by line.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field

#: (label, pattern): a trainer or storage client saying it waited for input.
INPUT_STALL = [
    ("pytorch", re.compile(r"DataLoader (?:worker \(pid|timed out after|.{0,40}is killed by signal)", re.I)),
    ("pytorch", re.compile(r"Timeout waiting for (?:data|batch)|waiting for (?:the )?next batch", re.I)),
    ("megatron", re.compile(r"\bbatch-generator\b.{0,40}\d{4,}|data(?:-| )?loader (?:time|wait).{0,20}\d{3,}", re.I)),
    ("deepspeed", re.compile(r"\bdataloader\b.{0,60}\b(?:slow|stall|starv|bottleneck)", re.I)),
    ("lightning", re.compile(r"\b(?:train_dataloader|data fetching|fetch(?:ing)? next batch).{0,60}\b(?:slow|stall|took \d)", re.I)),
    ("ray", re.compile(r"Ray Data.{0,80}\b(?:backpressure|stall|slow|waiting)|ray\.data.{0,60}\b(?:backpressure|stall)", re.I)),
    ("prefetch", re.compile(r"\b(?:prefetch|input|data|shuffle)[ _-]?(?:queue|buffer)\b.{0,20}\b(?:empty|starv|drained|underrun)", re.I)),
    ("generic", re.compile(r"\b(?:data|input)[ _-](?:loading|pipeline|wait)\b.{0,30}\b(?:stall|slow|bottleneck|timeout|timed out)", re.I)),
    ("data_time", re.compile(r"\bdata_time[=: ]{1,3}(?:[1-9]\d{0,5}|0\.[3-9])\d{0,6}\s{0,2}s", re.I)),
    # Wider wordings (issue 11m): a loader timeout names what it waited for; c10d's "Timeout waiting
    # for key" is the rendezvous store, not input, so the object must be data-like.
    ("pytorch", re.compile(r"\bTimeout waiting for (?:the )?(?:data|batch|input|samples?|prefetch|worker|queue|shard|reader|records?)\b", re.I)),
    ("data_wait", re.compile(r"\b(?:dataloader(?:_time)?|data_wait|batch[_ ]wait|load_time|time/data)[=: ]{1,3}(?:[1-9]\d{0,5}(?:\.\d{1,6})?|0\.[3-9]\d{0,6})\s{0,2}s\b", re.I)),
    ("hf_datasets", re.compile(r"Got disconnected from remote data host|\bwebdataset\b.{0,80}\b(?:timeout|timed out|retry|stall|slow)", re.I)),
    ("tf.data", re.compile(r"\btf\.data\b.{0,80}\b(?:bottleneck|slow|stall|starv)|Filling up shuffle buffer|"
                           r"input pipeline is (?:the|a) bottleneck", re.I)),
    ("dali", re.compile(r"\b(?:nvidia\.)?DALI\b.{0,80}\b(?:timeout|timed out|stall|waiting|starv|slow)", re.I)),
    ("prefetch", re.compile(r"\b(?:prefetch|data|input|batch)[ _-]?queue\b.{0,20}\bis empty\b", re.I)),
]

#: (label, pattern): storage clients and file systems in trouble.
STORAGE = [
    ("s3", re.compile(r"\bSlowDown\b|503 Slow Down|Reduce your request rate|RequestTimeout|ReadTimeoutError|"
                      r"botocore\.exceptions\.\w{0,40}(?:Timeout|Throttl)", re.I)),
    ("nfs", re.compile(r"nfs: server \S{1,253} not responding|nfs.{0,40}timed out", re.I)),
    ("lustre", re.compile(r"LustreError|Lustre:.{0,120}(?:timed out|evict|Connection to \S{1,200} was lost)", re.I)),
    ("gcs", re.compile(r"gcsfuse.{0,80}(?:429|503|timeout|retry)|TooManyRequests|storage\.googleapis\.com.{0,80}(?:429|503)", re.I)),
    ("fs", re.compile(r"\b(?:EIO|Input/output error|Stale file handle|Transport endpoint is not connected)\b")),
    ("s3", re.compile(r"Read timeout on endpoint URL|\b503\b.{0,40}(?:Service Unavailable|Slow ?Down)|ThrottlingException", re.I)),
    ("nfs", re.compile(r"nfs: server \S{1,253} (?:OK|still trying)", re.I)),
    ("lustre", re.compile(r"\bptlrpc_\w{1,40}", re.I)),
    ("gpfs", re.compile(r"\bmmfs\w{0,10}\b.{0,120}(?:expel|timeout|timed out|lease)", re.I)),
    ("weka", re.compile(r"\bweka\w{0,10}\b.{0,120}(?:timeout|timed out|disconnect|unreachable)", re.I)),
    ("blocked", re.compile(r"INFO: task \S{1,64}:\d{1,10} blocked for more than \d{1,6} seconds")),
]

_CONFIG = {
    "global_batch_size": re.compile(r"\bglobal[ _-]?batch[ _-]?size\b[\"']?\s{0,3}[=:]?\s{0,3}(\d{1,9})", re.I),
    "seq_length": re.compile(r"\b(?:seq(?:uence)?[ _-]?len(?:gth)?|max[ _-]?seq[ _-]?len|context[ _-]?length)\b[\"']?\s{0,3}[=:]?\s{0,3}(\d{1,9})", re.I),
    "micro_batch_size": re.compile(r"\bmicro[ _-]?batch[ _-]?size\b[\"']?\s{0,3}[=:]?\s{0,3}(\d{1,9})", re.I),
    "tensor_parallel": re.compile(r"\btensor[ _-]?(?:model[ _-]?)?parallel[ _-]?size\b[\"']?\s{0,3}[=:]?\s{0,3}(\d{1,6})", re.I),
    "pipeline_parallel": re.compile(r"\bpipeline[ _-]?(?:model[ _-]?)?parallel[ _-]?size\b[\"']?\s{0,3}[=:]?\s{0,3}(\d{1,6})", re.I),
    "data_mix": re.compile(r"\b(?:data[ _-]?mix|data[ _-]?blend|dataset[ _-]?mixture)\b[\"']?\s{0,3}[=:]\s{0,3}(\S{1,120})", re.I),
}
_THROUGHPUT = re.compile(
    r"\b(?:tok(?:en)?s?(?:/s|/sec|_per_sec(?:ond)?|[ _-]per[ _-]s(?:ec(?:ond)?)?)|throughput(?: \(tokens/s\))?|"
    r"samples(?:/s|_per_sec(?:ond)?))\b\s{0,3}[=:]?\s{0,3}([\d][\d,]{0,15}(?:\.\d{1,6})?)", re.I)
_STEP_TIME = re.compile(r"\b(?:step_time|elapsed time per iteration \(ms\)|iteration time|time/step)\s{0,3}[=:]?\s{0,3}(\d{1,9}(?:\.\d{1,9})?)\s{0,2}(ms|s)?", re.I)

#: A throughput this close to the earlier one is "the same work per second".
SAME_WORK = 0.95

# Every pattern above needs one of these words in the line; most lines of a job log
# (NCCL, watchdog) have none, and one literal search skips them (issue 16: a 2,048-host job writes
# 2,048 logs). tests/tools/test_trainer_prefilter.py checks each pattern's own examples still pass.
_NEEDS = re.compile(
    "data|batch|waiting for|ray|prefetch|input|shuffle|fetch|slowdown|slow down|reduce your request rate|"
    "requesttimeout|readtimeouterror|botocore|nfs|lustre|gcsfuse|toomanyrequests|storage.googleapis|eio|"
    "stale file|transport endpoint|seq|len|context|parallel|tok|throughput|samples|step_time|iteration|time/step|"
    "timeout|wait|webdataset|disconnected|tf\\.data|dali|queue|load_time|503|throttl|ptlrpc|mmfs|weka|blocked for",
    re.I)  # the patterns' own case folding (re.I), so no line one of them matches is skipped


@dataclass
class TrainerFacts:
    """What the trainer logs said, across every log of the job."""

    stalls: list[tuple[str, str]] = field(default_factory=list)
    storage: list[tuple[str, str]] = field(default_factory=list)
    configs: list[dict[str, str]] = field(default_factory=list)
    throughput: list[tuple[int, float]] = field(default_factory=list)  # (config index, value)
    step_time: list[tuple[int, float]] = field(default_factory=list)  # (config index, seconds)

    def add_text(self, text: str) -> None:
        self.add_lines(text.splitlines())

    def add_lines(self, lines: Iterable[str]) -> None:
        """Read a log a line at a time (a streamed log never has to fit in memory)."""
        for line in lines:
            line = line[:4096]
            if not _NEEDS.search(line):
                continue
            for label, pat in INPUT_STALL:
                if pat.search(line):
                    self.stalls.append((label, line.strip()[:300]))
                    break
            for label, pat in STORAGE:
                if pat.search(line):
                    self.storage.append((label, line.strip()[:300]))
                    break
            found = {k: m.group(1) for k, pat in _CONFIG.items() if (m := pat.search(line))}
            if found:
                # consecutive config lines of one start belong together; a changed value starts a new one
                if self.configs and not any(self.configs[-1].get(k) not in (None, v) for k, v in found.items()):
                    self.configs[-1].update(found)
                else:
                    self.configs.append(dict(found))
            idx = max(0, len(self.configs) - 1)
            if m := _THROUGHPUT.search(line):
                try:
                    self.throughput.append((idx, float(m.group(1).replace(",", ""))))
                except ValueError:
                    pass
            if m := _STEP_TIME.search(line):
                v = float(m.group(1)) / (1000.0 if (m.group(2) or "").lower() == "ms" or "(ms)" in m.group(0) else 1.0)
                self.step_time.append((idx, v))

    def reconfiguration(self) -> dict[str, object] | None:
        """The first and last configuration differ, and work per second held: an explained slowdown."""
        if len(self.configs) < 2:
            return None
        first, last = self.configs[0], self.configs[-1]
        changed = sorted(k for k in first.keys() & last.keys() if first[k] != last[k])
        if not changed:
            return None
        out: dict[str, object] = {"changed": ",".join(f"{k} {first[k]} -> {last[k]}" for k in changed)}
        early = [v for i, v in self.throughput if i == 0]
        late = [v for i, v in self.throughput if i == len(self.configs) - 1]
        if early and late:
            ratio = statistics.median(late) / max(statistics.median(early), 1e-9)
            out.update(work_ratio=round(ratio, 4), basis="throughput")
            return out if ratio >= SAME_WORK else None
        # No throughput printed: the step time must have grown by no more than the work per step.
        work = 1.0
        for k in ("global_batch_size", "seq_length"):
            if k in changed:
                work *= float(last[k]) / max(float(first[k]), 1.0)
        e = [v for i, v in self.step_time if i == 0]
        t = [v for i, v in self.step_time if i == len(self.configs) - 1]
        if e and t and work > 1.0:
            step_ratio = statistics.median(t) / max(statistics.median(e), 1e-9)
            out.update(work_ratio=round(work / step_ratio, 4), basis="step time vs work per step")
            return out if work / step_ratio >= SAME_WORK else None
        return None
