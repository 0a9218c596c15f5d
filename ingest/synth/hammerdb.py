"""HammerDB writer: LoadRecords (NOPM per virtual-user count) back into the console output of a CLI autopilot
script (`hammerdbcli auto autopilot.tcl`: `foreach z { 1 2 4 8 } { puts "$z VU TEST"; vuset vu $z; vucreate;
vurun; runtimer ...; vudestroy }`, the shape HammerDB's documentation and users' scripts print): the banner, the
configuration lines, per step the virtual users created with the monitor, the monitor's rampup and timing lines,
`N Active Virtual Users configured` and `TEST RESULT : System achieved N NOPM from M <database> TPM`.
"""

from __future__ import annotations

from collections.abc import Iterable

from kneepoint.ingest.records import LoadRecord
from kneepoint.ingest.synth.load_model import AppModel, sweep

SAMPLE_FOLDER = "workloads"
VERSION = "4.12"
# TPM over NOPM in a TPROC-C run: new orders are about 45 % of the transactions, and a database counts its own
# (HammerDB's documentation shows SQL Server at about 2.3 times the NOPM).
TPM_PER_NOPM = 2.3


def write(records: Iterable[LoadRecord], *, database: str = "SQL Server", rampup_min: int = 2,
          duration_min: int = 5, note: str | None = None) -> str:  # fmt: skip
    recs = list(records)
    prefix = {"SQL Server": "mssqls", "PostgreSQL": "pg", "Oracle": "ora", "MySQL": "mysql"}.get(database, "mssqls")
    out = [f"HammerDB CLI v{VERSION}", "Copyright (C) 2003-2024 Steve Shaw", 'Type "help" for a list of commands']
    if note:
        out.append(note)
    out += [
        "SETTING CONFIGURATION",
        f"Database set to {'MSSQLServer' if prefix == 'mssqls' else database}",
        f"Changed tpcc:{prefix}_driver from test to timed for {database}",
        f"Changed tpcc:{prefix}_rampup from 2 to {rampup_min} for {database}",
        f"Changed tpcc:{prefix}_duration from 5 to {duration_min} for {database}",
        'Script loaded, Type "print script" to view',
        "SEQUENCE STARTED",
    ]
    for r in recs:
        n = int(r.load)
        out.append(f"{n} VU TEST")
        out.append("Vuser 1 created MONITOR - WAIT IDLE")
        out += [f"Vuser {k} created - WAIT IDLE" for k in range(2, n + 2)]
        out += ["Logging activated", "to /tmp/hammerdb.log", f"{n + 1} Virtual Users Created with Monitor VU"]
        out += ["Vuser 1:RUNNING", f"Vuser 1:Beginning rampup time of {rampup_min} minutes"]
        for k in range(2, n + 2):
            out += [f"Vuser {k}:RUNNING", f"Vuser {k}:Processing 10000000 transactions with output suppressed..."]
        out += [f"Vuser 1:Rampup {m} minutes complete ..." for m in range(1, rampup_min + 1)]
        out += ["Vuser 1:Rampup complete, Taking start Transaction Count.",
                f"Vuser 1:Timing test period of {duration_min} in minutes"]  # fmt: skip
        out += [f"Vuser 1:{m}  ...," for m in range(1, duration_min + 1)]
        nopm = round(r.throughput or 0.0)
        tpm = round(nopm * TPM_PER_NOPM)
        out += ["Vuser 1:Test complete, Taking end Transaction Count.", f"Vuser 1:{n} Active Virtual Users configured",
                f"Vuser 1:TEST RESULT : System achieved {nopm} NOPM from {tpm} {database} TPM"]  # fmt: skip
        out += [f"Vuser {k}:FINISHED SUCCESS" for k in range(1, n + 2)]
        out += [
            "ALL VIRTUAL USERS COMPLETE",
            "Destroying Virtual Users",
            "Virtual Users Destroyed",
            "vudestroy success",
        ]
    out.append("TEST SEQUENCE COMPLETE")
    return "\n".join(out) + "\n"


def sample_files() -> dict[str, str | bytes]:
    """A TPROC-C autopilot from 1 to 32 virtual users on the sample P10 disk's server: NOPM grows to about 16
    virtual users and levels off (the log's writes wait on the disk)."""
    app = AppModel("TPROC-C on P10", service_time_s=60 / 2400, sigma=0.03, kappa=0.0025, noise=0.01)
    records = sweep(app, "hammerdb", (1, 2, 4, 8, 12, 16, 20, 24, 32), load_kind="virtual users",
                    unit="new orders/min", per_s=1 / 60)  # fmt: skip
    note = "SYNTHETIC: written by kneepoint's ingest/synth/hammerdb.py from a model, not measured"
    return {"synthetic-p10-hammerdb-autopilot.txt": write(records, note=note)}
