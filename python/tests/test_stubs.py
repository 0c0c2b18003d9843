"""The type stubs (python/eddy/__init__.pyi) and the docstrings match the compiled module: every name
in one is in the other, and everything public has a docstring (help(eddy.Simulation) is useful)."""
import ast
import inspect
from pathlib import Path

import eddy

STUBS = Path(eddy.__file__).with_name("__init__.pyi")


def stub_names():
    tree = ast.parse(STUBS.read_text())
    functions, classes = set(), {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions.add(node.name)
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
    return functions, classes


def public(cls):
    return {n for n in vars(cls) if not n.startswith("_")}


def test_stubs_name_what_the_module_has():
    functions, classes = stub_names()
    exported = set(eddy.__all__)
    assert functions | set(classes) == exported
    for name, members in classes.items():
        cls = getattr(eddy, name)
        assert inspect.isclass(cls)
        if issubclass(cls, Exception):
            continue
        assert public(cls) == {m for m in members if not m.startswith("_")}, name
        for m in members:
            assert hasattr(cls, m), f"{name}.{m}"


def documented(obj):
    """A docstring beyond the signature line pybind11 writes for every function."""
    doc = (obj.__doc__ or "").strip()
    if callable(obj) and not inspect.isclass(obj):
        doc = doc.partition("\n")[2].strip()
    return bool(doc)


def test_everything_public_has_a_docstring():
    missing = []
    for name in eddy.__all__:
        obj = getattr(eddy, name)
        if not documented(obj):
            missing.append(name)
        if inspect.isclass(obj) and not issubclass(obj, Exception):
            for m in public(obj):
                if not documented(getattr(obj, m)):
                    missing.append(f"{name}.{m}")
    assert not missing
