//! How long a plugin may take over a review: a little less than the API server waits.
//!
//! kube-apiserver sends the webhook's `timeoutSeconds` (or what is left of the request's
//! own deadline, if less) as the `timeout` query parameter, in Go's duration form (`10s`,
//! `9.5s`, `1m0s`). The plugin gets that less a margin, so that when it runs out of time
//! the host still answers, as the kind's failure policy demands, before the API server
//! gives up and applies its own.

use std::time::Duration;

use super::configurations::TIMEOUT_SECONDS;

/// The longest margin kept back for answering.
const MARGIN: Duration = Duration::from_secs(1);

/// The time a plugin has for a review whose `timeout` parameter is `timeout`: a quarter
/// of it, at most [`MARGIN`], is kept back. A missing or unreadable parameter counts as
/// the configurations' `timeoutSeconds`.
pub(crate) fn budget(timeout: Option<&str>) -> Duration {
    let timeout = timeout
        .and_then(go_duration)
        .filter(|t| !t.is_zero())
        .unwrap_or(Duration::from_secs(u64::from(TIMEOUT_SECONDS)));
    timeout - MARGIN.min(timeout / 4)
}

/// Reads a non-negative Go duration (`1m30s`, `2.5s`, `750ms`); `None` when it is not one.
fn go_duration(text: &str) -> Option<Duration> {
    let mut rest = text;
    let mut total = Duration::ZERO;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds_per_unit = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += Duration::try_from_secs_f64(value * seconds_per_unit).ok()?;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_gets_the_api_servers_timeout_less_a_margin() {
        let ms = Duration::from_millis;
        let table = [
            (Some("10s"), ms(9_000)),
            (Some("2s"), ms(1_500)),
            (Some("9.5s"), ms(8_500)),
            (Some("1m0s"), ms(59_000)),
            (Some("800ms"), ms(600)),
            (None, ms(9_000)),
            (Some(""), ms(9_000)),
            (Some("0s"), ms(9_000)),
            (Some("ten"), ms(9_000)),
            (Some("10"), ms(9_000)),
            (Some("-5s"), ms(9_000)),
            (Some("5x"), ms(9_000)),
        ];
        for (timeout, expected) in table {
            assert_eq!(budget(timeout), expected, "{timeout:?}");
        }
    }
}
