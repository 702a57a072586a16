# Node identity: file and etcd leases in the core (core/src/lease/). Their Rust tests run in
# `cargo test --release -p polyflake` (test-rust); this file adds what they and the build need:
#   protobuf-compiler  protoc, for etcd-client's generated gRPC code (core feature `etcd`)
#   etcd-server        /usr/bin/etcd 3.4, started and stopped by core/tests/etcd_lease.rs
#   etcd-client        /usr/bin/etcdctl, which those tests use to revoke a lease
#
#   make test-lease    only the lease tests (node sources, file leases, fork, etcd)

APT_PACKAGES += protobuf-compiler etcd-server etcd-client

.PHONY: test-lease

test-lease:
	$(call say,lease tests: node sources; file leases (50 processes for 16 slots; SIGKILL; skewed clocks); fork; real etcd)
	$(CARGO) test --release -p polyflake --test node_sources --test file_lease --test lease_fork --test etcd_lease
