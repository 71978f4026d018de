"""`python -m acp_server`: the same command line as the `acp-server` console script."""

import sys

from acp_server.cli import main

sys.exit(main())
