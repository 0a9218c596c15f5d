"""Writer for the `diskspd_xml` format (DiskSpd `-Rxml`): the XML half of `ingest.synth.diskspd`, under the
format's own name so a format's writer is always `ingest/synth/<format>.py`. Samples come from
`ingest.synth.diskspd.sample_files`."""

from __future__ import annotations

from collections.abc import Iterable

from kneepoint.ingest.records import IoRecord
from kneepoint.ingest.synth.diskspd import write_xml


def write(records: Iterable[IoRecord], **opts: object) -> str:
    """DiskSpd 2.0.21a `-Rxml` output of every run in `records` (options: see `write_xml`)."""
    return write_xml(records, **opts)  # type: ignore[arg-type]
