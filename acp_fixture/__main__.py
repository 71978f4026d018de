"""`python -m acp_fixture run FILE`: the `acp-fixture` console script without installing the
project (the runner needs only the standard library; tests/docker/engines.py plays the tour so)."""

import sys

from acp_fixture.cli import main

sys.exit(main())
