//! The SDK's HTTP client natively (kept out of `src/`: the unit tests there also run under
//! `wasi-run`, which serves no `wasi:http`).

use wasm_operator_sdk::http::{self, HttpError};

#[test]
fn natively_a_request_fails_unavailable() {
    assert_eq!(
        http::get("http://a.ns.svc.cluster.local:5000/"),
        Err(HttpError::Unavailable {
            url: "http://a.ns.svc.cluster.local:5000/".into()
        })
    );
}
