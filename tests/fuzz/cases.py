"""The fuzz corpus: bad inputs for every `qbo` command, each with the files it needs.

A case is a ``Case``: its command line and what its empty folder holds before the command
runs (files, folders, FIFOs, or a copy of a small finished run folder, optionally tampered
with). Every case is bad input: the contract is exit 2, one stderr line, no traceback, no
hang, no file created, changed or deleted.

``REGRESSIONS`` are the failures listed in issue 12 (each tagged ``issue12``); ``generated()``
adds cases built from lists of bad values per option, written for this harness, not tuned to
the issue's list.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from typing import Callable

GOOD_QASM = b'OPENQASM 3.0;\ninclude "stdgates.inc";\nqubit[2] q;\nry(0.6) q[0];\ncx q[0], q[1];\n'
RUN = "R"  # where a copy of the prepared finished run folder goes


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]
    files: tuple[tuple[str, bytes], ...] = ()
    folders: tuple[str, ...] = ()
    fifos: tuple[str, ...] = ()
    run: str | None = None  # tamper op applied to a copy of a small run in R/ ("" = untouched; needs_journals)
    tags: tuple[str, ...] = field(default=())


def case(name: str, *argv: str, files: dict[str, bytes | str] | None = None, folders=(), fifos=(),
         run: str | None = None, tags=()) -> Case:
    data = tuple((k, v.encode() if isinstance(v, str) else v) for k, v in (files or {}).items())
    return Case(name, tuple(argv), data, tuple(folders), tuple(fifos), run, tuple(tags))


def _qasm(body: str, qubits: int = 1) -> bytes:
    return f'OPENQASM 3.0;\ninclude "stdgates.inc";\nqubit[{qubits}] q;\n{body}\n'.encode()


def _nested(depth: int) -> str:
    return "x = " + "[" * depth + "1" + "]" * depth + "\n"


# ------------------------------------------------------------------ issue 12 regressions

REGRESSIONS: list[Case] = [
    case("gaussian qubits=inf", "estimate", "--oracle", "gaussian:mean=0.5,std=0.1,qubits=inf"),
    case("qasm objective=inf", "estimate", "--oracle", "qasm:a.qasm,objective=inf", files={"a.qasm": GOOD_QASM}),
    case("epsilon 1e-320", "estimate", "--epsilon", "1e-320"),
    case("30-qubit qasm on exact", "estimate", "--oracle", "qasm:w.qasm", files={"w.qasm": _qasm("h q;", 30)}),
    case("qasm with a loop", "estimate", "--oracle", "qasm:l.qasm", files={"l.qasm": _qasm("for int i in [0:3] { h q[0]; }")}),
    case("qasm input float", "estimate", "--oracle", "qasm:p.qasm", files={"p.qasm": _qasm("input float t;\nrx(t) q[0];")}),
    case("-o empty", "circuits", "export", "--oracle", "bernoulli:0.3", "-o", ""),
    case("--out is a file", "run", "--budget", "100", "--trials", "1", "--out", "f", files={"f": "x"}),
    case("--out below a file", "run", "--budget", "100", "--trials", "1", "--out", "f/sub", files={"f": "x"}),
    case("5000-char calibration", "calibrations", "show", "c" * 5000),
    case("toml target = 5", "run", "c.toml", files={"c.toml": "target = 5\n"}),
    case("toml problem = list", "run", "c.toml", files={"c.toml": 'problem = ["a", "b"]\n'}),
    case("toml problem_options = 5", "run", "c.toml", files={"c.toml": "problem_options = 5\n"}),
    case("toml algorithm_options q-gp-ucb = 5", "run", "c.toml", files={"c.toml": "[algorithm_options]\nq-gp-ucb = 5\n"}),
    case("deeply nested toml", "run", "c.toml", files={"c.toml": _nested(3000)}),
    *[case(f"plot stages {label}", "plot", RUN, run=f"stages:{label}") for label in ("[]", "null", "strings")],
    case("epsilon 1e-9 iae", "estimate", "--epsilon", "1e-9", "--method", "iae"),
    case("epsilon 1e-12 auto", "estimate", "--epsilon", "1e-12", "--method", "auto"),
    case("export power 1e8", "circuits", "export", "--oracle", "bernoulli:0.3", "--power", "100000000", "-o", "x.qasm"),
    case("depth kmax 1e8", "calibrations", "depth", "fake_torino", "--kmax", "100000000"),
    case("20 MB qasm", "estimate", "--oracle", "qasm:big.qasm", files={"big.qasm": GOOD_QASM + b"// " + b"x" * 20_000_000 + b"\n"}),
    case("budget 1e15 toml", "run", "c.toml", files={"c.toml": "budget = 1e15\n"}),
    case("budget above int64 toml", "run", "c.toml", files={"c.toml": "budget = 99999999999999999999\n"}),
    case("trials 1e9 toml", "run", "c.toml", files={"c.toml": "trials = 1e9\n"}),
    case("trials 1000000000 toml", "run", "c.toml", files={"c.toml": "trials = 1000000000\n"}),
    case("export to a fifo", "circuits", "export", "--oracle", "bernoulli:0.3", "-o", "pipe", fifos=["pipe"]),
    case("garbled middle journal line", "run", "--resume", RUN, run="garble-middle"),
    case("deleted middle journal line", "run", "--resume", RUN, run="delete-middle"),
    case("duplicated journal line", "run", "--resume", RUN, run="duplicate"),
    case("swapped journal lines", "run", "--resume", RUN, run="swap"),
    case("journal only done", "run", "--resume", RUN, run="only-done"),
    case("edited budget", "run", "--resume", RUN, run="config:budget"),
    case("edited seed", "run", "--resume", RUN, run="config:seed"),
    case("empty config.toml", "run", "--resume", RUN, run="config:empty"),
    case("objective=0.5", "estimate", "--oracle", "qasm:a.qasm,objective=0.5", files={"a.qasm": GOOD_QASM}),
    case("target aer:", "estimate", "--target", "aer:"),
    *[case(f"depth fraction {v}", "calibrations", "depth", "fake_torino", "--fraction", v) for v in ("nan", "-1", "inf")],
    *[case(f"backends timeout {v}", "backends", "--timeout", v) for v in ("-1", "nan")],
    case("jobs resume junk jobs.jsonl", "jobs", "resume", "J", files={"J/jobs.jsonl": "junk\n{not json\n"}),
    case("plot empty journal", "plot", RUN, run="stages:empty"),
    case("gaussian 1e308 warnings", "estimate", "--oracle", "gaussian:mean=1e308,std=1e308"),
    case("qasm /etc/passwd", "estimate", "--oracle", "qasm:/etc/passwd"),
    case("resume of an empty folder", "run", "--resume", "E", folders=["E"]),
    case("resume of a start-up leftover", "run", "--resume", RUN, run="no-marker"),
]
REGRESSIONS = [Case(c.name, c.argv, c.files, c.folders, c.fifos, c.run, c.tags + ("issue12",)) for c in REGRESSIONS]


# ------------------------------------------------------------------ generated

BAD_FLOATS = ("nan", "inf", "-inf", "-1", "0", "1e400", "-1e-400", "abc", "", "1e-320", "0x10", "1,5", "∞", "1e-7", "0.51", "7")
BAD_INTS = ("-1", "1.5", "1e3", "abc", "", "99999999999999999999999", "nan", "0x10", " ", "--")
BAD_TEXT = ("", " ", "../../etc", "x" * 5000, "name\x00null", "名前", "a:b:c", "%s%n", "$(id)", "'; drop")


def _estimate() -> list[Case]:
    out = []
    oracles = [
        "bernoulli:", "bernoulli:x", "bernoulli:-0.1", "bernoulli:1.0001", "bernoulli:nan", "bernoulli:inf", "bernoulli:0.3,0.4",
        "bernoulli", "gauss:mean=0", ":0.3", "", "gaussian:", "gaussian:mean=0.5", "gaussian:std=0.1", "gaussian:mean=0.5,std=0",
        "gaussian:mean=0.5,std=-1", "gaussian:mean=0.5,std=nan", "gaussian:mean=nan,std=0.1", "gaussian:mean=0.5,std=0.1,qubits=0",
        "gaussian:mean=0.5,std=0.1,qubits=13", "gaussian:mean=0.5,std=0.1,qubits=2.5", "gaussian:mean=0.5,std=0.1,qubits=1e9",
        "gaussian:mean=0.5,std=0.1,lo=1,hi=0", "gaussian:mean=0.5,std=0.1,lo=2,hi=3", "gaussian:mean=0.5,std=0.1,hi=1",
        "gaussian:mean=0.5,std=0.1,foo=1", "gaussian:mean=0.5,std=0.1,=", "gaussian:mean=0.5;std=0.1", "gaussian:mean=1e308,std=1e-308",
        "discrete:", "discrete:values=0.1|0.5", "discrete:probs=1", "discrete:values=0.1|0.5,probs=0.5", "discrete:values=,probs=",
        "discrete:values=a|b,probs=0.5|0.5", "discrete:values=0.1|0.5,probs=0.7|0.7", "discrete:values=0.1|0.5,probs=-0.5|1.5",
        "discrete:values=nan|0.5,probs=0.5|0.5", "discrete:values=0.1|inf,probs=0.5|0.5", "discrete:values=0.1|0.5,probs=0.5|0.5|0",
        "qasm:", "qasm:missing.qasm", "qasm:/", "qasm:/dev/null", "qasm:/proc/self/mem", "qasm:.", "qasm:a.qasm,objective=2",
        "qasm:a.qasm,objective=-1", "qasm:a.qasm,objective=x", "qasm:a.qasm,objective=1e400", "qasm:a.qasm,foo=1", "qasm:a.qasm,objective",
    ]
    for o in oracles:
        out.append(case(f"estimate oracle {o[:40]!r}", "estimate", "--oracle", o, files={"a.qasm": GOOD_QASM}))
    for v in BAD_FLOATS:
        out.append(case(f"estimate epsilon {v!r}", "estimate", "--epsilon", v))
    for v in [f for f in BAD_FLOATS if f != "1e-7"] + ["1e-12", "0.5000001", "1"]:
        out.append(case(f"estimate alpha {v!r}", "estimate", "--alpha", v))
    for v in ("magic", "", "IAE", "mle", "iae ", "mc,iae"):
        out.append(case(f"estimate method {v!r}", "estimate", "--method", v))
    targets = ("mars", "", "exact:", "exact:x", "aer:", "aer:no_such", "aer:../../etc/passwd", "aer:" + "x" * 3000, "fake:",
               "fake:NoSuchBackend", "ibm:", "gcp:x", ":", "EXACT", "aer: fake_torino")
    for t in targets:
        out.append(case(f"estimate target {t[:30]!r}", "estimate", "--target", t))
    for v in BAD_INTS + ("0", "100000000000"):
        out.append(case(f"estimate shots {v!r}", "estimate", "--shots", v))
    for v in ("-1", "x", "1.5", "99999999999999999999999"):
        out.append(case(f"estimate seed {v!r}", "estimate", "--seed", v))
    for flag in ("--bogus", "--json=3", "--oracle"):
        out.append(case(f"estimate flag {flag}", "estimate", flag))
    out.append(case("estimate positional", "estimate", "extra"))
    return out


def _qasm_files() -> list[Case]:
    bodies = {
        "empty": b"",
        "binary": bytes(range(256)) * 4,
        "not utf8": b"OPENQASM 3.0;\n\xff\xfe qubit q;\n",
        "no qubits": b'OPENQASM 3.0;\ninclude "stdgates.inc";\n',
        "syntax": _qasm("h q[0]"),
        "unknown gate": _qasm("frob q[0];"),
        "out of range qubit": _qasm("h q[5];"),
        "while": _qasm("bit b;\nwhile (b) { h q[0]; b = measure q[0]; }"),
        "if": _qasm("bit b;\nb = measure q[0];\nif (b) { x q[0]; }"),
        "input angle": _qasm("input angle a;\nrz(a) q[0];"),
        "31 qubits": _qasm("h q;", 31),
        "100 qubits": _qasm("h q;", 100),
        "28 qubits exact": _qasm("h q;", 28),
        "14 qubits exact": _qasm("h q;", 14),
        "oversize": GOOD_QASM + b"//" + b"y" * 1_100_000,
        "openqasm 2": b'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[1];\nh q[0];\n',
        "include missing": b'OPENQASM 3.0;\ninclude "nope.inc";\nqubit q;\n',
        "nested parens": _qasm("rx(" + "(" * 3000 + "1" + ")" * 3000 + ") q[0];"),
        "reset mid": _qasm("h q[0];\nreset q[0];\nh q[0];"),
        "mid measure": _qasm("bit c;\nc = measure q[0];\nh q[0];"),
        "json": b'{"qasm": true}',
        "version 9 garbage": b"OPENQASM 9.0;\nqubit q;\nfrob q;\n",
    }
    out = []
    for label, body in bodies.items():
        out.append(case(f"qasm file {label}", "estimate", "--oracle", "qasm:f.qasm", files={"f.qasm": body}))
        if label in ("31 qubits", "while", "input angle", "oversize", "syntax", "100 qubits"):
            out.append(case(f"export qasm file {label}", "circuits", "export", "--oracle", "qasm:f.qasm", "-o", "o.qasm",
                            files={"f.qasm": body}))
    out.append(case("qasm fifo", "estimate", "--oracle", "qasm:pipe", fifos=["pipe"]))
    out.append(case("qasm folder", "estimate", "--oracle", "qasm:d", folders=["d"]))
    out.append(case("28-qubit qasm on aer", "estimate", "--oracle", "qasm:f.qasm", "--target", "aer",
                    files={"f.qasm": _qasm("h q;", 28)}))
    return out


def _export() -> list[Case]:
    out = []
    outputs = {"fifo": ("pipe", {}, ["pipe"], []), "folder": ("d", {}, [], ["d"]), "below file": ("f/x.qasm", {"f": "x"}, [], []),
               "deep below file": ("f/a/b.qasm", {"f": "x"}, [], []), "existing folder slash": ("d/", {}, [], ["d"]),
               "root": ("/", {}, [], []), "dot": (".", {}, [], []), "dotdot": ("..", {}, [], []),
               "dev null": ("/dev/null", {}, [], []), "dev full": ("/dev/full", {}, [], []), "proc": ("/proc/self/status", {}, [], []),
               "space": (" ", {}, [], [])}
    for label, (path, files, fifos, folders) in outputs.items():
        out.append(case(f"export -o {label}", "circuits", "export", "--oracle", "bernoulli:0.3", "-o", path,
                        files=files, fifos=fifos, folders=folders))
    for v in BAD_INTS + ("4097", "100000"):
        out.append(case(f"export power {v!r}", "circuits", "export", "--oracle", "bernoulli:0.3", "--power", v, "-o", "x.qasm"))
    out.append(case("export big oracle power", "circuits", "export", "--oracle", "gaussian:mean=0.5,std=0.1,qubits=12",
                    "--power", "64", "-o", "x.qasm"))
    for o in ("bernoulli:2", "gaussian:mean=0.5", "qasm:none.qasm", "nope:1"):
        out.append(case(f"export oracle {o}", "circuits", "export", "--oracle", o, "-o", "x.qasm"))
    out.append(case("export no -o", "circuits", "export", "--oracle", "bernoulli:0.3"))
    out.append(case("circuits unknown", "circuits", "frobnicate"))
    return out


def _calibrations() -> list[Case]:
    out = []
    for v in BAD_TEXT + ("no_such_device", "/etc/passwd", "d", "bad.json", "arr.json", "/dev/null"):
        files = {"bad.json": "{not json", "arr.json": "[1, 2]"}
        out.append(case(f"calibrations show {v[:30]!r}", "calibrations", "show", v, files=files, folders=["d"]))
        out.append(case(f"calibrations depth name {v[:30]!r}", "calibrations", "depth", v, files=files, folders=["d"]))
    for v in BAD_INTS + ("1025", "100000"):
        out.append(case(f"depth kmax {v!r}", "calibrations", "depth", "fake_torino", "--kmax", v))
    out.append(case("depth kmax too much work", "calibrations", "depth", "fake_torino", "--kmax", "400"))
    for v in BAD_FLOATS + ("1.5", "0.0"):
        if v not in ("1e-7", "0.51", "1e-320"):  # valid fractions
            out.append(case(f"depth fraction {v!r}", "calibrations", "depth", "fake_torino", "--fraction", v))
        out.append(case(f"depth epsilon {v!r}", "calibrations", "depth", "fake_torino", "--epsilon", v))
    for o in ("bernoulli:7", "x", "qasm:nothing.qasm"):
        out.append(case(f"depth oracle {o}", "calibrations", "depth", "fake_torino", "--oracle", o))
    for v in ("FakeNope", "", "x" * 3000, "../x", "Fake", "fake_nope"):
        out.append(case(f"calibrations export {v[:30]!r}", "calibrations", "export", "--from-fake", v))
    for v in ("", "x", "ibm:", "fake:", "gcp:a", "fake:NoSuch", "ibm:" + "x" * 3000, ":"):
        out.append(case(f"calibrations pull {v[:30]!r}", "calibrations", "pull", "--backend", v))
    out.append(case("calibrations pull to fifo", "calibrations", "pull", "--backend", "fake:NoSuch", "--out", "pipe", fifos=["pipe"]))
    out.append(case("calibrations unknown verb", "calibrations", "frob"))
    out.append(case("calibrations show no name", "calibrations", "show"))
    return out


def _backends() -> list[Case]:
    return [case(f"backends timeout {v!r}", "backends", "--timeout", v) for v in BAD_FLOATS if v not in ("1e-7", "0.51", "7", "1e-320")] + [
        case("backends timeout huge", "backends", "--timeout", "1e308"), case("backends extra", "backends", "x")]


CONFIG_FIELDS = {
    "problem": ('5', '["a"]', '"nonsense"', '""', "true", '"' + "p" * 300 + '"', "{a = 1}"),
    "algorithms": ('"q-gp-ucb"', "[]", "[1, 2]", '["magic"]', '[["q-gp-ucb"]]', "5", '["q-gp-ucb", 3]'),
    "budget": ("0", "-5", "1.5", '"100"', "1e15", "99999999999999999999", "1000000000001", "true", "[100]", "nan", "inf"),
    "trials": ("0", "-1", "1e9", "100001", '"2"', "2.0", "false", "inf"),
    "target": ("5", '"mars"', '"aer:"', '"aer:nope"', '""', "[]", '"fake:"', '"ibm:"'),
    "seed": ("-1", "1.5", '"0"', "18446744073709551616", "nan", "true"),
    "estimator": ('"magic"', "1", "[]", '""'),
    "accounting": ('"creative"', "0", '""'),
    "leftover": ('"keep"', "false"),
    "mitigation": ('"zne"', '"magic"', "1"),
    "weights": ('"both"', "1.0"),
    "problem_options": ("5", '"x"', "[1]", "{std = nan}", "{std = -1}", "{nope = 1}", "{std = {a = 1}}", "{seed = -3}",
                        "{std = 1e400}", "{arms = 100000000}"),
    "algorithm_options": ("5", "{q-gp-ucb = 5}", "{gp-ucb = {lengthscale = -1}}", "{magic = {}}", '{q-gp-ucb = {frob = 1}}',
                          "{gp-ucb = {lengthscale = nan}}", '{gp-ucb = {lengthscale = "x"}}', "{q-gp-ucb = {alpha = 2}}"),
}


def _configs() -> list[Case]:
    out = []
    for key, values in CONFIG_FIELDS.items():
        for v in values:
            out.append(case(f"config {key} = {v[:30]}", "run", "c.toml", "--budget", "100", "--trials", "1",
                            files={"c.toml": f"{key} = {v}\n"}) if key not in ("budget", "trials")
                       else case(f"config {key} = {v[:30]}", "run", "c.toml", files={"c.toml": f"{key} = {v}\n"}))
    raw = {
        "syntax": "budget = \n", "dup key": "budget = 1\nbudget = 2\n", "unknown key": "frob = 1\n", "binary": b"\x00\x01\x02",
        "not utf8": b"problem = \"\xff\"\n", "bom json": '{"budget": 1}', "huge": "# " + "x" * 1_100_000 + "\n",
        "nested 5": _nested(5), "nested 50": _nested(50), "table depth": "[a.b.c.d.e.f]\nx = 1\n", "empty": "", "comment only": "# hi\n",
        "inline huge list": "algorithms = [" + ",".join(['"gp-ucb"'] * 100) + "]\n",
        "mitigation without device": 'mitigation = "rem"\n', "mitigation mc": 'mitigation = "rem"\nestimator = "mc"\ntarget = "aer:fake_torino"\n',
        "tv budget": 'problem = "tv-synthetic"\nalgorithms = ["magic"]\n', "predicted work": "budget = 1000000000\ntrials = 100\n",
    }
    for label, text in raw.items():
        out.append(case(f"config file {label}", "run", "c.toml", files={"c.toml": text}))
    out.append(case("config is a folder", "run", "d", folders=["d"]))
    out.append(case("config is a fifo", "run", "pipe", fifos=["pipe"]))
    out.append(case("config missing", "run", "missing.toml"))
    out.append(case("config /dev/null", "run", "/dev/null"))
    return out


def _run_options() -> list[Case]:
    out = []
    opts = {
        "--budget": BAD_INTS + ("0", "1000000000001"), "--trials": BAD_INTS + ("0", "100001"),
        "--problem": BAD_TEXT + ("nonsense", "synthetic-bernoulli,linear"),
        "--algorithms": ("magic", ",", "q-gp-ucb,magic", "ctv", "x" * 500, "q-gp-ucb,q-gp-ucb,magic", " "),
        "--target": ("mars", "aer:", "aer:nope", "fake:", "ibm:", "exact:x"), "--seed": ("-1", "x", "1.5"),
        "--estimator": ("magic", ""), "--accounting": ("creative", ""), "--lengthscale": ("fixed:", "fixed:-1", "fixed:nan", "lb:x", "magic", "fixed:inf"),
        "--mitigation": ("magic", "rem", "zne+rem"),
    }
    for flag, values in opts.items():
        for v in values:
            extra = () if flag in ("--budget", "--trials") else ("--budget", "100", "--trials", "1")
            out.append(case(f"run {flag} {v[:30]!r}", "run", flag, v, *extra))
    out.append(case("run predicted work", "run", "--budget", "1000000000", "--trials", "100"))
    out.append(case("run predicted work 2", "run", "--budget", "100000000", "--trials", "1000", "--algorithms", "gp-ucb"))
    for label, setup in {"nonempty folder": ({"o/notes": "x"}, []), "file": ({"o": "x"}, []), "below file": ({"f": "x"}, [])}.items():
        path = "f/o" if label == "below file" else "o"
        out.append(case(f"run --out {label}", "run", "--budget", "100", "--trials", "1", "--out", path, files=setup[0]))
    out.append(case("run --out fifo", "run", "--budget", "100", "--trials", "1", "--out", "pipe", fifos=["pipe"]))
    out.append(case("run --out other experiment", "run", "--budget", "101", "--trials", "1", "--out", RUN, run=""))
    for label, setup in {"missing": ({}, []), "file": ({"x": "1"}, []), "empty folder": ({}, ["x"]),
                         "junk folder": ({"x/config.toml": "budget = 5\n"}, []), "units only": ({"x/units/a.jsonl": "{}\n"}, [])}.items():
        out.append(case(f"run --resume {label}", "run", "--resume", "x", files=setup[0], folders=setup[1]))
    out.append(case("run --resume fifo", "run", "--resume", "pipe", fifos=["pipe"]))
    out.append(case("run unknown flag", "run", "--frob"))
    out.append(case("run two configs", "run", "a.toml", "b.toml"))
    return out


TAMPERS = (
    "garble-middle", "delete-middle", "duplicate", "swap", "only-done", "config:budget", "config:seed", "config:empty",
    "config:garbage", "config:append", "marker:delete", "marker:garbage", "marker:other", "no-marker", "journal:header",
    "journal:other-unit", "journal:edit-value", "journal:extra-after-done", "journal:empty-middle", "journal:array-line",
    "journal:drop-done-count", "journal:bad-seq-type", "journal:nul-bytes", "journal:binary", "journal:unit-is-folder",
    "units:is-file", "config:is-folder", "finished:edit-stage", "finished:delete-stage", "finished:drop-unit-end",
    "finished:no-stages", "finished:marker-garbage",
)
JOURNAL_TAMPERS = {"garble-middle", "delete-middle", "duplicate", "swap", "only-done", "units:is-file"}


def needs_journals(op: str | None) -> bool:
    """Tampering with journals needs a run whose units are journalled but not yet merged (a
    finished run has removed them); the other cases copy a finished run."""
    return op is not None and (op in JOURNAL_TAMPERS or op.startswith("journal:"))


def _run_folders() -> list[Case]:
    out = []
    for tamper in TAMPERS:
        out.append(case(f"resume tampered {tamper}", "run", "--resume", RUN, run=tamper))
        if tamper in ("garble-middle", "swap", "only-done", "config:budget", "no-marker", "journal:header"):
            out.append(case(f"jobs resume tampered {tamper}", "jobs", "resume", RUN, run=tamper))
    stages = ("[]", "null", "strings", "empty", "garbage", "missing-field", "nan", "negative-trial", "bool-stage", "huge-number",
              "blank-lines-only", "nested", "unknown-algorithm-type")
    for label in stages:
        out.append(case(f"plot stages {label} (generated)", "plot", RUN, run=f"stages:{label}"))
    for label, setup in {"missing": ({}, []), "file": ({"x": "1"}, []), "empty folder": ({}, ["x"]),
                         "no config": ({"x/stages.jsonl": ""}, [])}.items():
        out.append(case(f"plot {label}", "plot", "x", files=setup[0], folders=setup[1]))
    out.append(case("plot config garbage", "plot", RUN, run="config:garbage"))
    out.append(case("plot no args", "plot"))
    # qbo export: only a finished, verified run, to a file it may replace
    for tamper in ("finished:edit-stage", "finished:delete-stage", "finished:no-stages", "finished:marker-garbage",
                   "config:budget", "marker:delete", "journal:edit-value"):
        out.append(case(f"export tampered {tamper}", "export", RUN, run=tamper))
    out.append(case("export unfinished run", "export", RUN, run="journal:header"))
    for label, setup in {"missing": ({}, []), "file": ({"x": "1"}, []), "empty folder": ({}, ["x"])}.items():
        out.append(case(f"export {label}", "export", "x", files=setup[0], folders=setup[1]))
    out.append(case("export --out is a folder", "export", RUN, "--out", "d", folders=["d"], run=""))
    out.append(case("export --out below a file", "export", RUN, "--out", "f/s.parquet", files={"f": "x"}, run=""))
    out.append(case("export no args", "export"))
    return out


def _hardware() -> list[Case]:
    out = []
    good = {"c.toml": "budget = 100\ntrials = 1\n"}
    for v in ("", "x", "ibm:", "fake:", "gcp:a", "fake:NoSuch", "ibm:" + "y" * 500, "exact", "aer:fake_torino"):
        out.append(case(f"submit backend {v[:30]!r}", "submit", "c.toml", "--backend", v, files=good))
    for v in ("magic", "", "JOB"):
        out.append(case(f"submit mode {v!r}", "submit", "c.toml", "--backend", "fake:FakeBrisbane", "--mode", v, files=good))
    for v in ("0", "-1", "nan", "inf", "x"):
        out.append(case(f"submit timeout {v!r}", "submit", "c.toml", "--backend", "fake:FakeBrisbane", "--timeout", v, files=good))
    for v in ("0", "-1", "x"):
        out.append(case(f"submit attempts {v!r}", "submit", "c.toml", "--backend", "fake:FakeBrisbane", "--attempts", v, files=good))
    for label, text in {"bad toml": "budget = ", "unknown": "frob = 1\n", "bad budget": "budget = -1\n", "target 5": "target = 5\n"}.items():
        out.append(case(f"submit config {label}", "submit", "c.toml", "--backend", "fake:FakeBrisbane", files={"c.toml": text}))
    out.append(case("submit missing config", "submit", "none.toml", "--backend", "fake:FakeBrisbane"))
    out.append(case("submit out is file", "submit", "c.toml", "--backend", "fake:FakeBrisbane", "--out", "f", files=good | {"f": "x"}))
    out.append(case("submit out other experiment", "submit", "c.toml", "--backend", "fake:FakeBrisbane", "--out", RUN,
                    files=good, run=""))
    for verb in ("list", "status", "resume"):
        for label, setup in {"missing": ({}, []), "file": ({"x": "1"}, []), "empty folder": ({}, ["x"]),
                             "junk jobs": ({"x/jobs.jsonl": "junk\n[]\n"}, []), "binary jobs": ({"x/jobs.jsonl": b"\xff\x00\n\n"}, [])}.items():
            out.append(case(f"jobs {verb} {label}", "jobs", verb, "x", files=setup[0], folders=setup[1]))
    out.append(case("jobs resume bad mode", "jobs", "resume", RUN, "--mode", "magic", run=""))
    out.append(case("jobs unknown verb", "jobs", "frob"))
    out.append(case("top-level unknown command", "frobnicate"))
    out.append(case("top-level bad flag", "--frob"))
    return out


def generated() -> list[Case]:
    return _estimate() + _qasm_files() + _export() + _calibrations() + _backends() + _configs() + _run_options() \
        + _run_folders() + _hardware()


def all_cases() -> list[Case]:
    """Every case, regressions first; names and command lines are unique."""
    cases, seen = [], set()
    for c in REGRESSIONS + generated():
        key = (c.argv, c.files, c.folders, c.fifos, c.run)
        if key not in seen:
            seen.add(key)
            cases.append(c)
    return cases


# ------------------------------------------------------------------ tampering a copy of a finished run


def _lines(path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def tamper(folder, op: str) -> None:
    """Apply the named damage to the run folder ``folder`` (a copy of a finished run, or of an
    unmerged one where ``needs_journals(op)``)."""
    units = sorted((folder / "units").glob("*.jsonl"), key=lambda p: -p.stat().st_size)
    journal = units[0] if units else None
    if op == "":
        return
    if op.startswith("stages:"):
        label = op.split(":", 1)[1]
        first = json.loads(_lines(folder / "stages.jsonl")[0])
        texts = {
            "[]": "[]\n", "null": "null\n", "strings": '"a"\n"b"\n', "empty": "", "garbage": "{{{\n",
            "missing-field": json.dumps({k: v for k, v in first.items() if k != "cum_regret"}) + "\n",
            "nan": json.dumps(first | {"cum_regret": float("nan")}) + "\n", "negative-trial": json.dumps(first | {"trial": -1}) + "\n",
            "bool-stage": json.dumps(first | {"stage": True}) + "\n", "huge-number": json.dumps(first | {"cum_calls": 10**400}) + "\n",
            "blank-lines-only": "\n\n\n", "nested": json.dumps({"a": first}) + "\n",
            "unknown-algorithm-type": json.dumps(first | {"algorithm": 5}) + "\n",
        }
        (folder / "stages.jsonl").write_text(texts[label])
        return
    lines = _lines(journal) if journal is not None else []
    mutate: dict[str, Callable[[list[bytes]], list[bytes]]] = {
        "garble-middle": lambda ls: ls[:5] + [b'{"seq":5,"stage":\n'] + ls[6:],
        "delete-middle": lambda ls: ls[:5] + ls[6:],
        "duplicate": lambda ls: ls[:5] + [ls[5]] + ls[5:],
        "swap": lambda ls: ls[:5] + [ls[6], ls[5]] + ls[7:],
        "only-done": lambda ls: [b'{"done": true}\n'],
        "journal:header": lambda ls: [ls[0].replace(b'"journal":2', b'"journal":3')] + ls[1:],
        "journal:edit-value": lambda ls: ls[:5] + [ls[5].replace(b'"cum_calls":', b'"cum_calls":1')] + ls[6:],
        "journal:extra-after-done": lambda ls: ls + [ls[-1]],
        "journal:empty-middle": lambda ls: ls[:5] + [b"\n"] + ls[5:],
        "journal:array-line": lambda ls: ls[:5] + [b"[1,2]\n"] + ls[6:],
        "journal:drop-done-count": lambda ls: ls[:-1] + [ls[-1].replace(b'"stages":', b'"stages":1')],
        "journal:bad-seq-type": lambda ls: ls[:5] + [ls[5].replace(b'"seq":5', b'"seq":"5"')] + ls[6:],
        "journal:nul-bytes": lambda ls: ls[:5] + [b"\x00" * 40 + b"\n"] + ls[6:],
        "journal:binary": lambda ls: [bytes(range(256)) + b"\n"] + ls,
    }
    stages = {
        "finished:edit-stage": lambda ls: ls[:5] + [ls[5].replace(b'"cum_calls":', b'"cum_calls":1')] + ls[6:],
        "finished:delete-stage": lambda ls: ls[:5] + ls[6:],
        "finished:drop-unit-end": lambda ls: ls[:-1],
    }
    if op in mutate:
        journal.write_bytes(b"".join(mutate[op](lines)))
    elif op in stages:
        (folder / "stages.jsonl").write_bytes(b"".join(stages[op](_lines(folder / "stages.jsonl"))))
    elif op == "finished:no-stages":
        (folder / "stages.jsonl").unlink()
    elif op == "finished:marker-garbage":
        marker = json.loads((folder / "run.json").read_text())
        (folder / "run.json").write_text(json.dumps(marker | {"finished": {"stages_sha256": 5}}))
    elif op == "journal:other-unit":
        journal.write_bytes(units[-1].read_bytes())
    elif op == "journal:unit-is-folder":
        journal.unlink()
        journal.mkdir()
    elif op == "units:is-file":
        shutil.rmtree(folder / "units")  # journals, and units/.started
        (folder / "units").write_text("x")
    elif op.startswith("config:"):
        path = folder / "config.toml"
        text = path.read_text()
        kind = op.split(":", 1)[1]
        if kind == "is-folder":
            path.unlink()
            path.mkdir()
        else:
            path.write_text({"budget": text.replace("budget = ", "budget = 1"), "seed": text.replace("seed = 0", "seed = 7"),
                             "empty": "", "garbage": "[[[", "append": text + "\n# note\n"}[kind])
    elif op.startswith("marker:"):
        path = folder / "run.json"
        kind = op.split(":", 1)[1]
        if kind == "delete":
            path.unlink()
        else:
            path.write_text({"garbage": "{", "other": json.dumps({"format": 1, "config_sha256": "0" * 64})}[kind])
    elif op == "no-marker":
        (folder / "run.json").unlink()
        for p in units:
            p.unlink()
        for name in ("stages.jsonl", "summary.csv", "regret.png"):
            (folder / name).unlink(missing_ok=True)
    else:
        raise KeyError(op)
