//! The host's Prometheus metrics, served as text on `/metrics`.
//!
//! | metric | labels | what |
//! |---|---|---|
//! | `wasm_operator_passes_total` | plugin, result | passes by how they ended: `success`, `requeue`, `conflict` (failed on a 409: a stale read, a failed precondition), `error` |
//! | `wasm_operator_pass_errors_total` | plugin, error | failed passes by cause (`deadline`, `memory_cap`, `panic`, `trap`, `reconcile`, ...) |
//! | `wasm_operator_pass_duration_seconds` | plugin | pass wall-clock time (histogram) |
//! | `wasm_operator_queue_depth` | plugin | keys waiting in the plugin's work queue |
//! | `wasm_operator_passes_in_flight` | plugin | passes running now |
//! | `wasm_operator_api_requests_total` | verb, kind, code | API requests made for plugins (code `0` = no response) |
//! | `wasm_operator_plugin_http_requests_total` | plugin, destination, status | plugins' HTTP requests by `host:port` and outcome (the HTTP code, `refused`, `timeout` or `error`) |
//! | `wasm_operator_plugin_info` | plugin, version, sha256, state | 1 per loaded plugin version; state `serving` or `refused` |
//! | `wasm_operator_leader` | | 1 while this replica holds the leader Lease |
//! | `wasm_operator_admission_reviews_total` | plugin, phase, outcome | AdmissionReviews answered: phase `default` or `validate`; outcome `allowed`, `defaulted`, `denied`, `skipped` (a write the plugin does not admit), `failed` (refused under `Fail`) or `ignored` (failed under `Ignore`) |
//! | `wasm_operator_planner_calls_total` | | planner calls a planner plugin ran |
//! | `wasm_operator_planner_memo_hits_total` | | planner calls answered from the planner's memo, without running it |
//! | `wasm_operator_planner_instances_total` | | planner instances made |

use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;

fn duration_histogram() -> Histogram {
    // 1 ms .. ~65 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

/// Every metric of one host.
pub struct Metrics {
    registry: Registry,
    passes: Family<Labels, Counter>,
    pass_errors: Family<Labels, Counter>,
    pass_duration: Family<Labels, Histogram, fn() -> Histogram>,
    queue_depth: Family<Labels, Gauge>,
    in_flight: Family<Labels, Gauge>,
    api_requests: Family<Labels, Counter>,
    http_requests: Family<Labels, Counter>,
    plugin_info: Family<Labels, Gauge>,
    leader: Gauge,
    admission: Family<Labels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Empty metrics, registered under the `wasm_operator` prefix.
    pub(crate) fn new() -> Self {
        let mut registry = Registry::with_prefix("wasm_operator");
        let passes = Family::<Labels, Counter>::default();
        let pass_errors = Family::<Labels, Counter>::default();
        let pass_duration = Family::<Labels, Histogram, fn() -> Histogram>::new_with_constructor(
            duration_histogram,
        );
        let queue_depth = Family::<Labels, Gauge>::default();
        let in_flight = Family::<Labels, Gauge>::default();
        let api_requests = Family::<Labels, Counter>::default();
        let http_requests = Family::<Labels, Counter>::default();
        let plugin_info = Family::<Labels, Gauge>::default();
        let leader = Gauge::default();
        let admission = Family::<Labels, Counter>::default();
        registry.register(
            "admission_reviews",
            "AdmissionReviews answered by plugins",
            admission.clone(),
        );
        registry.register("passes", "Reconcile passes by result", passes.clone());
        registry.register("pass_errors", "Failed passes by cause", pass_errors.clone());
        registry.register(
            "pass_duration_seconds",
            "Reconcile pass duration",
            pass_duration.clone(),
        );
        registry.register(
            "queue_depth",
            "Keys waiting in the work queue",
            queue_depth.clone(),
        );
        registry.register("passes_in_flight", "Passes running now", in_flight.clone());
        registry.register(
            "api_requests",
            "Kubernetes API requests made for plugins",
            api_requests.clone(),
        );
        registry.register(
            "plugin_http_requests",
            "HTTP requests made by plugins",
            http_requests.clone(),
        );
        registry.register("plugin_info", "Loaded plugin versions", plugin_info.clone());
        registry.register(
            "leader",
            "1 while this replica is the leader",
            leader.clone(),
        );
        Self {
            registry,
            passes,
            pass_errors,
            pass_duration,
            queue_depth,
            in_flight,
            api_requests,
            http_requests,
            plugin_info,
            leader,
            admission,
        }
    }

    /// Counts one AdmissionReview `plugin` answered in `phase` with `outcome`.
    pub(crate) fn admission(&self, plugin: &str, phase: &str, outcome: &str) {
        self.admission
            .get_or_create(&vec![
                ("plugin", plugin.to_owned()),
                ("phase", phase.to_owned()),
                ("outcome", outcome.to_owned()),
            ])
            .inc();
    }

    /// Counts one pass of `plugin` that ended with `result` after `elapsed`; `error` is the
    /// cause of a failed one.
    pub(crate) fn pass(&self, plugin: &str, result: &str, error: Option<&str>, elapsed: Duration) {
        self.passes
            .get_or_create(&vec![
                ("plugin", plugin.to_owned()),
                ("result", result.to_owned()),
            ])
            .inc();
        if let Some(error) = error {
            self.pass_errors
                .get_or_create(&vec![
                    ("plugin", plugin.to_owned()),
                    ("error", error.to_owned()),
                ])
                .inc();
        }
        self.pass_duration
            .get_or_create(&vec![("plugin", plugin.to_owned())])
            .observe(elapsed.as_secs_f64());
    }

    /// How many passes of `plugin` have ended, however they ended.
    pub fn passes(&self, plugin: &str) -> u64 {
        ["success", "requeue", "conflict", "error"]
            .into_iter()
            .filter_map(|result| {
                let labels = vec![("plugin", plugin.to_owned()), ("result", result.to_owned())];
                self.passes.get(&labels).map(|counter| counter.get())
            })
            .sum()
    }

    /// Sets the depth of `plugin`'s work queue.
    pub(crate) fn queue_depth(&self, plugin: &str, depth: usize) {
        self.queue_depth
            .get_or_create(&vec![("plugin", plugin.to_owned())])
            .set(i64::try_from(depth).unwrap_or(i64::MAX));
    }

    /// Counts a pass of `plugin` as started (`+1`) or ended (`-1`).
    pub(crate) fn in_flight(&self, plugin: &str, delta: i64) {
        self.in_flight
            .get_or_create(&vec![("plugin", plugin.to_owned())])
            .inc_by(delta);
    }

    /// Counts one API request.
    pub(crate) fn api_request(&self, verb: &str, kind: &str, code: u16) {
        self.api_requests
            .get_or_create(&vec![
                ("verb", verb.to_owned()),
                ("kind", kind.to_owned()),
                ("code", code.to_string()),
            ])
            .inc();
    }

    /// Counts one HTTP request of `plugin` to `destination` that ended with `status`.
    pub(crate) fn http_request(&self, plugin: &str, destination: &str, status: &str) {
        self.http_requests
            .get_or_create(&vec![
                ("plugin", plugin.to_owned()),
                ("destination", destination.to_owned()),
                ("status", status.to_owned()),
            ])
            .inc();
    }

    /// Records a plugin version as serving (1) or refused; `None` clears a removed plugin.
    pub(crate) fn plugin(&self, plugin: &str, version: &str, sha256: &str, state: Option<&str>) {
        for s in ["serving", "refused"] {
            let labels = vec![
                ("plugin", plugin.to_owned()),
                ("version", version.to_owned()),
                ("sha256", sha256.to_owned()),
                ("state", s.to_owned()),
            ];
            if state == Some(s) {
                self.plugin_info.get_or_create(&labels).set(1);
            } else {
                self.plugin_info.remove(&labels);
            }
        }
    }

    /// Records whether this replica leads.
    pub(crate) fn leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// Empty metrics that also report `runtime`'s planner counters, read at each scrape.
    pub(crate) fn with_runtime(runtime: &wasm_operator_runtime::Runtime) -> Self {
        let mut metrics = Self::new();
        metrics
            .registry
            .register_collector(Box::new(PlannerCounters(runtime.clone())));
        metrics
    }

    /// The metrics in the Prometheus text format.
    pub fn render(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }
}

/// The runtime's planner counters.
struct PlannerCounters(wasm_operator_runtime::Runtime);

impl std::fmt::Debug for PlannerCounters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PlannerCounters")
    }
}

impl Collector for PlannerCounters {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let runtime = &self.0;
        for (name, help, value) in [
            (
                "planner_calls",
                "Planner calls a planner plugin ran",
                runtime.planner_calls(),
            ),
            (
                "planner_memo_hits",
                "Planner calls answered from the planner's memo, without running it",
                runtime.planner_memo_hits(),
            ),
            (
                "planner_instances",
                "Planner instances made",
                runtime.planner_instances(),
            ),
        ] {
            let counter = ConstCounter::new(value);
            let metric = encoder.encode_descriptor(name, help, None, counter.metric_type())?;
            counter.encode(metric)?;
        }
        Ok(())
    }
}

impl wasm_operator_runtime::EgressObserver for Metrics {
    fn request(&self, plugin: &str, destination: &str, status: &str) {
        self.http_request(plugin, destination, status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_passes_requests_and_plugins_appear_in_the_text_format() {
        let metrics = Metrics::new();
        metrics.pass("fixture", "success", None, Duration::from_millis(3));
        metrics.pass("fixture", "error", Some("deadline"), Duration::from_secs(1));
        metrics.queue_depth("fixture", 4);
        metrics.api_request("patch", "ConfigMap", 200);
        metrics.http_request(
            "fixture",
            "keystone.openstack.svc.cluster.local:5000",
            "refused",
        );
        metrics.plugin("fixture", "0.1.0", "ab12", Some("serving"));
        metrics.leader(true);
        let text = metrics.render();
        for expected in [
            r#"wasm_operator_passes_total{plugin="fixture",result="success"} 1"#,
            r#"wasm_operator_pass_errors_total{plugin="fixture",error="deadline"} 1"#,
            r#"wasm_operator_pass_duration_seconds_count{plugin="fixture"} 2"#,
            r#"wasm_operator_queue_depth{plugin="fixture"} 4"#,
            r#"wasm_operator_api_requests_total{verb="patch",kind="ConfigMap",code="200"} 1"#,
            r#"wasm_operator_plugin_http_requests_total{plugin="fixture",destination="keystone.openstack.svc.cluster.local:5000",status="refused"} 1"#,
            r#"wasm_operator_plugin_info{plugin="fixture",version="0.1.0",sha256="ab12",state="serving"} 1"#,
            "wasm_operator_leader 1",
        ] {
            assert!(text.contains(expected), "missing {expected} in\n{text}");
        }
    }

    #[tokio::test]
    async fn the_runtimes_planner_counters_appear_in_the_text_format() {
        let runtime = wasm_operator_runtime::Runtime::new(wasm_operator_runtime::RuntimeConfig {
            cache_dir: None,
            ..wasm_operator_runtime::RuntimeConfig::default()
        })
        .expect("runtime");
        let text = Metrics::with_runtime(&runtime).render();
        for expected in [
            "wasm_operator_planner_calls_total 0",
            "wasm_operator_planner_memo_hits_total 0",
            "wasm_operator_planner_instances_total 0",
        ] {
            assert!(text.contains(expected), "missing {expected} in\n{text}");
        }
        assert!(
            !Metrics::new().render().contains("planner_calls"),
            "only metrics given a runtime report it"
        );
    }
}
