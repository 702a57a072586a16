//! The core's metrics table for JavaScript: `healthMetrics()` lists [`polyflake::HEALTH_METRICS`]
//! (names, kinds, help texts, label names) and each generator's `healthSamples()` gives
//! [`polyflake::health_samples`] of its health. `polyflake/prometheus` (`prometheus.js`) turns
//! them into prom-client metrics; no metric name is written anywhere in the binding.

use crate::error::{guard, Result};
use crate::js::{Fail, Val};
use napi::bindgen_prelude::{Env, Unknown};
use napi::sys;
use polyflake::{health_samples, Health, HEALTH_METRICS};

/// One metric of the core's table.
fn metric(env: sys::napi_env, m: &polyflake::Metric) -> std::result::Result<Val, Fail> {
    let obj = Val::object(env)?;
    obj.set("name", Val::text(env, m.name)?)?;
    obj.set("kind", Val::text(env, m.kind.name())?)?;
    obj.set("help", Val::text(env, m.help)?)?;
    let labels = m.labels.iter().map(|l| Val::text(env, l));
    obj.set("labels", Val::array(env, labels)?)?;
    Ok(obj)
}

/// Every metric a health snapshot gives (the core's `HEALTH_METRICS`): `name` (a counter's
/// exposed name adds `_total`), `kind` (`'counter'` or `'gauge'`), `help` and label names.
#[napi(ts_return_type = "Array<HealthMetric>")]
pub fn health_metrics(env: Env) -> Result<Unknown<'static>> {
    guard(env.raw(), || {
        let all = HEALTH_METRICS.iter().map(|m| metric(env.raw(), m));
        Ok(Val::array(env.raw(), all)?.unknown())
    })
}

/// A health snapshot's samples: `{ name, labels: { label: value }, value }` each.
pub(crate) fn samples(env: sys::napi_env, h: &Health) -> std::result::Result<Val, Fail> {
    let all = health_samples(h);
    let one = |s: &polyflake::Sample| {
        let obj = Val::object(env)?;
        obj.set("name", Val::text(env, s.metric.name)?)?;
        let labels = Val::object(env)?;
        for (name, value) in s.metric.labels.iter().zip(&s.labels) {
            labels.set(name, Val::text(env, value)?)?;
        }
        obj.set("labels", labels)?;
        obj.set("value", Val::number(env, s.value)?)?;
        Ok(obj)
    };
    Val::array(env, all.iter().map(one))
}
