//! What federation changes in the API pod (facts §2.16): uWSGI listens on 127.0.0.1
//! behind the `federation-proxy` sidecar, so the `keystone` container's kubelet probes
//! (which dial the pod IP) become exec probes, and the sidecar reads the federation
//! Secret through its own volumes. Both variants of the `keystone` probes live here.
//!
//! | Piece | Without federation | With federation |
//! |---|---|---|
//! | `keystone` liveness (delay 15 s, period 20 s) | TCP 5000 | exec connect to 127.0.0.1:5000, timeout 8 s |
//! | `keystone` startup (30 failures, period 10 s, timeout 8 s) | GET `/v3` on 5000 | exec fetch of `http://127.0.0.1:5000/v3` |
//! | container `federation-proxy` | — | [`sidecar`] |
//! | volumes | — | `federation-proxy-config` (`proxy.conf`), `federation-metadata` (OIDC items, when any), `federation-mellon` (SAML items, when any), `federation-proxy-tmp` (emptyDir) |
//!
//! The sidecar: the proxy image, `apache2 -DFOREGROUND -f
//! /etc/keystone-federation-proxy/httpd-base.conf`, port `proxy` 5050/TCP, requests
//! 25m CPU and 64Mi memory, limit 256Mi memory, the restricted security context of the
//! `keystone` container; startup TCP 5050 (30 failures, period 2 s), liveness TCP 5050
//! (delay 15 s, period 20 s), readiness GET `/v3` on 5050 through the proxy to uWSGI
//! (delay 5 s, period 10 s, timeout 5 s). Only the sidecar mounts the federation
//! volumes (all read-only but `/tmp`); the Secret volumes are mode 0400.
//!
//! A Secret volume without items projects every key, so the metadata and mellon volumes
//! exist only when they have items: an OIDC-only pod never sees the SAML key and the
//! other way round.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EmptyDirVolumeSource, ExecAction, HTTPGetAction, KeyToPath, PodSpec,
    Probe, ResourceRequirements, SecretVolumeSource, TCPSocketAction, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::federation::{
    Federation, MELLON_DIR, MELLON_VOLUME, METADATA_DIR, METADATA_VOLUME, PROXY_CONF,
    PROXY_CONFIG_DIR, PROXY_CONFIG_VOLUME, PROXY_CONTAINER, PROXY_PORT, PROXY_PORT_NAME,
    PROXY_TMP_VOLUME,
};
use crate::pod;
use crate::steps::deployment::API_PORT;

/// The sidecar's command: Apache in the foreground on the image's base configuration,
/// which includes `conf.d/proxy.conf`.
const PROXY_COMMAND: [&str; 4] = [
    "apache2",
    "-DFOREGROUND",
    "-f",
    "/etc/keystone-federation-proxy/httpd-base.conf",
];
/// The `keystone` liveness check from inside the container: a TCP connect to uWSGI.
const LOCAL_CONNECT: &str =
    "python3 -c \"import socket; socket.create_connection(('127.0.0.1', 5000), 5).close()\"";
/// The `keystone` startup check from inside the container: a GET of `/v3` from uWSGI.
const LOCAL_FETCH: &str = "python3 -c \"import urllib.request; urllib.request.urlopen('http://127.0.0.1:5000/v3', timeout=5)\"";

fn shell(script: &str) -> ExecAction {
    ExecAction {
        command: Some(vec!["/bin/sh".into(), "-c".into(), script.into()]),
    }
}

fn get_v3(port: i32) -> HTTPGetAction {
    HTTPGetAction {
        path: Some("/v3".into()),
        port: IntOrString::Int(port),
        ..Default::default()
    }
}

fn tcp(port: i32) -> Option<TCPSocketAction> {
    Some(TCPSocketAction {
        port: IntOrString::Int(port),
        ..Default::default()
    })
}

/// The `keystone` container's liveness probe: TCP 5000, or a connect from inside the
/// container `behind_proxy`.
pub(super) fn liveness(behind_proxy: bool) -> Probe {
    let probe = Probe {
        initial_delay_seconds: Some(15),
        period_seconds: Some(20),
        ..Default::default()
    };
    if behind_proxy {
        return Probe {
            exec: Some(shell(LOCAL_CONNECT)),
            timeout_seconds: Some(8),
            ..probe
        };
    }
    Probe {
        tcp_socket: tcp(API_PORT),
        ..probe
    }
}

/// The `keystone` container's startup probe: GET `/v3` on 5000, or a fetch from inside
/// the container `behind_proxy`.
pub(super) fn startup(behind_proxy: bool) -> Probe {
    let probe = Probe {
        failure_threshold: Some(30),
        period_seconds: Some(10),
        timeout_seconds: Some(8),
        ..Default::default()
    };
    if behind_proxy {
        return Probe {
            exec: Some(shell(LOCAL_FETCH)),
            ..probe
        };
    }
    Probe {
        http_get: Some(get_v3(API_PORT)),
        ..probe
    }
}

/// Adds the sidecar and its volumes to the API pod, after the `keystone` container and
/// its volumes.
pub(super) fn attach(pod: &mut PodSpec, federation: &Federation) {
    let (volumes, mounts) = volumes(federation);
    pod.containers.push(sidecar(federation, mounts));
    pod.volumes.get_or_insert_with(Vec::new).extend(volumes);
}

/// The `federation-proxy` container, mounting `mounts`.
fn sidecar(federation: &Federation, mounts: Vec<VolumeMount>) -> Container {
    let quantity = |q: &str| Quantity(q.to_owned());
    Container {
        name: PROXY_CONTAINER.into(),
        image: Some(federation.proxy_image.clone()),
        command: Some(PROXY_COMMAND.map(String::from).to_vec()),
        ports: Some(vec![ContainerPort {
            name: Some(PROXY_PORT_NAME.into()),
            container_port: PROXY_PORT,
            protocol: Some("TCP".into()),
            ..Default::default()
        }]),
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_owned(), quantity("25m")),
                ("memory".to_owned(), quantity("64Mi")),
            ])),
            limits: Some(BTreeMap::from([("memory".to_owned(), quantity("256Mi"))])),
            ..Default::default()
        }),
        security_context: Some(pod::restricted()),
        startup_probe: Some(Probe {
            tcp_socket: tcp(PROXY_PORT),
            failure_threshold: Some(30),
            period_seconds: Some(2),
            ..Default::default()
        }),
        liveness_probe: Some(Probe {
            tcp_socket: tcp(PROXY_PORT),
            initial_delay_seconds: Some(15),
            period_seconds: Some(20),
            ..Default::default()
        }),
        readiness_probe: Some(Probe {
            http_get: Some(get_v3(PROXY_PORT)),
            initial_delay_seconds: Some(5),
            period_seconds: Some(10),
            timeout_seconds: Some(5),
            ..Default::default()
        }),
        volume_mounts: Some(mounts),
        ..Default::default()
    }
}

/// A volume of the federation Secret projecting only `items`, mode 0400.
fn secret_items(name: &str, federation: &Federation, items: Vec<KeyToPath>) -> Volume {
    Volume {
        name: name.into(),
        secret: Some(SecretVolumeSource {
            secret_name: Some(federation.secret_name.clone()),
            default_mode: Some(0o400),
            items: Some(items),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The sidecar's volumes and its mounts of them, in the same order.
fn volumes(federation: &Federation) -> (Vec<Volume>, Vec<VolumeMount>) {
    let proxy_conf = KeyToPath {
        key: PROXY_CONF.into(),
        path: PROXY_CONF.into(),
        ..Default::default()
    };
    let mut volumes = vec![secret_items(
        PROXY_CONFIG_VOLUME,
        federation,
        vec![proxy_conf],
    )];
    let mut mounts = vec![pod::read_only(PROXY_CONFIG_VOLUME, PROXY_CONFIG_DIR)];
    for (name, dir, items) in [
        (METADATA_VOLUME, METADATA_DIR, &federation.metadata_items),
        (MELLON_VOLUME, MELLON_DIR, &federation.mellon_items),
    ] {
        if !items.is_empty() {
            volumes.push(secret_items(name, federation, items.clone()));
            mounts.push(pod::read_only(name, dir));
        }
    }
    volumes.push(Volume {
        name: PROXY_TMP_VOLUME.into(),
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Default::default()
    });
    mounts.push(VolumeMount {
        name: PROXY_TMP_VOLUME.into(),
        mount_path: "/tmp".into(),
        ..Default::default()
    });
    (volumes, mounts)
}
