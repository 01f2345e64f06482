"""Reading YAML through libyaml's parser (fakecluster/scenario/reading.py): the same documents, the same
node lines, the same errors as PyYAML's Python loader, which reads anything the fast path refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fakecluster.scenario import reading
from fakecluster.scenario.discovery import SCENARIO_SUFFIXES
from fakecluster.scenario.reading import YamlProblem, parse_bounded_yaml

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(p for p in (ROOT / "scenarios").rglob("*") if p.suffix in SCENARIO_SUFFIXES)


def _marks(node: Any, out: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    out.append((type(node).__name__, node.tag, node.start_mark.line, node.start_mark.column,
                node.end_mark.line, node.end_mark.column))
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            _marks(key, out)
            _marks(value, out)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _marks(item, out)
    return out


def _python_only(text: str) -> Any:
    try:
        try:
            loader = reading._BoundedLoader(text)
        except yaml.reader.ReaderError as exc:
            raise reading._reader_problem(exc, text) from None
        return reading._parse(loader, text)
    except YamlProblem as err:
        return ("error", err.message, err.line)


def test_libyaml_is_there_and_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyYAML's wheels carry libyaml; a clean document goes through it."""
    assert reading._CParser is not None
    used: list[str] = []
    original = reading._BoundedCLoader.__init__

    def spy(self: Any, stream: str) -> None:
        used.append(stream)
        original(self, stream)

    monkeypatch.setattr(reading._BoundedCLoader, "__init__", spy)
    assert parse_bounded_yaml("a: [1, 2]\n")[1] == {"a": [1, 2]}
    assert used == ["a: [1, 2]\n"]


def test_every_library_scenario_reads_the_same_through_either_parser() -> None:
    """Data, and every node's tag and start and end marks (the lines errors and field paths name)."""
    assert len(FILES) > 300
    for path in FILES:
        text = path.read_text()
        fast = reading._parse(reading._BoundedCLoader(text), text)
        slow = reading._parse(reading._BoundedLoader(text), text)
        assert fast[1] == slow[1], path
        assert _marks(fast[0], []) == _marks(slow[0], []), path


@pytest.mark.parametrize("text", [
    "a: b: c\n",  # mapping values not allowed here
    "a: [1, 2\n",  # unclosed flow sequence
    "a: 1\n---\nb: 2\n",  # two documents
    "a: \x07\n",  # an unprintable character: the Python reader's own error
    "a: *nothing\n",  # an undefined alias
    "a:\n  - b\n - c\n",  # bad indentation
    "[" * 150 + "]" * 150 + "\n",  # deeper than the bound
    "x: " + "1" * 5000 + "\n",  # an integer Python will not convert
])
def test_a_refused_document_reports_what_the_python_loader_reports(text: str) -> None:
    with pytest.raises(YamlProblem) as err:
        parse_bounded_yaml(text)
    assert ("error", err.value.message, err.value.line) == _python_only(text)


def test_the_expanded_size_without_aliases_is_the_composed_node_count() -> None:
    """A document without "*" skips the alias walk: the count it uses instead is the walk's own."""
    for path in FILES[:60]:
        text = path.read_text()
        if "*" in text:
            continue
        loader = reading._BoundedLoader(text)
        node = loader.get_single_node()
        assert loader._nodes == reading._expanded_size(node), path
        loader.dispose()


def test_a_document_too_large_is_refused_with_or_without_aliases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "MAX_EXPANDED_NODES", 1000)
    parse_bounded_yaml("[" + ",".join(["1"] * 999) + "]\n")  # 1,000 nodes with the list itself
    with pytest.raises(YamlProblem, match="expand to more than"):
        parse_bounded_yaml("[" + ",".join(["1"] * 1000) + "]\n")
    with pytest.raises(YamlProblem, match="expand to more than"):
        parse_bounded_yaml("a: &a [" + ",".join(["1"] * 99) + "]\nb: [" + ", ".join(["*a"] * 10) + "]\n")


def _by_full_parse(text: str) -> str | None:
    from fakecluster.scenario.discovery import manifest_kind

    try:
        return manifest_kind(parse_bounded_yaml(text)[1])
    except YamlProblem:
        return None


MANIFEST_CASES = [
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
    "apiVersion: v1\nkind: 12\n",  # kind not a string
    "apiVersion: v1\nkind: 'yes'\n",
    "apiVersion: v1\nkind: yes\n",  # a YAML 1.1 boolean
    "apiVersion: v1\nkind: ~\n",
    "apiVersion: v1\nkind: [Pod]\n",
    "apiVersion: [v1]\nkind: Pod\n",
    "kind: Pod\n",
    "'apiVersion': v1\n\"kind\": Pod\n",
    "{apiVersion: v1, kind: Pod}\n",
    "apiVersion: v1\nkind: Pod\nkind: [x]\n",  # the last of two keys wins
    "apiVersion: v1\nkind: Job\n---\nkind: Pod\n",  # two documents: refused
    "- apiVersion: v1\n  kind: Pod\n",
    "just a string\n",
    "",
    "apiVersion: v1\nkind: !!str 5\n",  # a tag: decided by the full parse
    "base: &b {apiVersion: v1, kind: Pod}\n<<: *b\n",  # a merge key and an alias
    "? [complex]\n: key\napiVersion: v1\nkind: Pod\n",
    "apiVersion: v1\nkind: Pod\nspec: " + "[" * 120 + "]" * 120 + "\n",  # past the nesting bound
    "apiVersion: v1\nkind: Pod\nbroken: [\n",
    "apiVersion: v1\nkind: Pod\nbell: \x07\n",
]


@pytest.mark.parametrize("text", MANIFEST_CASES)
def test_a_manifest_is_recognised_from_events_as_the_full_parse_recognises_it(text: str) -> None:
    fast = reading.manifest_kind_of(text)
    assert (_by_full_parse(text) if fast is reading.UNDECIDED else fast) == _by_full_parse(text)


def test_the_events_decide_for_every_library_file_as_the_full_parse() -> None:
    undecided = 0
    for path in FILES:
        text = path.read_text()
        fast = reading.manifest_kind_of(text)
        undecided += fast is reading.UNDECIDED
        if fast is not reading.UNDECIDED:
            assert fast == _by_full_parse(text), path
    assert undecided < len(FILES) // 10  # the events decide nearly every real file


def test_plain_manifests_and_scenarios_are_decided_from_events_alone() -> None:
    assert reading.manifest_kind_of("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n") == "Pod"
    assert reading.manifest_kind_of("name: s\npods: []\njobset: {apiVersion: v1, kind: JobSet}\n") is None
    assert reading.manifest_kind_of("a: *x\n") is reading.UNDECIDED
