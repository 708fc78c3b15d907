"""What a trainer says about itself: input-pipeline stalls, storage trouble, its own configuration
and throughput across restarts. Read from the same job logs as NCCL and the PyTorch watchdog.

- **Input stalls**, in the wordings of several frameworks and storage clients (each pattern names
  where it comes from). Time outside compute is not always communication: when the trainer itself
  says it waited for data, the input pipeline is the lead.
- **Explained slowdowns.** A relaunch with a larger global batch or a longer sequence makes every
  step longer while the work per GPU per second is unchanged. The trainer prints its configuration
  at start; comparing the first and the last configuration, and the rate it reports (tokens or
  samples per second, TFLOP/s, MFU; per GPU where it says so), tells a reconfiguration from a
  fault. Wordings of torchrun scripts, Megatron-LM, DeepSpeed, HF Trainer, Lightning, NeMo,
  MosaicML Composer, torchtitan and JSON-lines metrics (see ``_CONFIG``, ``_RATE``, ``_STEP_TIME``).

Patterns are bounded (no unbounded repeats) and matched line by line.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable

#: (label, pattern): a trainer or storage client saying it waited for input.
INPUT_STALL = [
    ("pytorch", re.compile(r"DataLoader (?:worker \(pid|timed out after|.{0,40}is killed by signal)", re.I)),
    ("pytorch", re.compile(r"Timeout waiting for (?:data|batch)|waiting for (?:the )?next batch", re.I)),
    (
        "megatron",
        re.compile(r"\bbatch-generator\b.{0,40}\d{4,}|data(?:-| )?loader (?:time|wait).{0,20}\d{3,}", re.I),
    ),
    ("deepspeed", re.compile(r"\bdataloader\b.{0,60}\b(?:slow|stall|starv|bottleneck)", re.I)),
    (
        "lightning",
        re.compile(
            r"\b(?:train_dataloader|data fetching|fetch(?:ing)? next batch).{0,60}\b(?:slow|stall|took \d)",
            re.I,
        ),
    ),
    (
        "ray",
        re.compile(
            r"Ray Data.{0,80}\b(?:backpressure|stall|slow|waiting)|ray\.data.{0,60}\b(?:backpressure|stall)",
            re.I,
        ),
    ),
    (
        "prefetch",
        re.compile(
            r"\b(?:prefetch|input|data|shuffle)[ _-]?(?:queue|buffer)\b.{0,20}\b(?:empty|starv|drained|underrun)",
            re.I,
        ),
    ),
    (
        "generic",
        re.compile(
            r"\b(?:data|input)[ _-](?:loading|pipeline|wait)\b.{0,30}\b(?:stall|slow|bottleneck|timeout|timed out)",
            re.I,
        ),
    ),
    # The decimals after a whole second are part of the number ("data_time 2.139s"), and a time in
    # ms is as common as one in seconds.
    (
        "data_time",
        re.compile(
            r"\bdata_time[=: ]{1,3}(?:(?:[1-9]\d{0,5}(?:\.\d{1,6})?|0\.[3-9]\d{0,6})\s{0,2}s\b|"
            r"(?:[3-9]\d{2}|[1-9]\d{3,8})(?:\.\d{1,6})?\s{0,2}ms\b)",
            re.I,
        ),
    ),
    # Wider wordings, as real loaders and trainers phrase a stall: a loader timeout names what it waited for; c10d's "Timeout waiting
    # for key" is the rendezvous store, not input, so the object must be data-like.
    (
        "pytorch",
        re.compile(
            r"\bTimeout waiting for (?:the )?(?:data|batch|input|samples?|prefetch|worker|queue|shard|reader|records?)\b",
            re.I,
        ),
    ),
    (
        "data_wait",
        re.compile(
            r"\b(?:dataloader(?:_time)?|data_wait|batch[_ ]wait|load_time|time/data)[=: ]{1,3}(?:[1-9]\d{0,5}(?:\.\d{1,6})?|0\.[3-9]\d{0,6})\s{0,2}s\b",
            re.I,
        ),
    ),
    (
        "hf_datasets",
        re.compile(
            r"Got disconnected from remote data host|\bwebdataset\b.{0,80}\b(?:timeout|timed out|retry|stall|slow)",
            re.I,
        ),
    ),
    (
        "tf.data",
        re.compile(
            r"\btf\.data\b.{0,80}\b(?:bottleneck|slow|stall|starv)|Filling up shuffle buffer|"
            r"input pipeline is (?:the|a) bottleneck",
            re.I,
        ),
    ),
    (
        "dali",
        re.compile(r"\b(?:nvidia\.)?DALI\b.{0,80}\b(?:timeout|timed out|stall|waiting|starv|slow)", re.I),
    ),
    ("prefetch", re.compile(r"\b(?:prefetch|data|input|batch)[ _-]?queue\b.{0,20}\bis empty\b", re.I)),
    # A loader timing its own reads of the training data: one read of a shard or object from a
    # store taking seconds ("shard fetch from s3://... took 11.0s", "fetching chunk 12 took 7s",
    # "GET gs://bucket/part-0001 took 9300ms"). A read of 5 s or more is slow for any store a loader
    # streams from; one such line is a hint, several (and a slowdown) a stall.
    (
        "fetch",
        re.compile(
            r"(?:\b(?:shards?|chunks?|objects?|blobs?|parts?|files?)\b.{0,40}\b(?:fetch\w{0,5}|download\w{0,5}|"
            r"read(?:ing)?|load(?:ing|ed)?|get)\b|\b(?:fetch\w{0,5}|download\w{0,5}|read(?:ing)?|load(?:ing|ed)?|get)\b"
            r".{0,40}(?:\b(?:shards?|chunks?|objects?|blobs?)\b|\b(?:s3|gs|hdfs|az|abfss?)://))"
            r".{0,200}\btook\s{1,2}(?:(?:[5-9]|[1-9]\d{1,5})(?:\.\d{1,6})?\s{0,2}s(?:ec(?:onds?)?)?|"
            r"(?:[5-9]\d{3}|[1-9]\d{4,8})(?:\.\d{1,6})?\s{0,2}ms)\b",
            re.I,
        ),
    ),
    # A loader (or one of its workers) timing how long it waited for its next sample or batch
    # ("DataLoader worker 1 waited 1.4s for sample from https://...", "reader waited 900 ms for
    # the next batch"): the trainer's own measure of input starvation, as data_time is.
    (
        "loader_wait",
        re.compile(
            r"\b(?:data[ _-]?loader|loader|workers?|readers?|prefetch\w{0,4}|input)\b.{0,60}\bwait(?:ed|ing)\s{1,2}"
            r"(?:(?:[1-9]\d{0,5}(?:\.\d{1,6})?|0\.[3-9]\d{0,6})\s{0,2}s(?:ec(?:onds?)?)?|"
            r"(?:[3-9]\d{2}|[1-9]\d{3,8})(?:\.\d{1,6})?\s{0,2}ms)\s{1,2}(?:for|on)\s{1,2}(?:a\s{1,2}|the\s{1,2}|its\s{1,2})?"
            r"(?:next\s{1,2})?(?:samples?|batch(?:es)?|data|input|shards?|records?|items?)\b",
            re.I,
        ),
    ),
]

#: (label, pattern): storage clients and file systems in trouble.
STORAGE = [
    (
        "s3",
        re.compile(
            r"\bSlowDown\b|503 Slow Down|Reduce your request rate|RequestTimeout|ReadTimeoutError|"
            r"botocore\.exceptions\.\w{0,40}(?:Timeout|Throttl)",
            re.I,
        ),
    ),
    ("nfs", re.compile(r"nfs: server \S{1,253} not responding|nfs.{0,40}timed out", re.I)),
    (
        "lustre",
        re.compile(r"LustreError|Lustre:.{0,120}(?:timed out|evict|Connection to \S{1,200} was lost)", re.I),
    ),
    (
        "gcs",
        re.compile(
            r"gcsfuse.{0,80}(?:429|503|timeout|retry)|TooManyRequests|storage\.googleapis\.com.{0,80}(?:429|503)",
            re.I,
        ),
    ),
    (
        "fs",
        re.compile(r"\b(?:EIO|Input/output error|Stale file handle|Transport endpoint is not connected)\b"),
    ),
    (
        "s3",
        re.compile(
            r"Read timeout on endpoint URL|\b503\b.{0,40}(?:Service Unavailable|Slow ?Down)|ThrottlingException",
            re.I,
        ),
    ),
    ("nfs", re.compile(r"nfs: server \S{1,253} (?:OK|still trying)", re.I)),
    ("lustre", re.compile(r"\bptlrpc_\w{1,40}", re.I)),
    ("gpfs", re.compile(r"\bmmfs\w{0,10}\b.{0,120}(?:expel|timeout|timed out|lease)", re.I)),
    ("weka", re.compile(r"\bweka\w{0,10}\b.{0,120}(?:timeout|timed out|disconnect|unreachable)", re.I)),
    ("blocked", re.compile(r"INFO: task \S{1,64}:\d{1,10} blocked for more than \d{1,6} seconds")),
]

# --- the trainer's configuration and its work per second -------------------------------------------
# A key as trainers print it: at a word edge or after "_", ".", "-", "/" or a quote (Megatron's
# ``encoder_seq_length``, torchtitan's ``training.seq_len``, ``--seq-length``, JSON ``"seq_len"``),
# then a separator: ``=``, ``:``, a dot leader (Megatron and DeepSpeed argument dumps), spaces
# (command lines), quotes; then the value. Bounded repeats only.
_EDGE = r"(?<![A-Za-z0-9])"
_SEP = r"(?![A-Za-z])[\"']?\s{0,3}(?:[=:]|\.{2,200})?\s{0,8}[\"']?\s{0,2}"


def _key(alias: str, value: str = r"(\d{1,9})(?![\d]|\.\d|\s{0,2}[kKMG]\b)") -> re.Pattern[str]:
    return re.compile(_EDGE + r"(?:" + alias + r")" + _SEP + value, re.I)


#: What the job does per step, and where it runs (PyTorch/torchrun, Megatron-LM, DeepSpeed, HF
#: Trainer, Lightning, NeMo, MosaicML Composer, torchtitan wordings).
_CONFIG = {
    # tokens per optimizer step (seq_len x global batch), as some trainers print the batch
    "global_batch_tokens": _key(
        r"global[ _-]?batch[ _-]?(?:size[ _-]?(?:in[ _-])?)?tok(?:en)?s|tok(?:en)?s[ _-]per[ _-](?:global[ _-])?(?:batch|step)",
        r"(\d{1,3}(?:,\d{3})+|\d{1,12})(?![\d,]|\.\d|\s{0,2}[kKMG]\b)",
    ),
    "global_batch_size": _key(
        r"global[ _-]?(?:train[ _-]?)?batch[ _-]?size|(?<![Dd]evice[_ ])(?<!per[_ ]gpu[_ ])train[ _-]batch[ _-]size|"
        r"total train batch size(?:\s{0,2}\([^)]{0,60}\))?|gbs"
    ),
    "seq_length": _key(r"(?:max[ _-]?)?seq(?:uence)?[ _-]?len(?:gth)?|context[ _-]?(?:length|len|window)"),
    "micro_batch_size": _key(
        r"micro[ _-]?batch[ _-]?size|train[ _-]micro[ _-]batch[ _-]size[ _-]per[ _-]gpu|"
        r"per[ _-]device[ _-]train[ _-]batch[ _-]size|(?:instantaneous )?batch size per device|"
        r"local[ _-]batch[ _-]size|device[ _-]train[ _-]microbatch[ _-]size"
    ),
    "grad_accumulation": _key(r"grad(?:ient)?[ _-]accum(?:ulation)?(?:[ _-]steps)?"),
    "world_size": _key(r"world[ _-]size"),
    "data_parallel": _key(r"data[ _-]?parallel[ _-]?(?:size|degree)|dp[ _-](?:size|degree|shard)"),
    "tensor_parallel": _key(
        r"tensor[ _-]?(?:model[ _-]?)?parallel(?:[ _-]?(?:size|degree))?|tp[ _-](?:size|degree)"
    ),
    "pipeline_parallel": _key(
        r"pipeline[ _-]?(?:model[ _-]?)?parallel(?:[ _-]?(?:size|degree))?|pp[ _-](?:size|degree)"
    ),
    "context_parallel": _key(r"context[ _-]?parallel(?:[ _-]?(?:size|degree))?|cp[ _-](?:size|degree)"),
    "data_mix": re.compile(
        _EDGE
        + r"(?:data[ _-]?(?:mix|mixture|blend)|dataset[ _-]?mixture)(?![A-Za-z])[\"']?\s{0,3}[=:]\s{0,3}(\S{1,120})",
        re.I,
    ),
}
#: Settings that change the work of one step (the others say where it runs).
_WORK = ("global_batch_size", "seq_length", "grad_accumulation")
#: The work of one step in one number: when it changed, it alone gives the work ratio.
_STEP_TOKENS = "global_batch_tokens"

_NUM = r"(\d[\d,]{0,15}(?:\.\d{1,9})?)(?:\s{0,2}([kKMG])(?![A-Za-z]))?"
_PER_S = r"(?:\s?/\s?s(?:ec(?:ond)?)?|[ _-]?per[ _-]?s(?:ec(?:ond)?)?|PerSec)"
_PER_DEV = r"(?:[ _/-]{1,2}(?:per[ _-])?(?:gpu|device|dev|rank|chip))"
#: The other order, per device first: "tok_per_gpu_s", "tokens/gpu/s", "samples_per_gpu_per_sec".
_DEV_PER_S = rf"{_PER_DEV}(?:{_PER_S}|[ _-]s(?:ec)?)"
#: Work per second as the trainer reports it, "key: value" (or "value unit"): tokens, samples,
#: model TFLOP/s, MFU, or a bare "throughput". (kind, pattern); the key text says whether it is per GPU.
_RATE = [
    (
        "tokens",
        _key(
            rf"(?:device/)?tok(?:en)?s?(?:{_PER_S}{_PER_DEV}?|{_DEV_PER_S})|tps|tgs|wps|throughput\s?\(tok(?:en)?s?/s(?:ec)?(?:/gpu)?\)",
            _NUM,
        ),
    ),
    (
        "samples",
        _key(
            rf"(?:device/)?(?:train[ _-])?samples?(?:{_PER_S}{_PER_DEV}?|{_DEV_PER_S})|(?:Curr|RunningAvg)?SamplesPerSec",
            _NUM,
        ),
    ),
    (
        "tflops",
        _key(
            r"throughput per gpu \(tflop/s/gpu\)|(?:model[ _-])?tflop(?:s|/s)(?:[ _/-]{1,2}(?:per[ _-])?gpu)?",
            _NUM,
        ),
    ),
    ("mfu", _key(r"mfu(?:\s?\(%\))?", _NUM)),
    ("tokens", re.compile(rf"{_EDGE}{_NUM}\s{{0,2}}(tok(?:en)?s?{_PER_S}{_PER_DEV}?)(?![A-Za-z])", re.I)),
    ("samples", re.compile(rf"{_EDGE}{_NUM}\s{{0,2}}(samples?{_PER_S}{_PER_DEV}?)(?![A-Za-z])", re.I)),
    ("tflops", re.compile(rf"{_EDGE}{_NUM}\s{{0,2}}(TFLOP/?s(?:/gpu)?)(?![A-Za-z])", re.I)),
    ("throughput", _key(r"throughput", _NUM)),
]
#: Step time: "key: value [ms|s]" (seconds unless the key or the unit says ms), tqdm's "1.89s/it" and
#: "0.53it/s", HF's "train_steps_per_second".
_STEP_TIME = _key(
    r"elapsed time per iteration \(ms\)|(?:train[ _-])?step[ _-]?tim(?:e|ing)(?:\s?in\s?(?:ms|s))?(?:\s?\((?:ms|s)\))?|"
    r"iter(?:ation)?[ _-]?time(?:\s?\((?:ms|s)\))?|time/step|batch[ _-]time|step_(?:s|sec|ms)|"
    r"s(?:ec(?:onds?)?)?[ _-]per[ _-](?:step|iter(?:ation)?)|sec/step",
    r"(\d{1,9}(?:\.\d{1,9})?)\s{0,2}(ms|s)?(?![A-Za-z])",
)
_STEP_RATE = [
    ("s/it", re.compile(r"(?<![\d.])(\d{1,5}(?:\.\d{1,4})?)\s?s/it\b", re.I)),
    ("it/s", re.compile(r"(?<![\d.])(\d{1,5}(?:\.\d{1,4})?)\s?it/s\b", re.I)),
    ("it/s", _key(r"(?:train[ _-])?steps?[ _-]per[ _-]sec(?:ond)?", r"(\d{1,5}(?:\.\d{1,6})?)")),
]

#: A throughput this close to the earlier one is "the same work per second".
SAME_WORK = 0.95
#: Without a configuration change the trainer's own step time must have grown this much.
STEP_GREW = 1.10

# --- which lines are read at all -------------------------------------------------------------------
# Most lines of a job log (NCCL, watchdog) carry no trainer fact, and 50 regexes per line made the
# scan run at under 1 MB/s. Each group of patterns names words one of which is in every line any of
# its patterns matches (compared case-folded, as the patterns fold case); tests/tools/
# test_trainer_prefilter.py checks that for each pattern's own examples. A line is read only where a
# word of some group occurs (one search of a block of lines with all the words as a trie), and then
# only by the groups whose words it holds.
#: Per pattern of INPUT_STALL and STORAGE (same order), words one of which is in every line it matches.
_STALL_GATES: tuple[tuple[str, ...], ...] = (
    ("dataloader",),
    ("waiting for",),
    ("batch-generator", "loader "),
    ("dataloader",),
    ("dataloader", "data fetching", "fetch"),
    ("ray data", "ray.data"),
    ("queue", "buffer"),
    ("loading", "pipeline", "wait"),
    ("data_time",),
    ("timeout waiting for",),
    ("dataloader", "data_wait", "batch_wait", "batch wait", "load_time", "time/data"),
    ("got disconnected", "webdataset"),
    ("tf.data", "filling up shuffle buffer", "input pipeline is"),
    ("dali",),
    ("is empty",),
    ("took",),
    ("waited", "waiting"),
)
_STORAGE_GATES: tuple[tuple[str, ...], ...] = (
    ("slowdown", "slow down", "reduce your request rate", "requesttimeout", "readtimeouterror", "botocore"),
    ("nfs",),
    ("lustre",),
    ("gcsfuse", "toomanyrequests", "storage.googleapis.com"),
    ("eio", "input/output error", "stale file handle", "transport endpoint is not connected"),
    ("read timeout on endpoint url", "service unavailable", "slow down", "slowdown", "throttlingexception"),
    ("nfs",),
    ("ptlrpc_",),
    ("mmfs",),
    ("weka",),
    ("blocked for more than",),
)
_STALL_WORDS = tuple(w for gate in _STALL_GATES for w in gate)
_STORAGE_WORDS = tuple(w for gate in _STORAGE_GATES for w in gate)
_STALL = [(label, pat, gate) for (label, pat), gate in zip(INPUT_STALL, _STALL_GATES, strict=True)]
_STORE = [(label, pat, gate) for (label, pat), gate in zip(STORAGE, _STORAGE_GATES, strict=True)]
#: Per setting of _CONFIG, per pattern of _RATE (same order), and for the step time.
_CONFIG_GATES: dict[str, tuple[str, ...]] = {
    "global_batch_tokens": (
        "global",
        "toks per",
        "toks_per",
        "toks-per",
        "tokens per",
        "tokens_per",
        "tokens-per",
    ),
    "global_batch_size": ("global", "train batch", "train_batch", "train-batch", "gbs"),
    "seq_length": (
        "seqlen",
        "seq_len",
        "seq len",
        "seq-len",
        "sequencelen",
        "sequence_len",
        "sequence len",
        "sequence-len",
        "context",
    ),
    "micro_batch_size": ("batch",),
    "grad_accumulation": ("accum",),
    "world_size": ("world",),
    **{
        key: ("parallel", f"{x}p ", f"{x}p_", f"{x}p-")
        for key, x in (
            ("data_parallel", "d"),
            ("tensor_parallel", "t"),
            ("pipeline_parallel", "p"),
            ("context_parallel", "c"),
        )
    },
    "data_mix": ("mix", "blend"),
}
_RATE_GATES: tuple[tuple[str, ...], ...] = (
    ("tok", "tps", "tgs", "wps"),
    ("sample",),
    ("throughput per gpu", "tflop"),
    ("mfu",),
    ("tok",),
    ("sample",),
    ("tflop",),
    ("throughput",),
)
_STEP_WORDS = ("iter", "step", "batch", "s/it", "it/s")
_CONFIG_WORDS = tuple(w for gate in _CONFIG_GATES.values() for w in gate)
_RATE_WORDS = tuple(w for gate in _RATE_GATES for w in gate)
_CONFIGS = [(key, pat, _CONFIG_GATES[key]) for key, pat in _CONFIG.items()]
_RATES = [(kind, pat, gate) for (kind, pat), gate in zip(_RATE, _RATE_GATES, strict=True)]
#: What _ROUTINE needs before it is worth running.
_ROUTINE_WORDS = ("worker processes in total", "suggested max number of worker", "checkpoint")


def _trie(words: Iterable[str]) -> re.Pattern[str]:
    """One regex that finds any of ``words`` (already case-folded), factored by common prefixes so
    that each position tries one branch per first letter instead of one per word."""

    def build(ws: list[str]) -> str:
        heads: dict[str, list[str]] = {}
        for w in ws:
            heads.setdefault(w[0], []).append(w[1:])
        alts = [re.escape(c) + ("" if "" in tails else build(tails)) for c, tails in sorted(heads.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return re.compile(build(sorted(set(words))))


_STALL_ANY, _STORAGE_ANY, _CONFIG_ANY, _RATE_ANY, _STEP_ANY = (
    _trie(w) for w in (_STALL_WORDS, _STORAGE_WORDS, _CONFIG_WORDS, _RATE_WORDS, _STEP_WORDS)
)
#: Any word of any group: a line without one carries no trainer fact.
_NEEDS = _trie((*_STALL_WORDS, *_STORAGE_WORDS, *_CONFIG_WORDS, *_RATE_WORDS, *_STEP_WORDS))


def _fold(text: str) -> str:
    """``text`` as the words are compared: case-folded, and the dotless i read as "i" (re.I treats
    them as one letter, casefold does not). Every "\n" stays where it was, in order."""
    text = text.casefold()
    return text.replace("\u0131", "i") if "\u0131" in text else text


#: Longest part of a line the patterns read.
_LINE = 4096
#: Lines searched together for the words of :data:`_NEEDS`.
_BLOCK = 512
#: Example lines kept per kind (input stalls, storage errors); every line is counted.
MAX_EXAMPLES = 64
#: Rates and step times kept from the start of the logs and from the end, each; the ones between
#: are counted, not kept (early and late are what the comparisons read).
MAX_SERIES = 4096
#: Distinct configurations kept; past it the last one is replaced (the first and the last count).
MAX_CONFIGS = 256


def _keep(series: list, item: object) -> None:
    """Append, keeping the first :data:`MAX_SERIES` items and, of the rest, the latest ones: past
    twice the cap the older half of the tail is dropped (amortized, one move per half-cap appends)."""
    series.append(item)
    if len(series) >= 3 * MAX_SERIES:
        del series[MAX_SERIES : 2 * MAX_SERIES]


class TrainerFacts:
    """What the trainer logs said, across every log of the job, in bounded memory: counts cover
    every line, while the lines and values kept are capped (:data:`MAX_EXAMPLES`, :data:`MAX_SERIES`,
    :data:`MAX_CONFIGS`)."""

    def __init__(self) -> None:
        #: (label, line) of the first input-stall lines; ``stall_lines`` counts them all.
        self.stalls: list[tuple[str, str]] = []
        self.storage: list[tuple[str, str]] = []
        self.stall_lines = 0
        self.storage_lines = 0
        #: Lines per label (pytorch, s3, ...), of every line.
        self.stall_kinds: Counter[str] = Counter()
        self.storage_kinds: Counter[str] = Counter()
        self.configs: list[dict[str, str]] = []
        #: (config index, kind, value): kind is tokens, samples, tflops, mfu or throughput, with
        #: "/gpu" when the trainer reports it per device. The first and the latest are kept.
        self.rates: list[tuple[int, str, float]] = []
        self.step_time: list[tuple[int, float]] = []  # (config index, seconds)
        #: Facts seen but not kept (past a cap): rates, step times, configurations, example lines.
        self.not_kept = 0

    def add_text(self, text: str) -> None:
        self.add_lines(text.splitlines())

    def add_lines(self, lines: Iterable[str]) -> None:
        """Read a log a line at a time (a streamed log never has to fit in memory)."""
        block: list[str] = []
        for line in lines:
            block.append(line[:_LINE])
            if len(block) >= _BLOCK:
                self._add_block(block)
                block = []
        if block:
            self._add_block(block)

    def _add_block(self, block: list[str]) -> None:
        text = _fold("\n".join(block))  # line i of the block is after the i-th "\n"
        search = _NEEDS.search
        m = search(text)
        index, at = 0, 0
        while m is not None:
            index += text.count("\n", at, m.start())
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            end = len(text) if end < 0 else end
            self._add_line(block[index], text[start:end])
            at = end  # the next search starts on the next line: one visit per line
            m = search(text, end + 1) if end < len(text) else None

    def _add_line(self, line: str, low: str) -> None:
        if _STALL_ANY.search(low):
            label = next(
                (
                    label
                    for label, pat, gate in _STALL
                    if any(map(low.__contains__, gate)) and pat.search(line)
                ),
                None,
            )
            if label is not None and not (
                any(map(low.__contains__, _ROUTINE_WORDS)) and _ROUTINE.search(line)
            ):
                self.stall_lines += 1
                self.stall_kinds[label] += 1
                self._example(self.stalls, label, line)
        if _STORAGE_ANY.search(low):
            for label, pat, gate in _STORE:
                if any(map(low.__contains__, gate)) and pat.search(line):
                    self.storage_lines += 1
                    self.storage_kinds[label] += 1
                    self._example(self.storage, label, line)
                    break
        if _CONFIG_ANY.search(low):
            found = {
                k: m.group(1)
                for k, pat, gate in _CONFIGS
                if any(map(low.__contains__, gate)) and (m := pat.search(line))
            }
            if found:
                # consecutive config lines of one start belong together; a changed value starts a new one
                if self.configs and not any(
                    self.configs[-1].get(k) not in (None, v) for k, v in found.items()
                ):
                    self.configs[-1].update(found)
                elif len(self.configs) >= MAX_CONFIGS:
                    self.configs[-1] = dict(found)
                    self.not_kept += 1
                else:
                    self.configs.append(dict(found))
        idx = max(0, len(self.configs) - 1)
        if _RATE_ANY.search(low):
            seen: set[str] = set()
            for kind, pat, gate in _RATES:
                if not any(map(low.__contains__, gate)):
                    continue
                for m in pat.finditer(line):
                    key = m.group(0)
                    per = "/gpu" if kind in ("tflops", "mfu") or _PER_DEVICE.search(key) else ""
                    if kind + per in seen or (kind == "throughput" and seen):
                        continue
                    if (v := _number(m.group(1), m.group(2))) is not None and v > 0:
                        seen.add(kind + per)
                        self._series(self.rates, (idx, kind + per, v))
        if _STEP_ANY.search(low):
            if m := _STEP_TIME.search(line):
                key = m.group(0).lower()
                ms = (
                    (m.group(2) or "").lower() == "ms" or "(ms)" in key or " in ms" in key or "step_ms" in key
                )
                self._series(self.step_time, (idx, float(m.group(1)) / (1000.0 if ms else 1.0)))
            else:
                for unit, pat in _STEP_RATE:
                    if (m := pat.search(line)) and float(m.group(1)) > 0:
                        v = float(m.group(1))
                        self._series(self.step_time, (idx, v if unit == "s/it" else 1.0 / v))
                        break

    def _example(self, kept: list[tuple[str, str]], label: str, line: str) -> None:
        if len(kept) < MAX_EXAMPLES:
            kept.append((label, line.strip()[:300]))
        else:
            self.not_kept += 1

    def _series(self, series: list, item: object) -> None:
        before = len(series)
        _keep(series, item)
        self.not_kept += before + 1 - len(series)

    def reconfiguration(self, stated: str | None = None) -> dict[str, object] | None:
        """The job's own doing explains a longer step: its work per GPU per second held while the
        work per step grew. Returns what changed, the work ratio (late over early) and its basis.

        - Relaunched with another configuration (the first and the last configuration the trainer
          printed differ): the work rate it reports (tokens, samples, TFLOP/s, MFU; per GPU where
          it says so, otherwise divided by the world size when both runs state one) held, or,
          with no rate printed, the step time grew by no more than the work per step.
        - No configuration printed, or none changed: the trainer's rate held while its own step
          time grew and the logs mention no input or storage trouble (a rate timed over elapsed
          time holds beside a longer step only with more work per step), or the incident's text
          states the reconfiguration (``stated``) and the rate held.
        """
        if len(self.configs) >= 2:
            first, last = self.configs[0], self.configs[-1]
            changed = sorted(k for k in first.keys() & last.keys() if first[k] != last[k])
            if changed:
                out: dict[str, object] = {
                    "changed": ", ".join(f"{k} {first[k]} -> {last[k]}" for k in changed)
                }
                late_idx = len(self.configs) - 1
                held = self._rate_ratio(
                    [r for r in self.rates if r[0] == 0],
                    [r for r in self.rates if r[0] == late_idx],
                    first,
                    last,
                )
                if held is not None:
                    out.update(work_ratio=round(held[0], 4), basis=held[1])
                    return out if held[0] >= SAME_WORK else None
                # No rate printed: the step time must have grown by no more than the work per step.
                work = 1.0
                if _STEP_TOKENS in changed:  # tokens per step already hold the batch and the length
                    work = _num(last[_STEP_TOKENS]) / max(_num(first[_STEP_TOKENS]), 1.0)
                else:
                    for k in _WORK:
                        if k in changed:
                            work *= _num(last[k]) / max(_num(first[k]), 1.0)
                work /= _world(last) / _world(first) if _world(first) and _world(last) else 1.0
                e = [v for i, v in self.step_time if i == 0]
                t = [v for i, v in self.step_time if i == late_idx]
                if e and t and work > 1.0:
                    step_ratio = statistics.median(t) / max(statistics.median(e), 1e-9)
                    out.update(work_ratio=round(work / step_ratio, 4), basis="step time vs work per step")
                    return out if work / step_ratio >= SAME_WORK else None
                return None
        # No configuration change in the logs: compare the first and the last quarter of what was printed.
        if len(self.rates) < 2:
            return None
        q = max(1, len(self.rates) // 4)
        held = self._rate_ratio(self.rates[:q], self.rates[-q:], {}, {})
        if held is None or held[0] < SAME_WORK:
            return None
        steps = [v for _, v in self.step_time]
        # Some trainers time their rate over compute alone: with any input or storage trouble in
        # the logs, a held rate beside a longer step could be a stall, so it explains nothing here.
        if len(steps) >= 2 and not (self.stall_lines or self.storage_lines):
            n_q = max(1, len(steps) // 4)
            grew = statistics.median(steps[-n_q:]) / max(statistics.median(steps[:n_q]), 1e-9)
            if grew >= STEP_GREW:
                return {
                    "changed": stated or "more work per step",
                    "work_ratio": round(held[0], 4),
                    "basis": held[1] + f" while the trainer's step time grew {grew:.2f}x",
                }
        if stated:
            return {"changed": stated, "work_ratio": round(held[0], 4), "basis": held[1]}
        return None

    @staticmethod
    def _rate_ratio(
        early: list[tuple[int, str, float]],
        late: list[tuple[int, str, float]],
        first: dict[str, str],
        last: dict[str, str],
    ) -> tuple[float, str] | None:
        """(late over early work per GPU per second, which rate) from the best rate both sides print."""
        wf, wl = _world(first), _world(last)
        world = wl / wf if wf and wl else 1.0
        seq = (
            _num(last["seq_length"]) / max(_num(first["seq_length"]), 1.0)
            if "seq_length" in first and "seq_length" in last
            else 1.0
        )
        for kind in _RATE_ORDER:
            e = [v for _, k, v in early if k == kind]
            t = [v for _, k, v in late if k == kind]
            if not e or not t:
                continue
            ratio = statistics.median(t) / max(statistics.median(e), 1e-12)
            basis = kind.replace("/gpu", " per GPU") + " per second" * (
                kind.split("/")[0] in ("tokens", "samples")
            )
            if not kind.endswith("/gpu") and kind != "throughput":
                ratio /= world  # a total over more GPUs: per GPU it is the share
                if world != 1.0:
                    basis += f" over {wf:g} -> {wl:g} GPUs"
            if kind.startswith("samples") and seq != 1.0:
                ratio *= seq  # a longer sample is more work
                basis += " times tokens per sample"
            return ratio, basis
        return None


#: The rates in the order they are trusted: per GPU first, tokens before the rest.
_RATE_ORDER = (
    "tokens/gpu",
    "tflops/gpu",
    "mfu/gpu",
    "tokens",
    "samples/gpu",
    "samples",
    "throughput/gpu",
    "throughput",
)
_PER_DEVICE = re.compile(r"gpu|device|dev\b|rank|chip|^tps|^tgs|^wps", re.I)
#: Lines that are normal in healthy runs although they name the data loader: PyTorch's worker-count
#: advice at start ("This DataLoader will create 16 worker processes in total ... might get
#: DataLoader running slow"), checkpoint saves and loads (a long step at a save is the job's own).
_ROUTINE = re.compile(
    r"worker processes in total|suggested max number of worker|"
    r"\bcheckpoint\b.{0,120}\b(?:sav(?:e|ed|ing)|load(?:ed|ing)?|writ(?:e|ing|ten)|commit)|"
    r"\b(?:sav(?:e|ed|ing)|load(?:ed|ing)?|writ(?:e|ing|ten))\b.{0,40}\bcheckpoint",
    re.I,
)


def _number(text: str, suffix: str | None) -> float | None:
    try:
        v = float(text.replace(",", ""))
    except ValueError:
        return None
    return v * {"k": 1e3, "m": 1e6, "g": 1e9}.get((suffix or "").lower(), 1.0)


def _num(text: str) -> float:
    return _number(text, None) or 0.0


def _world(cfg: dict[str, str]) -> float:
    """GPUs the run used, when its configuration says: world size, else the product of the parallel sizes."""
    if "world_size" in cfg:
        return _num(cfg["world_size"])
    if "data_parallel" in cfg:
        return (
            _num(cfg["data_parallel"])
            * _num(cfg.get("tensor_parallel", "1"))
            * _num(cfg.get("pipeline_parallel", "1"))
            * _num(cfg.get("context_parallel", "1"))
        )
    return 0.0
