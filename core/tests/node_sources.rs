//! Node-id sources without a lease: environment variable, StatefulSet hostname ordinal, IPv4
//! address in a stated subnet.

use polyflake::{ErrorKind, Generator, Layout, ManualClock, NodeSource, NodeSourceKind};

fn build(source: NodeSource) -> Result<Generator, polyflake::Error> {
    // An injected clock keeps these generators out of the process-wide node-id guard.
    Generator::builder_from(source)
        .clock(ManualClock::new(1_737_747_358_021))
        .build()
}

#[test]
fn env_var() {
    std::env::set_var("PF_TEST_NODE_OK", "37");
    std::env::set_var("PF_TEST_NODE_BAD", "3x");
    std::env::set_var("PF_TEST_NODE_BIG", "1024");
    std::env::remove_var("PF_TEST_NODE_UNSET");
    let env = |v: &str| NodeSource::Env { var: v.into() };
    let g = build(env("PF_TEST_NODE_OK")).unwrap();
    assert_eq!(g.node_id(), 37);
    assert_eq!(g.node_source(), NodeSourceKind::Env);
    assert_eq!(g.health().source, NodeSourceKind::Env);
    assert!(g.health().lease.is_none());
    assert_eq!(g.next_id().unwrap(), 141264821508263936);

    let e = build(env("PF_TEST_NODE_UNSET")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidNodeSource);
    assert!(
        e.to_string().contains("PF_TEST_NODE_UNSET is not set"),
        "{e}"
    );
    let e = build(env("PF_TEST_NODE_BAD")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidNodeSource);
    assert!(e.to_string().contains("\"3x\""), "{e}");
    let e = build(env("PF_TEST_NODE_BIG")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidNodeId, "{e}");
}

#[test]
fn hostname_ordinal() {
    let host = |h: &str| NodeSource::Hostname {
        hostname: Some(h.into()),
    };
    assert_eq!(build(host("ids-7")).unwrap().node_id(), 7);
    assert_eq!(build(host("ids-api-0")).unwrap().node_id(), 0);
    assert_eq!(
        build(host("ids-513.ids.prod.svc.cluster.local"))
            .unwrap()
            .node_id(),
        513
    );
    for bad in ["ids", "ids-", "ids-x7", "7", "ids-7a", ""] {
        let e = build(host(bad)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidNodeSource, "{bad}");
        assert!(e.to_string().contains("has no ordinal"), "{e}");
    }
    let e = build(host("ids-1024")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidNodeId);
    // This host's own name: an ordinal or a clear error, never a guess.
    match build(NodeSource::Hostname { hostname: None }) {
        Ok(g) => assert!(g.node_id() < 1024),
        Err(e) => assert_eq!(e.kind(), ErrorKind::InvalidNodeSource),
    }
}

#[test]
fn ipv4_subnet() {
    let ip = |a: &str, p: u8| NodeSource::Ipv4 {
        addr: a.parse().unwrap(),
        prefix_len: p,
    };
    // A /22 has 2^10 = 1,024 addresses: exactly the 10-bit node field.
    assert_eq!(build(ip("10.20.3.255", 22)).unwrap().node_id(), 1023);
    assert_eq!(build(ip("10.20.4.0", 22)).unwrap().node_id(), 0);
    assert_eq!(build(ip("10.20.7.9", 22)).unwrap().node_id(), 3 * 256 + 9);
    assert_eq!(build(ip("192.168.1.77", 24)).unwrap().node_id(), 77);
    assert_eq!(build(ip("192.168.1.77", 32)).unwrap().node_id(), 0);
    // A /21 has 2,048: two addresses would share a node id.
    let e = build(ip("10.20.7.9", 21)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidNodeSource);
    let text = e.to_string();
    assert!(
        text.contains("/21") && text.contains("11 host bits"),
        "{text}"
    );
    assert!(text.contains("/22 or narrower"), "{text}");
    let e = build(ip("10.20.7.9", 33)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidNodeSource);
    // With 12 node bits a /20 fits.
    let g = Generator::builder_from(ip("10.20.31.1", 20))
        .layout(Layout::new(41, 12, 10).unwrap())
        .clock(ManualClock::new(1_737_747_358_021))
        .build()
        .unwrap();
    assert_eq!(g.node_id(), 15 * 256 + 1);
}

#[test]
fn static_source_is_builder() {
    let g = build(NodeSource::Static(901)).unwrap();
    assert_eq!(g.node_id(), 901);
    assert_eq!(g.node_source(), NodeSourceKind::Static);
    assert_eq!(
        build(NodeSource::Static(-1)).unwrap_err().kind(),
        ErrorKind::InvalidNodeId
    );
}

#[test]
fn error_kinds_are_listed_once_with_codes() {
    let codes: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
    for code in [
        "INVALID_NODE_SOURCE",
        "NO_FREE_SLOT",
        "LEASE_NOT_READY",
        "LEASE_EXPIRED",
        "LEASE_LOST",
        "LEASE_STORE",
    ] {
        assert_eq!(codes.iter().filter(|c| **c == code).count(), 1, "{code}");
    }
    assert!(ErrorKind::InvalidNodeSource.is_configuration());
    assert!(!ErrorKind::NoFreeSlot.is_configuration());
}

/// `tests/vectors/bad_node_sources.json`: the core's own error code and message for each input
/// (every binding and the CLI check theirs against the same file).
#[test]
fn bad_node_sources_give_the_tabled_code_and_message() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/bad_node_sources.json"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let dir = std::env::temp_dir().join(format!("polyflake-bad-sources-{}", std::process::id()));
    for case in doc["cases"].as_array().unwrap() {
        let src = &case["source"];
        let source = match src["kind"].as_str().unwrap() {
            "ipv4" => polyflake::NodeSource::ipv4(
                src["address"].as_str().unwrap(),
                src["prefix_len"].as_i64().unwrap().into(),
            ),
            "file_lease" => {
                let mut o = polyflake::FileLeaseOptions::new(&dir);
                if let Some(r) = src.get("reserve_ms") {
                    o.common.reserve_ms = r.as_u64().unwrap();
                }
                if let Some(i) = src.get("identity") {
                    o.common.identity = Some(i.as_str().unwrap().to_string());
                }
                if let Some(n) = src.get("slots") {
                    o.common.slots = Some(n.as_u64().unwrap() as u32);
                }
                Ok(polyflake::NodeSource::FileLease(o))
            }
            k => panic!("unknown kind {k}"),
        };
        let err = source
            .and_then(|s| polyflake::Generator::builder_from(s).build())
            .expect_err(case["name"].as_str().unwrap());
        assert_eq!(err.code(), case["error"], "{}", case["name"]);
        assert_eq!(err.to_string(), case["message"], "{}", case["name"]);
    }
    assert!(!dir.exists(), "a bad option touched the lease directory");
}
