"""The benchmark modes, one module each; each defines `MODE = Mode(...)` (benchmarks.mode)."""
