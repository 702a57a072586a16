//! What the lease stores hold, and how it is read: a slot's record (file leases) and the store's
//! ID-space record (both kinds). Parsing is total and strict: a record is either complete, or
//! it is not and the caller assumes the worst a holder could have done; it never yields a small
//! R by reading half a number.
//!
//! ## Decisions
//!
//! - **A slot record** is 512 bytes of text ([`RECORD_LEN`]): `polyflake-slot v1`, `slot=`,
//!   `owner=` (the identity), `holder=` (pid/nonce), `high_water_ms=`, `sum=` (an FNV-1a checksum
//!   of the lines before it), then a line of padding spaces, so a rewrite is one `pwrite` with no
//!   truncate and a truncated record is never read as whole. Complete means: the header, every
//!   key at most once, no unknown key, `slot=` equal to the file's number, R as 1 to 19 digits
//!   that fit an i64, the checksum right when present, the padding line at the end. Anything
//!   else (bad UTF-8, truncated, NUL bytes, an overflowing number, a repeated key) is incomplete:
//!   the conservative guard, for that slot only, never an error for the directory. Records of the
//!   previous version (256 bytes, no `holder=` or `sum=`) still read as complete.
//! - **A record is read only as its writer spells it.** Every stored value has one spelling:
//!   marks, epochs and owner slots are plain decimals without a leading zero (`007` was read as
//!   7); a slot is named only `{slot:04}` (`slot-00007` or `hwm/7` beside `0007` were a second
//!   name for one slot, whose record could shadow the real one depending on listing order); a
//!   slot record only as the current or the previous version writes it; the space record only as
//!   `render_space` writes it. Anything else is incomplete, the safe direction (a full reserve
//!   assumed, or the store refused for the space record). No writer ever wrote another spelling,
//!   so no store written by polyflake reads differently. The `lease_records` fuzz target checks
//!   the rule: accepted bytes re-encode to exactly themselves.
//! - **One ID space per store.** The space record (`polyflake-space` beside the slot files,
//!   `{prefix}/space` in etcd and ZooKeeper) keeps the epoch and layout of the first generator,
//!   created only if absent; a generator of another epoch or layout is refused with
//!   `IdSpaceMismatch` naming both spaces and the store. A space record that does not parse is a
//!   `LeaseStore` error naming it (removing it is safe only when nobody uses the store).
//! - **Remote slot values have a parser**: `identity/pid/session` (session in lowercase hex) is
//!   written by `render_token` and read by `parse_token`; a value that is not a token reports no
//!   identity (not its first segment) in the operator's report.

use crate::layout::Layout;

/// The length of a slot file's record: one `pwrite` at offset 0 replaces it whole, with no
/// truncate. (Records of older versions were 256 bytes; both read the same way.) Every size of
/// a record the docs state is checked against this (`make test-docs-facts`).
pub(crate) const RECORD_LEN: usize = 512;
/// The length of the records older versions wrote.
const RECORD_LEN_V0: usize = 256;
const SLOT_HEADER: &str = "polyflake-slot v1";
const SPACE_HEADER: &str = "polyflake-space v1";

/// A slot file's content, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SlotRecord {
    /// No bytes at all: a file nobody wrote (new, or emptied).
    Empty,
    /// A whole, checked record.
    Complete {
        /// The identity of the holder that wrote it.
        owner: String,
        /// That holder's own token (`pid/nonce`); absent in records of older versions.
        holder: Option<String>,
        /// R, Unix ms.
        high_water_ms: i64,
    },
    /// Anything else, with why.
    Incomplete(String),
}

/// FNV-1a, 64 bit: the record's checksum (it detects torn and hand-edited records; it is not
/// a defence against anyone).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The record holder `holder` of slot `slot` writes: R = `high_water_ms`.
pub(crate) fn render_slot(slot: u32, owner: &str, holder: &str, high_water_ms: i64) -> Vec<u8> {
    let mut text = format!(
        "{SLOT_HEADER}\nslot={slot}\nowner={owner}\nholder={holder}\nhigh_water_ms={high_water_ms}\n"
    );
    let sum = fnv1a(text.as_bytes());
    text.push_str(&format!("sum={sum:016x}\n"));
    // Pad to a fixed size so a rewrite replaces the whole record and never needs a truncate;
    // the padding line also marks the end, so a truncated record is never read as complete.
    while text.len() < RECORD_LEN - 1 {
        text.push(' ');
    }
    text.push('\n');
    text.into_bytes()
}

/// Read a slot file's bytes. `slot` is the number in the file's name: a record naming another
/// slot (a file copied or renamed) is not this slot's record.
pub(crate) fn parse_slot(bytes: &[u8], slot: u32) -> SlotRecord {
    if bytes.is_empty() {
        return SlotRecord::Empty;
    }
    let bad = |why: &str| SlotRecord::Incomplete(why.to_string());
    let Ok(text) = std::str::from_utf8(bytes) else {
        return bad("not UTF-8");
    };
    if !text.ends_with('\n') {
        return bad("truncated (no final newline)");
    }
    let lines: Vec<&str> = text[..text.len() - 1].split('\n').collect();
    if lines.first() != Some(&SLOT_HEADER) {
        return bad("no polyflake-slot v1 header");
    }
    match lines.last() {
        Some(pad) if !pad.is_empty() && pad.bytes().all(|b| b == b' ') => {}
        _ => return bad("truncated (no padding line)"),
    }
    let (mut slot_v, mut owner, mut holder, mut hwm, mut sum) = (None, None, None, None, None);
    let mut summed = SLOT_HEADER.len() + 1;
    for line in &lines[1..lines.len() - 1] {
        let Some((key, value)) = line.split_once('=') else {
            return bad("a line that is not key=value");
        };
        let field = match key {
            "slot" => &mut slot_v,
            "owner" => &mut owner,
            "holder" => &mut holder,
            "high_water_ms" => &mut hwm,
            "sum" => &mut sum,
            _ => return bad("an unknown key"),
        };
        if field.replace(value).is_some() {
            return bad("a duplicated key");
        }
        if key != "sum" {
            if sum.is_some() {
                return bad("a key after the checksum");
            }
            summed += line.len() + 1;
        }
    }
    if slot_v != Some(slot.to_string().as_str()) {
        return bad("it names another slot");
    }
    let Some(owner) = owner.filter(|o| !o.is_empty()) else {
        return bad("no owner");
    };
    let Some(high_water_ms) = hwm.and_then(parse_ms) else {
        return bad("no high_water_ms that is a number of ms");
    };
    if let Some(sum) = sum {
        if sum.len() != 16 || u64::from_str_radix(sum, 16).ok() != Some(fnv1a(&bytes[..summed])) {
            return bad("the checksum does not match");
        }
    }
    let holder = holder.filter(|h| !h.is_empty());
    // Only a record exactly as some version writes it: the same fields in another order, other
    // padding or another spelling of a number is not a record any holder wrote.
    let exact = match (holder, sum) {
        (Some(h), Some(_)) => render_slot(slot, owner, h, high_water_ms),
        (None, None) => render_slot_v0(slot, owner, high_water_ms),
        _ => return bad("a holder without a checksum, or a checksum without a holder"),
    };
    if exact != bytes {
        return bad("not exactly as a holder writes it (order, padding or spelling)");
    }
    SlotRecord::Complete {
        owner: owner.to_string(),
        holder: holder.map(str::to_string),
        high_water_ms,
    }
}

/// The record older versions wrote (no holder, no checksum, 256 bytes): they are still read,
/// so a holder started after an upgrade honours the R its predecessor left.
pub(crate) fn render_slot_v0(slot: u32, owner: &str, high_water_ms: i64) -> Vec<u8> {
    let mut text =
        format!("{SLOT_HEADER}\nslot={slot}\nowner={owner}\nhigh_water_ms={high_water_ms}\n");
    while text.len() < RECORD_LEN_V0 - 1 {
        text.push(' ');
    }
    text.push('\n');
    text.into_bytes()
}

/// A count of ms: 1 to 19 ASCII digits that fit an `i64`, spelled as `i64::to_string` spells
/// it. Anything else (a sign, spaces, a fraction, a leading zero, an overflow) is not one.
pub(crate) fn parse_ms(text: &str) -> Option<i64> {
    if !is_plain_decimal(text) || text.len() > 19 {
        return None;
    }
    text.parse::<i64>().ok()
}

/// ASCII digits without a leading zero (but "0" itself): the only spelling our writers use.
fn is_plain_decimal(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'))
}

#[cfg(any(feature = "etcd", feature = "zookeeper", feature = "fuzzing"))]
/// A remote store's high-water mark value (`{prefix}/hwm/NNNN`): R in ms, as [`parse_ms`].
pub(crate) fn parse_mark(value: &[u8]) -> Option<i64> {
    std::str::from_utf8(value).ok().and_then(parse_ms)
}

#[cfg(any(feature = "etcd", feature = "zookeeper", feature = "fuzzing"))]
/// The value of `{prefix}/owner/{identity}` in a remote store: the slot that identity held
/// last, written as `u32::to_string` writes it.
pub(crate) fn parse_owner_slot(value: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(value).ok()?;
    if !is_plain_decimal(text) {
        return None;
    }
    text.parse().ok()
}

/// How a slot number is spelled in a key, znode or file name: at least four digits, zero
/// padded (`0007`, `12345`).
pub(crate) fn slot_name(slot: u32) -> String {
    format!("{slot:04}")
}

/// The slot number a name spells, only when spelled as [`slot_name`] spells it: `00007` or
/// `7` beside `0007` would be a second name for one slot, whose record could shadow the real one.
pub(crate) fn parse_slot_name(digits: &str) -> Option<u32> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    (slot_name(n) == digits).then_some(n)
}

#[cfg(any(feature = "etcd", feature = "zookeeper", feature = "fuzzing"))]
/// A remote slot's value: its holder's token `identity/pid/session` (session in lowercase hex:
/// the etcd lease id or the ZooKeeper session id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token<'a> {
    /// The holder's identity (1 to 160 bytes, no control character, no '/').
    pub identity: &'a str,
    /// Its process id.
    pub pid: u32,
    /// Its etcd lease id or ZooKeeper session id, as the two's-complement bits of the i64.
    pub session: u64,
}

#[cfg(any(feature = "etcd", feature = "zookeeper", feature = "fuzzing"))]
/// The token a holder writes into its slot key or znode.
pub(crate) fn render_token(identity: &str, pid: u32, session: i64) -> String {
    format!("{identity}/{pid}/{session:x}")
}

#[cfg(any(feature = "etcd", feature = "zookeeper", feature = "fuzzing"))]
/// Read a token; `None` unless it is exactly as [`render_token`] writes one.
pub(crate) fn parse_token(value: &[u8]) -> Option<Token<'_>> {
    let text = std::str::from_utf8(value).ok()?;
    let mut parts = text.split('/');
    let (identity, pid, session) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some()
        || identity.is_empty()
        || identity.len() > 160
        || identity.chars().any(char::is_control)
        || !is_plain_decimal(pid)
        || session.is_empty()
        || session.len() > 16
        || !session
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        || (session.len() > 1 && session.starts_with('0'))
    {
        return None;
    }
    Some(Token {
        identity,
        pid: pid.parse().ok()?,
        session: u64::from_str_radix(session, 16).ok()?,
    })
}

/// The ID space of a store: every generator that leases from it must mint in one space, or
/// two node ids of different layouts could spell the same number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdSpace {
    /// The epoch, Unix ms.
    pub epoch_ms: i64,
    /// The layout.
    pub layout: Layout,
}

impl std::fmt::Display for IdSpace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "layout {} epoch {} ms", self.layout, self.epoch_ms)
    }
}

/// The space record's text.
pub(crate) fn render_space(space: IdSpace) -> String {
    format!(
        "{SPACE_HEADER}\nepoch_ms={}\nlayout={}\n",
        space.epoch_ms, space.layout
    )
}

/// Read a space record; `Err` says why it is not one.
pub(crate) fn parse_space(bytes: &[u8]) -> Result<IdSpace, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())?;
    let mut lines = text.strip_suffix('\n').unwrap_or("").split('\n');
    if lines.next() != Some(SPACE_HEADER) {
        return Err("no polyflake-space v1 header, or truncated".into());
    }
    let (mut epoch, mut layout) = (None, None);
    for line in lines {
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| "a line that is not key=value".to_string())?;
        let field = match key {
            "epoch_ms" => &mut epoch,
            "layout" => &mut layout,
            _ => return Err("an unknown key".to_string()),
        };
        if field.replace(value).is_some() {
            return Err("a duplicated key".to_string());
        }
    }
    let epoch_ms = epoch
        .and_then(parse_ms)
        .ok_or_else(|| "no epoch_ms".to_string())?;
    let layout = layout
        .ok_or_else(|| "no layout".to_string())?
        .parse::<Layout>()
        // Not the parser's words: they quote the text, and the record's bytes are never echoed.
        .map_err(|_| "a layout that does not parse".to_string())?;
    let space = IdSpace { epoch_ms, layout };
    // Only the text `render_space` writes (a preset's name, another order or a missing final
    // newline is not it): one space has one record.
    if render_space(space).as_bytes() != bytes {
        return Err("not exactly as polyflake writes it (order or spelling)".into());
    }
    Ok(space)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(hwm: i64) -> SlotRecord {
        SlotRecord::Complete {
            owner: "host-a".into(),
            holder: Some("77/abc".into()),
            high_water_ms: hwm,
        }
    }

    #[test]
    fn a_rendered_record_reads_back() {
        let bytes = render_slot(7, "host-a", "77/abc", 1_737_747_363_021);
        assert_eq!(bytes.len(), RECORD_LEN);
        assert_eq!(parse_slot(&bytes, 7), complete(1_737_747_363_021));
        // Another slot's record is not this slot's.
        assert!(matches!(parse_slot(&bytes, 8), SlotRecord::Incomplete(_)));
    }

    #[test]
    fn a_record_of_the_previous_version_reads() {
        let mut old = "polyflake-slot v1\nslot=3\nowner=h\nhigh_water_ms=42\n".to_string();
        while old.len() < 255 {
            old.push(' ');
        }
        old.push('\n');
        assert_eq!(
            parse_slot(old.as_bytes(), 3),
            SlotRecord::Complete {
                owner: "h".into(),
                holder: None,
                high_water_ms: 42
            }
        );
    }

    #[test]
    fn every_damaged_record_is_incomplete() {
        let good = render_slot(0, "host-a", "77/abc", 1_737_747_363_021);
        let text = String::from_utf8(good.clone()).unwrap();
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("bad UTF-8", {
                let mut b = good.clone();
                b[30] = 0xff;
                b
            }),
            (
                "truncated",
                b"polyflake-slot v1\nslot=0\nowner=a\nhigh_water_ms=17".to_vec(),
            ),
            ("truncated after a line", good[..70].to_vec()),
            ("NUL bytes", vec![0u8; RECORD_LEN]),
            (
                "i64 max + 1",
                text.replace("1737747363021", "9223372036854775808")
                    .into_bytes(),
            ),
            (
                "a sign",
                text.replace("=1737747363021", "=-1737747363021")
                    .into_bytes(),
            ),
            (
                "checksum",
                text.replace("1737747363021", "1737747363022").into_bytes(),
            ),
            (
                "duplicated key",
                text.replacen("owner=host-a\n", "owner=host-a\nowner=b\n", 1)
                    .into_bytes(),
            ),
            (
                "unknown key",
                text.replacen("owner=", "owners=", 1).into_bytes(),
            ),
        ];
        for (what, bytes) in cases {
            assert!(
                matches!(parse_slot(&bytes, 0), SlotRecord::Incomplete(_)),
                "{what}: {:?}",
                parse_slot(&bytes, 0)
            );
        }
        assert_eq!(parse_slot(b"", 0), SlotRecord::Empty);
    }

    #[test]
    fn i64_max_is_a_number_and_the_caller_refuses_it_by_window() {
        let bytes = render_slot(0, "a", "1/2", i64::MAX);
        assert_eq!(
            parse_slot(&bytes, 0),
            SlotRecord::Complete {
                owner: "a".into(),
                holder: Some("1/2".into()),
                high_water_ms: i64::MAX
            }
        );
    }

    #[test]
    fn the_space_record_round_trips_and_refuses_damage() {
        let space = IdSpace {
            epoch_ms: 1_704_067_200_000,
            layout: Layout::DEFAULT,
        };
        assert_eq!(parse_space(render_space(space).as_bytes()), Ok(space));
        for bad in [
            "",
            "polyflake-space v1\nepoch_ms=1\n",
            "polyflake-space v1\nepoch_ms=1\nlayout=41/10/12\nlayout=41/12/10\n",
            "polyflake-space v1\nepoch_ms=x\nlayout=41/10/12\n",
            "polyflake-space v1\nepoch_ms=1\nlayout=41/10/13\n",
        ] {
            assert!(parse_space(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }

    // Found by verify/fuzz/fuzz_targets/lease_records.rs: each was accepted and read as a record its
    // writer never writes (a second spelling of one value, or fields in another order).
    #[test]
    #[cfg(any(feature = "etcd", feature = "zookeeper", feature = "fuzzing"))]
    fn only_the_exact_spelling_a_writer_writes_is_read() {
        // A leading zero: "007" was read as 7 ms (a mark) and as slot 7 (an owner's slot).
        assert_eq!(parse_ms("007"), None);
        assert_eq!(parse_ms("0"), Some(0));
        assert_eq!(parse_mark(b"0017"), None);
        assert_eq!(parse_mark(b"17"), Some(17));
        assert_eq!(parse_owner_slot(b"+7"), None);
        assert_eq!(parse_owner_slot(b"07"), None);
        assert_eq!(parse_owner_slot(b"7"), Some(7));
        // A second name for a slot: "00007" or "7" beside "0007" could shadow its mark.
        assert_eq!(parse_slot_name("0007"), Some(7));
        assert_eq!(parse_slot_name("00007"), None);
        assert_eq!(parse_slot_name("7"), None);
        assert_eq!(parse_slot_name("12345"), Some(12345));
        // A slot record with its fields reordered, its padding changed or a number respelled.
        let good = String::from_utf8(render_slot(3, "h", "9/ab", 42)).unwrap();
        assert!(matches!(
            parse_slot(good.as_bytes(), 3),
            SlotRecord::Complete { .. }
        ));
        let mut longer = good.clone();
        longer.insert(good.len() - 1, ' ');
        let reordered = good.replacen("slot=3\nowner=h\n", "owner=h\nslot=3\n", 1);
        let v0 = String::from_utf8(render_slot_v0(3, "h", 42)).unwrap();
        for bad in [
            longer,
            reordered,
            v0.replace("slot=3", "slot=03"),
            v0.replace("owner=h\n", "owner=h\nholder=\n"),
            v0.replacen("  \n", "\n", 1),
        ] {
            assert!(
                matches!(parse_slot(bad.as_bytes(), 3), SlotRecord::Incomplete(_)),
                "{bad:?}"
            );
        }
        // The space record: another order, a preset's name or no final newline.
        for bad in [
            "polyflake-space v1\nlayout=41/10/12\nepoch_ms=1\n",
            "polyflake-space v1\nepoch_ms=1\nlayout=41/10/12",
            "polyflake-space v1\nepoch_ms=01\nlayout=41/10/12\n",
        ] {
            assert!(parse_space(bad.as_bytes()).is_err(), "{bad:?}");
        }
        // A slot's token.
        let t = render_token("host-a", 77, -2);
        assert_eq!(t, "host-a/77/fffffffffffffffe");
        assert_eq!(
            parse_token(t.as_bytes()),
            Some(Token {
                identity: "host-a",
                pid: 77,
                session: u64::MAX - 1
            })
        );
        for bad in [
            "host-a/077/1",
            "host-a/77/01",
            "host-a/77/1/x",
            "host-a/77/A",
            "/1/1",
            "a/1/",
        ] {
            assert_eq!(parse_token(bad.as_bytes()), None, "{bad:?}");
        }
    }
}
