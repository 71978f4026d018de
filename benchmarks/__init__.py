"""Benchmarks for acp-server, each measured side by side with a baseline in the same run.

Usage: `uv run benchmarks MODE [options]` from the repository root. Methodology and recorded
figures: docs/benchmarks.md. Exits 0 whenever the measurement itself succeeded: a missed target
is a result, not an error.

Layout: one module per mode in benchmarks/modes/ (each defines `MODE`, found by
benchmarks.mode.discover); shared support beside it: measure (paths, limits, percentiles,
verdicts), report (the docs section), baseline (the SDK's echo agent, fetched at run time),
client (the raw-pipe client), sampling (the one sampling loop of the cancel-style modes),
streaming_cancel (the cancel sample two modes share);
benchmarks/programs/ holds the stand-alone programs modes spawn (baseline agents, a fake
provider, a profiler wrapper).

Modes other than startup drive long-lived agents through one raw-pipe client (AgentProcess):
JSON lines written to stdin, stdout read line by line in this thread, each line timestamped as
read. No SDK client: its validation overhead would be measured instead of the agents.
"""
