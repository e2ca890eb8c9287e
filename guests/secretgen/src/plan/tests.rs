use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::*;
use crate::api::PlanFailure;
use crate::entries::EntryError;
use crate::keys::testing::{NoKeys, PooledKeys};
use crate::secret::testing::SecretBuilder;

/// The chart's spec.secrets (release `demo`).
fn chart_entries() -> Vec<Value> {
    serde_json::from_str(include_str!("../../tests/data/chart-defaults-secrets.json"))
        .expect("fixture")
}

fn chart_entry(name: &str) -> Value {
    chart_entries()
        .into_iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no entry {name}"))
}

/// A request for the Secret the entries name.
struct Request {
    entries: Vec<Value>,
    existing: Option<SecretBuilder>,
    ready_units: Vec<String>,
    generate: bool,
}

impl Request {
    fn new(entries: Vec<Value>) -> Self {
        Self {
            entries,
            existing: None,
            ready_units: Vec::new(),
            generate: true,
        }
    }

    fn entry(entry: Value) -> Self {
        Self::new(vec![entry])
    }

    fn existing(mut self, secret: SecretBuilder) -> Self {
        self.existing = Some(secret);
        self
    }

    fn ready(mut self, units: &[&str]) -> Self {
        self.ready_units = units.iter().map(|u| (*u).to_owned()).collect();
        self
    }

    fn without_generate(mut self) -> Self {
        self.generate = false;
        self
    }

    fn request(&self) -> SecretRequest {
        SecretRequest {
            name: self.entries[0]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            entries: Value::Array(self.entries.clone()).to_string(),
            existing: self.existing.as_ref().map(SecretBuilder::json),
            ready_units: self.ready_units.clone(),
            generate: self.generate,
        }
    }

    fn plan_with(&self, keys: &dyn KeySource) -> Result<SecretPlan, PlanError> {
        plan_at(&self.request(), keys, SystemTime::now())
    }

    fn plan(&self) -> SecretPlan {
        self.plan_with(&PooledKeys).expect("plans")
    }
}

fn keys_of(plan: &SecretPlan) -> Vec<&str> {
    plan.add.iter().map(|e| e.key.as_str()).collect()
}

fn value<'p>(plan: &'p SecretPlan, key: &str) -> &'p str {
    let entry = plan.add.iter().find(|e| e.key == key).expect("added");
    std::str::from_utf8(&entry.value).expect("text")
}

fn secret(name: &str, generators: Value) -> Value {
    json!({"name": name, "type": "Opaque", "generators": generators})
}

fn random(key: &str) -> Value {
    json!({"type": "random", "key": key, "charset": "alphanumeric", "length": 8})
}

#[test]
fn every_chart_secret_is_created_whole_and_ready() {
    let cases: [(&str, &[&str]); 13] = [
        ("demo-gitlab-initial-root-password", &["password"]),
        ("demo-gitlab-shell-secret", &["secret"]),
        ("demo-gitaly-secret", &["token"]),
        (
            "demo-gitlab-runner-secret",
            &["runner-registration-token", "runner-token"],
        ),
        ("demo-gitlab-kas-secret", &["kas_shared_secret"]),
        ("demo-kas-private-api", &["kas_private_api_secret"]),
        ("demo-kas-websocket-token", &["kas_websocket_token_secret"]),
        (
            "demo-registry-secret",
            &["registry-auth.crt", "registry-auth.key"],
        ),
        ("demo-rails-secret", &["secrets.yml"]),
        (
            "demo-gitlab-shell-host-keys",
            &[
                "ssh_host_rsa_key",
                "ssh_host_rsa_key.pub",
                "ssh_host_ecdsa_key",
                "ssh_host_ecdsa_key.pub",
                "ssh_host_ed25519_key",
                "ssh_host_ed25519_key.pub",
            ],
        ),
        ("demo-gitlab-workhorse-secret", &["shared_secret"]),
        ("demo-registry-httpsecret", &["secret"]),
        ("demo-registry-notification", &["secret"]),
    ];
    for (name, keys) in cases {
        let plan = Request::entry(chart_entry(name)).plan();
        assert_eq!(keys_of(&plan), keys, "{name}");
        assert!(
            plan.ready && plan.reports.is_empty(),
            "{name}: {:?}",
            plan.reports
        );
        assert_eq!(plan.secret_type, "Opaque");
        assert_eq!(plan.next_ready_units, plan.declared_units, "{name}");
        assert_eq!(plan.type_kept, None);
    }
}

fn all_of(value: &str, charset: &[u8]) -> bool {
    value.bytes().all(|b| charset.contains(&b))
}

const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const LOWER_ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

#[test]
fn chart_values_have_the_shapes_the_job_wrote() {
    let plan = |name| Request::entry(chart_entry(name)).plan();

    let token = plan("demo-gitaly-secret");
    let token = value(&token, "token");
    assert!(token.len() == 64 && all_of(token, ALNUM));

    let kas = plan("demo-gitlab-kas-secret");
    let kas = value(&kas, "kas_shared_secret");
    let decoded = STANDARD.decode(kas).expect("base64");
    assert!(kas.len() == 44 && !kas.contains('\n') && decoded.len() == 32);
    assert!(decoded.iter().all(|b| ALNUM.contains(b)));

    let websocket = plan("demo-kas-websocket-token");
    let websocket = value(&websocket, "kas_websocket_token_secret");
    assert_eq!(STANDARD.decode(websocket).map(|v| v.len()).ok(), Some(72));

    let http = plan("demo-registry-httpsecret");
    let http = value(&http, "secret");
    let decoded = STANDARD.decode(http).expect("base64");
    assert!(
        http.len() == 172
            && decoded.len() == 128
            && decoded.iter().all(|b| LOWER_ALNUM.contains(b))
    );

    let notification = plan("demo-registry-notification");
    let notification = value(&notification, "secret");
    let array: Vec<String> = serde_json::from_str(notification).expect("JSON array");
    assert!(notification.starts_with("[\"") && array.len() == 1 && array[0].len() == 32);

    let runner = plan("demo-gitlab-runner-secret");
    assert_eq!(value(&runner, "runner-token"), "");

    let registry = plan("demo-registry-secret");
    assert!(value(&registry, "registry-auth.crt").starts_with("-----BEGIN CERTIFICATE-----\n"));
    assert!(value(&registry, "registry-auth.key").starts_with("-----BEGIN PRIVATE KEY-----\n"));

    let rails = plan("demo-rails-secret");
    let yml = value(&rails, "secrets.yml");
    assert!(yml.starts_with("production:\n  secret_key_base: ") && yml.ends_with('\n'));
    assert!(yml.contains("\n  openid_connect_signing_key: |\n    -----BEGIN PRIVATE KEY-----\n"));
    assert!(yml.contains("\n  active_record_encryption_primary_key:\n    - "));
    let doc = crate::yaml::Document::parse(yml).expect("YAML");
    assert!(doc.root().is_some());
}

#[test]
fn an_existing_key_is_never_changed_and_only_missing_keys_are_added() {
    let entry = chart_entry("demo-gitlab-runner-secret");
    let cases: [(&str, SecretBuilder, &[&str]); 3] = [
        (
            "both present",
            SecretBuilder::new("demo-gitlab-runner-secret")
                .with("runner-registration-token", "old")
                .with("runner-token", "real-token"),
            &[],
        ),
        (
            "the static key present with a value of its own",
            SecretBuilder::new("demo-gitlab-runner-secret").with("runner-token", "registered"),
            &["runner-registration-token"],
        ),
        (
            "an undeclared key only",
            SecretBuilder::new("demo-gitlab-runner-secret").with("other", "x"),
            &["runner-registration-token", "runner-token"],
        ),
    ];
    for (name, existing, added) in cases {
        let plan = Request::entry(entry.clone()).existing(existing).plan();
        assert_eq!(keys_of(&plan), added, "{name}");
        assert!(plan.ready, "{name}");
    }
}

#[test]
fn a_deleted_key_of_a_ready_secret_is_generated_again() {
    let plan = Request::entry(chart_entry("demo-gitaly-secret"))
        .existing(SecretBuilder::new("demo-gitaly-secret"))
        .ready(&["token"])
        .plan();
    assert_eq!(keys_of(&plan), ["token"]);
    assert!(plan.ready);
}

#[test]
fn a_secret_declaring_more_units_than_status_holds_is_reported_and_gains_nothing() {
    let generators: Vec<Value> = (0..=MAX_READY_UNITS)
        .map(|i| random(&format!("k{i}")))
        .collect();
    let plan = Request::entry(secret("many", Value::Array(generators)))
        .ready(&["k0", "gone"])
        .plan();
    assert!(plan.add.is_empty() && !plan.ready);
    assert_eq!(plan.reports.len(), 1);
    assert!(
        plan.reports[0].contains("65 data-bearing units"),
        "{:?}",
        plan.reports
    );
    assert_eq!(plan.declared_units.len(), MAX_READY_UNITS + 1);
    assert_eq!(plan.next_ready_units, ["k0"]);
}

#[test]
fn static_values_do_not_count_as_data_bearing_units() {
    let mut generators: Vec<Value> = (0..MAX_READY_UNITS)
        .map(|i| random(&format!("k{i}")))
        .collect();
    generators.push(json!({"type": "static", "key": "s", "value": "v"}));
    let plan = Request::entry(secret("many", Value::Array(generators))).plan();
    assert!(plan.ready, "{:?}", plan.reports);
    assert_eq!(plan.declared_units.len(), MAX_READY_UNITS);
    assert!(!plan.declared_units.contains(&"s".to_owned()));
}

#[test]
fn a_secret_over_1_mib_is_reported_and_gains_nothing() {
    let cases = [
        ("existing data near the limit", MAX_SECRET_BYTES - 4, true),
        ("existing data just fitting", MAX_SECRET_BYTES - 8, false),
    ];
    for (name, existing_size, reported) in cases {
        let plan = Request::entry(secret("big", json!([random("a")])))
            .existing(SecretBuilder::new("big").with("blob", vec![b'x'; existing_size]))
            .plan();
        assert_eq!(
            !plan.reports.is_empty(),
            reported,
            "{name}: {:?}",
            plan.reports
        );
        assert_eq!(plan.add.is_empty(), reported, "{name}");
        if reported {
            assert!(plan.reports[0].contains("1048576"), "{:?}", plan.reports);
        }
    }
}

#[test]
fn an_immutable_secret_lacking_a_key_is_reported_and_gains_nothing() {
    let entry = chart_entry("demo-gitlab-runner-secret");
    let lacking = Request::entry(entry.clone())
        .existing(
            SecretBuilder::new("demo-gitlab-runner-secret")
                .immutable()
                .with("runner-registration-token", "x"),
        )
        .plan();
    assert!(lacking.add.is_empty() && !lacking.ready);
    assert!(
        lacking.reports[0].contains("immutable and lacks runner-token"),
        "{:?}",
        lacking.reports
    );

    let complete = Request::entry(entry)
        .existing(
            SecretBuilder::new("demo-gitlab-runner-secret")
                .immutable()
                .with("runner-registration-token", "x")
                .with("runner-token", ""),
        )
        .plan();
    assert!(complete.ready && complete.reports.is_empty());
}

#[test]
fn an_existing_type_is_kept_and_noted() {
    let plan = Request::entry(chart_entry("demo-gitaly-secret"))
        .existing(SecretBuilder::new("demo-gitaly-secret").typed("example.com/custom"))
        .plan();
    assert_eq!(plan.secret_type, "example.com/custom");
    assert_eq!(
        plan.type_kept,
        Some(("example.com/custom".to_owned(), "Opaque".to_owned()))
    );
    assert!(plan.ready, "a kept type stays ready");
}

#[test]
fn without_generate_a_secret_that_needs_generating_is_reported_and_nothing_is_generated() {
    let plan = Request::entry(chart_entry("demo-registry-secret"))
        .without_generate()
        .plan_with(&NoKeys)
        .expect("plans without keys");
    assert!(plan.add.is_empty() && !plan.ready);
    assert_eq!(
        plan.reports,
        ["Secret demo-registry-secret: needs generating: registry-auth.crt+registry-auth.key"]
    );
}

#[test]
fn without_generate_static_values_are_still_written() {
    let plan = Request::entry(chart_entry("demo-gitlab-runner-secret"))
        .existing(
            SecretBuilder::new("demo-gitlab-runner-secret").with("runner-registration-token", "x"),
        )
        .without_generate()
        .plan_with(&NoKeys)
        .expect("plans");
    assert_eq!(keys_of(&plan), ["runner-token"]);
    assert!(plan.ready);
}

#[test]
fn the_clock_is_read_only_when_a_certificate_is_generated() {
    let name = "demo-registry-secret";
    let held = SecretBuilder::new(name)
        .with("registry-auth.crt", "pem")
        .with("registry-auth.key", "pem");
    let cases = [
        ("generated", Request::entry(chart_entry(name)), true),
        (
            "held",
            Request::entry(chart_entry(name)).existing(held),
            false,
        ),
    ];
    for (case, request, reads) in cases {
        let clock_reads = std::cell::Cell::new(0);
        let clock = || {
            clock_reads.set(clock_reads.get() + 1);
            SystemTime::now()
        };
        let plan = plan_with_clock(&request.request(), &PooledKeys, &clock).expect(case);
        assert!(plan.ready, "{case}: {:?}", plan.reports);
        assert_eq!(clock_reads.get() > 0, reads, "{case}");
    }
}

#[test]
fn a_unit_holding_only_some_of_its_keys_is_reported() {
    let cases = [
        (
            "x509 without its key",
            chart_entry("demo-registry-secret"),
            SecretBuilder::new("demo-registry-secret").with("registry-auth.crt", "pem"),
            "unit registry-auth.crt+registry-auth.key holds registry-auth.crt but lacks registry-auth.key",
        ),
        (
            "a host key without its .pub",
            chart_entry("demo-gitlab-shell-host-keys"),
            SecretBuilder::new("demo-gitlab-shell-host-keys").with("ssh_host_rsa_key", "pem"),
            "unit ssh_host_rsa_key holds ssh_host_rsa_key but lacks ssh_host_rsa_key.pub",
        ),
    ];
    for (name, entry, existing, report) in cases {
        let plan = Request::entry(entry).existing(existing).plan();
        assert!(plan.add.is_empty() && !plan.ready, "{name}");
        assert!(
            plan.reports[0].contains(report),
            "{name}: {:?}",
            plan.reports
        );
    }
}

#[test]
fn a_missing_host_key_type_is_added_to_an_existing_host_key_secret() {
    let plan = Request::entry(chart_entry("demo-gitlab-shell-host-keys"))
        .existing(
            SecretBuilder::new("demo-gitlab-shell-host-keys")
                .with("ssh_host_rsa_key", "a")
                .with("ssh_host_rsa_key.pub", "b")
                .with("ssh_host_ecdsa_key", "c")
                .with("ssh_host_ecdsa_key.pub", "d"),
        )
        .plan();
    assert_eq!(
        keys_of(&plan),
        ["ssh_host_ed25519_key", "ssh_host_ed25519_key.pub"]
    );
}

#[test]
fn the_next_ready_units_are_the_declared_ones_when_ready_and_the_kept_ones_otherwise() {
    let entry = secret("s", json!([random("a"), random("b")]));
    let ready = Request::entry(entry.clone()).ready(&["x"]).plan();
    assert_eq!(ready.next_ready_units, ["a", "b"]);

    let reported = Request::entry(entry)
        .existing(SecretBuilder::new("s").immutable())
        .ready(&["b", "undeclared", "a"])
        .plan();
    assert!(!reported.ready);
    assert_eq!(reported.next_ready_units, ["b", "a"]);
}

#[test]
fn secrets_yml_gains_only_its_missing_fields() {
    let entry = chart_entry("demo-rails-secret");
    let complete = Request::entry(entry.clone()).plan();
    let complete_yml = value(&complete, "secrets.yml").to_owned();

    let unchanged = Request::entry(entry.clone())
        .existing(SecretBuilder::new("demo-rails-secret").with("secrets.yml", &complete_yml))
        .plan();
    assert!(unchanged.add.is_empty() && unchanged.ready);

    let partial = "production:\n  secret_key_base: 12345\n  db_key_base: kept\n";
    let filled = Request::entry(entry.clone())
        .existing(SecretBuilder::new("demo-rails-secret").with("secrets.yml", partial))
        .plan();
    let yml = value(&filled, "secrets.yml");
    assert!(yml.starts_with(partial), "{yml}");
    assert_eq!(yml.matches("openid_connect_signing_key").count(), 1);

    let broken = Request::entry(entry)
        .existing(SecretBuilder::new("demo-rails-secret").with("secrets.yml", "- a list\n"))
        .plan();
    assert!(broken.add.is_empty() && !broken.ready);
    assert_eq!(
        broken.reports,
        ["Secret demo-rails-secret: key secrets.yml: its document is not a mapping"]
    );
}

#[test]
fn without_generate_missing_rails_fields_are_reported_by_unit() {
    let plan = Request::entry(chart_entry("demo-rails-secret"))
        .existing(SecretBuilder::new("demo-rails-secret").with(
            "secrets.yml",
            "production:\n  secret_key_base: a\n  otp_key_base: b\n  db_key_base: c\n  \
             encrypted_settings_key_base: d\n  openid_connect_signing_key: e\n  \
             active_record_encryption_primary_key: [f]\n  \
             active_record_encryption_deterministic_key: [g]\n",
        ))
        .without_generate()
        .plan_with(&NoKeys)
        .expect("plans");
    assert_eq!(
        plan.reports,
        ["Secret demo-rails-secret: needs generating: \
          secrets.yml:production.active_record_encryption_key_derivation_salt"]
    );
}

#[test]
fn malformed_input_fails_the_plan_naming_the_secret() {
    let request = |entries: String, existing: Option<String>| SecretRequest {
        name: "s".into(),
        entries,
        existing,
        ready_units: Vec::new(),
        generate: true,
    };
    let valid = json!([secret("s", json!([random("a")]))]).to_string();
    let planned = plan(&request(valid.clone(), None), &PooledKeys).expect("the valid row plans");
    assert!(planned.ready, "the valid row adds its key");
    /// A row: what is wrong, the entries, the existing Secret, the expected cause, a
    /// fragment of its message.
    type Case = (
        &'static str,
        String,
        Option<String>,
        fn(&PlanFailure) -> bool,
        &'static str,
    );
    let cases: [Case; 5] = [
        (
            "entries that are not JSON",
            "not json".to_owned(),
            None,
            |c| matches!(c, PlanFailure::Entry(EntryError::Decode(_))),
            "the entries do not decode",
        ),
        (
            "an unknown generator",
            json!([secret("s", json!([{"type": "dsa", "key": "a"}]))]).to_string(),
            None,
            |c| matches!(c, PlanFailure::Entry(_)),
            "dsa",
        ),
        (
            "an invalid length",
            json!([secret(
                "s",
                json!([{"type": "random", "key": "a", "charset": "hex", "length": 0}])
            )])
            .to_string(),
            None,
            |c| matches!(c, PlanFailure::Entry(EntryError::Invalid { .. })),
            "length",
        ),
        (
            "a Secret that is not JSON",
            valid.clone(),
            Some("{".to_owned()),
            |c| matches!(c, PlanFailure::Secret(_)),
            "",
        ),
        (
            "a value that is not base64",
            valid,
            Some(r#"{"data":{"a":"!"}}"#.to_owned()),
            |c| matches!(c, PlanFailure::Secret(_)),
            "base64",
        ),
    ];
    for (name, entries, existing, cause, fragment) in cases {
        let error = plan(&request(entries, existing), &PooledKeys).expect_err(name);
        assert_eq!(error.subject, "s", "{name}");
        assert!(cause(&error.cause), "{name}: {:?}", error.cause);
        assert!(
            error.message().contains(fragment),
            "{name}: {}",
            error.message()
        );
    }
}

#[test]
fn a_failed_key_generation_fails_the_plan() {
    let error = Request::entry(chart_entry("demo-registry-secret"))
        .plan_with(&NoKeys)
        .expect_err("no keys");
    assert!(
        matches!(error.cause, crate::PlanFailure::Generate(_)),
        "{error}"
    );
}

#[test]
fn values_known_to_be_too_large_are_reported_without_being_generated() {
    let generators: Vec<Value> = (0..2)
        .map(|i| json!({"type": "bytes", "key": format!("b{i}"), "length": 1024 * 1024}))
        .collect();
    let plan = Request::entry(secret("huge", Value::Array(generators)))
        .plan_with(&NoKeys)
        .expect("plans");
    assert!(plan.add.is_empty() && !plan.ready);
    assert!(
        plan.reports[0].contains("would hold 2097152 bytes"),
        "{:?}",
        plan.reports
    );
}
