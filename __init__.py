"""Not the library: this is the checkout's own folder.

Python imports this file only when it is asked for `sowsolve` from the folder that holds the
checkout (which `git clone` names `sowsolve`): that folder would otherwise shadow the installed
package as an empty namespace package ("module 'sowsolve' has no attribute 'solve").  Here the
installed package is imported in its place, as if from any other folder; where none is
installed, one sentence says so.  The package itself is api/ (pyproject.toml maps it).
"""
import importlib as _importlib
import os as _os
import sys as _sys

if __name__ == "sowsolve":          # imported by another name (a test runner's): nothing to do
    _parent = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
    _saved = _sys.path[:]
    _sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or _os.curdir) != _parent]
    _sys.modules.pop(__name__, None)
    try:
        _installed = _importlib.import_module(__name__)
    except ImportError:
        raise ImportError("sowsolve is not installed: this is its source folder; install it "
                          "with pip install -e '.[test]' from inside it") from None
    finally:
        _sys.path[:] = _saved
    # the import that brought this file here returns what sys.modules holds under the name
    _sys.modules[__name__] = _installed
