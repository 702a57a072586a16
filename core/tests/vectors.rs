//! The layout vectors in `tests/vectors/layouts.json` (computed independently of this code),
//! checked in both directions for all four presets, and every invalid input refused.

use polyflake::{
    id_from_i128, parse_id, ErrorKind, Generator, Layout, ManualClock, DEFAULT_EPOCH_MS,
};
use serde_json::Value;

fn vectors() -> Value {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/layouts.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn preset(name: &str) -> Layout {
    match name {
        "default_41_10_12" => Layout::DEFAULT,
        "long_lived_42_8_13" => Layout::LONG_LIVED,
        "big_fleet_41_12_10" => Layout::BIG_FLEET,
        "short_39_12_12" => Layout::SHORT,
        other => panic!("unknown preset {other}"),
    }
}

#[test]
fn presets_match_the_reference_arithmetic() {
    let v = vectors();
    assert_eq!(v["epoch_ms_default"].as_i64().unwrap(), DEFAULT_EPOCH_MS);
    let layouts = v["layouts"].as_object().unwrap();
    assert_eq!(layouts.len(), 4);
    for (name, l) in layouts {
        let layout = preset(name);
        assert_eq!(
            u64::from(layout.timestamp_bits()),
            l["timestamp_bits"].as_u64().unwrap()
        );
        assert_eq!(
            u64::from(layout.node_bits()),
            l["node_bits"].as_u64().unwrap()
        );
        assert_eq!(
            u64::from(layout.sequence_bits()),
            l["sequence_bits"].as_u64().unwrap()
        );
        assert_eq!(layout.max_node_id(), l["max_node_id"].as_u64().unwrap());
        assert_eq!(layout.max_sequence(), l["max_sequence"].as_u64().unwrap());
        assert_eq!(
            layout.max_elapsed_ms(),
            l["max_elapsed_ms"].as_u64().unwrap()
        );
        assert_eq!(
            format!("{:.2}", layout.years()),
            format!("{:.2}", l["years"].as_f64().unwrap()),
            "{name}"
        );
    }
}

#[test]
fn cases_compose_and_decode_both_ways() {
    let v = vectors();
    let mut n = 0;
    for (name, l) in v["layouts"].as_object().unwrap() {
        let layout = preset(name);
        for case in l["cases"].as_array().unwrap() {
            let ts = case["epoch_ms"].as_i64().unwrap();
            let node = case["node_id"].as_u64().unwrap();
            let seq = case["sequence"].as_u64().unwrap();
            let id: u64 = case["id"].as_str().unwrap().parse().unwrap();
            // fields -> id
            assert_eq!(
                layout.compose(ts, node, seq, DEFAULT_EPOCH_MS).unwrap(),
                id,
                "{name} {case}"
            );
            // id -> fields
            let d = layout.decode(id, DEFAULT_EPOCH_MS).unwrap();
            assert_eq!(
                (d.timestamp_ms, u64::from(d.node_id), u64::from(d.sequence)),
                (ts, node, seq)
            );
            // text round trip
            assert_eq!(parse_id(case["id"].as_str().unwrap()).unwrap(), id);
            assert_eq!(polyflake::format_id(id), case["id"].as_str().unwrap());
            n += 1;
        }
    }
    assert_eq!(n, 4 * 66);
}

#[test]
fn cases_are_what_a_generator_issues() {
    // A generator on a clock set to the case's millisecond issues sequence 0 of that case.
    let v = vectors();
    for (name, l) in v["layouts"].as_object().unwrap() {
        let layout = preset(name);
        for case in l["cases"].as_array().unwrap() {
            if case["sequence"].as_u64().unwrap() != 0 {
                continue;
            }
            let ts = case["epoch_ms"].as_i64().unwrap();
            let g = Generator::builder(case["node_id"].as_i64().unwrap())
                .layout(layout)
                .clock(ManualClock::new(ts))
                .build()
                .unwrap();
            let want: u64 = case["id"].as_str().unwrap().parse().unwrap();
            assert_eq!(g.next_id().unwrap(), want, "{name} {case}");
        }
    }
}

#[test]
fn literals_decode() {
    let v = vectors();
    for lit in v["literals"].as_array().unwrap() {
        let id = parse_id(lit["id"].as_str().unwrap()).unwrap();
        let d = polyflake::decode(id).unwrap();
        assert_eq!(d.timestamp_ms, lit["epoch_ms"].as_i64().unwrap());
        assert_eq!(u64::from(d.node_id), lit["node_id"].as_u64().unwrap());
        assert_eq!(u64::from(d.sequence), lit["sequence"].as_u64().unwrap());
    }
}

#[test]
fn invalid_inputs_are_refused_with_the_right_error() {
    let v = vectors();
    let inv = &v["invalid"];
    for node in inv["node_id_default_layout"].as_array().unwrap() {
        let node = node
            .as_i64()
            .map(i128::from)
            .unwrap_or_else(|| node.as_u64().unwrap().into());
        let err = Generator::builder(node)
            .clock(ManualClock::new(DEFAULT_EPOCH_MS))
            .build()
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidNodeId, "{node}");
        assert_eq!(
            Layout::DEFAULT.check_node_id(node).unwrap_err().kind(),
            ErrorKind::InvalidNodeId
        );
    }
    for text in inv["decode_default_layout"].as_array().unwrap() {
        let text = text.as_str().unwrap();
        assert_eq!(
            parse_id(text).unwrap_err().kind(),
            ErrorKind::InvalidId,
            "{text:?}"
        );
        // As a number too, where it is one.
        if let Ok(n) = text.parse::<i128>() {
            assert_eq!(
                id_from_i128(n).unwrap_err().kind(),
                ErrorKind::InvalidId,
                "{n}"
            );
        }
    }
    assert_eq!(
        Layout::DEFAULT
            .decode(1 << 63, DEFAULT_EPOCH_MS)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidId
    );
    for bits in inv["layouts"].as_array().unwrap() {
        let b: Vec<u32> = bits
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(
            Layout::new(b[0], b[1], b[2]).unwrap_err().kind(),
            ErrorKind::InvalidLayout,
            "{b:?}"
        );
        let name = format!("{}/{}/{}", b[0], b[1], b[2]);
        assert!(Layout::from_name(&name).is_err());
    }
}

#[test]
fn layout_names_round_trip() {
    for (name, layout) in Layout::PRESETS {
        assert_eq!(Layout::from_name(name).unwrap(), layout);
        assert_eq!(layout.preset_name(), Some(name));
        assert_eq!(Layout::from_name(&layout.to_string()).unwrap(), layout);
    }
    for bad in ["", "41/10", "41/10/12/0", "a/b/c", "-1/10/54", "41 /10/12"] {
        assert!(Layout::from_name(bad).is_err(), "{bad:?}");
    }
}
