"""Evaluation: incident generators, the runner and the baselines. The runtime never imports this."""
