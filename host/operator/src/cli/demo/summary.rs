//! The demo's summary: each Secret with its keys' shapes, the certificate chain, the Ready
//! condition.

use anyhow::Context as _;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use serde_json::Value;

use super::shape;

/// The Ready condition of a GitLabSecrets.
pub(crate) fn ready_condition(object: &Value) -> Option<Value> {
    object
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
        .cloned()
}

/// The names of the Secrets `declared` declares, in the status order: spec.secrets, then
/// the CA, TLS and chain Secrets of each certificate set.
fn declared_names(declared: &Value) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for secret in declared
        .pointer("/spec/secrets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(name) = secret["name"].as_str()
            && !names.iter().any(|n| n == name)
        {
            names.push(name.to_owned());
        }
    }
    for set in declared
        .pointer("/spec/certificates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for key in ["caSecret", "tlsSecret", "chainSecret"] {
            if let Some(name) = set[key].as_str() {
                names.push(name.to_owned());
            }
        }
    }
    names
}

/// Prints the summary of the reconciled `object` (declared as `declared`).
pub(crate) async fn print(
    client: &kube::Client,
    declared: &Value,
    object: &Value,
) -> anyhow::Result<()> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "gitlab");
    println!("\nSecrets of gitlab/demo (shapes only, never values)");
    for name in declared_names(declared) {
        let Some(secret) = secrets.get_opt(&name).await.context("reading a Secret")? else {
            println!("  {name}: missing");
            continue;
        };
        println!(
            "  {name}  ({})",
            secret.type_.as_deref().unwrap_or("Opaque")
        );
        for (key, value) in secret.data.unwrap_or_default() {
            println!("      {key:<32} {}", shape::describe(&value.0));
        }
    }
    for set in declared
        .pointer("/spec/certificates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let (Some(name), Some(key)) = (set["chainSecret"].as_str(), set["chainKey"].as_str())
        else {
            continue;
        };
        let chain = secrets
            .get_opt(name)
            .await
            .context("reading the chain Secret")?
            .and_then(|s| s.data?.get(key).map(|v| v.0.clone()))
            .unwrap_or_default();
        println!("\nCertificate chain {name}/{key}");
        for (i, line) in certificates(&chain).iter().enumerate() {
            println!("  {}. {line}", i + 1);
        }
    }
    if let Some(ready) = ready_condition(object) {
        let message = ready["message"].as_str().unwrap_or_default();
        println!(
            "\nReady: {} ({}){}",
            ready["status"].as_str().unwrap_or_default(),
            ready["reason"].as_str().unwrap_or_default(),
            if message.is_empty() {
                String::new()
            } else {
                format!(": {message}")
            }
        );
    }
    Ok(())
}

/// One line per certificate of a PEM chain: subject, issuer, expiry.
fn certificates(pem: &[u8]) -> Vec<String> {
    let mut lines = Vec::new();
    for block in x509_parser::pem::Pem::iter_from_buffer(pem) {
        let line = match block {
            Ok(pem) => match pem.parse_x509() {
                Ok(cert) => format!(
                    "subject {}\n     issuer  {}\n     expires {}",
                    cert.subject(),
                    cert.issuer(),
                    cert.validity().not_after
                ),
                Err(e) => format!("not a certificate: {e}"),
            },
            Err(e) => format!("not PEM: {e}"),
        };
        lines.push(line);
    }
    if lines.is_empty() {
        lines.push("no certificate".into());
    }
    lines
}
