# Node identity: file, etcd and ZooKeeper leases in the core (core/src/lease/); their Rust tests
# run in test-rust, and start their own etcd and ZooKeeper (Debian packages: .build/mk/packages.mk).

test-lease: ## [part] only the lease tests: node sources; file leases (50 processes for 16 slots; SIGKILL; skewed clocks); fork; real etcd (TLS, auth); real ZooKeeper (TLS, digest auth and ACLs)
	$(call say,lease tests: node sources; file leases (50 processes for 16 slots; SIGKILL; skewed clocks); fork; real etcd (TLS, auth); real ZooKeeper (TLS, digest auth and ACLs))
	$(CARGO) test --release -p polyflake --test node_sources --test file_lease --test lease_fork --test etcd_lease --test etcd_fork --test zookeeper_lease --test zookeeper_fork
