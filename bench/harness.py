"""The benchmark run: corpus, measurements (median of N fresh processes each), anchors, targets, results JSON.

Every measurement is a child process (`python -m bench.worker`); the harness takes its wall time, CPU time
(user + system) and peak RSS from os.wait4, and the child reports its stage timings. A warm-up run (not
counted) comes first in each group at full size, so the page cache and dbt's partial parse are warm for every
counted run alike. The machine is described in the results, with its load average around each run: the
figures are only comparable on a machine doing nothing else.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.generate import SIZES, Corpus, generate
from bench.worker import DUCKDB_JSON_VARIANTS

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = BENCH_DIR.parent
FIOPLOT_VENV = BENCH_DIR / ".venv-fioplot"
FIOPLOT_REQUIREMENT = "fio-plot==1.1.21"  # pinned: the anchor is one version of fio-plot's loader
ROW_SIZES = {"full": [1_000_000, 10_000_000], "tiny": [20_000]}
STAGES = ("parse", "anchors", "ingest", "parallel", "rows")
TEXT_FORMATS_EXCLUDED = ("fio_json",)  # the JSON format has its own targets; every other format is text
MB = 1e6  # throughput in decimal MB/s, as the targets state it

Log = Callable[[str], None]


def log(msg: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------- children


@dataclass(slots=True)
class Run:
    wall_s: float
    cpu_s: float
    max_rss_mb: float
    load_avg_1m: float
    result: dict[str, Any]


@dataclass(slots=True)
class Group:
    """One measurement: N counted runs of the same child."""

    name: str
    runs: list[Run] = field(default_factory=list)

    def median(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "wall_s": _median([r.wall_s for r in self.runs]),
            "cpu_s": _median([r.cpu_s for r in self.runs]),
            "max_rss_mb": _median([r.max_rss_mb for r in self.runs]),
        }
        stage_keys = {k for r in self.runs for k in r.result.get("stages", {})}
        out["stages"] = {k: _median([r.result["stages"].get(k, 0.0) for r in self.runs]) for k in sorted(stage_keys)}
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "median": self.median(),
            "runs": [
                {
                    "wall_s": round(r.wall_s, 4),
                    "cpu_s": round(r.cpu_s, 4),
                    "max_rss_mb": round(r.max_rss_mb, 1),
                    "load_avg_1m": r.load_avg_1m,
                    "stages": {k: round(v, 4) for k, v in r.result.get("stages", {}).items()},
                }
                for r in self.runs
            ],
            "result": {k: v for k, v in self.runs[-1].result.items() if k != "stages"} if self.runs else {},
        }


def _rate(amount: float, seconds: float | None) -> float | None:
    return round(amount / seconds, 2) if seconds else None


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 4) if values else 0.0


def run_child(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float, int, str]:
    """Run `cmd`; (wall s, CPU s, peak RSS MB, exit code, stderr tail). The rusage is this child's own
    (with its waited-for descendants': a pool's workers count in CPU time, the largest one in RSS)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read()[-4000:].decode(errors="replace")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code, tail


class Harness:
    def __init__(self, out_dir: Path, runs: int, warmup: int, log: Log = log) -> None:
        self.out_dir = out_dir
        self.runs = runs
        self.warmup = warmup
        self.log = log
        self.groups: dict[str, Group] = {}
        self.env = dict(os.environ, KNEEPOINT_DBT_TARGET=str(out_dir / "dbt-target"), PYTHONHASHSEED="0")
        self.env["PYTHONPATH"] = str(PROJECT_ROOT)

    def worker(
        self,
        name: str,
        job: str,
        args: dict[str, Any],
        before: Callable[[], None] | None = None,
        runs: int = 0,
        warmup: int | None = None,
    ) -> Group:
        """`runs` counted runs of one worker job (after the warm-up); `before` resets state before each."""
        group = Group(name)
        warmup = self.warmup if warmup is None else warmup
        total = warmup + (runs or self.runs)
        for i in range(total):
            if before:
                before()
            args_path, result_path = self.out_dir / "worker-args.json", self.out_dir / "worker-result.json"
            args_path.write_text(json.dumps(args))
            result_path.unlink(missing_ok=True)
            load = os.getloadavg()[0]
            cmd = [sys.executable, "-m", "bench.worker", job, str(args_path), str(result_path)]
            wall, cpu, rss, code, tail = run_child(cmd, self.env)
            if code != 0:
                raise RuntimeError(f"{name}: worker {job} exited {code}:\n{tail}")
            result = json.loads(result_path.read_text())
            counted = i >= warmup
            self.log(f"{name}: {'run' if counted else 'warm-up'} {i + 1}/{total}: {wall:.2f} s, RSS {rss:.0f} MB")
            if counted:
                group.runs.append(Run(wall, cpu, rss, round(load, 2), result))
        self.groups[name] = group
        return group

    def external(self, name: str, cmd: list[str]) -> Group:
        """A child that prints its result as the last line of stdout (the fio-plot driver)."""
        group = Group(name)
        total = self.warmup + self.runs
        for i in range(total):
            load = os.getloadavg()[0]
            out_path = self.out_dir / "external-stdout.txt"
            with open(out_path, "wb") as out:
                t0 = time.perf_counter()
                proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, stdout=out, stderr=subprocess.STDOUT)
                _, status, usage = os.wait4(proc.pid, 0)
                wall = time.perf_counter() - t0
                proc.returncode = code = os.waitstatus_to_exitcode(status)
            text = out_path.read_text(errors="replace").strip()
            if code != 0 or not text:
                raise RuntimeError(f"{name}: exited {code}:\n{text[-4000:]}")
            result = json.loads(text.splitlines()[-1])
            result["stages"] = dict(result.get("stages", {}), total_s=result.get("seconds", wall))
            counted = i >= self.warmup
            self.log(f"{name}: {'run' if counted else 'warm-up'} {i + 1}/{total}: {wall:.2f} s")
            if counted:
                group.runs.append(Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, load, result))
        self.groups[name] = group
        return group


# --------------------------------------------------------------------------------------------- fio-plot


def ensure_fioplot(log: Log = log) -> tuple[Path | None, str]:
    """fio-plot in its own venv (bench/.venv-fioplot, Python 3.11), installed from PyPI when missing.
    (python path, version) or (None, why not)."""
    python = FIOPLOT_VENV / "bin" / "python"
    check = [
        str(python),
        "-c",
        "import importlib.metadata as m, fio_plot.fiolib.jsonimport; print(m.version('fio-plot'))",
    ]
    if python.exists():
        done = subprocess.run(check, capture_output=True, text=True)
        if done.returncode == 0:
            return python, done.stdout.strip()
    base = shutil.which("python3.11") or getattr(sys, "_base_executable", None) or sys.executable
    log(f"fio-plot: creating {FIOPLOT_VENV} ({base}) and installing {FIOPLOT_REQUIREMENT} from PyPI")
    try:
        subprocess.run([base, "-m", "venv", "--clear", str(FIOPLOT_VENV)], check=True, capture_output=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", FIOPLOT_REQUIREMENT],
            check=True,
            capture_output=True,
            timeout=900,
        )
        done = subprocess.run(check, capture_output=True, text=True, check=True)
    except (subprocess.SubprocessError, OSError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        detail = detail.decode(errors="replace") if isinstance(detail, bytes) else detail
        return None, f"could not install {FIOPLOT_REQUIREMENT}: {exc} {detail[-500:]}".strip()
    return python, done.stdout.strip()


# --------------------------------------------------------------------------------------------- machine


def describe_machine() -> dict[str, Any]:
    cpu = "unknown"
    mem_gib = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    versions = {}
    for pkg in ("duckdb", "dbt-core", "dbt-duckdb", "pyarrow", "polars"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    return {
        "cpu": cpu,
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "memory_gib": mem_gib,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": versions,
        "load_avg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def describe_code() -> dict[str, Any]:
    def git(*args: str) -> str | None:
        done = subprocess.run(["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else None

    status = git("status", "--porcelain")
    return {"commit": git("rev-parse", "HEAD"), "uncommitted_changes": bool(status) if status is not None else None}


# --------------------------------------------------------------------------------------------- the run


def run(
    size: str,
    out_dir: Path,
    results_dir: Path,
    runs: int,
    warmup: int,
    stages: tuple[str, ...] = STAGES,
    fioplot: bool = True,
    row_sizes: list[int] | None = None,
    log: Log = log,
) -> Path:
    """The whole benchmark at `size`; returns the results file."""
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "kneepoint_bench": 1,
        "size": size,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "runs_per_measurement": runs,
        "warmup_runs": warmup,
        "machine": describe_machine(),
        "code": describe_code(),
    }
    t0 = time.perf_counter()
    corpus = generate(out_dir / "corpus", SIZES[size], log=lambda m: log(m))
    results["generate_s"] = round(time.perf_counter() - t0, 2)
    results["corpus"] = {
        f: {"files": s.files, "bytes": s.bytes, "records_written": s.records_written, "skipped": s.skipped}
        for f, s in corpus.formats.items()
    }
    h = Harness(out_dir, runs, warmup, log)
    notes: list[str] = []
    if "parse" in stages:
        _parse(h, corpus)
    if "anchors" in stages and corpus.formats["fio_json"].files:
        notes += _anchors(h, corpus, fioplot)
    if "ingest" in stages:
        _ingest(h, corpus, out_dir)
    if "parallel" in stages and corpus.formats["fio_json"].files:
        _parallel(h, corpus, out_dir)
    if "rows" in stages:
        _rows(h, out_dir, row_sizes or ROW_SIZES[size])
    results["measurements"] = {name: g.to_json() for name, g in h.groups.items()}
    results["summary"] = summarize(results)
    results["targets"] = targets(results)
    results["notes"] = notes
    results["machine"]["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    results["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"{size}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    path.write_text(json.dumps(results, indent=1) + "\n")
    log(f"results: {path}")
    return path


def _paths(corpus: Corpus, fmt: str) -> list[str]:
    return [str(p) for p in corpus.paths(fmt)]


def _parse(h: Harness, corpus: Corpus) -> None:
    for fmt in corpus.ready():
        h.worker(f"parse.{fmt}", "parse", {"format": fmt, "paths": _paths(corpus, fmt)})


def _fio_dirs(corpus: Corpus) -> list[str]:
    root = corpus.root / "fio_json"
    return sorted(str(p) for p in root.glob("*/*") if p.is_dir())


def _anchors(h: Harness, corpus: Corpus, fioplot: bool) -> list[str]:
    notes = []
    h.worker("anchor.json_floor", "json_floor", {"paths": _paths(corpus, "fio_json")})
    glob = str(corpus.root / "fio_json" / "**" / "*.json")
    for variant in DUCKDB_JSON_VARIANTS:
        args = {"glob": glob, "variant": variant}
        # `auto` runs out of memory at full size after ~25 s: once is enough to say so.
        once = {"runs": 1, "warmup": 0} if variant == "auto" else {}
        group = h.worker(f"anchor.duckdb_{variant}", "duckdb_read_json", args, **once)
        if "error" in group.runs[-1].result:
            notes.append(f"DuckDB {DUCKDB_JSON_VARIANTS[variant]} failed: {group.runs[-1].result['error']}")
    if not fioplot:
        return ["fio-plot anchor skipped (--no-fioplot)"]
    python, version = ensure_fioplot(h.log)
    if python is None:
        return [f"fio-plot anchor skipped: {version}"]
    group = h.external("anchor.fioplot", [str(python), str(BENCH_DIR / "fioplot_driver.py"), *_fio_dirs(corpus)])
    for r in group.runs:
        r.result["fio_plot_version"] = version
    return notes


def _fresh_db(path: Path) -> Callable[[], None]:
    def reset() -> None:
        for p in (path, Path(f"{path}.wal")):
            p.unlink(missing_ok=True)

    return reset


def _groups(corpus: Corpus, formats: list[str]) -> list[dict[str, str]]:
    return [
        {"path": str(corpus.root / g.path), "disk": g.disk, "host": g.host}
        for f in formats
        for g in corpus.formats[f].groups
    ]


def _ingest(h: Harness, corpus: Corpus, out_dir: Path) -> None:
    db = out_dir / "ingest.duckdb"
    if corpus.formats["fio_json"].files:
        args = {"db": str(db), "groups": _groups(corpus, ["fio_json"])}
        h.worker("ingest.fio_json", "ingest", args, before=_fresh_db(db))
    ready = corpus.ready()
    if len(ready) > 1:
        h.worker("ingest.all", "ingest", {"db": str(db), "groups": _groups(corpus, ready)}, before=_fresh_db(db))


def _parallel(h: Harness, corpus: Corpus, out_dir: Path) -> None:
    db = out_dir / "ingest.duckdb"
    args = {"db": str(db), "groups": _groups(corpus, ["fio_json"]), "workers": 2}
    h.worker("parallel.fio_json", "ingest_parallel", args, before=_fresh_db(db))


def _rows(h: Harness, out_dir: Path, sizes: list[int]) -> None:
    for n in sizes:
        db = out_dir / f"rows-{n}.duckdb"
        label = _rows_label(n)
        h.worker(f"rows.{label}.make", "make_rows", {"db": str(db), "rows": n}, runs=1)
        h.worker(f"rows.{label}.build", "build", {"db": str(db)})
        chain = ["int_saturation_points", "mart_usl_fits", "mart_saturation_points"]
        h.worker(f"rows.{label}.saturation", "build", {"db": str(db), "select": chain, "command": "run"})
        h.worker(f"rows.{label}.curve", "curve", {"db": str(db), "repeat": 7})


def _rows_label(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k" if n % 1000 == 0 else str(n)


# --------------------------------------------------------------------------------------------- summary


def summarize(results: dict[str, Any]) -> dict[str, Any]:
    m = results["measurements"]
    out: dict[str, Any] = {"parse": {}, "ingest": {}, "rows": {}}
    for name, g in m.items():
        med = g["median"]
        kind, _, rest = name.partition(".")
        if kind == "parse":
            parse_s = med["stages"]["parse_s"]
            files, nbytes = g["result"]["files"], g["result"]["bytes"]
            out["parse"][rest] = {
                "files": files,
                "mb": round(nbytes / MB, 2),
                "parse_s": parse_s,
                "read_s": med["stages"]["read_s"],
                "files_per_s": round(files / parse_s, 1) if parse_s else None,
                "mb_per_s": round(nbytes / MB / parse_s, 2) if parse_s else None,
                "known_format_mb_per_s": _rate(nbytes / MB, med["stages"].get("parse_known_format_s")),
                "detect_all_mb_per_s": _rate(nbytes / MB, med["stages"].get("detect_all_s")),
                "records": g["result"]["records"],
                "errors": g["result"]["errors"],
                "wrong_format": g["result"]["wrong_format"],
            }
        elif kind in ("ingest", "parallel"):
            files = sum(g["result"]["outcomes"].values())
            out["ingest"][name] = {
                "files": files,
                "outcomes": g["result"]["outcomes"],
                "wall_s": med["wall_s"],
                "cpu_s": med["cpu_s"],
                "max_rss_mb": med["max_rss_mb"],
                "stages": med["stages"],
                "peak_rss_mb_before_build": g["result"].get("peak_rss_mb_before_build"),
                "files_per_s": round(files / med["wall_s"], 1) if med["wall_s"] else None,
            }
        elif kind == "rows":
            label, _, what = rest.partition(".")
            entry = out["rows"].setdefault(label, {})
            if what == "make":
                entry["made"] = g["result"]["made"]
            elif what == "curve":
                # Per process: the first (cold) call, and the median of the later (warm) ones; medians over runs.
                st = med["stages"]
                entry["curve"] = {
                    "fact_rows": g["result"]["fact_rows"],
                    "points_one_disk": g["result"]["points_one_disk"],
                    "disks": g["result"]["disks"],
                    **{k: round(v, 2) for k, v in st.items()},
                }
            else:
                entry[what] = {"wall_s": med["wall_s"], "cpu_s": med["cpu_s"], "max_rss_mb": med["max_rss_mb"]}
                nodes = g["result"].get("build", {}).get("nodes", {})
                entry[what]["slowest_nodes_s"] = dict(sorted(nodes.items(), key=lambda kv: -kv[1])[:6])
    out["anchors"] = _anchor_summary(m)
    return out


def _anchor_summary(m: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    parse = m.get("parse.fio_json")
    if parse:
        st = parse["median"]["stages"]
        out["kneepoint_read_parse_s"] = round(st["read_s"] + st["parse_s"], 4)
    floor = m.get("anchor.json_floor")
    if floor:
        st = floor["median"]["stages"]
        out["json_loads_read_loads_s"] = round(st["read_s"] + st["loads_s"], 4)
    for variant in DUCKDB_JSON_VARIANTS:
        duck = m.get(f"anchor.duckdb_{variant}")
        if duck:
            key = f"duckdb_{variant}_s"
            out[key] = None if "error" in duck["result"] else duck["median"]["stages"]["read_json_s"]
            out[f"duckdb_{variant}"] = {k: v for k, v in duck["result"].items() if k != "build"}
    fp = m.get("anchor.fioplot")
    if fp:
        out["fioplot_s"] = fp["median"]["stages"]["total_s"]
        out["fioplot_stages_s"] = {k: v for k, v in fp["median"]["stages"].items() if k != "total_s"}
        out["fioplot_version"] = fp["result"].get("fio_plot_version")
        out["fioplot_rows"] = fp["result"].get("rows")
    if "kneepoint_read_parse_s" in out and "fioplot_s" in out:
        out["fioplot_over_kneepoint"] = round(out["fioplot_s"] / out["kneepoint_read_parse_s"], 2)
    if "kneepoint_read_parse_s" in out and "json_loads_read_loads_s" in out:
        out["kneepoint_over_json_loads"] = round(out["kneepoint_read_parse_s"] / out["json_loads_read_loads_s"], 2)
    return out


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's targets against the medians. At any size but full they are listed, not judged."""
    s = results["summary"]
    full = results["size"] == "full"
    out: list[dict[str, Any]] = []

    def add(name: str, goal: str, measured: Any, met: bool | None, note: str = "") -> None:
        out.append({"target": name, "goal": goal, "measured": measured, "met": met if full else None, "note": note})

    a = s.get("anchors", {})
    if "fioplot_over_kneepoint" in a:
        add(
            "fio parse vs fio-plot's JSON import",
            ">= 3x faster",
            f"{a['fioplot_over_kneepoint']}x",
            a["fioplot_over_kneepoint"] >= 3,
        )
    if "kneepoint_over_json_loads" in a:
        add(
            "fio parse vs bare json.loads loop",
            "<= 2x its time",
            f"{a['kneepoint_over_json_loads']}x",
            a["kneepoint_over_json_loads"] <= 2,
        )
    for fmt, p in sorted(s["parse"].items()):
        if fmt not in TEXT_FORMATS_EXCLUDED and p["mb_per_s"] is not None:
            add(f"{fmt} parse throughput (1 core)", ">= 50 MB/s", f"{p['mb_per_s']} MB/s", p["mb_per_s"] >= 50)
    ing = s["ingest"].get("ingest.fio_json")
    if ing:
        add(
            f"{ing['files']} fio files end to end (ingest + dbt build)",
            "< 60 s on 2 cores",
            f"{ing['wall_s']} s",
            ing["wall_s"] < 60,
        )
        add(
            f"peak RSS, {ing['files']} fio files end to end",
            "< 1 GB",
            f"{ing['max_rss_mb']} MB",
            ing["max_rss_mb"] < 1024,
        )
    one_m = s["rows"].get("1M", {})
    if "build" in one_m:
        add("dbt build at 1M fact rows", "< 30 s", f"{one_m['build']['wall_s']} s", one_m["build"]["wall_s"] < 30)
    if "curve" in one_m:
        worst = max(one_m["curve"]["one_disk_ms"], one_m["curve"]["five_disks_ms"])
        add("curve query at 1M fact rows (warm, 1 and 5 disks)", "< 200 ms", f"{worst} ms", worst < 200)
        cold = one_m["curve"]["one_disk_cold_ms"]
        add("curve query at 1M fact rows, first call of a process", "< 200 ms", f"{cold} ms", cold < 200)
    return out
