"""``serve.toml``: where evidence comes from, who may do what, budgets, workers, database.

Example (every key but ``[[users]]`` has a default)::

    database = "/var/lib/forensic/serve.sqlite"   # one SQLite file: alerts ... checkpoints
    public_url = "http://forensic.example:8080"   # links in notifications
    max_body_bytes = 1048576                      # larger request bodies get 413

    [workers]
    count = 2            # investigations run at once, across all jobs
    per_job = 1          # ... and per job
    lease_s = 30         # a claim not renewed for this long may be taken over

    [budgets]            # hard limits per investigation (forensic.harness.budget.Limits)
    tool_calls = 40
    wall_s = 300

    [grouping]
    window_s = 1800      # alerts of one job, or one host, this close together are one fault
    job_labels = ["training_job", "job_name", "job"]   # first label present names the job

    [[users]]
    name = "alertmanager"
    role = "webhook"                     # webhook < viewer < approver < admin
    token_file = "/etc/forensic/am.token"

    [[evidence.bundles]]                 # recorded incidents that alerts map to
    path = "evals/examples/pcie-x8-mfu-drop"
    job = "llm-70b-pretrain"             # alerts whose job label is this ...
    hosts = ["gpu-e12*"]                 # ... or whose host matches one of these globs

    [notify]
    slack_webhooks = ["https://hooks.slack.com/services/..."]

    [dead_letters]       # refused webhook bodies, kept for a look
    keep = 1000          # the newest this many ...
    keep_days = 30       # ... and none older than this

    [watch]              # follow live jobs; open investigations for what no alert catches
    jobs_dir = "/shared/jobs"           # every subfolder with steps-rank*.csv is a job (or [[watch.jobs]])
    min_effect = 0.03                   # smallest rank slowdown that opens (docs/watch.md)
    [watch.prometheus]                  # ... and/or read jobs' per-rank step times from Prometheus
    url = "http://prometheus:9090"
    query = 'forensic_step_compute_seconds{exported_job="$job"}'   # one series per rank
    jobs = ["llm-70b-pretrain"]

    [fleet]              # alerts that map to no bundle are investigated live on this fleet
    file = "/etc/forensic/fleet.toml"   # the fleet file of ``forensic investigate --fleet``
    lookback_s = 3600                   # window: this long before the first alert's startsAt ...
    window_after_s = 3600               # ... up to now, or this long after the last alert if earlier

Relative paths are read from the folder of the config file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from forensic.harness.budget import Limits
from forensic.sandbox import ForensicError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from forensic.configfile import first_error, read_toml

Role = Literal["webhook", "viewer", "approver", "admin"]
#: What each role may do; a role includes the ones before it except ``webhook``, which may
#: only post alerts.
ROLE_RANK: dict[str, int] = {"webhook": 0, "viewer": 1, "approver": 2, "admin": 3}


class ConfigError(ForensicError):
    """serve.toml is missing, unreadable or invalid (one line saying where)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Workers(_Strict):
    """The investigation worker pool."""

    count: int = Field(2, ge=1, le=64, description="Investigations running at once, in all.")
    per_job: int = Field(1, ge=1, le=64, description="Investigations running at once for one job.")
    lease_s: float = Field(30.0, gt=0, description="A claim not renewed for this long may be taken over.")
    step_pause_s: float = Field(
        0.0, ge=0, le=10, description="Pause after each graph step (demos: watch a run live)."
    )


class Grouping(_Strict):
    """How alerts become investigations."""

    window_s: float = Field(
        1800.0, gt=0, description="Same job or same host within this many seconds: one fault."
    )
    job_labels: list[str] = Field(
        default_factory=lambda: ["training_job", "job_name", "job"],
        description="Labels naming the training job, first present wins.",
    )


class User(_Strict):
    """One person or system and the token that authenticates it."""

    name: str = Field(min_length=1, max_length=128, description="Shown in the audit log and on approvals.")
    role: Role = Field(description="webhook, viewer, approver or admin.")
    token_file: Path = Field(description="File holding the bearer token (first line).")


class BundleMapping(_Strict):
    """A recorded bundle and the alerts that map to it."""

    path: Path = Field(description="Bundle folder (or an evaluation case holding bundle/).")
    job: str | None = Field(None, description="Alerts whose job label equals this map here.")
    hosts: list[str] = Field(
        default_factory=list, description="Host globs: alerts on a matching host map here."
    )

    @model_validator(mode="after")
    def _names_something(self) -> BundleMapping:
        if not self.job and not self.hosts:
            raise ValueError(f"bundle {self.path}: name a job or hosts that map to it")
        return self


class Evidence(_Strict):
    """Where evidence comes from."""

    bundles: list[BundleMapping] = Field(
        default_factory=list, description="Recorded bundles, first match wins."
    )


class DeadLetters(_Strict):
    """How many refused request bodies are kept, and for how long (each may be ``max_body_bytes``)."""

    keep: int = Field(
        1000, ge=1, le=1_000_000, description="The newest this many are kept; older ones are deleted."
    )
    keep_days: float = Field(30.0, gt=0, description="Ones older than this are deleted.")


class Notify(_Strict):
    """Where conclusions are announced."""

    slack_webhooks: list[str] = Field(
        default_factory=list, description="Slack-compatible incoming-webhook URLs."
    )
    timeout_s: float = Field(5.0, gt=0, description="Per-attempt timeout.")
    max_attempts: int = Field(8, ge=1, description="Attempts before a notification is given up (and logged).")

    @field_validator("slack_webhooks")
    @classmethod
    def _http(cls, urls: list[str]) -> list[str]:
        for u in urls:
            if not u.startswith(("http://", "https://")):
                raise ValueError(f"{u!r} is not an http(s) URL")
        return urls


class Fleet(_Strict):
    """A live fleet: alerts that map to no bundle are investigated on it (harness/service/live.py)."""

    file: Path = Field(description="fleet.toml path (the file of ``forensic investigate --fleet``).")
    lookback_s: float = Field(
        3600.0,
        ge=0,
        le=7 * 86400,
        description="The window starts this long before the first alert's startsAt.",
    )
    window_after_s: float = Field(
        3600.0,
        ge=0,
        le=7 * 86400,
        description="The window ends now, or this long after the last alert started if earlier.",
    )


class WatchJob(_Strict):
    """A job ``forensic watch`` follows inside the service."""

    name: str = Field(min_length=1, max_length=200, description="The job's name: its alerts' job label.")
    dir: Path = Field(description="The folder its ranks' step recorder writes (steps-rank*.csv).")


class WatchPrometheus(_Strict):
    """Jobs whose per-rank step times ``forensic watch`` reads from Prometheus (docs/watch.md)."""

    url: str = Field(min_length=1, description="Base URL of the Prometheus HTTP API (or Thanos, Mimir).")
    query: str = Field(
        'forensic_step_compute_seconds{exported_job="$job"}',
        min_length=1,
        max_length=4000,
        description="PromQL returning one series per rank of the job; $job is the job's name.",
    )
    jobs: list[str] = Field(min_length=1, description="The jobs to read (each its alerts' job label).")
    rank_label: str = Field(
        "rank", max_length=100, description='Label holding the rank; "" numbers each host/GPU pair instead.'
    )
    host_label: str = Field("host", max_length=100, description="Label naming the host.")
    gpu_label: str = Field("gpu", max_length=100, description="Label naming the GPU on its host.")
    resolution_s: float = Field(15.0, ge=1, le=3600, description="Seconds between evaluations read.")
    lag_s: float = Field(30.0, ge=0, le=3600, description="Evaluations younger than this wait a poll.")
    lookback_s: float = Field(3600.0, ge=0, le=7 * 86400, description="How far back a new job is read.")
    max_points: int = Field(120, ge=2, le=10_000, description="Evaluations per series per query, at most.")
    token_file: Path | None = Field(None, description="A bearer token for Prometheus (first line).")

    def queries(self) -> list[Any]:
        from forensic.harness.watch.prom import PrometheusQuery, job_query

        token = None
        if self.token_file is not None:
            try:
                token = self.token_file.read_text().strip().splitlines()[0].strip()
            except (OSError, IndexError, UnicodeDecodeError) as exc:
                raise ConfigError(
                    f"watch.prometheus.token_file {self.token_file}: unreadable or empty"
                ) from exc
        return [
            PrometheusQuery(
                self.url,
                job_query(self.query, job),
                rank_label=self.rank_label,
                host_label=self.host_label,
                gpu_label=self.gpu_label,
                resolution_s=self.resolution_s,
                lag_s=self.lag_s,
                lookback_s=self.lookback_s,
                max_points=self.max_points,
                token=token,
            )
            for job in self.jobs
        ]


class Watch(_Strict):
    """Follow live jobs and open investigations for the degradations no alert catches (docs/watch.md)."""

    jobs: list[WatchJob] = Field(default_factory=list, description="Jobs to follow, by name and folder.")
    jobs_dir: Path | None = Field(
        None, description="Every subfolder of this folder holding step files is a job named after it."
    )
    poll_s: float = Field(5.0, ge=0.05, le=3600, description="Seconds between reads of the job folders.")
    state_dir: Path | None = Field(
        None,
        description="Where each job's position and state are kept (default: watch/ beside the database).",
    )
    min_effect: float = Field(0.03, gt=0, lt=1, description="Smallest sustained rank slowdown that opens.")
    spike_effect: float = Field(0.20, gt=0, lt=10, description="A step this much slower is a stall.")
    job_min_effect: float = Field(0.05, gt=0, lt=1, description="Smallest whole-job slowdown that opens.")
    alpha: float = Field(0.01, gt=0, lt=1, description="False openings per horizon_steps over the fleet.")
    horizon_steps: int = Field(1_000_000, ge=1000, description="The horizon alpha is spent over.")
    warmup_steps: int = Field(24, ge=4, le=10_000, description="Steps that estimate each rank's baseline.")
    rearm_steps: int = Field(1000, ge=1, description="Healthy steps before a subject may open again.")
    prometheus: WatchPrometheus | None = Field(None, description="Jobs read from Prometheus series.")

    @model_validator(mode="after")
    def _some_job(self) -> Watch:
        if not self.jobs and self.jobs_dir is None and self.prometheus is None:
            raise ValueError("name [[watch.jobs]], watch.jobs_dir or [watch.prometheus]")
        if self.spike_effect <= self.min_effect:
            raise ValueError("spike_effect must exceed min_effect")
        return self

    def detector_config(self) -> Any:
        from forensic.tools.detectors.watch import WatchConfig

        return WatchConfig(
            min_effect=self.min_effect,
            spike_effect=self.spike_effect,
            job_min_effect=self.job_min_effect,
            alpha=self.alpha,
            horizon_steps=self.horizon_steps,
            warmup_steps=self.warmup_steps,
            rearm_steps=self.rearm_steps,
        )


class ServeConfig(_Strict):
    """Everything ``forensic serve`` reads from serve.toml."""

    database: Path = Field(
        Path("forensic-serve.sqlite"), description="SQLite file holding all service state."
    )
    public_url: str = Field("", description="Base URL of the page, for links in notifications.")
    max_body_bytes: int = Field(1 << 20, ge=1024, description="Request bodies above this get 413.")
    workers: Workers = Field(default_factory=Workers)
    budgets: Limits = Field(default_factory=Limits)
    grouping: Grouping = Field(default_factory=Grouping)
    users: list[User] = Field(min_length=1)
    evidence: Evidence = Field(default_factory=Evidence)
    notify: Notify = Field(default_factory=Notify)
    dead_letters: DeadLetters = Field(default_factory=DeadLetters)
    fleet: Fleet | None = None
    executors: Path | None = Field(
        None, description="executors.toml: lets approvers carry out approved proposals."
    )
    watch: Watch | None = Field(None, description="Jobs followed by the built-in watcher (docs/watch.md).")

    @model_validator(mode="after")
    def _evidence_named(self) -> ServeConfig:
        if not self.evidence.bundles and self.fleet is None:
            raise ValueError("name an evidence source: [[evidence.bundles]] or [fleet]")
        return self


def _rebase(cfg: ServeConfig, base: Path) -> ServeConfig:
    def fix(p: Path) -> Path:
        return p if p.is_absolute() else (base / p)

    cfg.database = fix(cfg.database)
    if cfg.executors is not None:
        cfg.executors = fix(cfg.executors)
    for u in cfg.users:
        u.token_file = fix(u.token_file)
    for b in cfg.evidence.bundles:
        b.path = fix(b.path)
    if cfg.fleet is not None:
        cfg.fleet.file = fix(cfg.fleet.file)
    if cfg.watch is not None:
        for j in cfg.watch.jobs:
            j.dir = fix(j.dir)
        if cfg.watch.jobs_dir is not None:
            cfg.watch.jobs_dir = fix(cfg.watch.jobs_dir)
        cfg.watch.state_dir = fix(cfg.watch.state_dir or cfg.database.parent / "watch")
        if cfg.watch.prometheus is not None and cfg.watch.prometheus.token_file is not None:
            cfg.watch.prometheus.token_file = fix(cfg.watch.prometheus.token_file)
    return cfg


def parse_config(data: dict[str, Any], base: Path, source: str = "serve.toml") -> ServeConfig:
    """Validate a parsed serve.toml; raises :class:`ConfigError` with the first problem, named
    once as ``source: key: problem`` (``source`` is the file the person gave)."""
    try:
        cfg = ServeConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{source}: {first_error(exc)}") from None
    cfg = _rebase(cfg, base)
    if cfg.fleet is not None:
        if not cfg.fleet.file.is_file():
            raise ConfigError(f"{source}: fleet.file: {cfg.fleet.file} does not exist")
        from forensic.sandbox.fleet import load_fleet

        try:
            load_fleet(cfg.fleet.file)  # a broken fleet file stops the start, not the first alert
        except ForensicError as exc:
            raise ConfigError(f"{source}: fleet.file: {exc}") from None
    return cfg


def load_config(path: Path) -> ServeConfig:
    data = read_toml(path, error=ConfigError, what="config file")
    return parse_config(data, Path(path).resolve().parent, str(path))


def read_token(u: User) -> str:
    """The first line of ``u``'s token file; :class:`ConfigError` if unreadable or shorter than 16 characters."""
    try:
        text = u.token_file.read_text().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"user {u.name}: token file {u.token_file} unreadable "
            f"({getattr(exc, 'strerror', None) or type(exc).__name__})"
        ) from None
    token = text.splitlines()[0].strip() if text else ""
    if len(token) < 16:
        raise ConfigError(f"user {u.name}: token in {u.token_file} is shorter than 16 characters")
    return token


def load_tokens(cfg: ServeConfig) -> dict[str, User]:
    """token -> user, read from each user's token file; empty, short or shared tokens are refused."""
    out: dict[str, User] = {}
    for u in cfg.users:
        token = read_token(u)
        if token in out:
            raise ConfigError(f"user {u.name}: token in {u.token_file} is also {out[token].name}'s")
        out[token] = u
    return out
