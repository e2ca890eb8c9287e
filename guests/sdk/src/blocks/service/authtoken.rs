//! `[keystone_authtoken]`: how a service validates tokens and authenticates to Keystone.
//!
//! | Option | From |
//! |---|---|
//! | `auth_type` | `password` |
//! | `auth_url` | `spec.keystoneEndpoint` |
//! | `www_authenticate_uri` | `spec.keystonePublicEndpoint`, else `spec.keystoneEndpoint` |
//! | `username`, `project_name`, `user_domain_name`, `project_domain_name` | `spec.serviceUser` (the service's name, `service`, `Default`, `Default` when unset) |
//! | `region_name` | `spec.region`, when set |
//! | `memcached_servers` | `spec.cache` |
//!
//! The password is not rendered: the pods read it from the environment
//! (`OS_KEYSTONE_AUTHTOKEN__PASSWORD`, [`password_env`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, SecretKeySelector};

use super::Service;

/// The section.
pub fn section(service: &Service<'_>) -> BTreeMap<String, String> {
    let spec = service.spec;
    let public = if spec.keystone_public_endpoint.is_empty() {
        &spec.keystone_endpoint
    } else {
        &spec.keystone_public_endpoint
    };
    let user = &spec.service_user;
    let mut section = BTreeMap::from([
        ("auth_type".to_owned(), "password".to_owned()),
        ("auth_url".to_owned(), spec.keystone_endpoint.clone()),
        ("www_authenticate_uri".to_owned(), public.clone()),
        (
            "username".to_owned(),
            user.username(service.default_user).to_owned(),
        ),
        ("project_name".to_owned(), user.project_name().to_owned()),
        (
            "user_domain_name".to_owned(),
            user.user_domain_name().to_owned(),
        ),
        (
            "project_domain_name".to_owned(),
            user.project_domain_name().to_owned(),
        ),
        (
            "memcached_servers".to_owned(),
            spec.cache.resolved_servers(),
        ),
    ]);
    if !spec.region.is_empty() {
        section.insert("region_name".into(), spec.region.clone());
    }
    section
}

/// `OS_KEYSTONE_AUTHTOKEN__PASSWORD` from the service user's Secret.
pub fn password_env(service: &Service<'_>) -> EnvVar {
    let user = &service.spec.service_user;
    EnvVar {
        name: "OS_KEYSTONE_AUTHTOKEN__PASSWORD".into(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: user.secret_ref.name.clone(),
                key: user.password_key().to_owned(),
                optional: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}
