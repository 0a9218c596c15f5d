"""kneepoint ingest: parse raw benchmark and SQL Server outputs into normalized records and store them."""

__version__ = "0.1.0"
