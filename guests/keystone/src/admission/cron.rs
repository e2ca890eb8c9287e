//! The cron grammar a Keystone's schedules are checked against: what robfig/cron v3's
//! standard parser (`cron.ParseStandard`, which kube's CronJob controller uses) accepts.
//!
//! A schedule is five whitespace-separated fields — minute (0-59), hour (0-23), day of month
//! (1-31), month (1-12 or `jan`-`dec`), day of week (0-6 or `sun`-`sat`) — each a list of
//! ranges split by `,`; a range is `*` or `?`, a number or name, or `a-b`, optionally with a
//! `/step` (`a/step` runs from `a` to the field's maximum). Names are case-insensitive. Or
//! a descriptor: `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`,
//! `@hourly`, or `@every <Go duration>`. A `TZ=` or `CRON_TZ=` prefix is refused as kube
//! refuses it in a CronJob's schedule (a CronJob takes `spec.timeZone`). Errors are worded
//! as robfig/cron words them.

/// Why a schedule is not one robfig/cron's standard parser accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CronError {
    #[error("empty spec string")]
    Empty,
    #[error("cannot use TZ or CRON_TZ in schedule, use timeZone field instead")]
    TimeZone,
    #[error("unrecognized descriptor: {0}")]
    Descriptor(String),
    #[error("failed to parse duration {descriptor}: time: {reason}")]
    Duration { descriptor: String, reason: String },
    #[error("expected exactly 5 fields, found {found}: [{fields}]")]
    FieldCount { found: usize, fields: String },
    #[error("failed to parse int from {text}: strconv.Atoi: parsing {text:?}: {reason}")]
    Int { text: String, reason: &'static str },
    #[error("negative number ({value}) not allowed: {text}")]
    Negative { value: i64, text: String },
    #[error("too many hyphens: {0}")]
    Hyphens(String),
    #[error("too many slashes: {0}")]
    Slashes(String),
    #[error("beginning of range ({start}) below minimum ({min}): {expr}")]
    BelowMinimum { start: i64, min: i64, expr: String },
    #[error("end of range ({end}) above maximum ({max}): {expr}")]
    AboveMaximum { end: i64, max: i64, expr: String },
    #[error("beginning of range ({start}) beyond end of range ({end}): {expr}")]
    Reversed { start: i64, end: i64, expr: String },
    #[error("step of range should be a positive number: {0}")]
    ZeroStep(String),
}

/// One field's bounds and names.
struct Field {
    min: i64,
    max: i64,
    names: &'static [&'static str],
    /// The value of `names[0]`.
    first_name: i64,
}

const MONTHS: &[&str] = &[
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: &[&str] = &["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

const FIELDS: [Field; 5] = [
    Field {
        min: 0,
        max: 59,
        names: &[],
        first_name: 0,
    },
    Field {
        min: 0,
        max: 23,
        names: &[],
        first_name: 0,
    },
    Field {
        min: 1,
        max: 31,
        names: &[],
        first_name: 0,
    },
    Field {
        min: 1,
        max: 12,
        names: MONTHS,
        first_name: 1,
    },
    Field {
        min: 0,
        max: 6,
        names: DAYS,
        first_name: 0,
    },
];

const DESCRIPTORS: &[&str] = &[
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
];

/// Checks `spec` against the standard grammar.
pub(crate) fn check(spec: &str) -> Result<(), CronError> {
    if spec.is_empty() {
        return Err(CronError::Empty);
    }
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        return Err(CronError::TimeZone);
    }
    if spec.starts_with('@') {
        return descriptor(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != FIELDS.len() {
        return Err(CronError::FieldCount {
            found: fields.len(),
            fields: fields.join(" "),
        });
    }
    for (text, field) in fields.iter().zip(&FIELDS) {
        for range in text.split(',') {
            check_range(range, field)?;
        }
    }
    Ok(())
}

fn descriptor(spec: &str) -> Result<(), CronError> {
    if DESCRIPTORS.contains(&spec) {
        return Ok(());
    }
    match spec.strip_prefix("@every ") {
        Some(duration) => go_duration(duration).map_err(|reason| CronError::Duration {
            descriptor: spec.to_owned(),
            reason,
        }),
        None => Err(CronError::Descriptor(spec.to_owned())),
    }
}

/// One range of a field: `*`, `?`, `a`, `a-b`, each optionally `/step`.
fn check_range(expr: &str, field: &Field) -> Result<(), CronError> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_and_high.len() == 1;
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (field.min, field.max)
    } else {
        let start = int_or_name(low_and_high[0], field)?;
        match low_and_high.len() {
            1 => (start, start),
            2 => (start, int_or_name(low_and_high[1], field)?),
            _ => return Err(CronError::Hyphens(expr.to_owned())),
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            if single {
                end = field.max;
            }
            int(range_and_step[1])?
        }
        _ => return Err(CronError::Slashes(expr.to_owned())),
    };
    if start < field.min {
        return Err(CronError::BelowMinimum {
            start,
            min: field.min,
            expr: expr.to_owned(),
        });
    }
    if end > field.max {
        return Err(CronError::AboveMaximum {
            end,
            max: field.max,
            expr: expr.to_owned(),
        });
    }
    if start > end {
        return Err(CronError::Reversed {
            start,
            end,
            expr: expr.to_owned(),
        });
    }
    if step == 0 {
        return Err(CronError::ZeroStep(expr.to_owned()));
    }
    Ok(())
}

fn int_or_name(text: &str, field: &Field) -> Result<i64, CronError> {
    let lower = text.to_ascii_lowercase();
    match field.names.iter().position(|n| *n == lower) {
        Some(i) => Ok(field.first_name + i as i64),
        None => int(text),
    }
}

/// `strconv.Atoi`: an optional sign and decimal digits.
fn int(text: &str) -> Result<i64, CronError> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CronError::Int {
            text: text.to_owned(),
            reason: "invalid syntax",
        });
    }
    let value: i64 = text.parse().map_err(|_| CronError::Int {
        text: text.to_owned(),
        reason: "value out of range",
    })?;
    if value < 0 {
        return Err(CronError::Negative {
            value,
            text: text.to_owned(),
        });
    }
    Ok(value)
}

/// Go's `time.ParseDuration` grammar: `[-+]` then one or more `<decimal><unit>`, units `ns`,
/// `us`, `µs`, `ms`, `s`, `m`, `h`; or `0`. The error is worded as Go's (without `time: `).
fn go_duration(text: &str) -> Result<(), String> {
    const UNITS: &[(&str, f64)] = &[
        ("ns", 1.0),
        ("us", 1e3),
        ("µs", 1e3),
        ("μs", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
        ("m", 60e9),
        ("h", 3600e9),
    ];
    let invalid = || format!("invalid duration {text:?}");
    let mut rest = text.strip_prefix(['+', '-']).unwrap_or(text);
    if rest == "0" {
        return Ok(());
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = &rest[..number_len];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(invalid());
        }
        let value: f64 = number.parse().map_err(|_| invalid())?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        if unit.is_empty() {
            return Err(format!("missing unit in duration {text:?}"));
        }
        let Some((_, scale)) = UNITS.iter().find(|(u, _)| *u == unit) else {
            return Err(format!("unknown unit {unit:?} in duration {text:?}"));
        };
        total += value * scale;
        if total > i64::MAX as f64 {
            return Err(invalid());
        }
        rest = &rest[unit_len..];
    }
    Ok(())
}

#[cfg(test)]
#[path = "cron_tests.rs"]
mod tests;
