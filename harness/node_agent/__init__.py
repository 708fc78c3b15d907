"""``forensic agent``'s HTTP server, a surface like the CLI and the service: the agent itself (what
may be asked of a host, and the limits) is :mod:`forensic.sandbox.agent`."""

from forensic.harness.node_agent.server import AgentServer, check_tls, make_app, serve

__all__ = ["AgentServer", "check_tls", "make_app", "serve"]
