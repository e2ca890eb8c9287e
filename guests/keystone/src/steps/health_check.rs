//! Step 11b — HealthCheck (facts §2.18): whether the Keystone API answers, probed with a
//! GET of the Service's `/v3` (`http://{name}.{ns}.svc.cluster.local:5000/v3`, whatever
//! `status.endpoint` advertises outside), 10 s timeout, through the plugin's HTTP egress.
//!
//! | Case | KeystoneAPIReady | Pass |
//! |---|---|---|
//! | `status.endpoint` empty (the Deployment is not available yet) | False `EndpointNotReady` "endpoint not yet configured" | 10 s |
//! | True `APIHealthy` for this URL, turned True less than 30 s ago | True `APIHealthy` (no request) | goes on |
//! | timed out | False `HealthCheckTimeout` "health check timed out" | 10 s |
//! | the name does not resolve | False `EndpointNotReady` "endpoint not resolvable" | 10 s |
//! | the connection fails (refused, no endpoint, TLS) | False `ConnectionFailed` "connection failed: <error>" | 10 s |
//! | any other transport failure | False `HealthCheckFailed` "health check failed: <error>" | 10 s |
//! | 2xx | True `APIHealthy` "Keystone API is responding at <url>" | goes on |
//! | any other status | False `APIUnhealthy` "Keystone API returned HTTP <code>: <excerpt>" | 10 s |
//!
//! The excerpt is the first 256 bytes of the body, cut back to a whole UTF-8 character,
//! line breaks made spaces, trimmed; an empty one leaves the message at the status. A
//! probe failure never fails the pass.
//!
//! DECISION: CobaltCore keeps the last successful probe in the operator's memory for
//! 30 s. A pass here is a fresh wasm instance with no memory, and a converged pass must
//! not write, so the cache is read from the status instead: KeystoneAPIReady True
//! `APIHealthy` naming this URL, whose lastTransitionTime is less than 30 s before the
//! pass's time. That time is when a probe turned the condition True (a later successful
//! probe leaves it), so a hit never rests on a success older than 30 s; past that every
//! pass probes. A recreated Keystone (a new uid) starts without the condition.
//!
//! DECISION: the SDK reports refused connections, missing endpoints and untrusted TLS as
//! one kind ([`HttpError::Connection`]); all of them are `ConnectionFailed`, except a
//! name that does not resolve, which CobaltCore reports as `EndpointNotReady`. The
//! remaining kinds (a refused destination, an oversized body, too many redirects, ...)
//! are `HealthCheckFailed`.

use std::time::Duration;

use wasm_operator_sdk::http::{HttpError, Request, Response};
use wasm_operator_sdk::log;

use crate::conditions::KEYSTONE_API_READY;
use crate::pass::{Pass, StepResult};
use crate::steps::deployment::internal_url;

/// RequeueHealthCheck: how soon an API that is not healthy is probed again.
pub(crate) const HEALTH_POLLING: Duration = Duration::from_secs(10);
/// The probe's timeout.
const TIMEOUT: Duration = Duration::from_secs(10);
/// How long a probe that turned the condition True spares the next ones.
const CACHE_TTL_SECONDS: i64 = 30;
/// The most bytes of a body quoted in the condition.
const EXCERPT_LIMIT: usize = 256;
/// How the SDK's connection error begins when the name does not resolve.
const UNRESOLVED: &str = "no such host";

/// How the step sends its GET: the SDK's HTTP egress in a pass, canned answers in tests.
pub(crate) trait Probe {
    /// GETs `url`; any status is a response.
    fn get(&self, url: &str, timeout: Duration) -> Result<Response, HttpError>;
}

/// [`Probe`] through `wasm_operator_sdk::http` (contract 1.1 egress).
pub(crate) struct Egress;

impl Probe for Egress {
    fn get(&self, url: &str, timeout: Duration) -> Result<Response, HttpError> {
        Request::get(url).timeout(timeout).send()
    }
}

/// The reason and message of a failed request.
fn classify(error: &HttpError) -> (&'static str, String) {
    match error {
        HttpError::Timeout { .. } => ("HealthCheckTimeout", "health check timed out".into()),
        HttpError::Connection { message, .. } if message.starts_with(UNRESOLVED) => {
            ("EndpointNotReady", "endpoint not resolvable".into())
        }
        HttpError::Connection { .. } => ("ConnectionFailed", format!("connection failed: {error}")),
        _ => ("HealthCheckFailed", format!("health check failed: {error}")),
    }
}

/// The first [`EXCERPT_LIMIT`] bytes of `body` as one trimmed line, never splitting a
/// character.
fn excerpt(body: &[u8]) -> String {
    let mut cut = &body[..body.len().min(EXCERPT_LIMIT)];
    if let Err(e) = std::str::from_utf8(cut)
        && e.error_len().is_none()
    {
        // The limit fell inside a character: drop its first bytes.
        cut = &cut[..e.valid_up_to()];
    }
    let mut text = String::from_utf8_lossy(cut)
        .replace("\r\n", " ")
        .replace(['\n', '\r'], " ");
    // Invalid bytes became U+FFFD, which is wider: keep within the limit all the same.
    while text.len() > EXCERPT_LIMIT {
        text.pop();
    }
    text.trim().to_owned()
}

/// Whether a probe turned KeystoneAPIReady True with `healthy` less than
/// [`CACHE_TTL_SECONDS`] before the pass.
fn cache_hit(pass: &Pass<'_>, healthy: &str) -> bool {
    pass.conditions_of(KEYSTONE_API_READY).is_some_and(|c| {
        let age = pass.now.0.as_second() - c.last_transition_time.0.as_second();
        c.status == "True"
            && c.reason == "APIHealthy"
            && c.message == healthy
            && (0..CACHE_TTL_SECONDS).contains(&age)
    })
}

/// Runs the step through the pass's probe (the SDK's HTTP egress outside tests).
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let probe = pass.probe;
    run_with(pass, probe)
}

/// Runs the step, sending the GET through `probe`.
pub(crate) fn run_with(pass: &mut Pass<'_>, probe: &dyn Probe) -> StepResult {
    let endpoint_set = pass
        .keystone
        .status
        .as_ref()
        .is_some_and(|s| !s.endpoint.is_empty());
    if !endpoint_set {
        let message = "endpoint not yet configured";
        pass.condition(KEYSTONE_API_READY, false, "EndpointNotReady", message);
        return Ok(Some(HEALTH_POLLING));
    }
    let url = internal_url(pass);
    let healthy = format!("Keystone API is responding at {url}");
    if cache_hit(pass, &healthy) {
        pass.condition(KEYSTONE_API_READY, true, "APIHealthy", &healthy);
        return Ok(None);
    }
    match probe.get(&url, TIMEOUT) {
        Err(error) => {
            let (reason, message) = classify(&error);
            log::info(&format!(
                "Keystone API health check failed ({reason}): {error}"
            ));
            pass.condition(KEYSTONE_API_READY, false, reason, &message);
            Ok(Some(HEALTH_POLLING))
        }
        Ok(response) if (200..300).contains(&response.status) => {
            pass.condition(KEYSTONE_API_READY, true, "APIHealthy", &healthy);
            Ok(None)
        }
        Ok(response) => {
            let mut message = format!("Keystone API returned HTTP {}", response.status);
            let excerpt = excerpt(&response.body);
            if !excerpt.is_empty() {
                message = format!("{message}: {excerpt}");
            }
            pass.condition(KEYSTONE_API_READY, false, "APIUnhealthy", &message);
            Ok(Some(HEALTH_POLLING))
        }
    }
}

#[cfg(test)]
#[path = "health_check_tests.rs"]
mod tests;
