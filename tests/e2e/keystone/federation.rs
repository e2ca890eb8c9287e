//! Federation end to end (facts §2.6 step 6, §2.7, §2.13, §2.16): an OIDC backend whose
//! provider metadata the plugin fetches through its HTTP egress (from a loopback server
//! registered as the Service `idp`, as kube-proxy would route it) and a SAML backend with
//! inline IdP metadata are projected into one `{name}-federation-{hash}` Secret, which the
//! `federation-proxy` sidecar mounts; without `spec.federation.proxyImage` they wait.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use wasm_operator_e2e::{current_condition, eventually};

use crate::harness::{GROUP_VERSION, Harness, WAIT, keystone, secret};
use crate::identity::identity_backend_crd;

/// The OIDC issuer: the Service `idp` of `ns` on the port the plugin may reach.
pub(crate) const ISSUER: &str = "http://idp.ns.svc.cluster.local:5000";
/// The SAML IdP's entityID.
const IDP_ENTITY_ID: &str = "https://idp.corp.example/saml";

/// A loopback server answering every request with the discovery document of [`ISSUER`];
/// its port and the number of requests it answered.
pub(crate) async fn discovery_server() -> (u16, Arc<AtomicU64>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a listener");
    let port = listener.local_addr().expect("its address").port();
    let served = Arc::new(AtomicU64::new(0));
    let count = served.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let count = count.clone();
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                let _ = stream.read(&mut buffer).await;
                let body = json!({
                    "issuer": ISSUER,
                    "authorization_endpoint": format!("{ISSUER}/authorize"),
                    "token_endpoint": "https://idp.corp.example:8443/token",
                    "jwks_uri": format!("{ISSUER}/jwks"),
                })
                .to_string();
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                if stream.write_all(answer.as_bytes()).await.is_ok() {
                    count.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
    });
    (port, served)
}

/// The Service `idp` and the EndpointSlice routing its port `http` to 127.0.0.1:`port`.
pub(crate) fn idp_service(port: u16) -> [Value; 2] {
    [
        json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "idp", "namespace": "ns"},
            "spec": {"ports": [{"name": "http", "port": 5000, "protocol": "TCP"}]}}),
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "idp-1", "namespace": "ns",
                         "labels": {"kubernetes.io/service-name": "idp"}},
            "addressType": "IPv4",
            "ports": [{"name": "http", "port": port, "protocol": "TCP"}],
            "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}]}),
    ]
}

fn domain_ready() -> Value {
    json!({"conditions": [{"type": "DomainReady", "status": "True",
        "reason": "DomainProvisioned", "message": "domain provisioned",
        "lastTransitionTime": "2026-12-03T08:00:00Z"}]})
}

fn oidc_backend() -> Value {
    json!({"apiVersion": GROUP_VERSION, "kind": "KeystoneIdentityBackend",
        "metadata": {"name": "corp-oidc", "namespace": "ns"},
        "spec": {"keystoneRef": {"name": "ks"}, "type": "OIDC",
            "domain": {"name": "corp-oidc"},
            "oidc": {"issuer": ISSUER, "clientID": "keystone",
                     "clientSecretRef": {"name": "corp-oidc-client"}}},
        "status": domain_ready()})
}

fn saml_backend() -> Value {
    let metadata = format!(
        "<EntityDescriptor xmlns=\"urn:oasis:names:tc:SAML:2.0:metadata\" \
         entityID=\"{IDP_ENTITY_ID}\"><IDPSSODescriptor \
         protocolSupportEnumeration=\"urn:oasis:names:tc:SAML:2.0:protocol\"/>\
         </EntityDescriptor>"
    );
    json!({"apiVersion": GROUP_VERSION, "kind": "KeystoneIdentityBackend",
        "metadata": {"name": "corp-saml", "namespace": "ns"},
        "spec": {"keystoneRef": {"name": "ks"}, "type": "SAML",
            "domain": {"name": "corp-saml"},
            "saml": {"idpEntityID": IDP_ENTITY_ID, "idpMetadata": {"inline": metadata}}},
        "status": domain_ready()})
}

pub(crate) fn with_proxy_image() -> Value {
    json!({"federation": {"proxyImage": {
        "repository": "ghcr.io/c5c3/keystone-federation-proxy", "tag": "2025.2"}}})
}

fn decoded(secret: &Value, key: &str) -> String {
    secret["data"][key]
        .as_str()
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_else(|| panic!("data key {key} in {secret}"))
}

async fn create_backends(h: &Harness, backends: Vec<Value>) {
    h.cluster.create(identity_backend_crd()).await;
    for backend in backends {
        eventually("the backend is created", WAIT, || {
            let backend = backend.clone();
            async move { h.cluster.create_if_served(backend).await }
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oidc_and_saml_backends_are_projected_behind_the_federation_proxy() {
    let h = Harness::start().await;
    let (port, served) = discovery_server().await;
    for object in idp_service(port) {
        h.cluster.create(object).await;
    }
    h.cluster
        .create(secret(
            "ns",
            "corp-oidc-client",
            json!({"clientSecret": "oidc-client-secret\n"}),
        ))
        .await;
    create_backends(&h, vec![oidc_backend(), saml_backend()]).await;
    h.cluster.create(keystone(with_proxy_image())).await;

    let object = h
        .condition("IdentityBackendsReady", "AllBackendsProjected")
        .await;
    assert!(
        served.load(Ordering::SeqCst) >= 1,
        "the provider metadata was fetched through egress"
    );
    assert_eq!(
        current_condition(&object, "IdentityBackendsReady").map(|c| c["message"].clone()),
        Some(json!("All attached identity backends are projected"))
    );

    let deployment = h
        .cluster
        .get("apps/v1", "Deployment", "ns", "ks")
        .await
        .expect("the Deployment");
    let pod = &deployment["spec"]["template"]["spec"];
    let volume = |name: &str| {
        pod["volumes"]
            .as_array()
            .and_then(|v| v.iter().find(|v| v["name"] == name))
            .cloned()
            .unwrap_or_else(|| panic!("volume {name} in {pod}"))
    };
    let federation = volume("federation-proxy-config")["secret"]["secretName"]
        .as_str()
        .map(str::to_owned)
        .expect("the federation Secret's name");
    assert!(federation.starts_with("ks-federation-"), "{federation}");
    for name in ["federation-metadata", "federation-mellon"] {
        assert_eq!(volume(name)["secret"]["secretName"], federation.as_str());
    }
    let containers = pod["containers"].as_array().expect("containers");
    let proxy = containers
        .iter()
        .find(|c| c["name"] == "federation-proxy")
        .expect("the federation-proxy sidecar");
    assert_eq!(
        proxy["image"],
        "ghcr.io/c5c3/keystone-federation-proxy:2025.2"
    );
    assert_eq!(proxy["ports"][0]["containerPort"], 5050);
    let keystone_command = containers
        .iter()
        .find(|c| c["name"] == "keystone")
        .map(|c| c.to_string())
        .expect("the keystone container");
    assert!(
        keystone_command.contains("127.0.0.1:5000"),
        "uWSGI listens behind the proxy: {keystone_command}"
    );
    let service = h
        .cluster
        .get("v1", "Service", "ns", "ks")
        .await
        .expect("the Service");
    assert_eq!(service["spec"]["ports"][0]["targetPort"], 5050);

    let projected = h
        .cluster
        .get("v1", "Secret", "ns", &federation)
        .await
        .expect("the federation Secret");
    assert_eq!(projected["immutable"], true);
    assert_eq!(
        projected["metadata"]["labels"]["cobaltcore.c5c3.io/config-base"],
        "ks-federation"
    );
    let provider: Value =
        serde_json::from_str(&decoded(&projected, "corp-oidc.provider")).expect("JSON");
    assert_eq!(provider["issuer"], ISSUER);
    let client: Value =
        serde_json::from_str(&decoded(&projected, "corp-oidc.client")).expect("JSON");
    assert_eq!(
        client,
        json!({"client_id": "keystone", "client_secret": "oidc-client-secret"})
    );
    let proxy_conf = decoded(&projected, "proxy.conf");
    let passphrase = h
        .cluster
        .get("v1", "Secret", "ns", "ks-oidc-crypto-passphrase")
        .await
        .expect("the passphrase Secret");
    let passphrase = decoded(&passphrase, "passphrase");
    for line in [
        format!("OIDCCryptoPassphrase \"{passphrase}\""),
        "OIDCRedirectURI /v3/OS-FEDERATION/redirect_uri".to_owned(),
        "<Location \"/v3/auth/OS-FEDERATION/identity_providers/corp-oidc/protocols/openid/websso\">"
            .to_owned(),
        "    AuthType Mellon".to_owned(),
        "    MellonIdPMetadataFile /etc/keystone-federation-proxy/mellon/corp-saml.idp-metadata.xml"
            .to_owned(),
    ] {
        assert!(proxy_conf.contains(&line), "{line} in\n{proxy_conf}");
    }
    assert!(decoded(&projected, "sp-cert.pem").contains("BEGIN CERTIFICATE"));
    assert_eq!(
        decoded(&projected, "corp-saml.idp-metadata.xml"),
        saml_backend()["spec"]["saml"]["idpMetadata"]["inline"]
            .as_str()
            .unwrap_or_default()
    );

    let export = h
        .cluster
        .get("v1", "Secret", "ns", "ks-saml-sp-metadata")
        .await
        .expect("the SP metadata export");
    let entity_id = decoded(&export, "entityID");
    assert_eq!(
        entity_id,
        "http://ks.ns.svc.cluster.local:5000/v3/OS-FEDERATION/identity_providers/corp-saml/protocols/mapped/auth/mellon/metadata"
    );
    assert!(decoded(&export, "sp-metadata.xml").contains(&format!("entityID=\"{entity_id}\"")));
    assert_eq!(
        h.cluster
            .get("v1", "Secret", "ns", "ks-saml-sp")
            .await
            .expect("the generated SP keypair")["type"],
        "kubernetes.io/tls"
    );

    let config = h.config_volume().await.expect("a config ConfigMap");
    let config = h
        .cluster
        .get("v1", "ConfigMap", "ns", &config)
        .await
        .expect("the config ConfigMap");
    let keystone_conf = config["data"]["keystone.conf"].as_str().unwrap_or_default();
    for line in [
        "methods = external,password,token,oauth1,mapped,application_credential,openid",
        "sso_callback_template = /etc/keystone/keystone.conf.d/sso_callback_template.html",
        "remote_id_attribute = HTTP_OIDC_ISS",
        "remote_id_attribute = HTTP_MELLON_IDP",
    ] {
        assert!(keystone_conf.contains(line), "{line} in\n{keystone_conf}");
    }
    assert!(config["data"]["sso_callback_template.html"].is_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_federation_backend_waits_for_the_proxy_image_with_one_warning() {
    let h = Harness::start().await;
    create_backends(&h, vec![saml_backend()]).await;
    h.cluster.create(keystone(json!({}))).await;

    let object = h
        .condition("IdentityBackendsReady", "WaitingForBackends")
        .await;
    assert_eq!(
        current_condition(&object, "IdentityBackendsReady").map(|c| c["message"].clone()),
        Some(json!(
            "Waiting for identity backends: corp-saml (spec.federation.proxyImage not set)"
        ))
    );
    // Later passes (the Deployment's rollout among them) add no second Event: a pass that
    // still reads the Keystone before the first one's status may warn again, and the host
    // folds such a repeat into the Event's series.
    h.condition("DeploymentReady", "DeploymentReady").await;
    let warnings = h
        .cluster
        .events_with_reason("ns", "FederationProxyImageMissing")
        .await;
    assert_eq!(
        warnings.len(),
        1,
        "one FederationProxyImageMissing event: {warnings:?}"
    );
    assert_eq!(
        warnings[0]["note"],
        "Identity backend corp-saml is pending: spec.federation.proxyImage is not set — \
         configure the federation sidecar image before attaching federation backends"
    );
    assert!(
        h.cluster
            .get("v1", "Secret", "ns", "ks-saml-sp-metadata")
            .await
            .is_none(),
        "nothing is projected for a waiting backend"
    );
}
