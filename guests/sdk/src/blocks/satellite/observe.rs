//! Whether a satellite's section reached the config the parent's Deployment mounts.
//!
//! The chain is Deployment → pod volume → Secret → data key → section header. Any link
//! missing reads as an authoritative "not projected yet"; only a failed read that is not
//! NotFound is an error. The caller owns the condition it derives from the answer.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{PodSpec, Secret};

use super::Error;
use crate::cluster::{Cluster, ClusterExt};
use crate::error::ApiError;
use crate::object::object_key;

/// The name of the Secret the volume `volume_name` of `spec` mounts.
///
/// `None` for no spec, for a volume name absent from the volumes, and for a volume of that
/// name not backed by a Secret: the scan stops at the first name match.
pub fn secret_name_for_volume<'a>(spec: Option<&'a PodSpec>, volume_name: &str) -> Option<&'a str> {
    spec?
        .volumes
        .iter()
        .flatten()
        .find(|v| v.name == volume_name)?
        .secret
        .as_ref()?
        .secret_name
        .as_deref()
}

/// Whether `rendered` carries `header` as a whole line: bounded on the left by the start
/// of the data or a newline, on the right by LF, CR or the end of the data. A hit the
/// boundaries reject does not end the scan.
pub fn section_present(rendered: &[u8], header: &str) -> bool {
    let needle = header.as_bytes();
    if needle.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(offset) = find(&rendered[from..], needle) {
        let start = from + offset;
        let end = start + needle.len();
        let left = start == 0 || rendered[start - 1] == b'\n';
        let right = end == rendered.len() || matches!(rendered[end], b'\n' | b'\r');
        if left && right {
            return true;
        }
        from = start + 1;
    }
    false
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Where [`section_projected`] looks.
pub struct ObserveParams<'a> {
    /// The cluster the parent's children live on.
    pub children: &'a dyn Cluster,
    /// The parent's Deployment; its namespace also locates the Secret.
    pub deployment_namespace: &'a str,
    pub deployment_name: &'a str,
    /// The pod volume that mounts the rendered Secret.
    pub volume_name: &'a str,
    /// The Secret's data key holding the rendered config.
    pub data_key: &'a str,
    /// The section header to find, e.g. `[store]`.
    pub section_header: &'a str,
}

/// Reads a Deployment or Secret; NotFound in any form is `None`.
fn read<K>(cluster: &dyn Cluster, namespace: &str, name: &str) -> Result<Option<K>, crate::Error>
where
    K: k8s_openapi::Resource + serde::de::DeserializeOwned,
{
    match cluster.get_typed::<K>(Some(namespace), name) {
        Err(crate::Error::Api(ApiError::NotFound(_))) => Ok(None),
        other => other,
    }
}

/// Whether the section `section_header` is in the data key of the Secret that the
/// Deployment's volume mounts. Every NotFound on the chain is `Ok(false)`.
pub fn section_projected(params: &ObserveParams<'_>) -> Result<bool, Error> {
    let namespace = params.deployment_namespace;
    let deployment: Option<Deployment> = read(params.children, namespace, params.deployment_name)
        .map_err(|source| Error::FetchDeployment {
        key: object_key(Some(namespace), params.deployment_name),
        source,
    })?;
    let Some(deployment) = deployment else {
        return Ok(false);
    };
    let pod_spec = deployment.spec.template.spec.as_ref();
    let Some(secret_name) = secret_name_for_volume(pod_spec, params.volume_name) else {
        return Ok(false);
    };
    let secret: Option<Secret> =
        read(params.children, namespace, secret_name).map_err(|source| Error::FetchSecret {
            key: object_key(Some(namespace), secret_name),
            source,
        })?;
    let rendered = secret
        .and_then(|s| s.data)
        .and_then(|mut d| d.remove(params.data_key));
    Ok(rendered.is_some_and(|r| section_present(&r.0, params.section_header)))
}

#[cfg(test)]
#[path = "observe_tests.rs"]
mod tests;
