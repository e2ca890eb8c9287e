use std::cell::RefCell;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::testing::{condition, keystone, keystone_with, pass};

const URL: &str = "http://ks.ns.svc.cluster.local:5000/v3";
const HEALTHY: &str = "Keystone API is responding at http://ks.ns.svc.cluster.local:5000/v3";
/// The pass's time in the cache tests: 2026-01-01T00:01:00Z.
const NOW: i64 = 1_767_225_660;

/// A [`Probe`] answering every GET with `answer`, recording what it was asked.
struct Canned {
    answer: Result<Response, HttpError>,
    asked: RefCell<Vec<(String, Duration)>>,
}

impl Canned {
    fn answering(answer: Result<Response, HttpError>) -> Self {
        Self {
            answer,
            asked: RefCell::new(Vec::new()),
        }
    }

    fn status(status: u16, body: &[u8]) -> Self {
        Self::answering(Ok(Response {
            status,
            headers: Vec::new(),
            body: body.to_vec(),
            url: URL.into(),
        }))
    }

    fn asked(&self) -> Vec<(String, Duration)> {
        self.asked.borrow().clone()
    }
}

impl Probe for Canned {
    fn get(&self, url: &str, timeout: Duration) -> Result<Response, HttpError> {
        self.asked.borrow_mut().push((url.to_owned(), timeout));
        self.answer.clone()
    }
}

/// The Keystone with `status` (the Deployment step has set its endpoint unless `status`
/// says otherwise).
fn with_status(status: Value) -> Value {
    let mut object = keystone();
    object["status"] = status;
    object
}

fn available() -> Value {
    with_status(json!({"endpoint": URL}))
}

/// KeystoneAPIReady as a probe left it at second `at`.
fn probed(status: &str, reason: &str, message: &str, at: i64) -> Value {
    let time = Timestamp::from_second(at).expect("a time").to_string();
    with_status(
        json!({"endpoint": URL, "conditions": [{"type": "KeystoneAPIReady",
        "status": status, "reason": reason, "message": message, "observedGeneration": 2,
        "lastTransitionTime": time}]}),
    )
}

/// Runs the step over `object` at [`NOW`] with `probe`: its result and the condition.
fn check(object: &Value, probe: &Canned) -> (Option<Duration>, (String, String, String)) {
    let cluster = FakeCluster::new();
    let mut pass = pass(&cluster, object);
    pass.now = Time(Timestamp::from_second(NOW).expect("a time"));
    let result = run_with(&mut pass, probe).expect("a probe never fails the pass");
    assert!(
        cluster.calls().is_empty(),
        "the step reads nothing from the cluster"
    );
    (result, condition(&pass, KEYSTONE_API_READY))
}

fn triple(status: &str, reason: &str, message: &str) -> (String, String, String) {
    (status.into(), reason.into(), message.into())
}

#[test]
fn without_an_endpoint_the_api_is_not_probed() {
    for (case, object) in [
        ("no status", keystone()),
        ("an empty endpoint", with_status(json!({"endpoint": ""}))),
    ] {
        let probe = Canned::status(200, b"");
        let (result, condition) = check(&object, &probe);
        assert_eq!(result, Some(HEALTH_POLLING), "{case}");
        assert_eq!(HEALTH_POLLING, Duration::from_secs(10));
        assert_eq!(
            condition,
            triple("False", "EndpointNotReady", "endpoint not yet configured"),
            "{case}"
        );
        assert!(probe.asked().is_empty(), "{case}");
    }
}

#[test]
fn each_transport_failure_has_its_reason_and_a_probe_again_in_ten_seconds() {
    let connection = |message: &str| HttpError::Connection {
        url: URL.into(),
        message: message.into(),
    };
    let cases = [
        (
            HttpError::Timeout { url: URL.into() },
            "HealthCheckTimeout",
            "health check timed out".to_owned(),
        ),
        (
            connection("no such host ks.ns.svc.cluster.local"),
            "EndpointNotReady",
            "endpoint not resolvable".to_owned(),
        ),
        (
            connection("connection refused"),
            "ConnectionFailed",
            format!("connection failed: {URL}: cannot connect: connection refused"),
        ),
        (
            connection("the server's TLS certificate is not trusted"),
            "ConnectionFailed",
            format!(
                "connection failed: {URL}: cannot connect: the server's TLS certificate is \
                 not trusted"
            ),
        ),
        (
            HttpError::Refused {
                url: URL.into(),
                destination: "ks.ns.svc.cluster.local:5000".into(),
            },
            "HealthCheckFailed",
            format!(
                "health check failed: {URL}: refused: ks.ns.svc.cluster.local:5000 is not a \
                 destination the plugin declared"
            ),
        ),
        (
            HttpError::TooLarge { url: URL.into() },
            "HealthCheckFailed",
            format!("health check failed: {URL}: the response body is over the host's limit"),
        ),
        (
            HttpError::Other {
                url: URL.into(),
                message: "HttpProtocolError".into(),
            },
            "HealthCheckFailed",
            format!("health check failed: {URL}: HttpProtocolError"),
        ),
    ];
    for (error, reason, message) in cases {
        let probe = Canned::answering(Err(error.clone()));
        let (result, condition) = check(&available(), &probe);
        assert_eq!(result, Some(HEALTH_POLLING), "{error}");
        assert_eq!(condition, triple("False", reason, &message), "{error}");
        assert_eq!(
            probe.asked(),
            [(URL.to_owned(), Duration::from_secs(10))],
            "{error}"
        );
    }
}

#[test]
fn a_2xx_answer_is_healthy_and_always_from_the_service_url() {
    let behind_gateway = with_status(json!({"endpoint": "https://id.example.com/v3"}));
    for (case, object, status) in [
        ("200", available(), 200),
        ("204", available(), 204),
        (
            "the endpoint advertised through a Gateway",
            behind_gateway,
            200,
        ),
    ] {
        let probe = Canned::status(status, b"{\"version\": {}}");
        let (result, condition) = check(&object, &probe);
        assert_eq!(result, None, "{case}");
        assert_eq!(condition, triple("True", "APIHealthy", HEALTHY), "{case}");
        assert_eq!(probe.asked().len(), 1, "{case}");
        assert_eq!(probe.asked()[0].0, URL, "{case}");
    }
}

#[test]
fn any_other_status_is_unhealthy_with_a_one_line_excerpt_of_at_most_256_bytes() {
    let long = format!("  Internal error\r\nline two\n{}", "x".repeat(400));
    let long_excerpt = format!("Internal error line two {}", "x".repeat(256 - 27));
    // 255 ASCII bytes and a two-byte character across the limit.
    let split = format!("{}é and more", "a".repeat(255));
    let cases: Vec<(&str, u16, Vec<u8>, String)> = vec![
        (
            "a long body, its line breaks made spaces",
            500,
            long.into_bytes(),
            format!("Keystone API returned HTTP 500: {long_excerpt}"),
        ),
        (
            "a character split by the limit is dropped whole",
            502,
            split.into_bytes(),
            format!("Keystone API returned HTTP 502: {}", "a".repeat(255)),
        ),
        (
            "an empty body leaves the status alone",
            503,
            Vec::new(),
            "Keystone API returned HTTP 503".into(),
        ),
        (
            "a blank body too",
            404,
            b" \r\n ".to_vec(),
            "Keystone API returned HTTP 404".into(),
        ),
        (
            "a redirect not followed",
            300,
            b"Multiple Choices".to_vec(),
            "Keystone API returned HTTP 300: Multiple Choices".into(),
        ),
    ];
    for (case, status, body, message) in cases {
        let probe = Canned::status(status, &body);
        let (result, condition) = check(&available(), &probe);
        assert_eq!(result, Some(HEALTH_POLLING), "{case}");
        assert_eq!(
            condition,
            triple("False", "APIUnhealthy", &message),
            "{case}"
        );
    }
    // 256 bytes cut, the CR LF made one space, the two leading spaces trimmed.
    assert_eq!(long_excerpt.len(), 253);
}

#[test]
fn an_excerpt_of_bytes_that_are_not_text_stays_within_256_bytes() {
    let excerpt = excerpt(&[0xff; 300]);
    assert!(excerpt.len() <= 256, "{}", excerpt.len());
    assert!(excerpt.chars().all(|c| c == char::REPLACEMENT_CHARACTER));
    assert_eq!(excerpt.chars().count(), 85);
}

#[test]
fn a_healthy_probe_less_than_30_seconds_old_spares_the_request() {
    for age in [0, 29] {
        let object = probed("True", "APIHealthy", HEALTHY, NOW - age);
        let probe = Canned::status(500, b"would be unhealthy");
        let (result, condition) = check(&object, &probe);
        assert_eq!(result, None, "{age}s");
        assert_eq!(condition, triple("True", "APIHealthy", HEALTHY), "{age}s");
        assert!(probe.asked().is_empty(), "{age}s: no request");
    }
}

#[test]
fn an_old_failed_or_other_endpoints_probe_is_no_cache_hit() {
    let other = "Keystone API is responding at http://old.ns.svc.cluster.local:5000/v3";
    let cases = [
        ("30 s old", probed("True", "APIHealthy", HEALTHY, NOW - 30)),
        ("31 s old", probed("True", "APIHealthy", HEALTHY, NOW - 31)),
        (
            "from the future",
            probed("True", "APIHealthy", HEALTHY, NOW + 5),
        ),
        (
            "another endpoint",
            probed("True", "APIHealthy", other, NOW - 1),
        ),
        (
            "a failed probe",
            probed(
                "False",
                "APIUnhealthy",
                "Keystone API returned HTTP 500",
                NOW - 1,
            ),
        ),
    ];
    for (case, object) in cases {
        let probe = Canned::status(503, b"");
        let (result, condition) = check(&object, &probe);
        assert_eq!(result, Some(HEALTH_POLLING), "{case}");
        assert_eq!(
            condition,
            triple("False", "APIUnhealthy", "Keystone API returned HTTP 503"),
            "{case}"
        );
        assert_eq!(probe.asked().len(), 1, "{case}: probed");
    }
}

#[test]
fn without_the_operator_host_the_sdk_egress_fails_as_a_health_check_failure() {
    let cluster = FakeCluster::new();
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    pass.keystone.status = Some(crate::types::KeystoneStatus {
        endpoint: URL.into(),
        ..Default::default()
    });
    assert_eq!(run(&mut pass).expect("runs"), Some(HEALTH_POLLING));
    // Natively there is no host; under `wasi-run` the test runner denies every request.
    let cause = if cfg!(target_arch = "wasm32") {
        "refused: ks.ns.svc.cluster.local:5000 is not a destination the plugin declared"
    } else {
        "HTTP needs the wasm-operator host"
    };
    assert_eq!(
        condition(&pass, KEYSTONE_API_READY),
        triple(
            "False",
            "HealthCheckFailed",
            &format!("health check failed: {URL}: {cause}")
        )
    );
}
