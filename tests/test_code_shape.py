"""The code's shape, as docs/architecture.md promises it: small functions, one place for an index's file names and
its manifest, training that asks retrieval for features rather than driving its steps, and no reads of another
object's private attributes. Each is read from the source (Python's own parser), so none can pass by wording."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "citator"
MAX_PARAMETERS, MAX_LINES = 8, 80


def _modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"


def test_no_function_takes_more_than_eight_parameters_or_runs_past_eighty_lines() -> None:
    found = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            args = node.args
            names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
            count = len(names) - (names[:1] in (["self"], ["cls"])) + (args.vararg is not None) \
                + (args.kwarg is not None)
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if count > MAX_PARAMETERS or lines > MAX_LINES:
                found.append(f"{_where(path, node)} {getattr(node, 'name', 'lambda')}: {count} parameters, "
                             f"{lines} lines")
    assert not found, "\n".join(found)


def test_training_is_its_four_steps() -> None:
    lines = (SRC / "stance" / "learn" / "train.py").read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"stance/learn/train.py has {lines} lines"


def _layout_names() -> dict[str, str]:
    """Every file and folder name the layout module defines: its own module-level string constants."""
    tree = ast.parse((SRC / "stance" / "retrieve" / "layout.py").read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs = (zip(target.elts, node.value.elts) if isinstance(target, ast.Tuple)
                     and isinstance(node.value, ast.Tuple) else [(target, node.value)])
            out.update({t.id: v.value for t, v in pairs if isinstance(t, ast.Name) and isinstance(v, ast.Constant)
                        and isinstance(v.value, str) and t.id != "FORMAT"})
    return out


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions: words about names, not names used."""
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            out.add(id(body[0].value))
    return out


# Strings equal to an index's names that are not about an index: (file, string) -> why.
NOT_AN_INDEX = {
    ("stance/retrieve/model.py", "manifest.json"): "a trained model's own manifest",
    ("stance/retrieve/model.py", "memory"): "a trained model's memory folder, which a build copies",
    ("stance/retrieve/model.py", "ranker.json"): "a trained model's ranker file, which a build copies",
    ("statutes/run.py", "manifest.json"): "a statute benchmark run's manifest",
    ("stance/brief/records.py", "memory"): "the family of the memory_* signals, as a brief names it",
    ("stance/learn/fitting.py", "memory"): "the memory's timing in a model's report (memory_seconds)",
}
# An index's names that the output rule (data/atomic.py, a floor below stance) needs to recognise an index directory
# and refuse writes into it: (file, string) -> the layout's name it must equal.
BELOW_THE_LAYOUT = {
    ("data/atomic.py", ".build.lock"): "BUILD_LOCK",
    ("data/atomic.py", "manifest.json"): "MANIFEST",
}


def test_index_file_names_are_spelled_only_in_the_layout_module() -> None:
    names = _layout_names()
    assert {"DOC_IDS", "DENSE", "MEMORY_LINKS", "LEXICAL_PASSAGE", "MANIFEST", "DOCUMENTS"} <= set(names)
    values = set(names.values())
    # A name with an extension or a slash is recognisable inside a longer string (an f-string's part, a path).
    distinctive = {v for v in values if "." in v.strip(".") or "/" in v}
    found = []
    for path, tree in _modules():
        where = path.relative_to(SRC).as_posix()
        if where == "stance/retrieve/layout.py":
            continue
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in docstrings:
                continue
            hit = node.value if node.value in values else next((v for v in distinctive if v in node.value), None)
            if hit is not None and (where, hit) not in NOT_AN_INDEX and (where, hit) not in BELOW_THE_LAYOUT:
                found.append(f"{_where(path, node)}: {node.value!r}")
    assert not found, "index file names outside stance/retrieve/layout.py:\n" + "\n".join(found)


def test_the_output_rule_knows_an_index_by_the_layouts_names() -> None:
    from citator.data import atomic
    from citator.stance.retrieve import layout

    assert (atomic.INDEX_LOCK, atomic.INDEX_MANIFEST) == (layout.BUILD_LOCK, layout.MANIFEST)
    names = _layout_names()
    assert all(names[name] == value for (_, value), name in BELOW_THE_LAYOUT.items())


def test_every_manifest_is_made_in_one_place() -> None:
    sites = [_where(path, node) for path, tree in _modules() for node in ast.walk(tree)
             if isinstance(node, ast.Call) and ((isinstance(node.func, ast.Name) and node.func.id == "Manifest")
                                                or (isinstance(node.func, ast.Attribute)
                                                    and node.func.attr == "Manifest"))]
    assert len(sites) == 1 and sites[0].startswith("src/citator/stance/retrieve/layout.py"), sites


def test_training_asks_the_searcher_for_features_and_drives_none_of_its_steps() -> None:
    steps = re.compile(r"searcher\.(candidates|signal_matrices|fuse)\(")
    found = [f"{path.name}: {m.group(0)}" for path in sorted((SRC / "stance" / "learn").glob("*.py"))
             for m in steps.finditer(path.read_text(encoding="utf-8"))]
    assert not found, found


# Attributes of other libraries that start with an underscore and have no public name: (expression) -> why.
LIBRARY_NAMES = {
    "argparse._SubParsersAction": "the type of argparse's subcommands (typeshed names no other)",
    "os._exit": "public: the exit without cleanup a forked child needs",
    "torch._int_mm": "torch's int8 matrix product, which has no public name",
    "torch.ops.mkldnn._is_mkldnn_bf16_supported": "oneDNN's bf16 check, which torch exposes under no other name",
}


def test_no_module_reads_another_objects_private_attributes() -> None:
    found = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if ast.unparse(node) not in LIBRARY_NAMES:
                found.append(f"{_where(path, node)}: {ast.unparse(node)}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("module", ["citator.stance.workload", "citator.stance.retrieve"])
def test_retrieval_and_the_workload_know_nothing_of_training(module: str) -> None:
    """Held by import-linter (tests/test_layers.py runs every contract); here the contract itself must be there."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert any(c["type"] == "forbidden" and module in c["source_modules"]
               and "citator.stance.learn" in c["forbidden_modules"] for c in contracts)
