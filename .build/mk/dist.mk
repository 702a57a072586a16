# Shipping: the packages users install without Rust, built into dist/ and proven by
# installing them the way users do. See docs/releasing.md for the artifacts, their sizes and the
# release workflow.
#
# Decisions:
# - The workspace version is the only version: every crate inherits it, pyproject.toml leaves it
#   dynamic, the header's POLYFLAKE_VERSION is a literal that ffi-c refuses to compile against a
#   different CARGO_PKG_VERSION, the .pc and CMake files are filled from it when packed. What
#   cannot derive it (node/package.json, its lock, the platform package.json, Go's ModuleVersion,
#   the newest CHANGELOG.md entry) is compared by tests/dist/check_version.py (make check-version,
#   in make test; with --dist also inside the built artifacts).
# - What ships is what was tested: the Node addon and the C SDK's libraries are the release build
#   every test and benchmark ran, stripped when packed. A dist profile (thin LTO, its own tree)
#   compiled the whole dependency tree again for artifacts no smaller (the .so 7.78 MB against
#   7.84 MB, the .node 8.41 against 8.48); only the static archive gains from LTO, and the SDK
#   tarball grows by about 5 MB: the price of four minutes less per make test and of shipping
#   exactly the tested build. The wheel keeps the dist profile (maturin links it through zig in
#   a tree of its own anyway).
# - manylinux2014 through zig: maturin --zig links against glibc 2.17 symbols, so auditwheel names
#   manylinux_2_17 on a Debian 12 build machine without a manylinux container.
# - The soname is libpolyflake.so.<ABI>, ABI = major, or 0.minor before 1.0 (0.1 and 0.2 may break
#   the ABI, as Cargo's semver does); it is set only by dist-c, so the tests' unversioned
#   target/release/libpolyflake.so stays as it is.
# - The SDK is relocatable: polyflake.pc derives its prefix from ${pcfiledir} and adds an rpath to
#   its lib/; polyflake-static.pc lists what rustc --print native-static-libs reports (not a
#   hand-kept list); the CMake package computes its prefix from its own directory. test-dist moves
#   the unpacked SDK before building against it.
# - npm, the napi-rs v3 layout staged from the checkout: node/package.json stays the development
#   package; the published polyflake is staged by tests/dist/stage_npm.js (the checked-in
#   index.js/index.d.ts, no install script, no Rust sources, one optionalDependencies entry per
#   platform package at the same version).
# - The smoke tests are the packages' own READMEs (the wheel's METADATA, the npm package's README,
#   README-C's programs in the SDK), so what users read is what was proven.
# - test-dist proves the absence of Rust by taking every PATH directory holding cargo, rustc or
#   rustup away and checking none is found; the local index holds the sdist too (a wheel pip could
#   not use fails the build), and the registries have no uplink.

DEPS_TARGETS += deps-dist
TEST_TARGETS += check-version test-dist

DIST := $(ROOT)/dist
DIST_VERSION := $(shell sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' $(ROOT)/Cargo.toml)
# The soname's ABI version: the major version, or for 0.x the minor too (0.1 and 0.2 may differ).
DIST_ABI := $(shell echo $(DIST_VERSION) | awk -F. '{ print ($$1 == 0 ? $$1 "." $$2 : $$1) }')
DIST_TOOLS := $(CARGO_TARGET_DIR)/dist-tools
DIST_VENV := $(DIST_TOOLS)/venv
DIST_STAGE := $(CARGO_TARGET_DIR)/dist-stage
# maturin links with zig for glibc 2.17 (manylinux2014); pypiserver and twine: the local index.
DIST_PY_TOOLS := maturin==1.16.0 ziglang==0.17.0 auditwheel==6.8.2 twine==7.0.0 pypiserver==2.4.2 mypy==2.4.1
DIST_SDK := polyflake-$(DIST_VERSION)-linux-x86_64
# The wheel's build, into the directory given after it (the warm-up runs it too), in a tree of its
# own: it links through zig (glibc 2.17), and its C code is built with zig cc.
DIST_WHEEL_TARGET := $(CARGO_TARGET_DIR)/wheel
WHEEL_BUILD = PATH=$(DIST_VENV)/bin:$$PATH maturin build --profile dist --zig --compatibility manylinux2014 \
	  --target x86_64-unknown-linux-gnu --target-dir $(DIST_WHEEL_TARGET) -i $(DIST_VENV)/bin/python \
	  -m python/Cargo.toml -o

deps-dist: ## the dist tools, pinned: maturin, zig, auditwheel, twine, pypiserver and mypy in target/dist-tools/venv; verdaccio and tsc in target/dist-tools/npm
	$(call say,dist tools: $(DIST_PY_TOOLS) in $(DIST_VENV); verdaccio and tsc in $(DIST_TOOLS)/npm)
	@$(B) venv $(DIST_VENV) $(DIST_PY_TOOLS)
	@mkdir -p $(DIST_TOOLS)/npm && cp tests/dist/registry/package.json tests/dist/registry/package-lock.json $(DIST_TOOLS)/npm/
	@$(B) npm-missing $(DIST_TOOLS)/npm verdaccio
check-version: ## [part] every place that carries a version carries the workspace's (Cargo.toml [workspace.package])
	$(call say,one version everywhere: $(DIST_VERSION) (Cargo.toml [workspace.package]))
	python3 tests/dist/check_version.py
dist: dist-python dist-node dist-c dist-go ## [tool] dist/: the abi3 wheel (manylinux2014, through zig) and the sdist; the npm packages polyflake and polyflake-linux-x64-gnu; the C SDK polyflake-VERSION-linux-x86_64.tar.gz; the Go module polyflake-go-VERSION.tar.gz; the Java jar (.build/mk/java.mk); then their contents and versions checked
	$(call say,dist/: contents and sizes)
	python3 tests/dist/check_contents.py $(DIST) $(DIST_VERSION) $(DIST_ABI)
	python3 tests/dist/check_version.py --dist $(DIST)

dist-python: deps-dist ## [tool] the abi3 wheel (maturin --zig, the dist profile: stripped, thin LTO) and the sdist, into dist/
	$(warm_now)
	$(call say,Python: abi3 wheel (manylinux2014 through zig) and sdist into dist/)
	@mkdir -p $(DIST) && rm -f $(DIST)/polyflake-*.whl $(DIST)/polyflake-$(DIST_VERSION).tar.gz
	$(WHEEL_BUILD) $(DIST)
	PATH=$(DIST_VENV)/bin:$$PATH maturin sdist -m python/Cargo.toml -o $(DIST)
	$(DIST_VENV)/bin/auditwheel show $(DIST)/polyflake-*.whl

# The main package ships what node/package.json's exports map names (the loader and types,
# drift-checked by test-node; polyflake/prometheus); check_contents.py checks every module the
# guide imports against it. The addon is build-node's ("What ships is what was tested", above).
dist-node: build-node ## [tool] the tested addon, stripped; npm pack of polyflake and polyflake-linux-x64-gnu into dist/
	$(call say,Node: the tested addon stripped; then npm pack of polyflake and polyflake-linux-x64-gnu)
	@mkdir -p $(DIST) && rm -f $(DIST)/polyflake-$(DIST_VERSION).tgz $(DIST)/polyflake-linux-x64-gnu-*.tgz
	rm -rf $(DIST_STAGE)/napi && mkdir -p $(DIST_STAGE)/napi
	cp node/polyflake.linux-x64-gnu.node $(DIST_STAGE)/napi/ && strip --strip-all $(DIST_STAGE)/napi/polyflake.linux-x64-gnu.node
	node tests/dist/stage_npm.js $(ROOT) $(DIST_STAGE)/npm $(DIST_STAGE)/napi/polyflake.linux-x64-gnu.node
	cd $(DIST_STAGE)/npm/polyflake && npm pack --silent --pack-destination $(DIST)
	cd $(DIST_STAGE)/npm/polyflake-linux-x64-gnu && npm pack --silent --pack-destination $(DIST)

# The library linked again with an soname (only here: the tests link the unversioned .so, which
# the next build-c links again without it); only the ffi crate compiles, on the tested release
# build's dependencies. rustc prints the static archive's system libraries for the .pc file.
DIST_C_BUILT := $(POLYFLAKE_RELEASE_DIR)
dist-c: ## [tool] the C SDK tarball from the tested release build, with the soname libpolyflake.so.<ABI>; relocatable (pkg-config and CMake)
	$(call say,C SDK: dist/$(DIST_SDK).tar.gz (soname libpolyflake.so.$(DIST_ABI)))
	@mkdir -p $(DIST) $(DIST_STAGE)
	$(CARGO) rustc -p polyflake-ffi --lib --release -- \
	  -C link-arg=-Wl,-soname,libpolyflake.so.$(DIST_ABI) --print native-static-libs 2> $(DIST_STAGE)/ffi-c.log \
	  || { cat $(DIST_STAGE)/ffi-c.log; exit 1; }
	bash tests/dist/pack_sdk.sh $(ROOT) $(DIST_C_BUILT) $(DIST_STAGE)/ffi-c.log \
	  $(DIST_VERSION) $(DIST_ABI) $(DIST_STAGE)/sdk/$(DIST_SDK) $(DIST)/$(DIST_SDK).tar.gz

# The SDK's .pc finds the library (docs/go.md, "Install from the release artifacts").
dist-go: ## [tool] the Go module as users vendor it: go/ as polyflake-go-VERSION/ in dist/polyflake-go-VERSION.tar.gz
	$(call say,Go: dist/polyflake-go-$(DIST_VERSION).tar.gz from go/)
	@mkdir -p $(DIST)
	tar -C $(ROOT) --sort=name --owner=0 --group=0 --mtime='2026-01-01 00:00Z' \
	  --transform 's,^go,polyflake-go-$(DIST_VERSION),' -czf $(DIST)/polyflake-go-$(DIST_VERSION).tar.gz go

test-dist: dist deps-dist ## [part] install as users do: a local PyPI (pypiserver) and npm registry (verdaccio) on free loopback ports, then with no cargo, rustc or rustup on PATH: pip install, npm install (+ tsc), the C SDK with pkg-config and CMake (shared and static, C and C++), a Go module on the packed go/, the Java jar
	$(call say,installing as users do: local PyPI and npm registries; no cargo/rustc/rustup on PATH)
	bash tests/dist/test_dist.sh $(ROOT) $(DIST) $(DIST_VERSION) $(DIST_TOOLS)
