#!/usr/bin/env python3
"""Every package selection the build uses compiles the workspace's one set of features.

cargo unifies features over the packages a command selects, so `cargo build -p polyflake-ffi`,
maturin (polyflake-python) and napi (polyflake-node) would each compile their own variant of
tokio, hyper, the core and everything between, unless every crate depends on polyflake-hack
(.build/hack/, kept by cargo-hakari), which asks for the union. This check needs no build and no
cargo-hakari: it asks `cargo tree` for the features each selection resolves and compares them
with the whole workspace's. A difference names the package and both feature lists; the cure is
`cargo hakari generate && cargo hakari manage-deps` (see .config/hakari.toml).
"""
import subprocess
import sys

SELECTIONS = [
    ["-p", "polyflake", "-e", "dev"],
    ["-p", "polyflake-ffi"],
    ["-p", "polyflake-ffi", "-e", "dev"],
    ["-p", "polyflake-service", "--features", "polyflake-service/workspace-hack"],
    ["-p", "polyflake-service", "--features", "polyflake-service/workspace-hack", "-e", "dev"],
    ["-p", "polyflake-cli"],
    ["-p", "polyflake-cli", "-e", "dev"],
    ["-p", "polyflake-sim", "-e", "dev"],
    ["-p", "polyflake-python", "--features", "polyflake-python/workspace-hack"],
    ["-p", "polyflake-node", "--features", "polyflake-node/workspace-hack"],
    ["-p", "polyflake-java", "--features", "polyflake-java/workspace-hack"],
]


def resolve(args):
    out = subprocess.run(
        ["cargo", "tree", *args, "-e", "normal,build", "--prefix", "none", "-f", "{p} [{f}]"],
        check=True, capture_output=True, text=True,
    ).stdout
    seen = set()
    for line in out.splitlines():
        line = line.replace(" (*)", "").replace(" (proc-macro)", "").strip()
        if line:
            seen.add(line)
    return seen


def main():
    workspace = resolve(["--workspace", "-e", "dev"])
    bad = 0
    for sel in SELECTIONS:
        # The selected package itself may carry a feature of its own (workspace-hack).
        own = sel[1] + " v"
        extra = sorted(line for line in resolve(sel) - workspace if not line.startswith(own))
        name = " ".join(sel)
        if extra:
            bad += 1
            print(f"{name}: {len(extra)} package(s) with features the workspace build does not have:")
            for line in extra:
                print(f"  {line}")
        else:
            print(f"{name}: the workspace's features")
    if bad:
        print("run: cargo install cargo-hakari --locked && cargo hakari generate && cargo hakari manage-deps")
        sys.exit(1)


if __name__ == "__main__":
    main()
