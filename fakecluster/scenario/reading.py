"""Bounded reading of scenario and manifest files: a hostile file fails with one line, never hangs.

A scenario file is user input, and a path can name anything: a FIFO (``open`` blocks until a writer
comes), ``/dev/zero`` (``read`` never ends), a 10 GB log. So a file is opened non-blocking, must be a
*regular* file, and is read up to :data:`MAX_FILE_BYTES` (10 MiB; the largest library scenario is a few
KiB). YAML is parsed by PyYAML's safe loader with two bounds it lacks: nesting depth
(:data:`MAX_DEPTH`, checked while composing, before PyYAML's recursive composer could hit Python's
recursion limit) and the size of the document once aliases are expanded (:data:`MAX_EXPANDED_NODES`,
counted in linear time over the node graph, so a "billion laughs" alias bomb is refused in milliseconds
rather than expanded by every later walk). Errors name the line; they never quote the file's content.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

from fakecluster.scenario.errors import escape_control

__all__ = [
    "MAX_DEPTH",
    "MAX_EXPANDED_NODES",
    "MAX_FILE_BYTES",
    "UNDECIDED",
    "UnreadableFile",
    "YamlProblem",
    "manifest_kind_of",
    "parse_bounded_yaml",
    "read_bounded_text",
]  # fmt: skip

MAX_FILE_BYTES = 10 * 1024 * 1024
"""Largest scenario or manifest file read (10 MiB)."""
MAX_DEPTH = 100
"""Deepest nesting of mappings and lists in one YAML document (a JobSet pod template is ~20 deep)."""
MAX_EXPANDED_NODES = 1_000_000
"""Most YAML nodes one document may hold with every alias expanded (each use of an alias counts)."""


class UnreadableFile(Exception):
    """The file cannot be read as text: missing, not a regular file, too large or not UTF-8."""


class YamlProblem(Exception):
    """The text is not acceptable YAML; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def _kind_of(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
    ):  # fmt: skip
        if test(mode):
            return name
    return "not a regular file"


def read_bounded_text(path: Path, limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of the regular file ``path``, at most ``limit`` bytes; else :class:`UnreadableFile`.

    ``O_NONBLOCK`` keeps ``open`` of a FIFO from waiting for a writer; the ``fstat`` of the opened
    descriptor (not of the path: no race with a swapped file) refuses anything but a regular file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except ValueError:
        raise UnreadableFile("the path contains a NUL character") from None
    except OSError as exc:
        raise UnreadableFile(exc.strerror or type(exc).__name__) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnreadableFile(f"{_kind_of(mode)}, not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise UnreadableFile(f"larger than the {limit // (1024 * 1024)} MiB limit for scenario files")
    except OSError as exc:
        raise UnreadableFile(exc.strerror or type(exc).__name__) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UnreadableFile(f"not valid UTF-8 (byte 0x{data[exc.start]:02x} on line {line})") from None


class MultipleDocuments(YamlProblem):
    """The stream holds more than one YAML document (``---``)."""


class _Bounded:
    """The single-document and nesting-depth bounds, enforced while composing (mixed into a loader)."""

    _depth = 0
    _nodes = 0
    """Nodes composed so far: a document without aliases is exactly that many nodes expanded."""

    def get_single_node(self) -> Any:
        """``Composer.get_single_node``, raising :class:`MultipleDocuments` for a second document."""
        events: Any = self  # types-PyYAML leaves Parser's event methods unannotated
        events.get_event()
        document = None if events.check_event(yaml.StreamEndEvent) else events.compose_document()
        if not events.check_event(yaml.StreamEndEvent):
            raise MultipleDocuments("expected a single document", events.peek_event().start_mark.line + 1)
        events.get_event()
        return document

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        self._nodes += 1
        try:
            if self._depth > MAX_DEPTH:
                events: Any = self  # as above: Parser.peek_event is unannotated in the stubs
                mark = events.peek_event().start_mark
                raise YamlProblem(f"nested more than {MAX_DEPTH} levels deep", mark.line + 1)
            return super().compose_node(parent, index)  # type: ignore[misc]
        finally:
            self._depth -= 1


class _BoundedLoader(_Bounded, yaml.SafeLoader):
    """PyYAML's safe loader, all Python, with the bounds: what every error is reported by."""


_CParser: Any
"""libyaml's event parser (``yaml._yaml.CParser``), when PyYAML was built with it (its wheels are)."""
try:
    from yaml.cyaml import CParser as _CParser  # type: ignore[attr-defined]  # not in the stubs
except ImportError:  # a PyYAML built without libyaml: everything is read by the Python loader
    _CParser = None

if _CParser is not None:

    class _BoundedCLoader(_Bounded, yaml.composer.Composer, _CParser,  # type: ignore[misc]
                          yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
        """The same composer, constructor and resolver (Python, so the bounds and the values are the
        very same), fed by libyaml's scanner and parser, which do most of the work at C speed. Used for
        a document only if it reads cleanly; anything it refuses is read again by
        :class:`_BoundedLoader`, so every error reads as it always did."""

        def __init__(self, stream: str) -> None:
            _CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)


def _expanded_size(root: yaml.Node) -> int:
    """Nodes in the document with aliases expanded, memoised per node (linear in the graph's size)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children: list[yaml.Node] = []
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        if children_done:
            total = 1 + sum(sizes.get(id(c), 0) for c in children)
            sizes[id(node)] = min(total, MAX_EXPANDED_NODES + 1)
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(root)]


def parse_bounded_yaml(text: str) -> tuple[yaml.Node | None, Any]:
    """Compose and construct the single YAML document in ``text``: ``(node, data)``.

    Every failure is a :class:`YamlProblem` with the line, including what PyYAML reports outside its
    marked errors: an unprintable character (raised by the reader before any parsing), an integer too
    long for Python to convert, and the two bounds of this module.

    A document free of unprintable characters is read with libyaml's parser first (scanning is most
    of the time a scenario suite spends reading); if that fails in any way, the document is read again
    by PyYAML's own, whose error is the one reported.
    """
    if _libyaml_reads(text):
        try:
            return _parse(_BoundedCLoader(text), text)
        except (YamlProblem, yaml.YAMLError, ValueError):
            pass
    try:
        loader = _BoundedLoader(text)
    except yaml.reader.ReaderError as exc:
        raise _reader_problem(exc, text) from None
    return _parse(loader, text)


_NON_PRINTABLE = yaml.reader.Reader.NON_PRINTABLE
"""The characters PyYAML's reader refuses (``Reader.check_printable``): a text holding one is left to it."""


def _libyaml_reads(text: str) -> bool:
    """Whether ``text`` may go to libyaml: it is there, and no character in it is one PyYAML's own reader
    refuses (that reader's error is the one to report)."""
    return _CParser is not None and not _NON_PRINTABLE.search(text)


def _parse(loader: Any, text: str) -> tuple[yaml.Node | None, Any]:
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        # An alias is written with a "*": without one, the document is the nodes composed (no walk).
        expanded = loader._nodes if "*" not in text else _expanded_size(node)
        if expanded > MAX_EXPANDED_NODES:
            raise YamlProblem(
                f"YAML aliases expand to more than {MAX_EXPANDED_NODES:,} nodes (an alias bomb?)",
                node.start_mark.line + 1,
            )
        return node, loader.construct_document(node)
    except yaml.reader.ReaderError as exc:
        raise _reader_problem(exc, text) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or "unreadable YAML"
        context = f" ({exc.context})" if exc.context else ""
        raise YamlProblem(f"{problem}{context}", mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(escape_control(str(exc).splitlines()[0])) from None
    except (ValueError, OverflowError, RecursionError) as exc:  # int() of a 5,000-digit number, ...
        reason = escape_control(str(exc).split(":")[0])[:100]  # "Exceeds the limit (4300 digits) ..."
        raise YamlProblem(f"a value cannot be read ({reason})") from None
    finally:
        loader.dispose()


UNDECIDED = object()
_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"


def manifest_kind_of(text: str) -> str | object | None:
    """What :func:`parse_bounded_yaml` plus a look at the top level would say -- the ``kind`` of a
    document whose top level is a mapping with ``apiVersion`` and a string ``kind``, else None -- read
    from libyaml's events alone, without composing or constructing anything (discovery asks it of every
    YAML file under a folder). :data:`UNDECIDED` (the caller parses the document) for anything that
    needs more than the events to be sure: no libyaml, an unprintable character, a parse error, an
    alias, a tag, a merge key, a complex key at the top level, nesting near the bound. With a second
    document, or more nodes than the bound, it is None, as the full parse would be refused."""
    if not _libyaml_reads(text):
        return UNDECIDED
    parser = _CParser(text)
    try:
        return _top_level_kind(parser)
    except (yaml.YAMLError, ValueError):
        return UNDECIDED
    finally:
        parser.dispose()


def _top_level_kind(parser: Any) -> str | object | None:
    resolver: Any = yaml.resolver.Resolver()  # its methods are unannotated in the stubs
    parser.get_event()  # StreamStart
    if parser.check_event(yaml.StreamEndEvent):
        return None  # an empty stream: no document
    parser.get_event()  # DocumentStart
    top_is_mapping = parser.check_event(yaml.MappingStartEvent)
    depth = nodes = 0
    key_next = True
    key: str | None = None
    found: dict[str, object] = {}
    while True:
        event = parser.get_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "tag", None) is not None:
            return UNDECIDED
        if isinstance(event, yaml.NodeEvent):
            nodes += 1  # without aliases, the nodes the full parse would compose and count
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth >= MAX_DEPTH:
                return UNDECIDED  # near the bound, which counts scalars as a level too: let it decide
            if depth == 2 and top_is_mapping:
                if key_next:
                    return UNDECIDED  # a complex key
                if key is not None:
                    found[key] = None  # present, but not a string
                key_next = True
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        elif isinstance(event, yaml.ScalarEvent) and depth == 1 and top_is_mapping:
            tag = resolver.resolve(yaml.ScalarNode, event.value, event.implicit)
            if key_next:
                if tag == _MERGE_TAG:
                    return UNDECIDED
                key = event.value if tag == _STR_TAG else None
                key_next = False
            else:
                if key is not None:
                    found[key] = event.value if tag == _STR_TAG else None
                key_next = True
        elif isinstance(event, yaml.DocumentEndEvent):
            break
    if not parser.check_event(yaml.StreamEndEvent) or nodes > MAX_EXPANDED_NODES:
        return None  # a second document, or too large: refused by the full parse
    kind = found.get("kind")
    return kind if top_is_mapping and "apiVersion" in found and isinstance(kind, str) else None


def _reader_problem(exc: yaml.reader.ReaderError, text: str) -> YamlProblem:
    line = text.count("\n", 0, exc.position) + 1
    code = exc.character if isinstance(exc.character, int) else 0
    return YamlProblem(
        f"control character U+{code:04X} is not allowed in YAML"
        f" (write it escaped in a double-quoted string, e.g. \"\\x{code:02x}\")",
        line,
    )
