//! Errors of cluster calls, as host and guests both name them.

/// Why a call to the cluster failed: one case per status a reconciler branches on, each
/// carrying the API server's message (the WIT `api-error`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// 404: the object, its namespace or its kind does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// 409: stale resourceVersion, already exists, or an apply conflict.
    #[error("conflict: {0}")]
    Conflict(String),
    /// 422: the object is invalid.
    #[error("invalid: {0}")]
    Invalid(String),
    /// 413: the object or request is too large.
    #[error("too large: {0}")]
    TooLarge(String),
    /// 403, or a verb or kind the plugin did not declare.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// 410: a resourceVersion is too old.
    #[error("gone: {0}")]
    Gone(String),
    /// 429/5xx or a transport failure: worth retrying.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// Anything else, with the server's message.
    #[error("{0}")]
    Other(String),
    /// The cluster does not serve the kind (no CRD, or not at that version). Contract 1.0
    /// plugins see it as [`NotFound`](Self::NotFound), which is what the API server answers.
    #[error("not served: {0}")]
    NotServed(String),
}

impl ApiError {
    /// Maps an HTTP status code and the server's message to the case a reconciler branches
    /// on.
    pub fn from_status(code: u16, message: impl Into<String>) -> Self {
        let message = message.into();
        match code {
            404 => Self::NotFound(message),
            409 => Self::Conflict(message),
            422 => Self::Invalid(message),
            413 => Self::TooLarge(message),
            401 | 403 => Self::Forbidden(message),
            410 => Self::Gone(message),
            429 | 500 | 502 | 503 | 504 => Self::Unavailable(message),
            _ => Self::Other(message),
        }
    }

    /// The server's message.
    pub fn message(&self) -> &str {
        match self {
            Self::NotFound(m)
            | Self::Conflict(m)
            | Self::Invalid(m)
            | Self::TooLarge(m)
            | Self::Forbidden(m)
            | Self::Gone(m)
            | Self::Unavailable(m)
            | Self::Other(m)
            | Self::NotServed(m) => m,
        }
    }

    /// Whether retrying the same request later can succeed: not for 422 or 413, whose
    /// request is wrong in itself. A 403 is retried: an administrator grants what was
    /// missing and the next try succeeds, as controller-runtime's backoff assumes.
    pub fn is_retryable(&self) -> bool {
        !matches!(self, Self::Invalid(_) | Self::TooLarge(_))
    }
}

/// An object lacks a field a reference is read from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} has no {field}")]
pub struct MissingField {
    /// The object concerned (kind and name).
    pub what: String,
    /// The missing field's path, e.g. `metadata.name`.
    pub field: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes_map_to_the_case_a_reconciler_branches_on() {
        type IsExpected = fn(&ApiError) -> bool;
        let cases: &[(u16, IsExpected)] = &[
            (404, |e| matches!(e, ApiError::NotFound(_))),
            (409, |e| matches!(e, ApiError::Conflict(_))),
            (422, |e| matches!(e, ApiError::Invalid(_))),
            (413, |e| matches!(e, ApiError::TooLarge(_))),
            (403, |e| matches!(e, ApiError::Forbidden(_))),
            (410, |e| matches!(e, ApiError::Gone(_))),
            (429, |e| matches!(e, ApiError::Unavailable(_))),
            (503, |e| matches!(e, ApiError::Unavailable(_))),
            (400, |e| matches!(e, ApiError::Other(_))),
        ];
        for (code, is_expected) in cases {
            let error = ApiError::from_status(*code, "msg");
            assert!(is_expected(&error), "{code} mapped to {error:?}");
            assert_eq!(error.message(), "msg");
        }
    }

    #[test]
    fn invalid_and_too_large_are_not_retryable_and_forbidden_is() {
        assert!(!ApiError::Invalid(String::new()).is_retryable());
        assert!(!ApiError::TooLarge(String::new()).is_retryable());
        assert!(ApiError::Forbidden(String::new()).is_retryable());
        assert!(ApiError::Conflict(String::new()).is_retryable());
        assert!(ApiError::Unavailable(String::new()).is_retryable());
    }
}
