//! The few string formats this server validates, out of those kube keeps
//! after `StripUnsupportedFormatsPostProcess`. Any other format name is
//! accepted without checking (kube strips `int32`, `int64`, `float`,
//! `double` and unknown names; it does validate more, e.g. `hostname`,
//! `email`, `cidr`, which are left out here).

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use regex::Regex;

static DATE_TIME: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})$").ok()
});
static DATE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\d{4}-\d{2}-\d{2}$").ok());
static UUID: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$").ok()
});
static BASE64: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$").ok()
});

fn matches(re: &LazyLock<Option<Regex>>, text: &str) -> bool {
    re.as_ref().is_none_or(|r| r.is_match(text))
}

/// Whether `text` satisfies `format` (`-` in the name is ignored, as in
/// go-openapi). Unknown formats always pass.
pub(crate) fn is_valid(format: &str, text: &str) -> bool {
    match format.replace('-', "").as_str() {
        "datetime" => matches(&DATE_TIME, text),
        "date" => matches(&DATE, text),
        "uuid" => matches(&UUID, text),
        "byte" => matches(&BASE64, text),
        "ipv4" => text.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => text.parse::<Ipv6Addr>().is_ok(),
        _ => true,
    }
}
