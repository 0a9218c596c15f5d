"""The `kneepoint` command line.

    parse       print the normalized records of files as JSON lines
    ingest      store files, folders and zips, and bring the models up to date
    files       list stored files
    relabel     change a stored file's disk/host label
    delete      remove a stored file and all its rows
    build       bring the models up to date and run every dbt test (--full-refresh: rebuild everything)
    saturation  where each series saturates, with the USL and Kneedle second opinions
    headroom    observed production load against the disk's benchmark: headroom and degradation
    report      one self-contained HTML report
    export      a bundle: Parquet marts, the raw layer, the report
    import      load a bundle into this warehouse
    images      PNG/SVG of every report chart
    app         start the Streamlit app

The warehouse is --db PATH|URL, else $KNEEPOINT_DB, else ./warehouse.duckdb: a DuckDB file, or a team's
PostgreSQL database by its postgresql:// URL (its password from the URL, $PGPASSWORD or ~/.pgpass, never printed).
It is resolved once here and handed to each command (the environment is left as it is). Every command that reads
the models first completes a build that an earlier command left unfinished (killed, or stored with --no-build).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from kneepoint.app import wording as w
from kneepoint.app.wording import printable
from kneepoint.ingest import __version__, formats
from kneepoint.ingest.errors import DatabaseError, ParseError, ReadOnlyWarehouse, WarehouseBusy
from kneepoint.ingest.labels import LabelError
from kneepoint.ingest.sources import InputError, iter_paths

if TYPE_CHECKING:
    from kneepoint.ingest.warehouse import Location

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    from kneepoint.ingest.postgres import mask
    from kneepoint.ingest.warehouse import arrow_without_pandas, locate, notify_waits

    arrow_without_pandas()  # before any command: builds and imports convert lists to Arrow too

    try:
        args.db = locate(args.db)
    except ValueError as exc:
        print(f"kneepoint: {printable(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    notify_waits(_say_waiting)
    try:
        return int(args.func(args) or 0)
    except ReadOnlyWarehouse as exc:
        print(f"kneepoint: {printable(w.read_only(args.db))} ({printable(exc)})", file=sys.stderr)
        return EXIT_FAIL
    except (WarehouseBusy, DatabaseError) as exc:
        # A PostgreSQL server's messages never quote a password; masked all the same, as every message here.
        print(f"kneepoint: {printable(mask(str(exc)))}", file=sys.stderr)
        return EXIT_FAIL
    except (KeyError, FileNotFoundError) as exc:
        print(f"kneepoint: {printable(exc.args[0] if exc.args else exc)}", file=sys.stderr)
        return EXIT_FAIL
    except LabelError as exc:
        print(f"kneepoint {args.command}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kneepoint",
        description="Disk benchmark and SQL Server I/O results in one warehouse: where does each disk saturate?",
    )
    p.add_argument("--version", action="version", version=f"kneepoint {__version__}")
    db_help = (
        "the warehouse: a DuckDB file, or postgresql://user@host:port/dbname for a team's "
        "(default: $KNEEPOINT_DB or ./warehouse.duckdb)"
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", metavar="PATH|URL", help=db_help, default=argparse.SUPPRESS)
    p.add_argument("--db", metavar="PATH|URL", help=db_help)
    # A load table whose header does not say which column is which (load_table's parse options).
    mapping = argparse.ArgumentParser(add_help=False)
    group = mapping.add_argument_group("column mapping (load tables whose header does not name the columns)")
    column = "a header cell's text or a 1-based column number"
    group.add_argument("--load-column", metavar="COLUMN", help=f"the load (sessions, users...): {column}")
    group.add_argument("--throughput-column", metavar="COLUMN", help=f"the throughput: {column}")
    group.add_argument("--response-column", metavar="COLUMN", help=f"the mean response time: {column}")
    group.add_argument("--throughput-unit", metavar="UNIT", help="e.g. queries/min, transactions/s (header names none)")
    group.add_argument("--response-unit", choices=("ms", "s", "min"), help="response times as plain numbers in")
    group.add_argument("--load-kind", metavar="KIND", help="what the load counts (e.g. databases); default: load")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("parse", parents=[common, mapping], help="print the normalized records of files as JSON lines")
    s.add_argument("files", nargs="+", metavar="FILE")
    s.add_argument("--format", choices=formats.names(), help="skip detection and read as this format")
    s.set_defaults(func=cmd_parse)

    s = sub.add_parser(
        "ingest", parents=[common, mapping], help="store files (or folders, zips) and rebuild the models"
    )
    s.add_argument("paths", nargs="+", metavar="PATH")
    s.add_argument("--disk", required=True, help="disk label, e.g. 'P10 premium SSD'")
    s.add_argument("--host", help="host label")
    s.add_argument("--tag", action="append", default=[], dest="tags", help="tag (repeatable)")
    s.add_argument("--notes", help="free notes")
    s.add_argument("--format", choices=formats.names(), help="skip detection and read as this format")
    s.add_argument("--no-build", action="store_true", help="store only; run `kneepoint build` later")
    s.add_argument(
        "--workers",
        type=_positive_int,
        metavar="N",
        help=(
            "parse in N worker processes (default 1: in-process, within the memory target; "
            f"from 3 cores up to cores-1 workers parse faster, each ~{w.POOL_PROCESS_MB} MB more)"
        ),
    )
    s.set_defaults(func=cmd_ingest)

    s = sub.add_parser("files", parents=[common], help="list stored files")
    s.add_argument("--json", action="store_true", help="a JSON array instead of a table")
    s.set_defaults(func=cmd_files)

    s = sub.add_parser("relabel", parents=[common], help="change the disk/host label of a stored file")
    s.add_argument("file_id", metavar="FILE_ID")
    s.add_argument("--disk")
    s.add_argument("--host")
    s.set_defaults(func=cmd_relabel)

    s = sub.add_parser("delete", parents=[common], help="remove a stored file and all its rows")
    s.add_argument("file_id", metavar="FILE_ID")
    s.add_argument("--yes", action="store_true", help="do not ask")
    s.set_defaults(func=cmd_delete)

    s = sub.add_parser(
        "build", parents=[common], help="bring the models up to date with the raw layer and run every dbt test"
    )
    s.add_argument("--full-refresh", action="store_true", help="rebuild every model from the raw layer")
    s.set_defaults(func=cmd_build)

    s = sub.add_parser(
        "saturation",
        parents=[common],
        help="where each series saturates (mart_saturation_points, and the load series: mart_load_saturation), with "
        "USL and Kneedle second opinions",
    )
    s.add_argument(
        "--tolerance",
        type=_tolerance,
        metavar="EPS",
        help="saturated where no larger load adds more than EPS x the IOPS (default: the built mart's, 0.1)",
    )
    s.add_argument(
        "--latency-target-ms",
        type=_latency_target_ms,
        metavar="MS",
        help="also give the largest load whose p99 latency (mean where no p99) stays under MS, with its IOPS; for "
        "a load series, the most throughput whose response time (p99, else p95, else mean) stays under MS",
    )
    s.add_argument("--by-threads", action="store_true", help="per thread count, the load being the queue depth")
    s.add_argument("--json", action="store_true", help="a JSON array keyed by the mart's column names")
    s.set_defaults(func=cmd_saturation)

    s = sub.add_parser(
        "headroom",
        parents=[common],
        help="observed production load against the disk's benchmark (mart_headroom): headroom and degradation",
    )
    s.add_argument("--disk", help="only this disk: a disk key 'label @ host' or a label (every host of it)")
    s.add_argument("--json", action="store_true", help="a JSON array keyed by the mart's column names")
    s.set_defaults(func=cmd_headroom)

    share = argparse.ArgumentParser(add_help=False)
    share.add_argument(
        "--disk",
        action="append",
        default=[],
        dest="disks",
        metavar="DISK",
        help="a disk as the app names it ('label' or 'label @ host'); repeatable; default: every disk",
    )
    share.add_argument(
        "--anonymize",
        action="store_true",
        help="replace labels, host and user names, paths, drive letters, IP addresses and comments by pseudonyms",
    )
    share.add_argument(
        "--redact",
        action="append",
        default=[],
        metavar="TEXT",
        help="also replace TEXT (a project or customer name) by a pseudonym; repeatable; implies --anonymize",
    )

    s = sub.add_parser(
        "report", parents=[common, share], help="write one self-contained HTML report (opens offline, no server)"
    )
    s.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write, e.g. report.html")
    s.add_argument(
        "--latency-target-ms",
        type=_latency_target_ms,
        default=5.0,
        metavar="MS",
        help="the summary gives each disk's largest load whose p99 latency stays under MS (default 5)",
    )
    s.set_defaults(func=cmd_report)

    s = sub.add_parser(
        "export", parents=[common, share], help="write a bundle: Parquet marts and raw layer, the report, a manifest"
    )
    s.add_argument("--out", required=True, metavar="FILE", help="the zip to write, e.g. bundle.zip")
    s.set_defaults(func=cmd_export)

    s = sub.add_parser("import", parents=[common], help="load a bundle into this warehouse and rebuild the models")
    s.add_argument("bundle", metavar="BUNDLE", help="a zip written by `kneepoint export`")
    s.add_argument("--no-build", action="store_true", help="store only; run `kneepoint build` later")
    s.set_defaults(func=cmd_import)

    s = sub.add_parser(
        "images", parents=[common, share], help="PNG/SVG of every report chart (kaleido + chromium), for slides"
    )
    s.add_argument("--out", required=True, metavar="DIR", help="folder to write the images into")
    s.add_argument(
        "--format",
        action="append",
        choices=("png", "svg"),
        dest="formats",
        help="png or svg; repeatable; default: both",
    )
    s.add_argument("--scale", type=float, default=2.0, help="PNG pixel density (default 2: sharp on a projector)")
    s.set_defaults(func=cmd_images)

    s = sub.add_parser("app", parents=[common], help="start the Streamlit app (loads the sample data on first start)")
    s.add_argument("--port", type=int, default=8501)
    s.add_argument(
        "--address",
        default="127.0.0.1",
        help="bind address; 0.0.0.0 serves your network (no authentication: see README)",
    )
    s.add_argument("--no-sample", action="store_true", help="do not load sample_data/ into an empty warehouse")
    s.set_defaults(func=cmd_app)
    return p


def _say_waiting(db: Path, holder: str) -> None:
    print(f"kneepoint: waiting for {printable(db)}, held by {printable(holder)}…", file=sys.stderr, flush=True)


class _Lines:
    """Lines for stdout, written by a thread of their own: a command holding the warehouse never waits on a full
    pipe (`kneepoint ingest ... | less`); `close` waits for the rest once the warehouse is let go."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._write, name="kneepoint-output", daemon=True)
        self._thread.start()

    def __call__(self, line: str) -> None:
        self._queue.put(line)

    def _write(self) -> None:
        while (line := self._queue.get()) is not None:
            try:
                print(line, flush=True)
            except BrokenPipeError:
                return

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()


def _build_progress() -> Callable[[str], None] | None:
    """On a terminal, the step being built shown on one line of stderr; elsewhere nothing."""
    if not sys.stderr.isatty():
        return None

    def show(text: str) -> None:
        sys.stderr.write("\r\x1b[K" + text[: _columns() - 1])
        sys.stderr.flush()

    return show


def _end_progress(progress: Callable[[str], None] | None) -> None:
    if progress is not None:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()


def _columns() -> int:
    import shutil

    return shutil.get_terminal_size((100, 24)).columns


def _catch_up(db: Location) -> int | None:
    """Before a read: the warehouse exists, and a build an earlier command left unfinished is done now. An error
    exit code when the warehouse is missing or the build fails."""
    from kneepoint.ingest.build import build_models
    from kneepoint.ingest.warehouse import exists, open_warehouse

    if not exists(db):
        print(
            f"kneepoint: no warehouse at {printable(db)}: ingest a file first (kneepoint ingest FILE --disk LABEL)",
            file=sys.stderr,
        )
        return EXIT_FAIL
    progress = _build_progress()
    try:
        with open_warehouse(db):
            result = build_models(db, progress=progress)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise
        return None  # a warehouse this process may only read: read it as it is
    except ReadOnlyWarehouse:
        return None  # an account that may only read (PostgreSQL): read the models as they are
    finally:
        _end_progress(progress)
    if not result.success:
        print(_build_failed(result.failures), file=sys.stderr)
        return EXIT_FAIL
    return None


MAPPING_OPTIONS = ("load_column", "throughput_column", "response_column", "throughput_unit", "response_unit",
                   "load_kind")  # fmt: skip


def _parse_options(args: argparse.Namespace) -> dict[str, str] | None:
    """The column mapping given on the command line, checked (ValueError), or None."""
    options = {k: v for k in MAPPING_OPTIONS if (v := getattr(args, k, None)) not in (None, "")}
    if not options:
        return None
    formats.check_parse_options(args.format, options)
    return options


def cmd_parse(args: argparse.Namespace) -> int:
    try:
        options = _parse_options(args)
    except ValueError as exc:
        print(f"kneepoint parse: {printable(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    status = EXIT_OK
    out = sys.stdout
    for item in iter_paths(args.files):
        if isinstance(item, InputError):
            print(f"{printable(item.name)}:1: {printable(item.reason)}", file=sys.stderr)
            status = EXIT_BAD_INPUT
            continue
        try:
            parsed = formats.parse_bytes(item.data, item.name, args.format, options)
        except ParseError as exc:
            print(printable(exc), file=sys.stderr)
            status = EXIT_BAD_INPUT
            continue
        for warning in parsed.warnings:
            print(f"{printable(item.name)}: warning: {printable(warning)}", file=sys.stderr)
        for rec in parsed.records:
            out.write(json.dumps(rec.to_normalized(), ensure_ascii=False) + "\n")
    return status


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def cmd_ingest(args: argparse.Namespace) -> int:
    from kneepoint.ingest.labels import check_labels
    from kneepoint.ingest.load import ingest_inputs
    from kneepoint.ingest.warehouse import open_warehouse

    check_labels(args.disk, args.host, args.tags, args.notes)  # LabelError: exit 2 before anything is read
    try:
        options = _parse_options(args)
    except ValueError as exc:
        print(f"kneepoint ingest: {printable(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    db = args.db
    out = _Lines()
    progress = _build_progress()
    try:
        # Held from the first file to the end of the build: another process waiting for the warehouse cannot
        # take it between the store and the build (dbt does not wait for a lock, it fails at once).
        with open_warehouse(db):
            report = ingest_inputs(
                db,
                iter_paths(args.paths),
                disk=args.disk,
                host=args.host,
                tags=args.tags,
                notes=args.notes,
                fmt=args.format,
                options=options,
                build=not args.no_build,
                progress=lambda o: out(printable(o.describe())),
                workers=args.workers,
                build_progress=progress,
            )
    except KeyboardInterrupt:
        out.close()
        # Files are committed whole (alone or in batches) before they are listed: a rerun skips them.
        print("\ninterrupted: the files listed as added are stored; run the same command again for the rest")
        return 130
    finally:
        _end_progress(progress)
    out.close()
    added = report.added
    print(
        f"{len(added)} file(s) added, {sum(o.records for o in added)} record(s); "
        f"{len(report.duplicates)} already stored (same sha256); {len(report.errors)} error(s)"
    )
    if report.aborted is not None:
        print(f"kneepoint ingest: stopped, the warehouse failed: {printable(report.aborted)}", file=sys.stderr)
        return EXIT_FAIL
    if report.build is not None:
        if not report.build.success:
            print(_build_failed(report.build.failures), file=sys.stderr)
            return EXIT_FAIL
        if report.build.kind != "none":
            print(f"models up to date ({_build_words(report.build)})")
    elif args.no_build and added:
        print("models not rebuilt (--no-build): run `kneepoint build`")
    return EXIT_BAD_INPUT if report.errors else EXIT_OK


def _build_failed(failures: Sequence[str]) -> str:
    # dbt's messages may quote the rows they failed on, labels included: escaped line by line, lines kept
    return "model build failed:\n  " + "\n  ".join(
        "\n    ".join(printable(line) for line in f.splitlines()) for f in failures
    )


def _build_words(result) -> str:
    left = f"; {result.left} change(s) that arrived meanwhile wait for the next build" if result.left else ""
    if result.kind == "full":
        return f"every model rebuilt, {result.seconds:.1f} s{left}"
    if result.kind == "changes":
        return f"{result.changes} change{'s' if result.changes != 1 else ''} built in {result.seconds:.1f} s{left}"
    if result.kind == "elsewhere":
        return "the build another command is running covers these changes"
    return "nothing to build"


def cmd_files(args: argparse.Namespace) -> int:
    from kneepoint.ingest.warehouse import connect, list_files

    if (failed := _catch_up(args.db)) is not None:
        return failed
    con = connect(args.db, read_only=True)
    try:
        rows = list_files(con)
    finally:
        con.close()
    if args.json:
        keys = ("file_id", "name", "sha256", "format", "disk", "host", "records", "ingested_at")
        print(json.dumps([{k: r[k] for k in keys} for r in rows], indent=2, ensure_ascii=False))
        return EXIT_OK
    if not rows:
        print("no files stored")
        return EXIT_OK
    header = ("file_id", "format", "disk", "host", "records", "ingested_at", "name")
    table = [header] + [tuple(printable(r[k] if r[k] is not None else "") for k in header) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1])
    return EXIT_OK


def _with_file(args: argparse.Namespace, action) -> int:
    """A change to one stored file, then the build; the warehouse is held from the change to the build's end."""
    from kneepoint.ingest.build import build_models
    from kneepoint.ingest.warehouse import exists, open_warehouse, resolve_file_id

    if not exists(args.db):
        print(f"kneepoint: no warehouse at {printable(args.db)}", file=sys.stderr)
        return EXIT_FAIL
    progress = _build_progress()
    try:
        with open_warehouse(args.db) as con:
            # A build an earlier command left unfinished first: the change's own build then covers only it.
            result = build_models(args.db, progress=progress)
            if result.success:
                file_id = resolve_file_id(con, args.file_id)
                if not action(con, file_id):
                    return EXIT_FAIL
                result = build_models(args.db, progress=progress)
    finally:
        _end_progress(progress)
    if not result.success:
        print(_build_failed(result.failures), file=sys.stderr)
        return EXIT_FAIL
    return EXIT_OK


def cmd_relabel(args: argparse.Namespace) -> int:
    from kneepoint.ingest.labels import check_label
    from kneepoint.ingest.warehouse import relabel_file

    if args.disk is None and args.host is None:
        print("kneepoint relabel: give --disk and/or --host", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.disk is not None and not args.disk.strip():
        print("kneepoint relabel: --disk cannot be empty (--host '' removes the host label)", file=sys.stderr)
        return EXIT_BAD_INPUT
    for kind, value in (("disk label", args.disk), ("host label", args.host)):
        if value is not None:
            check_label(kind, value)  # LabelError: exit 2 before the warehouse is touched

    def action(con, file_id: str) -> bool:
        relabel_file(con, file_id, disk=args.disk, host=args.host)
        disk, host = con.execute("SELECT disk, host FROM raw_files WHERE file_id = ?", [file_id]).fetchall()[0]
        print(
            f"relabelled {file_id}: disk {printable(repr(disk))}"
            + (f", host {printable(repr(host))}" if host else ", no host")
        )
        return True

    return _with_file(args, action)


def cmd_delete(args: argparse.Namespace) -> int:
    from kneepoint.ingest.warehouse import delete_file

    def action(con, file_id: str) -> bool:
        name = printable(con.execute("SELECT name FROM raw_files WHERE file_id = ?", [file_id]).fetchall()[0][0])
        if not args.yes:
            if not sys.stdin.isatty():
                print(f"kneepoint delete: refusing to delete {file_id} ({name}) without --yes", file=sys.stderr)
                return False
            answer = input(f"delete {file_id} ({name}) and all its rows? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("not deleted")
                return False
        delete_file(con, file_id)
        print(f"deleted {file_id} ({name})")
        return True

    return _with_file(args, action)


def cmd_build(args: argparse.Namespace) -> int:
    from kneepoint.ingest.build import build_models
    from kneepoint.ingest.warehouse import open_warehouse

    db = args.db
    progress = _build_progress()
    # Creates the raw layer in a new warehouse, waits for another process's lock (dbt would fail at once) and
    # keeps the warehouse until the build is done.
    try:
        with open_warehouse(db):
            result = build_models(db, full_refresh=args.full_refresh, all_tests=True, progress=progress)
    finally:
        _end_progress(progress)
    if not result.success:
        print(_build_failed(result.failures), file=sys.stderr)
        return EXIT_FAIL
    print(f"models up to date in {printable(db)} ({_build_words(result)}); every dbt test passed")
    return EXIT_OK


def _tolerance(text: str) -> float:
    from kneepoint.app.cli.saturation import parse_tolerance

    return parse_tolerance(text)


def _latency_target_ms(text: str) -> float:
    from kneepoint.app.cli.saturation import parse_latency_target_ms

    return parse_latency_target_ms(text)


def cmd_saturation(args: argparse.Namespace) -> int:
    from kneepoint.app.cli.saturation import MissingModels, report_lines, saturation_rows, to_json

    if (failed := _catch_up(args.db)) is not None:
        return failed
    try:
        rows = saturation_rows(args.db, args.tolerance, args.by_threads, args.latency_target_ms)
    except MissingModels as exc:
        print(f"kneepoint saturation: {exc}", file=sys.stderr)
        return EXIT_FAIL
    if args.json:
        print(to_json(rows))
    else:
        print("\n".join(printable(line) for line in report_lines(rows, args.by_threads, args.latency_target_ms)))
    return EXIT_OK


def cmd_headroom(args: argparse.Namespace) -> int:
    from kneepoint.app.cli.headroom import MissingModels, headroom_rows, report_lines, to_json, wait_rows

    if (failed := _catch_up(args.db)) is not None:
        return failed
    try:
        rows = headroom_rows(args.db, args.disk)
    except MissingModels as exc:
        print(f"kneepoint headroom: {exc}", file=sys.stderr)
        return EXIT_FAIL
    waits = wait_rows(args.db, [r["disk_key"] for r in rows])
    if args.json:
        print(to_json(rows, waits))
    else:
        print("\n".join(printable(line) for line in report_lines(rows, waits)))
    return EXIT_OK


def _share_args(args: argparse.Namespace) -> dict:
    redact = [t for t in args.redact if t.strip()]
    return {"disks": args.disks or None, "anonymize": bool(args.anonymize or redact), "marked": redact}


def cmd_report(args: argparse.Namespace) -> int:
    from kneepoint.app.sharing.report import build_report, write_report

    if (failed := _catch_up(args.db)) is not None:
        return failed
    try:
        report = build_report(args.db, **_share_args(args), latency_target_ms=args.latency_target_ms)
    except RuntimeError as exc:
        print(f"kneepoint report: {printable(exc)}", file=sys.stderr)
        return EXIT_FAIL
    out = write_report(report, args.out)
    print(
        f"wrote {out}: {len(report.disk_keys)} disk(s), {len(report.charts)} chart(s), "
        f"{len(report.html.encode('utf-8')) / 1e6:.1f} MB" + (", anonymized" if report.anonymized else "")
    )
    import textwrap

    for disk, sentence in report.summary:
        print(
            textwrap.fill(
                f"{printable(disk)}: {printable(sentence)}", 100, initial_indent="  ", subsequent_indent="    "
            )
        )
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from kneepoint.app.sharing.bundle import export_bundle

    if (failed := _catch_up(args.db)) is not None:
        return failed
    try:
        result = export_bundle(args.db, args.out, **_share_args(args))
    except RuntimeError as exc:
        print(f"kneepoint export: {printable(exc)}", file=sys.stderr)
        return EXIT_FAIL
    rows = sum(n for member, n in result.tables.items() if member.startswith("marts/"))
    print(
        f"wrote {result.path}: {len(result.disks)} disk(s), {result.files} file(s), {rows} mart row(s) in "
        f"{sum(m.startswith('marts/') for m in result.tables)} table(s), the raw layer"
        + (" without the original files (anonymized)" if result.anonymized else " with the original files")
        + " and the report"
    )
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from kneepoint.app.sharing.bundle import BundleError, import_bundle

    out = _Lines()
    progress = _build_progress()
    try:
        # import_bundle keeps the warehouse from the first file to the end of the build.
        result = import_bundle(
            args.db, args.bundle, build=not args.no_build, progress=lambda t: out(printable(t)), build_progress=progress
        )
    except BundleError as exc:
        out.close()
        print(f"kneepoint import: {printable(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        _end_progress(progress)
    out.close()
    print(
        f"{len(result.added)} file(s) added; {len(result.duplicates)} already stored (same sha256); "
        f"{len(result.errors)} error(s)" + (" (anonymized bundle: no original files)" if result.anonymized else "")
    )
    if result.dropped_columns:
        print("columns this kneepoint does not know, left out: " + printable(", ".join(result.dropped_columns)))
    for error in result.errors:
        print(f"kneepoint import: {printable(error)}", file=sys.stderr)
    if result.build_failures:
        print(_build_failed(result.build_failures), file=sys.stderr)
        return EXIT_FAIL
    if result.build_failures is not None:
        print("models up to date")
    elif args.no_build and result.added:
        print("models not rebuilt (--no-build): run `kneepoint build`")
    return EXIT_FAIL if result.errors else EXIT_OK


def cmd_images(args: argparse.Namespace) -> int:
    from kneepoint.app.sharing.images import NoBrowser, chart_images
    from kneepoint.app.sharing.report import build_report

    if (failed := _catch_up(args.db)) is not None:
        return failed
    try:
        report = build_report(args.db, **_share_args(args))
        paths = chart_images(report.charts, args.out, formats=tuple(args.formats or ("png", "svg")), scale=args.scale)
    except (NoBrowser, RuntimeError, ValueError) as exc:
        print(f"kneepoint images: {printable(exc)}", file=sys.stderr)
        return EXIT_FAIL
    print(f"wrote {len(paths)} image(s) of {len(report.charts)} chart(s) to {Path(args.out).resolve()}")
    return EXIT_OK


def cmd_app(args: argparse.Namespace) -> int:
    import subprocess

    from kneepoint.app.sample import warehouse_is_empty
    from kneepoint.ingest.postgres import Target

    db = args.db
    # The app's process reads its warehouse from KNEEPOINT_DB (Streamlit runs the pages as scripts); a
    # PostgreSQL password goes where libpq reads it, never into the URL the app shows.
    env = {**os.environ, "KNEEPOINT_DB": str(db)}
    if isinstance(db, Target):
        env["KNEEPOINT_DB"] = db.url_without_password()
        if db.password:
            env["PGPASSWORD"] = db.password
    if not args.no_sample and warehouse_is_empty(db):
        # In a child process: dbt's build leaves multiprocessing semaphores that the exec below would orphan
        # (the resource tracker then warns of "leaked semaphore objects" at start). The warehouse goes by the
        # environment, as to the app, so no password appears among the child's arguments.
        loaded = subprocess.run(
            [
                sys.executable,
                "-c",
                "from kneepoint.app.sample import load_sample_if_empty; from kneepoint.ingest.warehouse import locate; "
                "print(load_sample_if_empty(locate()))",
            ],
            check=True,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        ).stdout.strip()
        if loaded not in ("", "0"):
            print(f"loaded the sample data into {printable(db)}: {loaded} file(s)")
    script = Path(__file__).resolve().parent.parent / "web" / "streamlit_app.py"
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(script),
        "--server.address",
        args.address,
        "--server.port",
        str(args.port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.enableXsrfProtection",
        "true",
        "--client.toolbarMode",
        "viewer",
    ]
    print(f"kneepoint app on http://{args.address}:{args.port}  (warehouse: {printable(db)})", flush=True)
    os.execve(sys.executable, cmd, env)
    return EXIT_OK  # not reached


if __name__ == "__main__":
    sys.exit(main())
