"""The failure graph as data: ``graph.toml`` and one ``root_causes/*.toml`` per root cause.

A package only so that the files ship inside the wheel (package data); there is no code here.
"""
