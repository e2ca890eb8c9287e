//! The OpenStack release an image tag names: `YYYY.N` (N is 1 or 2, the year at least
//! 2010), optionally followed by `-` and a suffix (`2025.2-p1`), as CobaltCore's
//! `release.ParseRelease` reads it.

use std::fmt;

/// An OpenStack release, without its suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Release {
    pub(crate) year: u16,
    pub(crate) minor: u8,
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.year, self.minor)
    }
}

/// The release `tag` names; `None` for a tag that names none (empty, `latest`, `2025`,
/// `2025.3`, `2025.2.1`).
pub(crate) fn parse(tag: &str) -> Option<Release> {
    let base = tag.split('-').next().unwrap_or_default();
    let (year, minor) = base.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(year) || !digits(minor) {
        return None;
    }
    let year: u16 = year.parse().ok()?;
    let minor: u8 = minor.parse().ok()?;
    (year >= 2010 && (minor == 1 || minor == 2)).then_some(Release { year, minor })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_names_the_release_of_its_year_and_half() {
        let table: &[(&str, Option<(u16, u8)>)] = &[
            ("2022.2", Some((2022, 2))),
            ("2025.1-p3", Some((2025, 1))),
            ("2026.02", Some((2026, 2))),
            ("", None),
            ("latest", None),
            ("2025", None),
            ("2025.3", None),
            ("2025.0", None),
            ("2025.2.1", None),
            ("2009.1", None),
            ("v2025.1", None),
            ("2025.x", None),
            ("99999.1", None),
        ];
        for (tag, expected) in table {
            let got = parse(tag).map(|r| (r.year, r.minor));
            assert_eq!(got, *expected, "{tag:?}");
        }
        assert_eq!(
            parse("2022.2-p1").map(|r| r.to_string()).as_deref(),
            Some("2022.2")
        );
    }
}
