"""`uv run benchmarks MODE` runs this directory: Python then puts benchmarks/ itself first on
sys.path, so that entry is replaced by the repository root for the modules to import as the
package `benchmarks` (`python -m benchmarks MODE` from the root works the same way)."""

import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from benchmarks.cli import main  # noqa: E402  (needs the sys.path entry above)

sys.exit(main())
