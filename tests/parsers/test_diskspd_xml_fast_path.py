"""DiskSpd XML: the fast reading (runs of plain buckets, threads and CPUs cut out by regex, only the rest parsed
as XML) gives what parsing the whole document gives, and steps aside for anything it cannot be sure of."""

from __future__ import annotations

import pytest

from ingest.errors import ParseError
from ingest.formats import diskspd_xml
from ingest.textio import decode
from tests.helpers import SAMPLE

SAMPLE_XML = SAMPLE / "diskspd" / "synthetic-ss-stripe-mixed-8k.xml"


def documents() -> list[str]:
    return [doc for _, doc in diskspd_xml._documents(decode(SAMPLE_XML.read_bytes())[0])]


def whole(doc: str) -> list | tuple:
    """The records (or error) of the document parsed whole, as before the fast reading."""
    try:
        return diskspd_xml._document(diskspd_xml._xml(doc, 1), 1, 0, None, None)
    except ParseError as exc:
        return (exc.reason, exc.line)


def fast(doc: str) -> list | tuple | None:
    try:
        return diskspd_xml._fast_document(doc, 1, 0)
    except ParseError as exc:
        return (exc.reason, exc.line)


def test_plain_documents_take_the_fast_reading_to_the_same_records():
    for doc in documents():
        assert "<Bucket>" in doc and "<Thread>" in doc and "<CPU>" in doc
        records = fast(doc)
        assert records is not None and records == whole(doc)
        assert records[0].histogram and records[0].latency_p99 is not None


@pytest.mark.parametrize(
    ("change", "taken"),
    [
        # Elements the fast reading does not take stay XML elements, beside the runs it cuts.
        (lambda d: d.replace("<Percentile>50</Percentile>", "<Percentile> 50 </Percentile>"), True),
        (lambda d: d.replace("<ReadMilliseconds>", "<ReadMilliseconds>x", 1), True),
        (lambda d: d.replace("</Bucket>", "</Bucket>\n<Note/>", 3), True),
        (lambda d: d.replace("<Bucket>", '<Bucket kind="a">', 1), True),
        (lambda d: d.replace("<Id>1</Id>", "<Id> 1 </Id>"), True),
        (lambda d: d.replace("</Target>\n      </Thread>", "</Target><Target><Path>b</Path></Target></Thread>"), True),
        (lambda d: d.replace("<CPU>", "<CPU><Note>&amp;</Note>", 1), True),
        # A run standing anywhere but where it is read: the whole document is parsed.
        (lambda d: d.replace("<Bucket>", "<!-- <Bucket>", 1).replace("</Bucket>", "</Bucket> -->", 1), False),
        (lambda d: d.replace("<Bucket>", "<Wrap><Bucket>", 1).replace("</Bucket>", "</Bucket></Wrap>", 1), False),
        (lambda d: d.replace("<Thread>", "<![CDATA[<Thread>", 1).replace("</Thread>", "</Thread>]]>", 1), False),
        (lambda d: d.replace("<Latency>", '<Latency xmlns="urn:x">', 1), False),
        (lambda d: d.replace("<System>", "<System><CPU><Id>0</Id></CPU>", 1), False),
        (lambda d: d.replace("<ComputerName>", "<ComputerName>kneepoint-buckets", 1), False),
        # Malformed: the whole document is parsed for its error.
        (lambda d: d.replace("</Percentile>", "</Percent>", 1), False),
        (lambda d: d.replace("</Thread>", "", 1), False),
    ],
)
def test_unusual_documents_read_as_when_parsed_whole(change, taken):
    for doc in documents()[:2]:
        changed = change(doc)
        assert changed != doc
        expected = whole(changed)
        records = fast(changed)
        assert (records is not None) == taken
        if records is not None:
            assert records == expected
        if isinstance(expected, list):
            assert diskspd_xml.parse(changed) == expected
        else:
            with pytest.raises(ParseError) as err:
                diskspd_xml.parse(changed)
            assert (err.value.reason, err.value.line) == expected
