"""DiskSpd XML `parse_document`: a text that is one `<Results>` document and nothing else reads as parse() reads
it; anything another tool's output could hide in (text before or after the document, comments, text lines
inside it) or a document parse() refuses is None, so the registry takes its slow path (detection, the check for
a second tool, the error)."""

from __future__ import annotations

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import diskspd_xml
from kneepoint.ingest.textio import decode
from tests.helpers import SAMPLE, corpus_file

SAMPLE_XML = SAMPLE / "diskspd" / "synthetic-ss-stripe-mixed-8k.xml"
SAMPLE_TEXT = SAMPLE / "diskspd" / "synthetic-ss-stripe-sweep.txt"


def sample_document() -> str:
    """The first `<Results>` document of the sample file (with -L latency buckets, read and write)."""
    text = decode(SAMPLE_XML.read_bytes())[0]
    start = text.index("<Results>")
    return text[start : text.index("</Results>") + len("</Results>")]


def corpus_document() -> str:
    """A real DiskSpd 2.0.21a -Rxml output (no latency), a file of its own."""
    return decode(corpus_file("diskspd", "pkb-2.0.21a-xml-rxml-4threads-seqread.xml").read_bytes())[0]


@pytest.mark.parametrize("document", [sample_document, corpus_document])
def test_one_document_reads_as_parse_reads_it(document):
    doc = document()
    records = diskspd_xml.parse_document(doc)
    assert records and records == diskspd_xml.parse(doc)
    # White space around it is still one document; lines count from the text's start.
    spaced = "\n \n\t" + doc.strip() + "\n\n  \n"
    records = diskspd_xml.parse_document(spaced)
    assert records == diskspd_xml.parse(spaced)
    assert {r.source_line for r in records} == {3}


def test_another_tools_output_after_the_document_is_none():
    doc = sample_document()
    other = decode(SAMPLE_TEXT.read_bytes())[0]
    assert diskspd_xml.parse_document(doc + "\n" + other) is None
    assert diskspd_xml.parse_document(doc + "\nTotal IO\n") is None


def test_documents_back_to_back_with_comment_lines_read_whole():
    doc = sample_document()
    for text in (
        doc + "\n" + doc,
        '<?xml version="1.0"?>\n<!-- run 1 of 2 -->\n' + doc + "\n<!-- run 2 of 2 -->\n\n" + doc + "\n",
    ):
        records = diskspd_xml.parse_document(text)
        assert records and records == diskspd_xml.parse(text)
        assert {r.run_index for r in records} == {0, 1}
    # A comment naming a document (parse starts one there), a comment over lines, a comment after the last line:
    # the registry's slow path.
    assert diskspd_xml.parse_document("<!-- <Results> -->\n" + doc + "\n" + doc) is None
    assert diskspd_xml.parse_document("<!-- Total IO\nthread | bytes -->\n" + doc) is None
    assert diskspd_xml.parse_document(doc + "\n<!-- end -->") is None
    assert diskspd_xml.parse_document(doc + "\n" + doc.replace("</Percentile>", "</Percent>", 1)) is None


def test_leading_shell_prompt_is_none():
    doc = sample_document()
    text = "PS C:\\bench> .\\diskspd.exe -b8K -L -Rxml #1 > out.xml\n" + doc
    assert diskspd_xml.parse_document(text) is None
    assert diskspd_xml.parse(text)  # the slow path still reads it
    assert diskspd_xml.parse_document("x" * 10_000_000) is None  # no '<' first: one check, no scan


def test_damaged_document_is_none():
    doc = sample_document()
    damaged = doc.replace("</Percentile>", "</Percent>", 1)
    with pytest.raises(ParseError):
        diskspd_xml.parse(damaged)
    assert diskspd_xml.parse_document(damaged) is None
    no_time = doc.replace("<TestTimeSeconds>", "<TestTime>", 1).replace("</TestTimeSeconds>", "</TestTime>", 1)
    with pytest.raises(ParseError, match="no TestTimeSeconds"):
        diskspd_xml.parse(no_time)
    assert diskspd_xml.parse_document(no_time) is None
    cut = doc[: len(doc) // 2] + "</Results>"
    assert diskspd_xml.parse_document(cut) is None


@pytest.mark.parametrize(
    "change",
    [
        # Places another tool's lines could hide in: a comment, a CDATA section, a text node over lines.
        lambda doc: doc.replace("<Profile>", "<!-- Total IO\nthread | bytes -->\n<Profile>", 1),
        lambda doc: doc.replace("<Profile>", "<![CDATA[\nTotal IO\n]]><Profile>", 1),
        lambda doc: doc.replace("</System>", "</System>\nTotal IO\nthread |       bytes\n", 1),
        lambda doc: doc.replace("</ComputerName>", "\nsqlio v1.5.SG\n</ComputerName>", 1),
        lambda doc: doc.replace("</System>", "</System>   \n", 1),
    ],
)
def test_text_inside_the_document_is_none(change):
    doc = change(sample_document())
    assert diskspd_xml.parse(doc)  # still a DiskSpd document to parse()
    assert diskspd_xml.parse_document(doc) is None


def test_a_damaged_document_costs_only_itself():
    doc = sample_document()
    damaged = doc.replace("</Percentile>", "</Percent>", 1)
    parsed = formats.parse_bytes(("\n".join([doc, damaged, doc, doc[: len(doc) // 2]])).encode(), "batch.xml")
    assert parsed.format == "diskspd_xml" and {r.run_index for r in parsed.records} == {0, 1}
    first, cut = parsed.warnings
    assert first.startswith("line ") and "malformed" in first and first.endswith("that document is skipped")
    assert cut.endswith("document never closed (output cut short?)")
