//! Print the shared generator settings' defaults as JSON, from `Settings::default()` (the one
//! place they are written): what `tests/docs/check_defaults.py` compares every statement of a
//! default in the docs, headers, stubs and type declarations against.
//!
//! `cargo run -p polyflake --example settings_defaults`

use polyflake::Settings;

fn main() {
    let d = Settings::default();
    let opt = |v: Option<String>| v.unwrap_or_else(|| "null".to_string());
    println!(
        "{{\"mode\": \"{}\", \"max_wait_ms\": {:?}, \"max_lead_ms\": {}, \"max_forward_step_ms\": {}, \"forward_confirm_ms\": {}, \"clock_source\": \"{}\", \"clock\": {}, \"max_clock_error_ms\": {}}}",
        d.mode.name(),
        d.max_wait_ms,
        opt(d.max_lead_ms.map(|v| v.to_string())),
        opt(d.max_forward_step_ms.map(|v| v.to_string())),
        d.forward_confirm_ms,
        d.clock_source.name(),
        if d.clock.is_some() { "\"injected\"" } else { "null" },
        opt(d.max_clock_error_ms.map(|v| v.to_string())),
    );
}
