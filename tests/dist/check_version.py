#!/usr/bin/env python3
"""One version everywhere: the workspace version in Cargo.toml is the single source.

Checks that every place a user sees a version carries the workspace's: the crates (inherited),
pyproject.toml (dynamic: maturin takes the crate's), node/package.json, its lock file and the
platform package, the header's POLYFLAKE_VERSION, the Go module's ModuleVersion, the .pc and
CMake templates (filled from the workspace when the SDK is built) and CHANGELOG.md. With
--dist DIR it checks the built artifacts' names and the versions inside them too.

    python3 tests/dist/check_version.py [--root DIR] [--dist DIR]

Exits 1 and names every file that drifts.
"""

import argparse
import json
import pathlib
import re
import sys
import tarfile
import zipfile


def workspace_version(root: pathlib.Path) -> str:
    text = (root / "Cargo.toml").read_text(encoding="utf-8")
    section = text.split("[workspace.package]", 1)[1].split("\n[", 1)[0]
    m = re.search(r'^version\s*=\s*"([^"]+)"', section, re.M)
    if not m:
        sys.exit("Cargo.toml: no version in [workspace.package]")
    return m.group(1)


def one(pattern: str, text: str, what: str) -> str:
    found = re.findall(pattern, text, re.M)
    if len(found) != 1:
        raise LookupError(f"expected one {what}, found {len(found)}")
    return found[0]


def source_checks(root: pathlib.Path, version: str) -> list:
    """(file, what it says) pairs; each must say `version`."""
    checks = []
    for member in ["core", "ffi-c", "python", "node", "cli", "verify/sim", "java"]:
        text = (root / member / "Cargo.toml").read_text(encoding="utf-8")
        pkg = text.split("[package]", 1)[1].split("\n[", 1)[0]
        inherited = re.search(r"^version\.workspace\s*=\s*true", pkg, re.M)
        checks.append((f"{member}/Cargo.toml", version if inherited else "not version.workspace = true"))
    pyproject = (root / "python/pyproject.toml").read_text(encoding="utf-8")
    dynamic = re.search(r'^dynamic\s*=\s*\[[^\]]*"version"', pyproject, re.M)
    static = re.search(r'^version\s*=\s*"([^"]+)"', pyproject, re.M)
    checks.append(("python/pyproject.toml", version if dynamic and not static else
                   f"version {static.group(1) if static else 'missing'} instead of dynamic (from Cargo.toml)"))
    for rel in ["node/package.json", "node/npm/linux-x64-gnu/package.json"]:
        checks.append((rel, json.loads((root / rel).read_text(encoding="utf-8"))["version"]))
    lock = json.loads((root / "node/package-lock.json").read_text(encoding="utf-8"))
    checks.append(("node/package-lock.json", lock["version"]))
    checks.append(("node/package-lock.json (packages[''])", lock["packages"][""]["version"]))
    header = (root / "include/polyflake.h").read_text(encoding="utf-8")
    checks.append(("include/polyflake.h POLYFLAKE_VERSION",
                   one(r'^#define POLYFLAKE_VERSION "([^"]+)"', header, "#define POLYFLAKE_VERSION")))
    go = "\n".join(p.read_text(encoding="utf-8") for p in sorted((root / "go").glob("*.go")))
    checks.append(("go/ ModuleVersion", one(r'^const ModuleVersion = "([^"]+)"', go, "const ModuleVersion")))
    for rel in ["ffi-c/sdk/polyflake.pc.in", "ffi-c/sdk/polyflake-static.pc.in", "ffi-c/sdk/cmake/polyflake-config-version.cmake.in"]:
        text = (root / rel).read_text(encoding="utf-8")
        checks.append((rel, version if "@VERSION@" in text else "a literal version, not @VERSION@"))
    pom = (root / "java/pom.xml").read_text(encoding="utf-8")
    project = re.sub(r"<(parent|dependencies|build|profiles)>.*?</\1>", "", pom, flags=re.S)
    checks.append(("java/pom.xml <version>", one(r"^  <version>([^<]+)</version>", project, "project <version>")))
    changelog = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    released = re.findall(r"^## \[(\d[^\]]*)\]", changelog, re.M)
    checks.append(("CHANGELOG.md (newest release)", released[0] if released else "no release entry"))
    return checks


def dist_checks(dist: pathlib.Path, version: str) -> list:
    checks = []
    wheels = sorted(dist.glob("polyflake-*.whl"))
    for whl in wheels:
        checks.append((whl.name, whl.name.split("-")[1]))
        with zipfile.ZipFile(whl) as z:
            meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            text = z.read(meta).decode()
            checks.append((f"{whl.name} METADATA", one(r"^Version: (\S+)", text, "Version:")))
    sdists = sorted(dist.glob("polyflake-*.tar.gz"))
    sdists = [s for s in sdists if "linux" not in s.name and "go" not in s.name]
    for sd in sdists:
        checks.append((sd.name, sd.name[len("polyflake-"):-len(".tar.gz")]))
    for pattern, name in [("polyflake-[0-9]*.tgz", "polyflake"), ("polyflake-linux-x64-gnu-*.tgz", "polyflake-linux-x64-gnu")]:
        for tgz in sorted(dist.glob(pattern)):
            with tarfile.open(tgz) as t:
                pkg = json.load(t.extractfile("package/package.json"))
            checks.append((f"{tgz.name} package.json", pkg["version"]))
            for dep, want in pkg.get("optionalDependencies", {}).items():
                checks.append((f"{tgz.name} optionalDependencies[{dep}]", want))
    for sdk in sorted(dist.glob("polyflake-*-linux-x86_64.tar.gz")):
        checks.append((sdk.name, sdk.name[len("polyflake-"):-len("-linux-x86_64.tar.gz")]))
        with tarfile.open(sdk) as t:
            for m in t.getmembers():
                if m.name.endswith(".pc"):
                    text = t.extractfile(m).read().decode()
                    checks.append((f"{sdk.name}:{m.name}", one(r"^Version: (\S+)", text, "Version:")))
                if m.name.endswith("include/polyflake.h"):
                    text = t.extractfile(m).read().decode()
                    checks.append((f"{sdk.name}:{m.name}", one(r'^#define POLYFLAKE_VERSION "([^"]+)"', text, "POLYFLAKE_VERSION")))
    for jar in sorted(dist.glob("polyflake-*.jar")):
        checks.append((jar.name, re.sub(r"-(sources|javadoc)$", "", jar.name[len("polyflake-"):-len(".jar")])))
        with zipfile.ZipFile(jar) as z:
            props = "META-INF/maven/dev.polyflake/polyflake/pom.properties"
            if props in z.namelist():
                checks.append((f"{jar.name} pom.properties", one(r"^version=(\S+)", z.read(props).decode(), "version=")))
    for go in sorted(dist.glob("polyflake-go-*.tar.gz")):
        checks.append((go.name, go.name[len("polyflake-go-"):-len(".tar.gz")]))
    if not (wheels and sdists and checks):
        checks.append((str(dist), "no artifacts (run make dist)"))
    return checks


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parents[2])
    ap.add_argument("--dist", type=pathlib.Path)
    args = ap.parse_args()
    version = workspace_version(args.root)
    try:
        checks = source_checks(args.root, version)
        if args.dist:
            checks += dist_checks(args.dist, version)
    except (LookupError, OSError, KeyError) as e:
        print(f"version check: {e}")
        return 1
    drift = [(f, v) for f, v in checks if v != version]
    for f, v in drift:
        print(f"DRIFT {f}: {v} (the workspace version is {version})")
    if drift:
        return 1
    print(f"version {version} in all {len(checks)} places")
    return 0


if __name__ == "__main__":
    sys.exit(main())
