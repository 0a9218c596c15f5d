"""HammerDB TPROC-C (TPC-C derived) logs, 3.x to 5.x: the CLI's console output (`hammerdbcli auto script.tcl`, the
`vucreate`/`vurun` messages and the virtual users' lines), `hammerdb.log` (`vuset logtotemp 1`) and autopilot runs
(the GUI's autopilot or a CLI script looping over virtual-user counts), one result per virtual-user step.

Input (HammerDB 4.x CLI, one step of a `foreach z { 1 2 4 8 } { puts "$z VU TEST"; vuset vu $z; ... }` sequence)::

    4 VU TEST
    Vuser 1 created MONITOR - WAIT IDLE
    Vuser 2 created - WAIT IDLE
    ...
    5 Virtual Users Created with Monitor VU
    Vuser 1:Timing test period of 5 in minutes
    Vuser 1:4 Active Virtual Users configured
    Vuser 1:TEST RESULT : System achieved 38385 NOPM from 88486 SQL Server TPM

Records (normalized; one per TEST RESULT line)::

    {"record": "load", "tool": "hammerdb", "step_index": 0, "source_line": 9, "load_kind": "virtual users",
     "load": 4.0, "throughput": 38385.0, "throughput_unit": "new orders/min", "duration_s": 300.0, ...}

Rules:
- One step = one `TEST RESULT : System achieved N NOPM from M <database> TPM` line (HammerDB 3.x prints
  `System achieved M <database> TPM at N NOPM`; both read, also inside the web service's JSON).
- throughput = NOPM, unit `new orders/min`. HammerDB's documentation makes NOPM the result to compare: it counts
  the new-order transactions the schema recorded (district's next order ids), the same on every database, whereas
  TPM is the database's own transaction counter (commits and rollbacks as that engine counts them, including its
  internal ones) and cannot be compared between databases or versions. LoadRecord has one throughput and no field
  holds a second counter, so TPM is not kept.
- load = the virtual users that ran the workload (load_kind `virtual users`), the first found of: the driver's
  `N Active Virtual Users configured` in the step; the step's `N Virtual Users Created with Monitor VU` less the
  monitor (or `N Virtual Users Created`); the `Vuser K created` lines less the monitor; the autopilot script's
  `N VU TEST`; the `vuset vu N` command or `Virtual Users = N` of `print vuconf`; the next count of an autopilot
  sequence (`autopilot sequence: 1 2 4 8`). A result with none is skipped with a warning.
- duration_s from `Timing test period of N in minutes`; response times (ms) from the time profile
  (`timeprofile`): the NEWORD procedure's AVG, P50, P95, P99, the transaction NOPM counts; errors = the virtual
  users of the step that failed (`Error in Virtual User N`, `Vuser N:FINISHED FAILED`), 0 when every one reported
  `FINISHED SUCCESS`.
- tool_version from the banner (`HammerDB CLI v4.12`, `HammerDB v3.3`).
- TPROC-H (query sets) results are not load steps: a log without a TEST RESULT line is refused (ParseError).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import first_content_line, read_grouped_int, read_number
from kneepoint.ingest.records import LoadRecord, ParsedRecords, add_line_warning
from kneepoint.ingest.textio import find_rare

NAME = "hammerdb"
TITLE = "HammerDB"
TOOLS = ("hammerdb",)
HOST_KEYS: frozenset[str] = frozenset()
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ()
RESULT_KEYS: tuple[str, ...] = ()

MAX_LINE = 4000
_HEAD = 65536
_INT = r"[0-9][0-9,.]{0,20}"

_VUSER_PREFIX = re.compile(r"^(?:hammerdb>\s*)?(?:Vuser\s+\d{1,6}\s*:\s*)?")
_VERSION = re.compile(r"\bHammerDB(?:\s+CLI|\s+Web\s+Service)?\s+v(?P<version>\d{1,2}\.\d{1,2}(?:\.\d{1,3})?)\b", re.I)
_RESULT_NEW = re.compile(
    r"TEST RESULT\s*:\s*System achieved\s+(?P<nopm>" + _INT + r")\s+NOPM\s+from\s+(?P<tpm>" + _INT + r")\s+"
    r"(?P<db>[^\"]{1,40}?)\s+TPM\b"
)
_RESULT_OLD = re.compile(
    r"TEST RESULT\s*:\s*System achieved\s+(?P<tpm>"
    + _INT
    + r")\s+(?P<db>[^\"]{1,40}?)\s+TPM\s+at\s+(?P<nopm>"
    + _INT
    + r")\s+NOPM\b"
)
_ACTIVE = re.compile(r"^(?P<n>\d{1,6})\s+Active Virtual Users configured")
_CREATED = re.compile(r"(?<![0-9])(?P<n>\d{1,6})\s+Virtual Users Created(?P<monitor>\s+with Monitor VU)?")
_VUSER_CREATED = re.compile(r"^Vuser\s+(?P<n>\d{1,6})\s+created(?P<monitor>\s+MONITOR)?\s+-")
_VU_TEST = re.compile(r"^(?P<n>\d{1,6})\s+VU TEST\b")
_VUSET = re.compile(r"^(?:hammerdb>\s*)?vuset\s+vu\s+(?P<n>\d{1,6})\s*$|^Virtual Users\s*=\s*(?P<conf>\d{1,6})\s*$")
_SEQUENCE = re.compile(r"autopilot\s+sequence\s*[:=]?\s*(?P<counts>(?:\d{1,6}[\s,]*){1,200})$", re.I)
_DURATION = re.compile(r"^Timing test period of\s+(?P<min>\d{1,6}(?:\.\d{1,6})?)\s+in minutes")
_FAILED = re.compile(
    r"^(?:hammerdb>\s*)?(?:Error in Virtual User\s+(?P<error>\d{1,6})|Vuser\s+(?P<vu>\d{1,6})\s*:\s*FINISHED FAILED)"
)
_SUCCESS = re.compile(r"^(?:hammerdb>\s*)?Vuser\s+\d{1,6}\s*:\s*FINISHED SUCCESS")
_RAMPUP = re.compile(r"^Beginning rampup time of")
_PROC = re.compile(r">>>>>\s*PROC:\s*(?P<name>[A-Z_]{1,30})")
_TIMES = re.compile(r"\b(?P<key>AVG|P50|P95|P99):\s*(?P<ms>[0-9]{1,12}(?:\.[0-9]{1,9})?)\s*ms\b")


def detect(text: str) -> float:
    head = text[:_HEAD]
    if find_rare(head, "System achieved", 7) >= 0 and "TEST RESULT" in head and "NOPM" in head:
        return 0.95
    # A HammerDB log without a result (a run cut short): read, to be refused with the reason.
    if find_rare(head, "Virtual Users", 8) >= 0 and ("Vuser " in head or "HammerDB" in head):
        return 0.4
    return 0.0


def parse(text: str) -> list[LoadRecord]:
    return _Reader().read(text)


@dataclass(slots=True)
class _Step:
    """What the log said about the virtual-user step being run."""

    active: int | None = None
    created: int | None = None
    vusers_created: int = 0
    monitor_created: bool = False
    planned: int | None = None  # `N VU TEST`
    duration_s: float | None = None
    failed: set[int] = field(default_factory=set)
    succeeded: int = 0
    times: dict[str, float] = field(default_factory=dict)  # the NEWORD time profile: AVG, P50, P95, P99 (ms)
    record: LoadRecord | None = None  # its result, once read

    def load(self) -> int | None:
        if self.active:
            return self.active
        if self.created:
            return self.created
        if self.vusers_created:
            return self.vusers_created - self.monitor_created or None
        return self.planned


class _Reader:
    def __init__(self) -> None:
        self.records: list[LoadRecord] = []
        self.warnings: list[str] = []
        self.version: str | None = None
        self.vuset: int | None = None
        self.sequence: list[int] = []
        self.step = _Step()
        self.proc: str | None = None  # the time profile's procedure being read
        self.uncounted: int | None = None  # the first result skipped for want of a virtual-user count

    def read(self, text: str) -> list[LoadRecord]:
        for number, raw in enumerate(text.split("\n"), 1):
            if len(raw) > MAX_LINE:
                continue
            line = raw.strip()
            if line:
                self.line(line, number)
        self.end_step()
        if self.records:
            return ParsedRecords(self.records, self.warnings)
        if self.uncounted is not None:
            raise ParseError(
                "HammerDB TEST RESULT lines without a virtual-user count (no vuset vu, Virtual Users Created or "
                "Active Virtual Users configured line): keep the log of the whole run, not only its result lines",
                self.uncounted,
            )
        raise ParseError(
            "no HammerDB TEST RESULT line (System achieved N NOPM from M TPM) found", first_content_line(text)
        )

    def new_step(self) -> None:
        """A step begins (virtual users created, an autopilot step announced): the last one is over."""
        if self.step.record is not None or self.step.active or self.step.failed:
            self.end_step()
            self.step = _Step()

    def after_result(self) -> None:
        """A line of a run (rampup, timing, active users) after the step's result: the next run of a log that does
        not say when its virtual users are created (the GUI's hammerdb.log)."""
        if self.step.record is not None:
            self.new_step()

    def end_step(self) -> None:
        step, record = self.step, self.step.record
        if record is None:
            return
        if step.failed:
            record.errors = len(step.failed)
        elif step.succeeded:
            record.errors = 0
        record.response_avg_ms = step.times.get("AVG")
        record.response_p50_ms = step.times.get("P50")
        record.response_p95_ms = step.times.get("P95")
        record.response_p99_ms = step.times.get("P99")

    def line(self, line: str, number: int) -> None:
        if "TEST RESULT" in line:
            if m := _RESULT_NEW.search(line) or _RESULT_OLD.search(line):
                self.result(m, number)
            else:
                add_line_warning(self.warnings, number, "damaged TEST RESULT line: skipped")
            return
        if m := _FAILED.match(line):
            self.step.failed.add(int(m["error"] or m["vu"]))
            return
        if _SUCCESS.match(line):
            self.step.succeeded += 1
            return
        if m := _VUSER_CREATED.match(line):
            if m["n"] == "1":
                self.new_step()
            self.step.vusers_created += 1
            self.step.monitor_created |= m["monitor"] is not None
            return
        if m := _VUSET.match(line):
            self.vuset = int(m["n"] or m["conf"])
            return
        if m := _SEQUENCE.search(line):
            self.sequence = [int(n) for n in re.findall(r"\d+", m["counts"])]
            return
        if line.startswith("Hammerdb Log @"):
            self.new_step()  # the GUI's log: a run begins
            return
        if m := _VERSION.search(line):
            self.version = m["version"]
            return
        body = _VUSER_PREFIX.sub("", line, count=1)
        if m := _CREATED.search(body):
            if self.step.vusers_created == 0:
                self.new_step()
            n = int(m["n"])
            self.step.created = n - 1 if m["monitor"] else n
        elif m := _VU_TEST.match(body):
            self.new_step()
            self.step.planned = int(m["n"])
        elif _RAMPUP.match(body):
            self.after_result()
        elif m := _ACTIVE.match(body):
            self.after_result()
            self.step.active = int(m["n"])
        elif m := _DURATION.match(body):
            self.after_result()
            minutes = read_number(m["min"])
            self.step.duration_s = minutes * 60 if minutes is not None else None
        elif m := _PROC.search(body):
            self.proc = m["name"]
        elif self.proc == "NEWORD" and (times := _TIMES.findall(body)):
            for key, ms in times:
                self.step.times.setdefault(key, float(ms))

    def result(self, m: re.Match[str], number: int) -> None:
        self.after_result()  # a second result without a new step between: the next run
        nopm = read_grouped_int(m["nopm"])
        load = self.step.load() or self.vuset
        if load is None and len(self.sequence) > len(self.records):
            load = self.sequence[len(self.records)]
        if nopm is None:
            add_line_warning(self.warnings, number, f"NOPM {m['nopm']!r} is not a whole number: skipped")
            return
        if not load:
            self.uncounted = number if self.uncounted is None else self.uncounted
            add_line_warning(self.warnings, number, "no virtual-user count for this result (vuset vu, Virtual Users "
                             "Created, Active Virtual Users configured): skipped")  # fmt: skip
            return
        record = LoadRecord(
            tool="hammerdb",
            step_index=len(self.records),
            source_line=number,
            load_kind="virtual users",
            load=float(load),
            throughput=float(nopm),
            throughput_unit="new orders/min",
            duration_s=self.step.duration_s,
            tool_version=self.version,
        )
        self.records.append(record)
        self.step.record = record
