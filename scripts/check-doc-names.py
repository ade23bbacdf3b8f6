#!/usr/bin/env python3
"""Fails when a code name quoted in a document no longer exists in the tree (default: docs/architecture.md).

What counts as a code name (in `backticks`, and CamelCase names and repository paths in the ``` diagrams):
- classes and functions: CamelCase (`ApproxQuery`), lowerCamel (`errorBound`), snake_case with two or more
  parts of two or more letters (`na_job_start`; not the math `N_g`, `e_max`, `target_g`), UPPER_SNAKE
  (`NOT_NEEDED`, `IP_TOS`), a capitalised word (`Engine`);
- members: `Class.member`, `Class#member`, `ns::Class::member`, `na_config.dscp_by_class`: the owner must be
  declared in the tree (a file `Owner.java`, or `class|interface|record|enum|struct|namespace Owner`) and the
  member must occur in a file that declares it (an owner that is not ours, e.g. Netty's, in a file that uses it),
  or on one line with the owner (`TEST(Suite, Name)`: a name declared twice, as a Java test and a gtest suite);
- package-qualified names (`io.netapprox.core.NetApproxException`): the package exists and declares the class;
- dotted lowercase keys (`spark.approx.dscp`, `io.netapprox.core.engine`): the literal text in the sources or a
  README; a key with `*` or `<...>` is a pattern, not a name;
- paths (`native/src/core/engine.cpp`, `src/driver/driver.cpp`, `engine.hpp`, `slack.hpp/.cpp`): the file or
  directory exists (a path may be relative to any directory; a bare file name matches any file of that name);
  build outputs and jar entries (`target/`, `build/`, `META-INF/`, `.so`, `.class`, `.jar`) are not checked.
Call arguments (`errorBound(group, eMax)`) and generic parameters are dropped; lowercase words (`auto`, `paper`),
all-caps words (`TLR`, `DONE`), numbers, options (`--data-plane`, `-Dkey=value`) and math are not names.

The sources searched are the repository's files except documentation (*.md), build outputs, benchmark results
and this checker with its tests (which quote names themselves).
Usage: check-doc-names.py [--root DIR] [DOC ...]; exit 1 listing every missing name, 0 when all exist.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

SOURCE_EXTS = {
    ".java", ".scala", ".cpp", ".hpp", ".h", ".c", ".cc", ".map", ".py", ".sh", ".cmake", ".txt", ".xml",
    ".toml", ".properties", ".json", ".yaml", ".yml", ".conf", ".in",
}  # fmt: skip
SKIP_DIRS = {".git", "target", "__pycache__", ".mvn", "node_modules", ".idea"}
NOT_SOURCE_DIRS = ("benchmarks/results/",)  # measured outputs: their paths exist, their text is no source
MAX_FILE_BYTES = 2_000_000
# this checker and its tests quote doc names themselves: they must not make a removed name exist
NOT_SOURCES = {"scripts/check-doc-names.py", "scripts/test_check_doc_names.py"}

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
WORD_RE = re.compile(IDENT)
DECL_RE = re.compile(rf"\b(?:class|interface|record|enum|struct|namespace|union)\s+({IDENT})")
CHAIN_RE = re.compile(rf"{IDENT}(?:(?:\.|::|#){IDENT})*")
PATH_RE = re.compile(r"^[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]*)+$")
FILE_RE = re.compile(
    r"^[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)*\.(?:java|scala|cpp|hpp|h|c|cc|py|sh|map|xml|toml)$"
)
NOT_CHECKED_PATH = re.compile(r"(^|/)(target|build[^/]*)/|^META-INF/|\.(so|class|jar)$|\.so\.[0-9.]+$|^/")
PATH_HEADS = {"src", "include", "tests", "tools", "bench", "fuzz", "portable", "io"}
CAMEL_RE = re.compile(r"^[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*$|^[A-Z]{2,}[a-z][A-Za-z0-9]*$")
LOWER_CAMEL_RE = re.compile(r"^[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*$")
CAPITALISED_RE = re.compile(r"^[A-Z][a-z][a-z0-9]+$")
UPPER_SNAKE_RE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
SNAKE_RE = re.compile(r"^[a-z][a-z0-9]+(?:_[a-z0-9]{2,})+$")
FENCE_RE = re.compile(r"^\s*```")
SPAN_RE = re.compile(r"`([^`]+)`")


@dataclass
class Tree:
    """The repository's source files, read once."""

    root: Path
    texts: dict[str, str] = field(default_factory=dict)  # relative path -> text (sources)
    readmes: list[str] = field(default_factory=list)
    paths: set[str] = field(default_factory=set)  # every file and directory, relative, '/'-separated
    basenames: set[str] = field(default_factory=set)
    files_with: dict[str, set[str]] = field(default_factory=dict)  # identifier -> the sources it occurs in
    declared_in: dict[str, set[str]] = field(default_factory=dict)  # type or namespace -> its files

    @staticmethod
    def load(root: Path) -> Tree:
        tree = Tree(root)
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("build"))
            rel_dir = Path(dirpath).relative_to(root).as_posix()
            rel_dir = "" if rel_dir == "." else rel_dir + "/"
            if rel_dir:
                tree.paths.add(rel_dir.rstrip("/"))
            for name in filenames:
                rel = rel_dir + name
                tree.paths.add(rel)
                tree.basenames.add(name)
                full = Path(dirpath) / name
                suffix = full.suffix
                if name.endswith(".md"):
                    if name.lower() == "readme.md":
                        tree.readmes.append(full.read_text(errors="replace"))
                    continue
                if (
                    suffix not in SOURCE_EXTS
                    and name not in ("CMakeLists.txt", "Makefile")
                    or rel in NOT_SOURCES
                    or rel.startswith(NOT_SOURCE_DIRS)
                ):
                    continue
                try:
                    if full.stat().st_size > MAX_FILE_BYTES:
                        continue
                    text = full.read_text(errors="replace")
                except OSError:
                    continue
                tree.texts[rel] = text
                for word in set(WORD_RE.findall(text)):
                    tree.files_with.setdefault(word, set()).add(rel)
                declared = set(DECL_RE.findall(text))
                if suffix in (".java", ".scala"):
                    declared.add(full.stem)
                for name in declared:
                    tree.declared_in.setdefault(name, set()).add(rel)
        return tree

    def has_word(self, word: str, files: list[str] | None = None) -> bool:
        """`word` (an identifier) occurs as a whole word, in any source or in one of `files`."""
        where = self.files_with.get(word, set())
        return bool(where) if files is None else any(f in where for f in files)

    def on_one_line(self, owner: str, member: str) -> bool:
        """`owner` and `member` on one line of a source (`TEST(Suite, Name)`, `Owner.member(...)`, `Owner::member`):
        for an owner whose name is declared more than once (a Java test and a GoogleTest suite)."""
        both = self.files_with.get(owner, set()) & self.files_with.get(member, set())
        words = [re.compile(rf"(?<![A-Za-z0-9_]){re.escape(w)}(?![A-Za-z0-9_])") for w in (owner, member)]
        return any(
            all(w.search(line) for w in words) for rel in both for line in self.texts[rel].splitlines()
        )

    def has_text(self, text: str) -> bool:
        return any(text in t for t in self.texts.values()) or any(text in t for t in self.readmes)

    def declaring(self, owner: str) -> list[str]:
        """Files that declare `owner` (a class, record, struct or namespace)."""
        return sorted(self.declared_in.get(owner, ()))

    def using(self, owner: str) -> list[str]:
        return sorted(self.files_with.get(owner, ()))

    def path_exists(self, path: str) -> bool:
        path = path.rstrip("/")
        if path in self.paths:
            return True
        if "/" not in path:
            return path in self.basenames
        return any(p.endswith("/" + path) for p in self.paths)


def doc_spans(text: str) -> list[tuple[int, str, bool]]:
    """(line number, text, in a ``` block) of every backtick span (which may wrap a line), and of every line
    inside ``` blocks."""
    spans = []
    fenced = False
    prose: list[tuple[int, str]] = []

    def flush() -> None:
        joined = "\n".join(line for _, line in prose)
        for m in SPAN_RE.finditer(joined):
            number = prose[0][0] + joined.count("\n", 0, m.start())
            spans.append((number, " ".join(m.group(1).split()), False))
        prose.clear()

    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE_RE.match(line):
            flush()
            fenced = not fenced
        elif fenced:
            spans.append((number, line, True))
        elif not line.strip():
            flush()  # a span never crosses a paragraph
        else:
            prose.append((number, line))
    flush()
    return sorted(spans)


def strip_brackets(text: str) -> str:
    """Drops call arguments and generic parameters: `f(a, b).g(...)` -> `f.g`, `Map<K, V>` -> `Map`."""
    out = []
    depth = 0
    for ch in text:
        if ch in "(<[":
            depth += 1
        elif ch in ")>]" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def is_type_like(part: str) -> bool:
    return bool(CAMEL_RE.match(part) or CAPITALISED_RE.match(part) or re.match(r"^[A-Z][A-Za-z0-9]*$", part))


def is_code_word(word: str) -> bool:
    return bool(
        CAMEL_RE.match(word)
        or LOWER_CAMEL_RE.match(word)
        or CAPITALISED_RE.match(word)
        or UPPER_SNAKE_RE.match(word)
        or SNAKE_RE.match(word)
    )


def path_candidates(piece: str) -> list[str]:
    """The paths a piece names (`slack.hpp/.cpp` -> slack.hpp, slack.cpp), or [] when it is not a path."""
    piece = piece.strip(",;:()'\"")
    if "<" in piece or "*" in piece or "@" in piece or piece.startswith("-"):
        return []
    if re.search(r"\.so(\.[0-9]+)*$", piece):
        return [piece]  # a shared library's name: not checked (NOT_CHECKED_PATH)
    m = re.match(r"^(.*)\.([A-Za-z]+)/\.([A-Za-z]+)$", piece)
    if m and "/" not in m.group(1):
        return [f"{m.group(1)}.{m.group(2)}", f"{m.group(1)}.{m.group(3)}"]
    if FILE_RE.match(piece):
        return [piece]
    if not PATH_RE.match(piece):
        return []
    parts = [p for p in piece.split("/") if p]
    head = parts[0] if parts else ""
    last = parts[-1] if parts else ""
    top_level = head.startswith("approx-") or head in PATH_HEADS
    if top_level or "." in last[1:] or head in ROOT_DIRS:
        return [piece]
    return []


ROOT_DIRS: set[str] = set()


def check_chain(tree: Tree, chain: str) -> str | None:
    """None when `chain` exists, else why not."""
    parts = re.split(r"\.|::|#", chain)
    if len(parts) == 1:
        return None if tree.has_word(chain) else "not found"
    if all(p == p.lower() for p in parts) and "." in chain and "::" not in chain:
        if tree.has_text(chain):
            return None  # a key or a package, as text
        if not SNAKE_RE.match(parts[0]):
            return "not found as text in the sources or a README"
    first_type = next((i for i, p in enumerate(parts) if is_type_like(p)), 0)
    if first_type > 0 and "." in chain and all(p == p.lower() for p in parts[:first_type]):
        package = ".".join(parts[:first_type])  # io.netapprox.core.NetApproxException
        if not tree.has_text(package) and not tree.path_exists(package.replace(".", "/")):
            return f"package {package} not found"
        declared = [f for f in tree.declaring(parts[first_type]) if package.replace(".", "/") in f]
        if not declared and not tree.has_text(f"{package}.{parts[first_type]}"):
            return f"{parts[first_type]} not found in package {package}"
        return check_chain(tree, ".".join(parts[first_type:]))
    owner_files: list[str] | None = None
    owner = None
    for i, part in enumerate(parts):
        if i == 0 or owner is None:
            if not tree.has_word(part):
                return f"{part} not found"
        else:
            candidates = owner_files or []
            if (not candidates or not tree.has_word(part, candidates)) and not tree.on_one_line(owner, part):
                return f"{part} not found in {owner}'s files"
        if is_type_like(part) or SNAKE_RE.match(part) or (i == 0 and len(parts) > 1):
            declared = tree.declaring(part)
            if owner_files and declared:
                inner = [f for f in declared if f in owner_files]
                declared = inner or declared
            if not declared and (is_type_like(part) or i < len(parts) - 1):
                declared = tree.using(part)
            if declared:
                owner, owner_files = part, declared
    return None


def names_in(span: str, fenced: bool) -> tuple[list[str], list[str]]:
    """(chains, paths) worth checking in one span or diagram line."""
    chains: list[str] = []
    paths: list[str] = []
    rest = []
    for piece in span.split():
        found = path_candidates(piece)
        if found and (not fenced or "/" in piece or FILE_RE.match(piece.strip(",;:()"))):
            if not NOT_CHECKED_PATH.search(piece.strip(",;:()")):
                paths.extend(found)
        else:
            rest.append(piece)
    text = strip_brackets(" ".join(rest))
    if re.search(r"(^|\s)-", text) or "*" in text:
        text = " ".join(w for w in text.split() if not w.startswith("-") and "*" not in w)
    for m in CHAIN_RE.finditer(text):
        chain = m.group(0)
        start = m.start()
        if start and text[start - 1] in "$@.%":
            continue
        parts = re.split(r"\.|::|#", chain)
        if fenced:
            chains.extend(p for p in parts if CAMEL_RE.match(p))
            continue
        if len(parts) > 1:
            if any(is_code_word(p) for p in parts) or (
                "." in chain and all(re.match(r"^[a-z][a-z0-9_]*$", p) for p in parts)
            ):
                chains.append(chain)
        elif is_code_word(chain):
            chains.append(chain)
    return chains, paths


def shown(doc: Path, root: Path) -> str:
    try:
        return doc.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(doc)


def check(tree: Tree, doc: Path, name: str) -> list[str]:
    missing = []
    seen: set[tuple[str, str]] = set()
    for number, span, fenced in doc_spans(doc.read_text()):
        chains, paths = names_in(span, fenced)
        for path in paths:
            if ("path", path) in seen:
                continue
            seen.add(("path", path))
            if not tree.path_exists(path):
                missing.append(f"{name}:{number}: `{path}`: no such file or directory")
        for chain in chains:
            if ("name", chain) in seen:
                continue
            seen.add(("name", chain))
            why = check_chain(tree, chain)
            if why:
                missing.append(f"{name}:{number}: `{chain}`: {why}")
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_root = Path(__file__).resolve().parent.parent
    parser.add_argument("--root", type=Path, default=default_root, help="the repository (default: this one)")
    parser.add_argument("docs", nargs="*", type=Path, help="documents (default: docs/architecture.md)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    docs = args.docs or [root / "docs" / "architecture.md"]
    ROOT_DIRS.clear()
    ROOT_DIRS.update(p.name for p in root.iterdir() if p.is_dir())
    tree = Tree.load(root)
    missing = []
    for doc in docs:
        missing.extend(check(tree, doc, shown(doc, root)))
    if missing:
        print(f"[doc-names] ERROR: {len(missing)} code name(s) quoted in the docs do not exist in the tree:")
        for line in missing:
            print("  " + line)
        return 1
    print(
        f"[doc-names] every code name quoted in {', '.join(shown(d, root) for d in docs)} exists in the tree"
        f" ({len(tree.texts)} source files)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
