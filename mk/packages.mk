# The Debian packages the project needs, in one list: `make deps-apt` (part of every build and
# test) installs those missing, after one `apt-get update`. Each line says who needs it.

APT_PACKAGES += \
	protobuf-compiler \
	etcd-server \
	etcd-client \
	zookeeper \
	default-jre-headless \
	openssl \
	pkg-config \
	cmake \
	g++ \
	valgrind \
	libcjson-dev \
	nlohmann-json3-dev \
	postgresql \
	postgresql-contrib \
	curl \
	wrk \
	stress-ng \
	faketime \
	spin
# protobuf-compiler     protoc: the core's etcd lease (etcd-client's generated gRPC code) needs
#                       it to build, so every crate over the core with default features does
# etcd-server           /usr/bin/etcd 3.4: the etcd lease tests of every language, the service's,
#                       the nemesis run (started on loopback with temporary data dirs)
# etcd-client           /usr/bin/etcdctl: those tests revoke leases, add users, take snapshots
# zookeeper             ZooKeeper 3.8 (tests/stores/with_zookeeper.sh, core/tests/zookeeper_lease.rs)
# default-jre-headless  the Java runtime ZooKeeper runs on
# openssl               the TLS tests' CA, server and client certificates
# pkg-config, cmake,    the C ABI's programs (pkg-config), the SDK's find_package test (cmake),
#   g++                 the C++ tests
# valgrind              the C tests under memcheck
# libcjson-dev          the C scenario runner reads tests/vectors with cJSON
# nlohmann-json3-dev    the C++ scenario runner reads them with nlohmann/json
# postgresql(-contrib)  test_postgres.py (UUIDv7 sort check) and the B-tree benchmark (pgstattuple)
# curl                  the service's load benchmark checks a request first
# wrk                   the soak's load on the service, and make bench-cli
# stress-ng             make test-loaded: make test with both cores kept busy
# faketime              the restart guard's tests: a successor whose clock is stepped back (libfaketime)
# spin                  make model / test-model: the lease protocol's model check
# Debian's own python3 needs python3-venv for `python3 -m venv`; one that ships ensurepip (pyenv's,
# python.org's) does not.
APT_PACKAGES += $(if $(shell python3 -c 'import ensurepip' 2>/dev/null && echo ok),,python3-venv)
