"""Write tests/fuzz/corpus.jsonl: bad inputs every one of which qbo must refuse with one
line on stderr, exit 2 and no file written (issue 25). Deterministic: run it again and the
corpus is the same (``python -m tests.fuzz.make_corpus``).

Each case is ``{"id", "argv", "files", "setup", "damage"}``: ``files`` are written into a
fresh folder first (path -> text), ``setup`` names a prepared run folder copied to ``R``
(``finished``, ``unfinished`` or ``hardware``), and ``damage`` edits one file of it
(``{"path", "op", ...}``, applied by tests/fuzz/test_corpus.py)."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

BAD_INTS = ["-1", "0", "abc", "", "1.5", "1e3", "nan", "inf", "-0", "99999999999999999999999", "0x10", " ", "١٢"]
BAD_SEEDS = ["-1", "abc", "", "1.5", "nan", "99999999999999999999999", "1e400"]
BAD_NAMES = ["", " ", "nope", "q-gp-ucb;rm", "x" * 5000, "fake:", "ibm:", "aer:", "aer:nope", "fake:NoSuchBackend",
             "exact:1", "../../etc/passwd", "\u0000", "EXACT", "aer::", "fake:Fake", "☃"]
BAD_PROBLEMS = ["", "nope", "synthetic", "berkenkamp-", "michalewicz-0", "michalewicz-abc", "x" * 5000, "linear:3", "☃"]
BAD_ALGORITHMS = [",", "nope", "q-gp-ucb,nope", "x" * 5000, "ctv", "q-ctv-gp-ucb", "GP-UCB", "gp-ucb,gp-ucb2"]
BAD_ESTIMATORS = ["", "nope", "IAE", "mlae2", "x" * 300]
BAD_ACCOUNTING = ["", "nope", "Honest", "dishonest"]
BAD_LENGTHSCALES = ["", "fixed", "fixed:", "fixed:-1", "fixed:0", "fixed:nan", "fixed:inf", "fixed:abc", "lb:-1", "lb:nan",
                    "mle:x", "a-gp-ucb:0", "a-gp-ucb:-2", "nope", "fixed:1e400"]
BAD_MITIGATIONS = ["", "nope", "zne+", "rem+rem", "ZNE"]
BAD_FLOATS = ["-1", "0", "abc", "", "nan", "inf", "-inf", "2", "1.5", "1e-400", "1e400"]
BAD_ORACLES = ["", "nope", "bernoulli", "bernoulli:", "bernoulli:2", "bernoulli:-0.1", "bernoulli:nan", "bernoulli:abc",
               "gaussian:", "gaussian:mean=0", "gaussian:mean=0,std=-1", "gaussian:mean=nan,std=1",
               "gaussian:mean=0,std=1,qubits=0", "gaussian:mean=0,std=1,qubits=99", "discrete:values=1|2,probs=0.5",
               "discrete:values=1|2,probs=0.5|0.6", "discrete:values=,probs=", "x" * 5000]

BAD_TOMLS = [
    "budget = ", "budget = 'ten'", "budget = -5", "budget = 0", "budget = 1.5", "budget = 99999999999999999999",
    "budget = nan", "budget = inf", "trials = 0", "trials = -1", "trials = 'x'", "trials = 1e9", "seed = -1",
    "seed = 'x'", "seed = 1.5", "problem = 3", "problem = ''", "problem = 'nope'", "algorithms = 'gp-ucb'",
    "algorithms = []", "algorithms = [1]", "algorithms = ['nope']", "algorithms = [[]]", "target = 'nope'",
    "target = 1", "estimator = 'nope'", "accounting = 'nope'", "mitigation = 'nope'", "weights = 'nope'",
    "leftover = 'nope'", "unknown = 1", "[problem_options]\nnope = 1", "[algorithm_options.nope]\nx = 1",
    "[algorithm_options.gp-ucb]\nbeta = 'x'", "[hardware]\nmode = 'nope'", "[hardware]\nattempts = -1",
    "[[budget]]", "= 3", "budget = 3\nbudget = 4", "[problem_options\n", "budget = [1, 2]", "budget = {a = 1}",
    "budget = true", "trials = false", "\u0000", "budget = 10\x00", "a" * 300 + " = 1",
    "problem_options = 3", "algorithm_options = []", "hardware = 'x'", "[problem_options]\narms = -1",
    "[problem_options]\narms = 'x'", "[problem_options]\narms = nan",
    "x = " + "[" * 200 + "]" * 200, "budget = 1_000_000_000_000", "seed = 99999999999999999999",
    "estimator = ''", "target = ''", "target = 'aer:'", "target = 'fake:'", "target = 'ibm:ibm_torino'",
    "problem = 'tv-synthetic'\nalgorithms = ['q-gp-ucb', 'nope']", "algorithms = ['q-ctv-gp-ucb']",
    "budget = -0", "budget = +0", "budget = 0x0", "budget = 0b0", "budget = 1e0", "trials = 0o0", "trials = 10000000",
    "seed = -9223372036854775809", "seed = 'nan'", "seed = nan", "target = 'exact '", "target = ' exact'",
    "algorithms = ['gp-ucb', 'gp-ucb ']", "algorithms = ['gp-ucb', 3]", "algorithms = ['gp-ucb', ['q-gp-ucb']]",
    "estimator = 3", "accounting = true", "mitigation = []", "weights = {}", "leftover = 1.5",
    "[algorithm_options.gp-ucb]\nbeta = nan", "[algorithm_options.gp-ucb]\nbeta = -1",
    "[algorithm_options.gp-ucb]\nnope = 1", "[algorithm_options.q-gp-ucb]\nbeta = inf",
    "[hardware]\nmode = 3", "[hardware]\ntimeout = -1", "[hardware]\nnope = 1",
]

STAGE_DAMAGE = [
    {"op": "replace_line", "line": 3, "text": "not json"},
    {"op": "replace_line", "line": 3, "text": "[]"},
    {"op": "replace_line", "line": 3, "text": "{}"},
    {"op": "replace_line", "line": 3, "text": "null"},
    {"op": "replace_line", "line": 3, "text": "{\"trial\": -1}"},
    {"op": "sub", "line": 5, "old": "\"cum_regret\":", "new": "\"cum_regret\":NaN,\"x\":"},
    {"op": "sub", "line": 5, "old": "\"cum_calls\":", "new": "\"cum_calls\":-1,\"x\":"},
    {"op": "sub", "line": 5, "old": "\"trial\":0", "new": "\"trial\":\"0\""},
    {"op": "sub", "line": 5, "old": "\"algorithm\":\"gp-ucb\"", "new": "\"algorithm\":1"},
    {"op": "sub", "line": 5, "old": "\"stage\":", "new": "\"stage\":-5,\"y\":"},
    {"op": "delete_line", "line": 4},
    {"op": "duplicate_line", "line": 4},
    {"op": "swap_lines", "line": 4},
    {"op": "truncate", "bytes": 100},
    {"op": "truncate", "bytes": 0},
    {"op": "append", "text": "{\"trial\":0}\n"},
    {"op": "append", "text": "garbage"},
    {"op": "flip_byte", "offset": 10},
    {"op": "flip_byte", "offset": 200},
    {"op": "flip_byte", "offset": -5},
    {"op": "delete_file"},
    {"op": "make_folder"},
]
MARKER_DAMAGE = [
    {"op": "replace_all", "text": ""},
    {"op": "replace_all", "text": "not json"},
    {"op": "replace_all", "text": "[]"},
    {"op": "replace_all", "text": "{}"},
    {"op": "replace_all", "text": "{\"format\": 99}"},
    {"op": "replace_all", "text": "{\"format\": 1, \"config_sha256\": 3}"},
    {"op": "replace_all", "text": "{\"format\": 1, \"config_sha256\": \"00\"}"},
    {"op": "sub", "line": 1, "old": "\"records\": ", "new": "\"records\": 1"},
    {"op": "sub", "line": 1, "old": "\"stages_bytes\": ", "new": "\"stages_bytes\": 9"},
    {"op": "sub", "line": 1, "old": "\"stages_sha256\": \"", "new": "\"stages_sha256\": \"0"},
    {"op": "delete_file"},
    {"op": "make_folder"},
]
CONFIG_DAMAGE = [
    {"op": "replace_all", "text": ""},
    {"op": "replace_all", "text": "budget = "},
    {"op": "sub", "line": 1, "old": "synthetic", "new": "Synthetic"},
    {"op": "append", "text": "\n# a comment\n"},
    {"op": "append", "text": "\nbudget = 5\n"},
    {"op": "truncate", "bytes": 10},
    {"op": "flip_byte", "offset": 3},
    {"op": "delete_file"},
    {"op": "make_folder"},
]
JOURNAL_DAMAGE = [
    {"op": "replace_line", "line": 2, "text": "not json"},
    {"op": "replace_line", "line": 2, "text": "{}"},
    {"op": "replace_line", "line": 2, "text": "[]"},
    {"op": "replace_line", "line": 1, "text": "{}"},
    {"op": "sub", "line": 1, "old": "\"journal\":2", "new": "\"journal\":3"},
    {"op": "sub", "line": 1, "old": "\"seq\":0", "new": "\"seq\":1"},
    {"op": "sub", "line": 2, "old": "\"seq\":1", "new": "\"seq\":2"},
    {"op": "sub", "line": 2, "old": "\"stage\":1", "new": "\"stage\":2"},
    {"op": "sub", "line": 4, "old": "\"cum_calls\":", "new": "\"cum_calls\":1,\"z\":"},
    {"op": "sub", "line": 3, "old": "\"checkpoint\":1", "new": "\"checkpoint\":2"},
    {"op": "sub", "line": 3, "old": "\"rng\":", "new": "\"rng\":1,\"q\":"},
    {"op": "replace_line", "line": 4, "text": "{\"done\":true,\"stages\":1,\"seq\":2,\"chain\":\"0000000000000000\"}"},
    {"op": "delete_line", "line": 2},
    {"op": "delete_line", "line": 1},
    {"op": "duplicate_line", "line": 2},
    {"op": "swap_lines", "line": 2},
    {"op": "flip_byte", "offset": 20},
    {"op": "flip_byte", "offset": 120},
    {"op": "flip_byte", "offset": 300},
    {"op": "delete_file"},
    {"op": "make_folder"},
]
JOBS_DAMAGE = [
    {"op": "append_json", "entry": {"foo": 1}},
    {"op": "append_json", "entry": {"event": "nope", "fingerprint": "f", "job_id": "j"}},
    {"op": "append_json", "entry": {"event": "submitted", "fingerprint": "f"}},
    {"op": "append_json", "entry": {"event": "submitted", "fingerprint": "f", "job_id": 3}},
    {"op": "append_json", "entry": {"event": "submitted", "fingerprint": 3, "job_id": "j"}},
    {"op": "append_json", "entry": {"event": "done", "fingerprint": "f", "job_id": None}},
    {"op": "append_json", "entry": {"event": "done", "fingerprint": "f", "job_id": "j", "qpu_s": -1}},
    {"op": "append_json", "entry": {"event": "done", "fingerprint": "f", "job_id": "j", "qpu_s": "x"}},
    {"op": "append_json", "entry": {"event": "done", "fingerprint": "f", "job_id": "j", "qpu_s": 1e400}},
    {"op": "append_json", "entry": {"event": "done", "fingerprint": "f", "job_id": "j", "counts": 3}},
    {"op": "append_json", "entry": {"event": "done", "fingerprint": "f", "job_id": "j", "counts": [{"0": "x"}]}},
    {"op": "append_json", "entry": {"event": "submitted", "fingerprint": "f", "job_id": "j", "predicted_s": True}},
    {"op": "append_json", "entry": {"event": "usage", "fingerprint": "f", "job_id": None, "qpu_s": 1}},
    {"op": "append_json", "entry": {"event": "intent", "fingerprint": None, "job_id": None}},
    {"op": "append_json", "entry": {"event": None, "fingerprint": "f", "job_id": "j"}},
    {"op": "append", "text": "not json\n"},
    {"op": "append", "text": "[1, 2]\n"},
    {"op": "append", "text": "\"text\"\n"},
    {"op": "append", "text": "{\"event\": \"done\"}\n"},
]


def cases() -> list[dict]:
    out: list[dict] = []

    def add(argv, files=None, setup=None, damage=None):
        out.append({"id": len(out), "argv": [str(a) for a in argv], "files": files or {}, "setup": setup,
                    "damage": damage})

    run = ["run", "--budget", "50", "--trials", "1", "--algorithms", "gp-ucb", "--out", "R"]
    for option, values in (("--budget", BAD_INTS), ("--trials", BAD_INTS), ("--seed", BAD_SEEDS),
                           ("--target", BAD_NAMES), ("--problem", BAD_PROBLEMS), ("--algorithms", BAD_ALGORITHMS),
                           ("--estimator", BAD_ESTIMATORS), ("--accounting", BAD_ACCOUNTING),
                           ("--lengthscale", BAD_LENGTHSCALES), ("--mitigation", BAD_MITIGATIONS),
                           ("--workers", ["0", "-1", "abc", "1.5", "1e5", ""])):
        for value in values:
            argv = list(run)
            if option in argv:
                argv[argv.index(option) + 1] = value
            else:
                argv += [option, value]
            add(argv)
    for text in BAD_TOMLS:
        add(["run", "cfg.toml", "--out", "R"], files={"cfg.toml": text})
    for name in ("missing.toml", ".", "cfg.toml/x"):
        add(["run", name, "--out", "R"])
    add(["run", "cfg.toml", "--out", "R"], files={"cfg.toml": "budget = 10\n" * 3})
    for option, values in (("--epsilon", BAD_FLOATS), ("--alpha", BAD_FLOATS + ["1", "0.5x"]),
                           ("--oracle", BAD_ORACLES), ("--method", BAD_ESTIMATORS + ["mlae:3"]),
                           ("--target", BAD_NAMES), ("--shots", BAD_INTS), ("--seed", BAD_SEEDS),
                           ("--mitigation", BAD_MITIGATIONS), ("--device", ["", "TPU", "gpu:0"]),
                           ("--check-shots", ["-1", "abc", "1.5"])):
        for value in values:
            argv = ["estimate", "--oracle", "bernoulli:0.3", "--epsilon", "0.2"]
            if option in argv:
                argv[argv.index(option) + 1] = value
            else:
                argv += [option, value]
            add(argv)
    for oracle in BAD_ORACLES:
        add(["circuits", "export", "--oracle", oracle, "--output", "c.qasm"])
    for power in ["-1", "abc", "1.5", "100000", ""]:
        add(["circuits", "export", "--oracle", "bernoulli:0.3", "--power", power, "--output", "c.qasm"])
    for target in ("stages.jsonl", "run.json", "config.toml"):
        damages = {"stages.jsonl": STAGE_DAMAGE, "run.json": MARKER_DAMAGE, "config.toml": CONFIG_DAMAGE}[target]
        for damage in damages:
            commands = [["run", "--resume", "R"], ["export", "R", "--out", "x.parquet"]]
            if target == "stages.jsonl":  # plot reads stages.jsonl (and config.toml), not run.json
                commands.append(["plot", "R"])
            for command in commands:
                add(command, setup="finished", damage={"path": target, **damage})
    for damage in JOURNAL_DAMAGE:
        for unit in ("trial000-gp-ucb", "trial001-gp-ucb"):
            add(["run", "--resume", "R"], setup="unfinished", damage={"path": f"units/{unit}.jsonl", **damage})
    for text in ("not json\n", "{\"unit\": \"trial009-gp-ucb\"}\n", "{\"unit\": 3}\n", "[]\n", "{}\n",
                 "{\"unit\": \"../run\"}\n"):
        add(["run", "--resume", "R"], setup="unfinished", damage={"path": "units/.started", "op": "replace_all",
                                                                  "text": text})
    for command in (["plot", "R"], ["export", "R"], ["export", "R", "--out", "x.parquet"]):
        add(command, setup="unfinished")
    for damage in JOBS_DAMAGE:
        for command in (["jobs", "list", "R"], ["jobs", "status", "R"]):
            add(command, setup="hardware", damage={"path": "jobs.jsonl", **damage})
    submit = ["submit", "cfg.toml", "--backend", "fake:FakeManilaV2", "--out", "R", "--yes"]
    for option, values in (("--backend", BAD_NAMES + ["ibm", "aer:x", "exact"]), ("--mode", ["", "nope", "JOB", "sessions"]),
                           ("--max-jobs", ["0", "-1", "abc", "1.5"]), ("--max-qpu-seconds", ["0", "-1", "nan", "inf", "abc"]),
                           ("--max-execution-time", ["0", "-1", "abc"]), ("--max-time", ["0", "-1", "abc"]),
                           ("--timeout", ["0", "-1", "nan", "inf", "abc"]), ("--attempts", ["0", "-1", "abc"]),
                           ("--resubmit", ["nope", "failed,nope", ",,x"]), ("--plan-trials", ["0", "-1", "abc"])):
        for value in values:
            argv = list(submit)
            if option in argv:
                argv[argv.index(option) + 1] = value
            else:
                argv += [option, value]
            add(argv, files={"cfg.toml": "algorithms = ['q-gp-ucb']\nbudget = 50\ntrials = 1\n"})
    for option, values in (("--mode", ["", "nope"]), ("--max-jobs", ["0", "-1", "abc"]),
                           ("--max-qpu-seconds", ["0", "-1", "nan", "abc"]), ("--resubmit", ["nope", "failed,x"])):
        for value in values:
            add(["jobs", "resume", "R", option, value], setup="hardware")
    for backend in BAD_NAMES + ["ibm", "exact"]:
        add(["calibrations", "pull", "--backend", backend, "--out", "snap.json"])
    for dest in ("R", "R/stages.jsonl", "cfg.toml/x.parquet", "/dev/null", "", "R/units/x.parquet", ".", "..", "/"):
        add(["export", "R", "--out", dest], setup="finished", files={"cfg.toml": "budget = 10\n"})
    for folder in ("missing", ".", "cfg.toml"):
        for command in (["run", "--resume", folder], ["plot", folder], ["export", folder], ["jobs", "list", folder],
                        ["jobs", "status", folder], ["jobs", "resume", folder]):
            add(command, files={"cfg.toml": "budget = 10\n"})
    return out


def main() -> None:
    corpus = cases()
    (HERE / "corpus.jsonl").write_text("".join(json.dumps(c, ensure_ascii=True) + "\n" for c in corpus))
    print(f"wrote {len(corpus)} cases to {HERE / 'corpus.jsonl'}")


if __name__ == "__main__":
    main()
