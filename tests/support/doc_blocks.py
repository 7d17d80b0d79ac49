"""The code blocks of README.md and docs/*.md that are not Python: fenced (```bash, ```sh,
```console, ```shell, untagged) and indented (four spaces after a blank line), each with the
``<!-- docs-test: ... -->`` annotation on the last non-blank line above it, if any.

An annotation holds parts separated by `` ; ``:

- ``slow``: the block's test is marked slow (it still runs in the full suite);
- ``not run: REASON``: nothing in it is run (network, a cluster, hours of measurement);
- ``not code: REASON``: the block is no command (a formula, a record layout, output);
- ``arguments only: REASON``: every command's arguments are parsed by its program, which
  then exits before doing the work (a measurement that takes minutes or hours);
- ``output of: COMMAND``: the block is what COMMAND prints; the test runs COMMAND and
  finds every line of the block in its output (a line ``...`` stands for lines left out);
- ``qbo run adds: ARGS``: ARGS are appended to each ``qbo run`` of the block that does not
  resume (a smaller budget, stated where the reader sees it in the source);
- ``given: COMMAND``: COMMAND runs first, in the block's folder (a run folder the block names).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL_TAGS = ("", "bash", "sh", "console", "shell")
KINDS = ("slow", "not run", "not code", "arguments only", "output of", "qbo run adds", "given")
PROGRAMS = ("qbo", "python", "pip", "export")
_ANNOTATION = re.compile(r"^<!-- docs-test: (?P<parts>.*) -->$")
_ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")


@dataclass
class Command:
    """One command line of a block (continuations joined) and the output lines shown under it."""

    text: str
    output: list[str] = field(default_factory=list)

    def words(self) -> list[str]:
        return shlex.split(self.text, comments=True)


@dataclass
class Block:
    path: str
    line: int
    tag: str
    lines: list[str]
    annotation: dict[str, list[str]]

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"

    def commands(self) -> list[Command]:
        """The block's commands: ``$ `` lines in a console-style block, else every line whose
        program (after ``VAR=value`` settings and ``nice``) is one of ``PROGRAMS``; the other
        lines are output of the command above them, ``#`` lines are comments."""
        console = any(line.startswith("$ ") for line in self.lines)
        found: list[Command] = []
        pending = ""
        for line in self.lines:
            if pending:
                pending += " " + line.strip()
            elif console and line.startswith("$ "):
                pending = line[2:].strip()
            elif not console and is_command(line):
                pending = line.strip()
            elif line.strip() and not line.lstrip().startswith("#") and found:
                found[-1].output.append(line)
                continue
            else:
                continue
            if pending.endswith("\\"):
                pending = pending[:-1].rstrip()
                continue
            found.append(Command(pending))
            pending = ""
        return found


def is_command(line: str) -> bool:
    words = line.split()
    while words and (_ASSIGNMENT.match(words[0]) or words[0] == "nice"):
        words = words[1:]
    return bool(words) and words[0] in PROGRAMS


def parse_annotation(text: str) -> dict[str, list[str]]:
    """``slow ; not run: REASON`` -> {"slow": [""], "not run": ["REASON"]}; a part of an
    unknown kind, or a kind that needs a value and has none, raises ValueError."""
    parts: dict[str, list[str]] = {}
    for part in text.split(" ; "):
        kind, _, value = part.partition(":")
        kind, value = kind.strip(), value.strip()
        if kind not in KINDS:
            raise ValueError(f"unknown docs-test part {part!r}, expected one of {KINDS}")
        if kind != "slow" and not value:
            raise ValueError(f"docs-test part {kind!r} needs a value (a reason or a command)")
        parts.setdefault(kind, []).append(value)
    return parts


def blocks(paths: list[Path] | None = None) -> list[Block]:
    """Every non-Python code block of README.md and docs/*.md (or of ``paths``)."""
    found = []
    for path in paths or [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        found += _blocks_of(path)
    return found


def _blocks_of(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    name = str(path.relative_to(ROOT))
    found = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            tag = line[3:].strip()
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            if tag in SHELL_TAGS:
                found.append(Block(name, i + 2, tag, lines[i + 1:end], _annotation_above(lines, i, name)))
            elif tag not in ("python", "toml", "json"):
                raise ValueError(f"{name}:{i + 1}: code block tagged {tag!r}, which no test runs")
            i = end + 1
        elif line.startswith("    ") and i > 0 and not lines[i - 1].strip():
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            body = lines[i:end]
            while body and not body[-1].strip():
                body.pop()
            indent = min(len(b) - len(b.lstrip()) for b in body if b.strip())
            found.append(Block(name, i + 1, "indented", [b[indent:] for b in body], _annotation_above(lines, i, name)))
            i = end
        else:
            i += 1
    return found


def _annotation_above(lines: list[str], i: int, name: str) -> dict[str, list[str]]:
    j = i - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    match = _ANNOTATION.match(lines[j].strip()) if j >= 0 else None
    if not match:
        return {}
    try:
        return parse_annotation(match.group("parts"))
    except ValueError as exc:
        raise ValueError(f"{name}:{j + 1}: {exc}") from None
