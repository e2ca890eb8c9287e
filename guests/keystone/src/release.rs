//! OpenStack release names (`YYYY.N`, optionally `-<patch>`) as image tags carry them, and
//! how two releases relate (facts §2.14).
//!
//! | Input | Parses to |
//! |---|---|
//! | `2025.2`, `2026.1` | year 2025/2026, minor 2/1, no patch |
//! | `2025.2-p1` | year 2025, minor 2 (everything after the first `-` is the patch) |
//! | empty, `latest`, `2025`, `2025.2.3`, `2009.1`, `2025.3` | [`ParseError`] |
//!
//! OpenStack ships two releases a year, `YYYY.1` and `YYYY.2`. A sequential upgrade is one
//! step forward (`2025.1 → 2025.2`, `2025.2 → 2026.1`); a downgrade goes to an earlier
//! year, or the same year and a lower minor; a patch-only change keeps year and minor.
//! Patches are ignored by all three.

use std::num::ParseIntError;

/// The earliest year a release may name.
const FIRST_YEAR: i64 = 2010;

/// Why a tag is not a release name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The tag is empty (a digest-pinned image).
    #[error("empty release tag")]
    Empty,
    /// The part before the patch is not two dot-separated parts.
    #[error("invalid release format {tag:?}: expected YYYY.N")]
    Format { tag: String },
    /// The year is not a number.
    #[error("invalid release year in {tag:?}: {source}")]
    Year {
        tag: String,
        #[source]
        source: ParseIntError,
    },
    /// The year is before 2010.
    #[error("invalid release year {year} in {tag:?}: must be >= 2010")]
    YearTooEarly { year: i64, tag: String },
    /// The minor version is not a number.
    #[error("invalid release minor version in {tag:?}: {source}")]
    Minor {
        tag: String,
        #[source]
        source: ParseIntError,
    },
    /// The minor version is neither 1 nor 2.
    #[error("invalid release minor version {minor} in {tag:?}: must be 1 or 2")]
    MinorRange { minor: i64, tag: String },
}

/// A parsed release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Release {
    pub(crate) year: i64,
    pub(crate) minor: i64,
    /// The tag as given (a patch, what follows the first `-`, is kept only here).
    pub(crate) raw: String,
}

impl Release {
    /// Parses `tag` (see the module's table).
    pub(crate) fn parse(tag: &str) -> Result<Self, ParseError> {
        if tag.is_empty() {
            return Err(ParseError::Empty);
        }
        let base = tag.split_once('-').map_or(tag, |(base, _patch)| base);
        let parts: Vec<&str> = base.split('.').collect();
        let [year, minor] = parts.as_slice() else {
            return Err(ParseError::Format { tag: tag.into() });
        };
        let year: i64 = year.parse().map_err(|source| ParseError::Year {
            tag: tag.into(),
            source,
        })?;
        if year < FIRST_YEAR {
            return Err(ParseError::YearTooEarly {
                year,
                tag: tag.into(),
            });
        }
        let minor: i64 = minor.parse().map_err(|source| ParseError::Minor {
            tag: tag.into(),
            source,
        })?;
        if minor != 1 && minor != 2 {
            return Err(ParseError::MinorRange {
                minor,
                tag: tag.into(),
            });
        }
        Ok(Self {
            year,
            minor,
            raw: tag.into(),
        })
    }

    /// Whether `to` is exactly one release after `self`.
    pub(crate) fn is_sequential_to(&self, to: &Release) -> bool {
        (self.year == to.year && self.minor == 1 && to.minor == 2)
            || (to.year == self.year + 1 && self.minor == 2 && to.minor == 1)
    }

    /// Whether `to` is an earlier release than `self`.
    pub(crate) fn is_downgrade_to(&self, to: &Release) -> bool {
        to.year < self.year || (to.year == self.year && to.minor < self.minor)
    }

    /// Whether `self` and `to` differ at most in their patch.
    pub(crate) fn is_patch_only_to(&self, to: &Release) -> bool {
        self.year == to.year && self.minor == to.minor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_tag_parses_as_year_minor_and_patch_and_anything_else_is_refused() {
        let refused: &[(&str, &str)] = &[
            ("", "empty release tag"),
            (
                "latest",
                "invalid release format \"latest\": expected YYYY.N",
            ),
            ("2025", "invalid release format \"2025\": expected YYYY.N"),
            (
                "2025.2.3",
                "invalid release format \"2025.2.3\": expected YYYY.N",
            ),
            ("abcd.1", "invalid release year in \"abcd.1\": "),
            (
                "2009.2",
                "invalid release year 2009 in \"2009.2\": must be >= 2010",
            ),
            ("2025.x", "invalid release minor version in \"2025.x\": "),
            (
                "2025.3-p1",
                "invalid release minor version 3 in \"2025.3-p1\": must be 1 or 2",
            ),
        ];
        for (tag, message) in refused {
            let error = Release::parse(tag).expect_err(tag);
            assert!(
                error.to_string().starts_with(message),
                "{tag}: {error} does not start with {message}"
            );
        }
        // The valid row.
        assert_eq!(
            Release::parse("2025.2-p1-hotfix"),
            Ok(Release {
                year: 2025,
                minor: 2,
                raw: "2025.2-p1-hotfix".into()
            })
        );
    }

    #[test]
    fn sequential_downgrade_and_patch_only_compare_year_and_minor_only() {
        let r = |tag: &str| Release::parse(tag).expect(tag);
        // (from, to, sequential, downgrade, patch-only)
        let table = [
            ("2025.1", "2025.2", true, false, false),
            ("2025.2", "2026.1", true, false, false),
            ("2025.1", "2026.1", false, false, false),
            ("2025.2", "2025.1", false, true, false),
            ("2026.1", "2025.2", false, true, false),
            ("2025.2", "2025.2-p1", false, false, true),
            ("2025.2-p2", "2025.2-p1", false, false, true),
            ("2025.2-p1", "2026.1", true, false, false),
        ];
        for (from, to, sequential, downgrade, patch_only) in table {
            let (a, b) = (r(from), r(to));
            assert_eq!(
                (
                    a.is_sequential_to(&b),
                    a.is_downgrade_to(&b),
                    a.is_patch_only_to(&b)
                ),
                (sequential, downgrade, patch_only),
                "{from} → {to}"
            );
        }
    }
}
