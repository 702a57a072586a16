# The Debian packages the project needs, in one list: `make deps-apt` (part of every build and
# test) installs those missing, after one `apt-get update`. Each line says who needs it.
APT_PACKAGES += protobuf-compiler # protoc: the core's etcd lease (etcd-client's gRPC code)
APT_PACKAGES += etcd-server # etcd 3.4: every language's etcd lease tests, the service's, nemesis
APT_PACKAGES += etcd-client # etcdctl: those tests revoke leases, add users, take snapshots
APT_PACKAGES += zookeeper # ZooKeeper 3.8 (tests/stores/with_zookeeper.sh, core/tests)
APT_PACKAGES += default-jre-headless # the Java runtime ZooKeeper runs on
APT_PACKAGES += openssl # the TLS tests' CA, server and client certificates
APT_PACKAGES += pkg-config cmake g++ # the C ABI's programs; the SDK's find_package test; C++
APT_PACKAGES += valgrind # the C tests under memcheck
APT_PACKAGES += libcjson-dev # the C scenario runner reads tests/vectors with cJSON
APT_PACKAGES += nlohmann-json3-dev # the C++ scenario runner reads them with nlohmann/json
APT_PACKAGES += postgresql postgresql-contrib # test_postgres.py; the B-tree benchmark (pgstattuple)
APT_PACKAGES += curl # the service's load benchmark checks a request first
APT_PACKAGES += wrk # the soak's load on the service, and make bench-cli
APT_PACKAGES += stress-ng # make test-loaded: make test with both cores kept busy
APT_PACKAGES += faketime # the restart guard's tests: a successor's clock stepped back (libfaketime)
APT_PACKAGES += spin # make model / test-model: the lease protocol's model check
# Debian's own python3 needs python3-venv for `python3 -m venv`; one that ships ensurepip (pyenv's,
# python.org's) does not.
APT_PACKAGES += $(if $(shell python3 -c 'import ensurepip' 2>/dev/null && echo ok),,python3-venv)
