# Node identity: file, etcd and ZooKeeper leases in the core (core/src/lease/). Their Rust tests
# run in `cargo test --release -p polyflake` (test-rust); this file adds what they and the build
# need:
#   protobuf-compiler     protoc, for etcd-client's generated gRPC code (core feature `etcd`)
#   etcd-server           /usr/bin/etcd 3.4, started and stopped by core/tests/etcd_lease.rs
#                         (plain, and with TLS, client certificates and authentication)
#   etcd-client           /usr/bin/etcdctl, which those tests use to revoke a lease, add a user
#                         and enable authentication
#   zookeeper             ZooKeeper 3.8 (/usr/share/java/zookeeper.jar), run on its Java main by
#                         core/tests/zookeeper_lease.rs (plain, TLS with client certificates,
#                         digest auth) on free loopback ports with a temporary data dir
#   default-jre-headless  the Java runtime it runs on
#   openssl               makes the tests' CA, server and client certificates
#
#   make test-lease    only the lease tests (node sources, file leases, fork, etcd, ZooKeeper)

# Debian packages: mk/packages.mk.

.PHONY: test-lease

test-lease:
	$(call say,lease tests: node sources; file leases (50 processes for 16 slots; SIGKILL; skewed clocks); fork; real etcd (TLS, auth); real ZooKeeper (TLS, digest auth and ACLs))
	$(CARGO) test --release -p polyflake --test node_sources --test file_lease --test lease_fork --test etcd_lease --test etcd_fork --test zookeeper_lease --test zookeeper_fork
