"""``forensic serve``: Alertmanager webhooks in; investigations, approvals and a page out.

Modules, in the order a request meets them: ``config`` (serve.toml), ``auth`` (tokens, roles),
``api`` (HTTP), ``intake`` (webhook contract, grouping, group commit), ``store`` (the storage
interface and SQLite), ``workers`` (claim and run), ``decisions`` (approvals through the gate),
``notify`` (outbox to Slack-compatible webhooks), ``metrics``, ``views`` (page data),
``static/`` (the page).
"""

from forensic.harness.service.config import ConfigError, ServeConfig, load_config, parse_config

__all__ = ["ConfigError", "ServeConfig", "load_config", "parse_config"]
