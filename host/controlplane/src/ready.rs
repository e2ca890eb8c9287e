//! Waiting for the control plane: each condition probed until it holds, every started
//! component checked for an exit on each round, a deadline for the whole start.

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::core::v1::ServiceAccount;
use kube::Api;
use tokio::time::Instant;

use crate::Error;
use crate::component::Component;

/// How often a condition is probed.
const INTERVAL: Duration = Duration::from_millis(100);

/// Probes `probe` until it holds. Fails when a started component exits, or at `deadline`
/// with the probe's last answer and `component`'s log.
pub(crate) async fn wait<F, Fut>(
    components: &mut [Component],
    component: &str,
    condition: &str,
    deadline: Instant,
    mut probe: F,
) -> Result<(), Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    loop {
        components.iter_mut().try_for_each(Component::check)?;
        let last = match probe().await {
            Ok(()) => {
                tracing::debug!(component, condition, "ready");
                return Ok(());
            }
            Err(last) => last,
        };
        if Instant::now() >= deadline {
            let log = components
                .iter()
                .find(|c| c.name == component)
                .map(|c| c.log.clone())
                .unwrap_or_default();
            return Err(Error::NotReady {
                component: component.to_owned(),
                condition: condition.to_owned(),
                last,
                log,
            });
        }
        tokio::time::sleep(INTERVAL).await;
    }
}

/// A kube client from a kubeconfig the control plane wrote.
pub(crate) async fn client(kubeconfig: &Path) -> Result<kube::Client, Error> {
    let what = || format!("the kubeconfig {}", kubeconfig.display());
    let file =
        kube::config::Kubeconfig::read_from(kubeconfig).map_err(|source| Error::Kubeconfig {
            what: what(),
            source,
        })?;
    let config = kube::Config::from_custom_kubeconfig(file, &Default::default())
        .await
        .map_err(|source| Error::Kubeconfig {
            what: what(),
            source,
        })?;
    kube::Client::try_from(config).map_err(|source| Error::Client {
        what: what(),
        source,
    })
}

/// `GET path` through an API client answers 2xx.
pub(crate) async fn api_ok(client: &kube::Client, path: &str) -> Result<(), String> {
    let request = http::Request::get(path)
        .body(Vec::new())
        .map_err(|e| e.to_string())?;
    client
        .request_text(request)
        .await
        .map(drop)
        .map_err(|e| e.to_string())
}

/// A client of a component's health endpoint at `url`, over HTTPS verified against `ca`
/// (DER) when given.
pub(crate) fn health_client(url: &str, ca: Option<&[u8]>) -> Result<kube::Client, Error> {
    let what = || format!("a client of {url}");
    let uri = url.parse().map_err(|e| Error::Io {
        what: what(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
    })?;
    let mut config = kube::Config::new(uri);
    config.root_cert = ca.map(|der| vec![der.to_vec()]);
    config.connect_timeout = Some(Duration::from_secs(2));
    config.read_timeout = Some(Duration::from_secs(5));
    kube::Client::try_from(config).map_err(|source| Error::Client {
        what: what(),
        source,
    })
}

/// The `default` ServiceAccount exists in `default`, `kube-system` and `kube-public`.
pub(crate) async fn default_service_accounts(client: &kube::Client) -> Result<(), String> {
    for namespace in ["default", "kube-system", "kube-public"] {
        let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
        match accounts.get_opt("default").await {
            Ok(Some(_)) => {}
            Ok(None) => return Err(format!("no ServiceAccount {namespace}/default yet")),
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(())
}
