"""The type stubs of the compiled kernels (sowsolve/cext/*.pyi) name exactly what each kernel
module offers, with the parameters the runtime takes.

Public names are those without a leading underscore, leaving out imported modules (`np`): the
rest of what dir() shows is private by that convention, dunders included, and so are the names
Cython adds on its own (`__pyx_unpickle_*` for modules with a cdef enum, `__test__`).  Cython
exposes the signatures of def functions and methods (binding is on in Cython 3) but not those of
cdef classes' constructors (__cinit__); those are read from the .pyx source installed beside the
module.
"""
import ast
import importlib
import importlib.machinery
import inspect
import pathlib
import re
import types

import pytest

import sowsolve.cext

CEXT = pathlib.Path(sowsolve.cext.__file__).parent


def compiled_modules() -> list[str]:
    """Names of the compiled modules of the package (every file with an extension suffix)."""
    suffixes = sorted(importlib.machinery.EXTENSION_SUFFIXES, key=len, reverse=True)
    names = set()
    for path in CEXT.iterdir():
        suffix = next((s for s in suffixes if path.name.endswith(s)), None)
        if suffix:
            names.add(path.name[:-len(suffix)])
    return sorted(names)


def public(name: str) -> bool:
    return not name.startswith("_")


# --- what the stub says ------------------------------------------------------------------

def stub_names(body: list) -> dict:
    """{name: node} of the public names a stub's module or class body defines."""
    names = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.Assign):
            names.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})
    return {name: node for name, node in names.items() if public(name)}


def is_property(node) -> bool:
    return isinstance(node, ast.FunctionDef) and any(
        isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)


MISSING = object()


def stub_parameters(node: ast.FunctionDef) -> list:
    """[(name, default)] of a stub function, default MISSING when there is none, Ellipsis when
    the stub does not say it, else its literal value."""
    args = node.args
    positional = args.posonlyargs + args.args
    defaults = [MISSING] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(positional, defaults))
    if args.vararg:
        pairs.append((ast.arg("*" + args.vararg.arg), MISSING))
    pairs += [(a, MISSING if d is None else d) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        pairs.append((ast.arg("**" + args.kwarg.arg), MISSING))
    return [(a.arg, d if d is MISSING else ast.literal_eval(d)) for a, d in pairs]


# --- what the runtime has ----------------------------------------------------------------

def runtime_parameters(obj) -> list:
    marks = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    return [(marks.get(p.kind, "") + p.name, MISSING if p.default is p.empty else p.default)
            for p in inspect.signature(obj).parameters.values()]


def cython_split(text: str, sep: str) -> list:
    """`text` cut at each `sep` outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch in "([{") - (ch in ")]}")
        if ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def pyx_constructor(module: str, cls: str) -> list:
    """[(name, default)] of the constructor of cdef class `cls` in the module's .pyx source,
    default Ellipsis when it has one (the source text is not evaluated), as the stubs say it."""
    source = (CEXT / f"{module}.pyx").read_text()
    head = re.search(rf"^cdef class {cls}\b.*?:\n", source, re.M)
    assert head, f"{module}.pyx has no cdef class {cls}"
    end = re.search(r"^\S", source[head.end():], re.M)
    body = source[head.end(): head.end() + end.start() if end else len(source)]
    found = re.search(r"^    def (?:__cinit__|__init__)\((.*?)\):", body, re.M | re.S)
    if found is None:
        return [("self", MISSING), ("*args", MISSING), ("**kwargs", MISSING)]
    params = []
    for part in cython_split(" ".join(found.group(1).split()), ","):
        declared, *default = cython_split(part, "=")
        params.append((re.search(r"(\w+)\s*$", declared).group(1), ... if default else MISSING))
    return params


def runtime_members(cls: type) -> dict:
    """{name: object} of a class's own public members, with an exception's instance attributes
    (an instance built with 1 for every argument)."""
    members = {name: value for name, value in vars(cls).items() if public(name)}
    if issubclass(cls, BaseException):
        count = len(inspect.signature(cls).parameters)
        members.update({name: value for name, value in vars(cls(*[1] * count)).items()
                        if public(name)})
    return members


# --- the comparison ----------------------------------------------------------------------

def compare_parameters(where: str, stub: list, runtime: list) -> list:
    problems = []
    if [name for name, _ in stub] != [name for name, _ in runtime]:
        problems.append(f"{where}: the stub takes {[n for n, _ in stub]}, "
                        f"the runtime {[n for n, _ in runtime]}")
        return problems
    for (name, said), (_, actual) in zip(stub, runtime):
        if (said is MISSING) != (actual is MISSING):
            problems.append(f"{where}: parameter {name} has a default in only one of them")
        elif said is not MISSING and said is not ... and said != actual:
            problems.append(f"{where}: parameter {name} defaults to {said!r} in the stub, "
                            f"{actual!r} at runtime")
    return problems


def compare_class(module, where: str, node: ast.ClassDef, cls: type) -> list:
    problems = []
    said = stub_names(node.body)
    members = runtime_members(cls)
    for name in sorted(members.keys() - said.keys()):
        problems.append(f"{where}.{name} is missing from the stub")
    for name in sorted(said.keys() - members.keys()):
        problems.append(f"{where}.{name} is in the stub but not at runtime")
    for name in sorted(said.keys() & members.keys()):
        stub_node, value = said[name], members[name]
        if is_property(stub_node):
            if not inspect.isdatadescriptor(value):
                problems.append(f"{where}.{name} is a property in the stub but not at runtime")
        elif isinstance(stub_node, ast.FunctionDef):
            if not callable(value):
                problems.append(f"{where}.{name} is a method in the stub but not at runtime")
            else:
                problems += compare_parameters(f"{where}.{name}", stub_parameters(stub_node),
                                               runtime_parameters(value))
    init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"),
                None)
    if init is None:
        problems.append(f"{where}: the stub has no __init__")
    else:
        own = vars(cls).get("__init__")
        if own is not None and not isinstance(own, types.WrapperDescriptorType):
            runtime = runtime_parameters(own)
        else:       # a cdef class: Cython exposes no signature of its constructor
            runtime = pyx_constructor(module.__name__.rpartition(".")[2], cls.__name__)
        problems += compare_parameters(f"{where}.__init__", stub_parameters(init), runtime)
    return problems


def differences(name: str, stub_text: str) -> list:
    """What the stub text of compiled module `name` gets wrong about the module."""
    module = importlib.import_module(f"sowsolve.cext.{name}")
    said = stub_names(ast.parse(stub_text).body)
    actual = {key: value for key, value in vars(module).items()
              if public(key) and not isinstance(value, types.ModuleType)}
    problems = [f"{name}.{key} is missing from the stub" for key in sorted(actual.keys() - said.keys())]
    problems += [f"{name}.{key} is in the stub but not at runtime"
                 for key in sorted(said.keys() - actual.keys())]
    for key in sorted(said.keys() & actual.keys()):
        node, value = said[key], actual[key]
        where = f"{name}.{key}"
        if isinstance(node, ast.ClassDef):
            if not isinstance(value, type):
                problems.append(f"{where} is a class in the stub but not at runtime")
            else:
                problems += compare_class(module, where, node, value)
        elif isinstance(node, ast.FunctionDef):
            if not callable(value) or isinstance(value, type):
                problems.append(f"{where} is a function in the stub but not at runtime")
            else:
                problems += compare_parameters(where, stub_parameters(node), runtime_parameters(value))
        elif callable(value):
            problems.append(f"{where} is a constant in the stub but callable at runtime")
    return problems


# --- the tests ---------------------------------------------------------------------------

def test_every_kernel_is_compiled_here():
    # the list below only guards against an empty or partial build making the tests vacuous
    assert {"diffusion", "overflow", "retrograde", "scoresolve", "ttsolve", "zigzag"} <= set(compiled_modules())


@pytest.mark.parametrize("name", compiled_modules())
def test_the_stub_names_exactly_what_the_module_offers(name):
    stub = CEXT / f"{name}.pyi"
    assert stub.is_file(), f"no stub {stub.name} for the compiled module {name}"
    assert differences(name, stub.read_text()) == []


def test_the_package_is_marked_as_typed():
    assert (CEXT / "py.typed").is_file()


def drop(text: str, name: str, inside: str | None = None) -> str:
    """The stub text without the definition of `name` (at top level, or in class `inside`)."""
    tree = ast.parse(text)
    body = tree.body
    if inside:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == inside).body
    kept = [n for n in body if stub_names([n]).keys() != {name}]
    assert len(kept) == len(body) - 1
    body[:] = kept or [ast.Expr(ast.Constant(...))]
    return ast.unparse(tree)


def test_the_comparison_notices_a_missing_name_member_or_parameter():
    text = (CEXT / "zigzag.pyi").read_text()
    assert differences("zigzag", drop(text, "tier_size")) == ["zigzag.tier_size is missing from the stub"]
    assert differences("zigzag", drop(text, "npits", inside="ZigZagKernel")) == [
        "zigzag.ZigZagKernel.npits is missing from the stub"]
    renamed = text.replace("def perft(self, board: Sequence[int], side: int",
                           "def perft(self, position: Sequence[int], side: int")
    assert renamed != text
    assert differences("zigzag", renamed) != []
    constructor = text.replace("def __init__(self, cols: int,", "def __init__(self, columns: int,")
    assert constructor != text
    assert differences("zigzag", constructor) != []
    retrograde = (CEXT / "retrograde.pyi").read_text()
    assert differences("retrograde", retrograde.replace("threads: int = 1", "threads: int = 2")) != []
    ttsolve = (CEXT / "ttsolve.pyi").read_text()
    assert differences("ttsolve", drop(ttsolve, "solved", inside="SearchLimit")) == [
        "ttsolve.SearchLimit.solved is missing from the stub"]
