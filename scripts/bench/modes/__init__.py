"""The benchmark modes, one module each; every module defines `MODE = Mode(...)` (bench.mode)."""
