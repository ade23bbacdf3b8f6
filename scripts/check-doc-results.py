#!/usr/bin/env python3
"""Fails when a document cites a `benchmarks/results/...` path, or links a relative path, that is not in the tree.

A number in the docs points to the summary file that holds it (`benchmarks/results/<area>/<name>/summary.md`,
written by `benchmarks/run <name>`); this check keeps those citations from going stale when a run folder is
renamed, removed or never committed. What is checked, per cited path:
- a file (`.../summary.md`) must be tracked; a directory (`.../e2e/`, or a last part without a dot) must hold a
  tracked file;
- `{a,b}` is expanded (`.../line11-{new,old}.txt` cites both files) and `*` must match at least one tracked file;
- a path with `<...>` is a pattern (`benchmarks/results/<area>/<name>/`), not a citation, and is skipped; so is
  a path followed by `(not yet run)` (where an entry will write a summary not committed yet) or by
  `(not committed)` / `(not in git)` (where a harness leaves raw output that is not tracked);
- `results/...` without the `benchmarks/` prefix is read as `benchmarks/results/...`.
A markdown link `[text](path)` or `[text](path#anchor)` with a relative path (no `scheme:`, not only `#anchor`) is
resolved from the document's folder and must name a tracked file or a folder holding one (a README row copied from
docs/ with `(sampling.md)` instead of `(docs/sampling.md)` is what this catches).
The tree is `git ls-files` (what a clone has; raw data a run leaves untracked does not count), or every file under
the root when it is not a git checkout.
Usage: check-doc-results.py [--root DIR] [DOC ...] (default: README.md, docs/*.md, benchmarks/*.md);
exit 1 listing every missing path, 0 when all exist.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import subprocess
import sys
from pathlib import Path

# a cited path: starts at `benchmarks/results/` or a bare `results/` (not inside another path: `build/results/`)
CITE_RE = re.compile(r"(?<![A-Za-z0-9_./-])((?:benchmarks/)?results/[A-Za-z0-9_.{},*<>/+-]*)")
TRAILING = ".,;:)'\"`"
NOT_TRACKED_RE = re.compile(r"^[`*]*\s*\((?:not yet run|not committed|not in git)")


def tracked_files(root: Path) -> set[str]:
    """The files a clone has: `git ls-files`, or every file when `root` is no git checkout."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True, text=True
        ).stdout
        if (root / ".git").exists():
            return {p for p in out.split("\0") if p}
    except (OSError, subprocess.CalledProcessError):
        pass
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}


def expand_braces(path: str) -> list[str]:
    """`a/{b,c}/d` -> [`a/b/d`, `a/c/d`] (nested and repeated braces too); an unclosed brace is kept as text."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [
        expanded
        for choice in m.group(1).split(",")
        for expanded in expand_braces(path[: m.start()] + choice + path[m.end() :])
    ]


def citations(text: str) -> list[tuple[int, str]]:
    """(line number, path) of every `benchmarks/results/...` path a document cites, patterns with `<...>` left
    out."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for m in CITE_RE.finditer(line):
            path = m.group(1).rstrip(TRAILING)
            if "<" in path or ">" in path or NOT_TRACKED_RE.match(line[m.end() :]):
                continue
            if path.count("{") != path.count(
                "}"
            ):  # `{a,` wrapped onto the next line: the part before the brace
                path = path[: path.index("{")]
            if not path.startswith("benchmarks/"):
                path = "benchmarks/" + path
            if path.rstrip("/") == "benchmarks/results":
                continue  # the folder itself
            found.append((number, path))
    return found


# a markdown link's target: `](target)` or `](target#anchor)`; an image `![..](..)` too
LINK_RE = re.compile(r"\]\(([^()\s#]*)(?:#[^()\s]*)?\)")


def relative_links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every markdown link whose target is a relative path (not a URL, not `#anchor`)."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for m in LINK_RE.finditer(line):
            target = m.group(1)
            if target and not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target) and not target.startswith("/"):
                found.append((number, target))
    return found


def resolve(doc_dir: str, target: str) -> str | None:
    """`target` relative to `doc_dir` (both repository-relative, posix) as a repository path; None above the root."""
    parts = [p for p in doc_dir.split("/") if p]
    for part in target.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def exists(path: str, files: set[str]) -> bool:
    """A tracked file, a directory holding one, or a `*` pattern matching one."""
    if "*" in path:
        pattern = path.rstrip("/")
        return any(fnmatch.fnmatchcase(f, pattern) or fnmatch.fnmatchcase(f, pattern + "/*") for f in files)
    if path in files:
        return True
    prefix = path.rstrip("/") + "/"
    return any(f.startswith(prefix) for f in files)


def check(doc: Path, name: str, files: set[str]) -> list[str]:
    missing = []
    for number, cited in citations(doc.read_text(errors="replace")):
        for path in expand_braces(cited):
            if not exists(path, files):
                missing.append(f"{name}:{number}: `{path}` is not in the tree")
    doc_dir = name.rpartition("/")[0]
    for number, target in relative_links(doc.read_text(errors="replace")):
        path = resolve(doc_dir, target)
        if path is None or not exists(path, files):
            missing.append(f"{name}:{number}: link `{target}` names no file in the tree")
    return missing


def default_docs(root: Path) -> list[Path]:
    docs = [
        root / "README.md",
        *sorted((root / "docs").glob("*.md")),
        *sorted((root / "benchmarks").glob("*.md")),
    ]
    return [d for d in docs if d.is_file()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_root = Path(__file__).resolve().parent.parent
    parser.add_argument("--root", type=Path, default=default_root, help="the repository (default: this one)")
    parser.add_argument(
        "docs", nargs="*", type=Path, help="documents (default: README.md, docs/*.md, benchmarks/*.md)"
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    docs = args.docs or default_docs(root)
    files = tracked_files(root)
    missing = []
    for doc in docs:
        try:
            name = doc.resolve().relative_to(root).as_posix()
        except ValueError:
            name = str(doc)
        missing.extend(check(doc, name, files))
    if missing:
        print(
            f"[doc-results] ERROR: {len(missing)} cited benchmarks/results path(s) or links are not in the tree:"
        )
        for line in missing:
            print("  " + line)
        return 1
    print(
        f"[doc-results] every benchmarks/results path and relative link in {len(docs)} document(s) is in the tree"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
