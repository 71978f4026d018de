"""`uv run scripts/bench MODE` runs this directory: Python then puts scripts/bench itself first on
sys.path, so that entry is replaced by scripts/ for the modules to import as the package `bench`."""

import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.cli import main  # noqa: E402  (needs the sys.path entry above)

sys.exit(main())
