"""Every shell code block in README.md and docs/*.md runs here (issue 20, "every code block in
README.md and docs/*.md runs in the suite"); the Python blocks run in tests/test_docs.py.

Each block runs in its own empty folder (``examples`` and the ``bench`` scripts beside it, as
in the repository root): ``qbo`` is ``python -m qbo.cli`` of this tree, ``python`` this
interpreter. A command exits 0, every file it names with ``--out`` / ``-o`` exists afterwards,
and the output shown under a command (or a block marked ``output of: COMMAND``) is found
line by line in what the command prints. A block that cannot run says why in its
``<!-- docs-test: ... -->`` annotation (grammar: tests/support/doc_blocks.py); a block this
test cannot run and whose annotation does not say so fails.
"""

from __future__ import annotations

import argparse
import os
import runpy
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from qbo.experiments.config import load_config
from tests.support.doc_blocks import ROOT, Block, Command, blocks, is_command

BLOCKS = blocks()
TIMEOUT_S = 1800
def _param(block: Block):
    marks = [pytest.mark.slow] if "slow" in block.annotation else []
    return pytest.param(block, id=block.id, marks=marks)


def test_the_docs_hold_shell_blocks():
    names = {b.path for b in BLOCKS}
    assert {"README.md", "docs/runs.md", "docs/scale-out.md", "docs/hardware.md"} <= names, names
    assert sum(len(b.commands()) for b in BLOCKS) >= 40


def test_annotations_parse_and_unknown_ones_are_refused():
    from tests.support.doc_blocks import parse_annotation

    assert parse_annotation("slow ; qbo run adds: --budget 200") == {"slow": [""], "qbo run adds": ["--budget 200"]}
    for bad in ("slwo", "not run", "not run:  ", "skip: no reason given"):
        with pytest.raises(ValueError):
            parse_annotation(bad)


def test_the_command_parser_splits_commands_output_and_continuations():
    block = Block("x.md", 1, "", ["$ python a.py --x 1 \\", "    --y 2   # note", "col  a", "1    2", "$ qbo run"], {})
    assert [(c.text, c.output) for c in block.commands()] == [
        ("python a.py --x 1 --y 2   # note", ["col  a", "1    2"]), ("qbo run", [])]
    assert is_command("OPENBLAS_NUM_THREADS=1 PYTHONPATH=$PWD nice python bench/x.py")
    assert not is_command("algorithm   final cumulative regret")


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS])
def test_shell_block(block: Block, tmp_path, monkeypatch):
    notes = block.annotation
    commands = block.commands()
    if "not run" in notes or "not code" in notes:
        assert not ("not code" in notes and commands), f"{block.id}: marked 'not code' but holds commands"
        return
    assert commands or "output of" in notes, (
        f"{block.id}: no command in this block; annotate it '<!-- docs-test: not code: REASON -->' "
        f"or '<!-- docs-test: output of: COMMAND -->'")
    work = _workdir(tmp_path)
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    for given in notes.get("given", []):
        _run(Command(given), work, env, block, check_output=False)
    for shown in notes.get("output of", []):
        done = _run(Command(shown), work, env, block, check_output=False)
        _find_lines(block.lines, done.stdout, block, shown)
    for command in commands:
        if "arguments only" in notes:
            _check_arguments(command, work, env, block, monkeypatch)
        else:
            extra = notes.get("qbo run adds", [])
            _run(command, work, env, block, extra=" ".join(extra).split())


def _workdir(tmp_path: Path) -> Path:
    """An empty folder laid out like the repository root for the commands: ``examples`` (read
    only) and the ``bench`` scripts, linked one by one so that what a script writes under
    bench/ (results, a figure) lands here, not in the repository."""
    work = tmp_path / "work"
    (work / "bench").mkdir(parents=True)
    (work / "examples").symlink_to(ROOT / "examples")
    (work / "tests").symlink_to(ROOT / "tests")
    for script in (ROOT / "bench").glob("*.py"):
        (work / "bench" / script.name).symlink_to(script)
    return work


def _argv(command: Command, env: dict[str, str], block: Block) -> list[str] | None:
    """The command as an argument list (None: it only sets the environment); ``env`` takes its
    ``VAR=value`` settings, ``$PWD`` being the repository root as the docs say."""
    words = [w.replace("$PWD", str(ROOT)) for w in command.words()]
    assert not {"&&", "|", "&", ";", ">"} & set(words), (
        f"{block.id}: '{command.text}' chains or redirects commands; annotate the block 'not run: REASON' "
        f"or show one command a line")
    while words and ("=" in words[0] and words[0].split("=")[0].isupper() or words[0] == "nice"):
        if words[0] != "nice":
            key, _, value = words[0].partition("=")
            env[key] = value
        words = words[1:]
    program, args = words[0], words[1:]
    if program == "export":
        for word in args:
            key, _, value = word.partition("=")
            env[key] = value
        env["PYTHONPATH"] = str(ROOT)  # this tree, wherever the docs say the root is
        return None
    if program == "qbo":
        return [sys.executable, "-m", "qbo.cli", *args]
    if program == "python":
        return [sys.executable, *args]
    raise AssertionError(f"{block.id}: '{command.text}' cannot run offline ({program}); "
                         f"annotate the block 'not run: REASON'")


def _run(command: Command, work: Path, env: dict[str, str], block: Block, extra: list[str] = (),
         check_output: bool = True) -> subprocess.CompletedProcess:
    argv = _argv(command, env, block)
    if argv is None:
        return subprocess.CompletedProcess([], 0, "", "")
    if argv[1:4] == ["-m", "qbo.cli", "run"] and "--resume" not in argv:
        argv += list(extra)
    done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, f"{block.id}: '{command.text}' exited {done.returncode}: {done.stderr[-2000:]}"
    for option in ("--out", "-o"):
        if option in argv:
            named = Path(argv[argv.index(option) + 1])
            assert (work / named).exists(), f"{block.id}: '{command.text}' did not write {named}"
    if check_output and command.output:
        _find_lines(command.output, done.stdout, block, command.text)
    return done


class _Parsed(Exception):
    """Raised by the patched parser once a script's arguments have parsed."""


def _check_arguments(command: Command, work: Path, env: dict[str, str], block: Block, monkeypatch) -> None:
    """Parse the command's arguments with its own parser and stop there: a script runs in this
    process up to its ``parse_args`` (its imports are this process's, so it is cheap); the CLI
    gets ``--help``, which it prints only after refusing an unknown option."""
    argv = _argv(command, env, block)
    if argv is None:
        return
    if argv[1:3] == ["-m", "qbo.cli"]:
        done = subprocess.run([*argv, "--help"], cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and "Usage:" in done.stdout, (
            f"{block.id}: the arguments of '{command.text}' do not parse: {done.stderr[-2000:]}")
        return
    script = work / argv[1]
    assert script.suffix == ".py" and script.exists(), f"{block.id}: '{command.text}': no script {argv[1]}"
    parse = argparse.ArgumentParser.parse_args

    def parsed(self, *args, **kwargs):
        parse(self, *args, **kwargs)  # an unknown option or a bad value exits 2 here
        raise _Parsed

    with monkeypatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_args", parsed)
        patch.setattr(sys, "argv", [str(script), *argv[2:]])
        patch.syspath_prepend(str(script.resolve().parent))
        patch.chdir(work)
        with pytest.raises(_Parsed):
            runpy.run_path(str(script), run_name="__main__")


def _find_lines(shown: list[str], printed: str, block: Block, command: str) -> None:
    """Every non-blank shown line, white space folded, is a line of what was printed; a line
    ``...`` stands for lines left out."""
    lines = {" ".join(line.split()) for line in printed.splitlines()}
    missing = [s for s in shown if s.strip() not in ("", "...") and " ".join(s.split()) not in lines]
    assert not missing, f"{block.id}: '{command}' printed\n{printed}\nwithout the lines {missing}"


TOML_BLOCKS = []
for _path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
    _text = _path.read_text().split("```toml\n")
    for _chunk in _text[1:]:
        TOML_BLOCKS.append(pytest.param(_chunk.split("```")[0], id=f"{_path.name}:toml{len(TOML_BLOCKS)}"))


@pytest.mark.parametrize("text", TOML_BLOCKS)
def test_toml_block_is_a_valid_config(text, tmp_path):
    """A TOML block is a config (or part of one): it parses, and as a config file it loads."""
    tomllib.loads(text)
    path = tmp_path / "config.toml"
    path.write_text(text)
    load_config(path)


def test_an_argument_check_fails_on_an_option_the_script_lacks(tmp_path, monkeypatch):
    block = Block("x.md", 1, "", ["python bench/gp_models.py --arms 100 --no-such-option 1"], {"arguments only": ["x"]})
    work = _workdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        _check_arguments(block.commands()[0], work, {}, block, monkeypatch)
    assert exc.value.code == 2
    fine = Block("x.md", 1, "", ["python bench/gp_models.py --arms 100"], {"arguments only": ["x"]})
    _check_arguments(fine.commands()[0], work, {}, fine, monkeypatch)


def test_shown_output_must_be_printed_line_by_line():
    block = Block("x.md", 1, "", ["qbo x", "a   b", "...", "c"], {})
    shown = block.commands()[0].output
    _find_lines(shown, "a b\nleft out\n  c  \n", block, "qbo x")  # white space folded, '...' skipped
    with pytest.raises(AssertionError, match="without the lines"):
        _find_lines(shown, "a b\n", block, "qbo x")
