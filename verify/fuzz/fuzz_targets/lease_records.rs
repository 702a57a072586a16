//! The lease stores' records (`polyflake::lease_records`, feature `fuzzing`): a file lease's
//! slot record, a remote store's high-water mark, owner slot and slot token, the ID-space
//! record, and slot names. Every parser gets the same arbitrary bytes: it never panics, and
//! what it accepts re-encodes to exactly those bytes (one value, one spelling); the numbers are
//! also checked against the rule written here independently. Then records written from fields
//! drawn from the bytes read back as those fields, and any one byte changed in a slot record
//! makes it unreadable (the checksum, the padding and the exact form).
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use polyflake::lease_records::{self as rec, IdSpace, Slot};
use polyflake::Layout;

/// The rule for a plain decimal: digits, no leading zero but "0", and it fits.
fn plain_decimal<T: std::str::FromStr>(text: &[u8]) -> Option<T> {
    let ok = !text.is_empty()
        && text.iter().all(u8::is_ascii_digit)
        && (text == b"0" || text[0] != b'0');
    ok.then(|| std::str::from_utf8(text).ok()?.parse().ok())?
}

/// The slot a record names (so the parser sees records of the slot they claim).
fn named_slot(data: &[u8]) -> u32 {
    let text = String::from_utf8_lossy(data);
    text.split('\n')
        .find_map(|l| l.strip_prefix("slot="))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn parsers_accept_only_what_they_write(data: &[u8]) {
    for slot in [named_slot(data), 0] {
        match rec::read_slot(data, slot) {
            Slot::Empty => assert!(data.is_empty()),
            Slot::Complete {
                owner,
                holder,
                high_water_ms,
            } => {
                assert!(!owner.is_empty() && high_water_ms >= 0);
                let again = match &holder {
                    Some(h) => rec::write_slot(slot, &owner, h, high_water_ms),
                    None => rec::write_slot_v0(slot, &owner, high_water_ms),
                };
                assert_eq!(
                    again, data,
                    "slot {slot} accepted as {owner:?} {holder:?} {high_water_ms}"
                );
            }
            Slot::Incomplete(why) => assert!(!data.is_empty() && !why.is_empty()),
        }
    }
    if let Ok(space) = rec::read_space(data) {
        assert_eq!(rec::write_space(space).as_bytes(), data);
        assert!(space.epoch_ms >= 0);
    }
    let mark = rec::read_mark(data);
    assert_eq!(mark, plain_decimal::<i64>(data));
    if let Some(r) = mark {
        assert_eq!(r.to_string().as_bytes(), data);
    }
    let owner = rec::read_owner_slot(data);
    assert_eq!(owner, plain_decimal::<u32>(data));
    if let Some(n) = owner {
        assert_eq!(n.to_string().as_bytes(), data);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Some(n) = rec::read_slot_name(text) {
            assert_eq!(rec::slot_name(n), text);
            assert!(text.len() >= 4);
        }
    }
    if let Some((identity, pid, session)) = rec::read_token(data) {
        assert!(!identity.is_empty() && identity.len() <= 160 && !identity.contains('/'));
        assert_eq!(
            rec::write_token(&identity, pid, session as i64).as_bytes(),
            data
        );
    }
}

/// An identity as the leases accept one: 1 to 160 bytes, no control character, no '/'.
fn identity(u: &mut Unstructured) -> Result<String> {
    let raw: String = u.arbitrary()?;
    let mut s: String = raw
        .chars()
        .filter(|c| !c.is_control() && *c != '/')
        .collect();
    while s.len() > 160 {
        s.pop();
    }
    if s.is_empty() {
        s.push('h');
    }
    Ok(s)
}

fn written_records_read_back(u: &mut Unstructured) -> Result<()> {
    let slot: u32 = u.arbitrary()?;
    let owner = identity(u)?;
    let holder = format!("{}/{:x}", u.arbitrary::<u32>()?, u.arbitrary::<u64>()?);
    let high_water_ms = u.int_in_range(0..=i64::MAX)?;
    let bytes = rec::write_slot(slot, &owner, &holder, high_water_ms);
    assert_eq!(bytes.len(), rec::RECORD_LEN);
    let want = Slot::Complete {
        owner: owner.clone(),
        holder: Some(holder),
        high_water_ms,
    };
    assert_eq!(rec::read_slot(&bytes, slot), want);
    assert!(matches!(
        rec::read_slot(&bytes, slot.wrapping_add(1)),
        Slot::Incomplete(_)
    ));
    // One byte changed anywhere: never read as a record (the checksum covers the fields, the
    // exact form the checksum's spelling and the padding).
    let at = u.choose_index(bytes.len())?;
    let to: u8 = u.arbitrary()?;
    if to != bytes[at] {
        let mut bent = bytes.clone();
        bent[at] = to;
        assert!(
            matches!(rec::read_slot(&bent, slot), Slot::Incomplete(_)),
            "byte {at} -> {to}"
        );
    }
    // Cut short anywhere: never read.
    let cut = u.choose_index(bytes.len())?;
    assert!(matches!(
        rec::read_slot(&bytes[..cut], slot),
        Slot::Incomplete(_) | Slot::Empty
    ));

    let (t, n) = (u.int_in_range(1..=61)?, u.int_in_range(1..=32)?);
    if let Ok(layout) = Layout::new(t, n, 63u32.saturating_sub(t + n)) {
        let space = IdSpace {
            epoch_ms: u.int_in_range(0..=i64::MAX)?,
            layout,
        };
        assert_eq!(
            rec::read_space(rec::write_space(space).as_bytes()),
            Ok(space)
        );
    }
    let r = u.int_in_range(0..=i64::MAX)?;
    assert_eq!(rec::read_mark(r.to_string().as_bytes()), Some(r));
    assert_eq!(rec::read_slot_name(&rec::slot_name(slot)), Some(slot));
    let (pid, session): (u32, i64) = (u.arbitrary()?, u.arbitrary()?);
    let token = rec::write_token(&owner, pid, session);
    assert_eq!(
        rec::read_token(token.as_bytes()),
        Some((owner, pid, session as u64))
    );
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    parsers_accept_only_what_they_write(data);
    let _ = written_records_read_back(&mut Unstructured::new(data));
});
