//! Admission webhooks called by the server, as kube-apiserver calls them: each test runs a
//! real HTTPS webhook (`harness`) registered through a Mutating- or
//! ValidatingWebhookConfiguration.

mod calls;
mod concurrency;
mod configurations;
mod failures;
mod harness;
mod matching;
mod review;
