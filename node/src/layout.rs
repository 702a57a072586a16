//! Layouts for JavaScript: the presets by name, `T/N/S` strings, `{ timestampBits, nodeBits,
//! sequenceBits }` objects and the `Layout` class all turn into a core [`polyflake::Layout`],
//! which does every check.

use crate::error::{guard, Result};
use crate::js::{narrow, string_arg, Fail, Ty, Val};
use napi::bindgen_prelude::{Env, Unknown};

/// The preset layouts by name: pass one as the `layout` option.
#[napi(string_enum)]
pub enum LayoutPreset {
    /// 41/10/12: 69.68 years, 1,024 nodes, 4,096 IDs per ms per node.
    #[napi(value = "default")]
    Default,
    /// 42/8/13: 139.37 years, 256 nodes, 8,192 IDs per ms per node.
    #[napi(value = "long_lived")]
    LongLived,
    /// 41/12/10: 69.68 years, 4,096 nodes, 1,024 IDs per ms per node.
    #[napi(value = "big_fleet")]
    BigFleet,
    /// 39/12/12: 17.42 years, 4,096 nodes, 4,096 IDs per ms per node.
    #[napi(value = "short")]
    Short,
}

/// A custom layout as three bit counts (each at least 1, adding up to 63).
#[napi(object)]
pub struct LayoutBits {
    /// Bits of elapsed milliseconds.
    pub timestamp_bits: u32,
    /// Bits of node id.
    pub node_bits: u32,
    /// Bits of per-millisecond sequence.
    pub sequence_bits: u32,
}

/// How the 63 usable bits of an ID are split between timestamp, node and sequence.
#[napi]
pub struct Layout {
    pub(crate) inner: polyflake::Layout,
}

#[napi]
impl Layout {
    /// A custom layout: three fields of at least 1 bit each that add up to 63.
    #[napi(
        constructor,
        ts_args_type = "timestampBits: number, nodeBits: number, sequenceBits: number"
    )]
    pub fn new(
        env: Env,
        timestamp_bits: Unknown<'_>,
        node_bits: Unknown<'_>,
        sequence_bits: Unknown<'_>,
    ) -> Result<Self> {
        guard(env.raw(), || {
            let t = narrow(Val::of(env, &timestamp_bits), "timestampBits")?;
            let n = narrow(Val::of(env, &node_bits), "nodeBits")?;
            let s = narrow(Val::of(env, &sequence_bits), "sequenceBits")?;
            Ok(Layout {
                inner: polyflake::Layout::new(t, n, s)?,
            })
        })
    }

    /// A preset by name (`'default'`, `'long_lived'`, `'big_fleet'`, `'short'`) or `'T/N/S'`.
    #[napi(factory, ts_args_type = "name: LayoutPreset | string")]
    pub fn from_name(env: Env, name: Unknown<'_>) -> Result<Self> {
        guard(env.raw(), || {
            let name = string_arg(Val::of(env, &name), "a layout name")?;
            Ok(Layout {
                inner: polyflake::Layout::from_name(&name)?,
            })
        })
    }

    /// Bits of elapsed milliseconds.
    #[napi(getter)]
    pub fn timestamp_bits(&self) -> u32 {
        self.inner.timestamp_bits()
    }
    /// Bits of node id.
    #[napi(getter)]
    pub fn node_bits(&self) -> u32 {
        self.inner.node_bits()
    }
    /// Bits of per-millisecond sequence.
    #[napi(getter)]
    pub fn sequence_bits(&self) -> u32 {
        self.inner.sequence_bits()
    }
    /// The largest node id.
    #[napi(getter)]
    pub fn max_node_id(&self) -> u32 {
        self.inner.max_node_id() as u32
    }
    /// The largest sequence value.
    #[napi(getter)]
    pub fn max_sequence(&self) -> u32 {
        self.inner.max_sequence() as u32
    }
    /// The largest elapsed milliseconds since the epoch (below 2^53, so exact as a Number).
    #[napi(getter)]
    pub fn max_elapsed_ms(&self) -> f64 {
        self.inner.max_elapsed_ms() as f64
    }
    /// How many years the timestamp field holds (Julian years).
    #[napi(getter)]
    pub fn years(&self) -> f64 {
        self.inner.years()
    }
    /// The preset name, or `null` for a custom layout.
    #[napi(getter)]
    pub fn preset(&self) -> Option<&'static str> {
        self.inner.preset_name()
    }
    /// `'T/N/S'`, for example `'41/10/12'`.
    #[napi(js_name = "toString")]
    pub fn to_js_string(&self) -> String {
        self.inner.to_string()
    }
}

/// The `layout` option: a preset name or `'T/N/S'`, `{ timestampBits, nodeBits, sequenceBits }`,
/// or a `Layout`.
pub(crate) fn layout_arg(env: Env, v: Val) -> std::result::Result<polyflake::Layout, Fail> {
    match v.ty()? {
        Ty::String => Ok(polyflake::Layout::from_name(&v.string()?)?),
        Ty::Object => {
            if let Some(layout) = v.instance::<Layout>(&env)? {
                return Ok(layout.inner);
            }
            let keys = v.keys()?;
            for k in &keys {
                if !["timestampBits", "nodeBits", "sequenceBits"].contains(&k.as_str()) {
                    return Err(Fail::Type(format!(
                        "unknown key {k:?} in layout: expected timestampBits, nodeBits, sequenceBits"
                    )));
                }
            }
            let t = narrow(v.get("timestampBits")?, "layout.timestampBits")?;
            let n = narrow(v.get("nodeBits")?, "layout.nodeBits")?;
            let s = narrow(v.get("sequenceBits")?, "layout.sequenceBits")?;
            Ok(polyflake::Layout::new(t, n, s)?)
        }
        _ => Err(Fail::Type(format!(
            "layout must be a preset name, 'T/N/S', {{ timestampBits, nodeBits, sequenceBits }} or a Layout, got {}",
            v.describe()
        ))),
    }
}
