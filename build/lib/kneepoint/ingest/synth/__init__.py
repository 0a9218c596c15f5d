"""Synthetic data: a disk model with saturation, and one writer module per text format.

Writers render records back into a tool's own output format. They make the sample data of the
Windows-only tools (files named `synthetic-*`), the inputs of round-trip property tests, and the
benchmark corpus. Each format's writer is `ingest/synth/<format>.py` with `write(records, **opts) -> str`.
"""
