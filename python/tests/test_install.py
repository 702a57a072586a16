"""The package under test is the installed wheel, and it is complete."""

import pathlib
import sys

import polyflake
import polyflake._polyflake as native
import polyflake.testing

from conftest import REPO


def test_imported_from_site_packages_not_the_source_tree():
    pkg = pathlib.Path(polyflake.__file__).resolve()
    assert "site-packages" in pkg.parts, pkg
    assert REPO / "python" not in pkg.parents, pkg
    assert pathlib.Path(sys.prefix).resolve() in pkg.parents


def test_native_module_is_abi3_and_private():
    so = pathlib.Path(native.__file__).name
    assert so.startswith("_polyflake.abi3."), so
    assert polyflake.Snowflake is native.Snowflake


def test_stubs_and_py_typed_are_installed():
    pkg = pathlib.Path(polyflake.__file__).parent
    for name in ["py.typed", "__init__.pyi", "_polyflake.pyi", "testing.pyi"]:
        assert (pkg / name).is_file(), name


def test_all_is_complete_and_importable():
    for name in polyflake.__all__:
        assert hasattr(polyflake, name), name
    public = {n for n in dir(native) if not n.startswith("_")} - {"ManualClock", "ScriptedClock"}
    assert public <= set(polyflake.__all__), public - set(polyflake.__all__)
    assert polyflake.testing.__all__ == ["ManualClock", "ScriptedClock"]
