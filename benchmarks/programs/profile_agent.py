"""Run a Python agent module under cProfile, profiling only from SIGUSR1 until it exits.

Usage: `python benchmarks/programs/profile_agent.py OUT.prof MODULE [ARGS...]`, e.g.
`... /tmp/a.prof acp_server.cli --model script:/tmp/s.json`. MODULE runs as `__main__`
with ARGS as its argv; the profiler starts disabled, so startup, imports and warm-up work
are left out, and a client enables it with `kill -USR1 PID` once the agent is warm. The stats
are written to OUT.prof when the module returns or raises (SystemExit included), e.g. after
the client closes the agent's stdin. `benchmarks streaming` uses it for its breakdown.
"""

from __future__ import annotations

import cProfile
import runpy
import signal
import sys
from types import FrameType


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, module, *args = sys.argv[1:]
    profiler = cProfile.Profile()

    def start(signum: int, frame: FrameType | None) -> None:
        profiler.enable()

    signal.signal(signal.SIGUSR1, start)
    sys.argv = [module, *args]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    finally:
        profiler.disable()
        profiler.dump_stats(out)


if __name__ == "__main__":
    main()
