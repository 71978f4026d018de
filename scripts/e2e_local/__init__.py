"""The steps of `scripts/e2e_local_model.py`, the end-to-end run against a real local model:
the cached build and environment (`environment`), its progress on stderr (`progress`), the two
llama.cpp servers (`servers`) and the checks through the official ACP SDK client (`checks`)."""
