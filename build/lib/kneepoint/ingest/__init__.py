"""kneepoint.ingest: read raw benchmark and SQL Server outputs into records, store them, build the models."""

if __name__ != "kneepoint.ingest":
    # The checkout's folder imported by its own name (the checkout on sys.path): every module would load twice.
    raise ImportError(f"import kneepoint.ingest, not {__name__}")

__version__ = "0.2.0"
