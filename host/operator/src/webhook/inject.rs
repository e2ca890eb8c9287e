//! The managed CA in the webhook configurations: every Mutating- and
//! ValidatingWebhookConfiguration labelled `app.kubernetes.io/managed-by: wasm-operator`
//! gets the CA as the `caBundle` of each webhook that calls the host's Service, as
//! controller-runtime's cert-rotator keeps it. Checked every 10 s, so a configuration
//! applied from `wasm-operator webhooks` without `--ca-bundle` is served within that.

use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ServiceReference, ValidatingWebhookConfiguration,
    WebhookClientConfig,
};
use kube::Api;
use kube::api::{ListParams, PostParams};

/// The label that marks the configurations the host keeps.
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by=wasm-operator";

const EVERY: Duration = Duration::from_secs(10);

/// The Service the configurations must name for their `caBundle` to be set.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub namespace: String,
    pub name: String,
    pub ca_pem: String,
}

impl Target {
    /// Sets the CA in `config` when it calls the target Service; whether it changed.
    fn set(&self, config: &mut WebhookClientConfig) -> bool {
        let ours = config.service.as_ref().is_some_and(|s: &ServiceReference| {
            s.namespace == self.namespace && s.name == self.name
        });
        let bundle = ByteString(self.ca_pem.clone().into_bytes());
        if !ours || config.ca_bundle.as_ref() == Some(&bundle) {
            return false;
        }
        config.ca_bundle = Some(bundle);
        true
    }
}

/// Keeps the configurations' `caBundle` current until aborted.
pub(crate) async fn keep(client: kube::Client, target: Target) {
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client);
    loop {
        if let Err(error) = pass(&mutating, &validating, &target).await {
            tracing::warn!(%error, "cannot set the webhook configurations' caBundle");
        }
        tokio::time::sleep(EVERY).await;
    }
}

/// One round over both kinds; a configuration changed meanwhile (409) waits for the next.
async fn pass(
    mutating: &Api<MutatingWebhookConfiguration>,
    validating: &Api<ValidatingWebhookConfiguration>,
    target: &Target,
) -> Result<(), kube::Error> {
    inject(mutating, target, |c| {
        c.webhooks
            .iter_mut()
            .flatten()
            .map(|w| &mut w.client_config)
            .collect()
    })
    .await?;
    inject(validating, target, |c| {
        c.webhooks
            .iter_mut()
            .flatten()
            .map(|w| &mut w.client_config)
            .collect()
    })
    .await
}

/// Sets the CA in every webhook of every managed configuration of one kind, replacing
/// those that changed; `client_configs` reaches a configuration's webhooks.
async fn inject<K>(
    api: &Api<K>,
    target: &Target,
    client_configs: impl Fn(&mut K) -> Vec<&mut WebhookClientConfig>,
) -> Result<(), kube::Error>
where
    K: kube::Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let params = ListParams::default().labels(MANAGED_BY);
    for mut config in api.list(&params).await?.items {
        let changed = client_configs(&mut config)
            .into_iter()
            .fold(false, |c, w| target.set(w) | c);
        if changed {
            let name = config.meta().name.clone().unwrap_or_default();
            replace(api, &name, &config).await?;
        }
    }
    Ok(())
}

async fn replace<K>(api: &Api<K>, name: &str, config: &K) -> Result<(), kube::Error>
where
    K: kube::Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.replace(name, &PostParams::default(), config).await {
        Ok(_) => {
            tracing::info!(configuration = name, "set the webhook caBundle");
            Ok(())
        }
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}
